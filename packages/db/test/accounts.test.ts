import { eq, sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { DomainError } from '@commerce/domain'
import { createUser, customerSnapshot, findCustomerByUser, findUserByEmail } from '../src/accounts.js'
import { customers, events, users } from '../src/schema/index.js'
import { openTestDatabase, rejection, type OpenTestDatabase } from './test-database.js'

let database: OpenTestDatabase
beforeAll(async () => {
  database = await openTestDatabase()
})
afterAll(async () => {
  await database.dispose()
})

let emails = 0
const uniqueEmail = (name = 'user') => `${name}-${++emails}@example.com`

async function counts() {
  const [row] = await database.sql<{ users: number; customers: number; events: number }[]>`
    select
      (select count(*)::int from users) as users,
      (select count(*)::int from customers) as customers,
      (select count(*)::int from events) as events`
  return row!
}

describe('createUser', () => {
  it('creates the user, its customer and a customer.created event in one transaction', async () => {
    const email = uniqueEmail('ada')
    const { user, customer } = await createUser(database.db, {
      email,
      passwordHash: 'scrypt$1024$8$1$c2FsdA==$aGFzaA==',
      role: 'customer',
      firstName: 'Ada',
      lastName: 'Lovelace',
      requestId: 'req-1',
    })
    expect(user).toMatchObject({ email, role: 'customer', passwordHash: 'scrypt$1024$8$1$c2FsdA==$aGFzaA==' })
    expect(customer).toMatchObject({ userId: user.id, email, firstName: 'Ada', lastName: 'Lovelace', phone: null })

    expect(await findUserByEmail(database.db, email)).toEqual(user)
    expect(await findCustomerByUser(database.db, user.id)).toEqual(customer)
    const written = await database.db.select().from(events).where(eq(events.customerId, customer!.id))
    expect(written).toHaveLength(1)
    expect(written[0]).toMatchObject({
      kind: 'customer.created',
      customerId: customer!.id,
      requestId: 'req-1',
      data: customerSnapshot(customer!),
    })

    const writers = await database.sql<{ xmin: string }[]>`
      select xmin::text from users where id = ${user.id}
      union all select xmin::text from customers where id = ${customer!.id}
      union all select xmin::text from events where id = ${written[0]!.id}`
    expect(writers).toHaveLength(3)
    expect(new Set(writers.map((row) => row.xmin)).size).toBe(1)
  })

  it('stores null names and request id when they are not given', async () => {
    const { customer } = await createUser(database.db, { email: uniqueEmail(), passwordHash: 'x', role: 'customer' })
    expect(customer).toMatchObject({ firstName: null, lastName: null })
    const [event] = await database.db.select().from(events).where(eq(events.customerId, customer!.id))
    expect(event!.requestId).toBeNull()
    expect(event!.data).toMatchObject({ first_name: null, last_name: null, email: customer!.email })
  })

  it('refuses an email that differs only in case with a conflict and writes nothing', async () => {
    await createUser(database.db, { email: 'Grace.Hopper@Example.com', passwordHash: 'x', role: 'customer' })
    const before = await counts()
    for (const email of ['grace.hopper@example.com', 'GRACE.HOPPER@EXAMPLE.COM', 'Grace.Hopper@Example.com']) {
      const error = await rejection(createUser(database.db, { email, passwordHash: 'y', role: 'customer' }))
      expect(error).toBeInstanceOf(DomainError)
      expect(error).toMatchObject({ code: 'conflict', message: 'An account with this email already exists' })
    }
    const adminAttempt = await rejection(
      createUser(database.db, { email: 'grace.HOPPER@example.com', passwordHash: 'y', role: 'admin' }),
    )
    expect(adminAttempt).toMatchObject({ code: 'conflict' })
    expect(await counts()).toEqual(before)
    const [kept] = await database.db.select().from(users).where(sql`lower(${users.email}) = 'grace.hopper@example.com'`)
    expect(kept!.passwordHash).toBe('x')
  })

  it('lets exactly one of two concurrent sign-ups with the same email through', async () => {
    const email = uniqueEmail('race')
    const before = await counts()
    const results = await Promise.allSettled([
      createUser(database.db, { email, passwordHash: 'a', role: 'customer' }),
      createUser(database.db, { email: email.toUpperCase(), passwordHash: 'b', role: 'customer' }),
    ])
    expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(1)
    const [failure] = results.filter((result) => result.status === 'rejected')
    expect(failure!.reason).toBeInstanceOf(DomainError)
    expect(failure!.reason).toMatchObject({ code: 'conflict' })
    expect(await counts()).toEqual({
      users: before.users + 1,
      customers: before.customers + 1,
      events: before.events + 1,
    })
  })

  it("refuses, as a conflict, an email held by another account's customer record, and rolls the user back", async () => {
    const email = uniqueEmail('orphan')
    const { user } = await createUser(database.db, { email, passwordHash: 'x', role: 'customer' })
    await database.db.update(users).set({ email: uniqueEmail('moved') }).where(eq(users.id, user.id))
    const before = await counts()

    // The old customer row still holds the email (linked to the moved user), so it cannot be claimed.
    const error = await rejection(createUser(database.db, { email, passwordHash: 'y', role: 'customer' }))
    expect(error).toMatchObject({ code: 'conflict', message: 'An account with this email already exists' })

    expect(await counts()).toEqual(before)
    expect(await findUserByEmail(database.db, email)).toBeUndefined()
  })

  it('creates an admin without a customer record or event', async () => {
    const before = await counts()
    const email = uniqueEmail('admin')
    const { user, customer } = await createUser(database.db, { email, passwordHash: 'x', role: 'admin' })
    expect(user).toMatchObject({ email, role: 'admin' })
    expect(customer).toBeNull()
    expect(await findCustomerByUser(database.db, user.id)).toBeUndefined()
    expect(await counts()).toEqual({ users: before.users + 1, customers: before.customers, events: before.events })
  })

  it('never claims an anonymised customer record', async () => {
    const email = uniqueEmail('gone')
    const [gone] = await database.db
      .insert(customers)
      .values({ email, deletedAt: new Date() })
      .returning()
    const error = await rejection(createUser(database.db, { email, passwordHash: 'x', role: 'customer' }))
    expect(error).toMatchObject({ code: 'conflict' })
    const [row] = await database.db.select().from(customers).where(eq(customers.id, gone!.id))
    expect(row!.userId).toBeNull()
  })

  it('claims an earlier guest customer with the same email instead of creating a second one', async () => {
    const [guest] = await database.db
      .insert(customers)
      .values({ email: 'Guest.Buyer@example.com', firstName: 'Guest' })
      .returning()
    const before = await counts()
    const { user, customer } = await createUser(database.db, {
      email: 'guest.buyer@EXAMPLE.com',
      passwordHash: 'x',
      role: 'customer',
    })
    expect(customer).toMatchObject({
      id: guest!.id,
      userId: user.id,
      email: 'Guest.Buyer@example.com',
      firstName: 'Guest',
    })
    expect(await counts()).toMatchObject({ users: before.users + 1, customers: before.customers })
  })
})
