/**
 * The hourly deletions of rows past their time, on the worker's schedule, each in batches so
 * that no statement holds many row locks beside the API's writes:
 * - `expire-idempotency-keys`: the stored answers of Idempotency-Keys past their 24 hours
 *   (@commerce/db idempotency-keys.ts);
 * - `expire-checkout-reservations`: checkout reservations released longer than
 *   CHECKOUT_RESERVATION_RETENTION ago (@commerce/db released-reservations.ts). Until then a
 *   payment that succeeds late can still become its order; after, it is given back at the provider.
 */
import type { Task } from 'graphile-worker'
import {
  EXPIRED_KEYS_BATCH,
  RELEASED_RESERVATIONS_BATCH,
  deleteExpiredKeys,
  deleteReleasedReservations,
  sqlOf,
  type Database,
} from '@commerce/db'

/** Runs `deleteBatch` until a batch deletes fewer than `batch` rows; logs how many `rows` went. */
function deleteInBatches(deleteBatch: () => Promise<number>, batch: number, rows: string): Task {
  return async (_payload, helpers) => {
    let deleted = 0
    for (;;) {
      const count = await deleteBatch()
      deleted += count
      if (count < batch) break
    }
    if (deleted > 0) helpers.logger.info(`deleted ${deleted} ${rows}`)
  }
}

export function createExpireIdempotencyKeys(db: Database): Task {
  const sql = sqlOf(db)
  return deleteInBatches(() => deleteExpiredKeys(sql), EXPIRED_KEYS_BATCH, 'expired idempotency keys')
}

export function createExpireCheckoutReservations(db: Database, retentionMs: number): Task {
  const sql = sqlOf(db)
  return deleteInBatches(() => deleteReleasedReservations(sql, retentionMs), RELEASED_RESERVATIONS_BATCH, 'released checkout reservations')
}
