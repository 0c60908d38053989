/** API key rows, shared by `commerce api-keys …` (create, list, revoke, rotate) and the API (lookup). */
import { and, eq, isNull, lt, or, sql } from 'drizzle-orm'
import type { Database } from './client.js'
import { apiKeys } from './schema/auth.js'

export type ApiKeyRow = typeof apiKeys.$inferSelect

export interface NewApiKey {
  name: string
  prefix: string
  keyHash: string
  scopes: string[]
  rateLimitPerMinute: number | null
  /** Null: never expires. */
  expiresAt?: Date | null
}

/** Inserts a key's row; undefined when another key already has its prefix (make a new key). */
export async function createApiKey(db: Database, input: NewApiKey): Promise<ApiKeyRow | undefined> {
  const [row] = await db.insert(apiKeys).values(input).onConflictDoNothing({ target: apiKeys.prefix }).returning()
  return row
}

export function listApiKeys(db: Database): Promise<ApiKeyRow[]> {
  return db.select().from(apiKeys).orderBy(apiKeys.createdAt, apiKeys.id)
}

/** Revokes a key (once: revoking again keeps the first time); undefined for an unknown id. */
export async function revokeApiKey(db: Database, id: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db
    .update(apiKeys)
    .set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, now())` })
    .where(eq(apiKeys.id, id))
    .returning()
  return row
}

/**
 * Replaces a key with a new one of the same name, scopes and rate limit (`replacement`: its prefix
 * and hash, made by the caller; `expiryOf(old key)`: when the new one expires), and has the old
 * one expire at `oldExpiresAt` (kept if it expires sooner): a grace period in which both work. Undefined when the old key is unknown; not `usable` (and nothing written) when
 * it is revoked or expired already; no `created` when the new prefix is taken (make another key).
 */
export async function rotateApiKey(
  db: Database,
  id: string,
  replacement: Pick<NewApiKey, 'prefix' | 'keyHash'>,
  oldExpiresAt: Date,
  expiryOf: (old: ApiKeyRow) => Date | null,
): Promise<{ old: ApiKeyRow; usable: boolean; created: ApiKeyRow | undefined } | undefined> {
  return db.transaction(async (tx) => {
    const [old] = await tx.select().from(apiKeys).where(eq(apiKeys.id, id)).for('update')
    if (!old) return undefined
    const usable = old.revokedAt === null && (old.expiresAt === null || old.expiresAt.getTime() > Date.now())
    if (!usable) return { old, usable, created: undefined }
    const [created] = await tx
      .insert(apiKeys)
      .values({
        name: old.name,
        scopes: old.scopes,
        rateLimitPerMinute: old.rateLimitPerMinute,
        ...replacement,
        expiresAt: expiryOf(old),
      })
      .onConflictDoNothing({ target: apiKeys.prefix })
      .returning()
    if (!created) return { old, usable, created }
    const [ending] = await tx
      .update(apiKeys)
      .set({ expiresAt: sql`least(${apiKeys.expiresAt}, ${oldExpiresAt.toISOString()}::timestamptz)` })
      .where(eq(apiKeys.id, id))
      .returning()
    return { old: ending!, usable, created }
  })
}

export async function findApiKeyByPrefix(db: Database, prefix: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db.select().from(apiKeys).where(eq(apiKeys.prefix, prefix))
  return row
}

/** Records use, writing at most once a minute per key whatever the number of processes. */
export async function touchApiKey(db: Database, id: string): Promise<void> {
  await db
    .update(apiKeys)
    .set({ lastUsedAt: sql`now()` })
    .where(and(eq(apiKeys.id, id), or(isNull(apiKeys.lastUsedAt), lt(apiKeys.lastUsedAt, sql`now() - interval '1 minute'`))))
}
