/** Checkout: start, choose shipping, complete in one transaction; no overselling, one charge per key. */
import { randomUUID } from 'node:crypto'
import { describe, expect, vi } from 'vitest'
import type { Checkout, Order, Product } from '@commerce/domain'
import { EVENTS_CHANNEL, promotions, shippingMethods } from '@commerce/db'
import { test, type TestContext } from './helpers.js'

const CHECKOUTS = '/api/v1/checkouts'
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000beef'
const ADDRESS = { first_name: 'Ada', last_name: 'Lovelace', line1: '12 St James Sq', city: 'London', postal_code: 'SW1Y 4JH', country: 'GB' }
const VISA = { payment: { method: 'card', token: 'tok_visa' } }

const key = () => `test-key-${randomUUID()}`

function createProduct(ctx: TestContext, admin: string, payload: Record<string, unknown>): Promise<Product> {
  return ctx.expectStatus(201, { method: 'POST', url: '/api/v1/products', payload: { currency: 'GBP', ...payload }, token: admin })
}

async function stockOf(ctx: TestContext, productId: string): Promise<number> {
  const [row] = await ctx.handle.sql<{ n: number }[]>`select inventory_quantity as n from products where id = ${productId}`
  return row!.n
}

/** A cart with `quantity` of the product and a checkout started on it, its cheapest rate chosen. */
async function startCheckout(ctx: TestContext, product: Product, quantity = 1, token?: string): Promise<Checkout> {
  const checkout = await startBareCheckout(ctx, product, quantity, token)
  const [cheapest] = checkout.shipping_rates
  if (!cheapest) return checkout
  return ctx.expectStatus(200, {
    method: 'POST',
    url: `${CHECKOUTS}/${checkout.id}/shipping`,
    payload: { rate_id: cheapest.id },
    ...(token ? { token } : {}),
  })
}

/** A cart with `quantity` of the product and a checkout started on it. */
async function startBareCheckout(ctx: TestContext, product: Product, quantity = 1, token?: string): Promise<Checkout> {
  const auth = token ? { token } : {}
  const cart = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: 'GBP' }, ...auth })
  await ctx.expectStatus(201, {
    method: 'POST',
    url: `/api/v1/carts/${cart.id}/items`,
    payload: { product_id: product.id, quantity },
    ...auth,
  })
  return ctx.expectStatus(201, {
    method: 'POST',
    url: CHECKOUTS,
    payload: { cart_id: cart.id, email: 'ada@example.com', shipping_address: ADDRESS },
    ...auth,
  })
}

function complete(ctx: TestContext, checkoutId: string, idempotencyKey: string | null, body: Record<string, unknown> = VISA, token?: string) {
  return ctx.request({
    method: 'POST',
    url: `${CHECKOUTS}/${checkoutId}/complete`,
    payload: body,
    headers: idempotencyKey === null ? {} : { 'idempotency-key': idempotencyKey },
    ...(token ? { token } : {}),
  })
}

const count = (ctx: TestContext, table: string) => ctx.countRows(table)

async function eventsOfOrder(ctx: TestContext, orderId: string) {
  return ctx.handle.sql<{ kind: string; data: Record<string, unknown> }[]>`
    select kind, data from events where data->>'order_id' = ${orderId} order by id`
}

describe('POST /api/v1/checkouts', () => {
  test('starts a checkout: 201 with the cart, the address, tax-free totals and the shipping rates cheapest first', async ({ ctx, admin }) => {
    const [slow] = await ctx.handle.db
      .insert(shippingMethods)
      .values({ name: 'Royal Mail', currency: 'GBP', countries: ['GB'], basePriceMinor: 295, estimatedDays: 3 })
      .returning()
    const product = await createProduct(ctx, admin, { title: 'Teapot', price: 24, inventory_quantity: 5 })
    const checkout = await startBareCheckout(ctx, product, 2)
    expect(checkout).toMatchObject({
      status: 'open',
      email: 'ada@example.com',
      currency: 'GBP',
      billing_address: checkout.shipping_address,
      shipping_rate_id: null,
      totals: { subtotal: 48, discount: 0, tax: 0, shipping: 0, total: 48 },
      order_id: null,
    })
    expect(checkout.shipping_address).toMatchObject({ line1: '12 St James Sq', country: 'GB', company: null })
    expect(checkout.items).toHaveLength(1)
    expect(checkout.shipping_rates).toContainEqual({ id: slow!.id, name: 'Royal Mail', amount: 2.95, currency: 'GBP', estimated_days: 3 })
    expect(await ctx.expectStatus(200, { method: 'GET', url: `${CHECKOUTS}/${checkout.id}` })).toEqual(checkout)
  })

  test('refuses an empty cart (400), an unknown or foreign cart (404) and a missing address field (400)', async ({ ctx }) => {
    const owner = await ctx.signIn('customer')
    const other = await ctx.signIn('customer')
    const empty = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: 'GBP' } })
    const payload = { cart_id: empty.id, email: 'a@example.com', shipping_address: ADDRESS }
    const error = await ctx.expectError(400, 'validation_error', { method: 'POST', url: CHECKOUTS, payload })
    expect(error.message).toBe('The cart is empty')
    await ctx.expectError(404, 'not_found', { method: 'POST', url: CHECKOUTS, payload: { ...payload, cart_id: UNKNOWN_ID } })
    const owned = await ctx.expectStatus<{ id: string }>(201, {
      method: 'POST',
      url: '/api/v1/carts',
      payload: { currency: 'GBP' },
      token: owner.token,
    })
    await ctx.expectError(404, 'not_found', { method: 'POST', url: CHECKOUTS, payload: { ...payload, cart_id: owned.id }, token: other.token })
    const missing = await ctx.expectError(400, 'validation_error', {
      method: 'POST',
      url: CHECKOUTS,
      payload: { ...payload, shipping_address: { city: 'London', country: 'GB' } },
    })
    expect(missing.message).toBe("Field 'shipping_address.line1' is required")
    expect(await count(ctx, 'checkouts')).toBeGreaterThanOrEqual(0)
  })
})

describe('POST /api/v1/checkouts/:id/shipping', () => {
  test('a chosen rate enters the totals; a rate that does not apply is 400', async ({ ctx, admin }) => {
    const [express] = await ctx.handle.db
      .insert(shippingMethods)
      .values({ name: 'Express GB', currency: 'GBP', countries: ['GB'], basePriceMinor: 999 })
      .returning()
    const [elsewhere] = await ctx.handle.db
      .insert(shippingMethods)
      .values({ name: 'France only', currency: 'GBP', countries: ['FR'], basePriceMinor: 1 })
      .returning()
    const checkout = await startBareCheckout(ctx, await createProduct(ctx, admin, { title: 'Kettle', price: 30, inventory_quantity: 3 }))
    const url = `${CHECKOUTS}/${checkout.id}/shipping`
    const chosen = await ctx.expectStatus<Checkout>(200, { method: 'POST', url, payload: { rate_id: express!.id } })
    expect(chosen.shipping_rate_id).toBe(express!.id)
    expect(chosen.totals).toEqual({ subtotal: 30, discount: 0, tax: 0, shipping: 9.99, total: 39.99 })
    const error = await ctx.expectError(400, 'validation_error', { method: 'POST', url, payload: { rate_id: elsewhere!.id } })
    expect(error.details).toEqual([{ field: 'rate_id', message: "Field 'rate_id' is not one of this checkout's shipping rates" }])
  })
})

describe('POST /api/v1/checkouts/:id/complete', () => {
  test('places the order: 201, paid, stock taken, coupon used, cart and checkout closed, three events once each', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Mug', price: 12.5, inventory_quantity: 10 })
    await ctx.handle.db.insert(promotions).values({ code: 'MUGS10', name: 'MUGS10', type: 'percentage', percentOffPpm: 100_000, usageLimit: 5 })
    const checkout = await startCheckout(ctx, product, 2)
    await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/carts/${checkout.cart_id}/coupons`, payload: { code: 'mugs10' } })
    const rate = checkout.shipping_rates[0]

    const response = await complete(ctx, checkout.id, key())
    expect(response.statusCode, response.body).toBe(201)
    const order = response.json<Order>()
    const shipping = rate?.amount ?? 0
    expect(order).toMatchObject({
      order_number: expect.stringMatching(/^1\d{3,}$/),
      status: 'paid',
      payment_status: 'paid',
      fulfillment_status: 'unfulfilled',
      email: 'ada@example.com',
      currency: 'GBP',
      totals: { subtotal: 25, discount: 2.5, tax: 0, shipping, total: 22.5 + shipping },
      amount_paid: 22.5 + shipping,
      coupons: [{ code: 'MUGS10', type: 'percentage', discount: 2.5 }],
    })
    expect(order.items).toEqual([
      expect.objectContaining({ product_id: product.id, title: 'Mug', quantity: 2, unit_price: 12.5, line_total: 25, discount: 2.5, total: 22.5 }),
    ])
    expect(order.payments).toEqual([expect.objectContaining({ status: 'captured', amount: 22.5 + shipping, provider: 'test', method: 'card' })])
    // The answer is the order as it is stored.
    expect(await ctx.expectStatus(200, { method: 'GET', url: `/api/v1/orders/${order.id}`, token: admin })).toEqual(order)
    expect(await stockOf(ctx, product.id)).toBe(8)
    const [coupon] = await ctx.handle.sql<{ times_used: number }[]>`select times_used from promotions where code = 'MUGS10'`
    expect(coupon!.times_used).toBe(1)
    // The test provider decides in-process, so the order was placed in the first transaction: no
    // reservation, the payment written once as the provider left it, the units committed and the
    // coupon's use recorded with the order, in that transaction.
    expect(await ctx.handle.sql`select status from checkout_reservations where checkout_id = ${checkout.id}`).toEqual([])
    const payment = order.payments[0]!
    expect(await ctx.handle.sql`select order_id, status, captured_minor::int as captured from payments where checkout_id = ${checkout.id}`).toEqual([
      { order_id: order.id, status: 'captured', captured: Math.round(order.totals.total * 100) },
    ])
    expect(await ctx.handle.sql`select order_id, payment_id from promotion_usages where payment_id = ${payment.id}`).toEqual([{ order_id: order.id, payment_id: payment.id }])
    expect(
      await ctx.handle.sql`select reason, reserved_delta as reserved, committed_delta as committed from inventory_movements where order_id = ${order.id}`,
    ).toEqual([{ reason: 'committed', reserved: 0, committed: 2 }])

    const after = await ctx.expectStatus<Checkout>(200, { method: 'GET', url: `${CHECKOUTS}/${checkout.id}` })
    expect(after).toMatchObject({ status: 'completed', order_id: order.id })
    await ctx.expectError(409, 'conflict', {
      method: 'POST',
      url: `/api/v1/carts/${checkout.cart_id}/items`,
      payload: { product_id: product.id, quantity: 1 },
    })

    const events = await eventsOfOrder(ctx, order.id)
    expect(events.map((event) => event.kind)).toEqual(['order.created', 'payment.succeeded', 'order.paid'])
    expect(events[0]!.data).toEqual({ ...order, order_id: order.id, total: order.totals.total })
    expect(events[1]!.data).toEqual({ ...order.payments[0], order_id: order.id })
    expect(events[2]!.data).toMatchObject({ order_id: order.id, order_number: order.order_number, total: order.totals.total, currency: 'GBP' })
  })

  test('the events of a placed order are announced once committed (the NOTIFY the WebSocket feeds and relays wake on), every one of them', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Bell', price: 4, inventory_quantity: 10 })
    const heard: string[] = []
    const listener = await ctx.handle.sql.listen(EVENTS_CHANNEL, (payload) => heard.push(...payload.split(',')))
    try {
      for (let round = 0; round < 5; round++) {
        const response = await complete(ctx, (await startCheckout(ctx, product, 1)).id, key())
        expect(response.statusCode, response.body).toBe(201)
        const [row] = await ctx.handle.sql<{ ids: string[] }[]>`
          select array_agg(id::text order by id) as ids from events where data->>'order_id' = ${response.json<Order>().id}`
        const ids = row!.ids
        expect(ids).toHaveLength(3)
        // Not a timing: an event left unannounced is never heard, and the wait fails.
        await vi.waitFor(() => expect(heard).toEqual(expect.arrayContaining(ids)), { timeout: 5_000 })
      }
    } finally {
      await listener.unlisten()
    }
  })

  test('a coupon with one use left, on two carts completed at once: one order gets the discount, the other is refused (400 coupon_invalid) and nothing of it is kept', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Last discount', price: 10, inventory_quantity: 10 })
    await ctx.handle.db.insert(promotions).values({ code: 'ONCEONLY', name: 'ONCEONLY', type: 'percentage', percentOffPpm: 500_000, usageLimit: 1 })
    const checkouts = [await startCheckout(ctx, product), await startCheckout(ctx, product)]
    for (const checkout of checkouts) {
      await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/carts/${checkout.cart_id}/coupons`, payload: { code: 'onceonly' } })
    }
    const before = { payments: await count(ctx, 'payments'), orders: await count(ctx, 'orders') }
    const responses = await Promise.all(checkouts.map((checkout) => complete(ctx, checkout.id, key())))
    const placed = responses.filter((response) => response.statusCode === 201)
    const refused = responses.filter((response) => response.statusCode === 400)
    expect(placed).toHaveLength(1)
    expect(placed[0]!.json<Order>().totals).toMatchObject({ subtotal: 10, discount: 5 })
    expect(refused).toHaveLength(1)
    expect(refused[0]!.json().error).toMatchObject({ code: 'coupon_invalid', message: "Coupon 'ONCEONLY' has reached its usage limit; remove it from the cart" })
    expect({ payments: await count(ctx, 'payments'), orders: await count(ctx, 'orders') }).toEqual({ payments: before.payments + 1, orders: before.orders + 1 })
    expect(await stockOf(ctx, product.id)).toBe(9)
    const [coupon] = await ctx.handle.sql<{ times_used: number }[]>`select times_used from promotions where code = 'ONCEONLY'`
    expect(coupon!.times_used).toBe(1)
  })

  test("a cart of a variant and a plain product: each line takes its own stock row (the variant's, the product's), a short variant is 409 naming its line", async ({ ctx, admin }) => {
    const hoodie = await createProduct(ctx, admin, { title: 'Hoodie', price: 40, inventory_quantity: 100 })
    const variant = (title: string, stock: number) =>
      ctx.expectStatus<{ id: string }>(201, {
        method: 'POST',
        url: `/api/v1/products/${hoodie.id}/variants`,
        token: admin,
        payload: { title, price: 45, inventory_quantity: stock },
      })
    const [large, small] = [await variant('Large', 5), await variant('Small', 3)]
    const socks = await createProduct(ctx, admin, { title: 'Socks', price: 5, inventory_quantity: 10 })
    const variantStock = async (id: string) =>
      (await ctx.handle.sql<{ n: number }[]>`select inventory_quantity as n from product_variants where id = ${id}`)[0]!.n

    const startWith = async (lines: { product_id: string; variant_id?: string; quantity: number }[]) => {
      const cart = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: 'GBP' } })
      for (const line of lines) await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/carts/${cart.id}/items`, payload: line })
      const checkout = await ctx.expectStatus<Checkout>(201, {
        method: 'POST',
        url: CHECKOUTS,
        payload: { cart_id: cart.id, email: 'ada@example.com', shipping_address: ADDRESS },
      })
      const [cheapest] = checkout.shipping_rates
      if (cheapest) await ctx.expectStatus(200, { method: 'POST', url: `${CHECKOUTS}/${checkout.id}/shipping`, payload: { rate_id: cheapest.id } })
      return checkout
    }

    const mixed = await startWith([
      { product_id: hoodie.id, variant_id: large.id, quantity: 2 },
      { product_id: socks.id, quantity: 3 },
    ])
    const placed = await complete(ctx, mixed.id, key())
    expect(placed.statusCode, placed.body).toBe(201)
    expect(placed.json<Order>().items).toEqual([
      expect.objectContaining({ variant_id: large.id, quantity: 2, unit_price: 45 }),
      expect.objectContaining({ product_id: socks.id, variant_id: null, quantity: 3 }),
    ])
    expect({ large: await variantStock(large.id), small: await variantStock(small.id), hoodie: await stockOf(ctx, hoodie.id), socks: await stockOf(ctx, socks.id) }).toEqual({
      large: 3,
      small: 3,
      hoodie: 100,
      socks: 7,
    })

    const tooMany = await startWith([
      { product_id: socks.id, quantity: 1 },
      { product_id: hoodie.id, variant_id: small.id, quantity: 3 },
    ])
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/products/${hoodie.id}/variants/${small.id}`, payload: { inventory_quantity: 2 }, token: admin })
    const refused = await complete(ctx, tooMany.id, key())
    expect(refused.statusCode).toBe(409)
    expect(refused.json().error).toMatchObject({ code: 'insufficient_inventory', details: [{ field: 'items[1]', message: 'Hoodie: 3 requested' }] })
    expect({ small: await variantStock(small.id), socks: await stockOf(ctx, socks.id) }).toEqual({ small: 2, socks: 7 })
  })

  test('order numbers come from a sequence: consecutive orders get consecutive numbers', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Numbered', price: 1, inventory_quantity: 5 })
    const numbers: number[] = []
    for (let index = 0; index < 3; index++) {
      const response = await complete(ctx, (await startCheckout(ctx, product)).id, key())
      numbers.push(Number(response.json<Order>().order_number))
    }
    expect(numbers[1]).toBe(numbers[0]! + 1)
    expect(numbers[2]).toBe(numbers[0]! + 2)
    expect(numbers[0]).toBeGreaterThanOrEqual(1001)
  })

  test('with shipping rates on offer, completing before choosing one is 400', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Unshipped', price: 5, inventory_quantity: 1 })
    const checkout = await startBareCheckout(ctx, product)
    expect(checkout.shipping_rates.length).toBeGreaterThan(0)
    const response = await complete(ctx, checkout.id, key())
    expect(response.statusCode).toBe(400)
    expect(response.json().error.details).toEqual([{ field: 'rate_id', message: 'Choose a shipping rate first (POST /checkouts/:id/shipping)' }])
    expect(await stockOf(ctx, product.id)).toBe(1)
  })

  test('without an Idempotency-Key, or with a short one, it is 400 and nothing happens', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Keyless', price: 5, inventory_quantity: 1 })
    const checkout = await startCheckout(ctx, product)
    const missing = await complete(ctx, checkout.id, null)
    expect(missing.statusCode).toBe(400)
    expect(missing.json().error.message).toBe("Header 'Idempotency-Key' is required")
    expect((await complete(ctx, checkout.id, 'short')).statusCode).toBe(400)
    expect(await stockOf(ctx, product.id)).toBe(1)
  })

  test('the same key again replays the same order (Idempotent-Replayed), sequentially and in parallel: one order, one charge', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Once', price: 7, inventory_quantity: 10 })
    const checkout = await startCheckout(ctx, product)
    const idempotencyKey = key()
    const first = await complete(ctx, checkout.id, idempotencyKey)
    expect(first.statusCode).toBe(201)
    const again = await complete(ctx, checkout.id, idempotencyKey)
    expect(again.statusCode).toBe(201)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.json()).toEqual(first.json())

    const parallel = await startCheckout(ctx, product)
    const parallelKey = key()
    const responses = await Promise.all(Array.from({ length: 10 }, () => complete(ctx, parallel.id, parallelKey)))
    const statuses = responses.map((response) => response.statusCode)
    expect(statuses.filter((status) => status === 201).length).toBeGreaterThanOrEqual(1)
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true)
    const orderIds = new Set(responses.filter((r) => r.statusCode === 201).map((r) => r.json<Order>().id))
    expect(orderIds.size).toBe(1)
    const [charges] = await ctx.handle.sql<{ n: number }[]>`select count(*)::int as n from payments where checkout_id = ${parallel.id}`
    expect(charges!.n).toBe(1)
    expect(await stockOf(ctx, product.id)).toBe(8)

    const otherBody = await complete(ctx, parallel.id, parallelKey, { payment: { method: 'card', token: 'tok_declined' } })
    expect(otherBody.statusCode).toBe(422)
    expect(otherBody.json().error.code).toBe('idempotency_key_mismatch')
    // Completing a completed checkout answers its order (200), whoever placed it.
    const newKey = await complete(ctx, parallel.id, key())
    expect(newKey.statusCode).toBe(200)
    expect(newKey.json<Order>().id).toBe([...orderIds][0])
  })

  test('a declined payment is 402: only the failed payment record is kept, stock untouched, the checkout still open', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Declined', price: 9, inventory_quantity: 2 })
    const checkout = await startCheckout(ctx, product)
    const before = { orders: await count(ctx, 'orders'), events: await count(ctx, 'events') }
    const response = await complete(ctx, checkout.id, key(), { payment: { method: 'card', token: 'tok_declined' } })
    expect(response.statusCode).toBe(402)
    expect(response.json().error).toMatchObject({ code: 'payment_declined', message: 'The card was declined' })
    expect(await count(ctx, 'orders')).toBe(before.orders)
    expect(await stockOf(ctx, product.id)).toBe(2)
    const failed = await ctx.handle.sql`
      select status, order_id, failure_code, amount_minor::int as amount from payments where checkout_id = ${checkout.id}`
    expect(failed).toEqual([{ status: 'failed', order_id: null, failure_code: 'card_declined', amount: Math.round(checkout.totals.total * 100) }])
    const events = await ctx.handle.sql<{ kind: string }[]>`select kind from events order by id desc limit 1`
    expect(events[0]!.kind).toBe('payment.failed')
    expect(await count(ctx, 'events')).toBe(before.events + 1)

    const retry = await complete(ctx, checkout.id, key())
    expect(retry.statusCode).toBe(201)
    expect(await stockOf(ctx, product.id)).toBe(1)
  })

  test('tok_error is 502: the stock stays held while the outcome is unknown; calling again asks the provider and pays once', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Flaky', price: 3, inventory_quantity: 1 })
    const checkout = await startCheckout(ctx, product)
    const before = { payments: await count(ctx, 'payments'), orders: await count(ctx, 'orders') }
    const idempotencyKey = key()
    const response = await complete(ctx, checkout.id, idempotencyKey, { payment: { method: 'card', token: 'tok_error' } })
    expect(response.statusCode).toBe(502)
    expect(response.json().error.code).toBe('payment_provider_error')
    // The provider may have charged before failing to answer: the unit stays reserved, no order yet.
    expect({ payments: await count(ctx, 'payments'), orders: await count(ctx, 'orders') }).toEqual({ ...before, payments: before.payments + 1 })
    expect(await stockOf(ctx, product.id)).toBe(0)
    const [pending] = await ctx.handle.sql`select status, failure_code from payments where checkout_id = ${checkout.id}`
    expect(pending).toEqual({ status: 'pending', failure_code: 'provider_unanswered' })
    const retried = await complete(ctx, checkout.id, idempotencyKey, { payment: { method: 'card', token: 'tok_error' } })
    expect(retried.statusCode).toBe(502)
    // Another attempt (a new key, a working card): the provider has no such payment, so it is made
    // now, as the same payment (one payment row), and the order placed.
    const paid = await complete(ctx, checkout.id, key())
    expect(paid.statusCode).toBe(201)
    expect(paid.json<Order>().payments).toEqual([expect.objectContaining({ status: 'captured', amount: paid.json<Order>().totals.total })])
    expect(await count(ctx, 'payments')).toBe(before.payments + 1)
    expect(await stockOf(ctx, product.id)).toBe(0)
  })

  test('stock short is 409 insufficient_inventory naming the line, and nothing is taken', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Rare vase', price: 90, inventory_quantity: 3 })
    const checkout = await startCheckout(ctx, product, 3)
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/products/${product.id}`, payload: { inventory_quantity: 2 }, token: admin })
    const response = await complete(ctx, checkout.id, key())
    expect(response.statusCode).toBe(409)
    expect(response.json().error).toMatchObject({
      code: 'insufficient_inventory',
      message: "Not enough stock for 'Rare vase': 3 requested",
      details: [{ field: 'items[0]', message: 'Rare vase: 3 requested' }],
    })
    expect(await stockOf(ctx, product.id)).toBe(2)
  })

  test('50 parallel checkouts of a product with stock 7: exactly 7 orders, 43 × 409, stock 0, every order paid', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Last seven', price: 15, inventory_quantity: 7 })
    const checkouts: Checkout[] = []
    for (let index = 0; index < 50; index++) checkouts.push(await startCheckout(ctx, product))
    const responses = await Promise.all(checkouts.map((checkout) => complete(ctx, checkout.id, key())))
    const statuses = responses.map((response) => response.statusCode)
    expect(statuses.filter((status) => status === 201)).toHaveLength(7)
    expect(statuses.filter((status) => status === 409)).toHaveLength(43)
    expect(responses.filter((r) => r.statusCode === 409).every((r) => r.json().error.code === 'insufficient_inventory')).toBe(true)
    expect(await stockOf(ctx, product.id)).toBe(0)
    const orders = await ctx.handle.sql<{ id: string; paid: number; total: number; payments: number }[]>`
      select o.id, o.paid_minor as paid, o.total_minor as total,
             (select count(*)::int from payments p where p.order_id = o.id and p.status = 'captured') as payments
      from orders o join order_items i on i.order_id = o.id where i.product_id = ${product.id}`
    expect(orders).toHaveLength(7)
    expect(orders.every((order) => order.payments === 1 && order.paid === order.total)).toBe(true)
  })

  test('a cart change committed while the completion waits for the cart is in the order (the cart is read again once locked)', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Growing', price: 4, inventory_quantity: 10 })
    const checkout = await startCheckout(ctx, product)
    // Another transaction holds the cart (as an item change does) and doubles the line.
    const other = await ctx.handle.sql.reserve()
    try {
      await other`begin`
      await other`update carts set updated_at = now() where id = ${checkout.cart_id}`
      await other`update cart_items set quantity = 2 where cart_id = ${checkout.cart_id}`
      const completing = complete(ctx, checkout.id, key())
      // The completion is waiting for the cart's lock; then the change commits.
      await expect
        .poll(async () => (await ctx.handle.sql`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`).length)
        .toBe(1)
      await other`commit`
      const response = await completing
      expect(response.statusCode, response.body).toBe(201)
      const order = response.json<Order>()
      expect(order.items).toEqual([expect.objectContaining({ product_id: product.id, quantity: 2, line_total: 8 })])
      expect(order.totals.subtotal).toBe(8)
      expect(await stockOf(ctx, product.id)).toBe(8)
    } finally {
      other.release()
    }
  })

  test('a failure after the order insert leaves no order, no event and the stock as it was', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Doomed', price: 4, inventory_quantity: 4 })
    const checkout = await startCheckout(ctx, product)
    const before = { orders: await count(ctx, 'orders'), events: await count(ctx, 'events'), items: await count(ctx, 'order_items') }
    const response = await ctx.withFailingInserts('payments', () => complete(ctx, checkout.id, key()))
    expect(response.statusCode).toBe(500)
    expect(response.json().error.code).toBe('internal_error')
    expect({ orders: await count(ctx, 'orders'), events: await count(ctx, 'events'), items: await count(ctx, 'order_items') }).toEqual(before)
    expect(await stockOf(ctx, product.id)).toBe(4)
    expect((await ctx.expectStatus<Checkout>(200, { method: 'GET', url: `${CHECKOUTS}/${checkout.id}` })).status).toBe('open')
  })

  test('a completion PostgreSQL rolls back to break a deadlock answers 503 to send again, keeps nothing, and succeeds when sent again', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Contended', price: 4, inventory_quantity: 4 })
    const checkout = await startCheckout(ctx, product)
    const before = { orders: await count(ctx, 'orders'), usages: await count(ctx, 'promotion_usages'), payments: await count(ctx, 'payments') }
    const sent = key()
    const response = await ctx.withFailingInserts('payments', () => complete(ctx, checkout.id, sent), 'true', '40P01')
    expect(response.statusCode).toBe(503)
    expect(response.json().error).toMatchObject({ code: 'service_unavailable', message: 'The request met a concurrent change and was rolled back; send it again' })
    expect({ orders: await count(ctx, 'orders'), usages: await count(ctx, 'promotion_usages'), payments: await count(ctx, 'payments') }).toEqual(before)
    expect(await stockOf(ctx, product.id)).toBe(4)
    expect((await complete(ctx, checkout.id, sent)).statusCode).toBe(201)
  })

  test("a customer's checkout is theirs: another customer gets 404; the order belongs to the customer", async ({ ctx, admin }) => {
    const owner = await ctx.signIn('customer')
    const other = await ctx.signIn('customer')
    const product = await createProduct(ctx, admin, { title: 'Mine', price: 2, inventory_quantity: 2 })
    const checkout = await startCheckout(ctx, product, 1, owner.token)
    expect(checkout.customer_id).toBe(owner.customerId)
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${CHECKOUTS}/${checkout.id}`, token: other.token })
    const stolen = await complete(ctx, checkout.id, key(), VISA, other.token)
    expect(stolen.statusCode).toBe(404)
    const placed = await complete(ctx, checkout.id, key(), VISA, owner.token)
    expect(placed.statusCode).toBe(201)
    expect(placed.json<Order>().customer_id).toBe(owner.customerId)
  })
})
