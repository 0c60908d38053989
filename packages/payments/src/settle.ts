/**
 * Settling a checkout's payment from the provider's truth, wherever it is learnt: the checkout
 * completion (the provider's answer, or a retrieve on a second call), the provider's webhook
 * (apps/api) and the worker's sweeps (apps/worker). Each settlement is one statement on the
 * reservation (@commerce/db checkout-settlement.ts) that acts only while the reservation is
 * `held`, so whoever comes first places the order (or gives the stock back) and the others learn
 * it: exactly one order, never a charge without an order or a refund.
 */
import { type CaptureMode, type EventKind, type NextAction, type Payment, type PaymentProvider, type PaymentState, type ProviderPayment } from '@commerce/domain'
import {
  eventRows,
  newId,
  notePaymentProgress,
  placeReservedOrder,
  reacquireReservation,
  recordReturnedPayment,
  releaseReservation,
  settlementOf,
  sqlOf,
  whenCommitted,
  type Database,
  type Executor,
  type Settlement,
  type StoredAnswer,
  type EventOrigin,
} from '@commerce/db'
import { makeRefunds } from './refunds.js'
import { toPayment } from './view.js'

/** What settling did. */
export type Settled =
  /** The order was placed now; `answer` is its JSON (the completion's 201). */
  | { kind: 'placed'; answer: string }
  /** Declined (or the provider has no such payment): the stock and coupons given back. */
  | { kind: 'declined'; failure: { code: string; message: string } }
  /** Canceled at the provider: the stock and coupons given back. */
  | { kind: 'canceled' }
  /** The customer or the provider still has to act; the reservation holds until `reservedUntil`. */
  | { kind: 'waiting'; payment: Payment; nextAction: NextAction | null; reservedUntil: string }
  /** It succeeded after its reservation was released and the stock was gone: given back at the provider. */
  | { kind: 'returned'; state: 'refunded' | 'canceled' }
  /** Settled before, by someone else: where it stands now. */
  | { kind: 'earlier'; settlement: Settlement }

export interface SettleOptions {
  /** The request (and who sent it) or the worker that settles: its events record it. */
  origin: EventOrigin
  /** The completion's Idempotency-Key answer to store with a settlement that ends it (none by default). */
  stored?: (outcome: { kind: 'placed' } | { kind: 'declined'; failure: { code: string; message: string } } | { kind: 'canceled' }) => StoredAnswer | null
  /** The caller made the reservation just now: a success is placed without reading where it stands first (a round trip less on the hot path). */
  justReserved?: boolean
  /** The transaction to settle in (the provider webhook's, which claims its event in it); each statement commits on its own otherwise. */
  within?: Executor
  /** Why the provider has no such payment, when `truth` is null because it refused to create it (an unknown payment method). */
  refused?: { code: string; message: string }
}

const SUCCEEDED = new Set<PaymentState>(['authorized', 'captured', 'partially_captured'])
const GIVEN_BACK = new Set<PaymentState>(['refunded', 'canceled'])

/** A payment of a checkout as the API shows it (for its events and the 202 answer). */
function paymentOf(current: Settlement & { paymentId: string }, state: PaymentState, amounts: { amountMinor: number; capturedMinor: number; refundedMinor: number }, failure: { code: string; message: string } | null, provider: string): Payment {
  return toPayment({
    id: current.paymentId,
    orderId: null,
    checkoutId: current.checkoutId,
    provider,
    method: current.method,
    status: state,
    captureMode: current.captureMode as CaptureMode,
    ...amounts,
    currency: current.currency,
    failureCode: failure?.code ?? null,
    failureMessage: failure?.message ?? null,
    createdAt: current.createdAt,
    refunds: [],
  })
}

/**
 * Settles the payment `paymentId` of a checkout from the provider's truth (null: the provider has
 * no such payment, it never started: as declined).
 */
export async function settlePayment(db: Database, provider: PaymentProvider, paymentId: string, truth: ProviderPayment | null, options: SettleOptions): Promise<Settled> {
  const sql = sqlOf(options.within ?? db)
  const stored = options.stored ?? (() => null)
  const state: PaymentState = truth === null ? 'failed' : truth.status
  const earlier = async (): Promise<Settled> => ({ kind: 'earlier', settlement: (await settlementOf(sql, paymentId))! })
  const place = async (): Promise<Settled> => {
    const placed = await placeReservedOrder(sql, { paymentId, state, amountMinor: truth!.amountMinor, capturedMinor: truth!.capturedMinor, reference: truth!.reference }, stored({ kind: 'placed' }))
    return placed === undefined ? earlier() : { kind: 'placed', answer: placed }
  }
  if (options.justReserved && SUCCEEDED.has(state)) return place()
  const current = { ...(await settlementOf(sql, paymentId))!, paymentId }
  const amounts = { amountMinor: truth?.amountMinor ?? current.amountMinor, capturedMinor: truth?.capturedMinor ?? current.capturedMinor, refundedMinor: truth?.refundedMinor ?? 0 }

  if (current.status === 'held' && SUCCEEDED.has(state)) return place()
  if (current.status === 'held' && (state === 'failed' || state === 'canceled')) {
    const failure =
      truth === null
        ? (options.refused ?? { code: 'not_found', message: 'The payment provider has no such payment' })
        : (truth.failure ?? { code: state, message: `The payment was ${state}` })
    const outcome = state === 'failed' ? ({ kind: 'declined', failure } as const) : ({ kind: 'canceled' } as const)
    const kind: EventKind = state === 'failed' ? 'payment.failed' : 'payment.canceled'
    const data = paymentOf(current, state, amounts, failure, provider.name)
    const released = await releaseReservation(
      sql,
      { paymentId, state, failure, reference: truth?.reference ?? null, events: eventRows([{ kind, resourceId: paymentId, data, customerId: current.customerId, ...options.origin }]) },
      stored(outcome),
    )
    return released ? outcome : earlier()
  }
  // Once given back (refunded, or voided: canceled), a stale notification of the success (a webhook delivered late) changes nothing.
  if (current.status === 'released' && SUCCEEDED.has(state) && !GIVEN_BACK.has(current.paymentState)) return settleLateSuccess(db, provider, current, truth!, options)
  if (current.status === 'held') {
    const waiting = state === 'requires_action' ? 'requires_action' : 'pending'
    await notePaymentProgress(sql, { paymentId, state: waiting, reference: truth?.reference ?? null, failure: null })
    return {
      kind: 'waiting',
      payment: paymentOf(current, waiting, amounts, null, provider.name),
      nextAction: truth?.nextAction ?? null,
      reservedUntil: new Date(current.expiresAt!).toISOString(),
    }
  }
  return earlier()
}

/**
 * A payment that succeeded after its reservation was released: it still becomes the order when
 * the stock is still there, else it is given back (payment.refunded or payment.canceled): decided
 * once, by one statement that re-checks under the reservation's lock that nothing placed it
 * meanwhile; the provider is asked only by the settlement whose statement decided it, once that
 * is committed (a refund through its pending record, which the worker's sweep finishes if this
 * process dies first).
 */
async function settleLateSuccess(db: Database, provider: PaymentProvider, current: Settlement & { paymentId: string }, truth: ProviderPayment, options: SettleOptions): Promise<Settled> {
  const sql = sqlOf(options.within ?? db)
  const { paymentId } = current
  if (await reacquireReservation(sql, paymentId)) return settlePayment(db, provider, paymentId, truth, options)
  const voided = truth.status === 'authorized'
  const state = voided ? 'canceled' : 'refunded'
  const amounts = voided ? { amountMinor: truth.amountMinor, capturedMinor: 0, refundedMinor: 0 } : { amountMinor: truth.amountMinor, capturedMinor: truth.capturedMinor, refundedMinor: truth.capturedMinor }
  const left = truth.capturedMinor - truth.refundedMinor
  const refund = !voided && left > 0 ? { id: newId(), amountMinor: left, providerKey: `late-refund:${paymentId}` } : null
  const data = paymentOf(current, state, amounts, null, provider.name)
  const returned = await recordReturnedPayment(
    sql,
    { paymentId, state, capturedMinor: amounts.capturedMinor, refundedMinor: amounts.refundedMinor, reference: truth.reference, refund },
    eventRows([{ kind: voided ? 'payment.canceled' : 'payment.refunded', resourceId: paymentId, data, customerId: current.customerId, ...options.origin }]),
  )
  if (!returned) return { kind: 'earlier', settlement: (await settlementOf(sql, paymentId))! }
  await whenCommitted(sql, async () => {
    // A void that does not go through leaves an authorization that lapses at the provider by itself (Stripe: after 7 days).
    if (voided) await provider.cancel({ reference: truth.reference, idempotencyKey: `late-void:${paymentId}` }).catch(() => {})
    else if (refund) await makeRefunds(db, provider, [refund.id], options.origin)
  })
  return { kind: 'returned', state }
}
