/** Campaigns: admin-only CRUD, budgets in money (spend) or orders (usage), and what happens to their promotions. */
import { afterAll, beforeAll, describe, expect } from 'vitest'
import type { Campaign, CampaignList, Promotion } from '@commerce/domain'
import { promotionUsages } from '@commerce/db'
import { createTestContext, test, type TestContext } from './helpers.js'
import { insertOrder } from './order-fixtures.js'

const CAMPAIGNS = '/api/v1/campaigns'
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000cafe'
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

function createCampaign(ctx: TestContext, admin: string, payload: Record<string, unknown>): Promise<Campaign> {
  return ctx.expectStatus(201, { method: 'POST', url: CAMPAIGNS, payload, token: admin })
}

function getCampaign(ctx: TestContext, admin: string, id: string): Promise<Campaign> {
  return ctx.expectStatus(200, { method: 'GET', url: `${CAMPAIGNS}/${id}`, token: admin })
}

function createPromotion(ctx: TestContext, admin: string, payload: Record<string, unknown>): Promise<Promotion> {
  return ctx.expectStatus(201, { method: 'POST', url: '/api/v1/promotions', payload, token: admin })
}

const patch = (ctx: TestContext, admin: string, id: string, payload: Record<string, unknown>) =>
  ctx.request({ method: 'PATCH', url: `${CAMPAIGNS}/${id}`, payload, token: admin })

/** Sends a body that must be refused with 400 validation_error naming `field`; no campaign is added. */
function expectRefused(ctx: TestContext, admin: string, method: 'POST' | 'PATCH', url: string, payload: Record<string, unknown>, field: string) {
  return ctx.expectInvalidField({ method, url, payload, token: admin }, field, 'campaigns')
}

describe('POST /api/v1/campaigns', () => {
  test('creates a campaign with a spend budget: 201 with every field, the limit in major units, stored in minor units', async ({ ctx, admin }) => {
    const body = await createCampaign(ctx, admin, {
      name: 'Black Friday',
      description: 'Everything must go',
      budget: { type: 'spend', limit: 2500.5, currency: 'USD' },
      starts_at: '2030-11-27T00:00:00Z',
      ends_at: '2030-12-01T00:00:00+01:00',
    })
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Black Friday',
      description: 'Everything must go',
      budget: { type: 'spend', limit: 2500.5, used: 0, currency: 'USD' },
      starts_at: '2030-11-27T00:00:00.000Z',
      ends_at: '2030-11-30T23:00:00.000Z',
      promotion_count: 0,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    })
    const [row] = await ctx.handle.sql`select budget_type, budget_limit::int, budget_used::int, currency from campaigns where id = ${body.id}`
    expect(row).toEqual({ budget_type: 'spend', budget_limit: 250050, budget_used: 0, currency: 'USD' })
    expect(await getCampaign(ctx, admin, body.id)).toEqual(body)

    const kwd = await createCampaign(ctx, admin, { name: 'Kuwait', budget: { type: 'spend', limit: 1.005, currency: 'KWD' } })
    expect(kwd.budget).toEqual({ type: 'spend', limit: 1.005, used: 0, currency: 'KWD' })
  })

  test('a usage budget counts orders and has no currency; a campaign may have no budget', async ({ ctx, admin }) => {
    const usage = await createCampaign(ctx, admin, { name: 'First 100 orders', budget: { type: 'usage', limit: 100, currency: null } })
    expect(usage.budget).toEqual({ type: 'usage', limit: 100, used: 0, currency: null })
    const [row] = await ctx.handle.sql`select budget_type, budget_limit::int, currency from campaigns where id = ${usage.id}`
    expect(row).toEqual({ budget_type: 'usage', budget_limit: 100, currency: null })
    const none = await createCampaign(ctx, admin, { name: 'No budget' })
    expect(none).toMatchObject({ name: 'No budget', description: null, budget: null, starts_at: null, ends_at: null, promotion_count: 0 })
    expect((await createCampaign(ctx, admin, { name: 'Null budget', budget: null })).budget).toBeNull()
  })

  test('refuses a spend budget without a known currency, a limit of 0 or below or too precise, and a usage budget that is not a whole number or has a currency', async ({ ctx, admin }) => {
    const post = (payload: Record<string, unknown>, field: string) => expectRefused(ctx, admin, 'POST', CAMPAIGNS, { name: 'Refused', ...payload }, field)
    expect((await post({ budget: { type: 'spend', limit: 10 } }, 'budget.currency')).message).toBe("Field 'budget.currency' is required for spend budgets")
    await post({ budget: { type: 'spend', limit: 10, currency: null } }, 'budget.currency')
    expect((await post({ budget: { type: 'spend', limit: 10, currency: 'XYZ' } }, 'budget.currency')).message).toBe(
      "Field 'budget.currency' is not a known ISO 4217 currency: XYZ",
    )
    await post({ budget: { type: 'spend', limit: 10, currency: 'usd' } }, 'budget.currency')
    await post({ budget: { type: 'spend', limit: 0, currency: 'USD' } }, 'budget.limit')
    await post({ budget: { type: 'spend', limit: -5, currency: 'USD' } }, 'budget.limit')
    expect((await post({ budget: { type: 'spend', limit: 10.001, currency: 'USD' } }, 'budget.limit')).message).toContain('USD amounts have at most')
    await post({ budget: { type: 'spend', limit: 10.5, currency: 'JPY' } }, 'budget.limit')
    await post({ budget: { type: 'spend', limit: 1e300, currency: 'USD' } }, 'budget.limit')
    expect((await post({ budget: { type: 'usage', limit: 2.5 } }, 'budget.limit')).message).toContain('must be a whole number of orders')
    await post({ budget: { type: 'usage', limit: 1e300 } }, 'budget.limit')
    expect((await post({ budget: { type: 'usage', limit: 5, currency: 'USD' } }, 'budget.currency')).message).toBe(
      "Field 'budget.currency' must be null for usage budgets",
    )
    await post({ budget: { limit: 5 } }, 'budget.type')
    await post({ budget: { type: 'usage' } }, 'budget.limit')
    await post({ budget: { type: 'money', limit: 5 } }, 'budget.type')
    await post({ budget: { type: 'usage', limit: '5' } }, 'budget.limit')
    await post({ budget: { type: 'usage', limit: 5, used: 1 } }, 'budget.used')
  })

  test('refuses a missing or empty name, ends_at not after starts_at, bad dates and read-only or unknown fields', async ({ ctx, admin }) => {
    const missing = await expectRefused(ctx, admin, 'POST', CAMPAIGNS, {}, 'name')
    expect(missing.message).toBe("Field 'name' is required")
    await expectRefused(ctx, admin, 'POST', CAMPAIGNS, { name: '' }, 'name')
    await expectRefused(ctx, admin, 'POST', CAMPAIGNS, { name: 'x'.repeat(201) }, 'name')
    await expectRefused(ctx, admin, 'POST', CAMPAIGNS, { name: 'x', description: 'y'.repeat(2001) }, 'description')
    const dates = await expectRefused(ctx, admin, 'POST', CAMPAIGNS, { name: 'x', starts_at: '2030-06-01T00:00:00Z', ends_at: '2030-06-01T00:00:00Z' }, 'ends_at')
    expect(dates.message).toBe("Field 'ends_at' must be after 'starts_at'")
    await expectRefused(ctx, admin, 'POST', CAMPAIGNS, { name: 'x', starts_at: 'soon' }, 'starts_at')
    await expectRefused(ctx, admin, 'POST', CAMPAIGNS, { name: 'x', ends_at: '0000-01-01T00:00:00Z' }, 'ends_at')
    await expectRefused(ctx, admin, 'POST', CAMPAIGNS, { name: 'x', promotion_count: 3 }, 'promotion_count')
    await expectRefused(ctx, admin, 'POST', CAMPAIGNS, { name: 'x', id: UNKNOWN_ID }, 'id')
    const malformed = await ctx.request({ method: 'POST', url: CAMPAIGNS, token: admin, headers: { 'content-type': 'application/json' }, payload: '{"name":' })
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().error.code).toBe('validation_error')
  })

  test('401 anonymous, 403 customer and keys without promotions:write; a promotions:write key may', async ({ ctx, customer }) => {
    const before = await ctx.countRows('campaigns')
    const payload = { name: 'Guarded' }
    await ctx.expectError(401, 'unauthorized', { method: 'POST', url: CAMPAIGNS, payload })
    await ctx.expectError(403, 'forbidden', { method: 'POST', url: CAMPAIGNS, payload, token: customer })
    for (const scopes of [['promotions:read'], ['coupons:write']]) {
      const { key } = await ctx.createApiKey(scopes)
      await ctx.expectError(403, 'forbidden', { method: 'POST', url: CAMPAIGNS, payload, token: key })
    }
    expect(await ctx.countRows('campaigns')).toBe(before)
    const { key } = await ctx.createApiKey(['promotions:write'])
    expect((await ctx.expectStatus<Campaign>(201, { method: 'POST', url: CAMPAIGNS, payload, token: key })).name).toBe('Guarded')
  })
})

describe('GET /api/v1/campaigns/:id', () => {
  test('counts its promotions; 404 unknown, 400 malformed, 401 anonymous, 403 customer', async ({ ctx, admin, customer }) => {
    const campaign = await createCampaign(ctx, admin, { name: 'Counted' })
    await createPromotion(ctx, admin, { name: 'One', type: 'free_shipping', campaign_id: campaign.id })
    await createPromotion(ctx, admin, { code: 'COUNTED-2', type: 'percentage', value: 5, campaign_id: campaign.id })
    await createPromotion(ctx, admin, { name: 'Elsewhere', type: 'free_shipping' })
    expect(await getCampaign(ctx, admin, campaign.id)).toEqual({ ...campaign, promotion_count: 2 })
    const missing = await ctx.expectError(404, 'not_found', { method: 'GET', url: `${CAMPAIGNS}/${UNKNOWN_ID}`, token: admin })
    expect(missing.message).toBe('Campaign not found')
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${CAMPAIGNS}/nope`, token: admin })
    await ctx.expectError(401, 'unauthorized', { method: 'GET', url: `${CAMPAIGNS}/${campaign.id}` })
    await ctx.expectError(403, 'forbidden', { method: 'GET', url: `${CAMPAIGNS}/${campaign.id}`, token: customer })
    const { key } = await ctx.createApiKey(['promotions:read'])
    expect((await ctx.expectStatus<Campaign>(200, { method: 'GET', url: `${CAMPAIGNS}/${campaign.id}`, token: key })).promotion_count).toBe(2)
  })
})

describe('GET /api/v1/campaigns', () => {
  let own: TestContext
  let ownAdmin: string
  const created: Campaign[] = []

  beforeAll(async () => {
    own = await createTestContext()
    ownAdmin = (await own.signIn('admin')).token
    for (const payload of [{ name: 'First' }, { name: 'Second', budget: { type: 'usage', limit: 10 } }, { name: 'Third', budget: { type: 'spend', limit: 99.99, currency: 'GBP' } }]) {
      created.push(await own.expectStatus<Campaign>(201, { method: 'POST', url: CAMPAIGNS, token: ownAdmin, payload }))
    }
    for (const name of ['A', 'B', 'C']) {
      await own.expectStatus(201, { method: 'POST', url: '/api/v1/promotions', token: ownAdmin, payload: { name, type: 'free_shipping', campaign_id: created[1]!.id } })
    }
    await own.expectStatus(201, { method: 'POST', url: '/api/v1/promotions', token: ownAdmin, payload: { name: 'D', type: 'free_shipping', campaign_id: created[2]!.id } })
  })
  afterAll(() => own.close())

  const list = (query = '') => own.expectStatus<CampaignList>(200, { method: 'GET', url: `${CAMPAIGNS}${query}`, token: ownAdmin })

  test('lists every campaign newest first with its promotion count', async () => {
    expect(await list()).toEqual({
      campaigns: [
        { ...created[2], promotion_count: 1 },
        { ...created[1], promotion_count: 3 },
        { ...created[0], promotion_count: 0 },
      ],
      meta: { page: 1, per_page: 20, total: 3, total_pages: 1 },
    })
  })

  test('pages with per_page, and refuses bad page bounds', async () => {
    expect(await list('?per_page=2&page=2')).toEqual({ campaigns: [created[0]], meta: { page: 2, per_page: 2, total: 3, total_pages: 2 } })
    for (const [query, field] of [['?per_page=101', 'per_page'], ['?page=0', 'page'], ['?per_page=x', 'per_page']] as const) {
      const error = await own.expectError(400, 'validation_error', { method: 'GET', url: `${CAMPAIGNS}${query}`, token: ownAdmin })
      expect(error.details).toContainEqual(expect.objectContaining({ field }))
    }
  })

  test('401 anonymous, 403 customer and a key of another scope; a read key may', async () => {
    await own.expectError(401, 'unauthorized', { method: 'GET', url: CAMPAIGNS })
    await own.expectError(403, 'forbidden', { method: 'GET', url: CAMPAIGNS, token: (await own.signIn('customer')).token })
    await own.expectError(403, 'forbidden', { method: 'GET', url: CAMPAIGNS, token: (await own.createApiKey(['coupons:read'])).key })
    expect((await own.expectStatus<CampaignList>(200, { method: 'GET', url: CAMPAIGNS, token: (await own.createApiKey(['read'])).key })).meta).toMatchObject({ total: 3 })
  })
})

describe('PATCH /api/v1/campaigns/:id', () => {
  test('changes only what is sent; ends_at is checked against the kept starts_at', async ({ ctx, admin }) => {
    const campaign = await createCampaign(ctx, admin, { name: 'Edit me', starts_at: '2030-01-01T00:00:00Z' })
    const response = await patch(ctx, admin, campaign.id, { name: 'Edited', description: 'Now described', ends_at: '2030-02-01T00:00:00Z' })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({
      ...campaign,
      name: 'Edited',
      description: 'Now described',
      ends_at: '2030-02-01T00:00:00.000Z',
      updated_at: expect.stringMatching(ISO),
    })
    await expectRefused(ctx, admin, 'PATCH', `${CAMPAIGNS}/${campaign.id}`, { ends_at: '2029-12-31T00:00:00Z' }, 'ends_at')
    await expectRefused(ctx, admin, 'PATCH', `${CAMPAIGNS}/${campaign.id}`, { name: null }, 'name')
    const cleared = await patch(ctx, admin, campaign.id, { description: null, starts_at: null })
    expect(cleared.json()).toMatchObject({ description: null, starts_at: null, ends_at: '2030-02-01T00:00:00.000Z' })
    expect(await getCampaign(ctx, admin, campaign.id)).toEqual(cleared.json())
  })

  test('budget fields sent replace the current ones; a new currency keeps the limit shown, refused if it does not fit', async ({ ctx, admin }) => {
    const campaign = await createCampaign(ctx, admin, { name: 'Budgeted', budget: { type: 'spend', limit: 10.5, currency: 'USD' } })
    const url = `${CAMPAIGNS}/${campaign.id}`
    expect((await patch(ctx, admin, campaign.id, { budget: { limit: 20 } })).json().budget).toEqual({ type: 'spend', limit: 20, used: 0, currency: 'USD' })
    await patch(ctx, admin, campaign.id, { budget: { limit: 10.5 } })
    const moved = await patch(ctx, admin, campaign.id, { budget: { currency: 'EUR' } })
    expect(moved.json().budget).toEqual({ type: 'spend', limit: 10.5, used: 0, currency: 'EUR' })
    await expectRefused(ctx, admin, 'PATCH', url, { budget: { currency: 'JPY' } }, 'budget.currency')
    await expectRefused(ctx, admin, 'PATCH', url, { budget: { currency: null } }, 'budget.currency')
    await expectRefused(ctx, admin, 'PATCH', url, { budget: { limit: 0 } }, 'budget.limit')
    await expectRefused(ctx, admin, 'PATCH', url, { budget: { limit: 10.555 } }, 'budget.limit')
    await expectRefused(ctx, admin, 'PATCH', url, { budget: { used: 0 } }, 'budget.used')
    // A new type needs its own limit: orders are not money.
    const typeOnly = await expectRefused(ctx, admin, 'PATCH', url, { budget: { type: 'usage' } }, 'budget.limit')
    expect(typeOnly.message).toBe("Field 'budget.limit' is required when changing the budget type")
    const usage = await patch(ctx, admin, campaign.id, { budget: { type: 'usage', limit: 50 } })
    expect(usage.json().budget).toEqual({ type: 'usage', limit: 50, used: 0, currency: null })
    await expectRefused(ctx, admin, 'PATCH', url, { budget: { currency: 'USD' } }, 'budget.currency')
    const removed = await patch(ctx, admin, campaign.id, { budget: null })
    expect(removed.json().budget).toBeNull()
    expect((await expectRefused(ctx, admin, 'PATCH', url, { budget: { limit: 5 } }, 'budget.type')).message).toBe("Field 'budget.type' is required")
    expect((await expectRefused(ctx, admin, 'PATCH', url, { budget: { type: 'usage' } }, 'budget.limit')).message).toBe("Field 'budget.limit' is required")
    const [row] = await ctx.handle.sql`select budget_type, budget_limit, currency from campaigns where id = ${campaign.id}`
    expect(row).toEqual({ budget_type: null, budget_limit: null, currency: null })
  })

  test('once some of the budget is used: the limit not below it, and its type and currency stay', async ({ ctx, admin }) => {
    const campaign = await createCampaign(ctx, admin, { name: 'Running', budget: { type: 'spend', limit: 100, currency: 'EUR' } })
    const url = `${CAMPAIGNS}/${campaign.id}`
    await ctx.handle.sql`update campaigns set budget_used = 1250 where id = ${campaign.id}`
    expect((await getCampaign(ctx, admin, campaign.id)).budget).toEqual({ type: 'spend', limit: 100, used: 12.5, currency: 'EUR' })
    const below = await expectRefused(ctx, admin, 'PATCH', url, { budget: { limit: 12.49 } }, 'budget.limit')
    expect(below.message).toBe("Field 'budget.limit' cannot be below what is used (12.5)")
    expect((await expectRefused(ctx, admin, 'PATCH', url, { budget: { type: 'usage', limit: 100 } }, 'budget.type')).message).toBe(
      "Field 'budget.type' cannot change once some of the budget is used (12.5)",
    )
    await expectRefused(ctx, admin, 'PATCH', url, { budget: { currency: 'USD' } }, 'budget.currency')
    expect((await expectRefused(ctx, admin, 'PATCH', url, { budget: null }, 'budget')).message).toBe(
      "Field 'budget' cannot be removed once some of it is used (12.5)",
    )
    const atUsed = await patch(ctx, admin, campaign.id, { budget: { limit: 12.5, currency: 'EUR' } })
    expect(atUsed.statusCode).toBe(200)
    expect(atUsed.json().budget).toEqual({ type: 'spend', limit: 12.5, used: 12.5, currency: 'EUR' })

    const orders = await createCampaign(ctx, admin, { name: 'Counting', budget: { type: 'usage', limit: 10 } })
    await ctx.handle.sql`update campaigns set budget_used = 7 where id = ${orders.id}`
    expect((await expectRefused(ctx, admin, 'PATCH', `${CAMPAIGNS}/${orders.id}`, { budget: { limit: 6 } }, 'budget.limit')).message).toBe(
      "Field 'budget.limit' cannot be below what is used (7)",
    )
  })

  test('a spend budget must be in the currency of every promotion of the campaign that has one', async ({ ctx, admin }) => {
    const campaign = await createCampaign(ctx, admin, { name: 'Mixed', budget: { type: 'usage', limit: 10 } })
    await createPromotion(ctx, admin, { name: 'Dollars off', type: 'fixed_amount', value: 5, currency: 'USD', campaign_id: campaign.id })
    await createPromotion(ctx, admin, { name: 'Any currency', type: 'percentage', value: 5, campaign_id: campaign.id })
    const url = `${CAMPAIGNS}/${campaign.id}`
    const refused = await expectRefused(ctx, admin, 'PATCH', url, { budget: { type: 'spend', limit: 100, currency: 'EUR' } }, 'budget.currency')
    expect(refused.message).toBe("Field 'budget.currency' must be the currency of the campaign's promotions: 'Dollars off' is in USD")
    const spend = await patch(ctx, admin, campaign.id, { budget: { type: 'spend', limit: 100, currency: 'USD' } })
    expect(spend.statusCode).toBe(200)
    expect(spend.json()).toMatchObject({ budget: { type: 'spend', limit: 100, used: 0, currency: 'USD' }, promotion_count: 2 })
    await expectRefused(ctx, admin, 'PATCH', url, { budget: { currency: 'EUR' } }, 'budget.currency')
  })

  test('404 unknown, 400 empty body, 401 anonymous, 403 customer and a read-only key; nothing changes', async ({ ctx, admin, customer }) => {
    const missing = await patch(ctx, admin, UNKNOWN_ID, { name: 'Ghost' })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().error).toMatchObject({ code: 'not_found', message: 'Campaign not found' })
    const campaign = await createCampaign(ctx, admin, { name: 'Guarded' })
    const url = `${CAMPAIGNS}/${campaign.id}`
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url, payload: {}, token: admin })
    await ctx.expectError(401, 'unauthorized', { method: 'PATCH', url, payload: { name: 'x' } })
    await ctx.expectError(403, 'forbidden', { method: 'PATCH', url, payload: { name: 'x' }, token: customer })
    await ctx.expectError(403, 'forbidden', { method: 'PATCH', url, payload: { name: 'x' }, token: (await ctx.createApiKey(['promotions:read'])).key })
    expect(await getCampaign(ctx, admin, campaign.id)).toEqual(campaign)
  })
})

describe('DELETE /api/v1/campaigns/:id', () => {
  test('answers 204; its promotions stay, out of any campaign, and their usage rows lose the campaign only', async ({ ctx, admin }) => {
    const campaign = await createCampaign(ctx, admin, { name: 'Ending', budget: { type: 'spend', limit: 50, currency: 'EUR' } })
    const promotion = await createPromotion(ctx, admin, { code: 'ENDING-10', type: 'percentage', value: 10, campaign_id: campaign.id })
    const other = await createPromotion(ctx, admin, { name: 'Ending auto', type: 'free_shipping', campaign_id: campaign.id })
    const { payment } = await insertOrder(ctx, { status: 'paid', currency: 'EUR' })
    await ctx.handle.db.insert(promotionUsages).values({ promotionId: promotion.id, campaignId: campaign.id, paymentId: payment!.id, discountMinor: 100, currency: 'EUR' })

    const response = await ctx.request({ method: 'DELETE', url: `${CAMPAIGNS}/${campaign.id}`, token: admin })
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${CAMPAIGNS}/${campaign.id}`, token: admin })
    for (const kept of [promotion, other]) {
      const after = await ctx.expectStatus<Promotion>(200, { method: 'GET', url: `/api/v1/promotions/${kept.id}`, token: admin })
      // The use held counts in times_used (an unlimited promotion's uses are counted as it is read).
      expect(after).toEqual({ ...kept, campaign_id: null, times_used: kept === promotion ? 1 : 0, updated_at: expect.stringMatching(ISO) })
      expect(after.updated_at > kept.updated_at).toBe(true)
    }
    expect(await ctx.handle.sql`select promotion_id, campaign_id from promotion_usages where payment_id = ${payment!.id}`).toEqual([
      { promotion_id: promotion.id, campaign_id: null },
    ])
    const again = await ctx.expectError(404, 'not_found', { method: 'DELETE', url: `${CAMPAIGNS}/${campaign.id}`, token: admin })
    expect(again.message).toBe('Campaign not found')
  })

  test('401 anonymous, 403 customer and a read-only key; the campaign stays', async ({ ctx, admin, customer }) => {
    const campaign = await createCampaign(ctx, admin, { name: 'Keep' })
    const url = `${CAMPAIGNS}/${campaign.id}`
    await ctx.expectError(401, 'unauthorized', { method: 'DELETE', url })
    await ctx.expectError(403, 'forbidden', { method: 'DELETE', url, token: customer })
    await ctx.expectError(403, 'forbidden', { method: 'DELETE', url, token: (await ctx.createApiKey(['promotions:read'])).key })
    expect(await getCampaign(ctx, admin, campaign.id)).toEqual(campaign)
  })
})
