/**
 * Returns (RMA) of an order's shipped units: asked for by the customer or an admin, approved or
 * declined, then received, which restocks what can be sold again and refunds what the customer
 * paid for the units (@commerce/domain computeReturnRefund) through the payment provider. An
 * exchange is a return that also adds the items sent instead, through an order edit: the return's
 * refund pays for them first (settleReturnRefund), so only the difference is charged or refunded.
 * Every move locks the order first, like every other writer of it, then the return.
 */
import { and, asc, count, eq, inArray, isNull, sql, type SQL } from 'drizzle-orm'
import {
  balanceDue,
  computeReturnRefund,
  moveReturn,
  percentToPpm,
  toMajorUnits,
  type CreateReturn,
  type DeclineReturn,
  type ListReturnsQuery,
  type ReceiveReturn,
  type Return,
  type ReturnableLine,
  type ReturnList,
  type ReturnStatus,
  settleReturnRefund,
} from '@commerce/domain'
import { orderEdits, orderItems, orders, refunds, returnItems, returns, writeEvent, type Database, type Executor, type OrderRow, type EventOrigin } from '@commerce/db'
import { conflict, invalidField, notFound } from '../../errors.js'
import { fieldValue, minorUnits } from '../../fields.js'
import { key, keyset, selectList, type Keyset, type PageQuery } from '../../list-cursor.js'
import { createOrderEditService } from '../orders/edits.js'
import { unitsReceived } from './received.js'
import { restockLocationOf, restockUnits } from '../inventory/stock.js'
import { lockOrder } from '../orders/view.js'
import { requireVisibleOrder, visibleTo, type OrderViewer } from '../orders/visibility.js'
import { orderBalanceOf, type PaymentService } from '../payments/service.js'

type ReturnRow = typeof returns.$inferSelect
type OrderItemRow = typeof orderItems.$inferSelect

/** What a return shows of its order: its number, and its address (where the return's emails go). */
const ORDER_FIELDS = { orderNumber: orders.orderNumber, email: orders.email }
type ReturnOfOrder = { row: ReturnRow } & Pick<OrderRow, 'orderNumber' | 'email'>

/** The orders whose shipped units may be returned. */
const RETURNABLE_ORDERS = new Set<OrderRow['status']>(['shipped', 'completed'])

const iso = (date: Date | null) => date && date.toISOString()

/** Returns as the API shows them (and their events carry them), their lines and refunds read in one query each, inside `tx`. */
async function readReturns(tx: Executor, found: readonly ReturnOfOrder[]): Promise<Return[]> {
  if (found.length === 0) return []
  const ids = found.map(({ row }) => row.id)
  const editIds = found.flatMap(({ row }) => (row.exchangeEditId ? [row.exchangeEditId] : []))
  const [items, made, exchanges] = await Promise.all([
    tx
      .select({ item: returnItems, line: orderItems })
      .from(returnItems)
      .innerJoin(orderItems, eq(orderItems.id, returnItems.orderItemId))
      .where(inArray(returnItems.returnId, ids))
      .orderBy(asc(returnItems.orderItemId)),
    tx.select({ id: refunds.id, returnId: refunds.returnId }).from(refunds).where(inArray(refunds.returnId, ids)).orderBy(asc(refunds.id)),
    editIds.length === 0 ? [] : tx.select().from(orderEdits).where(inArray(orderEdits.id, editIds)),
  ])
  return found.map(({ row, orderNumber, email }) => {
    const money = (minor: number) => toMajorUnits(minor, row.currency)
    return {
      id: row.id,
      order_id: row.orderId,
      order_number: orderNumber,
      email,
      status: row.status,
      currency: row.currency,
      reason: row.reason,
      decline_reason: row.declineReason,
      items: items
        .filter(({ item }) => item.returnId === row.id)
        .map(({ item, line }) => ({
          line_id: line.id,
          title: line.title,
          variant_title: line.variantTitle,
          sku: line.sku,
          quantity: item.quantity,
          restocked_quantity: item.restockedQuantity,
          damaged_quantity: item.damagedQuantity,
          subtotal: money(item.subtotalMinor),
          discount: money(item.discountMinor),
          tax: money(item.taxMinor),
          total: money(item.totalMinor),
        })),
      refund: { merchandise: money(row.merchandiseMinor), shipping: money(row.shippingMinor), restocking_fee: money(row.feeMinor), total: money(row.totalMinor) },
      amount_refunded: money(row.refundedMinor),
      amount_credited: money(row.creditMinor),
      refund_ids: made.filter((refund) => refund.returnId === row.id).map((refund) => refund.id),
      exchange: exchangeOf(row, exchanges.find((edit) => edit.id === row.exchangeEditId)),
      created_at: row.createdAt.toISOString(),
      approved_at: iso(row.approvedAt),
      declined_at: iso(row.declinedAt),
      received_at: iso(row.receivedAt),
      canceled_at: iso(row.canceledAt),
      updated_at: row.updatedAt.toISOString(),
    }
  })
}

/** An exchange's new items: the lines its edit added, what they cost, and that less the return's refund. */
function exchangeOf(row: ReturnRow, edit: typeof orderEdits.$inferSelect | undefined): Return['exchange'] {
  if (!edit) return null
  const total = edit.totalAfterMinor - edit.totalBeforeMinor
  return {
    edit_id: edit.id,
    line_ids: edit.changes.added,
    total: toMajorUnits(total, row.currency),
    difference: toMajorUnits(total - row.totalMinor, row.currency),
  }
}

const readReturn = async (tx: Executor, found: ReturnOfOrder): Promise<Return> => (await readReturns(tx, [found]))[0]!

/**
 * An order line as the refund rule sees it, counting `returned` units as returned already; the
 * units an edit cancelled took their share before.
 */
const returnableLine = (line: OrderItemRow, returned: number): ReturnableLine => ({
  id: line.id,
  quantity: line.quantity,
  fulfilledQuantity: line.fulfilledQuantity,
  returnedQuantity: returned,
  takenBackQuantity: returned + line.canceledQuantity,
  subtotalMinor: line.subtotalMinor,
  discountMinor: line.discountMinor,
  taxMinor: line.taxMinor,
  totalMinor: line.totalMinor,
})

/** Oldest first (UUIDv7 ids): the primary key, and returns_order_idx (order_id, id) for an order's. */
const RETURNS_KEYSET = keyset('returns', 'asc', [key.uuid(returns.id)])
const ORDER_RETURNS_KEYSET = keyset('order_returns', 'asc', [key.uuid(returns.id)])

/** A page of the returns `where` selects (on returns and their orders). */
async function listReturns(db: Database, keys: Keyset, where: SQL | undefined, query: PageQuery): Promise<ReturnList> {
  const select = db.select({ row: returns, ...ORDER_FIELDS, cursorKey: keys.cursorKey }).from(returns).innerJoin(orders, eq(orders.id, returns.orderId)).$dynamic()
  const { rows, meta } = await selectList(keys, query, select, where, async () => {
    const [counted] = await db.select({ total: count() }).from(returns).innerJoin(orders, eq(orders.id, returns.orderId)).where(where)
    return counted!.total
  })
  return { returns: await readReturns(db, rows), meta }
}

export function createReturnService(db: Database, payments: PaymentService) {
  const edits = createOrderEditService(db, payments)
  const linesOf = (tx: Executor, orderId: string) => tx.select().from(orderItems).where(eq(orderItems.orderId, orderId)).orderBy(asc(orderItems.id))

  /** The return and its order, locked in the order every writer takes them (the order, then the return); 404 for one the viewer may not see. */
  async function lockReturn(tx: Executor, id: string, viewer?: OrderViewer) {
    const [found] = await tx.select({ orderId: returns.orderId }).from(returns).where(eq(returns.id, id))
    const order = found ? await lockOrder(tx, found.orderId) : undefined
    if (!order || (viewer && !visibleTo(order, viewer))) throw notFound('Return')
    const [row] = await tx.select().from(returns).where(eq(returns.id, id)).for('update')
    return { order, row: row! }
  }

  /** Writes the move's event for the return as the change left it, and answers it. */
  async function moved(tx: Executor, order: OrderRow, row: ReturnRow, event: ReturnType<typeof moveReturn>, origin: EventOrigin): Promise<Return> {
    const view = await readReturn(tx, { row, orderNumber: order.orderNumber, email: order.email })
    await writeEvent(tx, { kind: event, resourceId: order.id, data: view, customerId: order.customerId, ...origin })
    return view
  }

  /** Declining or canceling: the return's units can be asked for again. */
  async function close(tx: Executor, order: OrderRow, row: ReturnRow, to: Extract<ReturnStatus, 'declined' | 'canceled'>, changes: Partial<ReturnRow>, origin: EventOrigin) {
    const event = moveReturn(row.status, to)
    const items = await tx.select().from(returnItems).where(eq(returnItems.returnId, row.id))
    for (const item of items) {
      await tx
        .update(orderItems)
        .set({ returnedQuantity: sql`${orderItems.returnedQuantity} - ${item.quantity}` })
        .where(eq(orderItems.id, item.orderItemId))
    }
    const [closed] = await tx
      .update(returns)
      .set({ status: to, ...changes, updatedAt: new Date() })
      .where(eq(returns.id, row.id))
      .returning()
    if (row.exchangeEditId) await cancelExchange(tx, order, row, to, origin)
    return moved(tx, order, closed!, event, origin)
  }

  /**
   * A declined or canceled exchange's new items are not sent: their units not shipped yet are
   * cancelled by an edit (restocked; what was paid for them refunded). Units shipped already stay,
   * and the order owes them.
   */
  async function cancelExchange(tx: Executor, order: OrderRow, row: ReturnRow, to: 'declined' | 'canceled', origin: EventOrigin) {
    const [edit] = await tx.select({ changes: orderEdits.changes }).from(orderEdits).where(eq(orderEdits.id, row.exchangeEditId!))
    const added = edit!.changes.added
    if (added.length === 0) return
    const lines = await tx.select().from(orderItems).where(inArray(orderItems.id, added))
    const keep = lines
      .filter((line) => line.quantity - line.canceledQuantity > line.fulfilledQuantity)
      .map((line) => ({ line_id: line.id, quantity: line.fulfilledQuantity }))
    if (keep.length > 0) await edits.commit(tx, order.id, { lines: keep, reason: `Exchange of return ${row.id} ${to}` }, origin)
  }

  return {
    /**
     * Asks for a return of shipped units (inside `tx`): refused for more units than were shipped
     * and are not in another return. The refund it shows is an estimate until it is received.
     */
    async create(tx: Executor, orderId: string, body: CreateReturn, viewer: OrderViewer, origin: EventOrigin): Promise<Return> {
      const order = await lockOrder(tx, orderId)
      if (!order || !visibleTo(order, viewer)) throw notFound('Order')
      if (!RETURNABLE_ORDERS.has(order.status)) throw conflict(`Only a shipped or completed order's units can be returned; this order is ${order.status}`)
      const exchange = body.exchange ?? []
      if (exchange.length > 0 && order.status !== 'shipped') {
        throw conflict(`Only a shipped order's units can be exchanged (its new items are sent as the rest of it); this order is ${order.status}`)
      }
      const lines = await linesOf(tx, order.id)
      const estimate = computeReturnRefund({
        lines: lines.map((line) => returnableLine(line, line.returnedQuantity)),
        items: body.items.map((item) => ({ lineId: item.line_id, quantity: item.quantity })),
        shippingMinor: order.shippingMinor,
        shippingRefundedMinor: 0,
        shippingRefundMinor: 0,
      })
      const [row] = await tx
        .insert(returns)
        .values({ orderId: order.id, currency: order.currency, reason: body.reason ?? null, merchandiseMinor: estimate.merchandise, totalMinor: estimate.merchandise })
        .returning()
      await tx.insert(returnItems).values(
        estimate.lines.map((line) => ({
          returnId: row!.id,
          orderItemId: line.lineId,
          quantity: line.quantity,
          subtotalMinor: line.subtotal,
          discountMinor: line.discount,
          taxMinor: line.tax,
          totalMinor: line.total,
        })),
      )
      for (const line of estimate.lines) {
        await tx
          .update(orderItems)
          .set({ returnedQuantity: sql`${orderItems.returnedQuantity} + ${line.quantity}` })
          .where(eq(orderItems.id, line.lineId))
      }
      if (exchange.length === 0) return moved(tx, order, row!, 'return.requested', origin)
      const { edit } = await edits.commit(tx, order.id, { add: exchange, reason: `Exchange for return ${row!.id}` }, origin, {
        field: 'exchange',
        exchangeCreditMinor: estimate.total,
      })
      const [exchanged] = await tx.update(returns).set({ exchangeEditId: edit.id }).where(eq(returns.id, row!.id)).returning()
      return moved(tx, order, exchanged!, 'return.requested', origin)
    },

    async list(orderId: string, query: PageQuery, viewer: OrderViewer): Promise<ReturnList> {
      await requireVisibleOrder(db, orderId, viewer)
      return listReturns(db, ORDER_RETURNS_KEYSET, eq(returns.orderId, orderId), query)
    },

    /** Every return the viewer may see (a customer: those of its orders), oldest first; by status. */
    async listAll(query: ListReturnsQuery, viewer: OrderViewer): Promise<ReturnList> {
      const where = and(
        isNull(orders.archivedAt),
        query.status ? eq(returns.status, query.status) : undefined,
        viewer.canSeeAll ? undefined : viewer.customerId ? eq(orders.customerId, viewer.customerId) : sql`false`,
      )
      return listReturns(db, RETURNS_KEYSET, where, query)
    },

    async get(id: string, viewer: OrderViewer): Promise<Return> {
      const [found] = await db
        .select({ row: returns, customerId: orders.customerId, ...ORDER_FIELDS })
        .from(returns)
        .innerJoin(orders, and(eq(orders.id, returns.orderId), isNull(orders.archivedAt)))
        .where(eq(returns.id, id))
      if (!found || !visibleTo(found, viewer)) throw notFound('Return')
      return readReturn(db, found)
    },

    approve(id: string, origin: EventOrigin): Promise<Return> {
      return db.transaction(async (tx) => {
        const { order, row } = await lockReturn(tx, id)
        const event = moveReturn(row.status, 'approved')
        const [approved] = await tx.update(returns).set({ status: 'approved', approvedAt: new Date(), updatedAt: new Date() }).where(eq(returns.id, id)).returning()
        return moved(tx, order, approved!, event, origin)
      })
    },

    decline(id: string, body: DeclineReturn, origin: EventOrigin): Promise<Return> {
      return db.transaction(async (tx) => {
        const { order, row } = await lockReturn(tx, id)
        return close(tx, order, row, 'declined', { declinedAt: new Date(), declineReason: body.reason ?? null }, origin)
      })
    },

    /** Withdraws a return not received yet: its customer or an admin. */
    cancel(id: string, viewer: OrderViewer, origin: EventOrigin): Promise<Return> {
      return db.transaction(async (tx) => {
        const { order, row } = await lockReturn(tx, id, viewer)
        return close(tx, order, row, 'canceled', { canceledAt: new Date() }, origin)
      })
    },

    /**
     * The units came back (inside `tx`): the ones not named damaged go back into stock, and the
     * refund (computed now, against the returns received before this one) goes back through the
     * provider once `tx` commits, never more than is left of what the order's payments captured.
     */
    async receive(tx: Executor, id: string, body: ReceiveReturn, origin: EventOrigin): Promise<Return> {
      const { order, row } = await lockReturn(tx, id)
      const event = moveReturn(row.status, 'received')
      const [items, lines, [receivedBefore]] = await Promise.all([
        tx.select().from(returnItems).where(eq(returnItems.returnId, id)).orderBy(asc(returnItems.orderItemId)),
        linesOf(tx, order.id),
        tx
          .select({ shippingMinor: sql<number>`coalesce(sum(${returns.shippingMinor}), 0)::bigint`.mapWith(Number) })
          .from(returns)
          .where(and(eq(returns.orderId, order.id), eq(returns.status, 'received'))),
      ])
      const damaged = damagedUnits(items, body.damaged ?? [])
      const receivedUnits = await unitsReceived(tx, order.id)
      const refund = computeReturnRefund({
        lines: lines.map((line) => returnableLine(line, receivedUnits.get(line.id) ?? 0)),
        items: items.map((item) => ({ lineId: item.orderItemId, quantity: item.quantity })),
        shippingMinor: order.shippingMinor,
        shippingRefundedMinor: receivedBefore!.shippingMinor,
        ...(body.shipping_refund === undefined ? {} : { shippingRefundMinor: minorUnits('shipping_refund', body.shipping_refund, order.currency) }),
        ...(body.restocking_fee === undefined ? {} : { restockingFeePpm: fieldValue('restocking_fee', () => percentToPpm(body.restocking_fee!)) }),
      })

      const byLine = new Map(lines.map((line) => [line.id, line]))
      const restock = []
      for (const share of refund.lines) {
        const broken = damaged.get(share.lineId) ?? 0
        const line = byLine.get(share.lineId)!
        restock.push({ productId: line.productId, variantId: line.variantId, quantity: share.quantity - broken })
        await tx
          .update(returnItems)
          .set({
            restockedQuantity: share.quantity - broken,
            damagedQuantity: broken,
            subtotalMinor: share.subtotal,
            discountMinor: share.discount,
            taxMinor: share.tax,
            totalMinor: share.total,
          })
          .where(and(eq(returnItems.returnId, id), eq(returnItems.orderItemId, share.lineId)))
      }
      const owed = balanceDue(await orderBalanceOf(tx, order, id))
      const settled = settleReturnRefund(refund.total, owed, order.paidMinor - order.refundedMinor)
      const made = settled.refund > 0 ? await payments.refundOrder(tx, order, settled.refund, { returnId: id }, origin) : { refundedMinor: 0 }
      await restockUnits(tx, await restockLocationOf(tx, order.id, body.location_id), restock, { orderId: order.id, referenceId: id, reason: 'returned' }, origin)
      const [received] = await tx
        .update(returns)
        .set({
          status: 'received',
          receivedAt: new Date(),
          merchandiseMinor: refund.merchandise,
          shippingMinor: refund.shipping,
          feeMinor: refund.fee,
          totalMinor: refund.total,
          refundedMinor: made.refundedMinor,
          creditMinor: settled.credit,
          updatedAt: new Date(),
        })
        .where(eq(returns.id, id))
        .returning()
      return moved(tx, order, received!, event, origin)
    },
  }
}

/** The damaged units by line, checked against the return's items (400 naming `damaged[i]`). */
function damagedUnits(items: readonly (typeof returnItems.$inferSelect)[], damaged: NonNullable<ReceiveReturn['damaged']>): Map<string, number> {
  const quantities = new Map(items.map((item) => [item.orderItemId, item.quantity]))
  const units = new Map<string, number>()
  damaged.forEach((entry, index) => {
    const quantity = quantities.get(entry.line_id)
    if (quantity === undefined) throw invalidField(`damaged[${index}].line_id`, `Field 'damaged[${index}].line_id' is not a line of this return`)
    if (units.has(entry.line_id)) throw invalidField(`damaged[${index}].line_id`, `Field 'damaged[${index}].line_id' appears twice`)
    if (entry.quantity > quantity) {
      throw invalidField(`damaged[${index}].quantity`, `Field 'damaged[${index}].quantity' is more than the ${quantity} units of this line in the return`)
    }
    units.set(entry.line_id, entry.quantity)
  })
  return units
}
