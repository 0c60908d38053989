import { hashAccountToken, hashPassword, verifyPassword, type Customer, type LoginBody, type RegisterBody, type User } from '@commerce/domain'
import {
  createUser,
  customerSnapshot,
  findCustomerByUser,
  findUserByEmail,
  findUserById,
  newId,
  requestAccountLink,
  resetPassword,
  sqlOf,
  userSnapshot,
  type Database,
} from '@commerce/db'
import { unauthorized } from '../../errors.js'

export interface Session {
  user: User
  customer: Customer | null
  /** What the session's token carries, so that a later password change ends it. */
  credentialVersion: number
}

export interface AccountOptions {
  scryptCost: number
  passwordResetTtlMs: number
}

export function createAccountService(db: Database, options: AccountOptions) {
  // Unknown emails are checked against this hash so a login takes as long either way; made on
  // the first login, not at start-up.
  let decoyHash: Promise<string> | undefined
  const decoy = () => (decoyHash ??= hashPassword('decoy password, never matches', options.scryptCost))

  return {
    async register(body: RegisterBody, requestId: string): Promise<Session> {
      const { user, customer } = await createUser(db, {
        email: body.email,
        passwordHash: await hashPassword(body.password, options.scryptCost),
        role: 'customer',
        firstName: body.first_name,
        lastName: body.last_name,
        requestId,
      })
      return { user: userSnapshot(user), customer: customer && customerSnapshot(customer), credentialVersion: user.credentialVersion }
    },

    async login(body: LoginBody): Promise<Session> {
      const row = await findUserByEmail(db, body.email)
      const valid = await verifyPassword(body.password, row?.passwordHash ?? (await decoy()))
      if (!row || !valid) throw unauthorized('Invalid email or password')
      // Said only to whoever knows the password (as Auth0's "user is blocked"): a guesser learns nothing.
      if (row.disabledAt) throw unauthorized('This account is disabled')
      const customer = await findCustomerByUser(db, row.id)
      return { user: userSnapshot(row), customer: customer ? customerSnapshot(customer) : null, credentialVersion: row.credentialVersion }
    },

    /**
     * Writes the `account.password_reset_requested` event (the worker emails the link) if an
     * enabled account has this address, and nothing otherwise: one statement either way, so the
     * answer and its time say nothing about the account.
     */
    async requestPasswordReset(email: string, requestId: string): Promise<void> {
      await requestAccountLink(sqlOf(db), {
        email,
        eventId: newId(),
        kind: 'account.password_reset_requested',
        expiresAt: new Date(Date.now() + options.passwordResetTtlMs),
        requestId,
        unverifiedOnly: false,
      })
    },

    /** Sets the password with a reset link's token; every token issued before is refused from then on. */
    async confirmPasswordReset(token: string, password: string, requestId: string): Promise<void> {
      await resetPassword(db, { tokenHash: hashAccountToken(token), passwordHash: await hashPassword(password, options.scryptCost), requestId })
    },

    async me(userId: string): Promise<Session> {
      const row = await findUserById(db, userId)
      if (!row) throw unauthorized('The account of this token no longer exists')
      const customer = await findCustomerByUser(db, row.id)
      return { user: userSnapshot(row), customer: customer ? customerSnapshot(customer) : null, credentialVersion: row.credentialVersion }
    },
  }
}
