/**
 * The payment provider's notifications (apps/api routes/payments/provider-webhooks.ts): each is
 * handled once (provider_events, recorded after its work, so a failure is retried by the
 * provider), and names its payment by our id or by the provider's reference.
 */
import type { SqlClient } from '../transaction.js'

const SEEN = 'select 1 from provider_events where provider = $1 and event_id = $2'
const RECORD = 'insert into provider_events (provider, event_id) values ($1, $2) on conflict do nothing'
const BY_REFERENCE = 'select id from payments where provider = $1 and provider_reference = $2'

export interface ProviderEvent {
  /** The provider's name (payments.provider). */
  provider: string
  eventId: string
}

/** Whether this notification was handled already. */
export async function providerEventSeen(sql: SqlClient, event: ProviderEvent): Promise<boolean> {
  const seen = await sql.unsafe(SEEN, [event.provider, event.eventId], { prepare: true })
  return seen.length > 0
}

/** Records the notification as handled. */
export async function recordProviderEvent(sql: SqlClient, event: ProviderEvent): Promise<void> {
  await sql.unsafe(RECORD, [event.provider, event.eventId], { prepare: true })
}

/** Our id of the provider's payment, by its reference. */
export async function paymentIdByReference(sql: SqlClient, payment: { provider: string; reference: string }): Promise<string | undefined> {
  const [row] = await sql.unsafe<{ id: string }[]>(BY_REFERENCE, [payment.provider, payment.reference], { prepare: true })
  return row?.id
}
