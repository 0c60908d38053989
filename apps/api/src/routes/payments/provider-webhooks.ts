/**
 * The payment provider's notifications: verified on their raw body by the provider's adapter,
 * handled once each (provider_events, recorded after the work so a failure is retried by the
 * provider), and settled like a checkout completion: a succeeded payment places the checkout's
 * reserved order unless something placed it first, a failed one gives its stock back.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { isUuid, type PaymentProvider } from '@commerce/domain'
import { paymentIdByReference, providerEventSeen, recordProviderEvent, settlementOf, sqlOf, type Database } from '@commerce/db'
import { settlePayment } from '@commerce/payments'

export async function handleProviderWebhook(db: Database, provider: PaymentProvider, rawBody: Buffer, headers: IncomingHttpHeaders, requestId: string) {
  const webhook = await provider.parseWebhook({ rawBody, headers })
  const sql = sqlOf(db)
  const event = { provider: provider.name, eventId: webhook.eventId }
  if (await providerEventSeen(sql, event)) return { received: true, duplicate: true }
  if (webhook.payment) {
    const paymentId =
      webhook.paymentId && isUuid(webhook.paymentId)
        ? webhook.paymentId
        : await paymentIdByReference(sql, { provider: provider.name, reference: webhook.payment.reference })
    // Payments of a checkout settle here; an order's own payments are settled by the request that made them.
    const settlement = paymentId ? await settlementOf(sql, paymentId) : undefined
    if (paymentId && settlement?.status) await settlePayment(db, provider, paymentId, webhook.payment, { origin: { requestId, actor: `provider:${provider.name}` } })
  }
  await recordProviderEvent(sql, event)
  return { received: true, duplicate: false }
}
