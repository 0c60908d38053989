/**
 * A user token is only as good as its account now: deleted, disabled or demoted accounts are
 * refused from their next request (401/403), and admins change roles and disable accounts with
 * GET/PATCH /users.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect } from 'vitest'
import { test as apiTest, type TestContext } from './helpers.js'
import { insertOrder } from './order-fixtures.js'

type Account = Awaited<ReturnType<TestContext['signIn']>>

/** The file's admin with its user id, which these tests need beside its token. */
const test = apiTest.extend<{ adminAccount: Account }>({
  adminAccount: [async ({ ctx }, use) => use(await ctx.signIn('admin')), { scope: 'file' }],
})

const patchUser = (ctx: TestContext, token: string, id: string, payload: object) => ctx.request({ method: 'PATCH', url: `/api/v1/users/${id}`, payload, token })

/** Requests an admin token may make, and a customer token its own. */
const ADMIN_READS = ['/api/v1/orders', '/api/v1/customers', '/api/v1/users'] as const

describe('a token whose account changed', () => {
  test('a deleted admin is refused with 401 on every route at once, not only /auth/me', async ({ ctx }) => {
    const gone = await ctx.signIn('admin')
    for (const url of ADMIN_READS) await ctx.expectStatus(200, { method: 'GET', url, token: gone.token })
    await ctx.handle.sql`delete from users where id = ${gone.userId}`

    for (const url of [...ADMIN_READS, '/api/v1/auth/me']) {
      const error = await ctx.expectError(401, 'unauthorized', { method: 'GET', url, token: gone.token })
      expect(error.message).toBe('The account of this token no longer exists')
    }
    await ctx.expectError(401, 'unauthorized', { method: 'POST', url: '/api/v1/products', payload: { title: 'By a ghost' }, token: gone.token })
    // A public route too: a bad credential is never taken for an anonymous caller.
    await ctx.expectError(401, 'unauthorized', { method: 'GET', url: '/api/v1/products', token: gone.token })
    expect(await ctx.countRows('products')).toBe(0)
  })

  test('a token issued before the password last changed is refused (401) on every route; one issued after, and one of before credential versions while there was no change, are not', async ({ ctx }) => {
    const customer = await ctx.signIn('customer')
    // A token of before this claim existed: no `ver`, which counts as 0, the version of an account never changed.
    const unversioned = ctx.app.jwt.sign({ sub: customer.userId, role: 'customer', typ: 'user' })
    for (const token of [customer.token, unversioned]) await ctx.expectStatus(200, { method: 'GET', url: '/api/v1/auth/me', token })
    await ctx.handle.sql`update users set credential_version = credential_version + 1 where id = ${customer.userId}`
    for (const token of [customer.token, unversioned]) {
      for (const url of ['/api/v1/auth/me', '/api/v1/customers/me', '/api/v1/products']) {
        const error = await ctx.expectError(401, 'unauthorized', { method: 'GET', url, token })
        expect(error.message).toBe('The password of this account changed after this token was issued; sign in again')
      }
    }
    const [row] = await ctx.handle.sql<{ credential_version: number }[]>`select credential_version from users where id = ${customer.userId}`
    const fresh = ctx.app.issueUserToken({ id: customer.userId, role: 'customer', credentialVersion: row!.credential_version })
    await ctx.expectStatus(200, { method: 'GET', url: '/api/v1/auth/me', token: fresh })
    // A forged version is no way around it: the token would have to be signed.
    const claimsVersion = ctx.app.jwt.sign({ sub: customer.userId, role: 'customer', typ: 'user', ver: 'one' } as never)
    await ctx.expectError(401, 'unauthorized', { method: 'GET', url: '/api/v1/auth/me', token: claimsVersion })
  })

  test('a demoted admin gets 403 on admin routes from its next request, with the token it already has', async ({ ctx, adminAccount }) => {
    const demoted = await ctx.signIn('admin')
    const answer = await patchUser(ctx, adminAccount.token, demoted.userId, { role: 'customer' })
    expect(answer.statusCode, answer.body).toBe(200)
    expect(answer.json()).toMatchObject({ id: demoted.userId, role: 'customer', disabled_at: null })

    for (const url of ['/api/v1/customers', '/api/v1/users']) await ctx.expectError(403, 'forbidden', { method: 'GET', url, token: demoted.token })
    // Orders: a customer's own only, and it has none, while an admin sees the order there is.
    await insertOrder(ctx)
    const seen = (token: string) => ctx.expectStatus<{ meta: { total: number } }>(200, { method: 'GET', url: '/api/v1/orders', token })
    expect((await seen(demoted.token)).meta.total).toBe(0)
    expect((await seen(adminAccount.token)).meta.total).toBeGreaterThan(0)
    await ctx.expectError(403, 'forbidden', { method: 'POST', url: '/api/v1/products', payload: { title: 'Not any more' }, token: demoted.token })
    const me = await ctx.expectStatus<{ user: { role: string } }>(200, { method: 'GET', url: '/api/v1/auth/me', token: demoted.token })
    expect(me.user.role).toBe('customer')
  })

  test('a customer deleted by an admin can no longer make carts, check out or read its orders with its token', async ({ ctx, adminAccount }) => {
    const email = `leaving-${randomUUID()}@example.com`
    const registered = await ctx.expectStatus<{ token: string; customer: { id: string } }>(201, {
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { email, password: 'long enough password' },
    })
    await ctx.expectStatus(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: 'USD' }, token: registered.token })
    await ctx.expectStatus(204, { method: 'DELETE', url: `/api/v1/customers/${registered.customer.id}`, token: adminAccount.token })
    const cartsBefore = await ctx.countRows('carts')

    const refusals = [
      { method: 'POST', url: '/api/v1/carts', payload: { currency: 'USD' } },
      { method: 'POST', url: `/api/v1/checkouts/${randomUUID()}/complete`, payload: { payment: { method: 'card', token: 'tok_visa' } }, headers: { 'idempotency-key': randomUUID() } },
      { method: 'GET', url: '/api/v1/orders' },
      { method: 'GET', url: '/api/v1/customers/me' },
    ] as const
    for (const refusal of refusals) {
      const error = await ctx.expectError(401, 'unauthorized', { ...refusal, token: registered.token })
      expect(error.message).toBe('The account of this token no longer exists')
    }
    expect(await ctx.countRows('carts')).toBe(cartsBefore)
  })

  test('a disabled account is refused (401) from its next request and cannot sign in; enabled again, it can', async ({ ctx, adminAccount }) => {
    const email = `paused-${randomUUID()}@example.com`
    const registered = await ctx.expectStatus<{ token: string; user: { id: string } }>(201, {
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { email, password: 'long enough password' },
    })
    const disabled = await patchUser(ctx, adminAccount.token, registered.user.id, { disabled: true })
    expect(disabled.statusCode, disabled.body).toBe(200)
    expect(Date.parse(disabled.json().disabled_at)).toBeGreaterThan(Date.now() - 60_000)

    const error = await ctx.expectError(401, 'unauthorized', { method: 'GET', url: '/api/v1/customers/me', token: registered.token })
    expect(error.message).toBe('The account of this token is disabled')
    const login = (password: string) => ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } })
    expect((await login('long enough password')).json().error).toMatchObject({ code: 'unauthorized', message: 'This account is disabled' })
    // Whoever lacks the password learns nothing: the usual message.
    expect((await login('a wrong password')).json().error.message).toBe('Invalid email or password')

    // Disabling again keeps the first time.
    expect((await patchUser(ctx, adminAccount.token, registered.user.id, { disabled: true })).json().disabled_at).toBe(disabled.json().disabled_at)
    expect((await patchUser(ctx, adminAccount.token, registered.user.id, { disabled: false })).json().disabled_at).toBeNull()
    await ctx.expectStatus(200, { method: 'GET', url: '/api/v1/customers/me', token: registered.token })
    expect((await login('long enough password')).statusCode).toBe(200)
  })
})

describe('GET /users and PATCH /users/:id', () => {
  test('lists accounts newest first, filtered by role or exact email, without password hashes', async ({ ctx, adminAccount }) => {
    const email = `listed-${randomUUID()}@example.com`
    const customer = await ctx.signIn('customer', email)
    const byEmail = await ctx.expectStatus<{ users: { id: string }[] }>(200, {
      method: 'GET',
      url: `/api/v1/users?email=${encodeURIComponent(email.toUpperCase())}`,
      token: adminAccount.token,
    })
    expect(byEmail.users.map((user) => user.id)).toEqual([customer.userId])
    const admins = await ctx.expectStatus<{ users: Record<string, unknown>[] }>(200, { method: 'GET', url: '/api/v1/users?role=admin&per_page=100', token: adminAccount.token })
    expect(admins.users.every((user) => user.role === 'admin')).toBe(true)
    expect(admins.users.map((user) => user.id)).toContain(adminAccount.userId)
    expect(Object.keys(admins.users[0]!).sort()).toEqual(['created_at', 'disabled_at', 'email', 'email_verified_at', 'id', 'role'])
  })

  test('answers 404 for an unknown user and 400 for an empty or unknown change', async ({ ctx, adminAccount }) => {
    await ctx.expectError(404, 'not_found', { method: 'PATCH', url: `/api/v1/users/${randomUUID()}`, payload: { disabled: true }, token: adminAccount.token })
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url: `/api/v1/users/${adminAccount.userId}`, payload: {}, token: adminAccount.token })
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url: `/api/v1/users/${adminAccount.userId}`, payload: { role: 'root' }, token: adminAccount.token })
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url: `/api/v1/users/${adminAccount.userId}`, payload: { email: 'x@example.com' }, token: adminAccount.token })
  })

  test('customers get 403; a users:write key may disable but not make an admin', async ({ ctx }) => {
    const customer = await ctx.signIn('customer')
    await ctx.expectError(403, 'forbidden', { method: 'GET', url: '/api/v1/users', token: customer.token })
    await ctx.expectError(403, 'forbidden', { method: 'PATCH', url: `/api/v1/users/${customer.userId}`, payload: { role: 'admin' }, token: customer.token })

    const { key } = await ctx.createApiKey(['users:write'])
    const promoted = await ctx.expectError(403, 'forbidden', { method: 'PATCH', url: `/api/v1/users/${customer.userId}`, payload: { role: 'admin' }, token: key })
    expect(promoted.message).toBe('Making an admin needs the scope * (an admin token)')
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/users/${customer.userId}`, payload: { disabled: true }, token: key })
    const [row] = await ctx.handle.sql<{ role: string }[]>`select role from users where id = ${customer.userId}`
    expect(row!.role).toBe('customer')
  })

  test('the last enabled admin can be neither demoted nor disabled (409), even by two admins demoting each other at once', async ({ ctx, adminAccount }) => {
    await ctx.handle.sql`update users set role = 'customer' where role = 'admin' and id <> ${adminAccount.userId}`
    for (const change of [{ role: 'customer' }, { disabled: true }]) {
      const refused = await patchUser(ctx, adminAccount.token, adminAccount.userId, change)
      expect(refused.statusCode, refused.body).toBe(409)
      expect(refused.json().error.message).toBe('This is the last enabled admin: make another admin before demoting or disabling it')
    }
    const other = await ctx.signIn('admin')
    // A key holding `*`, so that neither request's own credential is what gets demoted.
    const { key } = await ctx.createApiKey(['*'])
    const answers = await Promise.all([patchUser(ctx, key, other.userId, { role: 'customer' }), patchUser(ctx, key, adminAccount.userId, { role: 'customer' })])
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 409])
    const [left] = await ctx.handle.sql<{ n: number }[]>`select count(*)::int as n from users where role = 'admin' and disabled_at is null`
    expect(left!.n).toBe(1)
    // Put back what later tests expect.
    await ctx.handle.sql`update users set role = 'admin' where id in (${adminAccount.userId}, ${other.userId})`
  })
})
