/** Orders: who sees which, admin-made orders, edits, archiving, and the cancel and complete moves. */
import { describe, expect } from 'vitest'
import { randomUUID } from 'node:crypto'
import { ORDER_MOVES, ORDER_STATUSES, allowedMoves, type Order, type OrderList, type OrderStatus, type Product } from '@commerce/domain'
import { shippingMethods, taxRates } from '@commerce/db'
import { test, type TestContext } from './helpers.js'
import { insertOrder } from './order-fixtures.js'

const ORDERS = '/api/v1/orders'
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000beef'
const ADDRESS = { line1: '1 Rue de Rivoli', city: 'Paris', postal_code: '75001', country: 'FR' }

function createProduct(ctx: TestContext, admin: string, payload: Record<string, unknown>): Promise<Product> {
  return ctx.expectStatus(201, { method: 'POST', url: '/api/v1/products', payload: { currency: 'EUR', ...payload }, token: admin })
}

async function stockOf(ctx: TestContext, productId: string): Promise<number> {
  const [row] = await ctx.handle.sql<{ n: number }[]>`select inventory_quantity as n from products where id = ${productId}`
  return row!.n
}

function createOrder(ctx: TestContext, admin: string, payload: Record<string, unknown>): Promise<Order> {
  return ctx.expectStatus(201, { method: 'POST', url: ORDERS, payload, token: admin })
}

const eventKinds = (ctx: TestContext, orderId: string) => ctx.orderEvents(orderId)

describe('GET /api/v1/orders', () => {
  test('admins see every order; a customer only its own; anonymous callers 401', async ({ ctx, admin }) => {
    const alice = await ctx.signIn('customer')
    const bob = await ctx.signIn('customer')
    const mine = await insertOrder(ctx, { customerId: alice.customerId })
    const theirs = await insertOrder(ctx, { customerId: bob.customerId })
    const aliceList = await ctx.expectStatus<OrderList>(200, { method: 'GET', url: ORDERS, token: alice.token })
    expect(aliceList.orders.map((order) => order.id)).toEqual([mine.order.id])
    expect(aliceList.meta).toEqual({ page: 1, per_page: 20, total: 1, total_pages: 1 })
    const all = await ctx.expectStatus<OrderList>(200, { method: 'GET', url: `${ORDERS}?per_page=100`, token: admin })
    expect(all.orders.map((order) => order.id)).toEqual(expect.arrayContaining([mine.order.id, theirs.order.id]))
    await ctx.expectError(401, 'unauthorized', { method: 'GET', url: ORDERS })
  })

  test('admins filter by status, customer and created_at range; pages are newest first', async ({ ctx, admin }) => {
    const carol = await ctx.signIn('customer')
    const first = await insertOrder(ctx, { customerId: carol.customerId, status: 'pending' })
    const second = await insertOrder(ctx, { customerId: carol.customerId, status: 'paid' })
    const third = await insertOrder(ctx, { customerId: carol.customerId, status: 'paid' })
    const byCustomer = await ctx.expectStatus<OrderList>(200, { method: 'GET', url: `${ORDERS}?customer_id=${carol.customerId}`, token: admin })
    expect(byCustomer.orders.map((order) => order.id)).toEqual([third.order.id, second.order.id, first.order.id])
    const paid = await ctx.expectStatus<OrderList>(200, {
      method: 'GET',
      url: `${ORDERS}?customer_id=${carol.customerId}&status=paid&per_page=1&page=2`,
      token: admin,
    })
    expect(paid.orders.map((order) => order.id)).toEqual([second.order.id])
    expect(paid.meta).toEqual({ page: 2, per_page: 1, total: 2, total_pages: 2 })
    const from = encodeURIComponent(second.order.createdAt.toISOString())
    const ranged = await ctx.expectStatus<OrderList>(200, {
      method: 'GET',
      url: `${ORDERS}?customer_id=${carol.customerId}&created_from=${from}`,
      token: admin,
    })
    expect(ranged.orders.map((order) => order.id)).toEqual([third.order.id, second.order.id])
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${ORDERS}?status=lost`, token: admin })
    // A leap second passes the date-time format but is no instant: 400 naming the field, not a 500.
    const leap = await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${ORDERS}?created_from=2030-06-30T23:59:60Z`, token: admin })
    expect(leap.details).toContainEqual({ field: 'created_from', message: expect.stringContaining("'created_from'") })
  })
})

describe('GET /api/v1/orders/:id', () => {
  test('the owner and admins see the order with every part; another customer gets 404', async ({ ctx, admin }) => {
    const owner = await ctx.signIn('customer')
    const other = await ctx.signIn('customer')
    const { order, payment } = await insertOrder(ctx, { customerId: owner.customerId, status: 'paid', items: [{ unitPriceMinor: 1250, quantity: 2 }] })
    const seen = await ctx.expectStatus<Order>(200, { method: 'GET', url: `${ORDERS}/${order.id}`, token: owner.token })
    expect(seen).toMatchObject({
      id: order.id,
      order_number: order.orderNumber,
      status: 'paid',
      payment_status: 'paid',
      fulfillment_status: 'unfulfilled',
      totals: { subtotal: 25, discount: 0, tax: 0, shipping: 0, total: 25 },
      amount_paid: 25,
      amount_refunded: 0,
      fulfillments: [],
    })
    expect(seen.items).toEqual([expect.objectContaining({ quantity: 2, unit_price: 12.5, line_total: 25, fulfilled_quantity: 0 })])
    expect(seen.payments).toEqual([expect.objectContaining({ id: payment!.id, status: 'captured', amount: 25, refunds: [] })])
    expect(await ctx.expectStatus(200, { method: 'GET', url: `${ORDERS}/${order.id}`, token: admin })).toEqual(seen)
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${ORDERS}/${order.id}`, token: other.token })
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${ORDERS}/${UNKNOWN_ID}`, token: admin })
  })
})

describe('POST /api/v1/orders (admin)', () => {
  test('creates a pending order at current prices with tax and shipping, takes the stock, emits order.created', async ({ ctx, admin }) => {
    await ctx.handle.db.insert(taxRates).values({ country: 'FR', ratePpm: 200_000, name: 'TVA' })
    const [colissimo] = await ctx.handle.db
      .insert(shippingMethods)
      .values({ name: 'Colissimo', currency: 'EUR', countries: ['FR'], basePriceMinor: 490 })
      .returning()
    const product = await createProduct(ctx, admin, { title: 'Croissant tin', price: 9.99, inventory_quantity: 10 })
    const customer = await ctx.signIn('customer')
    const order = await createOrder(ctx, admin, {
      email: 'chef@example.com',
      customer_id: customer.customerId,
      currency: 'EUR',
      items: [{ product_id: product.id, quantity: 3 }],
      shipping_address: ADDRESS,
      shipping_method_id: colissimo!.id,
      notes: 'Gift wrap',
    })
    // 3 × 9.99 = 29.97; TVA 20 % = 5.994 -> 5.99; shipping 4.90.
    expect(order).toMatchObject({
      status: 'pending',
      payment_status: 'unpaid',
      customer_id: customer.customerId,
      email: 'chef@example.com',
      totals: { subtotal: 29.97, discount: 0, tax: 5.99, shipping: 4.9, total: 40.86 },
      shipping_method: { id: colissimo!.id, name: 'Colissimo', amount: 4.9 },
      notes: 'Gift wrap',
      payments: [],
    })
    expect(order.billing_address).toEqual(order.shipping_address)
    expect(await stockOf(ctx, product.id)).toBe(7)
    expect(await eventKinds(ctx, order.id)).toEqual(['order.created'])
  })

  test('refusals leave nothing behind: short stock 409, other currency 400, unknown product 400, customers 403', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Two left', price: 5, inventory_quantity: 2 })
    const dollars = await createProduct(ctx, admin, { title: 'Dollar thing', price: 5, currency: 'USD', inventory_quantity: 2 })
    const customer = await ctx.signIn('customer')
    const before = { orders: await ctx.countRows('orders'), events: await ctx.countRows('events') }
    const payload = { email: 'x@example.com', currency: 'EUR', shipping_address: ADDRESS }
    const short = await ctx.expectError(409, 'insufficient_inventory', {
      method: 'POST',
      url: ORDERS,
      token: admin,
      payload: { ...payload, items: [{ product_id: product.id, quantity: 3 }] },
    })
    expect(short.details).toEqual([{ field: 'items[0]', message: 'Two left: 3 requested' }])
    await ctx.expectError(400, 'currency_mismatch', {
      method: 'POST',
      url: ORDERS,
      token: admin,
      payload: { ...payload, items: [{ product_id: dollars.id, quantity: 1 }] },
    })
    await ctx.expectError(400, 'validation_error', {
      method: 'POST',
      url: ORDERS,
      token: admin,
      payload: { ...payload, items: [{ product_id: UNKNOWN_ID, quantity: 1 }] },
    })
    await ctx.expectError(403, 'forbidden', {
      method: 'POST',
      url: ORDERS,
      token: customer.token,
      payload: { ...payload, items: [{ product_id: product.id, quantity: 1 }] },
    })
    await ctx.expectError(400, 'validation_error', {
      method: 'POST',
      url: ORDERS,
      token: admin,
      payload: { ...payload, items: [{ product_id: product.id, quantity: 1 }], status: 'paid', order_number: '1' },
    })
    expect({ orders: await ctx.countRows('orders'), events: await ctx.countRows('events') }).toEqual(before)
    expect(await stockOf(ctx, product.id)).toBe(2)
  })
})

describe('PATCH /api/v1/orders/:id', () => {
  test('changes notes, email and addresses while unfulfilled; addresses are 409 once shipped', async ({ ctx, admin }) => {
    const { order } = await insertOrder(ctx, { status: 'paid' })
    const url = `${ORDERS}/${order.id}`
    const updated = await ctx.expectStatus<Order>(200, {
      method: 'PATCH',
      url,
      token: admin,
      payload: { notes: 'Leave at the door', email: 'new@example.com', shipping_address: ADDRESS },
    })
    expect(updated).toMatchObject({ notes: 'Leave at the door', email: 'new@example.com', shipping_address: { city: 'Paris' } })
    const { order: shipped } = await insertOrder(ctx, { status: 'shipped' })
    await ctx.handle.sql`update orders set fulfillment_status = 'fulfilled' where id = ${shipped.id}`
    const error = await ctx.expectError(409, 'conflict', { method: 'PATCH', url: `${ORDERS}/${shipped.id}`, token: admin, payload: { shipping_address: ADDRESS } })
    expect(error.message).toBe('The addresses of an order cannot change once it has shipped')
    await ctx.expectStatus(200, { method: 'PATCH', url: `${ORDERS}/${shipped.id}`, token: admin, payload: { notes: 'Late note' } })
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url, token: admin, payload: { status: 'completed' } })
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url, token: admin, payload: { total: 0 } })
  })
})

describe('status moves', () => {
  test('cancel a pending order: cancelled, stock back, order.cancelled once', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Returnable', price: 4, inventory_quantity: 5 })
    const order = await createOrder(ctx, admin, { email: 'a@example.com', currency: 'EUR', items: [{ product_id: product.id, quantity: 2 }], shipping_address: ADDRESS })
    expect(await stockOf(ctx, product.id)).toBe(3)
    const cancelled = await ctx.expectStatus<Order>(200, { method: 'POST', url: `${ORDERS}/${order.id}/cancel`, token: admin })
    expect(cancelled.status).toBe('cancelled')
    expect(await stockOf(ctx, product.id)).toBe(5)
    expect(await eventKinds(ctx, order.id)).toEqual(['order.created', 'order.cancelled'])
    const again = await ctx.expectError(409, 'invalid_state_transition', { method: 'POST', url: `${ORDERS}/${order.id}/cancel`, token: admin })
    expect(again.message).toBe('An order cannot move from cancelled to cancelled; allowed from cancelled: none')
    expect(await stockOf(ctx, product.id)).toBe(5)
  })

  test('cancel a paid order: every payment refunded, stock back, order.refunded then order.cancelled', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Paid then cancelled', price: 8, inventory_quantity: 4 })
    const { order } = await insertOrder(ctx, { status: 'paid', items: [{ unitPriceMinor: 800, quantity: 1, productId: product.id }] })
    const cancelled = await ctx.expectStatus<Order>(200, { method: 'POST', url: `${ORDERS}/${order.id}/cancel`, token: admin })
    expect(cancelled).toMatchObject({ status: 'cancelled', payment_status: 'refunded', amount_paid: 8, amount_refunded: 8 })
    expect(cancelled.payments[0]!.refunds).toEqual([expect.objectContaining({ amount: 8, reason: 'Order cancelled' })])
    expect(await stockOf(ctx, product.id)).toBe(5)
    expect(await eventKinds(ctx, order.id)).toEqual(['order.refunded', 'order.cancelled'])
  })

  test('complete moves shipped to completed once; from any other status it is 409 listing the allowed moves', async ({ ctx, admin }) => {
    const { order } = await insertOrder(ctx, { status: 'shipped' })
    const completed = await ctx.expectStatus<Order>(200, { method: 'POST', url: `${ORDERS}/${order.id}/complete`, token: admin })
    expect(completed.status).toBe('completed')
    expect(await eventKinds(ctx, order.id)).toEqual(['order.completed'])
    const cases: [string, string][] = [
      ['pending', 'paid, cancelled'],
      ['paid', 'shipped, cancelled, refunded'],
      ['completed', 'refunded'],
      ['refunded', 'none'],
    ]
    for (const [status, allowed] of cases) {
      const { order: other } = await insertOrder(ctx, { status: status as 'paid' })
      const error = await ctx.expectError(409, 'invalid_state_transition', { method: 'POST', url: `${ORDERS}/${other.id}/complete`, token: admin })
      expect(error.message).toBe(`An order cannot move from ${status} to completed; allowed from ${status}: ${allowed}`)
      expect(await eventKinds(ctx, other.id)).toEqual([])
    }
    const { order: shipped } = await insertOrder(ctx, { status: 'shipped' })
    const refused = await ctx.expectError(409, 'invalid_state_transition', { method: 'POST', url: `${ORDERS}/${shipped.id}/cancel`, token: admin })
    expect(refused.message).toBe('An order cannot move from shipped to cancelled; allowed from shipped: completed, refunded')
  })

  test('customers may not cancel or complete (403); unknown orders are 404', async ({ ctx, admin }) => {
    const customer = await ctx.signIn('customer')
    const { order } = await insertOrder(ctx, { customerId: customer.customerId })
    await ctx.expectError(403, 'forbidden', { method: 'POST', url: `${ORDERS}/${order.id}/cancel`, token: customer.token })
    await ctx.expectError(404, 'not_found', { method: 'POST', url: `${ORDERS}/${UNKNOWN_ID}/complete`, token: admin })
  })
})

describe('every move of the state machine through the API', () => {
  test('allowed moves succeed with their event written once; every other pair is 409 naming the allowed moves and changes nothing', async ({ ctx, admin }) => {
    /** The request that asks for each target status; refunds need a payment, so pending has none. */
    const ACTIONS: Record<Exclude<OrderStatus, 'pending'>, (order: Awaited<ReturnType<typeof insertOrder>>) => Promise<{ statusCode: number; body: string }>> = {
      paid: ({ order }) =>
        ctx.request({ method: 'POST', url: `${ORDERS}/${order.id}/payments`, payload: { method: 'card', token: 'tok_visa' }, headers: { 'idempotency-key': randomUUID() }, token: admin }),
      shipped: ({ order }) => ctx.request({ method: 'POST', url: `${ORDERS}/${order.id}/fulfillments`, payload: { carrier: 'DHL', tracking_number: 'M1' }, token: admin }),
      completed: ({ order }) => ctx.request({ method: 'POST', url: `${ORDERS}/${order.id}/complete`, token: admin }),
      cancelled: ({ order }) => ctx.request({ method: 'POST', url: `${ORDERS}/${order.id}/cancel`, token: admin }),
      refunded: ({ payment }) =>
        ctx.request({ method: 'POST', url: `/api/v1/payments/${payment!.id}/refunds`, payload: {}, headers: { 'idempotency-key': randomUUID() }, token: admin }),
    }
    let tried = 0
    for (const from of ORDER_STATUSES) {
      for (const [to, action] of Object.entries(ACTIONS) as [Exclude<OrderStatus, 'pending'>, (typeof ACTIONS)['paid']][]) {
        if (from === 'pending' && to === 'refunded') continue // a pending order holds no payment to refund
        tried++
        const fixture = await insertOrder(ctx, { status: from })
        const response = await action(fixture)
        const after = (await ctx.handle.sql<{ status: OrderStatus }[]>`select status from orders where id = ${fixture.order.id}`)[0]!.status
        const events = await eventKinds(ctx, fixture.order.id)
        const event = ORDER_MOVES[from][to]
        const pair = `${from} -> ${to}: ${response.body}`
        if (event) {
          expect(response.statusCode, pair).toBeLessThan(300)
          expect(after, pair).toBe(to)
          expect(events.filter((kind) => kind === event), pair).toEqual([event])
        } else if (from === 'shipped' && to === 'shipped') {
          // A later fulfillment of a shipped order is not a move: it stays shipped and writes order.shipped.
          expect(response.statusCode, pair).toBe(201)
          expect(after, pair).toBe('shipped')
          expect(events, pair).toEqual(['order.shipped'])
        } else if ((from === 'paid' || from === 'shipped') && to === 'paid') {
          // Not a move either: a paid or shipped order takes a payment of what an edit left owed, and this one owes nothing.
          expect(response.statusCode, pair).toBe(409)
          expect(JSON.parse(response.body).error, pair).toMatchObject({ code: 'conflict', message: 'Nothing is owed on this order' })
          expect(after, pair).toBe(from)
          expect(events, pair).toEqual([])
        } else {
          expect(response.statusCode, pair).toBe(409)
          const allowed = allowedMoves(from)
          expect(JSON.parse(response.body).error, pair).toMatchObject({
            code: 'invalid_state_transition',
            message: `An order cannot move from ${from} to ${to}; allowed from ${from}: ${allowed.length > 0 ? allowed.join(', ') : 'none'}`,
          })
          expect(after, pair).toBe(from)
          expect(events, pair).toEqual([])
        }
      }
    }
    expect(tried).toBe(ORDER_STATUSES.length * 5 - 1)
  })
})

describe('DELETE /api/v1/orders/:id', () => {
  test('archives a pending order (cancelled and restocked first) or a cancelled one; others are 409', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Archived', price: 2, inventory_quantity: 3 })
    const pending = await createOrder(ctx, admin, { email: 'a@example.com', currency: 'EUR', items: [{ product_id: product.id, quantity: 3 }], shipping_address: ADDRESS })
    expect(await stockOf(ctx, product.id)).toBe(0)
    await ctx.expectStatus(204, { method: 'DELETE', url: `${ORDERS}/${pending.id}`, token: admin })
    expect(await stockOf(ctx, product.id)).toBe(3)
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${ORDERS}/${pending.id}`, token: admin })
    const listed = await ctx.expectStatus<OrderList>(200, { method: 'GET', url: `${ORDERS}?per_page=100`, token: admin })
    expect(listed.orders.some((order) => order.id === pending.id)).toBe(false)
    const [kept] = await ctx.handle.sql`select status, archived_at is not null as archived from orders where id = ${pending.id}`
    expect(kept).toEqual({ status: 'cancelled', archived: true })

    const { order: cancelled } = await insertOrder(ctx, { status: 'cancelled', paid: false })
    await ctx.expectStatus(204, { method: 'DELETE', url: `${ORDERS}/${cancelled.id}`, token: admin })
    const { order: paid } = await insertOrder(ctx, { status: 'paid' })
    const error = await ctx.expectError(409, 'invalid_state_transition', { method: 'DELETE', url: `${ORDERS}/${paid.id}`, token: admin })
    expect(error.message).toBe('Only pending or cancelled orders can be deleted; this one is paid')
    await ctx.expectError(404, 'not_found', { method: 'DELETE', url: `${ORDERS}/${cancelled.id}`, token: admin })
  })
})
