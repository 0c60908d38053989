/**
 * Order edits before shipping: units not shipped cancelled (restocked, their share of what was
 * paid refunded through the provider once the edit commits) and lines added (stock taken, the
 * order then owes their price), in one transaction with the order and the stock items locked. A
 * preview runs the same edit and rolls it back, without calling the provider: what it answers is
 * what the commit would do now.
 */
import { and, asc, eq, isNotNull, sql } from 'drizzle-orm'
import {
  computeCartTotals,
  computeOrderEdit,
  fulfillmentStatusOf,
  paymentStatusOf,
  selectTaxRate,
  toMajorUnits,
  type EditOrder,
  type OrderEdit,
  type OrderEditList,
  type OrderEditResult,
} from '@commerce/domain'
import { newId, orderEdits, orderItems, orders, refunds, taxRates, type Database, type Executor, type EventOrigin } from '@commerce/db'
import { conflict, notFound } from '../../errors.js'
import { key, keyset, listTable, type PageQuery } from '../../list-cursor.js'
import { orderBalanceOf, type PaymentService } from '../payments/service.js'
import { unitsReceived } from '../returns/received.js'
import { commitLines, lockLines, releaseLines } from '../inventory/stock.js'
import { catalogLines, orderItemRows } from './lines.js'
import { requireVisibleOrder, type OrderViewer } from './visibility.js'
import { loadOrder, lockOrder, writeOrderEvent } from './view.js'

type OrderEditRow = typeof orderEdits.$inferSelect

/** The orders whose lines may change: not every unit shipped yet, nothing final. */
const EDITABLE = new Set(['pending', 'paid', 'shipped'])

/** Thrown to roll a preview back once it has its answer. */
class PreviewDone extends Error {
  constructor(readonly result: OrderEditResult) {
    super('preview')
  }
}

function toOrderEdit(row: OrderEditRow, currency: string, refundIds: string[]): OrderEdit {
  const money = (minor: number) => toMajorUnits(minor, currency)
  return {
    id: row.id,
    order_id: row.orderId,
    reason: row.reason,
    canceled: row.changes.canceled.map((line) => ({
      line_id: line.line_id,
      quantity: line.quantity,
      subtotal: money(line.subtotal_minor),
      discount: money(line.discount_minor),
      tax: money(line.tax_minor),
      total: money(line.total_minor),
    })),
    added_line_ids: row.changes.added,
    total_before: money(row.totalBeforeMinor),
    total_after: money(row.totalAfterMinor),
    difference: money(row.totalAfterMinor - row.totalBeforeMinor),
    amount_refunded: money(row.refundedMinor),
    amount_owed: money(row.owedMinor),
    refund_ids: refundIds,
    created_at: row.createdAt.toISOString(),
  }
}

/** How an edit is applied: a preview calls no provider and is rolled back by its caller; an exchange names its new lines `exchange[i]` and brings the refund it expects. */
export interface EditOptions {
  commit: boolean
  field?: 'add' | 'exchange'
  exchangeCreditMinor?: number
}

/** An order's edits in the order they were made (UUIDv7 ids): order_edits_order_idx (order_id, id). */
const EDITS_KEYSET = keyset('order_edits', 'asc', [key.uuid(orderEdits.id)])

export function createOrderEditService(db: Database, payments: PaymentService) {
  /** Applies the edit inside `tx`. */
  async function apply(tx: Executor, orderId: string, body: EditOrder, origin: EventOrigin, options: EditOptions): Promise<OrderEditResult> {
    const { commit, field = 'add', exchangeCreditMinor = 0 } = options
    const order = await lockOrder(tx, orderId)
    if (!order) throw notFound('Order')
    if (!EDITABLE.has(order.status)) throw conflict(`Only a pending, paid or shipped order can be edited; this order is ${order.status}`)
    const [lines, received, balance] = await Promise.all([
      tx.select().from(orderItems).where(eq(orderItems.orderId, order.id)).orderBy(asc(orderItems.id)),
      unitsReceived(tx, order.id),
      orderBalanceOf(tx, order),
    ])

    const added = await catalogLines(tx, body.add ?? [], order, field)
    const address = order.shippingAddress
    const taxRate = address ? selectTaxRate(await tx.select().from(taxRates).where(eq(taxRates.country, address.country)), address) : null
    const priced = computeCartTotals({
      currency: order.currency,
      lines: added.map((line) => ({ id: line.id, unitPriceMinor: line.unitPriceMinor, quantity: line.quantity })),
      coupons: [],
      taxRatePpm: taxRate?.ratePpm ?? 0,
      taxRounding: taxRate?.rounding,
      shippingMinor: null,
    }).lines
    const result = computeOrderEdit({
      lines: lines.map((line) => ({ ...line, receivedReturnQuantity: received.get(line.id) ?? 0 })),
      quantities: (body.lines ?? []).map((line) => ({ lineId: line.line_id, quantity: line.quantity })),
      added: priced,
      order: { ...order, ...balance, pendingCreditMinor: balance.pendingCreditMinor + exchangeCreditMinor },
    })

    // Every stock item the edit moves, locked at once: committing the added lines and giving the
    // cancelled units back, in two steps, must not take the locks in two orders.
    const byId = new Map(lines.map((line) => [line.id, line]))
    await lockLines(tx, [...added, ...result.canceled.map((share) => byId.get(share.lineId)!)])

    // The lines: units cancelled are counted (their stock goes back at the end), lines added are written.
    for (const share of result.canceled) {
      await tx
        .update(orderItems)
        .set({ canceledQuantity: sql`${orderItems.canceledQuantity} + ${share.quantity}` })
        .where(eq(orderItems.id, share.lineId))
    }
    const addedRows = orderItemRows(order.id, added, priced)
    if (addedRows.length > 0) {
      await tx.insert(orderItems).values(addedRows)
      await commitLines(tx, order.id, addedRows, field, origin)
    }

    const canceledUnits = new Map(result.canceled.map((share) => [share.lineId, share.quantity]))
    const fulfillmentStatus = fulfillmentStatusOf([
      ...lines.map((line) => ({ quantity: line.quantity - line.canceledQuantity - (canceledUnits.get(line.id) ?? 0), fulfilledQuantity: line.fulfilledQuantity })),
      ...addedRows.map((row) => ({ quantity: row.quantity, fulfilledQuantity: 0 })),
    ])
    const { subtotal, discount, tax, shipping, total } = result.totals
    const totals = { subtotalMinor: subtotal, discountMinor: discount, taxMinor: tax, shippingMinor: shipping, totalMinor: total }
    const paymentStatus = paymentStatusOf({ ...order, ...totals })
    await tx
      .update(orders)
      .set({ ...totals, fulfillmentStatus, paymentStatus, updatedAt: new Date() })
      .where(eq(orders.id, order.id))

    const [row] = await tx
      .insert(orderEdits)
      .values({
        id: newId(),
        orderId: order.id,
        reason: body.reason ?? null,
        changes: {
          canceled: result.canceled.map((share) => ({
            line_id: share.lineId,
            quantity: share.quantity,
            subtotal_minor: share.subtotal,
            discount_minor: share.discount,
            tax_minor: share.tax,
            total_minor: share.total,
          })),
          added: addedRows.map((line) => line.id),
        },
        totalBeforeMinor: order.totalMinor,
        totalAfterMinor: total,
        refundedMinor: result.refund,
        owedMinor: result.owed,
      })
      .returning()
    // Made at the provider once this commits (refundOrder): no stock lock is held while it answers.
    const refundIds =
      commit && result.refund > 0
        ? (await payments.refundOrder(tx, { ...order, ...totals, fulfillmentStatus, paymentStatus }, result.refund, { orderEditId: row!.id }, origin)).refundIds
        : []
    await releaseLines(
      tx,
      order.id,
      result.canceled.map((share) => ({ ...byId.get(share.lineId)!, quantity: share.quantity })),
      origin,
    )
    const edit = toOrderEdit(row!, order.currency, refundIds)
    const after = (await loadOrder(tx, order.id))!
    await writeOrderEvent(tx, 'order.edited', after, origin, { edit })
    return { edit, order: after }
  }

  return {
    /** Commits an edit (inside `tx`, the idempotency runner's transaction, or a return's for its exchange). */
    commit(tx: Executor, orderId: string, body: EditOrder, origin: EventOrigin, options: Omit<EditOptions, 'commit'> = {}): Promise<OrderEditResult> {
      return apply(tx, orderId, body, origin, { ...options, commit: true })
    },

    /** What the edit would do now: the same edit, rolled back. */
    async preview(orderId: string, body: EditOrder, origin: EventOrigin): Promise<OrderEditResult> {
      try {
        await db.transaction(async (tx) => {
          throw new PreviewDone(await apply(tx, orderId, body, origin, { commit: false }))
        })
      } catch (error) {
        if (error instanceof PreviewDone) return error.result
        throw error
      }
      throw new Error('unreachable: a preview always rolls back')
    },

    async list(orderId: string, query: PageQuery, viewer: OrderViewer): Promise<OrderEditList> {
      await requireVisibleOrder(db, orderId, viewer)
      const [{ rows, meta }, [order], made] = await Promise.all([
        listTable(db, EDITS_KEYSET, orderEdits, eq(orderEdits.orderId, orderId), query),
        db.select({ currency: orders.currency }).from(orders).where(eq(orders.id, orderId)),
        db
          .select({ id: refunds.id, editId: refunds.orderEditId })
          .from(refunds)
          .where(and(eq(refunds.orderId, orderId), isNotNull(refunds.orderEditId)))
          .orderBy(asc(refunds.id)),
      ])
      const refundIdsOf = (editId: string) => made.filter((refund) => refund.editId === editId).map((refund) => refund.id)
      return { edits: rows.map((row) => toOrderEdit(row, order!.currency, refundIdsOf(row.id))), meta }
    },
  }
}
