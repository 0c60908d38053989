/** Order edits: preview and commit, cancelling units not shipped and adding lines, the money and stock they move, every refusal. */
import { randomUUID } from 'node:crypto'
import { describe, expect } from 'vitest'
import { ProviderRefusedError, type Order, type OrderEditList, type OrderEditResult, type PaymentProvider, type Product, type Return } from '@commerce/domain'
import { testProvider } from '@commerce/payments'
import { createTestContext, test, type TestContext } from './helpers.js'
import { buyOne, refundingSlowly, insertOrder, orderRow } from './order-fixtures.js'

const key = () => ({ 'idempotency-key': `edit-${randomUUID()}` })

function edit(ctx: TestContext, token: string, orderId: string, body: Record<string, unknown>) {
  return ctx.request({ method: 'POST', url: `/api/v1/orders/${orderId}/edits`, payload: body, headers: key(), token })
}

function preview(ctx: TestContext, token: string, orderId: string, body: Record<string, unknown>) {
  return ctx.request({ method: 'POST', url: `/api/v1/orders/${orderId}/edits/preview`, payload: body, token })
}

async function stockOf(ctx: TestContext, productId: string): Promise<number> {
  const [row] = await ctx.handle.sql<{ n: number }[]>`select inventory_quantity as n from products where id = ${productId}`
  return row!.n
}

const product = (ctx: TestContext, admin: string, title: string, price: number, stock = 5) =>
  ctx.expectStatus<Product>(201, { method: 'POST', url: '/api/v1/products', payload: { title, price, currency: 'USD', inventory_quantity: stock }, token: admin })

/** An order of 2 mugs at 10.00 and a plate at 5.00, shipping 4.00: 29.00, paid unless `paid` is false. */
async function order(ctx: TestContext, admin: string, options: { paid?: boolean; customerId?: string | null } = {}) {
  const mug = await product(ctx, admin, 'Mug', 10)
  const plate = await product(ctx, admin, 'Plate', 5)
  const placed = await insertOrder(ctx, {
    status: options.paid === false ? 'pending' : 'paid',
    customerId: options.customerId ?? null,
    shippingMinor: 400,
    items: [
      { unitPriceMinor: 1000, quantity: 2, productId: mug.id, title: 'Mug' },
      { unitPriceMinor: 500, quantity: 1, productId: plate.id, title: 'Plate' },
    ],
  })
  return { ...placed, mug, plate, mugLine: placed.items[0]!, plateLine: placed.items[1]! }
}

const fingerprint = async (ctx: TestContext, orderId: string) =>
  JSON.stringify(
    await ctx.handle.sql`select
      (select row_to_json(o) from orders o where o.id = ${orderId}) as o,
      (select json_agg(i order by i.id) from order_items i where i.order_id = ${orderId}) as i,
      (select count(*) from refunds where order_id = ${orderId}) as r,
      (select count(*) from order_edits where order_id = ${orderId}) as e,
      (select count(*) from events) as ev,
      (select json_agg(p.inventory_quantity order by p.id) from products p) as stock`,
  )

describe('an edit of a paid order', () => {
  test('the preview shows what the commit then does: a mug cancelled and a bowl added, the difference refunded through the provider', async ({ ctx, admin }) => {
    const { order: placed, mug, mugLine, plateLine } = await order(ctx, admin)
    const bowl = await product(ctx, admin, 'Bowl', 7.5)
    const body = { lines: [{ line_id: mugLine.id, quantity: 1 }], add: [{ product_id: bowl.id, quantity: 1 }], reason: 'Customer called' }

    const before = await fingerprint(ctx, placed.id)
    const previewed = await preview(ctx, admin, placed.id, body)
    expect(previewed.statusCode, previewed.body).toBe(200)
    const seen = previewed.json<OrderEditResult>()
    expect(seen.edit).toMatchObject({
      order_id: placed.id,
      reason: 'Customer called',
      canceled: [{ line_id: mugLine.id, quantity: 1, subtotal: 10, discount: 0, tax: 0, total: 10 }],
      total_before: 29,
      total_after: 26.5,
      difference: -2.5,
      amount_refunded: 2.5,
      amount_owed: 0,
      refund_ids: [],
    })
    expect(seen.order.totals).toEqual({ subtotal: 22.5, discount: 0, tax: 0, shipping: 4, total: 26.5 })
    expect(await fingerprint(ctx, placed.id)).toBe(before)

    const committed = await edit(ctx, admin, placed.id, body)
    expect(committed.statusCode, committed.body).toBe(201)
    const done = committed.json<OrderEditResult>()
    expect({ ...done.edit, id: 'x', created_at: 'x', refund_ids: [], added_line_ids: [] }).toEqual({ ...seen.edit, id: 'x', created_at: 'x', added_line_ids: [] })
    expect(done.edit.refund_ids).toHaveLength(1)
    expect(done.order).toMatchObject({ status: 'paid', payment_status: 'paid', amount_paid: 29, amount_refunded: 2.5, totals: { total: 26.5 } })
    expect(done.order.items.map((item) => [item.id, item.title, item.quantity, item.canceled_quantity])).toEqual([
      [mugLine.id, 'Mug', 2, 1],
      [plateLine.id, 'Plate', 1, 0],
      [done.edit.added_line_ids[0], 'Bowl', 1, 0],
    ])
    expect(await stockOf(ctx, mug.id)).toBe(6)
    expect(await stockOf(ctx, bowl.id)).toBe(4)
    expect(await ctx.orderEvents(placed.id)).toEqual(['order.refunded', 'order.edited'])
    const listed = await ctx.expectStatus<OrderEditList>(200, { method: 'GET', url: `/api/v1/orders/${placed.id}/edits`, token: admin })
    expect(listed.edits).toEqual([done.edit])

    // Shipping sends what the lines keep: one mug, the plate and the bowl.
    const shipped = await ctx.expectStatus<{ items: { order_item_id: string; quantity: number }[] }>(201, {
      method: 'POST',
      url: `/api/v1/orders/${placed.id}/fulfillments`,
      payload: { carrier: 'DHL', tracking_number: 'JD1' },
      token: admin,
    })
    expect(shipped.items.find((item) => item.order_item_id === mugLine.id)?.quantity).toBe(1)
    expect(await orderRow(ctx, placed.id)).toMatchObject({ fulfillmentStatus: 'fulfilled' })
  })

  test('adding a line leaves the difference owed; POST /orders/:id/payments takes it and the order stays paid', async ({ ctx, admin }) => {
    const { order: placed } = await order(ctx, admin)
    const bowl = await product(ctx, admin, 'Bowl', 7.5)
    const done = await edit(ctx, admin, placed.id, { add: [{ product_id: bowl.id, quantity: 2 }] })
    expect(done.statusCode, done.body).toBe(201)
    expect(done.json<OrderEditResult>().edit).toMatchObject({ difference: 15, amount_refunded: 0, amount_owed: 15 })
    expect(done.json<OrderEditResult>().order).toMatchObject({ status: 'paid', payment_status: 'unpaid', totals: { total: 44 }, amount_owed: 15 })
    const paid = await ctx.request({ method: 'POST', url: `/api/v1/orders/${placed.id}/payments`, payload: { method: 'card', token: 'tok_visa' }, headers: key(), token: admin })
    expect(paid.statusCode, paid.body).toBe(201)
    expect(paid.json()).toMatchObject({ amount: 15, status: 'captured' })
    expect(await orderRow(ctx, placed.id)).toMatchObject({ status: 'paid', paymentStatus: 'paid', paidMinor: 4400 })
    const nothing = await ctx.request({ method: 'POST', url: `/api/v1/orders/${placed.id}/payments`, payload: { method: 'card', token: 'tok_visa' }, headers: key(), token: admin })
    expect(nothing.statusCode).toBe(409)
  })

  test('a pending order’s edit changes what it owes and refunds nothing', async ({ ctx, admin }) => {
    const { order: placed, plateLine } = await order(ctx, admin, { paid: false })
    const done = await edit(ctx, admin, placed.id, { lines: [{ line_id: plateLine.id, quantity: 0 }] })
    expect(done.statusCode, done.body).toBe(201)
    expect(done.json<OrderEditResult>().edit).toMatchObject({ total_after: 24, amount_refunded: 0, amount_owed: 24 })
    expect(done.json<OrderEditResult>().order).toMatchObject({ amount_owed: 24 })
    const paid = await ctx.request({ method: 'POST', url: `/api/v1/orders/${placed.id}/payments`, payload: { method: 'card', token: 'tok_visa' }, headers: key(), token: admin })
    expect(paid.json()).toMatchObject({ amount: 24 })
    expect(await orderRow(ctx, placed.id)).toMatchObject({ status: 'paid', paidMinor: 2400 })
  })
})

describe('edits, shipments and returns of one line', () => {
  test('a unit cancelled, the rest shipped and returned: the line’s shares add up to what was paid for it', async ({ ctx, admin }) => {
    const mug = await product(ctx, admin, 'Odd mug', 3.33)
    const placed = await insertOrder(ctx, { status: 'paid', items: [{ unitPriceMinor: 333, quantity: 3, productId: mug.id }] })
    const line = placed.items[0]!
    const edited = await edit(ctx, admin, placed.order.id, { lines: [{ line_id: line.id, quantity: 2 }] })
    expect(edited.statusCode, edited.body).toBe(201)
    await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/orders/${placed.order.id}/fulfillments`, payload: { carrier: 'DHL', tracking_number: 'JD2' }, token: admin })
    const asked = await ctx.expectStatus<Return>(201, {
      method: 'POST',
      url: `/api/v1/orders/${placed.order.id}/returns`,
      payload: { items: [{ line_id: line.id, quantity: 2 }] },
      token: admin,
    })
    const received = await ctx.request({ method: 'POST', url: `/api/v1/returns/${asked.id}/receive`, payload: {}, headers: key(), token: admin })
    expect(received.statusCode, received.body).toBe(200)
    const cancelledShare = Math.round(edited.json<OrderEditResult>().edit.canceled[0]!.total * 100)
    const returnedShare = Math.round(received.json<Return>().refund.merchandise * 100)
    expect(cancelledShare + returnedShare).toBe(999)
    expect(await orderRow(ctx, placed.order.id)).toMatchObject({ refundedMinor: 999, paymentStatus: 'refunded', status: 'refunded' })
    expect(await stockOf(ctx, mug.id)).toBe(8)
  })
})

describe('refusals', () => {
  test('shipped units, more units, unknown lines and products, nothing to change, no units left: 400 naming each, nothing written', async ({ ctx, admin }) => {
    const { order: placed, mugLine, plateLine } = await order(ctx, admin)
    await ctx.expectStatus(201, {
      method: 'POST',
      url: `/api/v1/orders/${placed.id}/fulfillments`,
      payload: { carrier: 'DHL', tracking_number: 'JD3', items: [{ order_item_id: mugLine.id, quantity: 1 }] },
      token: admin,
    })
    const before = await fingerprint(ctx, placed.id)
    const cases: [Record<string, unknown>, string][] = [
      [{ lines: [{ line_id: mugLine.id, quantity: 0 }] }, 'lines[0].quantity'],
      [{ lines: [{ line_id: plateLine.id, quantity: 2 }] }, 'lines[0].quantity'],
      [{ lines: [{ line_id: randomUUID(), quantity: 0 }] }, 'lines[0].line_id'],
      [{ add: [{ product_id: randomUUID(), quantity: 1 }] }, 'add[0]'],
    ]
    for (const [body, field] of cases) {
      for (const send of [preview, edit]) {
        const refused = await send(ctx, admin, placed.id, body)
        expect(refused.statusCode, JSON.stringify(body)).toBe(400)
        expect(refused.json().error.details.map((detail: { field: string }) => detail.field)).toContain(field)
      }
    }
    expect((await edit(ctx, admin, placed.id, {})).json().error.message).toBe('The edit changes nothing')
    expect(await fingerprint(ctx, placed.id)).toBe(before)
    const alone = await order(ctx, admin)
    const emptied = await edit(ctx, admin, alone.order.id, { lines: [{ line_id: alone.mugLine.id, quantity: 0 }, { line_id: alone.plateLine.id, quantity: 0 }] })
    expect(emptied.statusCode).toBe(400)
    expect(emptied.json().error.message).toBe('An edit cannot leave the order without units; cancel the order instead')
  })

  test('a product short of stock is 409 naming add[i], and nothing of the edit is kept', async ({ ctx, admin }) => {
    const { order: placed, mugLine, mug } = await order(ctx, admin)
    const scarce = await product(ctx, admin, 'Scarce', 1, 1)
    const before = await fingerprint(ctx, placed.id)
    const refused = await edit(ctx, admin, placed.id, { lines: [{ line_id: mugLine.id, quantity: 1 }], add: [{ product_id: scarce.id, quantity: 2 }] })
    expect(refused.statusCode).toBe(409)
    expect(refused.json().error).toMatchObject({ code: 'insufficient_inventory', details: [{ field: 'add[0]' }] })
    expect(await fingerprint(ctx, placed.id)).toBe(before)
    expect(await stockOf(ctx, mug.id)).toBe(5)
  })

  test('a completed or cancelled order is 409; a customer is 403; the commit needs an Idempotency-Key', async ({ ctx, admin }) => {
    const buyer = await ctx.signIn('customer')
    const { order: placed, plateLine } = await order(ctx, admin, { customerId: buyer.customerId })
    const body = { lines: [{ line_id: plateLine.id, quantity: 0 }] }
    expect((await edit(ctx, buyer.token, placed.id, body)).statusCode).toBe(403)
    expect((await preview(ctx, buyer.token, placed.id, body)).statusCode).toBe(403)
    expect((await ctx.request({ method: 'GET', url: `/api/v1/orders/${placed.id}/edits`, token: buyer.token })).statusCode).toBe(200)
    const keyless = await ctx.request({ method: 'POST', url: `/api/v1/orders/${placed.id}/edits`, payload: body, token: admin })
    expect(keyless.statusCode).toBe(400)
    await ctx.expectStatus(200, { method: 'POST', url: `/api/v1/orders/${placed.id}/cancel`, token: admin })
    const refused = await edit(ctx, admin, placed.id, body)
    expect(refused.statusCode).toBe(409)
    expect(refused.json().error.message).toBe('Only a pending, paid or shipped order can be edited; this order is cancelled')
  })

  test('two edits cancelling the same last units at once: exactly one is made', async ({ ctx, admin }) => {
    const { order: placed, mugLine, mug } = await order(ctx, admin)
    const answers = await Promise.all([1, 2, 3].map(() => edit(ctx, admin, placed.id, { lines: [{ line_id: mugLine.id, quantity: 0 }] })))
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 400, 400])
    expect(await stockOf(ctx, mug.id)).toBe(7)
    expect(await orderRow(ctx, placed.id)).toMatchObject({ totalMinor: 900, refundedMinor: 2000 })
  })
})

describe('GET /orders/:id/history', () => {
  test('every change of the order in sequence, with who made it and the money it moved', async ({ ctx, admin }) => {
    const buyer = await ctx.signIn('customer')
    const staff = await ctx.signIn('admin')
    const lamp = await ctx.expectStatus<Product>(201, { method: 'POST', url: '/api/v1/products', payload: { title: 'Lamp', price: 12.5, currency: 'GBP', inventory_quantity: 9 }, token: admin })
    const auth = { token: buyer.token }
    const cart = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: 'GBP' }, ...auth })
    await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/carts/${cart.id}/items`, payload: { product_id: lamp.id, quantity: 2 }, ...auth })
    const checkout = await ctx.expectStatus<{ id: string }>(201, {
      method: 'POST',
      url: '/api/v1/checkouts',
      payload: { cart_id: cart.id, email: 'ada@example.com', shipping_address: { first_name: 'Ada', last_name: 'L', line1: '1 Sq', city: 'London', postal_code: 'SW1Y 4JH', country: 'GB' } },
      ...auth,
    })
    const placed = await ctx.expectStatus<{ id: string; items: { id: string }[]; totals: { total: number } }>(201, {
      method: 'POST',
      url: `/api/v1/checkouts/${checkout.id}/complete`,
      payload: { payment: { method: 'card', token: 'tok_visa' } },
      headers: key(),
      ...auth,
    })
    const shipper = await ctx.createApiKey(['orders:write'])
    await ctx.expectStatus(201, {
      method: 'POST',
      url: `/api/v1/orders/${placed.id}/fulfillments`,
      payload: { carrier: 'DHL', tracking_number: 'JD9', items: [{ order_item_id: placed.items[0]!.id, quantity: 1 }] },
      headers: { authorization: `Bearer ${shipper.key}` },
    })
    expect((await edit(ctx, staff.token, placed.id, { lines: [{ line_id: placed.items[0]!.id, quantity: 1 }] })).statusCode).toBe(201)

    const history = await ctx.expectStatus<{ history: { event: string; sequence: number; actor: unknown; amount_captured: number; amount_refunded: number; request_id: string | null }[] }>(200, {
      method: 'GET',
      url: `/api/v1/orders/${placed.id}/history`,
      token: admin,
    })
    const customer = { type: 'user', id: buyer.userId }
    expect(history.history.map(({ event, sequence, actor, amount_captured, amount_refunded }) => ({ event, sequence, actor, amount_captured, amount_refunded }))).toEqual([
      { event: 'order.created', sequence: 1, actor: customer, amount_captured: 0, amount_refunded: 0 },
      { event: 'payment.succeeded', sequence: 2, actor: customer, amount_captured: placed.totals.total, amount_refunded: 0 },
      { event: 'order.paid', sequence: 3, actor: customer, amount_captured: 0, amount_refunded: 0 },
      { event: 'order.shipped', sequence: 4, actor: { type: 'api_key', id: shipper.id }, amount_captured: 0, amount_refunded: 0 },
      { event: 'order.refunded', sequence: 5, actor: { type: 'user', id: staff.userId }, amount_captured: 0, amount_refunded: 12.5 },
      { event: 'order.edited', sequence: 6, actor: { type: 'user', id: staff.userId }, amount_captured: 0, amount_refunded: 0 },
    ])
    expect(history.history.every((entry) => typeof entry.request_id === 'string')).toBe(true)
    expect((await ctx.request({ method: 'GET', url: `/api/v1/orders/${placed.id}/history`, token: buyer.token })).statusCode).toBe(403)
    expect((await ctx.request({ method: 'GET', url: `/api/v1/orders/${randomUUID()}/history`, token: admin })).statusCode).toBe(404)
  })
})

/** A guest's checkout of one unit of the product, paid with the test provider (decided in-process). */
async function refundsOf(ctx: TestContext, orderId: string) {
  return ctx.handle.sql<{ status: string; amount: number; failureCode: string | null }[]>`
    select status, amount_minor::int as amount, failure_code as "failureCode" from refunds where order_id = ${orderId} order by id`
}

describe('an edit whose refund the provider makes slowly, or refuses', () => {
  test('the provider taking 2 s to refund holds no stock lock: a checkout of the item the edit adds completes while the edit waits; the refund is pending until the provider answers, then succeeded', async () => {
    const { provider, refundAsked: asked } = refundingSlowly(2000)
    const ctx = await createTestContext({}, { paymentProvider: provider })
    try {
      const admin = (await ctx.signIn('admin')).token
      const { order: placed, mugLine } = await order(ctx, admin)
      const bowl = await product(ctx, admin, 'Bowl', 7.5, 5)
      const finished: string[] = []
      const editing = edit(ctx, admin, placed.id, { lines: [{ line_id: mugLine.id, quantity: 1 }], add: [{ product_id: bowl.id, quantity: 1 }] }).then((answer) => {
        finished.push('edit')
        return answer
      })
      await asked
      // The edit committed before it asked: its refund is written, pending, and its bowl taken.
      expect(await refundsOf(ctx, placed.id)).toEqual([{ status: 'pending', amount: 250, failureCode: null }])
      await buyOne(ctx, bowl.id)
      finished.push('checkout')
      const edited = await editing
      expect(edited.statusCode, edited.body).toBe(201)
      expect(finished).toEqual(['checkout', 'edit'])
      expect(await refundsOf(ctx, placed.id)).toEqual([{ status: 'succeeded', amount: 250, failureCode: null }])
      expect(await stockOf(ctx, bowl.id)).toBe(3)
    } finally {
      await ctx.close()
    }
  })

  test('a refund the provider refuses fails (refund.failed): its amount counts as kept again on the payment and the order, whose balance then shows it owed back', async () => {
    const refusing: PaymentProvider = {
      ...testProvider,
      refund: () => Promise.reject(new ProviderRefusedError('charge_already_refunded', 'Charge ch_1 has already been refunded.')),
    }
    const ctx = await createTestContext({}, { paymentProvider: refusing })
    try {
      const admin = (await ctx.signIn('admin')).token
      const { order: placed, mugLine, payment } = await order(ctx, admin)
      const edited = await edit(ctx, admin, placed.id, { lines: [{ line_id: mugLine.id, quantity: 1 }] })
      expect(edited.statusCode, edited.body).toBe(201)
      expect(await refundsOf(ctx, placed.id)).toEqual([{ status: 'failed', amount: 1000, failureCode: 'charge_already_refunded' }])
      const after = await ctx.expectStatus<Order>(200, { method: 'GET', url: `/api/v1/orders/${placed.id}`, token: admin })
      expect(after).toMatchObject({ payment_status: 'paid', amount_refunded: 0 })
      expect(after.payments[0]).toMatchObject({
        id: payment!.id,
        status: 'captured',
        amount_refunded: 0,
        refunds: [{ status: 'failed', amount: 10, failure_code: 'charge_already_refunded', failure_message: 'Charge ch_1 has already been refunded.' }],
      })
      expect(await ctx.orderEvents(placed.id)).toEqual(['order.refunded', 'order.edited', 'refund.failed'])
    } finally {
      await ctx.close()
    }
  })
})

describe('two edits crossing the same items', () => {
  test('order A gives mugs back and takes plates while order B gives plates back and takes mugs, 8 pairs at once: every edit commits (no deadlock) and the stock adds up', async ({ ctx, admin }) => {
    const mug = await product(ctx, admin, 'Mug', 10, 100)
    const plate = await product(ctx, admin, 'Plate', 5, 100)
    const items = [
      { unitPriceMinor: 1000, quantity: 2, productId: mug.id, title: 'Mug' },
      { unitPriceMinor: 500, quantity: 2, productId: plate.id, title: 'Plate' },
    ]
    const pairs = await Promise.all(Array.from({ length: 8 }, async () => [await insertOrder(ctx, { status: 'paid', items }), await insertOrder(ctx, { status: 'paid', items })] as const))
    const answers = await Promise.all(
      pairs.flatMap(([a, b]) => [
        edit(ctx, admin, a.order.id, { lines: [{ line_id: a.items[0]!.id, quantity: 1 }], add: [{ product_id: plate.id, quantity: 1 }] }),
        edit(ctx, admin, b.order.id, { lines: [{ line_id: b.items[1]!.id, quantity: 1 }], add: [{ product_id: mug.id, quantity: 1 }] }),
      ]),
    )
    expect(answers.map((answer) => answer.statusCode)).toEqual(Array(16).fill(201))
    // Each product: 8 units given back and 8 taken.
    expect([await stockOf(ctx, mug.id), await stockOf(ctx, plate.id)]).toEqual([100, 100])
  })
})
