/** Exchanges: a return that sends other items instead, paying only the difference either way. */
import { randomUUID } from 'node:crypto'
import { describe, expect } from 'vitest'
import type { Order, Product, Return } from '@commerce/domain'
import { createTestContext, test, type TestContext } from './helpers.js'
import { buyOne, refundingSlowly, orderRow, shippedOrder } from './order-fixtures.js'

const key = () => ({ 'idempotency-key': `exchange-${randomUUID()}` })

async function product(ctx: TestContext, admin: string, title: string, price: number, stock = 5) {
  return ctx.expectStatus<Product>(201, { method: 'POST', url: '/api/v1/products', payload: { title, price, currency: 'USD', inventory_quantity: stock }, token: admin })
}

async function stockOf(ctx: TestContext, productId: string): Promise<number> {
  const [row] = await ctx.handle.sql<{ n: number }[]>`select inventory_quantity as n from products where id = ${productId}`
  return row!.n
}

async function refundsOf(ctx: TestContext, orderId: string) {
  return ctx.handle.sql<{ amount_minor: string; return_id: string | null; order_edit_id: string | null }[]>`
    select amount_minor, return_id, order_edit_id from refunds where order_id = ${orderId} order by id`
}

function exchange(ctx: TestContext, token: string, orderId: string, items: { line_id: string; quantity: number }[], add: { product_id: string; quantity: number }[]) {
  return ctx.request({ method: 'POST', url: `/api/v1/orders/${orderId}/returns`, payload: { items, exchange: add, reason: 'Wrong size' }, token })
}

function receive(ctx: TestContext, admin: string, returnId: string, payload: Record<string, unknown> = {}) {
  return ctx.request({ method: 'POST', url: `/api/v1/returns/${returnId}/receive`, payload, token: admin, headers: key() })
}

describe('an exchange for something dearer', () => {
  test('the customer pays only the difference, and receiving the return credits the rest: nothing is refunded', async ({ ctx, admin }) => {
    const buyer = await ctx.signIn('customer')
    const { order, mugLine, mug } = await shippedOrder(ctx, admin, buyer.customerId)
    const large = await product(ctx, admin, 'Mug XL', 15)

    const asked = await exchange(ctx, buyer.token, order.id, [{ line_id: mugLine.id, quantity: 1 }], [{ product_id: large.id, quantity: 1 }])
    expect(asked.statusCode, asked.body).toBe(201)
    const requested = asked.json<Return>()
    expect(requested).toMatchObject({ status: 'requested', refund: { total: 10 }, amount_credited: 0, exchange: { total: 15, difference: 5 } })
    expect(requested.exchange!.line_ids).toHaveLength(1)
    expect(await stockOf(ctx, large.id)).toBe(4)
    const withNewItem = await ctx.expectStatus<Order>(200, { method: 'GET', url: `/api/v1/orders/${order.id}`, token: buyer.token })
    expect(withNewItem).toMatchObject({ totals: { total: 44 }, amount_owed: 5 })
    expect(withNewItem.items.find((item) => item.id === requested.exchange!.line_ids[0])).toMatchObject({ product_id: large.id, quantity: 1, fulfilled_quantity: 0 })
    const edits = await ctx.expectStatus<{ edits: { id: string }[] }>(200, { method: 'GET', url: `/api/v1/orders/${order.id}/edits`, token: admin })
    expect(edits.edits.map((edit) => edit.id)).toEqual([requested.exchange!.edit_id])

    // The customer pays the difference, not the new item's price.
    const paid = await ctx.request({ method: 'POST', url: `/api/v1/orders/${order.id}/payments`, payload: { method: 'card', token: 'tok_visa' }, headers: key(), token: buyer.token })
    expect(paid.statusCode, paid.body).toBe(201)
    expect(paid.json()).toMatchObject({ amount: 5, status: 'captured' })
    const again = await ctx.request({ method: 'POST', url: `/api/v1/orders/${order.id}/payments`, payload: { method: 'card', token: 'tok_visa' }, headers: key(), token: buyer.token })
    expect(again.statusCode).toBe(409)
    expect(await ctx.expectStatus<Order>(200, { method: 'GET', url: `/api/v1/orders/${order.id}`, token: buyer.token })).toMatchObject({ amount_owed: 0 })

    const received = await receive(ctx, admin, requested.id)
    expect(received.statusCode, received.body).toBe(200)
    expect(received.json<Return>()).toMatchObject({ status: 'received', refund: { total: 10 }, amount_credited: 10, amount_refunded: 0, refund_ids: [], exchange: { difference: 5 } })
    expect(await refundsOf(ctx, order.id)).toEqual([])
    expect(await stockOf(ctx, mug.id)).toBe(6)
    // Kept: a mug, the plate, the large mug and the shipping; paid: 29 + 5.
    expect(await orderRow(ctx, order.id)).toMatchObject({ status: 'shipped', paidMinor: 3400, refundedMinor: 0, totalMinor: 4400 })

    // The new item ships like any other line.
    await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/orders/${order.id}/fulfillments`, payload: { carrier: 'DHL', tracking_number: 'JD0002' }, token: admin })
    expect(await orderRow(ctx, order.id)).toMatchObject({ fulfillmentStatus: 'fulfilled' })
    expect(await ctx.orderEvents(order.id)).toEqual(['order.shipped', 'order.edited', 'return.requested', 'payment.succeeded', 'return.received', 'order.shipped'])
  })

  test('when the difference was not paid before the parcel came back, the return pays what it can and the order owes the rest', async ({ ctx, admin }) => {
    const { order, mugLine } = await shippedOrder(ctx, admin)
    const large = await product(ctx, admin, 'Mug XL', 15)
    const requested = await ctx.expectStatus<Return>(201, {
      method: 'POST',
      url: `/api/v1/orders/${order.id}/returns`,
      payload: { items: [{ line_id: mugLine.id, quantity: 1 }], exchange: [{ product_id: large.id, quantity: 1 }] },
      token: admin,
    })
    // A restocking fee of 10 % leaves 9.00 to pay for a 15.00 item: 6.00 owed.
    const received = await receive(ctx, admin, requested.id, { restocking_fee: 10 })
    expect(received.json<Return>()).toMatchObject({ refund: { total: 9 }, amount_credited: 9, amount_refunded: 0 })
    expect(await ctx.expectStatus<Order>(200, { method: 'GET', url: `/api/v1/orders/${order.id}`, token: admin })).toMatchObject({ amount_owed: 6 })
    const paid = await ctx.request({ method: 'POST', url: `/api/v1/orders/${order.id}/payments`, payload: { method: 'card', token: 'tok_visa' }, headers: key(), token: admin })
    expect(paid.json()).toMatchObject({ amount: 6 })
  })
})

describe('an exchange for something cheaper', () => {
  test('nothing is owed; receiving the return refunds the difference through the provider', async ({ ctx, admin }) => {
    const { order, mugLine, mug } = await shippedOrder(ctx, admin)
    const small = await product(ctx, admin, 'Espresso cup', 6)
    const requested = await ctx.expectStatus<Return>(201, {
      method: 'POST',
      url: `/api/v1/orders/${order.id}/returns`,
      payload: { items: [{ line_id: mugLine.id, quantity: 2 }], exchange: [{ product_id: small.id, quantity: 1 }] },
      token: admin,
    })
    expect(requested.exchange).toMatchObject({ total: 6, difference: -14 })
    const nothing = await ctx.request({ method: 'POST', url: `/api/v1/orders/${order.id}/payments`, payload: { method: 'card', token: 'tok_visa' }, headers: key(), token: admin })
    expect(nothing.statusCode, nothing.body).toBe(409)

    const received = (await receive(ctx, admin, requested.id)).json<Return>()
    expect(received).toMatchObject({ refund: { total: 20 }, amount_credited: 6, amount_refunded: 14 })
    expect(await refundsOf(ctx, order.id)).toEqual([{ amount_minor: '1400', return_id: requested.id, order_edit_id: null }])
    expect(await stockOf(ctx, mug.id)).toBe(7)
    expect(await orderRow(ctx, order.id)).toMatchObject({ status: 'shipped', paidMinor: 2900, refundedMinor: 1400, totalMinor: 3500 })
  })
})

describe('an exchange that does not happen', () => {
  test('declining it cancels the new items not shipped (restocked) and refunds the difference paid for them', async ({ ctx, admin }) => {
    const { order, mugLine } = await shippedOrder(ctx, admin)
    const large = await product(ctx, admin, 'Mug XL', 15)
    const requested = (await exchange(ctx, admin, order.id, [{ line_id: mugLine.id, quantity: 1 }], [{ product_id: large.id, quantity: 1 }])).json<Return>()
    await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/orders/${order.id}/payments`, payload: { method: 'card', token: 'tok_visa' }, headers: key(), token: admin })
    expect(await stockOf(ctx, large.id)).toBe(4)

    const declined = await ctx.request({ method: 'POST', url: `/api/v1/returns/${requested.id}/decline`, payload: { reason: 'Worn' }, token: admin })
    expect(declined.statusCode, declined.body).toBe(200)
    expect(declined.json<Return>()).toMatchObject({ status: 'declined', decline_reason: 'Worn' })
    expect(await stockOf(ctx, large.id)).toBe(5)
    const after = await ctx.expectStatus<Order>(200, { method: 'GET', url: `/api/v1/orders/${order.id}`, token: admin })
    expect(after.totals.total).toBe(29)
    expect(after.items.find((item) => item.id === requested.exchange!.line_ids[0])).toMatchObject({ quantity: 1, canceled_quantity: 1 })
    expect(after.items.find((item) => item.id === mugLine.id)).toMatchObject({ returned_quantity: 0 })
    const refunds = await refundsOf(ctx, order.id)
    expect(refunds).toHaveLength(1)
    expect(refunds[0]).toMatchObject({ amount_minor: '500', return_id: null, order_edit_id: expect.any(String) })
    expect(await orderRow(ctx, order.id)).toMatchObject({ paidMinor: 3400, refundedMinor: 500, fulfillmentStatus: 'fulfilled' })
  })

  test('declined with the provider taking 2 s to refund the difference: no stock lock is held meanwhile (a checkout of the unit given back completes first); the refund is pending until the provider answers, then succeeded', async () => {
    const { provider, refundAsked: asked } = refundingSlowly(2000)
    const ctx = await createTestContext({}, { paymentProvider: provider })
    const refunds = (orderId: string) => ctx.handle.sql`select status, amount_minor::int as amount from refunds where order_id = ${orderId}`
    try {
      const admin = (await ctx.signIn('admin')).token
      const { order, mugLine } = await shippedOrder(ctx, admin)
      const large = await product(ctx, admin, 'Mug XL', 15, 1)
      const requested = (await exchange(ctx, admin, order.id, [{ line_id: mugLine.id, quantity: 1 }], [{ product_id: large.id, quantity: 1 }])).json<Return>()
      await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/orders/${order.id}/payments`, payload: { method: 'card', token: 'tok_visa' }, headers: key(), token: admin })
      expect(await stockOf(ctx, large.id)).toBe(0)

      const finished: string[] = []
      const declining = ctx.request({ method: 'POST', url: `/api/v1/returns/${requested.id}/decline`, payload: { reason: 'Worn' }, token: admin }).then((answer) => {
        finished.push('decline')
        return answer
      })
      await asked
      // The decline committed before it asked: the unit is back for sale and the refund written, pending.
      expect(await refunds(order.id)).toEqual([{ status: 'pending', amount: 500 }])
      await buyOne(ctx, large.id)
      finished.push('checkout')
      const declined = await declining
      expect(declined.statusCode, declined.body).toBe(200)
      expect(finished).toEqual(['checkout', 'decline'])
      expect(await refunds(order.id)).toEqual([{ status: 'succeeded', amount: 500 }])
      expect(await stockOf(ctx, large.id)).toBe(0)
    } finally {
      await ctx.close()
    }
  })

  test('the customer canceling it puts the new items back with nothing owed', async ({ ctx, admin }) => {
    const buyer = await ctx.signIn('customer')
    const { order, mugLine } = await shippedOrder(ctx, admin, buyer.customerId)
    const large = await product(ctx, admin, 'Mug XL', 15)
    const requested = (await exchange(ctx, buyer.token, order.id, [{ line_id: mugLine.id, quantity: 1 }], [{ product_id: large.id, quantity: 2 }])).json<Return>()
    expect(await stockOf(ctx, large.id)).toBe(3)
    await ctx.expectStatus(200, { method: 'POST', url: `/api/v1/returns/${requested.id}/cancel`, payload: {}, token: buyer.token })
    expect(await stockOf(ctx, large.id)).toBe(5)
    const nothing = await ctx.request({ method: 'POST', url: `/api/v1/orders/${order.id}/payments`, payload: { method: 'card', token: 'tok_visa' }, headers: key(), token: buyer.token })
    expect(nothing.statusCode).toBe(409)
    expect(await refundsOf(ctx, order.id)).toEqual([])
  })
})

describe('refused exchanges', () => {
  test('new items out of stock: 409 naming exchange[i], and nothing is kept', async ({ ctx, admin }) => {
    const { order, mugLine } = await shippedOrder(ctx, admin)
    const scarce = await product(ctx, admin, 'Last mug', 15, 1)
    const refused = await exchange(ctx, admin, order.id, [{ line_id: mugLine.id, quantity: 1 }], [{ product_id: scarce.id, quantity: 2 }])
    expect(refused.statusCode, refused.body).toBe(409)
    expect(refused.json()).toMatchObject({ error: { code: 'insufficient_inventory' } })
    expect(refused.body).toContain('exchange[0]')
    expect(await stockOf(ctx, scarce.id)).toBe(1)
    const [counted] = await ctx.handle.sql<{ returns: number; edits: number }[]>`
      select (select count(*)::int from returns where order_id = ${order.id}) as returns, (select count(*)::int from order_edits where order_id = ${order.id}) as edits`
    expect(counted).toEqual({ returns: 0, edits: 0 })
    expect(await orderRow(ctx, order.id)).toMatchObject({ totalMinor: 2900 })
  })

  test('an unknown product is 400 naming exchange[i]; a completed order is 409', async ({ ctx, admin }) => {
    const { order, mugLine } = await shippedOrder(ctx, admin)
    const unknown = await exchange(ctx, admin, order.id, [{ line_id: mugLine.id, quantity: 1 }], [{ product_id: randomUUID(), quantity: 1 }])
    expect(unknown.statusCode, unknown.body).toBe(400)
    expect(unknown.body).toContain('exchange[0]')

    const large = await product(ctx, admin, 'Mug XL', 15)
    await ctx.expectStatus(200, { method: 'POST', url: `/api/v1/orders/${order.id}/complete`, token: admin })
    const closed = await exchange(ctx, admin, order.id, [{ line_id: mugLine.id, quantity: 1 }], [{ product_id: large.id, quantity: 1 }])
    expect(closed.statusCode, closed.body).toBe(409)
    expect(await stockOf(ctx, large.id)).toBe(5)
    // A plain return of the completed order is still taken.
    const plain = await ctx.request({ method: 'POST', url: `/api/v1/orders/${order.id}/returns`, payload: { items: [{ line_id: mugLine.id, quantity: 1 }] }, token: admin })
    expect(plain.statusCode, plain.body).toBe(201)
  })
})
