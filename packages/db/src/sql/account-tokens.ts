/**
 * The single-use tokens of emailed account links (account_tokens): stored by the worker as it
 * sends each link (a new token at each attempt, replacing the one before while unused), used once
 * by the API when the link is followed.
 */
import type { AccountTokenPurpose } from '@commerce/domain'
import { newId } from '../schema/columns.js'
import type { SqlClient } from '../transaction.js'

// $1 a new id, $2 the notification, $3 the account, $4 purpose, $5 the address, $6 the token's
// hash, $7 its expiry. A token already used (or voided by a password change) is not replaced; an
// account deleted meanwhile gets none.
const STORE = `insert into account_tokens (id, notification_id, user_id, purpose, email, token_hash, expires_at)
  select $1, $2, $3, $4, $5, $6, $7 where exists (select from users where id = $3)
  on conflict (notification_id) do update set token_hash = excluded.token_hash where account_tokens.used_at is null
  returning id`

export interface NewAccountToken {
  notificationId: string
  userId: string
  purpose: AccountTokenPurpose
  email: string
  tokenHash: string
  expiresAt: string
}

/** Stores the token of a notification's link; false when its link was used already or its account is gone (nothing to send). */
export async function storeAccountToken(sql: SqlClient, token: NewAccountToken): Promise<boolean> {
  const rows = await sql.unsafe(STORE, [newId(), token.notificationId, token.userId, token.purpose, token.email, token.tokenHash, token.expiresAt], { prepare: true })
  return rows.length > 0
}
