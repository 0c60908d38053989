/**
 * Whether credentials still hold, for long-lived connections (the API's WebSocket clients, at
 * each heartbeat): an API key has no expiry, and a user token outlives a change of its account
 * (disabled, another role, a new password).
 */
import type { users } from '../schema/index.js'
import type { SqlClient } from '../transaction.js'

const REVOKED_KEYS = 'select id from api_keys where id = any($1::uuid[]) and revoked_at is not null'
const ENABLED_USERS = 'select id, role, credential_version as "credentialVersion" from users where id = any($1::uuid[]) and disabled_at is null'

/** Which of these API keys were revoked. */
export async function revokedApiKeys(sql: SqlClient, keyIds: readonly string[]): Promise<string[]> {
  const rows = await sql.unsafe<{ id: string }[]>(REVOKED_KEYS, [keyIds as string[]], { prepare: true })
  return rows.map((row) => row.id)
}

type EnabledUser = Pick<typeof users.$inferSelect, 'role' | 'credentialVersion'>

/** The role and credential version of those of these users still enabled (a deleted or disabled one is not there). */
export async function enabledUsers(sql: SqlClient, userIds: readonly string[]): Promise<Map<string, EnabledUser>> {
  const rows = await sql.unsafe<(EnabledUser & { id: string })[]>(ENABLED_USERS, [userIds as string[]], { prepare: true })
  return new Map(rows.map(({ id, ...user }) => [id, user]))
}
