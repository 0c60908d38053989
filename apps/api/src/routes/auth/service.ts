import { hashAccountToken, hashPassword, verifyPassword, type Customer, type LoginBody, type RegisterBody, type User } from '@commerce/domain'
import {
  confirmEmailChange,
  createUser,
  customerSnapshot,
  findCustomerByUser,
  findUserByEmail,
  findUserById,
  newId,
  requestAccountLink,
  requestEmailChange,
  resetPassword,
  sendCommit,
  setOwnPassword,
  sqlOf,
  userSnapshot,
  verifyEmail,
  type Database,
} from '@commerce/db'
import { ApiError, invalidField, unauthorized } from '../../errors.js'

type UserRow = NonNullable<Awaited<ReturnType<typeof findUserById>>>

/** A token whose account was deleted between the per-request check and this statement. */
const accountGone = () => unauthorized('The account of this token no longer exists')

export interface Session {
  user: User
  customer: Customer | null
  /** What the session's token carries, so that a later password change ends it. */
  credentialVersion: number
}

export interface AccountOptions {
  scryptCost: number
  passwordResetTtlMs: number
  /** REQUIRE_EMAIL_VERIFICATION: a customer signs in only once its address is verified. */
  requireEmailVerification: boolean
  /** How long a verification or email change link works. */
  emailVerificationTtlMs: number
}

export function createAccountService(db: Database, options: AccountOptions) {
  // Unknown emails are checked against this hash so a login takes as long either way; made on
  // the first login, not at start-up.
  let decoyHash: Promise<string> | undefined
  const decoy = () => (decoyHash ??= hashPassword('decoy password, never matches', options.scryptCost))

  const linkExpiry = () => new Date(Date.now() + options.emailVerificationTtlMs)
  const session = async (row: UserRow): Promise<Session> => {
    const customer = await findCustomerByUser(db, row.id)
    return { user: userSnapshot(row), customer: customer ? customerSnapshot(customer) : null, credentialVersion: row.credentialVersion }
  }
  /**
   * Writes a link's event when an account has the address, in one round trip either way, in a
   * transaction that does not wait for its commit to reach the disk: a written one otherwise
   * answered a commit's flush later than one that wrote nothing, which told an onlooker that the
   * address has an account. A request lost to a crash is only asked again.
   */
  const requestLink = (request: Omit<Parameters<typeof requestAccountLink>[1], 'eventId'>) =>
    db.transaction(async (tx) => {
      const sql = sqlOf(tx)
      const unflushed = sql.unsafe('set local synchronous_commit = off')
      const written = requestAccountLink(sql, { ...request, eventId: newId() })
      await Promise.all([unflushed, written, sendCommit(sql)])
    })
  /** The signed-in account, whose password `password` must be: 400 on `field` otherwise. */
  const accountWithPassword = async (userId: string, password: string, field: string) => {
    const row = await findUserById(db, userId)
    if (!row) throw accountGone()
    if (!(await verifyPassword(password, row.passwordHash))) throw invalidField(field, 'This is not the account’s password')
    return row
  }

  return {
    /**
     * A customer account, with `account.activated` (the welcome email) in its transaction, or,
     * with REQUIRE_EMAIL_VERIFICATION, `account.verification_requested` (the link) instead.
     */
    async register(body: RegisterBody, requestId: string): Promise<Session> {
      const { user, customer } = await createUser(db, {
        email: body.email,
        passwordHash: await hashPassword(body.password, options.scryptCost),
        role: 'customer',
        firstName: body.first_name,
        lastName: body.last_name,
        requestId,
        signUp: { verificationExpiresAt: options.requireEmailVerification ? linkExpiry() : null },
      })
      return { user: userSnapshot(user), customer: customer && customerSnapshot(customer), credentialVersion: user.credentialVersion }
    },

    async login(body: LoginBody): Promise<Session> {
      const row = await findUserByEmail(db, body.email)
      const valid = await verifyPassword(body.password, row?.passwordHash ?? (await decoy()))
      if (!row || !valid) throw unauthorized('Invalid email or password')
      // Said only to whoever knows the password (as Auth0's "user is blocked"): a guesser learns nothing.
      if (row.disabledAt) throw unauthorized('This account is disabled')
      // Only customers sign up by themselves; an admin is made by an operator, and has no link to follow.
      if (options.requireEmailVerification && row.role === 'customer' && !row.emailVerifiedAt) {
        throw new ApiError(
          'email_not_verified',
          'This account’s email address is not verified yet: follow the link emailed to it, or ask for a new one (POST /auth/verify-email/resend)',
        )
      }
      return session(row)
    },

    /**
     * Writes the `account.password_reset_requested` event (the worker emails the link) if an
     * enabled account has this address, and nothing otherwise (requestLink: the answer and its time
     * say nothing about the account).
     */
    async requestPasswordReset(email: string, requestId: string): Promise<void> {
      await requestLink({
        email,
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

    /** A new verification link for a customer account whose address is not verified; nothing otherwise, in the same time. */
    async resendVerification(email: string, requestId: string): Promise<void> {
      await requestLink({
        email,
        kind: 'account.verification_requested',
        expiresAt: linkExpiry(),
        requestId,
        unverifiedOnly: true,
      })
    },

    async verifyEmail(token: string, requestId: string): Promise<void> {
      await verifyEmail(db, { tokenHash: hashAccountToken(token), requestId })
    },

    /** Emails a confirmation link to the new address, once the current password is given. */
    async requestEmailChange(userId: string, body: { email: string; password: string }, requestId: string): Promise<void> {
      const row = await accountWithPassword(userId, body.password, 'password')
      if (row.email.toLowerCase() === body.email.toLowerCase()) throw invalidField('email', 'This is the account’s email address already')
      const asked = await requestEmailChange(db, { userId, email: body.email, expiresAt: linkExpiry(), requestId })
      if (!asked) throw accountGone()
    },

    async confirmEmailChange(token: string, requestId: string): Promise<void> {
      await confirmEmailChange(db, { tokenHash: hashAccountToken(token), requestId })
    },

    /** A new password, once the current one is given; the session of the new credential version. */
    async changePassword(userId: string, body: { current_password: string; new_password: string }, requestId: string): Promise<Session> {
      await accountWithPassword(userId, body.current_password, 'current_password')
      const changed = await setOwnPassword(db, { userId, passwordHash: await hashPassword(body.new_password, options.scryptCost), requestId })
      if (!changed) throw accountGone()
      return session(changed)
    },

    async me(userId: string): Promise<Session> {
      const row = await findUserById(db, userId)
      if (!row) throw accountGone()
      return session(row)
    },
  }
}
