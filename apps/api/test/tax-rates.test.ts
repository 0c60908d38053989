/** Tax rates: admin-only CRUD, one rate per country and region, exact percentages. */
import { afterAll, beforeAll, describe, expect } from 'vitest'
import type { TaxRate, TaxRateList } from '@commerce/domain'
import { createTestContext, test, type TestContext } from './helpers.js'

const TAX_RATES = '/api/v1/tax-rates'
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000cafe'
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

function createTaxRate(ctx: TestContext, admin: string, payload: Record<string, unknown>): Promise<TaxRate> {
  return ctx.expectStatus(201, { method: 'POST', url: TAX_RATES, payload, token: admin })
}

function getTaxRate(ctx: TestContext, admin: string, id: string): Promise<TaxRate> {
  return ctx.expectStatus(200, { method: 'GET', url: `${TAX_RATES}/${id}`, token: admin })
}

const taxRateCount = (ctx: TestContext) => ctx.countRows('tax_rates')

function expectRefused(ctx: TestContext, admin: string, method: 'POST' | 'PATCH', url: string, payload: Record<string, unknown>, field: string) {
  return ctx.expectInvalidField({ method, url, payload, token: admin }, field, 'tax_rates')
}

describe('POST /api/v1/tax-rates', () => {
  test('creates a whole-country rate: 201 with every field, region null, 19.99 % back exactly', async ({ ctx, admin }) => {
    const body = await ctx.expectStatus<TaxRate>(201, {
      method: 'POST',
      url: TAX_RATES,
      token: admin,
      payload: { country: 'DE', rate: 19.99, name: 'MwSt' },
    })
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      country: 'DE',
      region: null,
      rate: 19.99,
      name: 'MwSt',
      rounding: 'line',
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    })
    const [row] = await ctx.handle.sql`select rate_ppm from tax_rates where id = ${body.id}`
    expect(row!.rate_ppm).toBe(199900)
    expect(await getTaxRate(ctx, admin, body.id)).toEqual(body)
  })

  test('creates regional rates; 8.875, 12.5, 0 and 100 round-trip exactly', async ({ ctx, admin }) => {
    for (const [region, rate, ppm] of [
      ['NY', 8.875, 88750],
      ['CA', 12.5, 125000],
      ['OR', 0, 0],
      ['XX', 100, 1000000],
    ] as const) {
      const created = await createTaxRate(ctx, admin, { country: 'US', region, rate, name: `US ${region}` })
      expect(created).toMatchObject({ country: 'US', region, rate })
      const [row] = await ctx.handle.sql`select rate_ppm from tax_rates where id = ${created.id}`
      expect(row!.rate_ppm).toBe(ppm)
    }
  })

  test('a second rate for the same country and region, in any case, answers 409; another region is fine', async ({ ctx, admin }) => {
    await createTaxRate(ctx, admin, { country: 'CA', region: 'Ontario', rate: 13, name: 'HST' })
    await createTaxRate(ctx, admin, { country: 'CA', rate: 5, name: 'GST' })
    const before = await taxRateCount(ctx)
    const clash = await ctx.request({ method: 'POST', url: TAX_RATES, token: admin, payload: { country: 'CA', region: 'ONTARIO', rate: 1, name: 'Dup' } })
    expect(clash.statusCode).toBe(409)
    expect(clash.json().error).toEqual({
      code: 'conflict',
      message: 'A tax rate for CA / ONTARIO already exists',
      request_id: clash.headers['x-request-id'],
    })
    const wholeCountry = await ctx.request({ method: 'POST', url: TAX_RATES, token: admin, payload: { country: 'CA', region: null, rate: 1, name: 'Dup' } })
    expect(wholeCountry.statusCode).toBe(409)
    expect(wholeCountry.json().error.message).toBe('A tax rate for CA already exists')
    expect(await taxRateCount(ctx)).toBe(before)
    expect((await createTaxRate(ctx, admin, { country: 'CA', region: 'Quebec', rate: 14.975, name: 'QST' })).rate).toBe(14.975)
  })

  test('answers 400 "Field \'country\' is required" with the full error body', async ({ ctx, admin }) => {
    const response = await ctx.request({ method: 'POST', url: TAX_RATES, token: admin, payload: { rate: 5, name: 'No country' } })
    expect(response.statusCode).toBe(400)
    expect(response.json().error).toEqual({
      code: 'validation_error',
      message: "Field 'country' is required",
      details: [{ field: 'country', message: "Field 'country' is required" }],
      request_id: response.headers['x-request-id'],
    })
  })

  test('refuses a rate over 100, negative or with more than 4 decimals, bad countries, empty names and unknown fields', async ({ ctx, admin }) => {
    await expectRefused(ctx, admin, 'POST', TAX_RATES, { country: 'FR', rate: 100.01, name: 'Too much' }, 'rate')
    await expectRefused(ctx, admin, 'POST', TAX_RATES, { country: 'FR', rate: -1, name: 'Negative' }, 'rate')
    const precise = await expectRefused(ctx, admin, 'POST', TAX_RATES, { country: 'FR', rate: 5.12345, name: 'Precise' }, 'rate')
    expect(precise.message).toBe("Field 'rate' is invalid: Percentage has at most 4 decimal places")
    await expectRefused(ctx, admin, 'POST', TAX_RATES, { country: 'FR', rate: '20', name: 'Text' }, 'rate')
    for (const country of ['ZZ', 'fr', 'FRA', '']) {
      await expectRefused(ctx, admin, 'POST', TAX_RATES, { country, rate: 20, name: 'Bad country' }, 'country')
    }
    await expectRefused(ctx, admin, 'POST', TAX_RATES, { country: 'FR', rate: 20, name: '' }, 'name')
    await expectRefused(ctx, admin, 'POST', TAX_RATES, { country: 'FR', region: '', rate: 20, name: 'Empty region' }, 'region')
    await expectRefused(ctx, admin, 'POST', TAX_RATES, { country: 'FR', rate: 20, name: 'Extra', id: UNKNOWN_ID }, 'id')
  })

  test('answers 401 anonymous and 403 to a customer; nothing is created', async ({ ctx, customer }) => {
    const before = await taxRateCount(ctx)
    const payload = { country: 'IT', rate: 22, name: 'IVA' }
    const anonymous = await ctx.request({ method: 'POST', url: TAX_RATES, payload })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error.code).toBe('unauthorized')
    const byCustomer = await ctx.request({ method: 'POST', url: TAX_RATES, payload, token: customer })
    expect(byCustomer.statusCode).toBe(403)
    expect(byCustomer.json().error.code).toBe('forbidden')
    expect(await taxRateCount(ctx)).toBe(before)
  })
})

describe('tax rounding', () => {
  test('a rate is rounded per line by default, per order when asked; PATCH switches it; other values are 400', async ({ ctx, admin }) => {
    const rate = await createTaxRate(ctx, admin, { country: 'IS', rate: 24, name: 'VSK', rounding: 'order' })
    expect(rate.rounding).toBe('order')
    const [row] = await ctx.handle.sql`select rounding from tax_rates where id = ${rate.id}`
    expect(row!.rounding).toBe('order')
    const patched = await ctx.expectStatus<TaxRate>(200, { method: 'PATCH', url: `${TAX_RATES}/${rate.id}`, payload: { rounding: 'line' }, token: admin })
    expect(patched).toMatchObject({ rounding: 'line', rate: 24, name: 'VSK' })
    await expectRefused(ctx, admin, 'PATCH', `${TAX_RATES}/${rate.id}`, { rounding: 'invoice' }, 'rounding')
    await expectRefused(ctx, admin, 'POST', TAX_RATES, { country: 'NO', rate: 25, name: 'MVA', rounding: 'none' }, 'rounding')
  })
})

describe('GET /api/v1/tax-rates/:id', () => {
  test('answers 401 anonymous, 403 customer, 404 unknown, 400 malformed', async ({ ctx, admin, customer }) => {
    const rate = await createTaxRate(ctx, admin, { country: 'NL', rate: 21, name: 'BTW' })
    const url = `${TAX_RATES}/${rate.id}`
    expect((await ctx.request({ method: 'GET', url })).statusCode).toBe(401)
    expect((await ctx.request({ method: 'GET', url, token: customer })).statusCode).toBe(403)
    const missing = await ctx.expectStatus<{ error: unknown }>(404, { method: 'GET', url: `${TAX_RATES}/${UNKNOWN_ID}`, token: admin })
    expect(missing.error).toMatchObject({ code: 'not_found', message: 'Tax rate not found' })
    const malformed = await ctx.expectStatus<{ error: { details: unknown[] } }>(400, { method: 'GET', url: `${TAX_RATES}/x`, token: admin })
    expect(malformed.error.details).toContainEqual(expect.objectContaining({ field: 'id' }))
  })
})

describe('GET /api/v1/tax-rates', () => {
  let own: TestContext
  let ownAdmin: string

  beforeAll(async () => {
    own = await createTestContext()
    ownAdmin = (await own.signIn('admin')).token
    for (const [country, region, rate] of [
      ['US', 'texas', 6.25],
      ['DE', null, 19],
      ['US', 'California', 7.25],
      ['US', null, 0],
      ['AT', null, 20],
    ] as const) {
      await own.expectStatus(201, { method: 'POST', url: TAX_RATES, token: ownAdmin, payload: { country, region, rate, name: `${country} ${region}` } })
    }
  })
  afterAll(() => own.close())

  const list = (query = '') => own.expectStatus<TaxRateList>(200, { method: 'GET', url: `${TAX_RATES}${query}`, token: ownAdmin })
  const places = (body: TaxRateList) => body.tax_rates.map((rate) => [rate.country, rate.region])

  test('lists by country, then region with the whole-country rate first, in the list envelope', async () => {
    const body = await list()
    expect(places(body)).toEqual([
      ['AT', null],
      ['DE', null],
      ['US', null],
      ['US', 'California'],
      ['US', 'texas'],
    ])
    expect(body.meta).toEqual({ page: 1, per_page: 20, total: 5, total_pages: 1 })
    expect(body.tax_rates[3]).toEqual({
      id: expect.any(String),
      country: 'US',
      region: 'California',
      rate: 7.25,
      name: 'US California',
      rounding: 'line',
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    })
  })

  test('filters by country and pages', async () => {
    const us = await list('?country=US&per_page=2&page=2')
    expect(places(us)).toEqual([['US', 'texas']])
    expect(us.meta).toEqual({ page: 2, per_page: 2, total: 3, total_pages: 2 })
    expect((await list('?country=FR')).tax_rates).toEqual([])
    const bad = await own.expectStatus<{ error: { details: unknown[] } }>(400, { method: 'GET', url: `${TAX_RATES}?country=usa`, token: ownAdmin })
    expect(bad.error.details).toContainEqual(expect.objectContaining({ field: 'country' }))
  })

  test('answers 401 anonymous and 403 to a customer', async () => {
    expect((await own.request({ method: 'GET', url: TAX_RATES })).statusCode).toBe(401)
    const { token } = await own.signIn('customer')
    expect((await own.request({ method: 'GET', url: TAX_RATES, token })).statusCode).toBe(403)
  })
})

describe('PATCH /api/v1/tax-rates/:id', () => {
  const patch = (ctx: TestContext, admin: string, id: string, payload: Record<string, unknown>) => ctx.request({ method: 'PATCH', url: `${TAX_RATES}/${id}`, payload, token: admin })

  test('changes only the fields sent and answers 200 with the rate', async ({ ctx, admin }) => {
    const rate = await createTaxRate(ctx, admin, { country: 'ES', rate: 21, name: 'IVA' })
    const response = await patch(ctx, admin, rate.id, { rate: 10.5 })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ ...rate, rate: 10.5, updated_at: expect.stringMatching(ISO) })
    const moved = await patch(ctx, admin, rate.id, { region: 'Canarias', name: 'IGIC', rate: 7 })
    expect(moved.statusCode).toBe(200)
    expect(moved.json()).toMatchObject({ country: 'ES', region: 'Canarias', name: 'IGIC', rate: 7 })
    expect(await getTaxRate(ctx, admin, rate.id)).toEqual(moved.json())
    // Its own place in another case is no clash.
    expect((await patch(ctx, admin, rate.id, { region: 'CANARIAS' })).statusCode).toBe(200)
  })

  test("moving onto another rate's country and region answers 409 and changes nothing", async ({ ctx, admin }) => {
    await createTaxRate(ctx, admin, { country: 'SE', rate: 25, name: 'Moms' })
    const rate = await createTaxRate(ctx, admin, { country: 'SE', region: 'Gotland', rate: 25, name: 'Moms Gotland' })
    const clash = await patch(ctx, admin, rate.id, { region: null })
    expect(clash.statusCode).toBe(409)
    expect(clash.json().error).toMatchObject({ code: 'conflict', message: 'A tax rate for SE already exists' })
    expect(await getTaxRate(ctx, admin, rate.id)).toEqual(rate)
  })

  test('refuses bad values and unknown fields; 404 unknown id, 401 anonymous, 403 customer', async ({ ctx, admin, customer }) => {
    const rate = await createTaxRate(ctx, admin, { country: 'PT', rate: 23, name: 'IVA' })
    const url = `${TAX_RATES}/${rate.id}`
    await expectRefused(ctx, admin, 'PATCH', url, { rate: 150 }, 'rate')
    await expectRefused(ctx, admin, 'PATCH', url, { rate: 1.00001 }, 'rate')
    await expectRefused(ctx, admin, 'PATCH', url, { country: 'XX' }, 'country')
    await expectRefused(ctx, admin, 'PATCH', url, { created_at: '2020-01-01T00:00:00Z' }, 'created_at')
    expect((await patch(ctx, admin, rate.id, {})).statusCode).toBe(400)
    const missing = await patch(ctx, admin, UNKNOWN_ID, { rate: 1 })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().error).toMatchObject({ code: 'not_found', message: 'Tax rate not found' })
    expect((await ctx.request({ method: 'PATCH', url, payload: { rate: 1 } })).statusCode).toBe(401)
    expect((await ctx.request({ method: 'PATCH', url, payload: { rate: 1 }, token: customer })).statusCode).toBe(403)
    expect(await getTaxRate(ctx, admin, rate.id)).toEqual(rate)
  })
})

describe('DELETE /api/v1/tax-rates/:id', () => {
  test('answers 204 with no body; the rate is gone; again 404', async ({ ctx, admin, customer }) => {
    const rate = await createTaxRate(ctx, admin, { country: 'BE', rate: 21, name: 'BTW' })
    const url = `${TAX_RATES}/${rate.id}`
    expect((await ctx.request({ method: 'DELETE', url })).statusCode).toBe(401)
    expect((await ctx.request({ method: 'DELETE', url, token: customer })).statusCode).toBe(403)
    const response = await ctx.request({ method: 'DELETE', url, token: admin })
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    expect((await ctx.request({ method: 'GET', url, token: admin })).statusCode).toBe(404)
    const again = await ctx.request({ method: 'DELETE', url, token: admin })
    expect(again.statusCode).toBe(404)
    expect(again.json().error).toMatchObject({ code: 'not_found', message: 'Tax rate not found' })
    // The place is free again.
    expect((await createTaxRate(ctx, admin, { country: 'BE', rate: 6, name: 'BTW reduced' })).rate).toBe(6)
  })
})
