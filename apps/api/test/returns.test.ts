/** Returns: asking, approving, declining, canceling, receiving (restock and refund), and every refusal. */
import { randomUUID } from 'node:crypto'
import { describe, expect } from 'vitest'
import type { Checkout, Order, Product, Return, ReturnList } from '@commerce/domain'
import { test, type TestContext } from './helpers.js'
import { insertOrder, orderRow, shipAll, shippedOrder } from './order-fixtures.js'

const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000beef'
const ADDRESS = { first_name: 'Ada', last_name: 'Lovelace', line1: '12 St James Sq', city: 'London', postal_code: 'SW1Y 4JH', country: 'GB' }

const key = () => ({ 'idempotency-key': `return-${randomUUID()}` })

function askReturn(ctx: TestContext, token: string, orderId: string, items: { line_id: string; quantity: number }[], reason?: string) {
  return ctx.request({ method: 'POST', url: `/api/v1/orders/${orderId}/returns`, payload: { items, ...(reason ? { reason } : {}) }, token })
}

function act(ctx: TestContext, token: string, returnId: string, action: 'approve' | 'decline' | 'cancel' | 'receive', payload: Record<string, unknown> = {}) {
  return ctx.request({ method: 'POST', url: `/api/v1/returns/${returnId}/${action}`, payload, token, ...(action === 'receive' ? { headers: key() } : {}) })
}

async function stockOf(ctx: TestContext, productId: string): Promise<number> {
  const [row] = await ctx.handle.sql<{ n: number }[]>`select inventory_quantity as n from products where id = ${productId}`
  return row!.n
}

async function refundsOf(ctx: TestContext, orderId: string) {
  return ctx.handle.sql<{ amount_minor: string; return_id: string | null }[]>`select amount_minor, return_id from refunds where order_id = ${orderId} order by id`
}

describe('a return of part of an order, then of the rest', () => {
  test('the customer asks, the shop approves and receives: restockable units are back in stock and the units’ share is refunded', async ({ ctx, admin }) => {
    const buyer = await ctx.signIn('customer')
    const { order, mugLine, plateLine, mug, plate } = await shippedOrder(ctx, admin, buyer.customerId)

    const asked = await askReturn(ctx, buyer.token, order.id, [{ line_id: mugLine.id, quantity: 2 }], 'Too small')
    expect(asked.statusCode, asked.body).toBe(201)
    const requested = asked.json<Return>()
    expect(requested).toMatchObject({
      order_id: order.id,
      order_number: order.orderNumber,
      email: 'buyer@example.com',
      status: 'requested',
      reason: 'Too small',
      currency: 'USD',
      items: [{ line_id: mugLine.id, title: 'Mug', quantity: 2, restocked_quantity: 0, damaged_quantity: 0, subtotal: 20, discount: 0, tax: 0, total: 20 }],
      refund: { merchandise: 20, shipping: 0, restocking_fee: 0, total: 20 },
      amount_refunded: 0,
      refund_ids: [],
      approved_at: null,
      received_at: null,
    })
    const asOrdered = await ctx.expectStatus<Order>(200, { method: 'GET', url: `/api/v1/orders/${order.id}`, token: buyer.token })
    expect(asOrdered.items.map((item) => [item.id, item.returned_quantity])).toEqual([
      [mugLine.id, 2],
      [plateLine.id, 0],
    ])

    const approved = await act(ctx, admin, requested.id, 'approve')
    expect(approved.statusCode, approved.body).toBe(200)
    expect(approved.json<Return>()).toMatchObject({ status: 'approved', approved_at: expect.any(String) })
    // The order's address changed after the request: the return shows (and its next emails go to) the order's address of the moment.
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/orders/${order.id}`, payload: { email: 'ada@example.com' }, token: admin })

    // One mug came back broken: refunded, not restocked.
    const received = await act(ctx, admin, requested.id, 'receive', { damaged: [{ line_id: mugLine.id, quantity: 1 }] })
    expect(received.statusCode, received.body).toBe(200)
    const done = received.json<Return>()
    expect(done).toMatchObject({
      status: 'received',
      items: [{ line_id: mugLine.id, quantity: 2, restocked_quantity: 1, damaged_quantity: 1, total: 20 }],
      refund: { merchandise: 20, shipping: 0, restocking_fee: 0, total: 20 },
      amount_refunded: 20,
      received_at: expect.any(String),
    })
    expect(done.refund_ids).toHaveLength(1)
    expect(await stockOf(ctx, mug.id)).toBe(6)
    expect(await stockOf(ctx, plate.id)).toBe(5)
    const afterFirst = await ctx.expectStatus<Order>(200, { method: 'GET', url: `/api/v1/orders/${order.id}`, token: admin })
    expect(afterFirst).toMatchObject({ status: 'shipped', payment_status: 'partially_refunded', amount_refunded: 20 })
    expect(afterFirst.payments[0]!.refunds.map((refund) => refund.id)).toEqual(done.refund_ids)

    // The rest of the order comes back: the shipping goes back with the last units.
    const rest = await ctx.expectStatus<Return>(201, {
      method: 'POST',
      url: `/api/v1/orders/${order.id}/returns`,
      payload: { items: [{ line_id: plateLine.id, quantity: 1 }] },
      token: admin,
    })
    const last = await act(ctx, admin, rest.id, 'receive')
    expect(last.statusCode, last.body).toBe(200)
    expect(last.json<Return>()).toMatchObject({ refund: { merchandise: 5, shipping: 4, total: 9 }, amount_refunded: 9 })
    expect(await stockOf(ctx, plate.id)).toBe(6)
    const refunded = await ctx.expectStatus<Order>(200, { method: 'GET', url: `/api/v1/orders/${order.id}`, token: admin })
    expect(refunded).toMatchObject({ status: 'refunded', payment_status: 'refunded', amount_refunded: refunded.totals.total })
    expect((await refundsOf(ctx, order.id)).map((refund) => refund.return_id)).toEqual([requested.id, rest.id])

    expect(await ctx.orderEvents(order.id)).toEqual([
      'order.shipped',
      'return.requested',
      'return.approved',
      'order.refunded',
      'return.received',
      'return.requested',
      'order.refunded',
      'return.received',
    ])
    // Each return event's data is the return as the API answered the move: with the order's number and address, where the worker sends its emails.
    const returnEvents = await ctx.handle.sql<{ kind: string; data: Return }[]>`
      select kind, data from events where resource_id = ${order.id} and kind like 'return.%' order by id`
    expect(returnEvents.map((event) => [event.kind, event.data])).toEqual([
      ['return.requested', requested],
      ['return.approved', approved.json()],
      ['return.received', done],
      ['return.requested', rest],
      ['return.received', last.json()],
    ])
    expect(done).toMatchObject({ order_number: order.orderNumber, email: 'ada@example.com' })
    const listed = await ctx.expectStatus<ReturnList>(200, { method: 'GET', url: `/api/v1/orders/${order.id}/returns`, token: buyer.token })
    expect(listed.returns).toEqual([done, last.json()])
    expect(listed.meta).toEqual({ page: 1, per_page: 20, total: 2, total_pages: 1 })
    expect(await ctx.expectStatus<Return>(200, { method: 'GET', url: `/api/v1/returns/${rest.id}`, token: buyer.token })).toEqual(last.json())
  })

  test('a checkout order with a coupon, tax and shipping: the returns of every unit refund exactly what was paid', async ({ ctx, admin }) => {
    await ctx.expectStatus(201, { method: 'POST', url: '/api/v1/tax-rates', payload: { country: 'GB', rate: 20, name: 'VAT' }, token: admin })
    await ctx.expectStatus(201, {
      method: 'POST',
      url: '/api/v1/shipping/methods',
      payload: { name: 'Courier', currency: 'GBP', countries: ['GB'], base_price: 4.99 },
      token: admin,
    })
    await ctx.expectStatus(201, { method: 'POST', url: '/api/v1/coupons', payload: { code: 'THIRD', type: 'percentage', value: 33.3333 }, token: admin })
    const buyer = await ctx.signIn('customer')
    const auth = { token: buyer.token }
    const products = [
      await ctx.expectStatus<Product>(201, { method: 'POST', url: '/api/v1/products', payload: { title: 'Lamp', price: 12.99, currency: 'GBP', inventory_quantity: 9 }, token: admin }),
      await ctx.expectStatus<Product>(201, { method: 'POST', url: '/api/v1/products', payload: { title: 'Shade', price: 3.33, currency: 'GBP', inventory_quantity: 9 }, token: admin }),
    ]
    const cart = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: 'GBP' }, ...auth })
    for (const [product, quantity] of [
      [products[0]!, 3],
      [products[1]!, 7],
    ] as const) {
      await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/carts/${cart.id}/items`, payload: { product_id: product.id, quantity }, ...auth })
    }
    await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/carts/${cart.id}/coupons`, payload: { code: 'THIRD' }, ...auth })
    const checkout = await ctx.expectStatus<Checkout>(201, {
      method: 'POST',
      url: '/api/v1/checkouts',
      payload: { cart_id: cart.id, email: 'ada@example.com', shipping_address: ADDRESS },
      ...auth,
    })
    await ctx.expectStatus(200, { method: 'POST', url: `/api/v1/checkouts/${checkout.id}/shipping`, payload: { rate_id: checkout.shipping_rates[0]!.id }, ...auth })
    const order = await ctx.expectStatus<Order>(201, {
      method: 'POST',
      url: `/api/v1/checkouts/${checkout.id}/complete`,
      payload: { payment: { method: 'card', token: 'tok_visa' } },
      headers: key(),
      ...auth,
    })
    expect(order.totals.discount).toBeGreaterThan(0)
    expect(order.totals.tax).toBeGreaterThan(0)
    await shipAll(ctx, admin, order.id)

    // Every unit back, one or two at a time, lines interleaved.
    const [lamp, shade] = order.items
    const batches = [
      [{ line_id: shade!.id, quantity: 2 }],
      [{ line_id: lamp!.id, quantity: 1 }, { line_id: shade!.id, quantity: 1 }],
      [{ line_id: shade!.id, quantity: 3 }],
      [{ line_id: lamp!.id, quantity: 2 }, { line_id: shade!.id, quantity: 1 }],
    ]
    const figures: Return[] = []
    for (const items of batches) {
      const asked = await ctx.expectStatus<Return>(201, { method: 'POST', url: `/api/v1/orders/${order.id}/returns`, payload: { items }, ...auth })
      const received = await act(ctx, admin, asked.id, 'receive')
      expect(received.statusCode, received.body).toBe(200)
      figures.push(received.json<Return>())
    }
    const toMinor = (amount: number) => Math.round(amount * 100)
    const sum = (values: number[]) => values.reduce((total, value) => total + toMinor(value), 0)
    for (const line of [lamp!, shade!]) {
      const shares = figures.flatMap((figure) => figure.items.filter((item) => item.line_id === line.id))
      expect(sum(shares.map((share) => share.subtotal))).toBe(toMinor(line.line_total))
      expect(sum(shares.map((share) => share.discount))).toBe(toMinor(line.discount))
      expect(sum(shares.map((share) => share.tax))).toBe(toMinor(line.tax))
    }
    expect(figures.map((figure) => figure.refund.shipping)).toEqual([0, 0, 0, order.totals.shipping])
    expect(sum(figures.map((figure) => figure.amount_refunded))).toBe(toMinor(order.totals.total))
    const after = await ctx.expectStatus<Order>(200, { method: 'GET', url: `/api/v1/orders/${order.id}`, token: admin })
    expect(after).toMatchObject({ status: 'refunded', payment_status: 'refunded', amount_refunded: order.totals.total })
    expect(after.items.map((item) => item.returned_quantity)).toEqual([3, 7])
    expect(await stockOf(ctx, products[0]!.id)).toBe(9)
    expect(await stockOf(ctx, products[1]!.id)).toBe(9)
  })
})

describe('the shop’s choices when receiving', () => {
  test('a restocking fee and a shipping refund chosen by the shop; a shipping refund past what is left is refused', async ({ ctx, admin }) => {
    const { order, mugLine } = await shippedOrder(ctx, admin)
    const asked = await ctx.expectStatus<Return>(201, {
      method: 'POST',
      url: `/api/v1/orders/${order.id}/returns`,
      payload: { items: [{ line_id: mugLine.id, quantity: 1 }] },
      token: admin,
    })
    const tooMuch = await act(ctx, admin, asked.id, 'receive', { shipping_refund: 4.01 })
    expect(tooMuch.statusCode).toBe(400)
    expect(tooMuch.json().error.details).toEqual([{ field: 'shipping_refund', message: 'At most 400' }])
    expect((await ctx.expectStatus<Return>(200, { method: 'GET', url: `/api/v1/returns/${asked.id}`, token: admin })).status).toBe('requested')

    const received = await act(ctx, admin, asked.id, 'receive', { shipping_refund: 1.5, restocking_fee: 12.5 })
    expect(received.statusCode, received.body).toBe(200)
    // 10.00 − 12.5 % (1.25) + 1.50 shipping.
    expect(received.json<Return>()).toMatchObject({ refund: { merchandise: 10, shipping: 1.5, restocking_fee: 1.25, total: 10.25 }, amount_refunded: 10.25 })
  })

  test('a refund by amount made before leaves less to give back: the return refunds what is left and says so', async ({ ctx, admin }) => {
    const { order, mugLine, plateLine, payment } = await shippedOrder(ctx, admin)
    // 29.00 paid; 20.00 refunded by amount, 9.00 left.
    await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/payments/${payment.id}/refunds`, payload: { amount: 20 }, headers: key(), token: admin })
    const asked = await ctx.expectStatus<Return>(201, {
      method: 'POST',
      url: `/api/v1/orders/${order.id}/returns`,
      payload: { items: [{ line_id: mugLine.id, quantity: 2 }, { line_id: plateLine.id, quantity: 1 }] },
      token: admin,
    })
    const received = await act(ctx, admin, asked.id, 'receive')
    expect(received.statusCode, received.body).toBe(200)
    expect(received.json<Return>()).toMatchObject({ refund: { total: 29 }, amount_refunded: 9 })
    expect(await orderRow(ctx, order.id)).toMatchObject({ refundedMinor: 2900, paymentStatus: 'refunded', status: 'refunded' })
  })
})

describe('refusals', () => {
  test('units not shipped, more units than shipped, unknown lines, a line twice: nothing is written', async ({ ctx, admin }) => {
    const { order, items } = await insertOrder(ctx, { status: 'paid', items: [{ unitPriceMinor: 1000, quantity: 3 }, { unitPriceMinor: 500 }] })
    const before = await ctx.countRows('returns')
    const notShipped = await askReturn(ctx, admin, order.id, [{ line_id: items[0]!.id, quantity: 1 }])
    expect(notShipped.statusCode).toBe(409)
    expect(notShipped.json().error.message).toBe("Only a shipped or completed order's units can be returned; this order is paid")

    await ctx.expectStatus(201, {
      method: 'POST',
      url: `/api/v1/orders/${order.id}/fulfillments`,
      payload: { carrier: 'DHL', tracking_number: 'JD1', items: [{ order_item_id: items[0]!.id, quantity: 2 }] },
      token: admin,
    })
    const refused = await askReturn(ctx, admin, order.id, [
      { line_id: items[0]!.id, quantity: 3 },
      { line_id: items[1]!.id, quantity: 1 },
      { line_id: UNKNOWN_ID, quantity: 1 },
      { line_id: items[0]!.id, quantity: 1 },
    ])
    expect(refused.statusCode).toBe(400)
    expect(refused.json().error.details).toEqual([
      { field: 'items[0].quantity', message: "Only 2 of this line's units can be returned (2 shipped, 0 in earlier returns)" },
      { field: 'items[1].quantity', message: "Only 0 of this line's units can be returned (0 shipped, 0 in earlier returns)" },
      { field: 'items[2].line_id', message: 'No line of this order has this id' },
      { field: 'items[3].line_id', message: 'This line is named twice' },
    ])
    const empty = await askReturn(ctx, admin, order.id, [])
    expect(empty.statusCode).toBe(400)
    expect(await ctx.countRows('returns')).toBe(before)
    expect((await ctx.expectStatus<Order>(200, { method: 'GET', url: `/api/v1/orders/${order.id}`, token: admin })).items.map((item) => item.returned_quantity)).toEqual([0, 0])
  })

  test('units in a return cannot be asked for again until it is declined or canceled', async ({ ctx, admin }) => {
    const { order, mugLine } = await shippedOrder(ctx, admin)
    const first = await ctx.expectStatus<Return>(201, { method: 'POST', url: `/api/v1/orders/${order.id}/returns`, payload: { items: [{ line_id: mugLine.id, quantity: 2 }] }, token: admin })
    const again = await askReturn(ctx, admin, order.id, [{ line_id: mugLine.id, quantity: 1 }])
    expect(again.statusCode).toBe(400)
    expect(again.json().error.details[0].message).toBe("Only 0 of this line's units can be returned (2 shipped, 2 in earlier returns)")

    const declined = await act(ctx, admin, first.id, 'decline', { reason: 'Past the 30 days' })
    expect(declined.statusCode, declined.body).toBe(200)
    expect(declined.json<Return>()).toMatchObject({ status: 'declined', decline_reason: 'Past the 30 days', declined_at: expect.any(String) })
    const second = await ctx.expectStatus<Return>(201, { method: 'POST', url: `/api/v1/orders/${order.id}/returns`, payload: { items: [{ line_id: mugLine.id, quantity: 2 }] }, token: admin })
    expect((await act(ctx, admin, second.id, 'cancel')).json<Return>()).toMatchObject({ status: 'canceled', canceled_at: expect.any(String) })
    await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/orders/${order.id}/returns`, payload: { items: [{ line_id: mugLine.id, quantity: 2 }] }, token: admin })
    expect(await orderRow(ctx, order.id)).toMatchObject({ refundedMinor: 0 })
  })

  test('moves a return’s state does not allow are 409 and change nothing', async ({ ctx, admin }) => {
    const { order, mugLine } = await shippedOrder(ctx, admin)
    const asked = await ctx.expectStatus<Return>(201, { method: 'POST', url: `/api/v1/orders/${order.id}/returns`, payload: { items: [{ line_id: mugLine.id, quantity: 1 }] }, token: admin })
    await ctx.expectStatus(200, { method: 'POST', url: `/api/v1/returns/${asked.id}/decline`, payload: {}, token: admin })
    for (const action of ['approve', 'decline', 'cancel', 'receive'] as const) {
      const refused = await act(ctx, admin, asked.id, action)
      expect(refused.statusCode, action).toBe(409)
      expect(refused.json().error.code).toBe('invalid_state_transition')
    }
    const received = await ctx.expectStatus<Return>(201, { method: 'POST', url: `/api/v1/orders/${order.id}/returns`, payload: { items: [{ line_id: mugLine.id, quantity: 1 }] }, token: admin })
    expect((await act(ctx, admin, received.id, 'receive')).statusCode).toBe(200)
    expect((await act(ctx, admin, received.id, 'receive')).statusCode).toBe(409)
    expect((await act(ctx, admin, received.id, 'cancel')).statusCode).toBe(409)
    expect(await refundsOf(ctx, order.id)).toHaveLength(1)
  })

  test('damaged units must be units of the return', async ({ ctx, admin }) => {
    const { order, mugLine, plateLine, mug } = await shippedOrder(ctx, admin)
    const asked = await ctx.expectStatus<Return>(201, { method: 'POST', url: `/api/v1/orders/${order.id}/returns`, payload: { items: [{ line_id: mugLine.id, quantity: 1 }] }, token: admin })
    for (const [damaged, field] of [
      [[{ line_id: plateLine.id, quantity: 1 }], 'damaged[0].line_id'],
      [[{ line_id: mugLine.id, quantity: 2 }], 'damaged[0].quantity'],
      [[{ line_id: mugLine.id, quantity: 1 }, { line_id: mugLine.id, quantity: 1 }], 'damaged[1].line_id'],
    ] as const) {
      const refused = await act(ctx, admin, asked.id, 'receive', { damaged })
      expect(refused.statusCode).toBe(400)
      expect(refused.json().error.details[0].field).toBe(field)
    }
    expect(await stockOf(ctx, mug.id)).toBe(5)
    expect(await refundsOf(ctx, order.id)).toEqual([])
  })

  test('a customer sees and withdraws only its own returns and cannot decide on them', async ({ ctx, admin }) => {
    const owner = await ctx.signIn('customer')
    const other = await ctx.signIn('customer')
    const { order, mugLine } = await shippedOrder(ctx, admin, owner.customerId)
    expect((await askReturn(ctx, other.token, order.id, [{ line_id: mugLine.id, quantity: 1 }])).statusCode).toBe(404)
    const asked = await ctx.expectStatus<Return>(201, { method: 'POST', url: `/api/v1/orders/${order.id}/returns`, payload: { items: [{ line_id: mugLine.id, quantity: 1 }] }, token: owner.token })
    expect((await ctx.request({ method: 'GET', url: `/api/v1/returns/${asked.id}`, token: other.token })).statusCode).toBe(404)
    expect((await ctx.request({ method: 'GET', url: `/api/v1/orders/${order.id}/returns`, token: other.token })).statusCode).toBe(404)
    expect((await act(ctx, other.token, asked.id, 'cancel')).statusCode).toBe(404)
    for (const action of ['approve', 'decline', 'receive'] as const) expect((await act(ctx, owner.token, asked.id, action)).statusCode, action).toBe(403)
    expect((await ctx.request({ method: 'GET', url: `/api/v1/returns/${UNKNOWN_ID}`, token: admin })).statusCode).toBe(404)
    expect((await act(ctx, owner.token, asked.id, 'cancel')).json<Return>().status).toBe('canceled')
  })
})

describe('concurrency', () => {
  test('two returns asking for the same last units at once: exactly one is made', async ({ ctx, admin }) => {
    const { order, mugLine } = await shippedOrder(ctx, admin)
    const answers = await Promise.all([1, 2, 3, 4].map(() => askReturn(ctx, admin, order.id, [{ line_id: mugLine.id, quantity: 2 }])))
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 400, 400, 400])
    expect((await orderRow(ctx, order.id))).toBeDefined()
    const [line] = await ctx.handle.sql<{ returned_quantity: number }[]>`select returned_quantity from order_items where id = ${mugLine.id}`
    expect(line!.returned_quantity).toBe(2)
  })

  test('receiving one return twice at once refunds it once', async ({ ctx, admin }) => {
    const { order, mugLine, mug } = await shippedOrder(ctx, admin)
    const asked = await ctx.expectStatus<Return>(201, { method: 'POST', url: `/api/v1/orders/${order.id}/returns`, payload: { items: [{ line_id: mugLine.id, quantity: 2 }] }, token: admin })
    const answers = await Promise.all([1, 2, 3].map(() => act(ctx, admin, asked.id, 'receive')))
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 409, 409])
    expect(await refundsOf(ctx, order.id)).toEqual([{ amount_minor: '2000', return_id: asked.id }])
    expect(await stockOf(ctx, mug.id)).toBe(7)
  })
})

describe('GET /returns', () => {
  test('the shop’s queue by status; a customer sees only the returns of its own orders', async ({ ctx, admin }) => {
    const owner = await ctx.signIn('customer')
    const other = await ctx.signIn('customer')
    const mine = await shippedOrder(ctx, admin, owner.customerId)
    const theirs = await shippedOrder(ctx, admin, other.customerId)
    const ask = (placed: typeof mine, token: string) =>
      ctx.expectStatus<Return>(201, { method: 'POST', url: `/api/v1/orders/${placed.order.id}/returns`, payload: { items: [{ line_id: placed.mugLine.id, quantity: 1 }] }, token })
    const first = await ask(mine, owner.token)
    const second = await ask(theirs, other.token)
    await ctx.expectStatus(200, { method: 'POST', url: `/api/v1/returns/${first.id}/approve`, token: admin })
    const list = (query: string, token: string) => ctx.expectStatus<ReturnList>(200, { method: 'GET', url: `/api/v1/returns${query}`, token })
    const requested = await list('?status=requested', admin)
    expect(requested.returns.map((item) => item.id)).toContain(second.id)
    expect(requested.returns.find((item) => item.id === second.id)).toMatchObject({ order_id: theirs.order.id, order_number: theirs.order.orderNumber, email: 'buyer@example.com' })
    expect(requested.returns.every((item) => item.status === 'requested')).toBe(true)
    expect((await list('?status=approved', admin)).returns.map((item) => item.id)).toContain(first.id)
    expect((await list('', owner.token)).returns.map((item) => item.id)).toEqual([first.id])
    expect((await list('?status=requested', owner.token)).returns).toEqual([])
    expect((await ctx.request({ method: 'GET', url: '/api/v1/returns?status=lost', token: admin })).statusCode).toBe(400)
  })
})
