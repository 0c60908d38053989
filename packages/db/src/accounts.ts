/**
 * Accounts: creating them (`POST /auth/register`, `commerce users create`), changing their role or
 * disabling them (`PATCH /users/:id`, `commerce users update|disable|enable`), and what the
 * emailed links do (a password reset); the state every request of a user token is checked against
 * is sql/account-state.ts, the asking for a link by address sql/account-links.ts.
 */
import { and, eq, isNull, sql } from 'drizzle-orm'
import { DomainError, type AccountTokenPurpose, type Customer, type EventData, type Role, type User } from '@commerce/domain'
import type { Database, Executor } from './client.js'
import { writeEvent } from './outbox.js'
import { accountTokens, customers, users } from './schema/accounts.js'

export interface NewUser {
  email: string
  passwordHash: string
  role: Role
  firstName?: string | null | undefined
  lastName?: string | null | undefined
  requestId?: string | null | undefined
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
    created_at: row.createdAt.toISOString(),
  }
}

export async function findUserByEmail(db: Database, email: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(sql`lower(${users.email}) = lower(${email})`)
  return row
}

/**
 * Creates a user; a customer account also gets its customer record (an earlier guest record
 * with the same email is claimed) and a `customer.created` event, all in one transaction.
 */
export async function createUser(db: Database, input: NewUser): Promise<{ user: UserRow; customer: CustomerRow | null }> {
  return db.transaction(async (tx) => {
    const [user] = await tx
      .insert(users)
      .values({ email: input.email, passwordHash: input.passwordHash, role: input.role })
      .onConflictDoNothing()
      .returning()
    if (!user) throw new DomainError('conflict', 'An account with this email already exists')
    if (input.role !== 'customer') return { user, customer: null }

    const [claimed] = await tx
      .update(customers)
      .set({ userId: user.id })
      .where(
        and(sql`lower(${customers.email}) = lower(${input.email})`, isNull(customers.userId), isNull(customers.deletedAt)),
      )
      .returning()
    if (claimed) return { user, customer: claimed }

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
    return { user, customer }
  })
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
  await tx
    .update(accountTokens)
    .set({ usedAt: sql`now()` })
    .where(and(eq(accountTokens.userId, user.id), eq(accountTokens.purpose, 'password_reset'), isNull(accountTokens.usedAt)))
  const [customer] = await tx.select().from(customers).where(eq(customers.userId, user.id))
  await writeEvent(tx, {
    kind: 'account.password_changed',
    resourceId: user.id,
    data: accountEventData(changed!, customer),
    customerId: customer?.id ?? null,
    requestId,
  })
  return changed!
}
