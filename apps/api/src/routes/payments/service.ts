/**
 * Payments on orders, their capture and cancellation, and refunds of them. Each runs in one
 * transaction with the order row locked, so payments, captures, refunds, fulfillments and status
 * moves of one order never interleave. The provider is called inside it for an admin's action on
 * one payment (nothing else is locked), and a failed charge or refund leaves nothing but the
 * record of a declined payment; the refunds of returns, edits and cancellations, which lock stock
 * too, are written pending and made once their transaction commits (RefundMaking).
 */
import type { FastifyBaseLogger } from 'fastify'
import { and, asc, eq, inArray } from 'drizzle-orm'
import {
  amountOwed,
  formatMinorUnits,
  MANUAL_PAYMENT_PROVIDER,
  moveOrder,
  owedBy,
  paymentStatusOf,
  refundedState,
  type CreatePayment,
  type CreateRefund,
  type Payment,
  type PaymentList,
  type OrderBalance,
  type Refund,
} from '@commerce/domain'
import {
  newId,
  orders,
  readOrderBalance,
  paymentColumn,
  payments,
  refunds,
  sqlOf,
  whenCommitted,
  writeEvent,
  type Database,
  type Executor,
  type OrderRow,
  type EventOrigin,
} from '@commerce/db'
import { ApiError, conflict, invalidField, notFound } from '../../errors.js'
import { minorUnits } from '../../fields.js'
import { RefusalWithRecord } from '../../idempotency.js'
import { key, keyset, listTable, type PageQuery } from '../../list-cursor.js'
import { callProvider } from '../../payments/provider.js'
import { ProviderRefusedError, type PaymentProvider, type PaymentState, type ProviderPayment } from '@commerce/domain'
import { requireVisibleOrder, visibleTo, type OrderViewer } from '../orders/visibility.js'
import { makeRefunds, toPayment, toRefund } from '@commerce/payments'
import { loadOrder, lockOrder, paymentOfRow, writeOrderEvent } from '../orders/view.js'

type PaymentRow = typeof payments.$inferSelect

/** The payment states that hold captured money (part of which may be refunded already). */
const REFUNDABLE = new Set<PaymentState>(['captured', 'partially_captured', 'partially_refunded'])

/** Statuses whose order goes to `refunded` once everything captured has been returned. */
const REFUNDABLE_TO_REFUNDED = new Set<OrderRow['status']>(['paid', 'shipped', 'completed'])

/** An order's money after the sale (balanceDue of @commerce/domain), leaving out `exceptReturnId`'s pending credit (the return being received). */
export async function orderBalanceOf(tx: Executor, order: OrderRow, exceptReturnId?: string): Promise<OrderBalance & { refundedMinor: number }> {
  return { ...order, ...(await readOrderBalance(tx, order.id, exceptReturnId)) }
}

/**
 * When a refund is made at the provider, under `providerKey`: `now`, inside the transaction (an
 * admin's refund of one payment: its answer says how it went, and nothing but the order is
 * locked); `after_commit`, once the transaction that decided it committed, never while it holds
 * stock locks (returns, edits, exchanges, cancellations: @commerce/payments refunds.ts); `made`,
 * already (by the provider itself, or a manual payment's, which the shop gives back itself).
 */
export type RefundMaking = { at: 'now' | 'after_commit'; providerKey: string } | { at: 'made' }

/** An order's payments, oldest first (UUIDv7 ids): payments_order_idx (order_id, id). */
const PAYMENTS_KEYSET = keyset('order_payments', 'asc', [key.uuid(payments.id)])

export function createPaymentService(db: Database, provider: PaymentProvider, log: FastifyBaseLogger) {
  /**
   * Refunds `amountMinor` of a succeeded payment, keeps the order's sums and payment_status, and
   * writes `order.refunded` (as the move to `refunded` when `settle` is true and nothing is held
   * any more). A refund made after commit counts in the sums as soon as it is written (pending),
   * so no other refund can take the same money. Answers the refund and the order row as it now is.
   */
  async function refundPayment(
    tx: Executor,
    order: OrderRow,
    payment: PaymentRow,
    refund: { amountMinor: number; reason: string | null; settle: boolean; making: RefundMaking; returnId?: string; orderEditId?: string },
    origin: EventOrigin,
  ): Promise<{ refund: Refund; order: OrderRow }> {
    const making: RefundMaking = payment.provider === MANUAL_PAYMENT_PROVIDER ? { at: 'made' } : refund.making
    const made =
      making.at === 'now'
        ? await callProvider(() =>
            provider.refund({ reference: payment.providerReference ?? payment.id, amountMinor: refund.amountMinor, currency: payment.currency, idempotencyKey: making.providerKey }),
          )
        : null
    const [row] = await tx
      .insert(refunds)
      .values({
        paymentId: payment.id,
        orderId: order.id,
        amountMinor: refund.amountMinor,
        currency: payment.currency,
        reason: refund.reason,
        status: making.at === 'after_commit' ? 'pending' : 'succeeded',
        providerKey: making.at === 'made' ? null : making.providerKey,
        providerReference: made?.reference ?? null,
        returnId: refund.returnId ?? null,
        orderEditId: refund.orderEditId ?? null,
      })
      .returning()
    if (making.at === 'after_commit') {
      await whenCommitted(sqlOf(tx), async () => {
        for (const outcome of await makeRefunds(db, provider, [row!.id], origin)) {
          if (outcome.outcome === 'pending') log.warn({ refund_id: outcome.refundId, error: outcome.error }, 'refund left pending at the provider: the worker sweeps it')
          if (outcome.outcome === 'failed') log.warn({ refund_id: outcome.refundId }, 'the payment provider refused a refund: refund.failed')
        }
      })
    }
    const paymentRefunded = payment.refundedMinor + refund.amountMinor
    await tx
      .update(payments)
      .set({ refundedMinor: paymentRefunded, status: refundedState({ ...payment, refundedMinor: paymentRefunded }), updatedAt: new Date() })
      .where(eq(payments.id, payment.id))
    const refundedMinor = order.refundedMinor + refund.amountMinor
    const paymentStatus = paymentStatusOf({ ...order, refundedMinor })
    const settled = refund.settle && paymentStatus === 'refunded' && REFUNDABLE_TO_REFUNDED.has(order.status)
    const status = settled ? 'refunded' : order.status
    const event = settled ? moveOrder(order.status, 'refunded') : 'order.refunded'
    await tx.update(orders).set({ refundedMinor, paymentStatus, status, updatedAt: new Date() }).where(eq(orders.id, order.id))
    const view = toRefund({ ...row!, createdAt: row!.createdAt.toISOString() })
    await writeOrderEvent(tx, event, (await loadOrder(tx, order.id))!, origin, { refund: view })
    return { refund: view, order: { ...order, refundedMinor, paymentStatus, status } }
  }

  /**
   * Captures `amountMinor` (at most what is held) of an authorized payment of a locked order: a
   * partial capture releases the rest of the hold. Once nothing is held any more and something
   * was captured, a pending order moves to paid (order.paid): the shop decided what it takes.
   */
  async function capturePayment(tx: Executor, order: OrderRow, payment: PaymentRow, amountMinor: number, providerKey: string, origin: EventOrigin) {
    const truth = await callProvider(() =>
      provider.capture({ reference: payment.providerReference ?? payment.id, amountMinor, currency: payment.currency, idempotencyKey: providerKey }),
    )
    if (truth.status === 'canceled') {
      // The provider voided the authorization itself (it expired): nothing can be taken. The
      // refusal keeps the void (payment.canceled), so the order shows nothing held.
      throw new RefusalWithRecord(conflict('The authorization expired at the payment provider and was voided; nothing was captured'), async (recordTx) => {
        const current = (await lockOrder(recordTx, order.id))!
        await recordVoid(recordTx, current, payment, origin)
      })
    }
    const capturedMinor = Math.min(truth.capturedMinor || amountMinor, payment.amountMinor)
    const state: PaymentState = capturedMinor < payment.amountMinor ? 'partially_captured' : 'captured'
    const [captured] = await tx
      .update(payments)
      .set({ status: state, capturedMinor, updatedAt: new Date() })
      .where(eq(payments.id, payment.id))
      .returning()
    const amounts = { ...order, paidMinor: order.paidMinor + capturedMinor, authorizedMinor: Math.max(0, order.authorizedMinor - payment.amountMinor) }
    const paymentStatus = paymentStatusOf(amounts)
    const paid = order.status === 'pending' && amounts.authorizedMinor === 0 && amounts.paidMinor > 0
    const status = paid ? 'paid' : order.status
    await tx
      .update(orders)
      .set({ paidMinor: amounts.paidMinor, authorizedMinor: amounts.authorizedMinor, paymentStatus, status, updatedAt: new Date() })
      .where(eq(orders.id, order.id))
    const view = paymentOfRow(captured!)
    await writeEvent(tx, { kind: 'payment.succeeded', resourceId: order.id, data: view, customerId: order.customerId, ...origin })
    if (paid) await writeOrderEvent(tx, moveOrder('pending', 'paid'), (await loadOrder(tx, order.id))!, origin)
    return { payment: view, order: { ...order, ...amounts, paymentStatus, status } }
  }

  /** Voids an authorized payment of a locked order: nothing was taken, the hold is released (payment.canceled). */
  async function voidPayment(tx: Executor, order: OrderRow, payment: PaymentRow, origin: EventOrigin) {
    await callProvider(() => provider.cancel({ reference: payment.providerReference ?? payment.id, idempotencyKey: `void:${payment.id}` }))
    return recordVoid(tx, order, payment, origin)
  }

  /** Records a void the provider made: the payment canceled, the order's hold released, payment.canceled. */
  async function recordVoid(tx: Executor, order: OrderRow, payment: PaymentRow, origin: EventOrigin) {
    const [canceled] = await tx.update(payments).set({ status: 'canceled', updatedAt: new Date() }).where(eq(payments.id, payment.id)).returning()
    const authorizedMinor = Math.max(0, order.authorizedMinor - payment.amountMinor)
    const paymentStatus = paymentStatusOf({ ...order, authorizedMinor })
    await tx.update(orders).set({ authorizedMinor, paymentStatus, updatedAt: new Date() }).where(eq(orders.id, order.id))
    const view = paymentOfRow(canceled!)
    await writeEvent(tx, { kind: 'payment.canceled', resourceId: order.id, data: view, customerId: order.customerId, ...origin })
    return { payment: view, order: { ...order, authorizedMinor, paymentStatus } }
  }

  /**
   * Records a payment taken in full on a locked order (by the provider, or outside it) and moves a
   * pending order its payments now cover to paid: payment.succeeded, then order.paid.
   */
  async function recordCaptured(
    tx: Executor,
    order: OrderRow,
    attempt: Pick<typeof payments.$inferInsert, 'id' | 'orderId' | 'provider' | 'method' | 'amountMinor' | 'currency' | 'providerReference'>,
    origin: EventOrigin,
  ): Promise<Payment> {
    const [payment] = await tx
      .insert(payments)
      .values({ ...attempt, status: 'captured', capturedMinor: attempt.amountMinor })
      .returning()
    const paidMinor = order.paidMinor + attempt.amountMinor
    const paymentStatus = paymentStatusOf({ ...order, paidMinor })
    const covered = paymentStatus === 'paid' && order.status === 'pending'
    await tx
      .update(orders)
      .set({ paidMinor, paymentStatus, status: covered ? 'paid' : order.status, updatedAt: new Date() })
      .where(eq(orders.id, order.id))
    const view = paymentOfRow(payment!)
    await writeEvent(tx, { kind: 'payment.succeeded', resourceId: order.id, data: view, customerId: order.customerId, ...origin })
    if (covered) await writeOrderEvent(tx, moveOrder('pending', 'paid'), (await loadOrder(tx, order.id))!, origin)
    return view
  }

  /** The payment and its order, locked in the order every writer of an order takes them (the order, then the payment). */
  async function lockPayment(tx: Executor, paymentId: string) {
    const [found] = await tx.select({ orderId: payments.orderId }).from(payments).where(eq(payments.id, paymentId))
    const order = found?.orderId ? await lockOrder(tx, found.orderId) : undefined
    if (!order) throw notFound('Payment')
    const [payment] = await tx
      .select()
      .from(payments)
      .where(and(eq(payments.id, paymentId), eq(payments.orderId, order.id)))
      .for('update')
    if (!payment) throw notFound('Payment')
    return { order, payment }
  }

  return {
    /**
     * Charges the order (inside `tx`, the idempotency runner's transaction). Only a pending order
     * takes payments; the amount defaults to what it still owes. Once the payments cover the
     * total the order moves to paid.
     */
    async pay(tx: Executor, orderId: string, body: CreatePayment, viewer: OrderViewer, origin: EventOrigin, idempotencyKey: string): Promise<Payment> {
      const order = await lockOrder(tx, orderId)
      if (!order || !visibleTo(order, viewer)) throw notFound('Order')
      // A paid or shipped order owes again when an edit added lines: that balance is paid here too.
      const settling = order.status === 'paid' || order.status === 'shipped'
      if (order.status !== 'pending' && !settling) moveOrder(order.status, 'paid')
      const owed = owedBy(order.status, await orderBalanceOf(tx, order))
      if (owed === 0) throw conflict('Nothing is owed on this order')
      const amountMinor = body.amount === undefined ? owed : minorUnits('amount', body.amount, order.currency)
      if (amountMinor > owed) {
        throw invalidField('amount', `Field 'amount' is more than the ${formatMinorUnits(owed, order.currency)} ${order.currency} owed`)
      }
      const paymentId = newId()
      // Refused as asked (an unknown payment method): nothing exists at the provider; a decline like any other.
      const truth: Pick<ProviderPayment, 'status' | 'failure'> & { reference: string | null } = await callProvider(() =>
        provider
          .authorize({
            paymentId,
            amountMinor,
            currency: order.currency,
            method: body.method,
            token: body.token,
            capture: 'automatic',
            idempotencyKey: `order:${order.id}:${idempotencyKey}`,
            returnUrl: null,
          })
          .catch((error: unknown) => {
            if (!(error instanceof ProviderRefusedError)) throw error
            return { status: 'failed' as const, reference: null, failure: { code: error.code, message: error.message } }
          }),
      )
      const attempt = {
        id: paymentId,
        orderId: order.id,
        provider: provider.name,
        method: body.method,
        amountMinor,
        currency: order.currency,
        providerReference: truth.reference,
      }
      if (truth.status !== 'captured') {
        // An order's own payment is taken at once: one that waits for the customer (3-D Secure) is
        // voided and refused, so nothing stays held for an order that did not get it.
        const { reference } = truth
        if (reference !== null && (truth.status === 'requires_action' || truth.status === 'pending' || truth.status === 'authorized')) {
          await callProvider(() => provider.cancel({ reference, idempotencyKey: `order-cancel:${paymentId}` }))
        }
        const failure = truth.failure ?? { code: 'requires_action', message: 'This payment needs the customer to confirm it; pay through a checkout instead' }
        const declined = new ApiError('payment_declined', failure.message, [{ field: 'token', message: failure.code }])
        throw new RefusalWithRecord(declined, async (recordTx) => {
          const [failed] = await recordTx
            .insert(payments)
            .values({ ...attempt, status: 'failed', failureCode: failure.code, failureMessage: failure.message })
            .returning()
          await writeEvent(recordTx, { kind: 'payment.failed', resourceId: order.id, data: paymentOfRow(failed!), customerId: order.customerId, ...origin })
        })
      }
      return recordCaptured(tx, order, attempt, origin)
    },

    /**
     * Records that a locked pending order was paid in full outside the payment provider (cash, a
     * bank transfer: a draft order marked paid): a captured `manual` payment of what it owes, and
     * the order paid, as a captured payment does (payment.succeeded, order.paid); an order of 0 is
     * paid with no payment.
     */
    async recordManualPayment(tx: Executor, order: OrderRow, origin: EventOrigin): Promise<Payment | null> {
      const owed = amountOwed(order)
      if (owed === 0 && order.totalMinor === 0 && order.status === 'pending') {
        // An order of nothing (a draft discounted in full) is paid without a payment.
        await tx.update(orders).set({ status: 'paid', paymentStatus: 'paid', updatedAt: new Date() }).where(eq(orders.id, order.id))
        await writeOrderEvent(tx, moveOrder('pending', 'paid'), (await loadOrder(tx, order.id))!, origin)
        return null
      }
      if (owed === 0) throw conflict('Nothing is owed on this order')
      const id = newId()
      const attempt = { id, orderId: order.id, provider: MANUAL_PAYMENT_PROVIDER, method: 'manual', amountMinor: owed, currency: order.currency, providerReference: null }
      return recordCaptured(tx, order, attempt, origin)
    },

    async list(orderId: string, query: PageQuery, viewer: OrderViewer): Promise<PaymentList> {
      await requireVisibleOrder(db, orderId, viewer)
      const { rows, meta } = await listTable(db, PAYMENTS_KEYSET, payments, eq(payments.orderId, orderId), query, { payment: paymentColumn })
      return { payments: rows.map((row) => toPayment(row.payment)), meta }
    },

    /**
     * Refunds part or all of what is left on a succeeded payment (inside `tx`). A refund that
     * returns everything the order's payments captured moves a paid, shipped or completed order
     * to refunded.
     */
    async refund(tx: Executor, paymentId: string, body: CreateRefund, origin: EventOrigin, idempotencyKey: string): Promise<Refund> {
      const { order, payment } = await lockPayment(tx, paymentId)
      if (order.status === 'cancelled' || order.status === 'refunded') moveOrder(order.status, 'refunded')
      const left = payment.capturedMinor - payment.refundedMinor
      if (payment.status === 'refunded' || (REFUNDABLE.has(payment.status) && left === 0)) throw conflict('This payment is already refunded in full')
      if (!REFUNDABLE.has(payment.status)) throw conflict(`Only a captured payment can be refunded; this one is ${payment.status}`)
      const amountMinor = body.amount === undefined ? left : minorUnits('amount', body.amount, payment.currency)
      if (amountMinor > left) {
        throw invalidField('amount', `Field 'amount' is more than the ${formatMinorUnits(left, payment.currency)} ${payment.currency} left to refund on this payment`)
      }
      const { refund } = await refundPayment(
        tx,
        order,
        payment,
        { amountMinor, reason: body.reason ?? null, settle: true, making: { at: 'now', providerKey: `refund:${payment.id}:${idempotencyKey}` } },
        origin,
      )
      return refund
    },

    /**
     * Records what the provider reports refunded on an order's payment beyond what is recorded
     * here (`truth`, from its webhook): a refund made in its dashboard, as one refund of the
     * difference (order.refunded, and the order refunded once nothing is kept), so the order and
     * the customer's emails follow it. Our own refunds count as soon as they are written, so they
     * never show as a difference.
     */
    async recordProviderRefunds(tx: Executor, paymentId: string, truth: ProviderPayment, origin: EventOrigin): Promise<void> {
      const [found] = await tx.select({ orderId: payments.orderId }).from(payments).where(eq(payments.id, paymentId))
      if (!found?.orderId) return
      const { order, payment } = await lockPayment(tx, paymentId)
      if (!REFUNDABLE.has(payment.status)) return
      const amountMinor = Math.min(truth.refundedMinor, payment.capturedMinor) - payment.refundedMinor
      if (amountMinor <= 0) return
      await refundPayment(tx, order, payment, { amountMinor, reason: 'Refunded at the payment provider', settle: true, making: { at: 'made' } }, origin)
    },

    /** POST /payments/:id/capture: captures an authorized payment, in full or in part (admin). */
    async capture(tx: Executor, paymentId: string, amount: number | undefined, origin: EventOrigin, idempotencyKey: string): Promise<Payment> {
      const { order, payment } = await lockPayment(tx, paymentId)
      if (payment.status !== 'authorized') throw conflict(`Only an authorized payment can be captured; this one is ${payment.status}`)
      const amountMinor = amount === undefined ? payment.amountMinor : minorUnits('amount', amount, payment.currency)
      if (amountMinor > payment.amountMinor) {
        throw invalidField('amount', `Field 'amount' is more than the ${formatMinorUnits(payment.amountMinor, payment.currency)} ${payment.currency} authorized`)
      }
      return (await capturePayment(tx, order, payment, amountMinor, `capture:${payment.id}:${idempotencyKey}`, origin)).payment
    },

    /** POST /payments/:id/cancel: voids an authorized payment (admin). */
    async cancel(tx: Executor, paymentId: string, origin: EventOrigin): Promise<Payment> {
      const { order, payment } = await lockPayment(tx, paymentId)
      if (payment.status !== 'authorized') throw conflict(`Only an authorized payment can be canceled; this one is ${payment.status}`)
      return (await voidPayment(tx, order, payment, origin)).payment
    },

    /**
     * Captures the authorized payments of a locked order (its first fulfillment, with
     * PAYMENT_CAPTURE=manual): in full, or as much as the total needs; answers the order as it now is.
     */
    async captureAll(tx: Executor, order: OrderRow, origin: EventOrigin): Promise<OrderRow> {
      const held = await tx
        .select()
        .from(payments)
        .where(and(eq(payments.orderId, order.id), eq(payments.status, 'authorized')))
        .orderBy(asc(payments.id))
        .for('update')
      let current = order
      for (const payment of held) {
        // An edit may have lowered the total below what is held: take only what the total needs, release the rest.
        const needed = Math.min(payment.amountMinor, Math.max(0, current.totalMinor - (current.paidMinor - current.refundedMinor)))
        ;({ order: current } =
          needed === 0
            ? await voidPayment(tx, current, payment, origin)
            : await capturePayment(tx, current, payment, needed, `capture:${payment.id}:fulfillment`, origin))
      }
      return current
    },

    /**
     * Refunds `amountMinor` of a locked order's captured payments, oldest payment first, for a
     * return or an order edit: written pending and made at the provider once the caller's
     * transaction commits, each keyed by it and the payment, so asking again never refunds twice.
     * The order moves to refunded when nothing is kept. Answers the refunds' ids, what was
     * refunded and the order as it now is.
     */
    async refundOrder(tx: Executor, order: OrderRow, amountMinor: number, cause: { returnId: string } | { orderEditId: string }, origin: EventOrigin) {
      const captured = await tx
        .select()
        .from(payments)
        .where(and(eq(payments.orderId, order.id), inArray(payments.status, [...REFUNDABLE])))
        .orderBy(asc(payments.id))
        .for('update')
      const [key, reason] = 'returnId' in cause ? [`return:${cause.returnId}`, 'Return received'] : [`edit:${cause.orderEditId}`, 'Order edited']
      let current = order
      let due = amountMinor
      const refundIds: string[] = []
      for (const payment of captured) {
        const part = Math.min(due, payment.capturedMinor - payment.refundedMinor)
        if (part === 0) continue
        const made = await refundPayment(
          tx,
          current,
          payment,
          { amountMinor: part, reason, settle: true, making: { at: 'after_commit', providerKey: `${key}:${payment.id}` }, ...cause },
          origin,
        )
        current = made.order
        refundIds.push(made.refund.id)
        due -= part
        if (due === 0) break
      }
      return { refundIds, refundedMinor: amountMinor - due, order: current }
    },

    /** Refunds what is left on every captured payment of a locked order (made once the caller commits) and voids its authorizations (cancelling it). */
    async refundAll(tx: Executor, order: OrderRow, reason: string, origin: EventOrigin): Promise<void> {
      const held = await tx
        .select()
        .from(payments)
        .where(and(eq(payments.orderId, order.id), inArray(payments.status, [...REFUNDABLE, 'authorized'])))
        .orderBy(asc(payments.id))
        .for('update')
      let current = order
      for (const payment of held) {
        if (payment.status === 'authorized') {
          ;({ order: current } = await voidPayment(tx, current, payment, origin))
          continue
        }
        const left = payment.capturedMinor - payment.refundedMinor
        if (left === 0) continue
        const making = { at: 'after_commit', providerKey: `cancel:${order.id}:${payment.id}` } as const
        ;({ order: current } = await refundPayment(tx, current, payment, { amountMinor: left, reason, settle: false, making }, origin))
      }
    },
  }
}

export type PaymentService = ReturnType<typeof createPaymentService>
