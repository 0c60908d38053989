/**
 * Making the refunds recorded as pending at the payment provider, after the transaction that
 * decided them committed: from the request that made them (whenCommitted), and from the worker's
 * sweep for those left pending (the request died, the provider did not answer). Each is asked
 * under its own idempotency key, so asking again never refunds twice; whoever learns the outcome
 * first records it. A refusal fails the refund and gives its amount back to the payment's and the
 * order's sums (refund.failed); a provider that does not answer leaves it pending for the sweep.
 */
import { ProviderRefusedError, ProviderUnavailableError, paymentStatusOf, refundedState, type PaymentProvider } from '@commerce/domain'
import {
  eventRows,
  lockPendingRefund,
  pendingRefunds,
  recordRefundFailed,
  recordRefundMade,
  sqlOf,
  type Database,
  type EventOrigin,
  type PendingRefund,
} from '@commerce/db'
import { toRefund } from './view.js'

/** What became of a pending refund: made, refused (failed), or still pending (`error`: why). */
export type RefundOutcome = { refundId: string } & ({ outcome: 'succeeded' | 'failed' } | { outcome: 'pending'; error: string })

/** Asks the provider for each refund of `refundIds` still pending; never throws for what the provider answers. */
export async function makeRefunds(db: Database, provider: PaymentProvider, refundIds: readonly string[], origin: EventOrigin): Promise<RefundOutcome[]> {
  const outcomes: RefundOutcome[] = []
  for (const refund of await pendingRefunds(sqlOf(db), refundIds)) outcomes.push(await makeRefund(db, provider, refund, origin))
  return outcomes
}

async function makeRefund(db: Database, provider: PaymentProvider, refund: PendingRefund, origin: EventOrigin): Promise<RefundOutcome> {
  const refundId = refund.id
  if (refund.provider !== provider.name) return { refundId, outcome: 'pending', error: `The payment is with provider '${refund.provider}', not '${provider.name}'` }
  try {
    const made = await provider.refund({
      reference: refund.reference ?? refund.paymentId,
      amountMinor: refund.amountMinor,
      currency: refund.currency,
      idempotencyKey: refund.providerKey,
    })
    await recordRefundMade(sqlOf(db), { id: refundId, reference: made.reference })
    return { refundId, outcome: 'succeeded' }
  } catch (error) {
    if (error instanceof ProviderRefusedError) {
      await failRefund(db, refund, { code: error.code, message: error.message }, origin)
      return { refundId, outcome: 'failed' }
    }
    return { refundId, outcome: 'pending', error: error instanceof ProviderUnavailableError ? error.message : String(error) }
  }
}

/** The refund failed, its amount back in the sums it was counted in, refund.failed written; nothing when it is no longer pending. */
async function failRefund(db: Database, refund: PendingRefund, failure: { code: string; message: string }, origin: EventOrigin): Promise<void> {
  await db.transaction(async (tx) => {
    const sql = sqlOf(tx)
    const parties = await lockPendingRefund(sql, refund.id)
    if (!parties) return
    const paymentRefunded = parties.payment.refundedMinor - refund.amountMinor
    const { order } = parties
    const orderRefunded = order.refundedMinor === null ? null : order.refundedMinor - refund.amountMinor
    const view = toRefund({ ...refund, status: 'failed', failureCode: failure.code, failureMessage: failure.message })
    await recordRefundFailed(sql, {
      refundId: refund.id,
      failure,
      payment: { state: refundedState({ ...parties.payment, refundedMinor: paymentRefunded }), refundedMinor: paymentRefunded },
      order:
        orderRefunded === null
          ? null
          : {
              refundedMinor: orderRefunded,
              paymentStatus: paymentStatusOf({ totalMinor: order.totalMinor!, paidMinor: order.paidMinor!, authorizedMinor: order.authorizedMinor!, refundedMinor: orderRefunded }),
            },
      events: eventRows([{ kind: 'refund.failed', resourceId: refund.orderId ?? refund.paymentId, data: view, customerId: order.customerId, ...origin }]),
    })
  })
}
