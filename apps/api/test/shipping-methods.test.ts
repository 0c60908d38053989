/** Shipping methods: admin-only CRUD, exact amounts in the method's currency, exact weight bounds. */
import { afterAll, beforeAll, describe, expect } from 'vitest'
import type { ShippingMethod, ShippingMethodList } from '@commerce/domain'
import { createTestContext, test, type TestContext } from './helpers.js'

const METHODS = '/api/v1/shipping/methods'
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000cafe'
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

function createMethod(ctx: TestContext, admin: string, payload: Record<string, unknown>): Promise<ShippingMethod> {
  return ctx.expectStatus(201, { method: 'POST', url: METHODS, payload, token: admin })
}

function getMethod(ctx: TestContext, admin: string, id: string): Promise<ShippingMethod> {
  return ctx.expectStatus(200, { method: 'GET', url: `${METHODS}/${id}`, token: admin })
}

const methodCount = (ctx: TestContext) => ctx.countRows('shipping_methods')

function expectRefused(ctx: TestContext, admin: string, method: 'POST' | 'PATCH', url: string, payload: Record<string, unknown>, field: string) {
  return ctx.expectInvalidField({ method, url, payload, token: admin }, field, 'shipping_methods')
}

describe('POST /api/v1/shipping/methods', () => {
  test('creates a method with only name and currency: 201 with the defaults', async ({ ctx, admin }) => {
    const body = await ctx.expectStatus<ShippingMethod>(201, {
      method: 'POST',
      url: METHODS,
      token: admin,
      payload: { name: 'Pickup', currency: 'USD' },
    })
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Pickup',
      currency: 'USD',
      countries: [],
      base_price: 0,
      price_per_kg: 0,
      free_over: null,
      min_weight: null,
      max_weight: null,
      estimated_days: null,
      is_active: true,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    })
    expect(await getMethod(ctx, admin, body.id)).toEqual(body)
  })

  test('creates a method with every field; 19.99, 0.1 and 4-decimal weights stay exact', async ({ ctx, admin }) => {
    const body = await createMethod(ctx, admin, {
      name: 'Express',
      currency: 'USD',
      countries: ['US', 'CA'],
      base_price: 19.99,
      price_per_kg: 0.1,
      free_over: 150.3,
      min_weight: 0.0001,
      max_weight: 30.1234,
      estimated_days: 2,
      is_active: false,
    })
    expect(body).toMatchObject({
      name: 'Express',
      currency: 'USD',
      countries: ['US', 'CA'],
      base_price: 19.99,
      price_per_kg: 0.1,
      free_over: 150.3,
      min_weight: 0.0001,
      max_weight: 30.1234,
      estimated_days: 2,
      is_active: false,
    })
    const [row] = await ctx.handle.sql`
      select base_price_minor::int, price_per_kg_minor::int, free_over_minor::int, min_weight_kg, max_weight_kg
      from shipping_methods where id = ${body.id}`
    expect(row).toEqual({
      base_price_minor: 1999,
      price_per_kg_minor: 10,
      free_over_minor: 15030,
      min_weight_kg: '0.0001',
      max_weight_kg: '30.1234',
    })
    expect(await getMethod(ctx, admin, body.id)).toEqual(body)
  })

  test('keeps KWD 1.005 and JPY 1500 exactly; equal weight bounds are fine', async ({ ctx, admin }) => {
    const kwd = await createMethod(ctx, admin, { name: 'Kuwait Post', currency: 'KWD', base_price: 1.005, price_per_kg: 0.25, countries: ['KW'] })
    expect(kwd).toMatchObject({ base_price: 1.005, price_per_kg: 0.25, currency: 'KWD' })
    const jpy = await createMethod(ctx, admin, { name: 'Yamato', currency: 'JPY', base_price: 1500, free_over: 10000, min_weight: 2, max_weight: 2 })
    expect(jpy).toMatchObject({ base_price: 1500, free_over: 10000, min_weight: 2, max_weight: 2, estimated_days: null })
  })

  test('answers 400 "Field \'name\' is required" with the full error body', async ({ ctx, admin }) => {
    const response = await ctx.request({ method: 'POST', url: METHODS, token: admin, payload: { currency: 'USD' } })
    expect(response.statusCode).toBe(400)
    expect(response.json().error).toEqual({
      code: 'validation_error',
      message: "Field 'name' is required",
      details: [{ field: 'name', message: "Field 'name' is required" }],
      request_id: response.headers['x-request-id'],
    })
  })

  test('refuses amounts with more decimals than the currency allows: JPY, USD, KWD', async ({ ctx, admin }) => {
    const jpy = await expectRefused(ctx, admin, 'POST', METHODS, { name: 'Bad', currency: 'JPY', base_price: 100.5 }, 'base_price')
    expect(jpy.message).toBe("Field 'base_price' is invalid: JPY amounts have at most 0 decimal places")
    await expectRefused(ctx, admin, 'POST', METHODS, { name: 'Bad', currency: 'USD', price_per_kg: 1.001 }, 'price_per_kg')
    await expectRefused(ctx, admin, 'POST', METHODS, { name: 'Bad', currency: 'KWD', free_over: 10.0001 }, 'free_over')
    await expectRefused(ctx, admin, 'POST', METHODS, { name: 'Bad', currency: 'USD', base_price: -1 }, 'base_price')
  })

  test('refuses an unknown or malformed currency, bad or repeated countries, and unknown fields', async ({ ctx, admin }) => {
    const unknown = await expectRefused(ctx, admin, 'POST', METHODS, { name: 'Bad', currency: 'XYZ' }, 'currency')
    expect(unknown.message).toBe("Field 'currency' is not a known ISO 4217 currency: XYZ")
    await expectRefused(ctx, admin, 'POST', METHODS, { name: 'Bad', currency: 'usd' }, 'currency')
    await expectRefused(ctx, admin, 'POST', METHODS, { name: 'Bad' }, 'currency')
    await expectRefused(ctx, admin, 'POST', METHODS, { name: 'Bad', currency: 'USD', countries: ['ZZ'] }, 'countries.0')
    await expectRefused(ctx, admin, 'POST', METHODS, { name: 'Bad', currency: 'USD', countries: ['US', 'us'] }, 'countries.1')
    await expectRefused(ctx, admin, 'POST', METHODS, { name: 'Bad', currency: 'USD', countries: ['US', 'US'] }, 'countries')
    await expectRefused(ctx, admin, 'POST', METHODS, { name: 'Bad', currency: 'USD', countries: 'US' }, 'countries')
    await expectRefused(ctx, admin, 'POST', METHODS, { name: 'Bad', currency: 'USD', carrier: 'UPS' }, 'carrier')
    await expectRefused(ctx, admin, 'POST', METHODS, { name: '', currency: 'USD' }, 'name')
  })

  test('refuses weights with more than 4 decimals or negative, min above max, and bad estimated_days', async ({ ctx, admin }) => {
    const precise = await expectRefused(ctx, admin, 'POST', METHODS, { name: 'Bad', currency: 'USD', min_weight: 0.00001 }, 'min_weight')
    expect(precise.message).toBe("Field 'min_weight' is invalid: Weight has at most 4 decimal places")
    await expectRefused(ctx, admin, 'POST', METHODS, { name: 'Bad', currency: 'USD', max_weight: 1.23456 }, 'max_weight')
    await expectRefused(ctx, admin, 'POST', METHODS, { name: 'Bad', currency: 'USD', min_weight: -1 }, 'min_weight')
    const inverted = await expectRefused(ctx, admin, 'POST', METHODS, { name: 'Bad', currency: 'USD', min_weight: 5.0001, max_weight: 5 }, 'max_weight')
    expect(inverted.message).toBe("Field 'max_weight' must not be below 'min_weight'")
    await expectRefused(ctx, admin, 'POST', METHODS, { name: 'Bad', currency: 'USD', estimated_days: -1 }, 'estimated_days')
    await expectRefused(ctx, admin, 'POST', METHODS, { name: 'Bad', currency: 'USD', estimated_days: 1.5 }, 'estimated_days')
  })

  test('answers 401 anonymous and 403 to a customer; nothing is created', async ({ ctx, customer }) => {
    const before = await methodCount(ctx)
    const payload = { name: 'Sneaky', currency: 'USD' }
    const anonymous = await ctx.request({ method: 'POST', url: METHODS, payload })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error.code).toBe('unauthorized')
    const byCustomer = await ctx.request({ method: 'POST', url: METHODS, payload, token: customer })
    expect(byCustomer.statusCode).toBe(403)
    expect(byCustomer.json().error.code).toBe('forbidden')
    expect(await methodCount(ctx)).toBe(before)
  })
})

describe('GET /api/v1/shipping/methods/:id', () => {
  test('answers 401 anonymous, 403 customer, 404 unknown, 400 malformed', async ({ ctx, admin, customer }) => {
    const method = await createMethod(ctx, admin, { name: 'Readable', currency: 'EUR' })
    const url = `${METHODS}/${method.id}`
    expect((await ctx.request({ method: 'GET', url })).statusCode).toBe(401)
    expect((await ctx.request({ method: 'GET', url, token: customer })).statusCode).toBe(403)
    const missing = await ctx.expectStatus<{ error: unknown }>(404, { method: 'GET', url: `${METHODS}/${UNKNOWN_ID}`, token: admin })
    expect(missing.error).toMatchObject({ code: 'not_found', message: 'Shipping method not found' })
    const malformed = await ctx.expectStatus<{ error: { details: unknown[] } }>(400, { method: 'GET', url: `${METHODS}/x`, token: admin })
    expect(malformed.error.details).toContainEqual(expect.objectContaining({ field: 'id' }))
  })
})

describe('GET /api/v1/shipping/methods', () => {
  let own: TestContext
  let ownAdmin: string

  beforeAll(async () => {
    own = await createTestContext()
    ownAdmin = (await own.signIn('admin')).token
    for (const [name, isActive] of [
      ['Standard', true],
      ['economy', true],
      ['Overnight', false],
      ['Courier', true],
    ] as const) {
      await own.expectStatus(201, { method: 'POST', url: METHODS, token: ownAdmin, payload: { name, currency: 'USD', is_active: isActive } })
    }
  })
  afterAll(() => own.close())

  const list = (query = '') => own.expectStatus<ShippingMethodList>(200, { method: 'GET', url: `${METHODS}${query}`, token: ownAdmin })
  const names = (body: ShippingMethodList) => body.shipping_methods.map((method) => method.name)

  test('lists by name, case-insensitively, in the list envelope', async () => {
    const body = await list()
    expect(names(body)).toEqual(['Courier', 'economy', 'Overnight', 'Standard'])
    expect(body.meta).toEqual({ page: 1, per_page: 20, total: 4, total_pages: 1 })
    expect(body.shipping_methods[0]).toMatchObject({ name: 'Courier', currency: 'USD', countries: [], is_active: true })
  })

  test('filters by is_active and pages', async () => {
    expect(names(await list('?is_active=false'))).toEqual(['Overnight'])
    const active = await list('?is_active=true&per_page=2&page=2')
    expect(names(active)).toEqual(['Standard'])
    expect(active.meta).toEqual({ page: 2, per_page: 2, total: 3, total_pages: 2 })
    const bad = await own.expectStatus<{ error: { details: unknown[] } }>(400, { method: 'GET', url: `${METHODS}?per_page=500`, token: ownAdmin })
    expect(bad.error.details).toContainEqual(expect.objectContaining({ field: 'per_page' }))
  })

  test('answers 401 anonymous and 403 to a customer', async () => {
    expect((await own.request({ method: 'GET', url: METHODS })).statusCode).toBe(401)
    const { token } = await own.signIn('customer')
    expect((await own.request({ method: 'GET', url: METHODS, token })).statusCode).toBe(403)
  })
})

describe('PATCH /api/v1/shipping/methods/:id', () => {
  const patch = (ctx: TestContext, admin: string, id: string, payload: Record<string, unknown>) => ctx.request({ method: 'PATCH', url: `${METHODS}/${id}`, payload, token: admin })

  test('changes only the fields sent and answers 200 with the method', async ({ ctx, admin }) => {
    const method = await createMethod(ctx, admin, { name: 'Ground', currency: 'USD', base_price: 5, countries: ['US'] })
    const response = await patch(ctx, admin, method.id, { price_per_kg: 0.2, countries: ['US', 'MX'], max_weight: 20 })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({
      ...method,
      price_per_kg: 0.2,
      countries: ['US', 'MX'],
      max_weight: 20,
      updated_at: expect.stringMatching(ISO),
    })
    const cleared = await patch(ctx, admin, method.id, { max_weight: null, countries: [], free_over: 99.99, estimated_days: 0 })
    expect(cleared.statusCode).toBe(200)
    expect(cleared.json()).toMatchObject({ max_weight: null, countries: [], free_over: 99.99, estimated_days: 0, base_price: 5 })
    expect(await getMethod(ctx, admin, method.id)).toEqual(cleared.json())
  })

  test('re-validates the merged method: weight bounds and a new currency that cannot hold the amounts', async ({ ctx, admin }) => {
    const method = await createMethod(ctx, admin, { name: 'Merged', currency: 'USD', base_price: 4.99, min_weight: 1, max_weight: 10 })
    const url = `${METHODS}/${method.id}`
    await expectRefused(ctx, admin, 'PATCH', url, { min_weight: 10.5 }, 'min_weight')
    await expectRefused(ctx, admin, 'PATCH', url, { max_weight: 0.5 }, 'max_weight')
    // 4.99 USD does not fit JPY: the currency is at fault, unless a new price comes with it.
    const currency = await expectRefused(ctx, admin, 'PATCH', url, { currency: 'JPY' }, 'currency')
    expect(currency.message).toBe("Field 'currency' is invalid: JPY amounts have at most 0 decimal places")
    await expectRefused(ctx, admin, 'PATCH', url, { currency: 'JPY', base_price: 500.5 }, 'base_price')
    await expectRefused(ctx, admin, 'PATCH', url, { currency: 'ABC' }, 'currency')
    expect(await getMethod(ctx, admin, method.id)).toEqual(method)
    const moved = await patch(ctx, admin, method.id, { currency: 'JPY', base_price: 500 })
    expect(moved.statusCode).toBe(200)
    expect(moved.json()).toMatchObject({ currency: 'JPY', base_price: 500 })
    const kwd = await patch(ctx, admin, method.id, { currency: 'KWD' })
    expect(kwd.statusCode).toBe(200)
    expect(kwd.json()).toMatchObject({ currency: 'KWD', base_price: 500 })
    const [row] = await ctx.handle.sql`select base_price_minor::int from shipping_methods where id = ${method.id}`
    expect(row!.base_price_minor).toBe(500000)
  })

  test('answers 400 for an empty body or unknown fields, 404 unknown id, 401 anonymous, 403 customer', async ({ ctx, admin, customer }) => {
    const method = await createMethod(ctx, admin, { name: 'Guarded', currency: 'USD' })
    const url = `${METHODS}/${method.id}`
    expect((await patch(ctx, admin, method.id, {})).statusCode).toBe(400)
    await expectRefused(ctx, admin, 'PATCH', url, { id: UNKNOWN_ID }, 'id')
    const missing = await patch(ctx, admin, UNKNOWN_ID, { name: 'Ghost' })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().error).toMatchObject({ code: 'not_found', message: 'Shipping method not found' })
    expect((await ctx.request({ method: 'PATCH', url, payload: { name: 'Hacked' } })).statusCode).toBe(401)
    expect((await ctx.request({ method: 'PATCH', url, payload: { name: 'Hacked' }, token: customer })).statusCode).toBe(403)
    expect(await getMethod(ctx, admin, method.id)).toEqual(method)
  })
})

describe('DELETE /api/v1/shipping/methods/:id', () => {
  test('answers 204 with no body; the method is gone; a cart that chose it keeps going without it', async ({ ctx, admin, customer }) => {
    const method = await createMethod(ctx, admin, { name: 'Doomed', currency: 'USD' })
    const [cart] = await ctx.handle.sql<{ id: string }[]>`
      insert into carts (id, currency, shipping_method_id) values (gen_random_uuid(), 'USD', ${method.id}) returning id`
    const url = `${METHODS}/${method.id}`
    expect((await ctx.request({ method: 'DELETE', url })).statusCode).toBe(401)
    expect((await ctx.request({ method: 'DELETE', url, token: customer })).statusCode).toBe(403)
    const response = await ctx.request({ method: 'DELETE', url, token: admin })
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    expect((await ctx.request({ method: 'GET', url, token: admin })).statusCode).toBe(404)
    expect(await ctx.handle.sql`select shipping_method_id from carts where id = ${cart!.id}`).toEqual([{ shipping_method_id: null }])
    const again = await ctx.request({ method: 'DELETE', url, token: admin })
    expect(again.statusCode).toBe(404)
    expect(again.json().error).toMatchObject({ code: 'not_found', message: 'Shipping method not found' })
  })
})
