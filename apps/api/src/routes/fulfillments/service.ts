/**
 * Fulfillments (parcels sent for an order's units) and their tracking events. A fulfillment
 * locks its order like every other writer of it; the first one moves the order to shipped.
 */
import { asc, desc, eq, sql, type SQL } from 'drizzle-orm'
import {
  fulfillmentStatusOf,
  moveOrder,
  type CreateFulfillment,
  type CreateTrackingEvent,
  type Fulfillment,
  type FulfillmentList,
  type Tracking,
} from '@commerce/domain'
import { fulfillmentColumn, fulfillmentItems, fulfillments, orderItems, orders, trackingEvents, type Database, type Executor, type EventOrigin } from '@commerce/db'
import { conflict, invalidField, notFound } from '../../errors.js'
import { key, keyset, listTable, type PageQuery } from '../../list-cursor.js'
import { requireVisibleOrder, type OrderViewer } from '../orders/visibility.js'
import { shippingLocationOf, shipFrom } from '../inventory/stock.js'
import type { PaymentService } from '../payments/service.js'
import { loadOrder, lockOrder, toFulfillment, writeOrderEvent } from '../orders/view.js'

const fulfillmentSelection = { fulfillment: fulfillmentColumn }
/** An order's fulfillments, oldest first (UUIDv7 ids): fulfillments_order_idx (order_id, id). */
const FULFILLMENTS_KEYSET = keyset('order_fulfillments', 'asc', [key.uuid(fulfillments.id)])

/** The units to send: the request's, checked against what is left on each line, or everything left. */
function unitsToSend(lines: (typeof orderItems.$inferSelect)[], requested: CreateFulfillment['items']) {
  const left = new Map(lines.map((line) => [line.id, line.quantity - line.canceledQuantity - line.fulfilledQuantity]))
  if (!requested) {
    return lines.flatMap((line) => (left.get(line.id)! > 0 ? [{ orderItemId: line.id, quantity: left.get(line.id)! }] : []))
  }
  const seen = new Set<string>()
  return requested.map((item, index) => {
    const field = `items[${index}]`
    const available = left.get(item.order_item_id)
    if (available === undefined) throw invalidField(`${field}.order_item_id`, `Field '${field}.order_item_id' is not an item of this order`)
    if (seen.has(item.order_item_id)) throw invalidField(`${field}.order_item_id`, `Field '${field}.order_item_id' appears twice`)
    seen.add(item.order_item_id)
    if (item.quantity > available) {
      throw invalidField(`${field}.quantity`, `Field '${field}.quantity' is more than the ${available} left to fulfil on this line`)
    }
    return { orderItemId: item.order_item_id, quantity: item.quantity }
  })
}

export function createFulfillmentService(db: Database, payments: PaymentService) {
  async function readFulfillment(tx: Executor, id: string): Promise<Fulfillment> {
    const [read] = await tx.select(fulfillmentSelection).from(fulfillments).where(eq(fulfillments.id, id))
    return toFulfillment(read!.fulfillment)
  }

  return {
    /**
     * Sends units of a paid or shipped order (inside `tx`) from one stock location: all that is
     * left unless `items` names some. Every fulfillment writes order.shipped; the first is the order's move to shipped. A
     * pending order whose payments are authorized (PAYMENT_CAPTURE=manual) has them captured
     * first, which makes it paid.
     */
    async create(tx: Executor, orderId: string, body: CreateFulfillment, origin: EventOrigin): Promise<Fulfillment> {
      let order = await lockOrder(tx, orderId)
      if (!order) throw notFound('Order')
      if (order.status === 'pending' && order.authorizedMinor > 0) order = await payments.captureAll(tx, order, origin)
      const event = order.status === 'shipped' ? 'order.shipped' : moveOrder(order.status, 'shipped')
      const lines = await tx.select().from(orderItems).where(eq(orderItems.orderId, order.id)).orderBy(asc(orderItems.id))
      const units = unitsToSend(lines, body.items)
      if (units.length === 0) throw conflict('Every unit of this order has been fulfilled already')
      const locationId = await shippingLocationOf(tx, units.map((unit) => unit.orderItemId), body.location_id)

      const [fulfillment] = await tx
        .insert(fulfillments)
        .values({ orderId: order.id, locationId, carrier: body.carrier, trackingNumber: body.tracking_number, trackingUrl: body.tracking_url ?? null })
        .returning({ id: fulfillments.id })
      await tx.insert(fulfillmentItems).values(units.map((unit) => ({ fulfillmentId: fulfillment!.id, ...unit })))
      const byId = new Map(lines.map((line) => [line.id, line]))
      await shipFrom(
        tx,
        order,
        locationId,
        units.map((unit, index) => {
          const line = byId.get(unit.orderItemId)!
          return { id: line.id, productId: line.productId, variantId: line.variantId, title: line.title, quantity: unit.quantity, field: body.items ? `items[${index}]` : 'items' }
        }),
        fulfillment!.id,
        origin,
      )
      const sent = new Map(units.map((unit) => [unit.orderItemId, unit.quantity]))
      for (const [orderItemId, quantity] of sent) {
        await tx
          .update(orderItems)
          .set({ fulfilledQuantity: sql`${orderItems.fulfilledQuantity} + ${quantity}` })
          .where(eq(orderItems.id, orderItemId))
      }
      const fulfillmentStatus = fulfillmentStatusOf(
        lines.map((line) => ({ quantity: line.quantity - line.canceledQuantity, fulfilledQuantity: line.fulfilledQuantity + (sent.get(line.id) ?? 0) })),
      )
      await tx.update(orders).set({ status: 'shipped', fulfillmentStatus, updatedAt: new Date() }).where(eq(orders.id, order.id))
      const view = await readFulfillment(tx, fulfillment!.id)
      await writeOrderEvent(tx, event, (await loadOrder(tx, order.id))!, origin, { fulfillment: view })
      return view
    },

    async list(orderId: string, query: PageQuery, viewer: OrderViewer): Promise<FulfillmentList> {
      await requireVisibleOrder(db, orderId, viewer)
      const { rows, meta } = await listTable(db, FULFILLMENTS_KEYSET, fulfillments, eq(fulfillments.orderId, orderId), query, fulfillmentSelection)
      return { fulfillments: rows.map((row) => toFulfillment(row.fulfillment)), meta }
    },

    /** Adds a carrier's tracking event; the fulfillment's status becomes that of its latest event. */
    addTrackingEvent(fulfillmentId: string, body: CreateTrackingEvent): Promise<Tracking> {
      return db.transaction(async (tx) => {
        const [fulfillment] = await tx.select({ id: fulfillments.id }).from(fulfillments).where(eq(fulfillments.id, fulfillmentId)).for('update')
        if (!fulfillment) throw notFound('Fulfillment')
        await tx.insert(trackingEvents).values({
          fulfillmentId,
          status: body.status,
          description: body.description ?? null,
          location: body.location ?? null,
          ...(body.occurred_at ? { occurredAt: new Date(body.occurred_at) } : {}),
        })
        const latest = tx
          .select({ status: trackingEvents.status })
          .from(trackingEvents)
          .where(eq(trackingEvents.fulfillmentId, fulfillmentId))
          .orderBy(desc(trackingEvents.occurredAt), desc(trackingEvents.id))
          .limit(1)
        await tx.update(fulfillments).set({ status: sql`(${latest})`, updatedAt: new Date() }).where(eq(fulfillments.id, fulfillmentId))
        return (await trackingOf(tx, eq(fulfillments.id, fulfillmentId)))!
      })
    },

    /** The latest fulfillment sent with this tracking number, with its events newest first. */
    async tracking(trackingNumber: string): Promise<Tracking> {
      const found = await trackingOf(db, eq(fulfillments.trackingNumber, trackingNumber))
      if (!found) throw notFound('Tracking number')
      return found
    },
  }
}

async function trackingOf(tx: Executor, which: SQL): Promise<Tracking | undefined> {
  const [fulfillment] = await tx.select().from(fulfillments).where(which).orderBy(desc(fulfillments.id)).limit(1)
  if (!fulfillment) return undefined
  const events = await tx
    .select()
    .from(trackingEvents)
    .where(eq(trackingEvents.fulfillmentId, fulfillment.id))
    .orderBy(desc(trackingEvents.occurredAt), desc(trackingEvents.id))
  return {
    carrier: fulfillment.carrier,
    tracking_number: fulfillment.trackingNumber,
    tracking_url: fulfillment.trackingUrl,
    status: fulfillment.status,
    events: events.map((event) => ({
      status: event.status,
      description: event.description,
      location: event.location,
      occurred_at: event.occurredAt.toISOString(),
    })),
  }
}
