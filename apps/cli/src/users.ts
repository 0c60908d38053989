/**
 * What `users update`, `users disable` and `users enable` share: the account found by id or
 * email, changed straight in the database (no token needed: the way back in when no admin can
 * sign in), and reported. @commerce/db and @commerce/domain are loaded inside, as a command runs.
 */
import type { AccountChange } from '@commerce/db'
import type { Role, User } from '@commerce/domain'
import { loadConfig } from './config.js'
import { formatDetails } from './output.js'

// ROLES of @commerce/domain, spelt out: the domain package is loaded only when a command runs.
export const COMMAND_ROLES = ['customer', 'admin'] as const satisfies readonly Role[]

export async function changeUser(idOrEmail: string, change: AccountChange): Promise<User> {
  const { findUserByEmail, migrate, updateUser, userSnapshot } = await import('@commerce/db')
  const { DomainError, isUuid } = await import('@commerce/domain')
  const { withDatabase } = await import('./database.js')
  const row = await withDatabase(await loadConfig(), async ({ url, db }) => {
    await migrate(url)
    const id = isUuid(idOrEmail) ? idOrEmail : (await findUserByEmail(db, idOrEmail.trim()))?.id
    return id === undefined ? undefined : updateUser(db, id, change)
  })
  if (!row) throw new DomainError('not_found', `No user with id or email '${idOrEmail}'`)
  return userSnapshot(row)
}

export function describeUser(user: User): string {
  return formatDetails([
    ['id', user.id],
    ['email', user.email],
    ['role', user.role],
    ['disabled at', user.disabled_at],
    ['created at', user.created_at],
  ])
}
