/**
 * Released checkout reservations past their retention (CHECKOUT_RESERVATION_RETENTION), deleted
 * by the worker. A released reservation is kept so that a payment which succeeds late can still
 * become its order (settle.ts of @commerce/payments); once it is deleted, such a payment is given
 * back at the provider, as when its stock was sold meanwhile (settlementOf still reports it
 * `released`). Its promotion uses stay: they are the promotion's history of uses.
 */
import type { SqlClient } from '../transaction.js'

/** Reservations deleted per statement: no statement holds many row locks beside the checkouts. */
export const RELEASED_RESERVATIONS_BATCH = 1_000

// $1 the retention in seconds. Oldest first (checkout_reservations_released_idx). The condition
// is repeated on the deleted row: one a late payment holds again meanwhile (REACQUIRE, which
// locks it) is re-checked after that lock, and kept.
const RELEASED = `status = 'released' and updated_at < now() - make_interval(secs => $1::float8)`
const DELETE_RELEASED = `delete from checkout_reservations where ${RELEASED} and payment_id in (
  select payment_id from checkout_reservations where ${RELEASED} order by updated_at limit ${RELEASED_RESERVATIONS_BATCH})`

/** Deletes up to RELEASED_RESERVATIONS_BATCH reservations released longer than `retentionMs` ago; answers how many. */
export async function deleteReleasedReservations(sql: SqlClient, retentionMs: number): Promise<number> {
  const result = await sql.unsafe(DELETE_RELEASED, [retentionMs / 1000], { prepare: true })
  return result.count
}
