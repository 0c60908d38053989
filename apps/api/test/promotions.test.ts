/**
 * Promotions: admin-only CRUD of automatic and code promotions, the rules shared with the coupons
 * API, references to products, categories, customer groups and campaigns, and the usage log.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect } from 'vitest'
import type { Campaign, Coupon, CouponList, Product, Promotion, PromotionList, PromotionUsageList } from '@commerce/domain'
import { promotionUsages } from '@commerce/db'
import { createTestContext, test, type TestContext } from './helpers.js'
import { insertOrder } from './order-fixtures.js'

const PROMOTIONS = '/api/v1/promotions'
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000cafe'
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

let codes = 0
const uniqueCode = (prefix = 'PROMO') => `${prefix}-${++codes}`

function createPromotion(ctx: TestContext, admin: string, payload: Record<string, unknown>): Promise<Promotion> {
  return ctx.expectStatus(201, { method: 'POST', url: PROMOTIONS, payload, token: admin })
}

function getPromotion(ctx: TestContext, admin: string, id: string): Promise<Promotion> {
  return ctx.expectStatus(200, { method: 'GET', url: `${PROMOTIONS}/${id}`, token: admin })
}

const patch = (ctx: TestContext, admin: string, id: string, payload: Record<string, unknown>) =>
  ctx.request({ method: 'PATCH', url: `${PROMOTIONS}/${id}`, payload, token: admin })

/** Sends a body that must be refused with 400 validation_error naming `field`; nothing is written. */
function expectRefused(ctx: TestContext, admin: string, method: 'POST' | 'PATCH', url: string, payload: Record<string, unknown>, field: string) {
  return ctx.expectInvalidField({ method, url, payload, token: admin }, field, 'promotions')
}

/** What the promotions refer to: products, a category, a customer group, campaigns. Made once per file's database. */
interface References {
  products: Product[]
  categoryId: string
  groupId: string
  spendEur: Campaign
  usage: Campaign
}
const references = new WeakMap<TestContext, Promise<References>>()
function referencesOf(ctx: TestContext, admin: string): Promise<References> {
  let made = references.get(ctx)
  if (!made) {
    made = (async () => {
      const product = (title: string) =>
        ctx.expectStatus<Product>(201, { method: 'POST', url: '/api/v1/products', token: admin, payload: { title, price: 10, currency: 'USD', inventory_quantity: 50 } })
      const products = [await product('Socks'), await product('Shoes'), await product('Laces')]
      const category = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: 'Footwear' } })
      const [group] = await ctx.handle.sql<{ id: string }[]>`insert into customer_groups (id, name) values (gen_random_uuid(), 'VIP') returning id`
      const campaign = (payload: Record<string, unknown>) =>
        ctx.expectStatus<Campaign>(201, { method: 'POST', url: '/api/v1/campaigns', token: admin, payload })
      return {
        products,
        categoryId: category.id,
        groupId: group!.id,
        spendEur: await campaign({ name: 'Spring (EUR)', budget: { type: 'spend', limit: 1000, currency: 'EUR' } }),
        usage: await campaign({ name: 'Launch week', budget: { type: 'usage', limit: 500 } }),
      }
    })()
    references.set(ctx, made)
  }
  return made
}

describe('POST /api/v1/promotions', () => {
  test('creates an automatic percentage promotion with every field: 201, stored as parts per million and uuid lists', async ({ ctx, admin }) => {
    const refs = await referencesOf(ctx, admin)
    const body = await createPromotion(ctx, admin, {
      name: 'Footwear week',
      description: '15 % off shoes for VIPs',
      type: 'percentage',
      value: 15,
      currency: 'EUR',
      min_subtotal: 50,
      starts_at: '2030-01-01T00:00:00Z',
      ends_at: '2030-01-08T00:00:00Z',
      usage_limit: 100,
      per_customer_limit: 1,
      is_active: false,
      stacking: 'exclusive',
      conditions: { product_ids: [refs.products[0]!.id], category_ids: [refs.categoryId], customer_group_ids: [refs.groupId] },
      target: { product_ids: [refs.products[1]!.id, refs.products[2]!.id] },
      campaign_id: refs.spendEur.id,
    })
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      code: null,
      name: 'Footwear week',
      description: '15 % off shoes for VIPs',
      type: 'percentage',
      value: 15,
      currency: 'EUR',
      min_subtotal: 50,
      starts_at: '2030-01-01T00:00:00.000Z',
      ends_at: '2030-01-08T00:00:00.000Z',
      usage_limit: 100,
      per_customer_limit: 1,
      times_used: 0,
      is_active: false,
      stacking: 'exclusive',
      conditions: { product_ids: [refs.products[0]!.id], category_ids: [refs.categoryId], customer_group_ids: [refs.groupId] },
      target: { product_ids: [refs.products[1]!.id, refs.products[2]!.id], category_ids: [] },
      buy_x_get_y: null,
      campaign_id: refs.spendEur.id,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    })
    const [row] = await ctx.handle.sql`
      select code, percent_off_ppm, min_subtotal_minor::int, condition_product_ids, target_category_ids, stacking from promotions where id = ${body.id}`
    expect(row).toEqual({
      code: null,
      percent_off_ppm: 150000,
      min_subtotal_minor: 5000,
      condition_product_ids: [refs.products[0]!.id],
      target_category_ids: [],
      stacking: 'exclusive',
    })
    expect(await getPromotion(ctx, admin, body.id)).toEqual(body)
  })

  test('a code promotion: the code upper-cased, the name defaulting to it, every default filled in', async ({ ctx, admin }) => {
    const body = await createPromotion(ctx, admin, { code: 'spring-ship', type: 'free_shipping' })
    expect(body).toMatchObject({
      code: 'SPRING-SHIP',
      name: 'SPRING-SHIP',
      description: null,
      type: 'free_shipping',
      value: null,
      currency: null,
      min_subtotal: null,
      usage_limit: null,
      per_customer_limit: null,
      is_active: true,
      stacking: 'combinable',
      conditions: { product_ids: [], category_ids: [], customer_group_ids: [] },
      target: { product_ids: [], category_ids: [] },
      buy_x_get_y: null,
      campaign_id: null,
    })
    const named = await createPromotion(ctx, admin, { code: uniqueCode('NAMED'), name: 'Named one', type: 'fixed_amount', value: 1.005, currency: 'KWD' })
    expect(named).toMatchObject({ name: 'Named one', value: 1.005, currency: 'KWD' })
    const [row] = await ctx.handle.sql`select amount_off_minor::int from promotions where id = ${named.id}`
    expect(row!.amount_off_minor).toBe(1005)
  })

  test('buy_x_get_y: quantities and percent off (100 = free) stored; with a code it is no coupon, yet its code is taken', async ({ ctx, admin }) => {
    const refs = await referencesOf(ctx, admin)
    const body = await createPromotion(ctx, admin, {
      code: 'b2g1',
      type: 'buy_x_get_y',
      value: 100,
      conditions: { product_ids: [refs.products[0]!.id] },
      buy_x_get_y: { buy_quantity: 2, get_quantity: 1, max_applications: 3 },
    })
    expect(body).toMatchObject({
      code: 'B2G1',
      type: 'buy_x_get_y',
      value: 100,
      buy_x_get_y: { buy_quantity: 2, get_quantity: 1, max_applications: 3 },
      target: { product_ids: [], category_ids: [] },
    })
    const [row] = await ctx.handle.sql`select percent_off_ppm, buy_quantity, get_quantity, max_applications from promotions where id = ${body.id}`
    expect(row).toEqual({ percent_off_ppm: 1_000_000, buy_quantity: 2, get_quantity: 1, max_applications: 3 })
    const unlimited = await createPromotion(ctx, admin, { name: 'Half off the third', type: 'buy_x_get_y', value: 50, buy_x_get_y: { buy_quantity: 2, get_quantity: 1 } })
    expect(unlimited.buy_x_get_y).toEqual({ buy_quantity: 2, get_quantity: 1, max_applications: null })

    // The coupons API does not show it, and its code is still taken there.
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `/api/v1/coupons/${body.id}`, token: admin })
    const coupons = await ctx.expectStatus<CouponList>(200, { method: 'GET', url: '/api/v1/coupons?code=b2g1', token: admin })
    expect(coupons.coupons).toEqual([])
    await ctx.expectError(409, 'conflict', { method: 'POST', url: '/api/v1/coupons', token: admin, payload: { code: 'B2G1', type: 'free_shipping' } })

  })

  test('refuses what the coupon rules refuse: value by type, currency, min_subtotal, dates, usage_limit, codes', async ({ ctx, admin }) => {
    const post = (payload: Record<string, unknown>, field: string) => expectRefused(ctx, admin, 'POST', PROMOTIONS, payload, field)
    const named = { name: 'Refused' }
    expect((await post({ ...named, type: 'percentage' }, 'value')).message).toBe("Field 'value' is required for percentage promotions")
    expect((await post({ ...named, type: 'percentage', value: 100.5 }, 'value')).message).toBe("Field 'value' is invalid: Percentage must be between 0 and 100")
    await post({ ...named, type: 'percentage', value: 0 }, 'value')
    await post({ ...named, type: 'percentage', value: 12.34567 }, 'value')
    expect((await post({ ...named, type: 'fixed_amount', value: 5 }, 'currency')).message).toBe("Field 'currency' is required for fixed_amount promotions")
    await post({ ...named, type: 'fixed_amount', value: 19.999, currency: 'USD' }, 'value')
    await post({ ...named, type: 'fixed_amount', currency: 'USD' }, 'value')
    expect((await post({ ...named, type: 'free_shipping', value: 5 }, 'value')).message).toBe("Field 'value' must be null for free_shipping promotions")
    await post({ ...named, type: 'percentage', value: 5, min_subtotal: 20 }, 'currency')
    await post({ ...named, type: 'free_shipping', currency: 'XYZ' }, 'currency')
    await post({ ...named, type: 'free_shipping', currency: 'usd' }, 'currency')
    await post({ ...named, type: 'free_shipping', starts_at: '2030-06-01T00:00:00Z', ends_at: '2030-06-01T00:00:00Z' }, 'ends_at')
    await post({ ...named, type: 'free_shipping', starts_at: 'tomorrow' }, 'starts_at')
    await post({ ...named, type: 'free_shipping', usage_limit: 0 }, 'usage_limit')
    await post({ code: 'has space', type: 'free_shipping' }, 'code')
    await post({ code: '', type: 'free_shipping' }, 'code')
    await post({ ...named, type: 'buy_one_get_one' }, 'type')
    await post({ ...named, type: 'free_shipping', times_used: 3 }, 'times_used')
    await post({ ...named, type: 'free_shipping', id: UNKNOWN_ID }, 'id')
  })

  test('refuses an automatic promotion without a name, a bad per_customer_limit or stacking, and an empty or too long name', async ({ ctx, admin }) => {
    const post = (payload: Record<string, unknown>, field: string) => expectRefused(ctx, admin, 'POST', PROMOTIONS, payload, field)
    const unnamed = await post({ type: 'free_shipping' }, 'name')
    expect(unnamed.message).toBe("Field 'name' is required for automatic promotions (those without a code)")
    await post({ code: null, type: 'free_shipping' }, 'name')
    await post({ name: '', type: 'free_shipping' }, 'name')
    await post({ name: 'x'.repeat(201), type: 'free_shipping' }, 'name')
    await post({ name: 'Limited', type: 'free_shipping', per_customer_limit: 0 }, 'per_customer_limit')
    await post({ name: 'Limited', type: 'free_shipping', per_customer_limit: 1.5 }, 'per_customer_limit')
    await post({ name: 'Stacked', type: 'free_shipping', stacking: 'sometimes' }, 'stacking')
    expect((await createPromotion(ctx, admin, { name: 'Once each', type: 'free_shipping', per_customer_limit: 1 })).per_customer_limit).toBe(1)
  })

  test('buy_x_get_y needs its quantities (at least 1) and a value in (0, 100]; the other types refuse buy_x_get_y', async ({ ctx, admin }) => {
    const post = (payload: Record<string, unknown>, field: string) => expectRefused(ctx, admin, 'POST', PROMOTIONS, payload, field)
    const bxgy = { name: 'B2G1', type: 'buy_x_get_y', value: 100 }
    const missing = await post(bxgy, 'buy_x_get_y')
    expect(missing.message).toBe("Field 'buy_x_get_y' is required for buy_x_get_y promotions")
    await post({ ...bxgy, buy_x_get_y: null }, 'buy_x_get_y')
    await post({ ...bxgy, buy_x_get_y: { get_quantity: 1 } }, 'buy_x_get_y.buy_quantity')
    await post({ ...bxgy, buy_x_get_y: { buy_quantity: 2 } }, 'buy_x_get_y.get_quantity')
    await post({ ...bxgy, buy_x_get_y: { buy_quantity: 0, get_quantity: 1 } }, 'buy_x_get_y.buy_quantity')
    await post({ ...bxgy, buy_x_get_y: { buy_quantity: 2, get_quantity: 0 } }, 'buy_x_get_y.get_quantity')
    await post({ ...bxgy, buy_x_get_y: { buy_quantity: 2, get_quantity: 1, max_applications: 0 } }, 'buy_x_get_y.max_applications')
    await post({ ...bxgy, buy_x_get_y: { buy_quantity: 2, get_quantity: 1, free: true } }, 'buy_x_get_y.free')
    const quantities = { buy_x_get_y: { buy_quantity: 2, get_quantity: 1 } }
    expect((await post({ ...bxgy, ...quantities, value: undefined }, 'value')).message).toBe("Field 'value' is required for buy_x_get_y promotions")
    await post({ ...bxgy, ...quantities, value: 100.01 }, 'value')
    await post({ ...bxgy, ...quantities, value: 0 }, 'value')
    for (const type of ['percentage', 'fixed_amount', 'free_shipping']) {
      const refused = await post({ name: 'Not bxgy', type, value: type === 'free_shipping' ? null : 10, currency: 'USD', ...quantities }, 'buy_x_get_y')
      expect(refused.message).toBe(`Field 'buy_x_get_y' must be null for ${type} promotions`)
    }
    expect((await createPromotion(ctx, admin, { name: 'Plain', type: 'percentage', value: 5, buy_x_get_y: null })).buy_x_get_y).toBeNull()
  })

  test('free_shipping takes no targets; its conditions are fine', async ({ ctx, admin }) => {
    const refs = await referencesOf(ctx, admin)
    const refused = await expectRefused(ctx, admin, 'POST', PROMOTIONS, { name: 'Ship', type: 'free_shipping', target: { product_ids: [refs.products[0]!.id] } }, 'target.product_ids')
    expect(refused.message).toBe("Field 'target.product_ids' must be empty for free_shipping promotions")
    await expectRefused(ctx, admin, 'POST', PROMOTIONS, { name: 'Ship', type: 'free_shipping', target: { category_ids: [refs.categoryId] } }, 'target.category_ids')
    const fine = await createPromotion(ctx, admin, {
      name: 'Ship shoes free',
      type: 'free_shipping',
      target: { product_ids: [], category_ids: [] },
      conditions: { category_ids: [refs.categoryId] },
    })
    expect(fine.conditions.category_ids).toEqual([refs.categoryId])
  })

  test('every id must exist: a 400 naming the list and the index; duplicates, malformed ids and unknown keys are refused', async ({ ctx, admin }) => {
    const refs = await referencesOf(ctx, admin)
    const base = { name: 'Refs', type: 'percentage', value: 10 }
    const [first, second] = refs.products
    const unknownProduct = await expectRefused(
      ctx, admin, 'POST', PROMOTIONS,
      { ...base, conditions: { product_ids: [first!.id, second!.id, UNKNOWN_ID] } },
      'conditions.product_ids[2]',
    )
    expect(unknownProduct.message).toBe(`Field 'conditions.product_ids[2]' is not a known product: ${UNKNOWN_ID}`)
    await expectRefused(ctx, admin, 'POST', PROMOTIONS, { ...base, conditions: { category_ids: [UNKNOWN_ID] } }, 'conditions.category_ids[0]')
    // A product id is not a category id.
    await expectRefused(ctx, admin, 'POST', PROMOTIONS, { ...base, conditions: { category_ids: [first!.id] } }, 'conditions.category_ids[0]')
    const group = await expectRefused(ctx, admin, 'POST', PROMOTIONS, { ...base, conditions: { customer_group_ids: [refs.groupId, UNKNOWN_ID] } }, 'conditions.customer_group_ids[1]')
    expect(group.message).toContain('is not a known customer group')
    await expectRefused(ctx, admin, 'POST', PROMOTIONS, { ...base, target: { product_ids: [UNKNOWN_ID] } }, 'target.product_ids[0]')
    await expectRefused(ctx, admin, 'POST', PROMOTIONS, { ...base, target: { category_ids: [refs.categoryId, UNKNOWN_ID] } }, 'target.category_ids[1]')
    const campaign = await expectRefused(ctx, admin, 'POST', PROMOTIONS, { ...base, campaign_id: UNKNOWN_ID }, 'campaign_id')
    expect(campaign.message).toBe(`Field 'campaign_id' is not a known campaign: ${UNKNOWN_ID}`)
    await expectRefused(ctx, admin, 'POST', PROMOTIONS, { ...base, conditions: { product_ids: [first!.id, first!.id] } }, 'conditions.product_ids')
    await expectRefused(ctx, admin, 'POST', PROMOTIONS, { ...base, conditions: { product_ids: ['nope'] } }, 'conditions.product_ids.0')
    await expectRefused(ctx, admin, 'POST', PROMOTIONS, { ...base, conditions: { product_ids: first!.id } }, 'conditions.product_ids')
    await expectRefused(ctx, admin, 'POST', PROMOTIONS, { ...base, conditions: { customer_ids: [] } }, 'conditions.customer_ids')
    await expectRefused(ctx, admin, 'POST', PROMOTIONS, { ...base, campaign_id: 'nope' }, 'campaign_id')
    // Upper-case ids are the same ids.
    const upper = await createPromotion(ctx, admin, { ...base, conditions: { product_ids: [first!.id.toUpperCase()] } })
    expect(upper.conditions.product_ids).toEqual([first!.id])
  })

  test('a campaign with a spend budget takes promotions in its currency or in none; a usage budget any', async ({ ctx, admin }) => {
    const refs = await referencesOf(ctx, admin)
    const refused = await expectRefused(
      ctx, admin, 'POST', PROMOTIONS,
      { name: 'Dollars', type: 'fixed_amount', value: 5, currency: 'USD', campaign_id: refs.spendEur.id },
      'currency',
    )
    expect(refused.message).toBe("Field 'currency' must be EUR (the currency of the campaign's spend budget) or null, not USD")
    expect((await createPromotion(ctx, admin, { name: 'Euros', type: 'fixed_amount', value: 5, currency: 'EUR', campaign_id: refs.spendEur.id })).campaign_id).toBe(refs.spendEur.id)
    expect((await createPromotion(ctx, admin, { name: 'Any', type: 'percentage', value: 5, campaign_id: refs.spendEur.id })).currency).toBeNull()
    expect((await createPromotion(ctx, admin, { name: 'Yen', type: 'fixed_amount', value: 500, currency: 'JPY', campaign_id: refs.usage.id })).campaign_id).toBe(refs.usage.id)
  })

  test('a code taken in any letter case, by a promotion or a coupon, answers 409 and creates nothing', async ({ ctx, admin }) => {
    await createPromotion(ctx, admin, { code: 'TAKEN', type: 'free_shipping' })
    await ctx.expectStatus<Coupon>(201, { method: 'POST', url: '/api/v1/coupons', token: admin, payload: { code: 'coupon-taken', type: 'free_shipping' } })
    const before = await ctx.countRows('promotions')
    for (const code of ['taken', 'Coupon-Taken']) {
      const response = await ctx.request({ method: 'POST', url: PROMOTIONS, token: admin, payload: { code, type: 'percentage', value: 5 } })
      expect(response.statusCode).toBe(409)
      expect(response.json().error).toEqual({
        code: 'conflict',
        message: `A promotion with code '${code.toUpperCase()}' already exists`,
        request_id: response.headers['x-request-id'],
      })
    }
    expect(await ctx.countRows('promotions')).toBe(before)
    // Automatic promotions have no code: any number of them.
    await createPromotion(ctx, admin, { name: 'Auto 1', type: 'free_shipping' })
    await createPromotion(ctx, admin, { name: 'Auto 2', type: 'free_shipping' })
  })

  test('malformed and ill-typed bodies are 400 in the error format, never 500', async ({ ctx, admin }) => {
    const malformed = await ctx.request({ method: 'POST', url: PROMOTIONS, token: admin, headers: { 'content-type': 'application/json' }, payload: '{"type":' })
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().error).toMatchObject({ code: 'validation_error', message: 'The request body is not valid JSON' })
    for (const payload of [
      { name: 'x', type: 'percentage', value: '10' },
      { name: 'x', type: 'percentage', value: 10, conditions: null },
      { name: 'x', type: 'percentage', value: 10, conditions: { product_ids: [null] } },
      { name: 'x', type: 'percentage', value: 10, target: [] },
      { name: 'x', type: 'buy_x_get_y', value: 10, buy_x_get_y: { buy_quantity: 1e12, get_quantity: 1 } },
      { name: "'; drop table promotions; --", type: 'free_shipping', code: "x'--" },
      { name: 'x', type: 'fixed_amount', value: 1e300, currency: 'USD' },
      { name: 'x', type: 'percentage', value: 10, conditions: { product_ids: Array.from({ length: 1001 }, () => randomUUID()) } },
      [],
      'text',
    ]) {
      // A JSON string or array is a body of the wrong type, not another media type.
      const body = typeof payload === 'string' ? JSON.stringify(payload) : payload
      const response = await ctx.request({ method: 'POST', url: PROMOTIONS, token: admin, headers: { 'content-type': 'application/json' }, payload: body as never })
      expect(response.statusCode, JSON.stringify(payload).slice(0, 200)).toBe(400)
      expect(response.json().error.code).toBe('validation_error')
    }
  })

  test('401 without or with a garbage token, 403 for a customer and for keys without promotions:write; a scoped key may', async ({ ctx, customer }) => {
    const before = await ctx.countRows('promotions')
    const payload = { code: uniqueCode('AUTH'), type: 'free_shipping' }
    await ctx.expectError(401, 'unauthorized', { method: 'POST', url: PROMOTIONS, payload })
    await ctx.expectError(401, 'unauthorized', { method: 'POST', url: PROMOTIONS, payload, token: 'not.a.jwt' })
    await ctx.expectError(403, 'forbidden', { method: 'POST', url: PROMOTIONS, payload, token: customer })
    for (const scopes of [['promotions:read'], ['coupons:write'], ['read']]) {
      const { key } = await ctx.createApiKey(scopes)
      await ctx.expectError(403, 'forbidden', { method: 'POST', url: PROMOTIONS, payload, token: key })
    }
    expect(await ctx.countRows('promotions')).toBe(before)
    const { key } = await ctx.createApiKey(['promotions:write'])
    const created = await ctx.expectStatus<Promotion>(201, { method: 'POST', url: PROMOTIONS, payload, token: key })
    const reader = await ctx.createApiKey(['promotions:read'])
    expect(await ctx.expectStatus<Promotion>(200, { method: 'GET', url: `${PROMOTIONS}/${created.id}`, token: reader.key })).toEqual(created)
  })
})

describe('GET /api/v1/promotions/:id', () => {
  test('answers the promotion to an admin; 401 anonymous, 403 customer, 404 unknown, 400 malformed', async ({ ctx, admin, customer }) => {
    const promotion = await createPromotion(ctx, admin, { name: 'Read me', type: 'percentage', value: 19.99 })
    expect(await getPromotion(ctx, admin, promotion.id)).toEqual(promotion)
    const url = `${PROMOTIONS}/${promotion.id}`
    await ctx.expectError(401, 'unauthorized', { method: 'GET', url })
    await ctx.expectError(403, 'forbidden', { method: 'GET', url, token: customer })
    const missing = await ctx.expectError(404, 'not_found', { method: 'GET', url: `${PROMOTIONS}/${UNKNOWN_ID}`, token: admin })
    expect(missing.message).toBe('Promotion not found')
    const malformed = await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${PROMOTIONS}/nope`, token: admin })
    expect(malformed.details).toContainEqual(expect.objectContaining({ field: 'id' }))
  })
})

describe('GET /api/v1/promotions', () => {
  let own: TestContext
  let ownAdmin: string
  const created: Record<string, Promotion> = {}
  let campaign: Campaign

  beforeAll(async () => {
    own = await createTestContext()
    ownAdmin = (await own.signIn('admin')).token
    campaign = await own.expectStatus<Campaign>(201, { method: 'POST', url: '/api/v1/campaigns', token: ownAdmin, payload: { name: 'Summer' } })
    const make = async (key: string, payload: Record<string, unknown>) => {
      created[key] = await own.expectStatus<Promotion>(201, { method: 'POST', url: PROMOTIONS, token: ownAdmin, payload })
    }
    await make('coupon', { code: 'first', type: 'percentage', value: 10 })
    await make('auto', { name: 'Automatic', type: 'free_shipping', campaign_id: campaign.id })
    await make('bxgy', { code: 'B1G1', type: 'buy_x_get_y', value: 100, buy_x_get_y: { buy_quantity: 1, get_quantity: 1 }, campaign_id: campaign.id })
    await make('inactive', { code: 'Sleeping', type: 'fixed_amount', value: 5, currency: 'USD', is_active: false })
    await make('autoBxgy', { name: 'Automatic B2G1', type: 'buy_x_get_y', value: 50, buy_x_get_y: { buy_quantity: 2, get_quantity: 1 } })
  })
  afterAll(() => own.close())

  const list = (query = '') => own.expectStatus<PromotionList>(200, { method: 'GET', url: `${PROMOTIONS}${query}`, token: ownAdmin })
  const names = (body: PromotionList) => body.promotions.map((promotion) => promotion.name)

  test('lists every promotion newest first in the list envelope', async () => {
    const body = await list()
    expect(body).toEqual({
      promotions: [created.autoBxgy, created.inactive, created.bxgy, created.auto, created.coupon],
      meta: { page: 1, per_page: 20, total: 5, total_pages: 1 },
    })
  })

  test('filters by code (exact, any case), is_active, automatic, campaign_id and type, together too', async () => {
    expect((await list('?code=sleeping')).promotions).toEqual([created.inactive])
    expect((await list('?code=SLEEP')).promotions).toEqual([])
    expect(names(await list('?is_active=false'))).toEqual(['SLEEPING'])
    expect(names(await list('?automatic=true'))).toEqual(['Automatic B2G1', 'Automatic'])
    expect(names(await list('?automatic=false'))).toEqual(['SLEEPING', 'B1G1', 'FIRST'])
    expect(names(await list(`?campaign_id=${campaign.id}`))).toEqual(['B1G1', 'Automatic'])
    expect(names(await list(`?campaign_id=${UNKNOWN_ID}`))).toEqual([])
    expect(names(await list('?type=buy_x_get_y'))).toEqual(['Automatic B2G1', 'B1G1'])
    const combined = await list(`?type=buy_x_get_y&automatic=false&campaign_id=${campaign.id}&is_active=true`)
    expect(combined).toEqual({ promotions: [created.bxgy], meta: { page: 1, per_page: 20, total: 1, total_pages: 1 } })
  })

  test('pages with per_page; bad page bounds and filter values are 400 naming the parameter', async () => {
    expect(await list('?per_page=2&page=3')).toEqual({ promotions: [created.coupon], meta: { page: 3, per_page: 2, total: 5, total_pages: 3 } })
    expect(await list('?per_page=2&page=4')).toEqual({ promotions: [], meta: { page: 4, per_page: 2, total: 5, total_pages: 3 } })
    for (const [query, field] of [
      ['?per_page=101', 'per_page'],
      ['?page=0', 'page'],
      ['?is_active=maybe', 'is_active'],
      ['?automatic=sometimes', 'automatic'],
      ['?campaign_id=nope', 'campaign_id'],
      ['?type=bogo', 'type'],
      [`?code=${'x'.repeat(65)}`, 'code'],
    ] as const) {
      const error = await own.expectError(400, 'validation_error', { method: 'GET', url: `${PROMOTIONS}${query}`, token: ownAdmin })
      expect(error.details, query).toContainEqual(expect.objectContaining({ field }))
    }
  })

  test('the coupons list still shows only promotions with a code and a coupon type', async () => {
    const coupons = await own.expectStatus<CouponList>(200, { method: 'GET', url: '/api/v1/coupons', token: ownAdmin })
    expect(coupons.coupons.map((coupon) => coupon.code)).toEqual(['SLEEPING', 'FIRST'])
    expect(coupons.meta).toMatchObject({ total: 2 })
    const auto = await own.request({ method: 'GET', url: `/api/v1/coupons/${created.auto!.id}`, token: ownAdmin })
    expect(auto.statusCode).toBe(404)
  })

  test('401 anonymous, 403 to a customer and to a key without promotions:read; a coupons key is not enough', async () => {
    await own.expectError(401, 'unauthorized', { method: 'GET', url: PROMOTIONS })
    const { token } = await own.signIn('customer')
    await own.expectError(403, 'forbidden', { method: 'GET', url: PROMOTIONS, token })
    const coupons = await own.createApiKey(['coupons:write'])
    await own.expectError(403, 'forbidden', { method: 'GET', url: PROMOTIONS, token: coupons.key })
    for (const scopes of [['promotions:read'], ['promotions:write'], ['read']]) {
      const { key } = await own.createApiKey(scopes)
      expect((await list()).meta).toEqual((await own.expectStatus<PromotionList>(200, { method: 'GET', url: PROMOTIONS, token: key })).meta)
    }
  })
})

describe('PATCH /api/v1/promotions/:id', () => {
  test('changes only what is sent; lists of conditions and target not sent are kept', async ({ ctx, admin }) => {
    const refs = await referencesOf(ctx, admin)
    const promotion = await createPromotion(ctx, admin, {
      name: 'Edit me',
      type: 'percentage',
      value: 10,
      conditions: { product_ids: [refs.products[0]!.id], category_ids: [refs.categoryId] },
      target: { product_ids: [refs.products[1]!.id] },
    })
    const response = await patch(ctx, admin, promotion.id, {
      description: 'Now with a description',
      stacking: 'exclusive',
      per_customer_limit: 2,
      conditions: { product_ids: [refs.products[2]!.id], customer_group_ids: [refs.groupId] },
      target: { category_ids: [refs.categoryId] },
    })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({
      ...promotion,
      description: 'Now with a description',
      stacking: 'exclusive',
      per_customer_limit: 2,
      conditions: { product_ids: [refs.products[2]!.id], category_ids: [refs.categoryId], customer_group_ids: [refs.groupId] },
      target: { product_ids: [refs.products[1]!.id], category_ids: [refs.categoryId] },
      updated_at: expect.stringMatching(ISO),
    })
    const cleared = await patch(ctx, admin, promotion.id, { description: null, per_customer_limit: null, conditions: { product_ids: [], category_ids: [] } })
    expect(cleared.json()).toMatchObject({ description: null, per_customer_limit: null, conditions: { product_ids: [], category_ids: [], customer_group_ids: [refs.groupId] } })
    expect(await getPromotion(ctx, admin, promotion.id)).toEqual(cleared.json())
  })

  test('a name that was the code follows a new code; a name of its own stays; dropping the code makes it automatic', async ({ ctx, admin }) => {
    const promotion = await createPromotion(ctx, admin, { code: uniqueCode('OLD'), type: 'free_shipping' })
    const renamed = await patch(ctx, admin, promotion.id, { code: 'brand-new' })
    expect(renamed.json()).toMatchObject({ code: 'BRAND-NEW', name: 'BRAND-NEW' })
    const named = await patch(ctx, admin, promotion.id, { name: 'Free shipping weekend' })
    expect(named.json()).toMatchObject({ code: 'BRAND-NEW', name: 'Free shipping weekend' })
    expect((await patch(ctx, admin, promotion.id, { code: 'other-code' })).json()).toMatchObject({ code: 'OTHER-CODE', name: 'Free shipping weekend' })
    const automatic = await patch(ctx, admin, promotion.id, { code: null })
    expect(automatic.statusCode).toBe(200)
    expect(automatic.json()).toMatchObject({ code: null, name: 'Free shipping weekend' })
    // It left the coupons API with its code.
    expect((await ctx.request({ method: 'GET', url: `/api/v1/coupons/${promotion.id}`, token: admin })).statusCode).toBe(404)
  })

  test('a new type needs its value (free_shipping drops it); becoming buy_x_get_y needs its quantities; leaving it drops them', async ({ ctx, admin }) => {
    const promotion = await createPromotion(ctx, admin, { name: 'Shape-shifter', type: 'percentage', value: 20 })
    const url = `${PROMOTIONS}/${promotion.id}`
    const noValue = await expectRefused(ctx, admin, 'PATCH', url, { type: 'buy_x_get_y', buy_x_get_y: { buy_quantity: 2, get_quantity: 1 } }, 'value')
    expect(noValue.message).toBe("Field 'value' is required when changing the type to buy_x_get_y")
    const noQuantities = await expectRefused(ctx, admin, 'PATCH', url, { type: 'buy_x_get_y', value: 100 }, 'buy_x_get_y')
    expect(noQuantities.message).toBe("Field 'buy_x_get_y' is required for buy_x_get_y promotions")
    await expectRefused(ctx, admin, 'PATCH', url, { type: 'buy_x_get_y', value: 100, buy_x_get_y: { buy_quantity: 2 } }, 'buy_x_get_y.get_quantity')
    await expectRefused(ctx, admin, 'PATCH', url, { type: 'buy_x_get_y', value: 100, buy_x_get_y: { get_quantity: 2 } }, 'buy_x_get_y.buy_quantity')
    await expectRefused(ctx, admin, 'PATCH', url, { buy_x_get_y: { buy_quantity: 2, get_quantity: 1 } }, 'buy_x_get_y')
    expect(await getPromotion(ctx, admin, promotion.id)).toEqual(promotion)

    const bxgy = await patch(ctx, admin, promotion.id, { type: 'buy_x_get_y', value: 100, buy_x_get_y: { buy_quantity: 2, get_quantity: 1 } })
    expect(bxgy.statusCode).toBe(200)
    expect(bxgy.json()).toMatchObject({ type: 'buy_x_get_y', value: 100, buy_x_get_y: { buy_quantity: 2, get_quantity: 1, max_applications: null } })
    // The quantities sent replace the current ones, the others stay.
    const more = await patch(ctx, admin, promotion.id, { buy_x_get_y: { get_quantity: 2, max_applications: 4 } })
    expect(more.json().buy_x_get_y).toEqual({ buy_quantity: 2, get_quantity: 2, max_applications: 4 })
    await expectRefused(ctx, admin, 'PATCH', url, { buy_x_get_y: null }, 'buy_x_get_y')
    await expectRefused(ctx, admin, 'PATCH', url, { buy_x_get_y: { buy_quantity: 0 } }, 'buy_x_get_y.buy_quantity')
    await expectRefused(ctx, admin, 'PATCH', url, { value: 101 }, 'value')

    const back = await patch(ctx, admin, promotion.id, { type: 'fixed_amount', value: 4.99, currency: 'USD' })
    expect(back.statusCode).toBe(200)
    expect(back.json()).toMatchObject({ type: 'fixed_amount', value: 4.99, currency: 'USD', buy_x_get_y: null })
    const [row] = await ctx.handle.sql`select percent_off_ppm, amount_off_minor::int, buy_quantity, get_quantity, max_applications from promotions where id = ${promotion.id}`
    expect(row).toEqual({ percent_off_ppm: null, amount_off_minor: 499, buy_quantity: null, get_quantity: null, max_applications: null })
    const free = await patch(ctx, admin, promotion.id, { type: 'free_shipping' })
    expect(free.json()).toMatchObject({ type: 'free_shipping', value: null, currency: 'USD' })
  })

  test('free_shipping with targets is refused, blaming the type when the targets were already there', async ({ ctx, admin }) => {
    const refs = await referencesOf(ctx, admin)
    const promotion = await createPromotion(ctx, admin, { name: 'Targeted', type: 'percentage', value: 10, target: { product_ids: [refs.products[0]!.id] } })
    const url = `${PROMOTIONS}/${promotion.id}`
    const kept = await expectRefused(ctx, admin, 'PATCH', url, { type: 'free_shipping' }, 'type')
    expect(kept.message).toBe("Field 'type' cannot be free_shipping while 'target.product_ids' is not empty")
    await expectRefused(ctx, admin, 'PATCH', url, { type: 'free_shipping', target: { category_ids: [refs.categoryId] } }, 'target.product_ids')
    const fine = await patch(ctx, admin, promotion.id, { type: 'free_shipping', target: { product_ids: [] } })
    expect(fine.statusCode).toBe(200)
    expect(fine.json()).toMatchObject({ type: 'free_shipping', target: { product_ids: [], category_ids: [] } })
    await expectRefused(ctx, admin, 'PATCH', url, { target: { category_ids: [refs.categoryId] } }, 'target.category_ids')
  })

  test('re-validates the merged promotion: currency of a kept amount, ends_at against the kept starts_at, the usage limit', async ({ ctx, admin }) => {
    const promotion = await createPromotion(ctx, admin, { name: 'Merge', type: 'fixed_amount', value: 1.005, currency: 'KWD', starts_at: '2030-01-01T00:00:00Z', usage_limit: 10 })
    const url = `${PROMOTIONS}/${promotion.id}`
    await expectRefused(ctx, admin, 'PATCH', url, { currency: 'USD' }, 'currency')
    await expectRefused(ctx, admin, 'PATCH', url, { currency: null }, 'currency')
    await expectRefused(ctx, admin, 'PATCH', url, { ends_at: '2029-12-31T00:00:00Z' }, 'ends_at')
    await expectRefused(ctx, admin, 'PATCH', url, { value: null }, 'value')
    await expectRefused(ctx, admin, 'PATCH', url, { times_used: 0 }, 'times_used')
    await ctx.handle.sql`update promotions set times_used = 4 where id = ${promotion.id}`
    const limit = await expectRefused(ctx, admin, 'PATCH', url, { usage_limit: 3 }, 'usage_limit')
    expect(limit.message).toBe("Field 'usage_limit' cannot be below times_used (4)")
    expect(await getPromotion(ctx, admin, promotion.id)).toEqual({ ...promotion, times_used: 4 })
    const moved = await patch(ctx, admin, promotion.id, { currency: 'BHD', usage_limit: 4 })
    expect(moved.json()).toMatchObject({ value: 1.005, currency: 'BHD', usage_limit: 4, times_used: 4 })
  })

  test('ids sent are checked; the campaign’s spend currency blames the field that changed', async ({ ctx, admin }) => {
    const refs = await referencesOf(ctx, admin)
    const promotion = await createPromotion(ctx, admin, { code: uniqueCode('CAMP'), type: 'fixed_amount', value: 5, currency: 'USD', campaign_id: refs.usage.id })
    const url = `${PROMOTIONS}/${promotion.id}`
    await expectRefused(ctx, admin, 'PATCH', url, { conditions: { category_ids: [refs.categoryId, UNKNOWN_ID] } }, 'conditions.category_ids[1]')
    await expectRefused(ctx, admin, 'PATCH', url, { campaign_id: UNKNOWN_ID }, 'campaign_id')
    const joining = await expectRefused(ctx, admin, 'PATCH', url, { campaign_id: refs.spendEur.id }, 'campaign_id')
    expect(joining.message).toBe("Field 'campaign_id' names a campaign whose spend budget is in EUR, not in the promotion's USD")
    const joined = await patch(ctx, admin, promotion.id, { campaign_id: refs.spendEur.id, currency: 'EUR' })
    expect(joined.json()).toMatchObject({ campaign_id: refs.spendEur.id, currency: 'EUR', value: 5 })
    await expectRefused(ctx, admin, 'PATCH', url, { currency: 'GBP' }, 'currency')
    // The coupons API keeps the same rule for the same row.
    const coupon = await ctx.request({ method: 'PATCH', url: `/api/v1/coupons/${promotion.id}`, token: admin, payload: { currency: 'GBP' } })
    expect(coupon.statusCode).toBe(400)
    expect(coupon.json().error.details).toEqual([{ field: 'currency', message: "Field 'currency' must be EUR (the currency of the campaign's spend budget) or null, not GBP" }])
    const left = await patch(ctx, admin, promotion.id, { campaign_id: null, currency: 'GBP' })
    expect(left.json()).toMatchObject({ campaign_id: null, currency: 'GBP' })
  })

  test('only the lists sent are checked: a category deleted since it was listed blocks nothing else, and is refused when sent again', async ({ ctx, admin }) => {
    const refs = await referencesOf(ctx, admin)
    const gone = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: 'Soon gone' } })
    const promotion = await createPromotion(ctx, admin, { name: 'Stale', type: 'percentage', value: 5, conditions: { category_ids: [gone.id] } })
    await ctx.expectStatus(204, { method: 'DELETE', url: `/api/v1/categories/${gone.id}`, token: admin })
    const changed = await patch(ctx, admin, promotion.id, { value: 6, conditions: { product_ids: [refs.products[0]!.id] } })
    expect(changed.statusCode).toBe(200)
    expect(changed.json().conditions).toEqual({ product_ids: [refs.products[0]!.id], category_ids: [gone.id], customer_group_ids: [] })
    await expectRefused(ctx, admin, 'PATCH', `${PROMOTIONS}/${promotion.id}`, { conditions: { category_ids: [refs.categoryId, gone.id] } }, 'conditions.category_ids[1]')
  })

  test("another promotion's code in any case answers 409; its own code in another case is fine", async ({ ctx, admin }) => {
    await createPromotion(ctx, admin, { code: 'PATCH-TAKEN', type: 'free_shipping' })
    const promotion = await createPromotion(ctx, admin, { name: 'Automatic rename', type: 'free_shipping' })
    const clash = await patch(ctx, admin, promotion.id, { code: 'patch-taken' })
    expect(clash.statusCode).toBe(409)
    expect(clash.json().error).toMatchObject({ code: 'conflict', message: "A promotion with code 'PATCH-TAKEN' already exists" })
    expect(await getPromotion(ctx, admin, promotion.id)).toEqual(promotion)
    const coded = await patch(ctx, admin, promotion.id, { code: 'mine' })
    expect(coded.json()).toMatchObject({ code: 'MINE', name: 'Automatic rename' })
    expect((await patch(ctx, admin, promotion.id, { code: 'Mine' })).statusCode).toBe(200)
  })

  test('404 unknown, 400 empty or malformed body, 401 anonymous, 403 customer and a read-only key; nothing changes', async ({ ctx, admin, customer }) => {
    const missing = await patch(ctx, admin, UNKNOWN_ID, { is_active: false })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().error).toMatchObject({ code: 'not_found', message: 'Promotion not found' })
    const promotion = await createPromotion(ctx, admin, { name: 'Guarded', type: 'free_shipping' })
    const url = `${PROMOTIONS}/${promotion.id}`
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url, payload: {}, token: admin })
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url, payload: { name: null }, token: admin })
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url, payload: { conditions: { product_ids: 'all' } }, token: admin })
    await ctx.expectError(401, 'unauthorized', { method: 'PATCH', url, payload: { is_active: false } })
    await ctx.expectError(403, 'forbidden', { method: 'PATCH', url, payload: { is_active: false }, token: customer })
    const { key } = await ctx.createApiKey(['promotions:read'])
    await ctx.expectError(403, 'forbidden', { method: 'PATCH', url, payload: { is_active: false }, token: key })
    expect(await getPromotion(ctx, admin, promotion.id)).toEqual(promotion)
  })
})

describe('DELETE /api/v1/promotions/:id', () => {
  test('answers 204 with no body; the promotion is gone and carts holding it lose it', async ({ ctx, admin }) => {
    const promotion = await createPromotion(ctx, admin, { code: uniqueCode('GONE'), type: 'buy_x_get_y', value: 100, buy_x_get_y: { buy_quantity: 1, get_quantity: 1 } })
    const [cart] = await ctx.handle.sql<{ id: string }[]>`insert into carts (id, currency) values (gen_random_uuid(), 'USD') returning id`
    await ctx.handle.sql`insert into cart_coupons (cart_id, coupon_id) values (${cart!.id}, ${promotion.id})`
    const response = await ctx.request({ method: 'DELETE', url: `${PROMOTIONS}/${promotion.id}`, token: admin })
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${PROMOTIONS}/${promotion.id}`, token: admin })
    expect(await ctx.handle.sql`select 1 from cart_coupons where cart_id = ${cart!.id}`).toHaveLength(0)
    const again = await ctx.expectError(404, 'not_found', { method: 'DELETE', url: `${PROMOTIONS}/${promotion.id}`, token: admin })
    expect(again.message).toBe('Promotion not found')
  })

  test('401 anonymous, 403 customer and a read-only key; the promotion stays', async ({ ctx, admin, customer }) => {
    const promotion = await createPromotion(ctx, admin, { name: 'Keep', type: 'free_shipping' })
    const url = `${PROMOTIONS}/${promotion.id}`
    await ctx.expectError(401, 'unauthorized', { method: 'DELETE', url })
    await ctx.expectError(403, 'forbidden', { method: 'DELETE', url, token: customer })
    const { key } = await ctx.createApiKey(['promotions:read'])
    await ctx.expectError(403, 'forbidden', { method: 'DELETE', url, token: key })
    expect(await getPromotion(ctx, admin, promotion.id)).toEqual(promotion)
  })
})

describe('GET /api/v1/promotions/:id/usages', () => {
  test('pages the uses newest first: order, payment, customer, discount in major units, released', async ({ ctx, admin, customer }) => {
    const refs = await referencesOf(ctx, admin)
    const promotion = await createPromotion(ctx, admin, { code: uniqueCode('USED'), type: 'fixed_amount', value: 1.5, currency: 'EUR', campaign_id: refs.spendEur.id })
    const other = await createPromotion(ctx, admin, { name: 'Other', type: 'free_shipping' })
    const { order, payment } = await insertOrder(ctx, { status: 'paid', currency: 'EUR' })
    const usage = (minutesAgo: number, values: Partial<typeof promotionUsages.$inferInsert> = {}) => ({
      promotionId: promotion.id,
      campaignId: refs.spendEur.id,
      paymentId: payment!.id,
      orderId: order.id,
      customerKey: 'ada@example.com',
      discountMinor: 150,
      currency: 'EUR',
      createdAt: new Date(Date.now() - minutesAgo * 60_000),
      ...values,
    })
    const rows = await ctx.handle.db
      .insert(promotionUsages)
      .values([
        usage(30),
        usage(20, { orderId: null, customerKey: null, releasedAt: new Date(), discountMinor: 99 }),
        usage(10, { discountMinor: 1 }),
        usage(5, { promotionId: other.id }),
      ])
      .returning()
    const url = `${PROMOTIONS}/${promotion.id}/usages`
    const body = await ctx.expectStatus<PromotionUsageList>(200, { method: 'GET', url, token: admin })
    expect(body).toEqual({
      usages: [
        { id: rows[2]!.id, order_id: order.id, payment_id: payment!.id, customer: 'ada@example.com', discount: 0.01, currency: 'EUR', released: false, created_at: rows[2]!.createdAt.toISOString() },
        { id: rows[1]!.id, order_id: null, payment_id: payment!.id, customer: null, discount: 0.99, currency: 'EUR', released: true, created_at: rows[1]!.createdAt.toISOString() },
        { id: rows[0]!.id, order_id: order.id, payment_id: payment!.id, customer: 'ada@example.com', discount: 1.5, currency: 'EUR', released: false, created_at: rows[0]!.createdAt.toISOString() },
      ],
      meta: { page: 1, per_page: 20, total: 3, total_pages: 1 },
    })
    const second = await ctx.expectStatus<PromotionUsageList>(200, { method: 'GET', url: `${url}?per_page=2&page=2`, token: admin })
    expect(second).toEqual({ usages: [body.usages[2]], meta: { page: 2, per_page: 2, total: 3, total_pages: 2 } })
    const none = await ctx.expectStatus<PromotionUsageList>(200, { method: 'GET', url: `${PROMOTIONS}/${(await createPromotion(ctx, admin, { name: 'Unused', type: 'free_shipping' })).id}/usages`, token: admin })
    expect(none).toEqual({ usages: [], meta: { page: 1, per_page: 20, total: 0, total_pages: 0 } })

    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${PROMOTIONS}/${UNKNOWN_ID}/usages`, token: admin })
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${PROMOTIONS}/nope/usages`, token: admin })
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${url}?per_page=0`, token: admin })
    await ctx.expectError(401, 'unauthorized', { method: 'GET', url })
    await ctx.expectError(403, 'forbidden', { method: 'GET', url, token: customer })
    const { key } = await ctx.createApiKey(['promotions:read'])
    expect((await ctx.expectStatus<PromotionUsageList>(200, { method: 'GET', url, token: key })).meta).toMatchObject({ total: 3 })

    // Deleting the promotion takes its usage rows with it; the other promotion's stay.
    await ctx.expectStatus(204, { method: 'DELETE', url: `${PROMOTIONS}/${promotion.id}`, token: admin })
    expect(await ctx.handle.sql`select promotion_id from promotion_usages where payment_id = ${payment!.id}`).toEqual([{ promotion_id: other.id }])
  })
})
