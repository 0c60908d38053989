/** What a user token may do now: read on every request it makes, so a change counts at once. */
import type { Role } from '@commerce/domain'
import { sqlOf, type Database } from '../client.js'

export interface AccountState {
  role: Role
  disabled: boolean
  /** The customer record of a customer account; null for admins and accounts without one. */
  customerId: string | null
  /** Bumped by every password change: a token issued under an older one is refused. */
  credentialVersion: number
}

// Fixed text, prepared once per connection: a primary-key read and a unique-index read.
const ACCOUNT_STATE = `select u.role, u.disabled_at is not null as disabled, c.id as customer_id, u.credential_version
  from users u left join customers c on c.user_id = u.id and c.deleted_at is null
  where u.id = $1`

/** The account's current state; undefined when it no longer exists. */
export async function findAccountState(db: Database, userId: string): Promise<AccountState | undefined> {
  const rows = await sqlOf(db).unsafe<{ role: Role; disabled: boolean; customer_id: string | null; credential_version: number }[]>(ACCOUNT_STATE, [userId], {
    prepare: true,
  })
  const row = rows[0]
  return row && { role: row.role, disabled: row.disabled, customerId: row.role === 'customer' ? row.customer_id : null, credentialVersion: row.credential_version }
}
