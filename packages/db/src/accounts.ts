/**
 * Accounts: creating them (`POST /auth/register`, `commerce users create`), changing their role or
 * disabling them (`PATCH /users/:id`, `commerce users update|disable|enable`), the signed-in
 * customer's own changes (password, email address) and what the emailed links do (a password
 * reset, an email verification, an email change); the state every request of a user token is checked against
 * is sql/account-state.ts, the asking for a link by address sql/account-links.ts.
 */
import { and, eq, isNull, ne, sql } from 'drizzle-orm'
import { DomainError, type AccountTokenPurpose, type Customer, type EventData, type Role, type User } from '@commerce/domain'
import type { Database, Executor } from './client.js'
import { isUniqueViolation } from './errors.js'
import { writeEvent, writeEvents } from './outbox.js'
import { accountTokens, customers, users } from './schema/accounts.js'

export interface NewUser {
  email: string
  passwordHash: string
  role: Role
  firstName?: string | null | undefined
  lastName?: string | null | undefined
  requestId?: string | null | undefined
  /**
   * A customer's own sign-up (POST /auth/register): `account.activated` is written with the
   * account (the welcome email), or, when `verificationExpiresAt` is given (REQUIRE_EMAIL_VERIFICATION),
   * `account.verification_requested` with a link valid until then, and the account is activated
   * when it is verified. Without it (an operator's `users create`) no account event is written and
   * the account is active at once.
   */
  signUp?: { verificationExpiresAt: Date | null } | undefined
}

type UserRow = typeof users.$inferSelect
type CustomerRow = typeof customers.$inferSelect

/** A customer row as the API shows it (also the `customer.created` event data). */
export function customerSnapshot(row: CustomerRow): Customer {
  return {
    id: row.id,
    user_id: row.userId,
    email: row.email,
    first_name: row.firstName,
    last_name: row.lastName,
    phone: row.phone,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

/** A user row as the API shows it: never the password hash. */
export function userSnapshot(row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    disabled_at: row.disabledAt?.toISOString() ?? null,
    email_verified_at: row.emailVerifiedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
  }
}

export async function findUserByEmail(db: Database, email: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(sql`lower(${users.email}) = lower(${email})`)
  return row
}

/**
 * Creates a user; a customer account also gets its customer record (an earlier guest record
 * with the same email is claimed) and a `customer.created` event, and a sign-up its account
 * event (NewUser.signUp), all in one transaction.
 */
export async function createUser(db: Database, input: NewUser): Promise<{ user: UserRow; customer: CustomerRow | null }> {
  const waitsForVerification = Boolean(input.signUp?.verificationExpiresAt)
  return db.transaction(async (tx) => {
    const [user] = await tx
      .insert(users)
      .values({ email: input.email, passwordHash: input.passwordHash, role: input.role, activatedAt: waitsForVerification ? null : sql`now()` })
      .onConflictDoNothing()
      .returning()
    if (!user) throw new DomainError('conflict', 'An account with this email already exists')
    if (input.role !== 'customer') return { user, customer: null }
    const customer = await customerOfNewAccount(tx, user, input)
    if (input.signUp) {
      const { verificationExpiresAt } = input.signUp
      await writeEvent(tx, {
        kind: verificationExpiresAt ? 'account.verification_requested' : 'account.activated',
        resourceId: user.id,
        data: { ...accountEventData(user, customer), ...(verificationExpiresAt ? { expires_at: verificationExpiresAt.toISOString() } : {}) },
        customerId: customer.id,
        requestId: input.requestId ?? null,
      })
    }
    return { user, customer }
  })
}

/** The customer record of a new customer account: a guest record with its email, claimed, or a new one. */
async function customerOfNewAccount(tx: Executor, user: UserRow, input: NewUser): Promise<CustomerRow> {
  const [claimed] = await tx
    .update(customers)
    .set({ userId: user.id })
    .where(and(sql`lower(${customers.email}) = lower(${input.email})`, isNull(customers.userId), isNull(customers.deletedAt)))
    .returning()
  if (claimed) return claimed

  const [customer] = await tx
    .insert(customers)
    .values({
      userId: user.id,
      email: input.email,
      firstName: input.firstName ?? null,
      lastName: input.lastName ?? null,
    })
    // Another account's customer record (or an anonymised one) may hold this email already.
    .onConflictDoNothing()
    .returning()
  if (!customer) throw new DomainError('conflict', 'An account with this email already exists')
  await writeEvent(tx, {
    kind: 'customer.created',
    resourceId: customer.id,
    data: customerSnapshot(customer),
    customerId: customer.id,
    requestId: input.requestId ?? null,
  })
  return customer
}

export async function findCustomerByUser(db: Database, userId: string): Promise<CustomerRow | undefined> {
  const [row] = await db.select().from(customers).where(eq(customers.userId, userId))
  return row
}

export interface AccountChange {
  role?: Role | undefined
  /** true disables (keeping the first time), false enables. */
  disabled?: boolean | undefined
}

/**
 * Changes an account's role or disables/enables it; undefined for an unknown id. Refused
 * (conflict) when it would leave no enabled admin: the enabled admins are locked first, so two
 * admins demoting each other at once cannot both succeed.
 */
export async function updateUser(db: Database, userId: string, change: AccountChange): Promise<UserRow | undefined> {
  return db.transaction(async (tx) => {
    const admins = await tx
      .select({ id: users.id })
      .from(users)
      .where(and(eq(users.role, 'admin'), isNull(users.disabledAt)))
      .orderBy(users.id)
      .for('update')
    const removesAdmin = change.role === 'customer' || change.disabled === true
    if (removesAdmin && admins.length === 1 && admins[0]!.id === userId) {
      throw new DomainError('conflict', 'This is the last enabled admin: make another admin before demoting or disabling it')
    }
    const [row] = await tx
      .update(users)
      .set({
        ...(change.role === undefined ? {} : { role: change.role }),
        ...(change.disabled === undefined
          ? {}
          : { disabledAt: change.disabled ? sql`coalesce(${users.disabledAt}, now())` : null }),
      })
      .where(eq(users.id, userId))
      .returning()
    return row
  })
}

export async function findUserById(db: Database, userId: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(eq(users.id, userId))
  return row
}

/** An account as its `account.*` events carry it. */
export function accountEventData(user: UserRow, customer: CustomerRow | null | undefined): EventData<'account.password_changed'> {
  return { user_id: user.id, customer_id: customer?.id ?? null, email: user.email, first_name: customer?.firstName ?? null }
}

/** A refused link token, as a 400 on `token`: unknown or used already, or expired (ask for a new one). */
function refusedToken(message: string): DomainError {
  return new DomainError('validation_error', message, [{ field: 'token', message }])
}

/**
 * Uses the emailed link whose token has this hash, of this purpose, once (inside the caller's
 * transaction, which a refusal rolls back); answers its account and the address it was sent to.
 */
async function useAccountToken(tx: Executor, purpose: AccountTokenPurpose, tokenHash: string): Promise<{ user: UserRow; email: string }> {
  const [token] = await tx
    .update(accountTokens)
    .set({ usedAt: sql`now()` })
    .where(and(eq(accountTokens.tokenHash, tokenHash), eq(accountTokens.purpose, purpose), isNull(accountTokens.usedAt)))
    .returning()
  if (!token) throw refusedToken('This link is unknown or was used already')
  if (token.expiresAt.getTime() <= Date.now()) throw refusedToken(`This link expired at ${token.expiresAt.toISOString()}; ask for a new one`)
  const [user] = await tx.select().from(users).where(eq(users.id, token.userId)).for('update')
  return { user: user!, email: token.email }
}

/**
 * Sets a new password with a password reset link: the link is used, every other unused reset
 * link of the account is void, the credential version goes up (every token issued before is
 * refused from then on: sql/account-state.ts), and `account.password_changed` is written, in one
 * transaction.
 */
export async function resetPassword(db: Database, reset: { tokenHash: string; passwordHash: string; requestId: string | null }): Promise<UserRow> {
  return db.transaction(async (tx) => {
    const { user } = await useAccountToken(tx, 'password_reset', reset.tokenHash)
    return changePassword(tx, user, reset.passwordHash, reset.requestId)
  })
}

/**
 * A new password (a reset, or the customer's own change), in the caller's transaction: the
 * credential version goes up, unused reset links are void, `account.password_changed` written.
 */
export async function changePassword(tx: Executor, user: UserRow, passwordHash: string, requestId: string | null): Promise<UserRow> {
  const [changed] = await tx
    .update(users)
    .set({ passwordHash, credentialVersion: sql`${users.credentialVersion} + 1` })
    .where(eq(users.id, user.id))
    .returning()
  await voidLinks(tx, user.id, 'password_reset')
  const customer = await customerOf(tx, user.id)
  await writeEvent(tx, {
    kind: 'account.password_changed',
    resourceId: user.id,
    data: accountEventData(changed!, customer),
    customerId: customer?.id ?? null,
    requestId,
  })
  return changed!
}

/** The customer record of an account, if it has one that is not deleted. */
async function customerOf(tx: Executor, userId: string): Promise<CustomerRow | undefined> {
  const [customer] = await tx
    .select()
    .from(customers)
    .where(and(eq(customers.userId, userId), isNull(customers.deletedAt)))
  return customer
}

/** Makes the unused links of an account void: of one purpose, or every one. */
async function voidLinks(tx: Executor, userId: string, purpose?: AccountTokenPurpose): Promise<void> {
  await tx
    .update(accountTokens)
    .set({ usedAt: sql`now()` })
    .where(and(eq(accountTokens.userId, userId), isNull(accountTokens.usedAt), purpose ? eq(accountTokens.purpose, purpose) : undefined))
}

/**
 * Verifies an account's address with an email verification link: the link is used and the
 * account's other verification links are void, `email_verified_at` is set and
 * `account.email_verified` written, and an account not activated yet (it signed up while
 * REQUIRE_EMAIL_VERIFICATION was on) is activated (`account.activated`, the welcome email), in one
 * transaction. A link sent to an address the account no longer has is refused.
 */
export async function verifyEmail(db: Database, input: { tokenHash: string; requestId: string | null }): Promise<UserRow> {
  return db.transaction(async (tx) => {
    const { user, email } = await useAccountToken(tx, 'email_verification', input.tokenHash)
    if (user.email.toLowerCase() !== email.toLowerCase()) throw refusedToken('This link was sent to an address the account no longer has')
    const activates = user.activatedAt === null
    const [verified] = await tx
      .update(users)
      .set({ emailVerifiedAt: sql`coalesce(${users.emailVerifiedAt}, now())`, ...(activates ? { activatedAt: sql`now()` } : {}) })
      .where(eq(users.id, user.id))
      .returning()
    await voidLinks(tx, user.id, 'email_verification')
    const customer = await customerOf(tx, user.id)
    const event = { resourceId: user.id, data: accountEventData(verified!, customer), customerId: customer?.id ?? null, requestId: input.requestId }
    await writeEvents(tx, [{ kind: 'account.email_verified', ...event }, ...(activates ? [{ kind: 'account.activated' as const, ...event }] : [])])
    return verified!
  })
}

const addressTaken = () => new DomainError('conflict', 'Another account or customer has this email address')

/** Refuses (conflict) an address that another account or another customer record has. */
async function claimableAddress(tx: Executor, userId: string, email: string): Promise<void> {
  const [user] = await tx
    .select({ id: users.id })
    .from(users)
    .where(and(sql`lower(${users.email}) = lower(${email})`, ne(users.id, userId)))
  const [customer] = await tx
    .select({ id: customers.id })
    .from(customers)
    .where(and(sql`lower(${customers.email}) = lower(${email})`, sql`${customers.userId} is distinct from ${userId}`))
  if (user || customer) throw addressTaken()
}

export interface NewEmailChange {
  userId: string
  /** The new address. */
  email: string
  expiresAt: Date
  requestId: string | null
}

/**
 * Writes `account.email_change_requested` (the worker emails the confirmation link to the new
 * address) if no other account or customer has that address: conflict otherwise, and undefined
 * for an account that no longer exists.
 */
export async function requestEmailChange(db: Database, request: NewEmailChange): Promise<UserRow | undefined> {
  return db.transaction(async (tx) => {
    const [user] = await tx.select().from(users).where(eq(users.id, request.userId)).for('update')
    if (!user) return undefined
    await claimableAddress(tx, user.id, request.email)
    const customer = await customerOf(tx, user.id)
    await writeEvent(tx, {
      kind: 'account.email_change_requested',
      resourceId: user.id,
      data: {
        ...accountEventData(user, customer),
        email: request.email,
        expires_at: request.expiresAt.toISOString(),
        previous_email: user.email,
      } satisfies EventData<'account.email_change_requested'>,
      customerId: customer?.id ?? null,
      requestId: request.requestId,
    })
    return user
  })
}

/**
 * Confirms an email change with its link: the account's address and its customer record's
 * become the one the link was sent to, which is verified by it; every unused link of the account
 * (sent to the old address) is void; `account.email_changed` is written, in one transaction.
 * Conflict when another account or customer took the address meanwhile (the link stays usable).
 */
export async function confirmEmailChange(db: Database, input: { tokenHash: string; requestId: string | null }): Promise<UserRow> {
  return db.transaction(async (tx) => {
    const { user, email } = await useAccountToken(tx, 'email_change', input.tokenHash)
    await claimableAddress(tx, user.id, email)
    let changed: UserRow | undefined
    try {
      ;[changed] = await tx.update(users).set({ email, emailVerifiedAt: sql`now()` }).where(eq(users.id, user.id)).returning()
      await tx
        .update(customers)
        .set({ email })
        .where(and(eq(customers.userId, user.id), isNull(customers.deletedAt)))
    } catch (error) {
      // Taken between the check and the update.
      if (isUniqueViolation(error)) throw addressTaken()
      throw error
    }
    await voidLinks(tx, user.id)
    const customer = await customerOf(tx, user.id)
    await writeEvent(tx, {
      kind: 'account.email_changed',
      resourceId: user.id,
      data: { ...accountEventData(changed!, customer), previous_email: user.email } satisfies EventData<'account.email_changed'>,
      customerId: customer?.id ?? null,
      requestId: input.requestId,
    })
    return changed!
  })
}

/** The signed-in customer's own new password (changePassword in a transaction of its own); undefined for an account gone. */
export async function setOwnPassword(db: Database, change: { userId: string; passwordHash: string; requestId: string | null }): Promise<UserRow | undefined> {
  return db.transaction(async (tx) => {
    const [user] = await tx.select().from(users).where(eq(users.id, change.userId)).for('update')
    return user && changePassword(tx, user, change.passwordHash, change.requestId)
  })
}
