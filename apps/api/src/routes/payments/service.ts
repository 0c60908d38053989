/**
 * Payments on orders and refunds of them. Each runs in one transaction with the order row
 * locked, so payments, refunds, fulfillments and status moves of one order never interleave;
 * the provider is called inside it, and a failed charge or refund leaves nothing but the record
 * of a declined payment.
 */
import { and, asc, count, eq } from 'drizzle-orm'
import {
  amountOwed,
  formatMinorUnits,
  moveOrder,
  paymentStatusOf,
  type CreatePayment,
  type CreateRefund,
  type Payment,
  type PaymentList,
  type Refund,
} from '@commerce/domain'
import { orders, payments, refunds, writeEvent, type Database, type Executor } from '@commerce/db'
import { ApiError, conflict, invalidField, notFound } from '../../errors.js'
import { minorUnits } from '../../fields.js'
import { RefusalWithRecord } from '../../idempotency.js'
import { pageMeta } from '../../list-totals.js'
import type { PaymentProvider } from '../../payments/provider.js'
import { requireVisibleOrder, visibleTo, type OrderViewer } from '../orders/service.js'
import { loadOrder, lockOrder, paymentJson, paymentOfRow, toPayment, toRefund, writeOrderEvent, type OrderRow, type PaymentJson } from '../orders/view.js'

type PaymentRow = typeof payments.$inferSelect

/** Statuses whose order goes to `refunded` once everything captured has been returned. */
const REFUNDABLE_TO_REFUNDED = new Set<OrderRow['status']>(['paid', 'shipped', 'completed'])

export function createPaymentService(db: Database, provider: PaymentProvider) {
  /**
   * Refunds `amountMinor` of a succeeded payment through the provider, keeps the order's sums and
   * payment_status, and writes `order.refunded` (as the move to `refunded` when `settle` is true
   * and nothing is held any more). Answers the refund and the order row as it now is.
   */
  async function refundPayment(
    tx: Executor,
    order: OrderRow,
    payment: PaymentRow,
    refund: { amountMinor: number; reason: string | null; providerKey: string; settle: boolean },
    requestId: string,
  ): Promise<{ refund: Refund; order: OrderRow }> {
    const { reference } = await provider.refund({
      reference: payment.providerReference ?? payment.id,
      amountMinor: refund.amountMinor,
      currency: payment.currency,
      idempotencyKey: refund.providerKey,
    })
    const [row] = await tx
      .insert(refunds)
      .values({
        paymentId: payment.id,
        orderId: order.id,
        amountMinor: refund.amountMinor,
        currency: payment.currency,
        reason: refund.reason,
        providerReference: reference,
      })
      .returning()
    await tx
      .update(payments)
      .set({ refundedMinor: payment.refundedMinor + refund.amountMinor, updatedAt: new Date() })
      .where(eq(payments.id, payment.id))
    const refundedMinor = order.refundedMinor + refund.amountMinor
    const paymentStatus = paymentStatusOf({ ...order, refundedMinor })
    const settled = refund.settle && paymentStatus === 'refunded' && REFUNDABLE_TO_REFUNDED.has(order.status)
    const status = settled ? 'refunded' : order.status
    const event = settled ? moveOrder(order.status, 'refunded') : 'order.refunded'
    await tx.update(orders).set({ refundedMinor, paymentStatus, status, updatedAt: new Date() }).where(eq(orders.id, order.id))
    const view = toRefund({ ...row!, createdAt: row!.createdAt.toISOString() })
    await writeOrderEvent(tx, event, (await loadOrder(tx, order.id))!, requestId, { refund: view })
    return { refund: view, order: { ...order, refundedMinor, paymentStatus, status } }
  }

  return {
    /**
     * Charges the order (inside `tx`, the idempotency runner's transaction). Only a pending order
     * takes payments; the amount defaults to what it still owes. Once the payments cover the
     * total the order moves to paid.
     */
    async pay(tx: Executor, orderId: string, body: CreatePayment, viewer: OrderViewer, requestId: string, idempotencyKey: string): Promise<Payment> {
      const order = await lockOrder(tx, orderId)
      if (!order || !visibleTo(order, viewer)) throw notFound('Order')
      if (order.status !== 'pending') moveOrder(order.status, 'paid')
      const owed = amountOwed(order)
      if (owed === 0) throw conflict('Nothing is owed on this order')
      const amountMinor = body.amount === undefined ? owed : minorUnits('amount', body.amount, order.currency)
      if (amountMinor > owed) {
        throw invalidField('amount', `Field 'amount' is more than the ${formatMinorUnits(owed, order.currency)} ${order.currency} owed`)
      }
      const charge = await provider.charge({
        amountMinor,
        currency: order.currency,
        method: body.method,
        token: body.token,
        idempotencyKey: `order:${order.id}:${idempotencyKey}`,
      })
      const attempt = {
        orderId: order.id,
        provider: provider.name,
        method: body.method,
        amountMinor,
        currency: order.currency,
      }
      if (charge.status === 'failed') {
        const declined = new ApiError('payment_declined', charge.message, [{ field: 'token', message: charge.code }])
        throw new RefusalWithRecord(declined, async (recordTx) => {
          const [failed] = await recordTx
            .insert(payments)
            .values({ ...attempt, status: 'failed', failureCode: charge.code, failureMessage: charge.message })
            .returning()
          await writeEvent(recordTx, { kind: 'payment.failed', resourceId: order.id, data: paymentOfRow(failed!), customerId: order.customerId, requestId })
        })
      }
      const [payment] = await tx
        .insert(payments)
        .values({ ...attempt, status: 'succeeded', providerReference: charge.reference })
        .returning()
      const paidMinor = order.paidMinor + amountMinor
      const paymentStatus = paymentStatusOf({ ...order, paidMinor })
      const covered = paymentStatus === 'paid'
      await tx
        .update(orders)
        .set({ paidMinor, paymentStatus, status: covered ? 'paid' : order.status, updatedAt: new Date() })
        .where(eq(orders.id, order.id))
      const view = paymentOfRow(payment!)
      await writeEvent(tx, { kind: 'payment.succeeded', resourceId: order.id, data: view, customerId: order.customerId, requestId })
      if (covered) await writeOrderEvent(tx, moveOrder('pending', 'paid'), (await loadOrder(tx, order.id))!, requestId)
      return view
    },

    async list(orderId: string, page: number, perPage: number, viewer: OrderViewer): Promise<PaymentList> {
      await requireVisibleOrder(db, orderId, viewer)
      const ofOrder = eq(payments.orderId, orderId)
      const [rows, [counted]] = await Promise.all([
        db
          .select({ payment: paymentJson('payments').mapWith((value: PaymentJson) => value) })
          .from(payments)
          .where(ofOrder)
          .orderBy(asc(payments.id))
          .limit(perPage)
          .offset((page - 1) * perPage),
        db.select({ total: count() }).from(payments).where(ofOrder),
      ])
      return { payments: rows.map((row) => toPayment(row.payment)), meta: pageMeta(page, perPage, counted!.total) }
    },

    /**
     * Refunds part or all of what is left on a succeeded payment (inside `tx`). A refund that
     * returns everything the order's payments captured moves a paid, shipped or completed order
     * to refunded.
     */
    async refund(tx: Executor, paymentId: string, body: CreateRefund, requestId: string, idempotencyKey: string): Promise<Refund> {
      const [found] = await tx.select({ orderId: payments.orderId }).from(payments).where(eq(payments.id, paymentId))
      // Lock order: the order, then its payment, as every other writer of the order does.
      const order = found?.orderId ? await lockOrder(tx, found.orderId) : undefined
      if (!order) throw notFound('Payment')
      const [payment] = await tx
        .select()
        .from(payments)
        .where(and(eq(payments.id, paymentId), eq(payments.orderId, order.id)))
        .for('update')
      if (!payment) throw notFound('Payment')
      if (payment.status !== 'succeeded') throw conflict(`Only a succeeded payment can be refunded; this one ${payment.status}`)
      if (order.status === 'cancelled' || order.status === 'refunded') moveOrder(order.status, 'refunded')
      const left = payment.amountMinor - payment.refundedMinor
      if (left === 0) throw conflict('This payment is already refunded in full')
      const amountMinor = body.amount === undefined ? left : minorUnits('amount', body.amount, payment.currency)
      if (amountMinor > left) {
        throw invalidField('amount', `Field 'amount' is more than the ${formatMinorUnits(left, payment.currency)} ${payment.currency} left to refund on this payment`)
      }
      const { refund } = await refundPayment(
        tx,
        order,
        payment,
        { amountMinor, reason: body.reason ?? null, providerKey: `refund:${payment.id}:${idempotencyKey}`, settle: true },
        requestId,
      )
      return refund
    },

    /** Refunds what is left on every succeeded payment of a locked order (cancelling it). */
    async refundAll(tx: Executor, order: OrderRow, reason: string, requestId: string): Promise<void> {
      const held = await tx
        .select()
        .from(payments)
        .where(and(eq(payments.orderId, order.id), eq(payments.status, 'succeeded')))
        .orderBy(asc(payments.id))
        .for('update')
      let current = order
      for (const payment of held) {
        const left = payment.amountMinor - payment.refundedMinor
        if (left === 0) continue
        const providerKey = `cancel:${order.id}:${payment.id}`
        ;({ order: current } = await refundPayment(tx, current, payment, { amountMinor: left, reason, providerKey, settle: false }, requestId))
      }
    },
  }
}

export type PaymentService = ReturnType<typeof createPaymentService>
