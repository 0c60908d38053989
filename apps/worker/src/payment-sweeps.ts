/**
 * The payment sweeps (issue 20): the checkouts' payments that nothing settled. Every
 * PAYMENT_SWEEP_INTERVAL one worker (a session advisory lock) sweeps:
 * - expiry: a held reservation past its time is settled from the provider's truth; a payment the
 *   customer or the provider still has to act on is canceled at the provider first, so that it
 *   can never be taken after its stock was given back;
 * - reconciliation: a payment in progress unchanged for PAYMENT_RECONCILE_AFTER (the API died
 *   between the provider's answer and its last statement), or soon after the provider did not
 *   answer, is looked up at the provider and settled. A payment whose reference we never learnt is
 *   searched for by our id, and "no such payment" believed only after PAYMENT_UNRECORDED_GRACE;
 * - refunds: a refund left pending (the request that wrote it died, or the provider did not
 *   answer it) is asked of the provider again under its own idempotency key.
 * settlePayment acts only on a reservation still held, so a sweep racing the API or the
 * provider's webhook changes nothing wrong. A provider that cannot answer leaves the reservation
 * held for the next sweep.
 */
import { ProviderUnavailableError, type PaymentProvider, type ProviderPayment } from '@commerce/domain'
import { createDb, expiredReservations, refundsLeftPending, releaseSweepLock, stuckPayments, trySweepLock, type DatabaseHandle, type SweptPayment } from '@commerce/db'
import { makeRefunds, settlePayment } from '@commerce/payments'
import type { Logger } from './logger.js'
import type { WorkerMetrics } from './metrics.js'

/** The advisory lock's name (hashed to its key), held by the worker sweeping. */
export const PAYMENT_SWEEP_LOCK = 'commerce:payment-sweeps'
/** Payments per sweep and source; the rest wait for the next sweep. */
const BATCH = 100
/** A payment whose provider call got no answer is asked about this soon, not after PAYMENT_RECONCILE_AFTER. */
const UNANSWERED_AFTER_MS = 10_000
/** A refund still pending this long after it was written was not made by the request that wrote it. */
const REFUND_LEFT_AFTER_MS = 30_000

const IN_PROGRESS: ReadonlySet<ProviderPayment['status']> = new Set(['pending', 'requires_action'])

type Source = 'expiry' | 'reconcile'

export interface PaymentSweepSettings {
  /** The provider of the payments swept (the API's: the same environment). */
  provider: PaymentProvider
  intervalMs: number
  reconcileAfterMs: number
  unrecordedGraceMs: number
}

export interface PaymentSweeper {
  database: DatabaseHandle
  provider: PaymentProvider
  reconcileAfterMs: number
  unrecordedGraceMs: number
  logger: Logger
  metrics: WorkerMetrics
  /** Asked between payments: a stopping worker ends its sweep early. */
  stopping?: () => boolean
}

/** One sweep, expiry then reconciliation; false when another worker was sweeping (nothing done). */
export async function sweepPayments(sweeper: PaymentSweeper): Promise<boolean> {
  const { sql } = sweeper.database
  // A session lock: the connection that takes it is the one that gives it back.
  const session = await sql.reserve()
  try {
    if (!(await trySweepLock(session, PAYMENT_SWEEP_LOCK))) return false
    try {
      const query = { provider: sweeper.provider.name, limit: BATCH, unrecordedGraceMs: sweeper.unrecordedGraceMs }
      await settleEach(sweeper, 'expiry', await expiredReservations(sql, query))
      await settleEach(sweeper, 'reconcile', await stuckPayments(sql, { ...query, reconcileAfterMs: sweeper.reconcileAfterMs, unansweredAfterMs: UNANSWERED_AFTER_MS }))
      await makeLeftRefunds(sweeper, await refundsLeftPending(sql, { provider: sweeper.provider.name, olderThanMs: REFUND_LEFT_AFTER_MS, limit: BATCH }))
    } finally {
      await releaseSweepLock(session, PAYMENT_SWEEP_LOCK)
    }
    return true
  } finally {
    session.release()
  }
}

/** Each payment on its own: one that fails is logged, and the others are still settled. */
async function settleEach(sweeper: PaymentSweeper, source: Source, found: SweptPayment[]): Promise<void> {
  for (const payment of found) {
    if (sweeper.stopping?.()) return
    await settleOne(sweeper, source, payment)
  }
}

async function settleOne(sweeper: PaymentSweeper, source: Source, { paymentId, reference, missingIsFinal }: SweptPayment): Promise<void> {
  const { provider, logger, metrics } = sweeper
  try {
    let truth = await provider.retrieve({ paymentId, reference })
    if (truth === null && !missingIsFinal) {
      metrics.paymentSettled(source, 'waiting')
      logger.info('payment not found at the provider yet: asked again at the next sweep', { payment_id: paymentId, source })
      return
    }
    if (source === 'expiry' && truth !== null && IN_PROGRESS.has(truth.status)) truth = await cancelExpired(sweeper, paymentId, truth)
    const settled = await settlePayment(sweeper.database.db, provider, paymentId, truth, { origin: { requestId: null, actor: null } })
    metrics.paymentSettled(source, settled.kind)
    logger.info('payment settled', { payment_id: paymentId, source, outcome: settled.kind })
  } catch (error) {
    const fields = { payment_id: paymentId, source, error: error instanceof Error ? error.message : String(error) }
    if (error instanceof ProviderUnavailableError) logger.warn('the payment provider did not answer: the payment is swept again later', fields)
    else logger.error('could not settle a payment', fields)
  }
}

/** Asks the provider again for each refund left pending; one it does not answer waits for the next sweep. */
async function makeLeftRefunds(sweeper: PaymentSweeper, refundIds: string[]): Promise<void> {
  const { logger } = sweeper
  for (const refundId of refundIds) {
    if (sweeper.stopping?.()) return
    try {
      for (const made of await makeRefunds(sweeper.database.db, sweeper.provider, [refundId], { requestId: null, actor: null })) {
        if (made.outcome === 'pending') logger.warn('the refund was not made at the provider: asked again at the next sweep', { refund_id: refundId, error: made.error })
        else logger.info('refund made at the provider', { refund_id: refundId, outcome: made.outcome })
      }
    } catch (error) {
      logger.error('could not make a refund', { refund_id: refundId, error: error instanceof Error ? error.message : String(error) })
    }
  }
}

/**
 * Cancels the payment of an expired reservation; answers the provider's truth after it. A refused
 * cancel (Stripe refuses to cancel a payment that succeeded meanwhile) asks again: a payment no
 * longer in progress is settled as it now is.
 */
async function cancelExpired({ provider, logger }: PaymentSweeper, paymentId: string, truth: ProviderPayment): Promise<ProviderPayment> {
  try {
    const canceled = await provider.cancel({ reference: truth.reference, idempotencyKey: `expire:${paymentId}` })
    logger.info('payment canceled at the provider: its reservation expired', { payment_id: paymentId, status: canceled.status })
    return canceled
  } catch (error) {
    if (error instanceof ProviderUnavailableError) throw error
    const now = await provider.retrieve({ paymentId, reference: truth.reference })
    if (now === null || IN_PROGRESS.has(now.status)) throw error
    return now
  }
}

export interface PaymentSweeps {
  /** Ends the sweep under way after its current payment, then closes the sweeps' connections. */
  stop(): Promise<void>
}

/** Sweeps every `intervalMs` on a small database pool of its own, until stopped. */
export function startPaymentSweeps(
  settings: PaymentSweepSettings & { databaseUrl: string; connectTimeoutMs: number; logger: Logger; metrics: WorkerMetrics },
): PaymentSweeps {
  const { logger } = settings
  // Two connections: one holds the lock while the other settles.
  const database = createDb({ url: settings.databaseUrl, poolMax: 2, connectTimeoutMs: settings.connectTimeoutMs, applicationName: 'commerce-worker-sweeps' })
  let stopping = false
  let running: Promise<void> | undefined
  const sweeper: PaymentSweeper = { ...settings, database, stopping: () => stopping }
  const sweep = () => {
    // A sweep that outlasts the interval is not overlapped by the next one.
    running ??= sweepPayments(sweeper)
      .then(
        () => undefined,
        (error: unknown) => logger.warn('could not sweep the payments', { error: error instanceof Error ? error.message : String(error) }),
      )
      .finally(() => (running = undefined))
  }
  const timer = setInterval(sweep, settings.intervalMs)
  timer.unref()
  return {
    async stop() {
      stopping = true
      clearInterval(timer)
      await running
      await database.close()
    },
  }
}
