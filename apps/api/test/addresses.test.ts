/** Customer addresses: owner and admin CRUD under /customers/:id and /customers/me, default-address rules, ownership. */
import { describe, expect } from 'vitest'
import type { AddressList, CustomerAddress } from '@commerce/domain'
import { test, type TestContext } from './helpers.js'

const CUSTOMERS = '/api/v1/customers'
const MINE = `${CUSTOMERS}/me/addresses`
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000cafe'
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const HOME = { first_name: 'Ada', last_name: 'Lovelace', line1: '12 St James Square', city: 'London', postal_code: 'SW1Y 4JH', country: 'GB' }
const WORK = { line1: '1 Infinite Loop', city: 'Cupertino', region: 'CA', postal_code: '95014', country: 'US' }
const CABIN = { line1: 'Lakeside 3', city: 'Tampere', country: 'FI' }

async function newCustomer(ctx: TestContext) {
  const session = await ctx.signIn('customer')
  return { ...session, customerId: session.customerId! }
}

function addAddress(ctx: TestContext, token: string, payload: Record<string, unknown>, url = MINE): Promise<CustomerAddress> {
  return ctx.expectStatus(201, { method: 'POST', url, token, payload })
}

function listAddresses(ctx: TestContext, token: string, url = MINE): Promise<AddressList> {
  return ctx.expectStatus(200, { method: 'GET', url, token })
}

/** [id, is_default_shipping, is_default_billing] of every address of the customer, oldest first. */
async function defaults(ctx: TestContext, customerId: string) {
  const rows = await ctx.handle.sql<{ id: string; s: boolean; b: boolean }[]>`
    select id, is_default_shipping as s, is_default_billing as b from customer_addresses
    where customer_id = ${customerId} order by created_at, id`
  return rows.map((row) => [row.id, row.s, row.b])
}

describe('POST /customers/me/addresses and /customers/:id/addresses', () => {
  test('saves an address and answers 201 with every field; the first one becomes default shipping and billing', async ({ ctx }) => {
    const me = await newCustomer(ctx)
    const response = await ctx.request({ method: 'POST', url: MINE, token: me.token, payload: HOME })
    expect(response.statusCode).toBe(201)
    expect(response.json()).toEqual({
      id: expect.stringMatching(UUID),
      customer_id: me.customerId,
      first_name: 'Ada',
      last_name: 'Lovelace',
      company: null,
      line1: '12 St James Square',
      line2: null,
      city: 'London',
      region: null,
      postal_code: 'SW1Y 4JH',
      country: 'GB',
      phone: null,
      is_default_shipping: true,
      is_default_billing: true,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    })
  })

  test('later addresses without flags are not defaults and leave the defaults alone', async ({ ctx }) => {
    const me = await newCustomer(ctx)
    const home = await addAddress(ctx, me.token, HOME)
    const work = await addAddress(ctx, me.token, WORK)
    expect(work).toMatchObject({ ...WORK, is_default_shipping: false, is_default_billing: false })
    expect(await defaults(ctx, me.customerId)).toEqual([
      [home.id, true, true],
      [work.id, false, false],
    ])
  })

  test('a new default shipping address takes the flag from the previous one; billing stays where it was', async ({ ctx }) => {
    const me = await newCustomer(ctx)
    const home = await addAddress(ctx, me.token, HOME)
    const work = await addAddress(ctx, me.token, { ...WORK, is_default_shipping: true })
    expect(work).toMatchObject({ is_default_shipping: true, is_default_billing: false })
    const cabin = await addAddress(ctx, me.token, { ...CABIN, is_default_billing: true, is_default_shipping: false })
    expect(cabin).toMatchObject({ is_default_shipping: false, is_default_billing: true })
    expect(await defaults(ctx, me.customerId)).toEqual([
      [home.id, false, false],
      [work.id, true, false],
      [cabin.id, false, true],
    ])
    const listed = await listAddresses(ctx, me.token)
    const home2 = listed.addresses.find((address) => address.id === home.id)!
    expect(home2.updated_at >= home.updated_at).toBe(true)
  })

  test('a first address that sets either flag is taken as sent: the other flag is not defaulted', async ({ ctx }) => {
    const me = await newCustomer(ctx)
    const only = await addAddress(ctx, me.token, { ...HOME, is_default_billing: false })
    expect(only).toMatchObject({ is_default_shipping: false, is_default_billing: false })
    const other = await newCustomer(ctx)
    expect(await addAddress(ctx, other.token, { ...HOME, is_default_shipping: true })).toMatchObject({
      is_default_shipping: true,
      is_default_billing: false,
    })
  })

  test('an admin saves an address for any customer by id; the owner may use its id too', async ({ ctx, admin }) => {
    const me = await newCustomer(ctx)
    const byAdmin = await addAddress(ctx, admin, WORK, `${CUSTOMERS}/${me.customerId}/addresses`)
    expect(byAdmin).toMatchObject({ customer_id: me.customerId, is_default_shipping: true, is_default_billing: true })
    const byOwner = await addAddress(ctx, me.token, CABIN, `${CUSTOMERS}/${me.customerId}/addresses`)
    expect(byOwner).toMatchObject({ customer_id: me.customerId, is_default_shipping: false })
    expect((await listAddresses(ctx, me.token)).addresses.map((address) => address.id)).toEqual([byAdmin.id, byOwner.id])
  })

  test('answers 400 for a missing line1 ("Field \'line1\' is required"), bad countries, unknown fields; nothing saved', async ({ ctx }) => {
    const me = await newCustomer(ctx)
    const before = await ctx.countRows('customer_addresses')
    const { line1: _line1, ...withoutLine1 } = HOME
    const missing = await ctx.request({ method: 'POST', url: MINE, token: me.token, payload: withoutLine1 })
    expect(missing.statusCode).toBe(400)
    expect(missing.json().error).toEqual({
      code: 'validation_error',
      message: "Field 'line1' is required",
      details: [{ field: 'line1', message: "Field 'line1' is required" }],
      request_id: missing.headers['x-request-id'],
    })
    for (const [payload, field] of [
      [{ ...HOME, country: 'XX' }, 'country'],
      [{ ...HOME, country: 'us' }, 'country'],
      [{ ...HOME, country: 'USA' }, 'country'],
      [{ ...HOME, line1: '' }, 'line1'],
      [{ ...HOME, city: undefined }, 'city'],
      [{ ...HOME, postal_code: 'x'.repeat(21) }, 'postal_code'],
      [{ ...HOME, is_default_shipping: 'yes' }, 'is_default_shipping'],
      [{ ...HOME, customer_id: UNKNOWN_ID }, 'customer_id'],
      [{ ...HOME, id: UNKNOWN_ID }, 'id'],
    ] as const) {
      const response = await ctx.request({ method: 'POST', url: MINE, token: me.token, payload })
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json().error.code).toBe('validation_error')
      expect(response.json().error.details).toContainEqual(expect.objectContaining({ field }))
    }
    const unknown = await ctx.request({ method: 'POST', url: MINE, token: me.token, payload: { ...HOME, role: 'admin' } })
    expect(unknown.json().error.details).toEqual([{ field: 'role', message: "Field 'role' is not allowed" }])
    expect(await ctx.countRows('customer_addresses')).toBe(before)
  })

  test("401 anonymous and for a deleted customer's token; 404 for an admin's /me, another customer's id, an unknown or deleted customer; nothing saved", async ({ ctx, admin }) => {
    const me = await newCustomer(ctx)
    const other = await newCustomer(ctx)
    const before = await ctx.countRows('customer_addresses')
    const anonymous = await ctx.request({ method: 'POST', url: MINE, payload: HOME })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error.code).toBe('unauthorized')
    const doomed = await newCustomer(ctx)
    await ctx.expectStatus(204, { method: 'DELETE', url: `${CUSTOMERS}/${doomed.customerId}`, token: admin })
    for (const [url, token] of [
      [MINE, admin],
      [`${CUSTOMERS}/${other.customerId}/addresses`, me.token],
      [`${CUSTOMERS}/${UNKNOWN_ID}/addresses`, admin],
      [`${CUSTOMERS}/${doomed.customerId}/addresses`, admin],
    ] as const) {
      const response = await ctx.request({ method: 'POST', url, token, payload: HOME })
      expect(response.statusCode, url).toBe(404)
      expect(response.json().error).toMatchObject({ code: 'not_found', message: 'Customer not found' })
    }
    const gone = await ctx.request({ method: 'POST', url: MINE, token: doomed.token, payload: HOME })
    expect(gone.statusCode).toBe(401)
    expect(gone.json().error.message).toBe('The account of this token no longer exists')
    expect(await ctx.countRows('customer_addresses')).toBe(before)
  })

  test('two concurrent POSTs with is_default_shipping: both saved, exactly one default shipping remains', async ({ ctx }) => {
    const me = await newCustomer(ctx)
    await addAddress(ctx, me.token, HOME)
    const responses = await Promise.all(
      [WORK, CABIN].map((address) =>
        ctx.request({ method: 'POST', url: MINE, token: me.token, payload: { ...address, is_default_shipping: true } }),
      ),
    )
    expect(responses.map((response) => response.statusCode)).toEqual([201, 201])
    const rows = await defaults(ctx, me.customerId)
    expect(rows).toHaveLength(3)
    const shipping = rows.filter(([, isShipping]) => isShipping)
    expect(shipping).toHaveLength(1)
    expect(responses.map((response) => response.json().id)).toContain(shipping[0]![0])
    expect(rows.filter(([, , isBilling]) => isBilling)).toHaveLength(1)
  })

  test('ten concurrent first addresses of a new customer: one becomes both defaults, the rest none', async ({ ctx }) => {
    const me = await newCustomer(ctx)
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, n) =>
        ctx.request({ method: 'POST', url: MINE, token: me.token, payload: { ...CABIN, line1: `Lakeside ${n}` } }),
      ),
    )
    expect(responses.every((response) => response.statusCode === 201)).toBe(true)
    const rows = await defaults(ctx, me.customerId)
    expect(rows).toHaveLength(10)
    expect(rows.filter(([, s, b]) => s && b)).toHaveLength(1)
    expect(rows.filter(([, s, b]) => s || b)).toHaveLength(1)
  })

  test('the database refuses a second default of a kind even past the service (the last guard)', async ({ ctx }) => {
    const me = await newCustomer(ctx)
    await addAddress(ctx, me.token, HOME)
    const insert = ctx.handle.sql`
      insert into customer_addresses (id, customer_id, line1, city, country, is_default_shipping)
      values (gen_random_uuid(), ${me.customerId}, 'x', 'y', 'GB', true)`
    await expect(insert).rejects.toMatchObject({ code: '23505', constraint_name: 'customer_addresses_default_shipping_key' })
  })
})

describe('GET addresses', () => {
  test('lists the customer\'s own addresses oldest first in the list envelope, with paging', async ({ ctx, admin }) => {
    const me = await newCustomer(ctx)
    const created = [await addAddress(ctx, me.token, HOME), await addAddress(ctx, me.token, WORK), await addAddress(ctx, me.token, CABIN)]
    await addAddress(ctx, (await newCustomer(ctx)).token, HOME) // someone else's, never listed
    expect(await listAddresses(ctx, me.token)).toEqual({
      addresses: created,
      meta: { page: 1, per_page: 20, total: 3, total_pages: 1 },
    })
    expect(await listAddresses(ctx, admin, `${CUSTOMERS}/${me.customerId}/addresses`)).toEqual(await listAddresses(ctx, me.token))
    const second = await listAddresses(ctx, me.token, `${MINE}?per_page=2&page=2`)
    expect(second).toEqual({ addresses: [created[2]], meta: { page: 2, per_page: 2, total: 3, total_pages: 2 } })
    expect((await listAddresses(ctx, me.token, `${MINE}?per_page=2&page=3`)).addresses).toEqual([])
    const empty = await newCustomer(ctx)
    expect(await listAddresses(ctx, empty.token)).toEqual({ addresses: [], meta: { page: 1, per_page: 20, total: 0, total_pages: 0 } })
    const bad = await ctx.request({ method: 'GET', url: `${MINE}?per_page=101`, token: me.token })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().error.details).toContainEqual(expect.objectContaining({ field: 'per_page' }))
  })

  test('reads one address by id, under /me, under its own id, and by an admin', async ({ ctx, admin }) => {
    const me = await newCustomer(ctx)
    const home = await addAddress(ctx, me.token, HOME)
    for (const [url, token] of [
      [`${MINE}/${home.id}`, me.token],
      [`${CUSTOMERS}/${me.customerId}/addresses/${home.id}`, me.token],
      [`${CUSTOMERS}/${me.customerId}/addresses/${home.id}`, admin],
    ] as const) {
      expect(await ctx.expectStatus(200, { method: 'GET', url, token })).toEqual(home)
    }
  })

  test("another customer's address or customer answers 404, never 403; unknown ids 404; malformed 400; 401 anonymous", async ({ ctx, admin }) => {
    const me = await newCustomer(ctx)
    const other = await newCustomer(ctx)
    const theirs = await addAddress(ctx, other.token, HOME)
    for (const [url, message] of [
      [`${MINE}/${theirs.id}`, 'Address not found'],
      [`${CUSTOMERS}/${me.customerId}/addresses/${theirs.id}`, 'Address not found'],
      [`${CUSTOMERS}/${other.customerId}/addresses/${theirs.id}`, 'Customer not found'],
      [`${CUSTOMERS}/${other.customerId}/addresses`, 'Customer not found'],
      [`${MINE}/${UNKNOWN_ID}`, 'Address not found'],
    ] as const) {
      const response = await ctx.request({ method: 'GET', url, token: me.token })
      expect(response.statusCode, url).toBe(404)
      expect(response.json().error).toMatchObject({ code: 'not_found', message })
    }
    const adminWrongCustomer = await ctx.request({ method: 'GET', url: `${CUSTOMERS}/${me.customerId}/addresses/${theirs.id}`, token: admin })
    expect(adminWrongCustomer.statusCode).toBe(404)
    expect(adminWrongCustomer.json().error.message).toBe('Address not found')
    const adminMe = await ctx.request({ method: 'GET', url: MINE, token: admin })
    expect(adminMe.statusCode).toBe(404)
    const malformed = await ctx.request({ method: 'GET', url: `${MINE}/not-a-uuid`, token: me.token })
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().error.details).toContainEqual(expect.objectContaining({ field: 'address_id' }))
    const anonymous = await ctx.request({ method: 'GET', url: `${CUSTOMERS}/${me.customerId}/addresses` })
    expect(anonymous.statusCode).toBe(401)
  })
})

describe('PATCH addresses', () => {
  test('changes only the fields sent; null clears an optional field; updated_at moves', async ({ ctx }) => {
    const me = await newCustomer(ctx)
    const home = await addAddress(ctx, me.token, { ...HOME, company: 'Analytical Engines Ltd', phone: '+44 20 0000' })
    const response = await ctx.request({
      method: 'PATCH',
      url: `${MINE}/${home.id}`,
      token: me.token,
      payload: { line2: 'Flat 2', company: null, country: 'IE', city: 'Dublin' },
    })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({
      ...home,
      line2: 'Flat 2',
      company: null,
      country: 'IE',
      city: 'Dublin',
      updated_at: expect.stringMatching(ISO),
    })
    expect(response.json().updated_at > home.updated_at).toBe(true)
    expect(await ctx.expectStatus(200, { method: 'GET', url: `${MINE}/${home.id}`, token: me.token })).toEqual(response.json())
  })

  test('setting a default moves it from the previous default; unsetting leaves the customer without one', async ({ ctx }) => {
    const me = await newCustomer(ctx)
    const home = await addAddress(ctx, me.token, HOME)
    const work = await addAddress(ctx, me.token, WORK)
    const moved = await ctx.expectStatus<CustomerAddress>(200, {
      method: 'PATCH',
      url: `${CUSTOMERS}/${me.customerId}/addresses/${work.id}`,
      token: me.token,
      payload: { is_default_billing: true },
    })
    expect(moved).toMatchObject({ id: work.id, is_default_billing: true, is_default_shipping: false })
    expect(await defaults(ctx, me.customerId)).toEqual([
      [home.id, true, false],
      [work.id, false, true],
    ])
    // Setting the flag an address already has changes nothing else.
    await ctx.expectStatus(200, { method: 'PATCH', url: `${MINE}/${home.id}`, token: me.token, payload: { is_default_shipping: true } })
    expect(await defaults(ctx, me.customerId)).toEqual([
      [home.id, true, false],
      [work.id, false, true],
    ])
    await ctx.expectStatus(200, { method: 'PATCH', url: `${MINE}/${home.id}`, token: me.token, payload: { is_default_shipping: false } })
    expect(await defaults(ctx, me.customerId)).toEqual([
      [home.id, false, false],
      [work.id, false, true],
    ])
  })

  test('concurrent PATCHes making different addresses the default shipping leave exactly one', async ({ ctx }) => {
    const me = await newCustomer(ctx)
    const addresses = []
    for (let n = 0; n < 6; n++) addresses.push(await addAddress(ctx, me.token, { ...CABIN, line1: `Pier ${n}` }))
    const responses = await Promise.all(
      addresses.map((address) =>
        ctx.request({ method: 'PATCH', url: `${MINE}/${address.id}`, token: me.token, payload: { is_default_shipping: true } }),
      ),
    )
    expect(responses.map((response) => response.statusCode)).toEqual(addresses.map(() => 200))
    expect((await defaults(ctx, me.customerId)).filter(([, s]) => s)).toHaveLength(1)
  })

  test('an admin updates any customer\'s address by id', async ({ ctx, admin }) => {
    const me = await newCustomer(ctx)
    const home = await addAddress(ctx, me.token, HOME)
    const body = await ctx.expectStatus<CustomerAddress>(200, {
      method: 'PATCH',
      url: `${CUSTOMERS}/${me.customerId}/addresses/${home.id}`,
      token: admin,
      payload: { phone: '+44 1234' },
    })
    expect(body).toMatchObject({ id: home.id, phone: '+44 1234' })
  })

  test('answers 400 for an empty body, bad countries, a null line1, unknown fields; nothing changes', async ({ ctx }) => {
    const me = await newCustomer(ctx)
    const home = await addAddress(ctx, me.token, HOME)
    for (const [payload, field] of [
      [{ country: 'XX' }, 'country'],
      [{ country: 'gb' }, 'country'],
      [{ line1: null }, 'line1'],
      [{ city: '' }, 'city'],
      [{ customer_id: UNKNOWN_ID }, 'customer_id'],
      [{ is_default_billing: null }, 'is_default_billing'],
    ] as const) {
      const response = await ctx.request({ method: 'PATCH', url: `${MINE}/${home.id}`, token: me.token, payload })
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json().error.details).toContainEqual(expect.objectContaining({ field }))
    }
    const empty = await ctx.request({ method: 'PATCH', url: `${MINE}/${home.id}`, token: me.token, payload: {} })
    expect(empty.statusCode).toBe(400)
    expect(empty.json().error.code).toBe('validation_error')
    expect(await ctx.expectStatus(200, { method: 'GET', url: `${MINE}/${home.id}`, token: me.token })).toEqual(home)
  })

  test("another customer's address answers 404 and stays as it was; 401 anonymous", async ({ ctx }) => {
    const me = await newCustomer(ctx)
    const other = await newCustomer(ctx)
    const theirs = await addAddress(ctx, other.token, HOME)
    const mine = await addAddress(ctx, me.token, WORK)
    for (const url of [
      `${MINE}/${theirs.id}`,
      `${CUSTOMERS}/${me.customerId}/addresses/${theirs.id}`,
      `${CUSTOMERS}/${other.customerId}/addresses/${theirs.id}`,
    ]) {
      const response = await ctx.request({ method: 'PATCH', url, token: me.token, payload: { line1: 'Hijacked', is_default_shipping: true } })
      expect(response.statusCode, url).toBe(404)
      expect(response.json().error.code).toBe('not_found')
    }
    expect(await ctx.expectStatus(200, { method: 'GET', url: `${MINE}/${theirs.id}`, token: other.token })).toEqual(theirs)
    // The refused request did not take the default from the caller's own address either.
    expect(await defaults(ctx, me.customerId)).toEqual([[mine.id, true, true]])
    const anonymous = await ctx.request({ method: 'PATCH', url: `${MINE}/${mine.id}`, payload: { line1: 'X' } })
    expect(anonymous.statusCode).toBe(401)
  })
})

describe('DELETE addresses', () => {
  test('answers 204 and the address is gone; deleting the default leaves no default; deleting again answers 404', async ({ ctx }) => {
    const me = await newCustomer(ctx)
    const home = await addAddress(ctx, me.token, HOME)
    const work = await addAddress(ctx, me.token, WORK)
    const response = await ctx.request({ method: 'DELETE', url: `${MINE}/${home.id}`, token: me.token })
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    expect(await defaults(ctx, me.customerId)).toEqual([[work.id, false, false]])
    const again = await ctx.request({ method: 'DELETE', url: `${MINE}/${home.id}`, token: me.token })
    expect(again.statusCode).toBe(404)
    expect(again.json().error).toMatchObject({ code: 'not_found', message: 'Address not found' })
    const gone = await ctx.request({ method: 'GET', url: `${MINE}/${home.id}`, token: me.token })
    expect(gone.statusCode).toBe(404)
  })

  test('the owner by id and an admin delete too', async ({ ctx, admin }) => {
    const me = await newCustomer(ctx)
    const home = await addAddress(ctx, me.token, HOME)
    const work = await addAddress(ctx, me.token, WORK)
    await ctx.expectStatus(204, { method: 'DELETE', url: `${CUSTOMERS}/${me.customerId}/addresses/${home.id}`, token: me.token })
    await ctx.expectStatus(204, { method: 'DELETE', url: `${CUSTOMERS}/${me.customerId}/addresses/${work.id}`, token: admin })
    expect((await listAddresses(ctx, me.token)).meta).toMatchObject({ total: 0 })
  })

  test("another customer's address answers 404 and stays; 401 anonymous; 400 malformed", async ({ ctx }) => {
    const me = await newCustomer(ctx)
    const other = await newCustomer(ctx)
    const theirs = await addAddress(ctx, other.token, HOME)
    for (const url of [`${MINE}/${theirs.id}`, `${CUSTOMERS}/${other.customerId}/addresses/${theirs.id}`]) {
      const response = await ctx.request({ method: 'DELETE', url, token: me.token })
      expect(response.statusCode, url).toBe(404)
      expect(response.json().error.code).toBe('not_found')
    }
    const anonymous = await ctx.request({ method: 'DELETE', url: `${MINE}/${theirs.id}` })
    expect(anonymous.statusCode).toBe(401)
    const malformed = await ctx.request({ method: 'DELETE', url: `${MINE}/nope`, token: me.token })
    expect(malformed.statusCode).toBe(400)
    expect(await ctx.expectStatus(200, { method: 'GET', url: `${MINE}/${theirs.id}`, token: other.token })).toEqual(theirs)
  })
})
