/**
 * Prices for several markets on real carts and checkouts: a product's prices per currency and
 * quantity, price lists (sale, override, customer groups, windows), automatic and code promotions
 * (buy X get Y, stacking, per-customer limits) and campaign budgets under concurrent checkouts.
 * Each test works in a currency of its own: automatic promotions reach every cart of their
 * currency, and the file's tests share one database.
 */
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { eq } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import type { Cart, Checkout, Order, Product } from '@commerce/domain'
import { campaigns, customerGroupMembers, customerGroups, lockCheckout, priceLists, prices, promotions, reacquireReservation } from '@commerce/db'
import { test, type TestContext } from './helpers.js'

const ADDRESS = { first_name: 'Ada', last_name: 'Lovelace', line1: '12 St James Sq', city: 'London', postal_code: 'SW1Y 4JH', country: 'GB' }
const VISA = { payment: { method: 'card', token: 'tok_visa' } }
const HOUR = 3_600_000

type NewPromotion = Partial<typeof promotions.$inferInsert> & Pick<typeof promotions.$inferInsert, 'type'>

async function product(ctx: TestContext, admin: string, payload: Record<string, unknown>): Promise<Product> {
  return ctx.expectStatus(201, { method: 'POST', url: '/api/v1/products', payload: { inventory_quantity: 100, ...payload }, token: admin })
}

async function category(ctx: TestContext, admin: string, name: string): Promise<string> {
  return (await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/categories', payload: { name: `${name} ${randomUUID().slice(0, 8)}` }, token: admin })).id
}

async function promotion(ctx: TestContext, values: NewPromotion): Promise<string> {
  const [row] = await ctx.handle.db.insert(promotions).values({ name: values.code ?? 'Automatic', ...values }).returning({ id: promotions.id })
  // Written past the API: the instance reads its pricing rules again, as the database's notification has it do.
  await ctx.app.pricingRules.refresh()
  return row!.id
}

async function cart(ctx: TestContext, currency: string, lines: [Product, number][], token?: string): Promise<Cart> {
  const auth = token ? { token } : {}
  const created = await ctx.expectStatus<Cart>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency }, ...auth })
  let view = created
  for (const [item, quantity] of lines) {
    view = await ctx.expectStatus<Cart>(201, { method: 'POST', url: `/api/v1/carts/${created.id}/items`, payload: { product_id: item.id, quantity }, ...auth })
  }
  return view
}

const itemOf = (view: Cart, productId: string) => view.items.find((item) => item.product_id === productId)!

async function openCheckout(ctx: TestContext, cartId: string, email = 'ada@example.com', token?: string): Promise<string> {
  const auth = token ? { token } : {}
  const checkout = await ctx.expectStatus<Checkout>(201, {
    method: 'POST',
    url: '/api/v1/checkouts',
    payload: { cart_id: cartId, email, shipping_address: ADDRESS },
    ...auth,
  })
  return checkout.id
}

function complete(ctx: TestContext, checkoutId: string, token?: string, payment = VISA) {
  const auth = token ? { token } : {}
  return ctx.request({
    method: 'POST',
    url: `/api/v1/checkouts/${checkoutId}/complete`,
    payload: payment,
    headers: { 'idempotency-key': randomUUID() },
    ...auth,
  })
}

async function checkOut(ctx: TestContext, cartId: string, email = 'ada@example.com', token?: string, payment = VISA) {
  return complete(ctx, await openCheckout(ctx, cartId, email, token), token, payment)
}

describe('prices per currency and quantity', () => {
  test('a product sells in another currency only where it has a base price there, with its quantity tiers', async ({ ctx, admin }) => {
    const mug = await product(ctx, admin, { title: 'Mug', price: 10, currency: 'USD' })
    await ctx.handle.db.insert(prices).values([
      { productId: mug.id, currency: 'EUR', amountMinor: 900 },
      { productId: mug.id, currency: 'EUR', amountMinor: 800, minQuantity: 5 },
      { productId: mug.id, currency: 'USD', amountMinor: 850, minQuantity: 10 },
    ])
    const euros = await cart(ctx, 'EUR', [[mug, 2]])
    expect(itemOf(euros, mug.id)).toMatchObject({ unit_price: 9, original_unit_price: 9, price_list_id: null, line_total: 18 })
    const tier = await ctx.expectStatus<Cart>(201, { method: 'POST', url: `/api/v1/carts/${euros.id}/items`, payload: { product_id: mug.id, quantity: 3 } })
    expect(itemOf(tier, mug.id)).toMatchObject({ quantity: 5, unit_price: 8, line_total: 40 })
    expect(tier.totals).toMatchObject({ subtotal: 40, total: 40 })

    // The product's own price is its price in its own currency from one unit; tiers there too.
    const dollars = await cart(ctx, 'USD', [[mug, 10]])
    expect(itemOf(dollars, mug.id)).toMatchObject({ unit_price: 8.5, original_unit_price: 8.5, line_total: 85 })

    const pounds = await ctx.expectStatus<Cart>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: 'GBP' } })
    const refused = await ctx.expectError(400, 'currency_mismatch', { method: 'POST', url: `/api/v1/carts/${pounds.id}/items`, payload: { product_id: mug.id, quantity: 1 } })
    expect(refused.message).toBe("The product has no price in GBP, the cart's currency (it is priced in USD)")
  })

  test('a line whose price in the cart currency is removed later shows other_currency and counts 0', async ({ ctx, admin }) => {
    const mug = await product(ctx, admin, { title: 'Travel mug', price: 10, currency: 'USD' })
    const [price] = await ctx.handle.db.insert(prices).values({ productId: mug.id, currency: 'CAD', amountMinor: 1300 }).returning()
    const view = await cart(ctx, 'CAD', [[mug, 1]])
    await ctx.handle.sql`delete from prices where id = ${price!.id}`
    const after = await ctx.expectStatus<Cart>(200, { method: 'GET', url: `/api/v1/carts/${view.id}` })
    expect(itemOf(after, mug.id)).toMatchObject({ available: false, line_total: 0, problem: { code: 'other_currency' } })
    expect(after.totals.total).toBe(0)
  })
})

describe('price lists', () => {
  test('the lowest applicable price wins: a sale list in its window, not one outside it; an override replaces the base even when higher', async ({ ctx, admin }) => {
    const lamp = await product(ctx, admin, { title: 'Lamp', price: 50, currency: 'CHF' })
    const now = Date.now()
    const [sale, later, override] = await ctx.handle.db
      .insert(priceLists)
      .values([
        { name: 'Summer sale', type: 'sale' },
        { name: 'Next week', type: 'sale', startsAt: new Date(now + 7 * 24 * HOUR) },
        { name: 'Premium market', type: 'override', priority: 1 },
      ])
      .returning()
    await ctx.handle.db.insert(prices).values([
      { productId: lamp.id, priceListId: sale!.id, currency: 'CHF', amountMinor: 4000 },
      { productId: lamp.id, priceListId: later!.id, currency: 'CHF', amountMinor: 1000 },
    ])
    const view = await cart(ctx, 'CHF', [[lamp, 1]])
    expect(itemOf(view, lamp.id)).toMatchObject({ unit_price: 40, original_unit_price: 50, price_list_id: sale!.id })

    // An override above the base and above the sale: the sale still wins, being lower.
    await ctx.handle.db.insert(prices).values({ productId: lamp.id, priceListId: override!.id, currency: 'CHF', amountMinor: 6000 })
    expect(itemOf(await ctx.expectStatus<Cart>(200, { method: 'GET', url: `/api/v1/carts/${view.id}` }), lamp.id)).toMatchObject({
      unit_price: 40,
      price_list_id: sale!.id,
    })
    // Without the sale, the override replaces the base price.
    await ctx.handle.sql`update price_lists set is_active = false where id = ${sale!.id}`
    await ctx.app.pricingRules.refresh()
    expect(itemOf(await ctx.expectStatus<Cart>(200, { method: 'GET', url: `/api/v1/carts/${view.id}` }), lamp.id)).toMatchObject({
      unit_price: 60,
      original_unit_price: 50,
      price_list_id: override!.id,
    })
  })

  test("a list for a customer group prices only its members' carts", async ({ ctx, admin }) => {
    const crate = await product(ctx, admin, { title: 'Crate', price: 20, currency: 'SEK' })
    const [group] = await ctx.handle.db.insert(customerGroups).values({ name: `Trade ${randomUUID().slice(0, 8)}` }).returning()
    const [list] = await ctx.handle.db.insert(priceLists).values({ name: 'Trade prices', customerGroupIds: [group!.id] }).returning()
    await ctx.handle.db.insert(prices).values({ productId: crate.id, priceListId: list!.id, currency: 'SEK', amountMinor: 1500 })
    const member = await ctx.signIn('customer')
    await ctx.handle.db.insert(customerGroupMembers).values({ groupId: group!.id, customerId: member.customerId! })
    const stranger = await ctx.signIn('customer')

    expect(itemOf(await cart(ctx, 'SEK', [[crate, 1]], member.token), crate.id)).toMatchObject({ unit_price: 15, price_list_id: list!.id })
    expect(itemOf(await cart(ctx, 'SEK', [[crate, 1]], stranger.token), crate.id)).toMatchObject({ unit_price: 20, price_list_id: null })
    expect(itemOf(await cart(ctx, 'SEK', [[crate, 1]]), crate.id)).toMatchObject({ unit_price: 20 })
  })
})

describe('promotions on carts', () => {
  test('an automatic promotion applies to every cart of its currency, explained per line; the order keeps it', async ({ ctx, admin }) => {
    const a = await product(ctx, admin, { title: 'Pen', price: 3.33, currency: 'NOK' })
    const b = await product(ctx, admin, { title: 'Ink', price: 6.67, currency: 'NOK' })
    const id = await promotion(ctx, { name: 'Ten off everything', type: 'percentage', percentOffPpm: 100_000, currency: 'NOK' })
    const view = await cart(ctx, 'NOK', [[a, 1], [b, 1]])
    expect(view.totals).toMatchObject({ subtotal: 10, discount: 1, total: 9 })
    expect(view.promotions).toEqual([
      {
        id,
        code: null,
        name: 'Ten off everything',
        type: 'percentage',
        discount: 1,
        shipping_discount: 0,
        lines: expect.arrayContaining([
          { item_id: itemOf(view, a.id).id, discount: 0.33 },
          { item_id: itemOf(view, b.id).id, discount: 0.67 },
        ]),
      },
    ])
    expect(view.coupons).toEqual([])

    const placed = await checkOut(ctx, view.id)
    expect(placed.statusCode).toBe(201)
    const order = placed.json<Order>()
    expect(order.totals).toMatchObject({ discount: 1, total: 9 })
    expect(order.promotions).toEqual([{ id, code: null, name: 'Ten off everything', type: 'percentage', discount: 1, shipping_discount: 0 }])
    expect(order.coupons).toEqual([])
    const uses = await ctx.handle.sql<{ order_id: string; discount_minor: number; released_at: Date | null }[]>`
      select order_id, discount_minor::int, released_at from promotion_usages where promotion_id = ${id}`
    expect(uses).toEqual([{ order_id: order.id, discount_minor: 100, released_at: null }])
    expect((await ctx.expectStatus<{ times_used: number }>(200, { method: 'GET', url: `/api/v1/promotions/${id}`, token: admin })).times_used).toBe(1)
  })

  test('buy 2 get 1 free in a category: the cheapest unit is given, whatever the order of the lines', async ({ ctx, admin }) => {
    const shirts = await category(ctx, admin, 'Shirts')
    const [s10, s20, s30] = await Promise.all(
      [10, 20, 30].map((price) => product(ctx, admin, { title: `Shirt ${price}`, price, currency: 'DKK', category_ids: [shirts] })),
    )
    const hat = await product(ctx, admin, { title: 'Hat', price: 5, currency: 'DKK' })
    await promotion(ctx, {
      name: 'Three for two',
      type: 'buy_x_get_y',
      percentOffPpm: 1_000_000,
      buyQuantity: 2,
      getQuantity: 1,
      conditionCategoryIds: [shirts],
      currency: 'DKK',
    })
    for (const order of [[s30!, s10!, hat, s20!], [hat, s10!, s20!, s30!]]) {
      const view = await cart(ctx, 'DKK', order.map((item): [Product, number] => [item, 1]))
      expect(view.totals).toMatchObject({ subtotal: 65, discount: 10, total: 55 })
      expect(itemOf(view, s10!.id).discount).toBe(10)
      expect(view.promotions[0]!.lines).toEqual([{ item_id: itemOf(view, s10!.id).id, discount: 10 }])
    }
  })

  test('a buy X get Y made through the promotions API and applied by its code: two mugs bought, the third at half price', async ({ ctx, admin }) => {
    const mug = await product(ctx, admin, { title: 'Stoneware mug', price: 12, currency: 'ISK' })
    await ctx.expectStatus(201, {
      method: 'POST',
      url: '/api/v1/promotions',
      token: admin,
      payload: {
        code: 'mugs3isk',
        name: 'Third mug half price',
        type: 'buy_x_get_y',
        value: 50,
        currency: 'ISK',
        conditions: { product_ids: [mug.id] },
        buy_x_get_y: { buy_quantity: 2, get_quantity: 1, max_applications: 1 },
      },
    })
    const view = await cart(ctx, 'ISK', [[mug, 7]])
    const applied = await ctx.expectStatus<Cart>(201, { method: 'POST', url: `/api/v1/carts/${view.id}/coupons`, payload: { code: 'MUGS3ISK' } })
    // ISK has no minor units: one of seven mugs at half of 12, once (max_applications 1).
    expect(applied.totals).toMatchObject({ subtotal: 84, discount: 6, total: 78 })
    expect(applied.coupons).toEqual([expect.objectContaining({ code: 'MUGS3ISK', type: 'buy_x_get_y', value: 50, discount: 6, applicable: true })])
  })

  test('an exclusive promotion that saves more wins over the combinable ones; a code that loses is refused with the reason', async ({ ctx, admin }) => {
    const sofa = await product(ctx, admin, { title: 'Sofa', price: 100, currency: 'PLN' })
    await promotion(ctx, { name: 'Five off', type: 'fixed_amount', amountOffMinor: 500, currency: 'PLN' })
    await promotion(ctx, { name: 'Ten percent', type: 'percentage', percentOffPpm: 100_000, currency: 'PLN' })
    const half = await promotion(ctx, { name: 'Half price', code: 'HALFPLN', type: 'percentage', percentOffPpm: 500_000, currency: 'PLN', stacking: 'exclusive' })
    const small = await promotion(ctx, { name: 'Tiny', code: 'TINYPLN', type: 'percentage', percentOffPpm: 10_000, currency: 'PLN', stacking: 'exclusive' })
    const view = await cart(ctx, 'PLN', [[sofa, 1]])
    // 10 % then 5.00: 15.00 off together.
    expect(view.totals).toMatchObject({ discount: 15, total: 85 })
    const withHalf = await ctx.expectStatus<Cart>(201, { method: 'POST', url: `/api/v1/carts/${view.id}/coupons`, payload: { code: 'halfpln' } })
    expect(withHalf.totals).toMatchObject({ discount: 50, total: 50 })
    expect(withHalf.promotions.map((entry) => entry.id)).toEqual([half])
    expect(withHalf.coupons).toEqual([expect.objectContaining({ code: 'HALFPLN', applicable: true, discount: 50 })])
    const refused = await ctx.expectError(400, 'coupon_invalid', { method: 'POST', url: `/api/v1/carts/${view.id}/coupons`, payload: { code: 'tinypln' } })
    expect(refused.message).toContain('TINYPLN')
    const [kept] = await ctx.handle.sql<{ n: number }[]>`select count(*)::int as n from cart_coupons where coupon_id = ${small}`
    expect(kept!.n).toBe(0)
  })

  test('a per-customer limit: the second order of the same customer pays full price; a code used up by that customer is refused', async ({ ctx, admin }) => {
    const tea = await product(ctx, admin, { title: 'Tea', price: 8, currency: 'CZK' })
    await promotion(ctx, { name: 'Welcome', type: 'fixed_amount', amountOffMinor: 300, currency: 'CZK', perCustomerLimit: 1 })
    await promotion(ctx, { name: 'Once each', code: 'ONCECZK', type: 'percentage', percentOffPpm: 100_000, currency: 'CZK', perCustomerLimit: 1 })
    const shopper = await ctx.signIn('customer')
    const first = await cart(ctx, 'CZK', [[tea, 1]], shopper.token)
    await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/carts/${first.id}/coupons`, payload: { code: 'onceczk' }, token: shopper.token })
    const placed = await checkOut(ctx, first.id, 'ada@example.com', shopper.token)
    expect(placed.statusCode).toBe(201)
    // 10 % of 8.00, then 3.00 off
    expect(placed.json<Order>().totals).toMatchObject({ discount: 3.8, total: 4.2 })

    const second = await cart(ctx, 'CZK', [[tea, 1]], shopper.token)
    expect(second.totals).toMatchObject({ discount: 0, total: 8 })
    const refused = await ctx.expectError(400, 'coupon_invalid', { method: 'POST', url: `/api/v1/carts/${second.id}/coupons`, payload: { code: 'onceczk' }, token: shopper.token })
    expect(refused.message).toContain('ONCECZK')
    // A guest is counted by email.
    const guest = await cart(ctx, 'CZK', [[tea, 1]])
    expect(guest.totals.discount).toBe(3)
  })
})

describe('campaign budgets', () => {
  test('50 checkouts at once never overspend a campaign budget: exactly as many orders get the discount as it pays for', async ({ ctx, admin }) => {
    const gift = await product(ctx, admin, { title: 'Gift', price: 20, currency: 'HUF', inventory_quantity: 1000 })
    const [campaign] = await ctx.handle.db
      .insert(campaigns)
      .values({ name: 'Launch', budgetType: 'spend', budgetLimit: 1_250, currency: 'HUF' })
      .returning()
    // 2.00 off each order, 12.50 of budget: six fit (12.00), a seventh would pass it.
    const id = await promotion(ctx, { name: 'Launch gift', type: 'fixed_amount', amountOffMinor: 200, currency: 'HUF', campaignId: campaign!.id })
    const carts = await Promise.all(Array.from({ length: 50 }, () => cart(ctx, 'HUF', [[gift, 1]])))
    const answers = await Promise.all(carts.map((view, index) => checkOut(ctx, view.id, `buyer${index}@example.com`)))
    expect(answers.map((answer) => answer.statusCode)).toEqual(answers.map(() => 201))
    const discounted = answers.map((answer) => answer.json<Order>()).filter((order) => order.promotions.some((entry) => entry.id === id))
    expect(discounted).toHaveLength(6)
    const [spent] = await ctx.handle.sql<{ used: number; uses: number; sum: number }[]>`
      select budget_used::int as used, (select count(*)::int from promotion_usages where campaign_id = ${campaign!.id}) as uses,
        (select sum(discount_minor)::int from promotion_usages where campaign_id = ${campaign!.id}) as sum
      from campaigns where id = ${campaign!.id}`
    expect(spent).toEqual({ used: 1_200, uses: 6, sum: 1_200 })
    // Spent, the promotion no longer applies to a new cart.
    expect((await cart(ctx, 'HUF', [[gift, 1]])).promotions).toEqual([])
  })

  test('a declined payment gives the promotion use and the budget back; the retry takes them again, once', async ({ ctx, admin }) => {
    const kite = await product(ctx, admin, { title: 'Kite', price: 30, currency: 'RON' })
    const [campaign] = await ctx.handle.db.insert(campaigns).values({ name: 'Kites', budgetType: 'usage', budgetLimit: 1 }).returning()
    const id = await promotion(ctx, { name: 'Kite day', type: 'percentage', percentOffPpm: 200_000, currency: 'RON', usageLimit: 1, campaignId: campaign!.id })
    const view = await cart(ctx, 'RON', [[kite, 1]])
    const state = async () =>
      (
        await ctx.handle.sql<{ times_used: number; budget_used: number; held: number; released: number }[]>`
          select p.times_used, g.budget_used::int,
            (select count(*)::int from promotion_usages u where u.promotion_id = p.id and u.released_at is null) as held,
            (select count(*)::int from promotion_usages u where u.promotion_id = p.id and u.released_at is not null) as released
          from promotions p join campaigns g on g.id = p.campaign_id where p.id = ${id}`
      )[0]
    const checkout = await ctx.expectStatus<Checkout>(201, {
      method: 'POST',
      url: '/api/v1/checkouts',
      payload: { cart_id: view.id, email: 'kite@example.com', shipping_address: ADDRESS },
    })
    const attempt = (token: string) =>
      ctx.request({
        method: 'POST',
        url: `/api/v1/checkouts/${checkout.id}/complete`,
        payload: { payment: { method: 'card', token } },
        headers: { 'idempotency-key': randomUUID() },
      })
    expect((await attempt('tok_declined')).statusCode).toBe(402)
    expect(await state()).toEqual({ times_used: 0, budget_used: 0, held: 0, released: 1 })
    const placed = await attempt('tok_visa')
    expect(placed.statusCode).toBe(201)
    expect(placed.json<Order>().totals).toMatchObject({ discount: 6, total: 24 })
    expect(await state()).toEqual({ times_used: 1, budget_used: 1, held: 1, released: 1 })
    // Used up, by its own limit and its campaign's: the next cart pays full price.
    expect((await cart(ctx, 'RON', [[kite, 1]])).totals.discount).toBe(0)
  })

  test('a checkout holds no promotion while it prices: neither an unlimited one nor one with a usage limit makes another checkout wait', async ({ ctx, admin }) => {
    const pen = await product(ctx, admin, { title: 'Pen', price: 5, currency: 'BGN' })
    const ink = await product(ctx, admin, { title: 'Ink', price: 7, currency: 'BGN' })
    const open = await promotion(ctx, { name: 'Stationery week', type: 'percentage', percentOffPpm: 100_000, currency: 'BGN' })
    // The first checkout's locks taken and held, as while it prices; the second runs meanwhile.
    const whileHeld = async (second: () => Promise<{ statusCode: number }>) => {
      const first = await ctx.expectStatus<Checkout>(201, {
        method: 'POST',
        url: '/api/v1/checkouts',
        payload: { cart_id: (await cart(ctx, 'BGN', [[pen, 1]])).id, email: 'first@example.com', shipping_address: ADDRESS },
      })
      let finished: number | 'waiting' = 'waiting'
      await ctx.handle.sql.begin(async (tx) => {
        await lockCheckout(tx, { checkoutId: first.id, claim: null })
        const answer = second().then((reply) => (finished = reply.statusCode))
        await Promise.race([answer, sleep(800)])
        return finished
      })
      return { during: finished, after: await second().then((reply) => reply.statusCode) }
    }
    const ready = () => cart(ctx, 'BGN', [[ink, 1]])
    expect(await whileHeld(async () => checkOut(ctx, (await ready()).id))).toEqual({ during: 201, after: 201 })
    await ctx.handle.db.update(promotions).set({ usageLimit: 100, perCustomerLimit: 5 }).where(eq(promotions.id, open))
    await ctx.app.pricingRules.refresh()
    expect(await whileHeld(async () => checkOut(ctx, (await ready()).id))).toEqual({ during: 201, after: 201 })
    expect((await ctx.handle.sql<{ n: number }[]>`select times_used as n from promotions where id = ${open}`)[0]!.n).toBe(4)
  })

  test('20 checkouts at once for an automatic promotion with 3 uses left: 3 orders get it, every checkout is placed, the count stops at its limit', async ({ ctx, admin }) => {
    // A product for each cart, so that no stock row queues them: they meet only at the promotion's count.
    const mugs = await Promise.all(Array.from({ length: 20 }, (_, index) => product(ctx, admin, { title: `Mug ${index}`, price: 10, currency: 'MXN' })))
    const id = await promotion(ctx, { name: 'Last mugs', type: 'fixed_amount', amountOffMinor: 100, currency: 'MXN', usageLimit: 3 })
    const checkouts = await Promise.all(mugs.map(async (mug, index) => openCheckout(ctx, (await cart(ctx, 'MXN', [[mug, 1]])).id, `mugs${index}@example.com`)))
    const answers = await Promise.all(checkouts.map((id) => complete(ctx, id)))
    expect(answers.map((answer) => answer.statusCode)).toEqual(answers.map(() => 201))
    const orders = answers.map((answer) => answer.json<Order>())
    expect(orders.filter((order) => order.promotions.some((entry) => entry.id === id))).toHaveLength(3)
    // Each order charges what it shows: 9.00 with the promotion, 10.00 without.
    expect(orders.map((order) => order.totals.subtotal - order.totals.discount).sort((a, b) => a - b)).toEqual([...Array(3).fill(9), ...Array(17).fill(10)])
    const [counts] = await ctx.handle.sql<{ used: number; held: number }[]>`
      select times_used as used, (select count(*)::int from promotion_usages where promotion_id = ${id} and released_at is null) as held
      from promotions where id = ${id}`
    expect(counts).toEqual({ used: 3, held: 3 })
  })

  test("one customer's carts completed at once: a promotion limited to one use each goes to one order, and the same customer's coupon so limited is refused on the others, nothing of them kept", async ({ ctx, admin }) => {
    // A product for each cart: checkouts of one product queue on its stock row and read each other's uses after it.
    const bags = await Promise.all(Array.from({ length: 11 }, (_, index) => product(ctx, admin, { title: `Bag ${index}`, price: 50, currency: 'BRL' })))
    const welcome = await promotion(ctx, { name: 'Welcome bag', type: 'fixed_amount', amountOffMinor: 500, currency: 'BRL', perCustomerLimit: 1 })
    const shopper = await ctx.signIn('customer')
    const opened = await Promise.all(
      bags.slice(0, 6).map(async (bag) => openCheckout(ctx, (await cart(ctx, 'BRL', [[bag, 1]], shopper.token)).id, 'bags@example.com', shopper.token)),
    )
    const answers = await Promise.all(opened.map((id) => complete(ctx, id, shopper.token)))
    expect(answers.map((answer) => answer.statusCode)).toEqual(answers.map(() => 201))
    expect(answers.filter((answer) => answer.json<Order>().promotions.some((entry) => entry.id === welcome))).toHaveLength(1)

    const once = await promotion(ctx, { name: 'ONCEBRL', code: 'ONCEBRL', type: 'percentage', percentOffPpm: 100_000, currency: 'BRL', perCustomerLimit: 1 })
    const couponed = await Promise.all(
      bags.slice(6).map(async (bag) => {
        const view = await cart(ctx, 'BRL', [[bag, 1]], shopper.token)
        await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/carts/${view.id}/coupons`, payload: { code: 'oncebrl' }, token: shopper.token })
        return openCheckout(ctx, view.id, 'bags@example.com', shopper.token)
      }),
    )
    const tried = await Promise.all(couponed.map((id) => complete(ctx, id, shopper.token)))
    expect(tried.map((answer) => answer.statusCode).sort()).toEqual([201, 400, 400, 400, 400])
    for (const refused of tried.filter((answer) => answer.statusCode === 400)) expect(refused.json<{ error: { code: string } }>().error.code).toBe('coupon_invalid')
    const [counts] = await ctx.handle.sql<{ welcome: number; once: number; usages: number; orders: number }[]>`
      select (select uses from promotion_customer_uses where promotion_id = ${welcome} and customer_key = ${shopper.customerId!}) as welcome,
        (select uses from promotion_customer_uses where promotion_id = ${once} and customer_key = ${shopper.customerId!}) as once,
        (select count(*)::int from promotion_usages where promotion_id in (${welcome}, ${once})) as usages,
        (select count(*)::int from orders where customer_id = ${shopper.customerId!}) as orders`
    expect(counts).toEqual({ welcome: 1, once: 1, usages: 2, orders: 7 })
  })

  test('a usage limit set on a promotion in use starts from the uses held, counting those of checkouts still completing', async ({ ctx, admin }) => {
    const kite = await product(ctx, admin, { title: 'Kite', price: 15, currency: 'SGD' })
    const [campaign] = await ctx.handle.db.insert(campaigns).values({ name: 'Kite season', budgetType: 'usage' }).returning()
    const id = await promotion(ctx, { name: 'Kite season', type: 'fixed_amount', amountOffMinor: 100, currency: 'SGD', campaignId: campaign!.id })
    const url = `/api/v1/promotions/${id}`
    const held = async () => (await ctx.handle.sql<{ n: number }[]>`select count(*)::int as n from promotion_usages where promotion_id = ${id} and released_at is null`)[0]!.n
    for (let index = 0; index < 2; index++) expect((await checkOut(ctx, (await cart(ctx, 'SGD', [[kite, 1]])).id)).statusCode).toBe(201)
    expect((await ctx.expectStatus<{ times_used: number }>(200, { method: 'GET', url, token: admin })).times_used).toBe(2)
    const refused = await ctx.expectError(400, 'validation_error', { method: 'PATCH', url, payload: { usage_limit: 1 }, token: admin })
    expect(refused.message).toContain('times_used (2)')

    // A checkout that priced it unlimited, stopped after its use is written (the campaign it
    // spends from held here): the limit waits for it to commit, and counts its use.
    const checkout = await openCheckout(ctx, (await cart(ctx, 'SGD', [[kite, 1]])).id)
    let limiting: Promise<{ statusCode: number }> | undefined
    let limitedWhileHeld: number | 'waiting' = 'waiting'
    let completing: Promise<{ statusCode: number }> | undefined
    await ctx.handle.sql.begin(async (tx) => {
      await tx`select id from campaigns where id = ${campaign!.id} for update`
      completing = complete(ctx, checkout)
      await sleep(300)
      limiting = ctx.request({ method: 'PATCH', url, payload: { usage_limit: 3 }, token: admin }).then((reply) => {
        limitedWhileHeld = reply.statusCode
        return reply
      })
      await sleep(300)
    })
    expect(limitedWhileHeld).toBe('waiting')
    expect((await completing!).statusCode).toBe(201)
    expect((await limiting!).statusCode).toBe(200)
    const [row] = await ctx.handle.sql<{ times_used: number }[]>`select times_used from promotions where id = ${id}`
    expect({ stored: row!.times_used, held: await held() }).toEqual({ stored: 3, held: 3 })
    // Used up: the next cart pays full price.
    expect((await cart(ctx, 'SGD', [[kite, 1]])).totals.discount).toBe(0)
  })

  test("a per-customer limit set or changed later counts the customer's earlier uses; a declined payment gives its use back", async ({ ctx, admin }) => {
    const cap = await product(ctx, admin, { title: 'Cap', price: 20, currency: 'ZAR', inventory_quantity: 100 })
    const id = await promotion(ctx, { name: 'Caps', type: 'percentage', percentOffPpm: 100_000, currency: 'ZAR' })
    const shopper = await ctx.signIn('customer')
    const discounted = async (payment = VISA) => {
      const answer = await checkOut(ctx, (await cart(ctx, 'ZAR', [[cap, 1]], shopper.token)).id, 'caps@example.com', shopper.token, payment)
      return answer.statusCode === 201 ? answer.json<Order>().promotions.some((entry) => entry.id === id) : answer.statusCode
    }
    const limit = async (perCustomerLimit: number) => {
      await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/promotions/${id}`, payload: { per_customer_limit: perCustomerLimit }, token: admin })
    }
    const uses = async () =>
      (await ctx.handle.sql<{ uses: number }[]>`select uses from promotion_customer_uses where promotion_id = ${id} and customer_key = ${shopper.customerId!}`)[0]?.uses ?? null
    // Used once while it had no limit: nothing counted per customer.
    expect(await discounted()).toBe(true)
    expect(await uses()).toBeNull()
    await limit(2)
    expect(await discounted()).toBe(true)
    expect(await uses()).toBe(2)
    expect(await discounted({ payment: { method: 'card', token: 'tok_declined' } })).toBe(402)
    expect(await uses()).toBe(2)
    expect(await discounted()).toBe(false)
    // A new limit drops the counts; the next use counts the earlier ones again.
    await limit(3)
    expect(await uses()).toBeNull()
    expect(await discounted()).toBe(true)
    expect(await uses()).toBe(3)
    expect(await discounted()).toBe(false)
  })

  test('40 checkouts at once, half declined, over shared stock with bounded and unbounded promotions: no deadlock, every count true', async ({ ctx, admin }) => {
    const cups = await Promise.all(['Red', 'Blue', 'Green'].map((colour) => product(ctx, admin, { title: `${colour} cup`, price: 12, currency: 'AUD', inventory_quantity: 500 })))
    const [campaign] = await ctx.handle.db.insert(campaigns).values({ name: 'Cups', budgetType: 'spend', currency: 'AUD' }).returning()
    const [budgeted] = await ctx.handle.db.insert(campaigns).values({ name: 'Cups budget', budgetType: 'usage', budgetLimit: 1_000 }).returning()
    const unbounded = await promotion(ctx, { name: 'Cup days', type: 'fixed_amount', amountOffMinor: 100, currency: 'AUD', campaignId: campaign!.id })
    const limited = await promotion(ctx, { name: 'First cups', type: 'percentage', percentOffPpm: 50_000, currency: 'AUD', usageLimit: 1_000 })
    const capped = await promotion(ctx, { name: 'Cup budget', type: 'fixed_amount', amountOffMinor: 50, currency: 'AUD', campaignId: budgeted!.id })
    // Each cart holds two of the cups, in an order of its own, so the stock locks overlap every way.
    const carts = await Promise.all(Array.from({ length: 40 }, (_, index) => cart(ctx, 'AUD', [[cups[index % 3]!, 1], [cups[(index + 1) % 3]!, 1]])))
    const answers = await Promise.all(
      carts.map((view, index) => checkOut(ctx, view.id, `cups${index}@example.com`, undefined, { payment: { method: 'card', token: index % 2 ? 'tok_declined' : 'tok_visa' } })),
    )
    expect(answers.map((answer) => answer.statusCode)).toEqual(answers.map((_, index) => (index % 2 ? 402 : 201)))
    // The unlimited promotion's row is never written by a checkout: its uses are counted from promotion_usages.
    expect((await ctx.handle.sql<{ n: number }[]>`select times_used as n from promotions where id = ${unbounded}`)[0]!.n).toBe(0)
    expect((await ctx.expectStatus<{ times_used: number }>(200, { method: 'GET', url: `/api/v1/promotions/${unbounded}`, token: admin })).times_used).toBe(20)
    const [counts] = await ctx.handle.sql<{ unbounded: number; limited: number; capped: number; spent: number; used: number; held: number }[]>`
      select (select count(*)::int from promotion_usages where promotion_id = ${unbounded} and released_at is null) as unbounded,
        (select times_used from promotions where id = ${limited}) as limited,
        (select count(*)::int from promotion_usages where promotion_id = ${capped} and released_at is null) as capped,
        (select budget_used::int from campaigns where id = ${campaign!.id}) as spent,
        (select budget_used::int from campaigns where id = ${budgeted!.id}) as used,
        (select count(*)::int from promotion_usages where promotion_id in (${unbounded}, ${limited}, ${capped}) and released_at is null) as held`
    expect(counts).toEqual({ unbounded: 20, limited: 20, capped: 20, spent: 20 * 100, used: 20, held: 60 })
    const stock = await ctx.handle.sql<{ n: number }[]>`select inventory_quantity as n from products where id in ${ctx.handle.sql(cups.map((cup) => cup.id))}`
    expect(stock.reduce((sum, row) => sum + row.n, 0)).toBe(1_500 - 20 * 2)
  })

  test("a declined payment held again later is refused when its customer has used the promotion up since; another customer's is held again", async ({ ctx, admin }) => {
    const hat = await product(ctx, admin, { title: 'Hat', price: 40, currency: 'NZD' })
    const id = await promotion(ctx, { name: 'First hat', type: 'percentage', percentOffPpm: 250_000, currency: 'NZD', perCustomerLimit: 1 })
    const declined = async (token: string) => {
      const view = await cart(ctx, 'NZD', [[hat, 1]], token)
      expect((await checkOut(ctx, view.id, 'hats@example.com', token, { payment: { method: 'card', token: 'tok_declined' } })).statusCode).toBe(402)
      const [payment] = await ctx.handle.sql<{ id: string }[]>`
        select p.id from payments p join checkouts k on k.id = p.checkout_id where k.cart_id = ${view.id}`
      return payment!.id
    }
    const held = (paymentId: string) => ctx.handle.sql<{ n: number }[]>`
      select count(*)::int as n from promotion_usages where payment_id = ${paymentId} and released_at is null`
    const ada = await ctx.signIn('customer')
    const first = await declined(ada.token)
    const placed = await checkOut(ctx, (await cart(ctx, 'NZD', [[hat, 1]], ada.token)).id, 'hats@example.com', ada.token)
    expect(placed.json<Order>().promotions.map((entry) => entry.id)).toEqual([id])
    expect(await reacquireReservation(ctx.handle.sql, first)).toBe(false)
    expect((await held(first))[0]!.n).toBe(0)

    const bob = await ctx.signIn('customer')
    const his = await declined(bob.token)
    expect(await reacquireReservation(ctx.handle.sql, his)).toBe(true)
    expect((await held(his))[0]!.n).toBe(1)
    expect((await ctx.expectStatus<{ times_used: number }>(200, { method: 'GET', url: `/api/v1/promotions/${id}`, token: admin })).times_used).toBe(2)
  })
})

