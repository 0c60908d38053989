/** Fulfillments (partial and whole), the move to shipped, tracking events and tracking by number. */
import { describe, expect } from 'vitest'
import type { Fulfillment, FulfillmentList, Order, Tracking } from '@commerce/domain'
import { test, type TestContext } from './helpers.js'
import { insertOrder, orderRow } from './order-fixtures.js'

const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000beef'
const PARCEL = { carrier: 'DHL', tracking_number: 'JD0001', tracking_url: 'https://dhl.example/track/JD0001' }

function fulfil(ctx: TestContext, token: string, orderId: string, body: Record<string, unknown>) {
  return ctx.request({ method: 'POST', url: `/api/v1/orders/${orderId}/fulfillments`, payload: body, token })
}

function track(ctx: TestContext, token: string, fulfillmentId: string, body: Record<string, unknown>) {
  return ctx.request({ method: 'POST', url: `/api/v1/fulfillments/${fulfillmentId}/tracking-events`, payload: body, token })
}

const twoLines = { status: 'paid' as const, items: [{ unitPriceMinor: 500, quantity: 2 }, { unitPriceMinor: 300, quantity: 1 }] }

describe('POST /api/v1/orders/:id/fulfillments', () => {
  test('a partial fulfillment ships the order (order.shipped); the next sends the rest; then nothing is left (409)', async ({ ctx, admin }) => {
    const { order, items } = await insertOrder(ctx, twoLines)
    const [mugs, plate] = items
    const first = await fulfil(ctx, admin, order.id, { ...PARCEL, items: [{ order_item_id: mugs!.id, quantity: 1 }] })
    expect(first.statusCode, first.body).toBe(201)
    expect(first.json<Fulfillment>()).toMatchObject({
      order_id: order.id,
      carrier: 'DHL',
      tracking_number: 'JD0001',
      tracking_url: PARCEL.tracking_url,
      status: 'shipped',
      items: [{ order_item_id: mugs!.id, quantity: 1 }],
    })
    const shipped = await ctx.expectStatus<Order>(200, { method: 'GET', url: `/api/v1/orders/${order.id}`, token: admin })
    expect(shipped).toMatchObject({ status: 'shipped', fulfillment_status: 'partial' })
    expect(shipped.items.map((item) => item.fulfilled_quantity)).toEqual(
      items.map((item) => (item.id === mugs!.id ? 1 : 0)),
    )

    const rest = await fulfil(ctx, admin, order.id, { carrier: 'UPS', tracking_number: '1Z999' })
    expect(rest.statusCode, rest.body).toBe(201)
    expect(rest.json<Fulfillment>().items).toEqual(
      [
        { order_item_id: mugs!.id, quantity: 1 },
        { order_item_id: plate!.id, quantity: 1 },
      ].sort((a, b) => a.order_item_id.localeCompare(b.order_item_id)),
    )
    expect(await orderRow(ctx, order.id)).toMatchObject({ status: 'shipped', fulfillmentStatus: 'fulfilled' })
    const nothingLeft = await fulfil(ctx, admin, order.id, PARCEL)
    expect(nothingLeft.statusCode).toBe(409)
    expect(nothingLeft.json().error.message).toBe('Every unit of this order has been fulfilled already')

    expect(await ctx.orderEvents(order.id)).toEqual(['order.shipped', 'order.shipped'])
    const data = await ctx.handle.sql<{ data: { status: string; fulfillment: Fulfillment } }[]>`
      select data from events where data->>'order_id' = ${order.id} order by id`
    expect(data.map((row) => row.data.fulfillment.id)).toEqual([first.json().id, rest.json().id])
    expect(data[0]!.data.status).toBe('shipped')

    const listed = await ctx.expectStatus<FulfillmentList>(200, { method: 'GET', url: `/api/v1/orders/${order.id}/fulfillments`, token: admin })
    expect(listed).toEqual({ fulfillments: [first.json(), rest.json()], meta: { page: 1, per_page: 20, total: 2, total_pages: 1 } })
  })

  test('refuses unknown, repeated or too many units with 400 naming the field, and keeps nothing', async ({ ctx, admin }) => {
    const { order, items } = await insertOrder(ctx, twoLines)
    const line = items[0]!.id
    const cases: [Record<string, unknown>[], string, string][] = [
      [[{ order_item_id: UNKNOWN_ID, quantity: 1 }], 'items[0].order_item_id', "Field 'items[0].order_item_id' is not an item of this order"],
      [
        [
          { order_item_id: line, quantity: 1 },
          { order_item_id: line, quantity: 1 },
        ],
        'items[1].order_item_id',
        "Field 'items[1].order_item_id' appears twice",
      ],
      [[{ order_item_id: line, quantity: 3 }], 'items[0].quantity', "Field 'items[0].quantity' is more than the 2 left to fulfil on this line"],
    ]
    for (const [requested, field, message] of cases) {
      const response = await fulfil(ctx, admin, order.id, { ...PARCEL, items: requested })
      expect(response.statusCode).toBe(400)
      expect(response.json().error.details).toEqual([{ field, message }])
    }
    await ctx.expectInvalidField({ method: 'POST', url: `/api/v1/orders/${order.id}/fulfillments`, payload: { carrier: 'DHL' }, token: admin }, 'tracking_number', 'fulfillments')
    await ctx.expectInvalidField(
      { method: 'POST', url: `/api/v1/orders/${order.id}/fulfillments`, payload: { ...PARCEL, items: [{ order_item_id: line, quantity: 0 }] }, token: admin },
      'items.0.quantity',
      'fulfillments',
    )
    expect(await orderRow(ctx, order.id)).toMatchObject({ status: 'paid', fulfillmentStatus: 'unfulfilled' })
    expect(await ctx.orderEvents(order.id)).toEqual([])
  })

  test('pending, completed, cancelled and refunded orders are 409 invalid_state_transition; customers 403; unknown 404', async ({ ctx, admin }) => {
    for (const status of ['pending', 'completed', 'cancelled', 'refunded'] as const) {
      const { order } = await insertOrder(ctx, { status })
      const response = await fulfil(ctx, admin, order.id, PARCEL)
      expect(response.statusCode).toBe(409)
      expect(response.json().error.code).toBe('invalid_state_transition')
      expect(response.json().error.message).toMatch(new RegExp(`^An order cannot move from ${status} to shipped`))
    }
    const customer = await ctx.signIn('customer')
    const { order } = await insertOrder(ctx, { status: 'paid', customerId: customer.customerId })
    expect((await fulfil(ctx, customer.token, order.id, PARCEL)).statusCode).toBe(403)
    expect((await fulfil(ctx, admin, UNKNOWN_ID, PARCEL)).statusCode).toBe(404)
  })

  test('a failure after the fulfillment insert keeps no fulfillment, no event and the order unshipped', async ({ ctx, admin }) => {
    const { order } = await insertOrder(ctx, twoLines)
    const response = await ctx.withFailingInserts('events', () => fulfil(ctx, admin, order.id, PARCEL))
    expect(response.statusCode).toBe(500)
    const [left] = await ctx.handle.sql<{ n: number }[]>`select count(*)::int as n from fulfillments where order_id = ${order.id}`
    expect(left!.n).toBe(0)
    expect(await orderRow(ctx, order.id)).toMatchObject({ status: 'paid', fulfillmentStatus: 'unfulfilled' })
    const [units] = await ctx.handle.sql<{ n: number }[]>`select sum(fulfilled_quantity)::int as n from order_items where order_id = ${order.id}`
    expect(units!.n).toBe(0)
  })

  test('once something has shipped, the addresses are fixed (PATCH 409) but notes may change', async ({ ctx, admin }) => {
    const { order } = await insertOrder(ctx, twoLines)
    expect((await fulfil(ctx, admin, order.id, PARCEL)).statusCode).toBe(201)
    const url = `/api/v1/orders/${order.id}`
    await ctx.expectError(409, 'conflict', { method: 'PATCH', url, token: admin, payload: { shipping_address: { line1: 'x', city: 'y', country: 'FR' } } })
    await ctx.expectStatus(200, { method: 'PATCH', url, token: admin, payload: { notes: 'Shipped in two boxes' } })
  })
})

describe('GET /api/v1/orders/:id/fulfillments', () => {
  test("the owner sees its order's fulfillments; another customer gets 404", async ({ ctx, admin }) => {
    const owner = await ctx.signIn('customer')
    const other = await ctx.signIn('customer')
    const { order } = await insertOrder(ctx, { ...twoLines, customerId: owner.customerId })
    const sent = (await fulfil(ctx, admin, order.id, PARCEL)).json<Fulfillment>()
    const url = `/api/v1/orders/${order.id}/fulfillments`
    const seen = await ctx.expectStatus<FulfillmentList>(200, { method: 'GET', url, token: owner.token })
    expect(seen.fulfillments).toEqual([sent])
    await ctx.expectError(404, 'not_found', { method: 'GET', url, token: other.token })
    await ctx.expectError(401, 'unauthorized', { method: 'GET', url })
  })
})

describe('tracking', () => {
  test('tracking events set the status to the latest by occurred_at; GET /shipping/tracking/:number is public, newest first', async ({ ctx, admin }) => {
    const { order } = await insertOrder(ctx, twoLines)
    const parcel = { ...PARCEL, tracking_number: 'TRACK-42' }
    const fulfillment = (await fulfil(ctx, admin, order.id, parcel)).json<Fulfillment>()
    const transit = await track(ctx, admin, fulfillment.id, { status: 'in_transit', location: 'Leipzig', occurred_at: '2026-11-20T08:00:00.000Z' })
    expect(transit.statusCode, transit.body).toBe(201)
    expect(transit.json<Tracking>()).toEqual({
      carrier: 'DHL',
      tracking_number: 'TRACK-42',
      tracking_url: PARCEL.tracking_url,
      status: 'in_transit',
      events: [{ status: 'in_transit', description: null, location: 'Leipzig', occurred_at: '2026-11-20T08:00:00.000Z' }],
    })
    await track(ctx, admin, fulfillment.id, { status: 'delivered', description: 'Left with neighbour', occurred_at: '2026-11-21T15:30:00.000Z' })
    // Reported late: an older scan does not overwrite the newer status.
    await track(ctx, admin, fulfillment.id, { status: 'out_for_delivery', occurred_at: '2026-11-21T07:00:00.000Z' })

    const tracking = await ctx.expectStatus<Tracking>(200, { method: 'GET', url: '/api/v1/shipping/tracking/TRACK-42' })
    expect(tracking.status).toBe('delivered')
    expect(tracking.events.map((event) => event.status)).toEqual(['delivered', 'out_for_delivery', 'in_transit'])
    const fulfillments = await ctx.expectStatus<FulfillmentList>(200, { method: 'GET', url: `/api/v1/orders/${order.id}/fulfillments`, token: admin })
    expect(fulfillments.fulfillments[0]!.status).toBe('delivered')
    await ctx.expectError(404, 'not_found', { method: 'GET', url: '/api/v1/shipping/tracking/NOPE-1' })
  })

  test('tracking events: unknown fulfillment 404, customers 403, bad status 400', async ({ ctx, admin }) => {
    const { order } = await insertOrder(ctx, twoLines)
    const fulfillment = (await fulfil(ctx, admin, order.id, PARCEL)).json<Fulfillment>()
    expect((await track(ctx, admin, UNKNOWN_ID, { status: 'in_transit' })).statusCode).toBe(404)
    const customer = await ctx.signIn('customer')
    expect((await track(ctx, customer.token, fulfillment.id, { status: 'in_transit' })).statusCode).toBe(403)
    await ctx.expectInvalidField({ method: 'POST', url: `/api/v1/fulfillments/${fulfillment.id}/tracking-events`, payload: { status: 'In Transit!' }, token: admin }, 'status', 'tracking_events')
    await ctx.expectInvalidField({ method: 'POST', url: `/api/v1/fulfillments/${fulfillment.id}/tracking-events`, payload: { status: 'delivered', occurred_at: 'yesterday' }, token: admin }, 'occurred_at', 'tracking_events')
  })
})
