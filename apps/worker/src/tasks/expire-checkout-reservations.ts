/**
 * `expire-checkout-reservations` (hourly, on the worker's schedule): deletes the checkout
 * reservations released longer than CHECKOUT_RESERVATION_RETENTION ago, in batches (@commerce/db
 * released-reservations.ts). Until then a payment that succeeds late can still become its order;
 * after, it is given back at the provider.
 */
import type { Task } from 'graphile-worker'
import { RELEASED_RESERVATIONS_BATCH, deleteReleasedReservations, sqlOf, type Database } from '@commerce/db'

export function createExpireCheckoutReservations(db: Database, retentionMs: number): Task {
  const sql = sqlOf(db)
  return async (_payload, helpers) => {
    let deleted = 0
    for (;;) {
      const batch = await deleteReleasedReservations(sql, retentionMs)
      deleted += batch
      if (batch < RELEASED_RESERVATIONS_BATCH) break
    }
    if (deleted > 0) helpers.logger.info(`deleted ${deleted} released checkout reservations`)
  }
}
