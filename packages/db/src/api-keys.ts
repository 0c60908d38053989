/** API key rows, shared by `commerce api-keys …` (create, list, revoke) and the API (lookup). */
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
