/** Customers: admin CRUD, the owner's own record (/me and by id), search, paging and anonymising deletes. */
import { afterAll, beforeAll, describe, expect } from 'vitest'
import type { Customer, CustomerList } from '@commerce/domain'
import { createTestContext, test, type TestContext } from './helpers.js'

const CUSTOMERS = '/api/v1/customers'
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000cafe'
const PASSWORD = 'correct horse battery' // the password ctx.signIn gives every account
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

let seq = 0
const uniqueEmail = (label: string) => `${label}-${++seq}-${Date.now()}@example.com`

function createCustomer(ctx: TestContext, token: string, payload: Record<string, unknown>): Promise<Customer> {
  return ctx.expectStatus(201, { method: 'POST', url: CUSTOMERS, payload, token })
}

async function signInCustomer(ctx: TestContext, email?: string) {
  const session = await ctx.signIn('customer', email)
  return { ...session, customerId: session.customerId! }
}

function customerEvents(ctx: TestContext, customerId: string) {
  return ctx.handle.sql<{ kind: string; data: Customer; customer_id: string; request_id: string }[]>`
    select kind, data, customer_id, request_id from events where customer_id = ${customerId} order by id`
}

const login = (ctx: TestContext, email: string, password = PASSWORD) =>
  ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } })

describe('POST /api/v1/customers', () => {
  test('creates a guest customer (no login), answers 201 with the record and writes customer.created in the same request', async ({ ctx, admin }) => {
    const email = uniqueEmail('guest')
    const response = await ctx.request({
      method: 'POST',
      url: CUSTOMERS,
      token: admin,
      payload: { email, first_name: 'Grace', last_name: 'Hopper', phone: '+1 555 0100' },
    })
    expect(response.statusCode).toBe(201)
    const body: Customer = response.json()
    expect(body).toEqual({
      id: expect.stringMatching(UUID),
      user_id: null,
      email,
      first_name: 'Grace',
      last_name: 'Hopper',
      phone: '+1 555 0100',
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    })
    const rows = await ctx.handle.sql`select email, user_id, deleted_at from customers where id = ${body.id}`
    expect(rows).toEqual([{ email, user_id: null, deleted_at: null }])
    expect(await customerEvents(ctx, body.id)).toEqual([
      { kind: 'customer.created', data: body, customer_id: body.id, request_id: response.headers['x-request-id'] },
    ])
  })

  test('optional fields default to null', async ({ ctx, admin }) => {
    const email = uniqueEmail('bare')
    expect(await createCustomer(ctx, admin, { email })).toMatchObject({ email, first_name: null, last_name: null, phone: null, user_id: null })
  })

  test('an email another customer has, in any case, answers 409 conflict; no row and no event are written', async ({ ctx, admin }) => {
    const email = uniqueEmail('taken')
    await createCustomer(ctx, admin, { email })
    const registered = await signInCustomer(ctx, uniqueEmail('registered'))
    const [registeredRow] = await ctx.handle.sql<{ email: string }[]>`
      select email from customers where id = ${registered.customerId}`
    const registeredEmail = registeredRow!.email
    const [customersBefore, eventsBefore] = [await ctx.countRows('customers'), await ctx.countRows('events')]
    for (const clash of [email.toUpperCase(), registeredEmail.toUpperCase()]) {
      const response = await ctx.request({ method: 'POST', url: CUSTOMERS, token: admin, payload: { email: clash } })
      expect(response.statusCode).toBe(409)
      expect(response.json().error).toEqual({
        code: 'conflict',
        message: `A customer with email '${clash}' already exists`,
        request_id: response.headers['x-request-id'],
      })
    }
    expect(await ctx.countRows('customers')).toBe(customersBefore)
    expect(await ctx.countRows('events')).toBe(eventsBefore)
  })

  test('answers 400: missing email, bad email, too long, unknown fields (role, user_id, id), the reserved anonymised domain; nothing written', async ({ ctx, admin }) => {
    const [customersBefore, eventsBefore] = [await ctx.countRows('customers'), await ctx.countRows('events')]
    const missing = await ctx.request({ method: 'POST', url: CUSTOMERS, token: admin, payload: { first_name: 'No Email' } })
    expect(missing.statusCode).toBe(400)
    expect(missing.json().error).toEqual({
      code: 'validation_error',
      message: "Field 'email' is required",
      details: [{ field: 'email', message: "Field 'email' is required" }],
      request_id: missing.headers['x-request-id'],
    })
    for (const [payload, field] of [
      [{ email: 'not-an-email' }, 'email'],
      [{ email: `${'a'.repeat(250)}@example.com` }, 'email'],
      [{ email: 42 }, 'email'],
      [{ email: uniqueEmail('x'), role: 'admin' }, 'role'],
      [{ email: uniqueEmail('x'), user_id: UNKNOWN_ID }, 'user_id'],
      [{ email: uniqueEmail('x'), id: UNKNOWN_ID }, 'id'],
      [{ email: uniqueEmail('x'), first_name: 'x'.repeat(101) }, 'first_name'],
      [{ email: uniqueEmail('x'), phone: 5550100 }, 'phone'],
      [{ email: `deleted-${UNKNOWN_ID}@anonymized.invalid` }, 'email'],
    ] as const) {
      const response = await ctx.request({ method: 'POST', url: CUSTOMERS, token: admin, payload })
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json().error.code).toBe('validation_error')
      expect(response.json().error.details).toContainEqual(expect.objectContaining({ field }))
    }
    const unknown = await ctx.request({ method: 'POST', url: CUSTOMERS, token: admin, payload: { email: uniqueEmail('r'), role: 'admin' } })
    expect(unknown.json().error.details).toEqual([{ field: 'role', message: "Field 'role' is not allowed" }])
    expect(await ctx.countRows('customers')).toBe(customersBefore)
    expect(await ctx.countRows('events')).toBe(eventsBefore)
  })

  test('answers 401 anonymous or with a garbage token, 403 for a customer; nothing written', async ({ ctx }) => {
    const { token: customer } = await signInCustomer(ctx)
    const before = await ctx.countRows('customers')
    const payload = { email: uniqueEmail('nope') }
    const anonymous = await ctx.request({ method: 'POST', url: CUSTOMERS, payload })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error.code).toBe('unauthorized')
    expect((await ctx.request({ method: 'POST', url: CUSTOMERS, payload, token: 'garbage' })).statusCode).toBe(401)
    const byCustomer = await ctx.request({ method: 'POST', url: CUSTOMERS, payload, token: customer })
    expect(byCustomer.statusCode).toBe(403)
    expect(byCustomer.json().error).toMatchObject({ code: 'forbidden' })
    expect(await ctx.countRows('customers')).toBe(before)
  })

  test('registering later with the guest email claims the guest record instead of creating another', async ({ ctx, admin }) => {
    const email = uniqueEmail('claimed')
    const guest = await createCustomer(ctx, admin, { email, first_name: 'Guest' })
    const registered = await ctx.expectStatus<{ customer: Customer; user: { id: string } }>(201, {
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { email, password: 'long enough password' },
    })
    expect(registered.customer).toMatchObject({ id: guest.id, email, first_name: 'Guest', user_id: registered.user.id })
    // No second customer.created: the account's own event is its activation.
    expect((await customerEvents(ctx, guest.id)).map((event) => event.kind)).toEqual(['customer.created', 'account.activated'])
  })
})

describe('GET /api/v1/customers', () => {
  let own: TestContext
  let token: string
  const people = [
    { email: 'ada.lovelace@example.com', first_name: 'Ada', last_name: 'Lovelace' },
    { email: 'alan@turing.test', first_name: 'Alan', last_name: 'Turing' },
    { email: 'grace@navy.test', first_name: 'Grace', last_name: 'Hopper' },
    { email: 'a_b@example.com', first_name: 'Under', last_name: 'Score' },
    { email: 'axb@example.com', first_name: '100%', last_name: 'Percent' },
  ]
  let created: Customer[] = []

  beforeAll(async () => {
    own = await createTestContext()
    token = (await own.signIn('admin')).token
    created = []
    for (const person of people) created.push(await createCustomer(own, token, person))
  })
  afterAll(() => own.close())

  async function list(query = ''): Promise<CustomerList> {
    return own.expectStatus(200, { method: 'GET', url: `${CUSTOMERS}${query}`, token })
  }

  test('lists customers newest first in the list envelope', async () => {
    const body = await list()
    expect(body.meta).toEqual({ page: 1, per_page: 20, total: 5, total_pages: 1 })
    expect(body.customers).toEqual([...created].reverse())
  })

  test('pages: 5 customers at per_page 2 make 3 pages of 2, 2, 1; past the end is empty', async () => {
    const pages = [await list('?per_page=2'), await list('?per_page=2&page=2'), await list('?per_page=2&page=3')]
    expect(pages.map((page) => page.customers.length)).toEqual([2, 2, 1])
    for (const [index, page] of pages.entries()) {
      expect(page.meta).toEqual({ page: index + 1, per_page: 2, total: 5, total_pages: 3 })
    }
    expect(pages.flatMap((page) => page.customers)).toEqual((await list()).customers)
    expect(await list('?per_page=2&page=4')).toEqual({ customers: [], meta: { page: 4, per_page: 2, total: 5, total_pages: 3 } })
    expect((await list('?per_page=5')).meta).toEqual({ page: 1, per_page: 5, total: 5, total_pages: 1 })
  })

  test('search matches a case-insensitive substring of email, first name, last name or full name, and counts only matches', async () => {
    const emails = async (search: string) => {
      const body = await list(`?search=${encodeURIComponent(search)}`)
      expect(body.meta).toMatchObject({ total: body.customers.length })
      return body.customers.map((customer) => customer.email).sort()
    }
    expect(await emails('LOVELACE')).toEqual(['ada.lovelace@example.com'])
    expect(await emails('gRaCe')).toEqual(['grace@navy.test'])
    expect(await emails('.test')).toEqual(['alan@turing.test', 'grace@navy.test'])
    expect(await emails('hop')).toEqual(['grace@navy.test'])
    expect(await emails('ada love')).toEqual(['ada.lovelace@example.com'])
    expect(await emails('nobody-here')).toEqual([])
    const paged = await list('?search=example.com&per_page=2&page=2')
    expect(paged.meta).toEqual({ page: 2, per_page: 2, total: 3, total_pages: 2 })
    expect(paged.customers).toHaveLength(1)
  })

  test('LIKE wildcards in search match themselves: "_" and "%" are not wildcards', async () => {
    const emails = async (search: string) =>
      (await list(`?search=${encodeURIComponent(search)}`)).customers.map((customer) => customer.email).sort()
    expect(await emails('a_b')).toEqual(['a_b@example.com'])
    expect(await emails('%')).toEqual(['axb@example.com'])
    expect(await emails('0%')).toEqual(['axb@example.com'])
    expect(await emails('\\')).toEqual([])
  })

  test('email filters by exact email, ignoring case', async () => {
    const body = await list(`?email=${encodeURIComponent('ALAN@Turing.TEST')}`)
    expect(body).toEqual({ customers: [created[1]], meta: { page: 1, per_page: 20, total: 1, total_pages: 1 } })
    expect((await list('?email=alan')).customers).toEqual([])
  })

  test('a deleted customer is not listed and not counted', async () => {
    const doomed = await createCustomer(own, token, { email: 'doomed@example.com' })
    expect((await list()).meta).toMatchObject({ total: 6 })
    await own.expectStatus(204, { method: 'DELETE', url: `${CUSTOMERS}/${doomed.id}`, token })
    const after = await list()
    expect(after.meta).toMatchObject({ total: 5 })
    expect(after.customers.map((customer) => customer.id)).not.toContain(doomed.id)
    expect((await list('?search=deleted-')).customers).toEqual([])
  })

  test('answers 400 for per_page 0 or 101, page 0, a non-number and an over-long search', async () => {
    for (const [query, field] of [
      ['?per_page=101', 'per_page'],
      ['?per_page=0', 'per_page'],
      ['?page=0', 'page'],
      ['?page=two', 'page'],
      [`?search=${'a'.repeat(201)}`, 'search'],
    ] as const) {
      const response = await own.request({ method: 'GET', url: `${CUSTOMERS}${query}`, token })
      expect(response.statusCode, query).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'validation_error', details: [expect.objectContaining({ field })] })
    }
  })

  test('answers 401 anonymous and 403 for a customer', async () => {
    const anonymous = await own.request({ method: 'GET', url: CUSTOMERS })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error.code).toBe('unauthorized')
    const customer = await own.signIn('customer')
    const forbidden = await own.request({ method: 'GET', url: CUSTOMERS, token: customer.token })
    expect(forbidden.statusCode).toBe(403)
    expect(forbidden.json().error.code).toBe('forbidden')
  })
})

describe('GET /api/v1/customers/:id', () => {
  test('an admin reads any customer', async ({ ctx, admin }) => {
    const guest = await createCustomer(ctx, admin, { email: uniqueEmail('read'), last_name: 'Readable' })
    expect(await ctx.expectStatus(200, { method: 'GET', url: `${CUSTOMERS}/${guest.id}`, token: admin })).toEqual(guest)
  })

  test('a customer reads its own record by id', async ({ ctx }) => {
    const me = await signInCustomer(ctx)
    const body = await ctx.expectStatus<Customer>(200, { method: 'GET', url: `${CUSTOMERS}/${me.customerId}`, token: me.token })
    expect(body).toMatchObject({ id: me.customerId, user_id: me.userId })
  })

  test("another customer's id answers 404 exactly like an unknown id (no existence leak)", async ({ ctx, admin }) => {
    const me = await signInCustomer(ctx)
    const other = await signInCustomer(ctx)
    const foreign = await ctx.request({ method: 'GET', url: `${CUSTOMERS}/${other.customerId}`, token: me.token })
    const unknown = await ctx.request({ method: 'GET', url: `${CUSTOMERS}/${UNKNOWN_ID}`, token: me.token })
    for (const response of [foreign, unknown]) {
      expect(response.statusCode).toBe(404)
      expect(response.json().error).toMatchObject({ code: 'not_found', message: 'Customer not found' })
    }
    const byAdmin = await ctx.request({ method: 'GET', url: `${CUSTOMERS}/${UNKNOWN_ID}`, token: admin })
    expect(byAdmin.statusCode).toBe(404)
    expect(byAdmin.json().error).toMatchObject({ code: 'not_found', message: 'Customer not found' })
  })

  test('answers 400 for a malformed id and 401 anonymous', async ({ ctx, admin }) => {
    const malformed = await ctx.request({ method: 'GET', url: `${CUSTOMERS}/not-a-uuid`, token: admin })
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().error.details).toContainEqual(expect.objectContaining({ field: 'id' }))
    const anonymous = await ctx.request({ method: 'GET', url: `${CUSTOMERS}/${UNKNOWN_ID}` })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error.code).toBe('unauthorized')
  })
})

describe('GET /api/v1/customers/me', () => {
  test("answers the signed-in customer's own record", async ({ ctx }) => {
    const email = uniqueEmail('me')
    const me = await signInCustomer(ctx, email)
    const body = await ctx.expectStatus<Customer>(200, { method: 'GET', url: `${CUSTOMERS}/me`, token: me.token })
    expect(body).toEqual({
      id: me.customerId,
      user_id: me.userId,
      email,
      first_name: null,
      last_name: null,
      phone: null,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    })
  })

  test('answers 401 anonymous and 404 for an admin, who has no customer record', async ({ ctx, admin }) => {
    const anonymous = await ctx.request({ method: 'GET', url: `${CUSTOMERS}/me` })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error.code).toBe('unauthorized')
    const byAdmin = await ctx.request({ method: 'GET', url: `${CUSTOMERS}/me`, token: admin })
    expect(byAdmin.statusCode).toBe(404)
    expect(byAdmin.json().error).toMatchObject({ code: 'not_found', message: 'Customer not found' })
  })
})

describe('PATCH /api/v1/customers/me and /customers/:id', () => {
  test('the customer changes its names and phone; only the fields sent change; null clears', async ({ ctx }) => {
    const me = await signInCustomer(ctx)
    const before = await ctx.expectStatus<Customer>(200, { method: 'GET', url: `${CUSTOMERS}/me`, token: me.token })
    const named = await ctx.expectStatus<Customer>(200, {
      method: 'PATCH',
      url: `${CUSTOMERS}/me`,
      token: me.token,
      payload: { first_name: 'Katherine', last_name: 'Johnson', phone: '+1 555 0199' },
    })
    expect(named).toEqual({
      ...before,
      first_name: 'Katherine',
      last_name: 'Johnson',
      phone: '+1 555 0199',
      updated_at: expect.stringMatching(ISO),
    })
    const cleared = await ctx.expectStatus<Customer>(200, {
      method: 'PATCH',
      url: `${CUSTOMERS}/${me.customerId}`,
      token: me.token,
      payload: { phone: null },
    })
    expect(cleared).toMatchObject({ first_name: 'Katherine', last_name: 'Johnson', phone: null })
    expect(await ctx.expectStatus(200, { method: 'GET', url: `${CUSTOMERS}/me`, token: me.token })).toEqual(cleared)
  })

  test('a new email changes the login too: the new email logs in, the old one no longer does', async ({ ctx }) => {
    const oldEmail = uniqueEmail('old')
    const me = await signInCustomer(ctx, oldEmail)
    const newEmail = uniqueEmail('new')
    const body = await ctx.expectStatus<Customer>(200, {
      method: 'PATCH',
      url: `${CUSTOMERS}/me`,
      token: me.token,
      payload: { email: newEmail },
    })
    expect(body).toMatchObject({ id: me.customerId, email: newEmail })
    expect(await ctx.handle.sql`select email from users where id = ${me.userId}`).toEqual([{ email: newEmail }])
    const fresh = await login(ctx, newEmail)
    expect(fresh.statusCode).toBe(200)
    expect(fresh.json()).toMatchObject({ user: { id: me.userId, email: newEmail }, customer: { id: me.customerId, email: newEmail } })
    expect((await login(ctx, oldEmail)).statusCode).toBe(401)
  })

  test('an email another customer or another account (an admin) has answers 409; neither the customer nor the login change', async ({ ctx, admin }) => {
    const email = uniqueEmail('keeps')
    const me = await signInCustomer(ctx, email)
    const guest = await createCustomer(ctx, admin, { email: uniqueEmail('guest-clash') })
    const adminEmail = uniqueEmail('admin-clash')
    await ctx.signIn('admin', adminEmail)
    const before = await ctx.expectStatus<Customer>(200, { method: 'GET', url: `${CUSTOMERS}/me`, token: me.token })
    for (const [clash, message] of [
      [guest.email.toUpperCase(), `A customer with email '${guest.email.toUpperCase()}' already exists`],
      [adminEmail, `An account with email '${adminEmail}' already exists`],
    ] as const) {
      const response = await ctx.request({
        method: 'PATCH',
        url: `${CUSTOMERS}/me`,
        token: me.token,
        payload: { email: clash, first_name: 'Should Not Stick' },
      })
      expect(response.statusCode).toBe(409)
      expect(response.json().error).toMatchObject({ code: 'conflict', message })
    }
    expect(await ctx.expectStatus(200, { method: 'GET', url: `${CUSTOMERS}/me`, token: me.token })).toEqual(before)
    expect(await ctx.handle.sql`select email from users where id = ${me.userId}`).toEqual([{ email }])
  })

  test('changing only the case of its own email is allowed', async ({ ctx }) => {
    const email = uniqueEmail('case')
    const me = await signInCustomer(ctx, email)
    const body = await ctx.expectStatus<Customer>(200, {
      method: 'PATCH',
      url: `${CUSTOMERS}/me`,
      token: me.token,
      payload: { email: email.toUpperCase() },
    })
    expect(body.email).toBe(email.toUpperCase())
    expect((await login(ctx, email)).statusCode).toBe(200)
  })

  test('answers 400 for role, user_id, id, an empty body, a bad or null email; nothing changes', async ({ ctx, admin }) => {
    const me = await signInCustomer(ctx)
    const before = await ctx.expectStatus<Customer>(200, { method: 'GET', url: `${CUSTOMERS}/me`, token: me.token })
    for (const [payload, field] of [
      [{ role: 'admin' }, 'role'],
      [{ user_id: UNKNOWN_ID }, 'user_id'],
      [{ id: UNKNOWN_ID }, 'id'],
      [{ first_name: 'Sneaky', role: 'admin' }, 'role'],
      [{ email: 'nope' }, 'email'],
      [{ email: null }, 'email'],
      [{ email: 'x@anonymized.invalid' }, 'email'],
    ] as const) {
      for (const url of [`${CUSTOMERS}/me`, `${CUSTOMERS}/${me.customerId}`]) {
        const response = await ctx.request({ method: 'PATCH', url, token: me.token, payload })
        expect(response.statusCode, `${url} ${JSON.stringify(payload)}`).toBe(400)
        expect(response.json().error.code).toBe('validation_error')
        expect(response.json().error.details).toContainEqual(expect.objectContaining({ field }))
      }
    }
    const empty = await ctx.request({ method: 'PATCH', url: `${CUSTOMERS}/me`, token: me.token, payload: {} })
    expect(empty.statusCode).toBe(400)
    expect(empty.json().error.code).toBe('validation_error')
    const role = await ctx.request({ method: 'PATCH', url: `${CUSTOMERS}/${me.customerId}`, token: admin, payload: { role: 'admin' } })
    expect(role.json().error.details).toEqual([{ field: 'role', message: "Field 'role' is not allowed" }])
    expect(await ctx.expectStatus(200, { method: 'GET', url: `${CUSTOMERS}/me`, token: me.token })).toEqual(before)
    expect(await ctx.handle.sql`select role from users where id = ${me.userId}`).toEqual([{ role: 'customer' }])
  })

  test('an admin updates any customer, a guest included', async ({ ctx, admin }) => {
    const guest = await createCustomer(ctx, admin, { email: uniqueEmail('admin-edit') })
    const email = uniqueEmail('admin-edited')
    const body = await ctx.expectStatus<Customer>(200, {
      method: 'PATCH',
      url: `${CUSTOMERS}/${guest.id}`,
      token: admin,
      payload: { email, first_name: 'Edited' },
    })
    expect(body).toEqual({ ...guest, email, first_name: 'Edited', updated_at: expect.stringMatching(ISO) })
  })

  test("a customer patching another customer's id gets 404 and nothing changes; 401 anonymous; admin /me 404", async ({ ctx, admin }) => {
    const me = await signInCustomer(ctx)
    const other = await signInCustomer(ctx)
    const before = await ctx.expectStatus(200, { method: 'GET', url: `${CUSTOMERS}/${other.customerId}`, token: admin })
    const response = await ctx.request({
      method: 'PATCH',
      url: `${CUSTOMERS}/${other.customerId}`,
      token: me.token,
      payload: { first_name: 'Hijacked' },
    })
    expect(response.statusCode).toBe(404)
    expect(response.json().error).toMatchObject({ code: 'not_found', message: 'Customer not found' })
    expect(await ctx.expectStatus(200, { method: 'GET', url: `${CUSTOMERS}/${other.customerId}`, token: admin })).toEqual(before)
    const anonymous = await ctx.request({ method: 'PATCH', url: `${CUSTOMERS}/me`, payload: { first_name: 'Anon' } })
    expect(anonymous.statusCode).toBe(401)
    const adminMe = await ctx.request({ method: 'PATCH', url: `${CUSTOMERS}/me`, token: admin, payload: { first_name: 'Admin' } })
    expect(adminMe.statusCode).toBe(404)
    const unknown = await ctx.request({ method: 'PATCH', url: `${CUSTOMERS}/${UNKNOWN_ID}`, token: admin, payload: { first_name: 'X' } })
    expect(unknown.statusCode).toBe(404)
    expect(unknown.json().error.code).toBe('not_found')
  })
})

describe('DELETE /api/v1/customers/:id', () => {
  test('anonymises in one go: email replaced, names and phone cleared, addresses and login deleted, row kept', async ({ ctx, admin }) => {
    const email = uniqueEmail('forget-me')
    const me = await signInCustomer(ctx, email)
    await ctx.expectStatus(200, {
      method: 'PATCH',
      url: `${CUSTOMERS}/me`,
      token: me.token,
      payload: { first_name: 'Forget', last_name: 'Me', phone: '+44 20 7946 0000' },
    })
    await ctx.expectStatus(201, {
      method: 'POST',
      url: `${CUSTOMERS}/me/addresses`,
      token: me.token,
      payload: { line1: '1 Privacy Lane', city: 'London', country: 'GB' },
    })
    expect((await login(ctx, email)).statusCode).toBe(200)
    const address = { line1: '1 Privacy Lane', city: 'London', country: 'GB' }
    const cart = async () => {
      const { id } = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/carts', token: me.token, payload: { currency: 'GBP', email } })
      await ctx.expectStatus(200, { method: 'PUT', url: `/api/v1/carts/${id}/shipping-address`, token: me.token, payload: address })
      return id
    }
    const openCart = await cart()
    const checkedOut = await cart()
    await ctx.handle.sql`update carts set completed_at = now() where id = ${checkedOut}`

    const response = await ctx.request({ method: 'DELETE', url: `${CUSTOMERS}/${me.customerId}`, token: admin })
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')

    const rows = await ctx.handle.sql`
      select email, first_name, last_name, phone, user_id, deleted_at is not null as deleted from customers where id = ${me.customerId}`
    expect(rows).toEqual([
      {
        email: `deleted-${me.customerId}@anonymized.invalid`,
        first_name: null,
        last_name: null,
        phone: null,
        user_id: null,
        deleted: true,
      },
    ])
    expect(await ctx.handle.sql`select id from customer_addresses where customer_id = ${me.customerId}`).toEqual([])
    expect(await ctx.handle.sql`select id from users where id = ${me.userId}`).toEqual([])
    // Open carts go; a checked-out cart stays (for its order) without email and address.
    expect(await ctx.handle.sql`select id, email, shipping_address from carts where id in (${openCart}, ${checkedOut})`).toEqual([
      { id: checkedOut, email: null, shipping_address: null },
    ])

    const loginAfter = await login(ctx, email)
    expect(loginAfter.statusCode).toBe(401)
    expect(loginAfter.json().error).toMatchObject({ code: 'unauthorized', message: 'Invalid email or password' })
  })

  test('a deleted customer answers 404 everywhere to admins, deleting twice too; its own old token is 401, its login gone', async ({ ctx, admin }) => {
    const me = await signInCustomer(ctx)
    await ctx.expectStatus(204, { method: 'DELETE', url: `${CUSTOMERS}/${me.customerId}`, token: admin })
    for (const [method, url, payload] of [
      ['GET', `${CUSTOMERS}/${me.customerId}`, undefined],
      ['PATCH', `${CUSTOMERS}/${me.customerId}`, { first_name: 'Back' }],
      ['GET', `${CUSTOMERS}/${me.customerId}/addresses`, undefined],
      ['DELETE', `${CUSTOMERS}/${me.customerId}`, undefined],
    ] as const) {
      const response = await ctx.request({ method, url, token: admin, ...(payload ? { payload } : {}) })
      expect(response.statusCode, `${method} ${url}`).toBe(404)
      expect(response.json().error).toMatchObject({ code: 'not_found', message: 'Customer not found' })
    }
    for (const [method, url, payload] of [
      ['GET', `${CUSTOMERS}/me`, undefined],
      ['PATCH', `${CUSTOMERS}/me`, { first_name: 'Back' }],
      ['GET', `${CUSTOMERS}/${me.customerId}`, undefined],
    ] as const) {
      const response = await ctx.request({ method, url, token: me.token, ...(payload ? { payload } : {}) })
      expect(response.statusCode, `${method} ${url}`).toBe(401)
      expect(response.json().error).toMatchObject({ code: 'unauthorized', message: 'The account of this token no longer exists' })
    }
  })

  test('the old email is free again: it can register, and gets a new customer record', async ({ ctx, admin }) => {
    const email = uniqueEmail('again')
    const me = await signInCustomer(ctx, email)
    await ctx.expectStatus(204, { method: 'DELETE', url: `${CUSTOMERS}/${me.customerId}`, token: admin })
    const registered = await ctx.expectStatus<{ customer: Customer }>(201, {
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { email, password: 'a brand new password' },
    })
    expect(registered.customer.email).toBe(email)
    expect(registered.customer.id).not.toBe(me.customerId)
    expect(await createCustomer(ctx, admin, { email: uniqueEmail('unrelated') })).toBeTruthy()
    // A guest can be deleted too, and its email reused by an admin create.
    const guestEmail = uniqueEmail('guest-again')
    const guest = await createCustomer(ctx, admin, { email: guestEmail })
    await ctx.expectStatus(204, { method: 'DELETE', url: `${CUSTOMERS}/${guest.id}`, token: admin })
    expect((await createCustomer(ctx, admin, { email: guestEmail })).id).not.toBe(guest.id)
  })

  test('answers 403 for a customer (even for itself), 401 anonymous, 404 unknown, 400 malformed; nothing changes', async ({ ctx, admin }) => {
    const me = await signInCustomer(ctx)
    const self = await ctx.request({ method: 'DELETE', url: `${CUSTOMERS}/${me.customerId}`, token: me.token })
    expect(self.statusCode).toBe(403)
    expect(self.json().error.code).toBe('forbidden')
    const anonymous = await ctx.request({ method: 'DELETE', url: `${CUSTOMERS}/${me.customerId}` })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error.code).toBe('unauthorized')
    const unknown = await ctx.request({ method: 'DELETE', url: `${CUSTOMERS}/${UNKNOWN_ID}`, token: admin })
    expect(unknown.statusCode).toBe(404)
    expect(unknown.json().error).toMatchObject({ code: 'not_found', message: 'Customer not found' })
    const malformed = await ctx.request({ method: 'DELETE', url: `${CUSTOMERS}/123`, token: admin })
    expect(malformed.statusCode).toBe(400)
    expect(await ctx.expectStatus(200, { method: 'GET', url: `${CUSTOMERS}/me`, token: me.token })).toMatchObject({ id: me.customerId })
  })
})

describe('OpenAPI', () => {
  test('every customer route is documented with the customers tag, a summary, bearer security and its responses', async ({ ctx }) => {
    const document = await ctx.expectStatus<{ paths: Record<string, Record<string, Record<string, unknown>>> }>(200, {
      method: 'GET',
      url: '/api/v1/openapi.json',
    })
    const expected: [string, string, string][] = [
      ['get', '/api/v1/customers', '200'],
      ['post', '/api/v1/customers', '201'],
      ['get', '/api/v1/customers/me', '200'],
      ['patch', '/api/v1/customers/me', '200'],
      ['get', '/api/v1/customers/me/addresses', '200'],
      ['post', '/api/v1/customers/me/addresses', '201'],
      ['get', '/api/v1/customers/me/addresses/{address_id}', '200'],
      ['patch', '/api/v1/customers/me/addresses/{address_id}', '200'],
      ['delete', '/api/v1/customers/me/addresses/{address_id}', '204'],
      ['get', '/api/v1/customers/{id}', '200'],
      ['patch', '/api/v1/customers/{id}', '200'],
      ['delete', '/api/v1/customers/{id}', '204'],
      ['get', '/api/v1/customers/{id}/addresses', '200'],
      ['post', '/api/v1/customers/{id}/addresses', '201'],
      ['get', '/api/v1/customers/{id}/addresses/{address_id}', '200'],
      ['patch', '/api/v1/customers/{id}/addresses/{address_id}', '200'],
      ['delete', '/api/v1/customers/{id}/addresses/{address_id}', '204'],
    ]
    for (const [method, path, success] of expected) {
      const operation = document.paths[path]?.[method]
      expect(operation, `${method} ${path}`).toBeDefined()
      expect(operation).toMatchObject({ tags: ['customers'], summary: expect.any(String), security: [{ bearerAuth: [] }] })
      const statuses = Object.keys(operation!.responses as object)
      expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining([success, '401', '429']))
    }
    const create = document.paths['/api/v1/customers/{id}/addresses']!.post!
    expect(`${create.summary} ${create.description}`).toMatch(/first .*default shipping and billing/)
  })
})
