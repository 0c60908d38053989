/**
 * Whether credentials still hold, for long-lived connections (the API's WebSocket clients, at
 * each heartbeat): an API key has no expiry, and a user token outlives a change of its account.
 */
import type { users } from '../schema/index.js'
import type { SqlClient } from '../transaction.js'

const REVOKED_KEYS = 'select id from api_keys where id = any($1::uuid[]) and revoked_at is not null'
const ENABLED_USERS = 'select id, role from users where id = any($1::uuid[]) and disabled_at is null'

/** Which of these API keys were revoked. */
export async function revokedApiKeys(sql: SqlClient, keyIds: readonly string[]): Promise<string[]> {
  const rows = await sql.unsafe<{ id: string }[]>(REVOKED_KEYS, [keyIds as string[]], { prepare: true })
  return rows.map((row) => row.id)
}

/** The roles of those of these users still enabled (a deleted or disabled one is not there). */
export async function enabledUserRoles(sql: SqlClient, userIds: readonly string[]): Promise<Map<string, (typeof users.$inferSelect)['role']>> {
  const rows = await sql.unsafe<Pick<typeof users.$inferSelect, 'id' | 'role'>[]>(ENABLED_USERS, [userIds as string[]], { prepare: true })
  return new Map(rows.map((row) => [row.id, row.role]))
}
