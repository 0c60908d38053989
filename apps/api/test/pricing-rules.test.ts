/**
 * The price lists and automatic promotions each API instance keeps to price carts
 * (plugins/pricing-rules.ts): a change through one instance shows on its own answers at once and
 * on another's within moments (the database's notification), a cart naming a list the rules do
 * not hold reads them at once, and what checkouts move (use counts, budgets) is read live with
 * every cart and never moves the pricing revision; a checkout is priced as its cart is, and a
 * bound set through the other instance holds at its completion.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { randomUUID } from 'node:crypto'
import type { Cart, Checkout, Order, Product } from '@commerce/domain'
import { createTestContext, type TestContext } from './helpers.js'

let first: TestContext
let second: TestContext
let admin: string

beforeAll(async () => {
  first = await createTestContext()
  // The second instance on the first one's database, as two processes behind a load balancer.
  second = await createTestContext(() => ({ databaseUrl: first.database.url }))
  admin = (await first.signIn('admin')).token
})
afterAll(async () => {
  await second?.close()
  await first?.close()
})

let seq = 0

async function cartOf(currency: string, price: number): Promise<{ product: Product; cart: Cart }> {
  const product = await first.expectStatus<Product>(201, {
    method: 'POST',
    url: '/api/v1/products',
    payload: { title: `Rule product ${++seq}`, price, currency, inventory_quantity: 100 },
    token: admin,
  })
  const cart = await first.expectStatus<Cart>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency } })
  await first.expectStatus(201, { method: 'POST', url: `/api/v1/carts/${cart.id}/items`, payload: { product_id: product.id, quantity: 1 } })
  return { product, cart }
}

const read = (instance: TestContext, cartId: string) => instance.expectStatus<Cart>(200, { method: 'GET', url: `/api/v1/carts/${cartId}` })

/** The cart as `instance` prices it, read until `done` holds (at most `withinMs`); how long that took. */
async function readUntil(instance: TestContext, cartId: string, done: (cart: Cart) => boolean, withinMs = 3_000) {
  const start = Date.now()
  for (;;) {
    const cart = await read(instance, cartId)
    if (done(cart) || Date.now() - start > withinMs) return { cart, ms: Date.now() - start }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const revision = async () => (await first.handle.sql<{ revision: string }[]>`select revision::text as revision from pricing_revision`)[0]!.revision

describe('pricing rules kept by each instance', () => {
  test('a promotion made, changed and switched off through one instance prices its own carts at once and the other instance\'s within moments', async () => {
    const { cart } = await cartOf('NOK', 100)
    expect((await read(second, cart.id)).totals.discount).toBe(0)

    const promotion = await first.expectStatus<{ id: string }>(201, {
      method: 'POST',
      url: '/api/v1/promotions',
      payload: { name: 'Rules 10 %', type: 'percentage', value: 10, currency: 'NOK' },
      token: admin,
    })
    // The instance that wrote it: at once, on the very next read.
    expect((await read(first, cart.id)).totals.discount).toBe(10)
    // The other: told by the database, well within the fallback's 5 s.
    const seen = await readUntil(second, cart.id, (view) => view.totals.discount === 10)
    expect(seen.cart.totals.discount).toBe(10)
    expect(seen.ms).toBeLessThan(2_000)

    await first.expectStatus(200, { method: 'PATCH', url: `/api/v1/promotions/${promotion.id}`, payload: { value: 25 }, token: admin })
    expect((await read(first, cart.id)).totals.discount).toBe(25)
    expect((await readUntil(second, cart.id, (view) => view.totals.discount === 25)).cart.totals.discount).toBe(25)

    await first.expectStatus(200, { method: 'PATCH', url: `/api/v1/promotions/${promotion.id}`, payload: { is_active: false }, token: admin })
    expect((await read(first, cart.id)).totals.discount).toBe(0)
    expect((await readUntil(second, cart.id, (view) => view.totals.discount === 0)).cart.totals.discount).toBe(0)
  })

  test('a price list made through one instance prices the other\'s next read of a cart naming it (a list the rules do not hold reads them at once)', async () => {
    const { product, cart } = await cartOf('DKK', 50)
    expect((await read(second, cart.id)).items[0]).toMatchObject({ unit_price: 50, price_list_id: null })
    const list = await first.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/price-lists', payload: { name: `Rules sale ${++seq}` }, token: admin })
    await first.expectStatus(200, {
      method: 'POST',
      url: `/api/v1/price-lists/${list.id}/prices`,
      payload: { prices: [{ product_id: product.id, currency: 'DKK', amount: 40 }] },
      token: admin,
    })
    for (const instance of [second, first]) expect((await read(instance, cart.id)).items[0]).toMatchObject({ unit_price: 40, price_list_id: list.id })
  })

  test('use counts and budgets are read live with every cart: a promotion used up or a campaign spent stops applying at once, and the pricing revision does not move', async () => {
    const { cart } = await cartOf('PLN', 100)
    const limited = await first.expectStatus<{ id: string }>(201, {
      method: 'POST',
      url: '/api/v1/promotions',
      payload: { name: 'Rules limited', type: 'fixed_amount', value: 5, currency: 'PLN', usage_limit: 3 },
      token: admin,
    })
    const campaign = await first.expectStatus<{ id: string }>(201, {
      method: 'POST',
      url: '/api/v1/campaigns',
      payload: { name: `Rules budget ${++seq}`, budget: { type: 'spend', limit: 100, currency: 'PLN' } },
      token: admin,
    })
    const budgeted = await first.expectStatus<{ id: string }>(201, {
      method: 'POST',
      url: '/api/v1/promotions',
      payload: { name: 'Rules budgeted', type: 'fixed_amount', value: 2, currency: 'PLN', campaign_id: campaign.id },
      token: admin,
    })
    for (const instance of [first, second]) {
      const view = (await readUntil(instance, cart.id, (found) => found.totals.discount === 7)).cart
      expect(view.promotions.map((applied) => applied.id).sort()).toEqual([limited.id, budgeted.id].sort())
    }
    const before = await revision()
    // As checkouts leave them: the limit reached, the budget spent.
    await first.handle.sql`update promotions set times_used = 3 where id = ${limited.id}`
    await first.handle.sql`update campaigns set budget_used = 9900, updated_at = now() where id = ${campaign.id}`
    expect(await revision()).toBe(before)
    for (const instance of [first, second]) {
      const view = await read(instance, cart.id)
      expect(view.totals.discount).toBe(0)
      expect(view.promotions).toEqual([])
    }
  })
  test('a checkout is priced with the instance\'s rules as its cart is; a usage limit set through the other instance a moment before is never passed', async () => {
    const { cart } = await cartOf('SEK', 100)
    const promotion = await first.expectStatus<{ id: string }>(201, {
      method: 'POST',
      url: '/api/v1/promotions',
      payload: { name: 'Rules once', type: 'fixed_amount', value: 5, currency: 'SEK' },
      token: admin,
    })
    expect((await readUntil(second, cart.id, (view) => view.totals.discount === 5)).cart.totals.discount).toBe(5)
    const address = { first_name: 'Ada', last_name: 'Lovelace', line1: '12 St James Sq', city: 'London', postal_code: 'SW1Y 4JH', country: 'GB' }
    const checkout = await second.expectStatus<Checkout>(201, {
      method: 'POST',
      url: '/api/v1/checkouts',
      payload: { cart_id: cart.id, email: 'rules@example.com', shipping_address: address },
    })
    // Used up through the first instance; the second completes at once, whether or not its rules have heard of the limit yet.
    await first.expectStatus(200, { method: 'PATCH', url: `/api/v1/promotions/${promotion.id}`, payload: { usage_limit: 1 }, token: admin })
    await first.handle.sql`update promotions set times_used = 1 where id = ${promotion.id}`
    const order = await second.expectStatus<Order>(201, {
      method: 'POST',
      url: `/api/v1/checkouts/${checkout.id}/complete`,
      payload: { payment: { method: 'card', token: 'tok_visa' } },
      headers: { 'idempotency-key': randomUUID() },
    })
    expect(order.totals.discount).toBe(0)
    expect(order.totals.total).toBe(100)
  })
})
