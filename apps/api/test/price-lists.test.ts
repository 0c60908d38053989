/**
 * Price lists (CRUD, window and status, customer groups), their prices and products' base prices:
 * batches written all or nothing with exact amounts, upserts on the price's key, every refusal
 * naming its field, and who may call what.
 */
import { afterAll, beforeAll, describe, expect } from 'vitest'
import type { CustomerGroup, Price, PriceList, PriceListList, PricePage, Product, Variant } from '@commerce/domain'
import { createTestContext, test, type TestContext } from './helpers.js'

const LISTS = '/api/v1/price-lists'
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000cafe'
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const HOUR = 3_600_000
const inHours = (hours: number) => new Date(Date.now() + hours * HOUR).toISOString()

let seq = 0

function createList(ctx: TestContext, admin: string, payload: Record<string, unknown> = {}): Promise<PriceList> {
  return ctx.expectStatus(201, { method: 'POST', url: LISTS, payload: { name: `List ${++seq}`, ...payload }, token: admin })
}

function getList(ctx: TestContext, admin: string, id: string): Promise<PriceList> {
  return ctx.expectStatus(200, { method: 'GET', url: `${LISTS}/${id}`, token: admin })
}

function createProduct(ctx: TestContext, admin: string, payload: Record<string, unknown> = {}): Promise<Product> {
  return ctx.expectStatus(201, { method: 'POST', url: '/api/v1/products', payload: { title: `Product ${++seq}`, price: 10, currency: 'USD', ...payload }, token: admin })
}

function createVariant(ctx: TestContext, admin: string, productId: string): Promise<Variant> {
  return ctx.expectStatus(201, { method: 'POST', url: `/api/v1/products/${productId}/variants`, payload: { title: `Variant ${++seq}` }, token: admin })
}

function createGroup(ctx: TestContext, admin: string): Promise<CustomerGroup> {
  return ctx.expectStatus(201, { method: 'POST', url: '/api/v1/customer-groups', payload: { name: `Group ${++seq}` }, token: admin })
}

const listPricesUrl = (listId: string) => `${LISTS}/${listId}/prices`
const productPricesUrl = (productId: string) => `/api/v1/products/${productId}/prices`

function upsert(ctx: TestContext, token: string, url: string, prices: unknown) {
  return ctx.request({ method: 'POST', url, payload: { prices } as Record<string, unknown>, token })
}

async function written(ctx: TestContext, token: string, url: string, prices: unknown): Promise<Price[]> {
  return (await ctx.expectStatus<{ prices: Price[] }>(200, { method: 'POST', url, payload: { prices } as Record<string, unknown>, token })).prices
}

/** Every row of prices, to show a refused batch changed nothing (not even an amount). */
async function pricesSnapshot(ctx: TestContext) {
  return ctx.handle.sql`select id, product_id, variant_id, price_list_id, currency, amount_minor::text, min_quantity, updated_at from prices order by id`
}

/** Sends a batch that must be refused with 400 naming `field`, and checks that no price changed. */
async function expectBatchRefused(ctx: TestContext, token: string, url: string, prices: unknown, field: string) {
  const before = await pricesSnapshot(ctx)
  const response = await upsert(ctx, token, url, prices)
  expect(response.statusCode, response.body).toBe(400)
  const { error } = response.json<{ error: { code: string; message: string; details: { field: string; message: string }[] } }>()
  expect(error.code).toBe('validation_error')
  expect(error.details, JSON.stringify(prices)).toContainEqual({ field, message: expect.stringContaining(`'${field}'`) })
  expect(await pricesSnapshot(ctx)).toEqual(before)
  return error
}

describe('POST /api/v1/price-lists', () => {
  test('creates a list with the defaults: a sale, priority 0, active, no window, every customer, no prices', async ({ ctx, admin }) => {
    const body = await ctx.expectStatus<PriceList>(201, { method: 'POST', url: LISTS, payload: { name: 'Summer sale' }, token: admin })
    expect(body).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Summer sale',
      description: null,
      type: 'sale',
      priority: 0,
      is_active: true,
      starts_at: null,
      ends_at: null,
      customer_group_ids: [],
      price_count: 0,
      status: 'active',
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    })
    expect(await getList(ctx, admin, body.id)).toEqual(body)
  })

  test('creates a list with every field; names need not be unique', async ({ ctx, admin }) => {
    const [wholesale, vip] = [await createGroup(ctx, admin), await createGroup(ctx, admin)]
    const payload = {
      name: 'Trade',
      description: 'Trade prices',
      type: 'override',
      priority: -5,
      is_active: true,
      starts_at: '2020-01-01T00:00:00Z',
      ends_at: '2099-01-01T02:00:00+02:00',
      customer_group_ids: [wholesale!.id, vip!.id],
    }
    const body = await createList(ctx, admin, payload)
    expect(body).toMatchObject({
      ...payload,
      starts_at: '2020-01-01T00:00:00.000Z',
      ends_at: '2099-01-01T00:00:00.000Z',
      price_count: 0,
      status: 'active',
    })
    expect((await createList(ctx, admin, { name: 'Trade' })).name).toBe('Trade')
  })

  test('status is worked out at each request: scheduled before starts_at, expired from ends_at, inactive when switched off', async ({ ctx, admin }) => {
    expect((await createList(ctx, admin, { starts_at: inHours(1) })).status).toBe('scheduled')
    expect((await createList(ctx, admin, { starts_at: inHours(-2), ends_at: inHours(-1) })).status).toBe('expired')
    expect((await createList(ctx, admin, { is_active: false })).status).toBe('inactive')
    expect((await createList(ctx, admin, { is_active: false, starts_at: inHours(1) })).status).toBe('inactive')
    const ending = await createList(ctx, admin, { starts_at: inHours(-1), ends_at: inHours(1) })
    expect(ending.status).toBe('active')
    // The window moves into the past: the same row reads as expired.
    await ctx.handle.sql`update price_lists set starts_at = now() - interval '3 hours', ends_at = now() - interval '1 second' where id = ${ending.id}`
    expect((await getList(ctx, admin, ending.id)).status).toBe('expired')
  })

  test('refuses ends_at not after starts_at, bad dates, bad types and priorities, and unknown or read-only fields; nothing is created', async ({ ctx, admin }) => {
    const refuse = (payload: Record<string, unknown>, field: string) =>
      ctx.expectInvalidField({ method: 'POST', url: LISTS, payload: { name: 'Refused', ...payload }, token: admin }, field, 'price_lists')
    const before = await refuse({ starts_at: '2030-06-01T00:00:00Z', ends_at: '2030-05-31T23:59:59Z' }, 'ends_at')
    expect(before.message).toBe("Field 'ends_at' must be after 'starts_at'")
    await refuse({ starts_at: '2030-06-01T00:00:00Z', ends_at: '2030-06-01T02:00:00+02:00' }, 'ends_at')
    await refuse({ starts_at: 'tomorrow' }, 'starts_at')
    await refuse({ ends_at: '2030-06-30T23:59:60Z' }, 'ends_at')
    await refuse({ starts_at: '0000-01-01T00:00:00Z' }, 'starts_at')
    await refuse({ type: 'clearance' }, 'type')
    await refuse({ priority: 1.5 }, 'priority')
    await refuse({ priority: 1_000_001 }, 'priority')
    await refuse({ priority: '1' }, 'priority')
    await refuse({ is_active: 'yes' }, 'is_active')
    await refuse({ status: 'active' }, 'status')
    await refuse({ price_count: 1 }, 'price_count')
    await refuse({ currency: 'USD' }, 'currency')
    await refuse({ description: 'x'.repeat(2001) }, 'description')
    await ctx.expectInvalidField({ method: 'POST', url: LISTS, payload: { type: 'sale' }, token: admin }, 'name', 'price_lists')
    await ctx.expectInvalidField({ method: 'POST', url: LISTS, payload: { name: '' }, token: admin }, 'name', 'price_lists')
  })

  test('every customer group must exist: 400 naming each customer_group_ids[i]; repeats and non-UUIDs are refused too', async ({ ctx, admin }) => {
    const group = await createGroup(ctx, admin)
    const refuse = (ids: unknown, field: string) =>
      ctx.expectInvalidField({ method: 'POST', url: LISTS, payload: { name: 'Grouped', customer_group_ids: ids }, token: admin }, field, 'price_lists')
    const unknown = await refuse([group.id, UNKNOWN_ID], 'customer_group_ids[1]')
    expect(unknown.details).toEqual([{ field: 'customer_group_ids[1]', message: "Field 'customer_group_ids[1]' names no customer group" }])
    await refuse([group.id, group.id], 'customer_group_ids')
    await refuse(['wholesale'], 'customer_group_ids.0')
    await refuse(group.id, 'customer_group_ids')
    await refuse(Array.from({ length: 101 }, (_, i) => `0190a6f1-7c3a-7000-8000-${String(i).padStart(12, '0')}`), 'customer_group_ids')
  })

  test('answers 401 anonymous, 403 to a customer and to keys without pricing:write; a pricing:write key creates', async ({ ctx, customer }) => {
    const before = await ctx.countRows('price_lists')
    const payload = { name: 'Guarded' }
    await ctx.expectError(401, 'unauthorized', { method: 'POST', url: LISTS, payload })
    await ctx.expectError(403, 'forbidden', { method: 'POST', url: LISTS, payload, token: customer })
    for (const scopes of [['pricing:read'], ['products:write'], ['customers:write'], ['read']]) {
      await ctx.expectError(403, 'forbidden', { method: 'POST', url: LISTS, payload, token: (await ctx.createApiKey(scopes)).key })
    }
    expect(await ctx.countRows('price_lists')).toBe(before)
    const { key } = await ctx.createApiKey(['pricing:write'])
    const created = await ctx.expectStatus<PriceList>(201, { method: 'POST', url: LISTS, payload, token: key })
    expect(await ctx.expectStatus(200, { method: 'GET', url: `${LISTS}/${created.id}`, token: key })).toEqual(created)
  })
})

describe('GET /api/v1/price-lists/:id', () => {
  test('answers the list; 404 unknown, 400 malformed id, 401 anonymous, 403 customer, 200 with a pricing:read or read key', async ({ ctx, admin, customer }) => {
    const list = await createList(ctx, admin)
    const url = `${LISTS}/${list.id}`
    const missing = await ctx.expectError(404, 'not_found', { method: 'GET', url: `${LISTS}/${UNKNOWN_ID}`, token: admin })
    expect(missing.message).toBe('Price list not found')
    const malformed = await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${LISTS}/1 or 1=1`, token: admin })
    expect(malformed.details).toContainEqual(expect.objectContaining({ field: 'id' }))
    await ctx.expectError(401, 'unauthorized', { method: 'GET', url })
    await ctx.expectError(403, 'forbidden', { method: 'GET', url, token: customer })
    await ctx.expectError(403, 'forbidden', { method: 'GET', url, token: (await ctx.createApiKey(['customers:read'])).key })
    for (const scopes of [['pricing:read'], ['read']]) {
      expect(await ctx.expectStatus(200, { method: 'GET', url, token: (await ctx.createApiKey(scopes)).key })).toEqual(list)
    }
  })
})

describe('GET /api/v1/price-lists', () => {
  let own: TestContext
  let ownAdmin: string
  const created: PriceList[] = []

  beforeAll(async () => {
    own = await createTestContext()
    ownAdmin = (await own.signIn('admin')).token
    for (const [name, type, isActive] of [
      ['First', 'sale', true],
      ['Second', 'override', false],
      ['Third', 'override', true],
    ] as const) {
      created.push(await own.expectStatus<PriceList>(201, { method: 'POST', url: LISTS, payload: { name, type, is_active: isActive }, token: ownAdmin }))
    }
  })
  afterAll(() => own.close())

  const list = (query = '') => own.expectStatus<PriceListList>(200, { method: 'GET', url: `${LISTS}${query}`, token: ownAdmin })
  const names = (body: PriceListList) => body.price_lists.map((priceList) => priceList.name)

  test('lists every price list newest first in the list envelope', async () => {
    expect(await list()).toEqual({ price_lists: [...created].reverse(), meta: { page: 1, per_page: 20, total: 3, total_pages: 1 } })
  })

  test('filters by is_active and type, together too', async () => {
    expect(names(await list('?is_active=false'))).toEqual(['Second'])
    expect(names(await list('?is_active=true'))).toEqual(['Third', 'First'])
    expect(names(await list('?type=override'))).toEqual(['Third', 'Second'])
    const both = await list('?type=override&is_active=true')
    expect(both).toEqual({ price_lists: [created[2]], meta: { page: 1, per_page: 20, total: 1, total_pages: 1 } })
    expect((await list('?type=sale&is_active=false')).price_lists).toEqual([])
  })

  test('pages with per_page, and refuses bad page bounds and filter values', async () => {
    expect(await list('?per_page=2&page=2')).toEqual({ price_lists: [created[0]], meta: { page: 2, per_page: 2, total: 3, total_pages: 2 } })
    expect((await list('?page=9')).price_lists).toEqual([])
    for (const [query, field] of [
      ['?per_page=101', 'per_page'],
      ['?page=0', 'page'],
      ['?is_active=maybe', 'is_active'],
      ['?type=clearance', 'type'],
    ] as const) {
      const error = await own.expectError(400, 'validation_error', { method: 'GET', url: `${LISTS}${query}`, token: ownAdmin })
      expect(error.details).toContainEqual(expect.objectContaining({ field }))
    }
  })

  test('answers 401 anonymous and 403 to a customer', async () => {
    await own.expectError(401, 'unauthorized', { method: 'GET', url: LISTS })
    const { token } = await own.signIn('customer')
    await own.expectError(403, 'forbidden', { method: 'GET', url: LISTS, token })
  })
})

describe('PATCH /api/v1/price-lists/:id', () => {
  const patch = (ctx: TestContext, admin: string, id: string, payload: Record<string, unknown>) =>
    ctx.request({ method: 'PATCH', url: `${LISTS}/${id}`, payload, token: admin })

  test('changes only the fields sent; customer_group_ids replaces the groups ([] for every customer)', async ({ ctx, admin }) => {
    const [first, second] = [await createGroup(ctx, admin), await createGroup(ctx, admin)]
    const list = await createList(ctx, admin, { customer_group_ids: [first!.id] })
    const changed = await patch(ctx, admin, list.id, { type: 'override', priority: 7, customer_group_ids: [second!.id], description: 'Now' })
    expect(changed.statusCode).toBe(200)
    expect(changed.json()).toEqual({
      ...list,
      type: 'override',
      priority: 7,
      description: 'Now',
      customer_group_ids: [second!.id],
      updated_at: expect.stringMatching(ISO),
    })
    const everyone = await patch(ctx, admin, list.id, { customer_group_ids: [], is_active: false, description: null })
    expect(everyone.json()).toMatchObject({ customer_group_ids: [], is_active: false, status: 'inactive', description: null, priority: 7 })
    expect(await getList(ctx, admin, list.id)).toEqual(everyone.json())
  })

  test('checks the window as it will be: a new end against the kept start, and a new start against the kept end', async ({ ctx, admin }) => {
    const list = await createList(ctx, admin, { starts_at: '2030-01-01T00:00:00Z', ends_at: '2030-02-01T00:00:00Z' })
    const url = `${LISTS}/${list.id}`
    await ctx.expectInvalidField({ method: 'PATCH', url, payload: { ends_at: '2029-12-31T00:00:00Z' }, token: admin }, 'ends_at', 'price_lists')
    await ctx.expectInvalidField({ method: 'PATCH', url, payload: { starts_at: '2030-03-01T00:00:00Z' }, token: admin }, 'ends_at', 'price_lists')
    await ctx.expectInvalidField({ method: 'PATCH', url, payload: { customer_group_ids: [UNKNOWN_ID] }, token: admin }, 'customer_group_ids[0]', 'price_lists')
    await ctx.expectInvalidField({ method: 'PATCH', url, payload: { status: 'expired' }, token: admin }, 'status', 'price_lists')
    expect(await getList(ctx, admin, list.id)).toEqual(list)
    const moved = await patch(ctx, admin, list.id, { starts_at: '2030-03-01T00:00:00Z', ends_at: null })
    expect(moved.statusCode).toBe(200)
    expect(moved.json()).toMatchObject({ starts_at: '2030-03-01T00:00:00.000Z', ends_at: null, status: 'scheduled' })
  })

  test('answers 404 unknown, 400 for an empty body, 401 anonymous and 403 to a customer or a pricing:read key', async ({ ctx, admin, customer }) => {
    const missing = await patch(ctx, admin, UNKNOWN_ID, { name: 'x' })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().error).toMatchObject({ code: 'not_found', message: 'Price list not found' })
    const list = await createList(ctx, admin)
    const url = `${LISTS}/${list.id}`
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url, payload: {}, token: admin })
    await ctx.expectError(401, 'unauthorized', { method: 'PATCH', url, payload: { name: 'x' } })
    await ctx.expectError(403, 'forbidden', { method: 'PATCH', url, payload: { name: 'x' }, token: customer })
    await ctx.expectError(403, 'forbidden', { method: 'PATCH', url, payload: { name: 'x' }, token: (await ctx.createApiKey(['pricing:read'])).key })
    expect(await getList(ctx, admin, list.id)).toEqual(list)
  })
})

describe('DELETE /api/v1/price-lists/:id', () => {
  test('answers 204; the list and its prices are gone, other prices stay; again is 404', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin)
    const [doomed, kept] = [await createList(ctx, admin), await createList(ctx, admin)]
    await written(ctx, admin, listPricesUrl(doomed!.id), [{ product_id: product.id, currency: 'EUR', amount: 8 }])
    const [keptPrice] = await written(ctx, admin, listPricesUrl(kept!.id), [{ product_id: product.id, currency: 'EUR', amount: 9 }])
    const [base] = await written(ctx, admin, productPricesUrl(product.id), [{ currency: 'EUR', amount: 9.5 }])
    const response = await ctx.request({ method: 'DELETE', url: `${LISTS}/${doomed!.id}`, token: admin })
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    expect(await ctx.handle.sql`select id from prices where price_list_id = ${doomed!.id}`).toHaveLength(0)
    expect((await ctx.handle.sql<{ id: string }[]>`select id from prices where id in (${keptPrice!.id}, ${base!.id}) order by id`).map((row) => row.id)).toEqual(
      [keptPrice!.id, base!.id].sort(),
    )
    const again = await ctx.expectError(404, 'not_found', { method: 'DELETE', url: `${LISTS}/${doomed!.id}`, token: admin })
    expect(again.message).toBe('Price list not found')
  })

  test('answers 401 anonymous and 403 to a customer; the list stays', async ({ ctx, admin, customer }) => {
    const list = await createList(ctx, admin)
    await ctx.expectError(401, 'unauthorized', { method: 'DELETE', url: `${LISTS}/${list.id}` })
    await ctx.expectError(403, 'forbidden', { method: 'DELETE', url: `${LISTS}/${list.id}`, token: customer })
    expect(await getList(ctx, admin, list.id)).toEqual(list)
  })
})

describe('prices of a price list', () => {
  test('writes a batch: product-wide and variant prices, tiers and currencies, amounts exact (JPY 0, USD 2, KWD 3 decimals), in the order sent', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin)
    const variant = await createVariant(ctx, admin, product.id)
    const list = await createList(ctx, admin)
    const response = await upsert(ctx, admin, listPricesUrl(list.id), [
      { product_id: product.id, currency: 'EUR', amount: 19.99 },
      { product_id: product.id, variant_id: variant.id, currency: 'EUR', amount: 17.5, min_quantity: 1 },
      { product_id: product.id, currency: 'EUR', amount: 0.3, min_quantity: 10 },
      { product_id: product.id, variant_id: null, currency: 'JPY', amount: 2500 },
      { product_id: product.id, currency: 'KWD', amount: 1.005 },
      { product_id: product.id, currency: 'USD', amount: 0 },
    ])
    expect(response.statusCode, response.body).toBe(200)
    const { prices } = response.json<{ prices: Price[] }>()
    expect(prices).toEqual([
      { product_id: product.id, variant_id: null, currency: 'EUR', amount: 19.99, min_quantity: 1 },
      { product_id: product.id, variant_id: variant.id, currency: 'EUR', amount: 17.5, min_quantity: 1 },
      { product_id: product.id, variant_id: null, currency: 'EUR', amount: 0.3, min_quantity: 10 },
      { product_id: product.id, variant_id: null, currency: 'JPY', amount: 2500, min_quantity: 1 },
      { product_id: product.id, variant_id: null, currency: 'KWD', amount: 1.005, min_quantity: 1 },
      { product_id: product.id, variant_id: null, currency: 'USD', amount: 0, min_quantity: 1 },
    ].map((price) => ({
      id: expect.stringMatching(UUID),
      compare_at_amount: null,
      price_list_id: list.id,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
      ...price,
    })))
    const rows = await ctx.handle.sql<{ currency: string; amount_minor: string }[]>`
      select currency, amount_minor::text from prices where price_list_id = ${list.id} order by currency, amount_minor::bigint`
    expect(rows.map((row) => `${row.currency} ${row.amount_minor}`)).toEqual(['EUR 30', 'EUR 1750', 'EUR 1999', 'JPY 2500', 'KWD 1005', 'USD 0'])
    expect((await getList(ctx, admin, list.id)).price_count).toBe(6)
  })

  test('an entry with the key of an existing price replaces its amount (product-wide prices too: no variant is one key)', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin)
    const variant = await createVariant(ctx, admin, product.id)
    const list = await createList(ctx, admin)
    const url = listPricesUrl(list.id)
    const [wide, ofVariant] = await written(ctx, admin, url, [
      { product_id: product.id, currency: 'EUR', amount: 10 },
      { product_id: product.id, variant_id: variant.id, currency: 'EUR', amount: 11 },
    ])
    const again = await written(ctx, admin, url, [
      { product_id: product.id, variant_id: null, currency: 'EUR', amount: 9.5, min_quantity: 1 },
      { product_id: product.id, variant_id: variant.id, currency: 'EUR', amount: 10.5 },
      { product_id: product.id, currency: 'EUR', amount: 9, min_quantity: 2 },
    ])
    expect(again[0]).toEqual({ ...wide, amount: 9.5, updated_at: expect.stringMatching(ISO) })
    expect(again[1]).toEqual({ ...ofVariant, amount: 10.5, updated_at: expect.stringMatching(ISO) })
    expect(again[2]!.id).not.toBe(wide!.id)
    expect((await getList(ctx, admin, list.id)).price_count).toBe(3)
    // The same key in another list is another price.
    const other = await createList(ctx, admin)
    const [elsewhere] = await written(ctx, admin, listPricesUrl(other.id), [{ product_id: product.id, currency: 'EUR', amount: 1 }])
    expect(elsewhere!.id).not.toBe(wide!.id)
    expect((await getList(ctx, admin, list.id)).price_count).toBe(3)
  })

  test('refuses amounts with more decimals than the currency has, naming prices[i].amount; nothing is written', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin)
    const list = await createList(ctx, admin)
    const url = listPricesUrl(list.id)
    await written(ctx, admin, url, [{ product_id: product.id, currency: 'GBP', amount: 5 }])
    for (const [amount, currency] of [
      [19.999, 'USD'],
      [100.5, 'JPY'],
      [1.0005, 'KWD'],
    ] as const) {
      const error = await expectBatchRefused(
        ctx, admin, url,
        [
          { product_id: product.id, currency: 'GBP', amount: 6 },
          { product_id: product.id, currency: 'EUR', amount: 1 },
          { product_id: product.id, currency: 'CHF', amount: 2 },
          { product_id: product.id, currency, amount },
        ],
        'prices[3].amount',
      )
      expect(error.message).toBe(`Field 'prices[3].amount' is invalid: ${currency} amounts have at most ${currency === 'JPY' ? '0 decimal places' : currency === 'USD' ? '2 decimal places' : '3 decimal places'}`)
    }
    const large = await expectBatchRefused(ctx, admin, url, [{ product_id: product.id, currency: 'USD', amount: 1e16 }], 'prices[0].amount')
    expect(large.message).toBe("Field 'prices[0].amount' is invalid: Amount is too large")
    expect((await ctx.expectStatus<PricePage>(200, { method: 'GET', url, token: admin })).prices.map((price) => price.amount)).toEqual([5])
  })

  test('names every entry at fault at once: unknown currency, unknown product, a variant of another product, an unknown variant, a repeated key', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin)
    const other = await createProduct(ctx, admin)
    const otherVariant = await createVariant(ctx, admin, other.id)
    const list = await createList(ctx, admin)
    const before = await pricesSnapshot(ctx)
    const response = await upsert(ctx, admin, listPricesUrl(list.id), [
      { product_id: product.id, currency: 'EUR', amount: 5 },
      { product_id: product.id, currency: 'XYZ', amount: 5 },
      { product_id: UNKNOWN_ID, currency: 'EUR', amount: 5 },
      { product_id: product.id, variant_id: otherVariant.id, currency: 'EUR', amount: 5 },
      { product_id: product.id, variant_id: UNKNOWN_ID, currency: 'EUR', amount: 5 },
      { product_id: product.id, currency: 'EUR', amount: 6, min_quantity: 1 },
    ])
    expect(response.statusCode).toBe(400)
    const { error } = response.json()
    expect(error.details).toEqual([
      { field: 'prices[1].currency', message: "Field 'prices[1].currency' is not a known ISO 4217 currency: XYZ" },
      { field: 'prices[2].product_id', message: "Field 'prices[2].product_id' names no product" },
      { field: 'prices[3].variant_id', message: `Field 'prices[3].variant_id' is a variant of another product, not of ${product.id}` },
      { field: 'prices[4].variant_id', message: "Field 'prices[4].variant_id' names no variant" },
      { field: 'prices[5]', message: "Field 'prices[5]' repeats prices[0]: the same product, variant, currency and min_quantity" },
    ])
    expect(error.message).toBe("Field 'prices[1].currency' is not a known ISO 4217 currency: XYZ (and 4 more: see details)")
    expect(await pricesSnapshot(ctx)).toEqual(before)
  })

  test('refuses malformed batches by schema: none, more than 1000, missing or mistyped fields, bad min_quantity, unknown fields', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin)
    const list = await createList(ctx, admin)
    const url = listPricesUrl(list.id)
    const entry = { product_id: product.id, currency: 'EUR', amount: 1 }
    await expectBatchRefused(ctx, admin, url, [], 'prices')
    await expectBatchRefused(ctx, admin, url, Array.from({ length: 1001 }, (_, i) => ({ ...entry, min_quantity: i + 1 })), 'prices')
    await expectBatchRefused(ctx, admin, url, entry, 'prices')
    await expectBatchRefused(ctx, admin, url, [{ currency: 'EUR', amount: 1 }], 'prices.0.product_id')
    await expectBatchRefused(ctx, admin, url, [{ product_id: product.id, amount: 1 }], 'prices.0.currency')
    await expectBatchRefused(ctx, admin, url, [{ product_id: product.id, currency: 'EUR' }], 'prices.0.amount')
    await expectBatchRefused(ctx, admin, url, [{ ...entry, amount: '1.00' }], 'prices.0.amount')
    await expectBatchRefused(ctx, admin, url, [{ ...entry, amount: -1 }], 'prices.0.amount')
    await expectBatchRefused(ctx, admin, url, [{ ...entry, currency: 'eur' }], 'prices.0.currency')
    await expectBatchRefused(ctx, admin, url, [{ ...entry, min_quantity: 0 }], 'prices.0.min_quantity')
    await expectBatchRefused(ctx, admin, url, [{ ...entry, min_quantity: 1.5 }], 'prices.0.min_quantity')
    await expectBatchRefused(ctx, admin, url, [{ ...entry, min_quantity: 10_001 }], 'prices.0.min_quantity')
    await expectBatchRefused(ctx, admin, url, [{ ...entry, product_id: 'nope' }], 'prices.0.product_id')
    await expectBatchRefused(ctx, admin, url, [{ ...entry, price_list_id: list.id }], 'prices.0.price_list_id')
    await expectBatchRefused(ctx, admin, url, [entry, { ...entry, id: UNKNOWN_ID }], 'prices.1.id')
    const malformed = await ctx.request({ method: 'POST', url, token: admin, headers: { 'content-type': 'application/json' }, payload: '{"prices": [' })
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().error.code).toBe('validation_error')
    const unknownList = await upsert(ctx, admin, listPricesUrl(UNKNOWN_ID), [entry])
    expect(unknownList.statusCode).toBe(404)
    expect(unknownList.json().error.message).toBe('Price list not found')
    // 1000 entries are fine.
    const thousand = await written(ctx, admin, url, Array.from({ length: 1000 }, (_, i) => ({ ...entry, min_quantity: i + 1 })))
    expect(thousand).toHaveLength(1000)
    expect((await getList(ctx, admin, list.id)).price_count).toBe(1000)
  })

  test('is all or nothing: a failure at the last entry keeps nothing of the batch, not even changed amounts', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin)
    const list = await createList(ctx, admin)
    const url = listPricesUrl(list.id)
    await written(ctx, admin, url, [{ product_id: product.id, currency: 'EUR', amount: 5 }])
    const before = await pricesSnapshot(ctx)
    await ctx.withFailingInserts(
      'prices',
      async () => {
        const response = await upsert(ctx, admin, url, [
          { product_id: product.id, currency: 'EUR', amount: 4 },
          { product_id: product.id, currency: 'USD', amount: 4 },
          { product_id: product.id, currency: 'CHF', amount: 4 },
        ])
        expect(response.statusCode).toBe(500)
        expect(response.json().error).toMatchObject({ code: 'internal_error' })
      },
      "NEW.currency = 'CHF'",
    )
    expect(await pricesSnapshot(ctx)).toEqual(before)
  })

  test('lists the prices paged, by product, variant (product-wide first), currency and min_quantity; filters by product_id and currency', async ({ ctx, admin }) => {
    const [first, second] = [await createProduct(ctx, admin), await createProduct(ctx, admin)].sort((a, b) => a.id.localeCompare(b.id))
    const variant = await createVariant(ctx, admin, first!.id)
    const list = await createList(ctx, admin)
    const url = listPricesUrl(list.id)
    const prices = await written(ctx, admin, url, [
      { product_id: second!.id, currency: 'EUR', amount: 1 },
      { product_id: first!.id, variant_id: variant.id, currency: 'EUR', amount: 2 },
      { product_id: first!.id, currency: 'USD', amount: 3 },
      { product_id: first!.id, currency: 'EUR', amount: 4, min_quantity: 5 },
      { product_id: first!.id, currency: 'EUR', amount: 5 },
    ])
    const [ofSecond, ofVariant, usd, tier, eur] = prices
    const page = (query = '') => ctx.expectStatus<PricePage>(200, { method: 'GET', url: `${url}${query}`, token: admin })
    expect(await page()).toEqual({ prices: [eur, tier, usd, ofVariant, ofSecond], meta: { page: 1, per_page: 20, total: 5, total_pages: 1 } })
    expect(await page('?per_page=2&page=2')).toEqual({ prices: [usd, ofVariant], meta: { page: 2, per_page: 2, total: 5, total_pages: 3 } })
    expect((await page(`?product_id=${second!.id}`)).prices).toEqual([ofSecond])
    expect((await page('?currency=USD')).prices).toEqual([usd])
    expect((await page(`?currency=EUR&product_id=${first!.id}`)).meta).toMatchObject({ total: 3 })
    for (const [query, field] of [
      ['?currency=usd', 'currency'],
      ['?product_id=nope', 'product_id'],
      ['?per_page=0', 'per_page'],
    ] as const) {
      const error = await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${url}${query}`, token: admin })
      expect(error.details).toContainEqual(expect.objectContaining({ field }))
    }
    const missing = await ctx.expectError(404, 'not_found', { method: 'GET', url: listPricesUrl(UNKNOWN_ID), token: admin })
    expect(missing.message).toBe('Price list not found')
  })

  test('DELETE removes one price of the list (204); a price of another list, an unknown one or an unknown list is 404', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin)
    const [list, other] = [await createList(ctx, admin), await createList(ctx, admin)]
    const [price, kept] = await written(ctx, admin, listPricesUrl(list!.id), [
      { product_id: product.id, currency: 'EUR', amount: 1 },
      { product_id: product.id, currency: 'USD', amount: 1 },
    ])
    const [elsewhere] = await written(ctx, admin, listPricesUrl(other!.id), [{ product_id: product.id, currency: 'EUR', amount: 1 }])
    await ctx.expectStatus(204, { method: 'DELETE', url: `${listPricesUrl(list!.id)}/${price!.id}`, token: admin })
    const gone = await ctx.expectError(404, 'not_found', { method: 'DELETE', url: `${listPricesUrl(list!.id)}/${price!.id}`, token: admin })
    expect(gone.message).toBe('Price not found')
    await ctx.expectError(404, 'not_found', { method: 'DELETE', url: `${listPricesUrl(list!.id)}/${elsewhere!.id}`, token: admin })
    const noList = await ctx.expectError(404, 'not_found', { method: 'DELETE', url: `${listPricesUrl(UNKNOWN_ID)}/${kept!.id}`, token: admin })
    expect(noList.message).toBe('Price list not found')
    await ctx.expectError(400, 'validation_error', { method: 'DELETE', url: `${listPricesUrl(list!.id)}/nope`, token: admin })
    expect((await ctx.expectStatus<PricePage>(200, { method: 'GET', url: listPricesUrl(list!.id), token: admin })).prices).toEqual([kept])
    expect((await getList(ctx, admin, other!.id)).price_count).toBe(1)
  })

  test('answers 401 anonymous and 403 to a customer and to keys without the pricing scope; pricing:read reads, pricing:write writes', async ({ ctx, admin, customer }) => {
    const product = await createProduct(ctx, admin)
    const list = await createList(ctx, admin)
    const url = listPricesUrl(list.id)
    const prices = [{ product_id: product.id, currency: 'EUR', amount: 1 }]
    const [price] = await written(ctx, admin, url, prices)
    const before = await pricesSnapshot(ctx)
    await ctx.expectError(401, 'unauthorized', { method: 'GET', url })
    await ctx.expectError(401, 'unauthorized', { method: 'POST', url, payload: { prices } })
    await ctx.expectError(401, 'unauthorized', { method: 'DELETE', url: `${url}/${price!.id}` })
    await ctx.expectError(403, 'forbidden', { method: 'GET', url, token: customer })
    await ctx.expectError(403, 'forbidden', { method: 'POST', url, payload: { prices }, token: customer })
    await ctx.expectError(403, 'forbidden', { method: 'DELETE', url: `${url}/${price!.id}`, token: customer })
    const reader = (await ctx.createApiKey(['pricing:read'])).key
    await ctx.expectError(403, 'forbidden', { method: 'POST', url, payload: { prices }, token: reader })
    await ctx.expectError(403, 'forbidden', { method: 'DELETE', url: `${url}/${price!.id}`, token: reader })
    await ctx.expectError(403, 'forbidden', { method: 'GET', url, token: (await ctx.createApiKey(['products:write'])).key })
    expect(await pricesSnapshot(ctx)).toEqual(before)
    expect((await ctx.expectStatus<PricePage>(200, { method: 'GET', url, token: reader })).prices).toEqual([price])
    const writer = (await ctx.createApiKey(['pricing:write'])).key
    expect((await written(ctx, writer, url, [{ ...prices[0], amount: 2 }]))[0]!.amount).toBe(2)
  })
})

describe('base prices of a product: /api/v1/products/:id/prices', () => {
  test('writes prices in other currencies and tiers, its own currency from 2 units, per variant too; lists only base prices', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { price: 20, currency: 'USD' })
    const variant = await createVariant(ctx, admin, product.id)
    const url = productPricesUrl(product.id)
    const prices = await written(ctx, admin, url, [
      { currency: 'EUR', amount: 18.5 },
      { currency: 'USD', amount: 18, min_quantity: 10 },
      { variant_id: variant.id, currency: 'EUR', amount: 19 },
      { variant_id: variant.id, currency: 'USD', amount: 17, min_quantity: 5 },
      { currency: 'JPY', amount: 3000 },
    ])
    expect(prices.map((price) => [price.variant_id, price.currency, price.amount, price.min_quantity, price.price_list_id, price.product_id])).toEqual([
      [null, 'EUR', 18.5, 1, null, product.id],
      [null, 'USD', 18, 10, null, product.id],
      [variant.id, 'EUR', 19, 1, null, product.id],
      [variant.id, 'USD', 17, 5, null, product.id],
      [null, 'JPY', 3000, 1, null, product.id],
    ])
    // A price list's price of the same product is not a base price.
    const list = await createList(ctx, admin)
    await written(ctx, admin, listPricesUrl(list.id), [{ product_id: product.id, currency: 'EUR', amount: 15 }])
    const [eur, tier, variantEur, variantTier, jpy] = prices
    const page = await ctx.expectStatus<PricePage>(200, { method: 'GET', url, token: admin })
    expect(page).toEqual({ prices: [eur, jpy, tier, variantEur, variantTier], meta: { page: 1, per_page: 20, total: 5, total_pages: 1 } })
    expect((await ctx.expectStatus<PricePage>(200, { method: 'GET', url: `${url}?currency=USD&per_page=1`, token: admin })).prices).toEqual([tier])

    // Upsert on the key: a new amount, the same price.
    const [changed] = await written(ctx, admin, url, [{ currency: 'EUR', amount: 18.25 }])
    expect(changed).toEqual({ ...eur, amount: 18.25, updated_at: expect.stringMatching(ISO) })
  })

  test("refuses a base price that would be the product's own price or a variant's, naming prices[i].currency; nothing is written", async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { price: 20, currency: 'USD' })
    const variant = await createVariant(ctx, admin, product.id)
    const url = productPricesUrl(product.id)
    const before = await ctx.countRows('prices')
    const own = await expectBatchRefused(ctx, admin, url, [{ currency: 'EUR', amount: 18 }, { currency: 'USD', amount: 19 }], 'prices[1].currency')
    expect(own.message).toBe(
      `Field 'prices[1].currency' is the product's own currency: its price from 1 unit is the product's \`price\`; set the product's price instead (PATCH /products/${product.id})`,
    )
    const ofVariant = await expectBatchRefused(ctx, admin, url, [{ variant_id: variant.id, currency: 'USD', amount: 19, min_quantity: 1 }], 'prices[0].currency')
    expect(ofVariant.message).toContain(`the variant's price from 1 unit is the variant's \`price\`; set the variant's price instead (PATCH /products/${product.id}/variants/${variant.id})`)
    expect(await ctx.countRows('prices')).toBe(before)
    // The same in a price list is fine: a list's price is not the product's own.
    const list = await createList(ctx, admin)
    expect(await written(ctx, admin, listPricesUrl(list.id), [{ product_id: product.id, currency: 'USD', amount: 19 }])).toHaveLength(1)
  })

  test('a product moved to a currency it has a base price in from 1 unit is refused (409, nothing changed) until that price is deleted', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { price: 20, currency: 'USD' })
    const variant = await createVariant(ctx, admin, product.id)
    const url = productPricesUrl(product.id)
    const [eur, variantChf] = await written(ctx, admin, url, [
      { currency: 'EUR', amount: 18 },
      { variant_id: variant.id, currency: 'CHF', amount: 19 },
      { currency: 'GBP', amount: 15, min_quantity: 3 },
    ])
    const move = (currency: string) => ctx.request({ method: 'PATCH', url: `/api/v1/products/${product.id}`, payload: { currency, price: 21 }, token: admin })
    const refused = await move('EUR')
    expect(refused.statusCode).toBe(409)
    expect(refused.json().error).toMatchObject({
      code: 'conflict',
      message: `The product has a base price in EUR from 1 unit (${eur!.id}), which would then be its own price: delete it first (DELETE /products/${product.id}/prices/${eur!.id}) and set the price with the currency`,
    })
    expect((await move('CHF')).json().error.message).toContain(`The variant ${variant.id} has a base price in CHF from 1 unit (${variantChf!.id})`)
    expect(await ctx.expectStatus<Product>(200, { method: 'GET', url: `/api/v1/products/${product.id}` })).toMatchObject({ price: 20, currency: 'USD' })
    // A tier in the new currency is no clash; a deleted base price no longer is one.
    expect((await move('GBP')).statusCode).toBe(200)
    await ctx.expectStatus(204, { method: 'DELETE', url: `${url}/${eur!.id}`, token: admin })
    expect((await move('EUR')).json()).toMatchObject({ price: 21, currency: 'EUR' })
  })

  test('refuses a variant of another product, bad amounts and repeats; a product_id in the entries is not allowed', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin)
    const other = await createProduct(ctx, admin)
    const otherVariant = await createVariant(ctx, admin, other.id)
    const url = productPricesUrl(product.id)
    await expectBatchRefused(ctx, admin, url, [{ variant_id: otherVariant.id, currency: 'EUR', amount: 1 }], 'prices[0].variant_id')
    await expectBatchRefused(ctx, admin, url, [{ currency: 'EUR', amount: 1.001 }], 'prices[0].amount')
    await expectBatchRefused(ctx, admin, url, [{ currency: 'ABC', amount: 1 }], 'prices[0].currency')
    const repeat = await expectBatchRefused(ctx, admin, url, [{ currency: 'EUR', amount: 1 }, { currency: 'EUR', amount: 2, variant_id: null }], 'prices[1]')
    expect(repeat.message).toBe("Field 'prices[1]' repeats prices[0]: the same variant, currency and min_quantity")
    await expectBatchRefused(ctx, admin, url, [{ product_id: other.id, currency: 'EUR', amount: 1 }], 'prices.0.product_id')
    await expectBatchRefused(ctx, admin, url, [], 'prices')
  })

  test('an unknown product is 404 on every operation; DELETE removes a base price only (204), a list price through it is 404', async ({ ctx, admin }) => {
    for (const request of [
      { method: 'GET' as const, url: productPricesUrl(UNKNOWN_ID) },
      { method: 'POST' as const, url: productPricesUrl(UNKNOWN_ID), payload: { prices: [{ currency: 'EUR', amount: 1 }] } },
      { method: 'DELETE' as const, url: `${productPricesUrl(UNKNOWN_ID)}/${UNKNOWN_ID}` },
    ]) {
      const error = await ctx.expectError(404, 'not_found', { ...request, token: admin })
      expect(error.message).toBe('Product not found')
    }
    const product = await createProduct(ctx, admin)
    const other = await createProduct(ctx, admin)
    const url = productPricesUrl(product.id)
    const [base] = await written(ctx, admin, url, [{ currency: 'EUR', amount: 1 }])
    const [ofOther] = await written(ctx, admin, productPricesUrl(other.id), [{ currency: 'EUR', amount: 1 }])
    const list = await createList(ctx, admin)
    const [listPrice] = await written(ctx, admin, listPricesUrl(list.id), [{ product_id: product.id, currency: 'EUR', amount: 1 }])
    await ctx.expectError(404, 'not_found', { method: 'DELETE', url: `${url}/${listPrice!.id}`, token: admin })
    await ctx.expectError(404, 'not_found', { method: 'DELETE', url: `${url}/${ofOther!.id}`, token: admin })
    await ctx.expectStatus(204, { method: 'DELETE', url: `${url}/${base!.id}`, token: admin })
    const gone = await ctx.expectError(404, 'not_found', { method: 'DELETE', url: `${url}/${base!.id}`, token: admin })
    expect(gone.message).toBe('Price not found')
    expect((await ctx.expectStatus<PricePage>(200, { method: 'GET', url, token: admin })).prices).toEqual([])
    expect(await ctx.handle.sql`select id from prices where id in (${listPrice!.id}, ${ofOther!.id})`).toHaveLength(2)
  })

  test('are admin only: 401 anonymous, 403 to a customer and to a products:write key; pricing:read reads, pricing:write writes', async ({ ctx, admin, customer }) => {
    const product = await createProduct(ctx, admin)
    const url = productPricesUrl(product.id)
    const prices = [{ currency: 'EUR', amount: 1 }]
    const before = await ctx.countRows('prices')
    await ctx.expectError(401, 'unauthorized', { method: 'GET', url })
    await ctx.expectError(401, 'unauthorized', { method: 'POST', url, payload: { prices } })
    await ctx.expectError(403, 'forbidden', { method: 'GET', url, token: customer })
    await ctx.expectError(403, 'forbidden', { method: 'POST', url, payload: { prices }, token: customer })
    const catalog = (await ctx.createApiKey(['products:write'])).key
    await ctx.expectError(403, 'forbidden', { method: 'POST', url, payload: { prices }, token: catalog })
    await ctx.expectError(403, 'forbidden', { method: 'GET', url, token: catalog })
    const reader = (await ctx.createApiKey(['pricing:read'])).key
    await ctx.expectError(403, 'forbidden', { method: 'POST', url, payload: { prices }, token: reader })
    expect(await ctx.countRows('prices')).toBe(before)
    const [price] = await written(ctx, (await ctx.createApiKey(['pricing:write'])).key, url, prices)
    expect((await ctx.expectStatus<PricePage>(200, { method: 'GET', url, token: reader })).prices).toEqual([price])
    // The product itself stays public.
    expect((await ctx.request({ method: 'GET', url: `/api/v1/products/${product.id}` })).statusCode).toBe(200)
  })
})
