/**
 * The payment provider's notifications (apps/api routes/payments/provider-webhooks.ts): each is
 * handled once, claimed by its event id in the transaction of its effect, and names its payment
 * by our id or by the provider's reference.
 */
import type { SqlClient } from '../transaction.js'

// A copy of the event arriving while the first is handled waits on the row's unique index until
// that transaction ends: then it finds the event claimed (committed), or claims it (rolled back).
const CLAIM = 'insert into provider_events (provider, event_id) values ($1, $2) on conflict do nothing returning 1'
const BY_REFERENCE = 'select id from payments where provider = $1 and provider_reference = $2'

export interface ProviderEvent {
  /** The provider's name (payments.provider). */
  provider: string
  eventId: string
}

/** Claims the notification inside the transaction that handles it; false when it was handled already. */
export async function claimProviderEvent(sql: SqlClient, event: ProviderEvent): Promise<boolean> {
  const claimed = await sql.unsafe(CLAIM, [event.provider, event.eventId], { prepare: true })
  return claimed.length > 0
}

/** Our id of the provider's payment, by its reference. */
export async function paymentIdByReference(sql: SqlClient, payment: { provider: string; reference: string }): Promise<string | undefined> {
  const [row] = await sql.unsafe<{ id: string }[]>(BY_REFERENCE, [payment.provider, payment.reference], { prepare: true })
  return row?.id
}
