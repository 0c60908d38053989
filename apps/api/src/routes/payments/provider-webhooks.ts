/**
 * The payment provider's notifications: verified on their raw body by the provider's adapter,
 * handled once each (provider_events, recorded after the work so a failure is retried by the
 * provider), and settled like a checkout completion: a succeeded payment places the checkout's
 * reserved order unless something placed it first, a failed one gives its stock back.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { isUuid, type PaymentProvider } from '@commerce/domain'
import { settlementOf, sqlOf, type Database } from '@commerce/db'
import { settlePayment } from '@commerce/payments'

const SEEN = 'select 1 from provider_events where provider = $1 and event_id = $2'
const RECORD = 'insert into provider_events (provider, event_id) values ($1, $2) on conflict do nothing'
const BY_REFERENCE = 'select id from payments where provider = $1 and provider_reference = $2'

export async function handleProviderWebhook(db: Database, provider: PaymentProvider, rawBody: Buffer, headers: IncomingHttpHeaders, requestId: string) {
  const webhook = await provider.parseWebhook({ rawBody, headers })
  const sql = sqlOf(db)
  const seen = await sql.unsafe(SEEN, [provider.name, webhook.eventId], { prepare: true })
  if (seen.length > 0) return { received: true, duplicate: true }
  if (webhook.payment) {
    const [byReference] = webhook.paymentId && isUuid(webhook.paymentId) ? [] : await sql.unsafe<{ id: string }[]>(BY_REFERENCE, [provider.name, webhook.payment.reference], { prepare: true })
    const paymentId = webhook.paymentId && isUuid(webhook.paymentId) ? webhook.paymentId : byReference?.id
    // Payments of a checkout settle here; an order's own payments are settled by the request that made them.
    const settlement = paymentId ? await settlementOf(sql, paymentId) : undefined
    if (paymentId && settlement?.status) await settlePayment(db, provider, paymentId, webhook.payment, { requestId })
  }
  await sql.unsafe(RECORD, [provider.name, webhook.eventId], { prepare: true })
  return { received: true, duplicate: false }
}
