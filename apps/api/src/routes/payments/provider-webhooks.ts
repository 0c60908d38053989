/**
 * The payment provider's notifications: verified on their raw body by the provider's adapter, and
 * handled once each: the event id is claimed in the transaction of its effect, so copies delivered
 * at once wait for the first and then find it handled (or, had it failed, handle it themselves),
 * and a failure leaves it unclaimed for the provider's retry. A checkout's payment is settled like
 * a checkout completion (a success places the reserved order unless something placed it first, a
 * failure gives its stock back); a refund the provider reports beyond what is recorded here (made
 * in its dashboard) is recorded on the order.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { isUuid, type PaymentProvider } from '@commerce/domain'
import { claimProviderEvent, paymentIdByReference, settlementOf, sqlOf, type Database } from '@commerce/db'
import { settlePayment } from '@commerce/payments'
import type { PaymentService } from './service.js'

export async function handleProviderWebhook(
  db: Database,
  provider: PaymentProvider,
  payments: PaymentService,
  rawBody: Buffer,
  headers: IncomingHttpHeaders,
  requestId: string,
) {
  const webhook = await provider.parseWebhook({ rawBody, headers })
  const origin = { requestId, actor: `provider:${provider.name}` }
  return db.transaction(async (tx) => {
    const sql = sqlOf(tx)
    if (!(await claimProviderEvent(sql, { provider: provider.name, eventId: webhook.eventId }))) return { received: true, duplicate: true }
    const truth = webhook.payment
    if (truth) {
      const paymentId =
        webhook.paymentId && isUuid(webhook.paymentId) ? webhook.paymentId : await paymentIdByReference(sql, { provider: provider.name, reference: truth.reference })
      // Payments of a checkout settle here; an order's own payments are settled by the request that made them.
      const settlement = paymentId ? await settlementOf(sql, paymentId) : undefined
      if (paymentId && settlement?.status) await settlePayment(db, provider, paymentId, truth, { origin, within: tx })
      if (paymentId) await payments.recordProviderRefunds(tx, paymentId, truth, origin)
    }
    return { received: true, duplicate: false }
  })
}
