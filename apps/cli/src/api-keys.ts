/** What the api-keys commands print about a key (never the key itself, which only `create` shows once). */
import { DomainError, SCOPE_RESOURCES, apiKeyLookupPrefix, generateApiKey, hashApiKey, isScope, parseDuration } from '@commerce/domain'
import type { ApiKeyRow } from '@commerce/db'

export interface ApiKeySummary {
  id: string
  name: string
  prefix: string
  scopes: string[]
  rate_limit_per_minute: number | null
  created_at: string
  last_used_at: string | null
  revoked_at: string | null
  expires_at: string | null
}

export function apiKeySummary(row: ApiKeyRow): ApiKeySummary {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes,
    rate_limit_per_minute: row.rateLimitPerMinute,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
    expires_at: row.expiresAt?.toISOString() ?? null,
  }
}

/** `products:read,orders:write` -> the scopes, each checked; the first bad one is named. */
export function parseScopes(text: string): string[] {
  const scopes = [...new Set(text.split(',').map((scope) => scope.trim()).filter((scope) => scope !== ''))]
  if (scopes.length === 0) throw new DomainError('validation_error', 'Give at least one scope, e.g. --scopes products:read')
  const bad = scopes.find((scope) => !isScope(scope))
  if (bad !== undefined) {
    throw new DomainError(
      'validation_error',
      `'${bad}' is not a scope: use <resource>:read or <resource>:write (resources: ${SCOPE_RESOURCES.join(', ')}), read or *`,
    )
  }
  return scopes
}

/** `90d`, `12h`, `30m` (a bare number is days) -> milliseconds, at least a minute; `flag` names it in the error. */
export function parseLifetime(text: string, flag: string): number {
  const ms = parseDuration(text, 'd')
  if (ms === undefined || ms < 60_000) {
    throw new DomainError('validation_error', `--${flag} takes a duration of at least a minute, e.g. 90d, 12h or 30m ('${text}' is not one)`)
  }
  return ms
}

/** An API key id as api-keys list shows it (anything else is no key). */
export const isApiKeyId = (text: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text)

/** Two keys sharing 8 random characters of prefix is already unlikely; three in a row means a bug. */
const MAX_ATTEMPTS = 3

/**
 * Makes a new key and stores it with `insert` (its lookup prefix and hash), again with another
 * key when `insert` answers undefined because the prefix is taken.
 */
export async function storeNewKey<T>(insert: (stored: { prefix: string; keyHash: string }) => Promise<T | undefined>): Promise<{ key: string; row: T }> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const key = generateApiKey()
    const row = await insert({ prefix: apiKeyLookupPrefix(key), keyHash: hashApiKey(key) })
    if (row !== undefined) return { key, row }
  }
  throw new Error(`No free key prefix after ${MAX_ATTEMPTS} attempts`)
}
