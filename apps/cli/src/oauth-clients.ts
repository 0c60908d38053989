/** What the oauth-clients commands print about a client (never its secret, which only `create` shows once). */
import type { OAuthClientRow } from '@commerce/db'

export interface OAuthClientSummary {
  id: string
  name: string
  client_id: string
  scopes: string[]
  created_at: string
  last_used_at: string | null
  revoked_at: string | null
}

export function oauthClientSummary(row: OAuthClientRow): OAuthClientSummary {
  return {
    id: row.id,
    name: row.name,
    client_id: row.clientId,
    scopes: row.scopes,
    created_at: row.createdAt.toISOString(),
    last_used_at: row.lastUsedAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
  }
}
