/** Coupons: admin-only CRUD, the rules tying value and currency to the type, exact amounts and percentages. */
import { afterAll, beforeAll, describe, expect } from 'vitest'
import type { Coupon, CouponList } from '@commerce/domain'
import { createTestContext, test, type TestContext } from './helpers.js'

const COUPONS = '/api/v1/coupons'
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000cafe'
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

let codes = 0

const uniqueCode = (prefix = 'CODE') => `${prefix}-${++codes}`

function createCoupon(ctx: TestContext, admin: string, payload: Record<string, unknown>): Promise<Coupon> {
  return ctx.expectStatus(201, { method: 'POST', url: COUPONS, payload, token: admin })
}

function getCoupon(ctx: TestContext, admin: string, id: string): Promise<Coupon> {
  return ctx.expectStatus(200, { method: 'GET', url: `${COUPONS}/${id}`, token: admin })
}

const couponCount = (ctx: TestContext) => ctx.countRows('promotions')

/** Sends a body that must be refused with 400 validation_error naming `field`; nothing is written. */
function expectRefused(ctx: TestContext, admin: string, method: 'POST' | 'PATCH', url: string, payload: Record<string, unknown>, field: string) {
  return ctx.expectInvalidField({ method, url, payload, token: admin }, field, 'promotions')
}

describe('POST /api/v1/coupons', () => {
  test('creates a percentage coupon: 201 with every field, the code upper-cased, 12.5 % back as 12.5', async ({ ctx, admin }) => {
    const body = await ctx.expectStatus<Coupon>(201, {
      method: 'POST',
      url: COUPONS,
      token: admin,
      payload: { code: 'summer-sale_25', type: 'percentage', value: 12.5 },
    })
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      code: 'SUMMER-SALE_25',
      type: 'percentage',
      value: 12.5,
      currency: null,
      min_subtotal: null,
      starts_at: null,
      ends_at: null,
      usage_limit: null,
      times_used: 0,
      is_active: true,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    })
    const rows = await ctx.handle.sql`select code, percent_off_ppm, amount_off_minor from promotions where id = ${body.id}`
    expect(rows).toEqual([{ code: 'SUMMER-SALE_25', percent_off_ppm: 125000, amount_off_minor: null }])
    expect(await getCoupon(ctx, admin, body.id)).toEqual(body)
  })

  test('keeps percentages exactly to 4 decimals: 8.875, 0.0001, 33.3333 and 100', async ({ ctx, admin }) => {
    for (const [value, ppm] of [
      [8.875, 88750],
      [0.0001, 1],
      [33.3333, 333333],
      [100, 1000000],
    ] as const) {
      const coupon = await createCoupon(ctx, admin, { code: uniqueCode('PCT'), type: 'percentage', value })
      expect(coupon.value).toBe(value)
      const [row] = await ctx.handle.sql`select percent_off_ppm from promotions where id = ${coupon.id}`
      expect(row!.percent_off_ppm).toBe(ppm)
    }
  })

  test('creates a fixed_amount coupon with every optional field; 19.99 USD and KWD 1.005 stay exact', async ({ ctx, admin }) => {
    const body = await createCoupon(ctx, admin, {
      code: 'ten-off',
      type: 'fixed_amount',
      value: 19.99,
      currency: 'USD',
      min_subtotal: 100.1,
      starts_at: '2030-01-01T00:00:00Z',
      ends_at: '2030-02-01T12:30:00.000+02:00',
      usage_limit: 50,
      is_active: false,
    })
    expect(body).toMatchObject({
      code: 'TEN-OFF',
      type: 'fixed_amount',
      value: 19.99,
      currency: 'USD',
      min_subtotal: 100.1,
      starts_at: '2030-01-01T00:00:00.000Z',
      ends_at: '2030-02-01T10:30:00.000Z',
      usage_limit: 50,
      times_used: 0,
      is_active: false,
    })
    const [row] = await ctx.handle.sql`select amount_off_minor::int, min_subtotal_minor::int from promotions where id = ${body.id}`
    expect(row).toEqual({ amount_off_minor: 1999, min_subtotal_minor: 10010 })

    const kwd = await createCoupon(ctx, admin, { code: uniqueCode('KWD'), type: 'fixed_amount', value: 1.005, currency: 'KWD', min_subtotal: 0.3 })
    expect(kwd).toMatchObject({ value: 1.005, currency: 'KWD', min_subtotal: 0.3 })
    const [kwdRow] = await ctx.handle.sql`select amount_off_minor::int, min_subtotal_minor::int from promotions where id = ${kwd.id}`
    expect(kwdRow).toEqual({ amount_off_minor: 1005, min_subtotal_minor: 300 })

    const jpy = await createCoupon(ctx, admin, { code: uniqueCode('JPY'), type: 'fixed_amount', value: 500, currency: 'JPY' })
    expect(jpy).toMatchObject({ value: 500, currency: 'JPY' })
    // 0.1 + 0.2 style: a value whose float sum is inexact still lands on the exact cent.
    const cents = await createCoupon(ctx, admin, { code: uniqueCode('CENTS'), type: 'fixed_amount', value: 0.3, currency: 'EUR' })
    expect(cents.value).toBe(0.3)
  })

  test('creates a free_shipping coupon with no value; a currency is optional and a min_subtotal needs one', async ({ ctx, admin }) => {
    const free = await createCoupon(ctx, admin, { code: uniqueCode('SHIP'), type: 'free_shipping' })
    expect(free).toMatchObject({ type: 'free_shipping', value: null, currency: null, min_subtotal: null })
    const withMinimum = await createCoupon(ctx, admin, {
      code: uniqueCode('SHIP'),
      type: 'free_shipping',
      value: null,
      currency: 'GBP',
      min_subtotal: 50,
    })
    expect(withMinimum).toMatchObject({ type: 'free_shipping', value: null, currency: 'GBP', min_subtotal: 50 })
  })

  test('a code taken in any letter case answers 409 conflict and creates nothing', async ({ ctx, admin }) => {
    await createCoupon(ctx, admin, { code: 'WELCOME', type: 'free_shipping' })
    const before = await couponCount(ctx)
    const response = await ctx.request({ method: 'POST', url: COUPONS, token: admin, payload: { code: 'welcome', type: 'free_shipping' } })
    expect(response.statusCode).toBe(409)
    expect(response.json().error).toEqual({
      code: 'conflict',
      message: "A coupon with code 'WELCOME' already exists",
      request_id: response.headers['x-request-id'],
    })
    expect(await couponCount(ctx)).toBe(before)
  })

  test('answers 400 "Field \'code\' is required" with the full error body', async ({ ctx, admin }) => {
    const response = await ctx.request({ method: 'POST', url: COUPONS, token: admin, payload: { type: 'free_shipping' } })
    expect(response.statusCode).toBe(400)
    expect(response.json().error).toEqual({
      code: 'validation_error',
      message: "Field 'code' is required",
      details: [{ field: 'code', message: "Field 'code' is required" }],
      request_id: response.headers['x-request-id'],
    })
  })

  test('refuses amounts with more decimals than the currency allows: JPY 0, USD 2, KWD 3', async ({ ctx, admin }) => {
    for (const [value, currency] of [
      [100.5, 'JPY'],
      [19.999, 'USD'],
      [1.0005, 'KWD'],
    ] as const) {
      const error = await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'fixed_amount', value, currency }, 'value')
      expect(error.message).toContain(`${currency} amounts have at most`)
    }
    await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'free_shipping', currency: 'USD', min_subtotal: 10.001 }, 'min_subtotal')
  })

  test('refuses a percentage over 100, at 0, negative, with more than 4 decimals, or missing', async ({ ctx, admin }) => {
    const over = await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'percentage', value: 100.5 }, 'value')
    expect(over.message).toBe("Field 'value' is invalid: Percentage must be between 0 and 100")
    await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'percentage', value: 0 }, 'value')
    await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'percentage', value: -5 }, 'value')
    const precise = await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'percentage', value: 12.34567 }, 'value')
    expect(precise.message).toBe("Field 'value' is invalid: Percentage has at most 4 decimal places")
    const missing = await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'percentage' }, 'value')
    expect(missing.message).toBe("Field 'value' is required for percentage coupons")
  })

  test('refuses fixed_amount without currency or value, and a value on free_shipping', async ({ ctx, admin }) => {
    const noCurrency = await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'fixed_amount', value: 5 }, 'currency')
    expect(noCurrency.message).toBe("Field 'currency' is required for fixed_amount coupons")
    await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'fixed_amount', value: 5, currency: null }, 'currency')
    await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'fixed_amount', currency: 'USD' }, 'value')
    await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'fixed_amount', value: 0, currency: 'USD' }, 'value')
    const shipping = await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'free_shipping', value: 5 }, 'value')
    expect(shipping.message).toBe("Field 'value' must be null for free_shipping coupons")
    const minimum = await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'percentage', value: 5, min_subtotal: 20 }, 'currency')
    expect(minimum.message).toBe("Field 'currency' is required when 'min_subtotal' is set")
  })

  test('refuses ends_at before or equal to starts_at, and dates that are not date-times', async ({ ctx, admin }) => {
    const before = await expectRefused(
      ctx, admin, 'POST',
      COUPONS,
      { code: uniqueCode(), type: 'free_shipping', starts_at: '2030-06-01T00:00:00Z', ends_at: '2030-05-31T23:59:59Z' },
      'ends_at',
    )
    expect(before.message).toBe("Field 'ends_at' must be after 'starts_at'")
    await expectRefused(
      ctx, admin, 'POST',
      COUPONS,
      { code: uniqueCode(), type: 'free_shipping', starts_at: '2030-06-01T00:00:00Z', ends_at: '2030-06-01T02:00:00+02:00' },
      'ends_at',
    )
    await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'free_shipping', starts_at: 'tomorrow' }, 'starts_at')
    await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'free_shipping', ends_at: '2030-13-01T00:00:00Z' }, 'ends_at')
    await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'free_shipping', ends_at: '2030-01-01T00:00:00' }, 'ends_at')
    // Valid in form, yet not storable: a leap second, year 0, and a time past 9999 in UTC.
    for (const starts of ['2030-06-30T23:59:60Z', '0000-01-01T00:00:00Z', '9999-12-31T23:00:00-05:00']) {
      await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'free_shipping', starts_at: starts }, 'starts_at')
    }
  })

  test('refuses an unknown currency, a malformed one, bad codes, bad types, usage_limit 0, and read-only or unknown fields', async ({ ctx, admin }) => {
    const unknown = await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'fixed_amount', value: 5, currency: 'XYZ' }, 'currency')
    expect(unknown.message).toBe("Field 'currency' is not a known ISO 4217 currency: XYZ")
    await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'fixed_amount', value: 5, currency: 'usd' }, 'currency')
    await expectRefused(ctx, admin, 'POST', COUPONS, { code: 'has space', type: 'free_shipping' }, 'code')
    await expectRefused(ctx, admin, 'POST', COUPONS, { code: 'ÜBER', type: 'free_shipping' }, 'code')
    await expectRefused(ctx, admin, 'POST', COUPONS, { code: '', type: 'free_shipping' }, 'code')
    await expectRefused(ctx, admin, 'POST', COUPONS, { code: 'X'.repeat(65), type: 'free_shipping' }, 'code')
    await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'buy_one_get_one' }, 'type')
    await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'percentage', value: '10' }, 'value')
    await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'free_shipping', usage_limit: 0 }, 'usage_limit')
    await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'free_shipping', usage_limit: 1.5 }, 'usage_limit')
    const readOnly = await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'free_shipping', times_used: 3 }, 'times_used')
    expect(readOnly.details).toEqual([{ field: 'times_used', message: "Field 'times_used' is not allowed" }])
    await expectRefused(ctx, admin, 'POST', COUPONS, { code: uniqueCode(), type: 'free_shipping', id: UNKNOWN_ID }, 'id')
    // The longest allowed code is fine.
    expect((await createCoupon(ctx, admin, { code: 'y'.repeat(64), type: 'free_shipping' })).code).toBe('Y'.repeat(64))
  })

  test('answers 401 without or with a garbage token and 403 for a customer; nothing is created', async ({ ctx, customer }) => {
    const before = await couponCount(ctx)
    const payload = { code: uniqueCode(), type: 'free_shipping' }
    const anonymous = await ctx.request({ method: 'POST', url: COUPONS, payload })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error.code).toBe('unauthorized')
    const garbage = await ctx.request({ method: 'POST', url: COUPONS, payload, token: 'not.a.jwt' })
    expect(garbage.statusCode).toBe(401)
    const byCustomer = await ctx.request({ method: 'POST', url: COUPONS, payload, token: customer })
    expect(byCustomer.statusCode).toBe(403)
    expect(byCustomer.json().error.code).toBe('forbidden')
    expect(await couponCount(ctx)).toBe(before)
  })
})

describe('GET /api/v1/coupons/:id', () => {
  test('answers the coupon to an admin; 401 anonymous, 403 customer, 404 unknown, 400 malformed', async ({ ctx, admin, customer }) => {
    const coupon = await createCoupon(ctx, admin, { code: uniqueCode('READ'), type: 'percentage', value: 19.99 })
    expect(await getCoupon(ctx, admin, coupon.id)).toEqual({ ...coupon, value: 19.99 })
    const url = `${COUPONS}/${coupon.id}`
    expect((await ctx.expectStatus<{ error: { code: string } }>(401, { method: 'GET', url })).error.code).toBe('unauthorized')
    expect((await ctx.expectStatus<{ error: { code: string } }>(403, { method: 'GET', url, token: customer })).error.code).toBe('forbidden')
    const missing = await ctx.expectStatus<{ error: unknown }>(404, { method: 'GET', url: `${COUPONS}/${UNKNOWN_ID}`, token: admin })
    expect(missing.error).toMatchObject({ code: 'not_found', message: 'Coupon not found' })
    const malformed = await ctx.expectStatus<{ error: { details: unknown[] } }>(400, { method: 'GET', url: `${COUPONS}/nope`, token: admin })
    expect(malformed.error.details).toContainEqual(expect.objectContaining({ field: 'id' }))
  })
})

describe('GET /api/v1/coupons', () => {
  let own: TestContext
  let ownAdmin: string
  const created: Coupon[] = []

  beforeAll(async () => {
    own = await createTestContext()
    ownAdmin = (await own.signIn('admin')).token
    for (const [code, isActive] of [
      ['FIRST', true],
      ['second', false],
      ['Third', true],
    ] as const) {
      created.push(
        await own.expectStatus<Coupon>(201, {
          method: 'POST',
          url: COUPONS,
          token: ownAdmin,
          payload: { code, type: 'percentage', value: 10, is_active: isActive },
        }),
      )
    }
  })
  afterAll(() => own.close())

  const list = (query = '') => own.expectStatus<CouponList>(200, { method: 'GET', url: `${COUPONS}${query}`, token: ownAdmin })

  test('lists every coupon newest first in the list envelope', async () => {
    const body = await list()
    expect(body).toEqual({ coupons: [...created].reverse(), meta: { page: 1, per_page: 20, total: 3, total_pages: 1 } })
  })

  test('filters by code case-insensitively and exactly, and by is_active', async () => {
    expect((await list('?code=third')).coupons).toEqual([created[2]])
    expect((await list('?code=THIR')).coupons).toEqual([])
    expect((await list('?is_active=false')).coupons.map((coupon) => coupon.code)).toEqual(['SECOND'])
    const active = await list('?is_active=true')
    expect(active.coupons.map((coupon) => coupon.code)).toEqual(['THIRD', 'FIRST'])
    expect(active.meta).toMatchObject({ total: 2 })
    expect((await list('?is_active=true&code=first')).coupons.map((coupon) => coupon.code)).toEqual(['FIRST'])
  })

  test('pages with per_page, and refuses bad page bounds and a bad is_active', async () => {
    const second = await list('?per_page=2&page=2')
    expect(second).toEqual({ coupons: [created[0]], meta: { page: 2, per_page: 2, total: 3, total_pages: 2 } })
    for (const [query, field] of [
      ['?per_page=101', 'per_page'],
      ['?page=0', 'page'],
      ['?is_active=maybe', 'is_active'],
    ] as const) {
      const body = await own.expectStatus<{ error: { details: unknown[] } }>(400, { method: 'GET', url: `${COUPONS}${query}`, token: ownAdmin })
      expect(body.error.details).toContainEqual(expect.objectContaining({ field }))
    }
  })

  test('answers 401 anonymous and 403 to a customer', async () => {
    expect((await own.request({ method: 'GET', url: COUPONS })).statusCode).toBe(401)
    const { token } = await own.signIn('customer')
    expect((await own.request({ method: 'GET', url: COUPONS, token })).statusCode).toBe(403)
  })
})

describe('PATCH /api/v1/coupons/:id', () => {
  const patch = (ctx: TestContext, admin: string, id: string, payload: Record<string, unknown>) => ctx.request({ method: 'PATCH', url: `${COUPONS}/${id}`, payload, token: admin })

  test('changes only the fields sent and answers 200 with the coupon', async ({ ctx, admin }) => {
    const coupon = await createCoupon(ctx, admin, { code: uniqueCode('EDIT'), type: 'percentage', value: 15 })
    const response = await patch(ctx, admin, coupon.id, { code: 'edited-code', usage_limit: 10, ends_at: '2031-01-01T00:00:00Z' })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({
      ...coupon,
      code: 'EDITED-CODE',
      usage_limit: 10,
      ends_at: '2031-01-01T00:00:00.000Z',
      updated_at: expect.stringMatching(ISO),
    })
    const cleared = await patch(ctx, admin, coupon.id, { usage_limit: null, ends_at: null, is_active: false, value: 7.25 })
    expect(cleared.statusCode).toBe(200)
    expect(cleared.json()).toMatchObject({ usage_limit: null, ends_at: null, is_active: false, value: 7.25 })
    expect(await getCoupon(ctx, admin, coupon.id)).toEqual(cleared.json())
  })

  test('changes the type together with a consistent value; without one it answers 400 and changes nothing', async ({ ctx, admin }) => {
    const coupon = await createCoupon(ctx, admin, { code: uniqueCode('TYPE'), type: 'percentage', value: 20 })
    const missing = await patch(ctx, admin, coupon.id, { type: 'fixed_amount', currency: 'USD' })
    expect(missing.statusCode).toBe(400)
    expect(missing.json().error.details).toEqual([
      { field: 'value', message: "Field 'value' is required when changing the type to fixed_amount" },
    ])
    const noCurrency = await patch(ctx, admin, coupon.id, { type: 'fixed_amount', value: 5 })
    expect(noCurrency.statusCode).toBe(400)
    expect(noCurrency.json().error.details).toEqual([{ field: 'currency', message: "Field 'currency' is required for fixed_amount coupons" }])
    expect(await getCoupon(ctx, admin, coupon.id)).toEqual(coupon)

    const fixed = await patch(ctx, admin, coupon.id, { type: 'fixed_amount', value: 4.99, currency: 'USD' })
    expect(fixed.statusCode).toBe(200)
    expect(fixed.json()).toMatchObject({ type: 'fixed_amount', value: 4.99, currency: 'USD' })
    const [row] = await ctx.handle.sql`select percent_off_ppm, amount_off_minor::int from promotions where id = ${coupon.id}`
    expect(row).toEqual({ percent_off_ppm: null, amount_off_minor: 499 })

    const free = await patch(ctx, admin, coupon.id, { type: 'free_shipping' })
    expect(free.statusCode).toBe(200)
    expect(free.json()).toMatchObject({ type: 'free_shipping', value: null, currency: 'USD' })

    const back = await patch(ctx, admin, coupon.id, { type: 'percentage', value: 12.5, currency: null })
    expect(back.statusCode).toBe(200)
    expect(back.json()).toMatchObject({ type: 'percentage', value: 12.5, currency: null })
  })

  test('re-validates the merged coupon: currency of a fixed amount, ends_at against the kept starts_at, percent > 100', async ({ ctx, admin }) => {
    const coupon = await createCoupon(ctx, admin, {
      code: uniqueCode('MERGE'),
      type: 'fixed_amount',
      value: 1.005,
      currency: 'KWD',
      starts_at: '2030-01-01T00:00:00Z',
    })
    // 1.005 does not fit USD's 2 decimals: the new currency is at fault.
    await expectRefused(ctx, admin, 'PATCH', `${COUPONS}/${coupon.id}`, { currency: 'USD' }, 'currency')
    await expectRefused(ctx, admin, 'PATCH', `${COUPONS}/${coupon.id}`, { currency: null }, 'currency')
    await expectRefused(ctx, admin, 'PATCH', `${COUPONS}/${coupon.id}`, { value: 1.0001 }, 'value')
    await expectRefused(ctx, admin, 'PATCH', `${COUPONS}/${coupon.id}`, { ends_at: '2029-12-31T00:00:00Z' }, 'ends_at')
    await expectRefused(ctx, admin, 'PATCH', `${COUPONS}/${coupon.id}`, { value: null }, 'value')
    await expectRefused(ctx, admin, 'PATCH', `${COUPONS}/${coupon.id}`, { times_used: 0 }, 'times_used')
    expect(await getCoupon(ctx, admin, coupon.id)).toEqual(coupon)
    // A currency with room for the amount keeps it as shown.
    const moved = await patch(ctx, admin, coupon.id, { currency: 'BHD' })
    expect(moved.statusCode).toBe(200)
    expect(moved.json()).toMatchObject({ value: 1.005, currency: 'BHD' })

    const percent = await createCoupon(ctx, admin, { code: uniqueCode('MERGE'), type: 'percentage', value: 50 })
    await expectRefused(ctx, admin, 'PATCH', `${COUPONS}/${percent.id}`, { value: 101 }, 'value')
  })

  test('usage_limit cannot go below times_used', async ({ ctx, admin }) => {
    const coupon = await createCoupon(ctx, admin, { code: uniqueCode('USED'), type: 'free_shipping', usage_limit: 10 })
    await ctx.handle.sql`update promotions set times_used = 4 where id = ${coupon.id}`
    const error = await expectRefused(ctx, admin, 'PATCH', `${COUPONS}/${coupon.id}`, { usage_limit: 3 }, 'usage_limit')
    expect(error.message).toBe("Field 'usage_limit' cannot be below times_used (4)")
    const response = await patch(ctx, admin, coupon.id, { usage_limit: 4 })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ usage_limit: 4, times_used: 4 })
  })

  test("another coupon's code in any case answers 409; its own code in another case is fine", async ({ ctx, admin }) => {
    await createCoupon(ctx, admin, { code: 'TAKEN-CODE', type: 'free_shipping' })
    const coupon = await createCoupon(ctx, admin, { code: uniqueCode('RENAME'), type: 'free_shipping' })
    const clash = await patch(ctx, admin, coupon.id, { code: 'taken-code' })
    expect(clash.statusCode).toBe(409)
    expect(clash.json().error).toMatchObject({ code: 'conflict', message: "A coupon with code 'TAKEN-CODE' already exists" })
    expect(await getCoupon(ctx, admin, coupon.id)).toEqual(coupon)
    const same = await patch(ctx, admin, coupon.id, { code: coupon.code.toLowerCase() })
    expect(same.statusCode).toBe(200)
    expect(same.json().code).toBe(coupon.code)
  })

  test('answers 404 for an unknown id, 400 for an empty body, 401 anonymous and 403 to a customer', async ({ ctx, admin, customer }) => {
    const missing = await patch(ctx, admin, UNKNOWN_ID, { is_active: false })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().error).toMatchObject({ code: 'not_found', message: 'Coupon not found' })
    const coupon = await createCoupon(ctx, admin, { code: uniqueCode('GUARD'), type: 'free_shipping' })
    const url = `${COUPONS}/${coupon.id}`
    expect((await ctx.request({ method: 'PATCH', url, payload: {}, token: admin })).statusCode).toBe(400)
    expect((await ctx.request({ method: 'PATCH', url, payload: { is_active: false } })).statusCode).toBe(401)
    expect((await ctx.request({ method: 'PATCH', url, payload: { is_active: false }, token: customer })).statusCode).toBe(403)
    expect(await getCoupon(ctx, admin, coupon.id)).toEqual(coupon)
  })
})

describe('DELETE /api/v1/coupons/:id', () => {
  test('answers 204 with no body; the coupon is gone and carts holding it lose it', async ({ ctx, admin }) => {
    const coupon = await createCoupon(ctx, admin, { code: uniqueCode('GONE'), type: 'percentage', value: 5 })
    const [cart] = await ctx.handle.sql<{ id: string }[]>`insert into carts (id, currency) values (gen_random_uuid(), 'USD') returning id`
    await ctx.handle.sql`insert into cart_coupons (cart_id, coupon_id) values (${cart!.id}, ${coupon.id})`

    const response = await ctx.request({ method: 'DELETE', url: `${COUPONS}/${coupon.id}`, token: admin })
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    expect((await ctx.request({ method: 'GET', url: `${COUPONS}/${coupon.id}`, token: admin })).statusCode).toBe(404)
    expect(await ctx.handle.sql`select 1 from cart_coupons where cart_id = ${cart!.id}`).toHaveLength(0)
    expect(await ctx.handle.sql`select id from carts where id = ${cart!.id}`).toHaveLength(1)

    const again = await ctx.request({ method: 'DELETE', url: `${COUPONS}/${coupon.id}`, token: admin })
    expect(again.statusCode).toBe(404)
    expect(again.json().error).toMatchObject({ code: 'not_found', message: 'Coupon not found' })
  })

  test('answers 401 anonymous and 403 to a customer; the coupon stays', async ({ ctx, admin, customer }) => {
    const coupon = await createCoupon(ctx, admin, { code: uniqueCode('KEEP'), type: 'free_shipping' })
    const url = `${COUPONS}/${coupon.id}`
    expect((await ctx.request({ method: 'DELETE', url })).statusCode).toBe(401)
    expect((await ctx.request({ method: 'DELETE', url, token: customer })).statusCode).toBe(403)
    expect(await getCoupon(ctx, admin, coupon.id)).toEqual(coupon)
  })
})
