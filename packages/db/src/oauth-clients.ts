/** OAuth client rows, shared by `commerce oauth-clients …` (create, list, revoke) and POST /oauth/token. */
import { eq, sql } from 'drizzle-orm'
import type { Database } from './client.js'
import { oauthClients } from './schema/auth.js'

export type OAuthClientRow = typeof oauthClients.$inferSelect

export interface NewOAuthClient {
  name: string
  clientId: string
  secretHash: string
  scopes: string[]
}

/** Inserts a client's row; undefined when another client already has its client_id (make a new one). */
export async function createOAuthClient(db: Database, input: NewOAuthClient): Promise<OAuthClientRow | undefined> {
  const [row] = await db.insert(oauthClients).values(input).onConflictDoNothing({ target: oauthClients.clientId }).returning()
  return row
}

export function listOAuthClients(db: Database): Promise<OAuthClientRow[]> {
  return db.select().from(oauthClients).orderBy(oauthClients.createdAt, oauthClients.id)
}

/** Revokes a client (once: revoking again keeps the first time); undefined for an unknown id. */
export async function revokeOAuthClient(db: Database, id: string): Promise<OAuthClientRow | undefined> {
  const [row] = await db
    .update(oauthClients)
    .set({ revokedAt: sql`coalesce(${oauthClients.revokedAt}, now())` })
    .where(eq(oauthClients.id, id))
    .returning()
  return row
}

export async function findOAuthClientByClientId(db: Database, clientId: string): Promise<OAuthClientRow | undefined> {
  const [row] = await db.select().from(oauthClients).where(eq(oauthClients.clientId, clientId))
  return row
}

/** Records that the client got a token. */
export async function touchOAuthClient(db: Database, id: string): Promise<void> {
  await db.update(oauthClients).set({ lastUsedAt: sql`now()` }).where(eq(oauthClients.id, id))
}
