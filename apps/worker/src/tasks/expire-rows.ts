/**
 * The hourly deletions of rows past their time, on the worker's schedule, each in batches so
 * that no statement holds many row locks beside the API's writes:
 * - `expire-idempotency-keys`: the stored answers of Idempotency-Keys past their 24 hours
 *   (@commerce/db idempotency-keys.ts);
 * - `expire-checkout-reservations`: checkout reservations released longer than
 *   CHECKOUT_RESERVATION_RETENTION ago (@commerce/db released-reservations.ts). Until then a
 *   payment that succeeds late can still become its order; after, it is given back at the provider.
 * - `expire-events`: events older than EVENT_RETENTION, but an order's and those a delivery or a
 *   notification still refers to (@commerce/db event-retention.ts); a WebSocket resume from before
 *   the sweep is refused with `replay_expired`.
 * - `expire-webhook-deliveries`: deliveries, with their attempts, whose last attempt is older
 *   than WEBHOOK_DELIVERY_RETENTION and that wait for none (@commerce/db event-retention.ts).
 * - `expire-listing-changes`: the listing's changes older than an hour (@commerce/db
 *   listing-index.ts); an API instance that looked longer ago reads its whole listing again.
 */
import type { Task } from 'graphile-worker'
import {
  EXPIRED_EVENTS_BATCH,
  EXPIRED_KEYS_BATCH,
  OLD_DELIVERIES_BATCH,
  OLD_LISTING_CHANGES_BATCH,
  RELEASED_RESERVATIONS_BATCH,
  deleteExpiredKeys,
  deleteOldListingChanges,
  deleteOldDeliveries,
  deleteReleasedReservations,
  sqlOf,
  sweepExpiredEvents,
  type Database,
} from '@commerce/db'

/** How long each kind of row is kept once past its use. */
export interface RowRetention {
  /** Released checkout reservations (CHECKOUT_RESERVATION_RETENTION). */
  reservationsMs: number
  /** Events (EVENT_RETENTION). */
  eventsMs: number
  /** Webhook deliveries after their last attempt (WEBHOOK_DELIVERY_RETENTION). */
  deliveriesMs: number
}

/** What one batch did: the rows it deleted, and whether the next batch may find more. */
interface Batch {
  deleted: number
  more: boolean
}

/** A batch of a statement that deletes up to `size` rows: more may be left when it deleted that many. */
const upTo = (size: number) => (deleted: number) => ({ deleted, more: deleted === size })

/** Runs `deleteBatch` until a batch leaves no more; logs how many `rows` went. */
function deleteInBatches(deleteBatch: () => Promise<Batch>, rows: string): Task {
  return async (_payload, helpers) => {
    let deleted = 0
    for (;;) {
      const batch = await deleteBatch()
      deleted += batch.deleted
      if (!batch.more) break
    }
    if (deleted > 0) helpers.logger.info(`deleted ${deleted} ${rows}`)
  }
}

export function createExpireIdempotencyKeys(db: Database): Task {
  const sql = sqlOf(db)
  return deleteInBatches(() => deleteExpiredKeys(sql).then(upTo(EXPIRED_KEYS_BATCH)), 'expired idempotency keys')
}

export function createExpireCheckoutReservations(db: Database, retentionMs: number): Task {
  const sql = sqlOf(db)
  return deleteInBatches(() => deleteReleasedReservations(sql, retentionMs).then(upTo(RELEASED_RESERVATIONS_BATCH)), 'released checkout reservations')
}

export function createExpireEvents(db: Database, retentionMs: number): Task {
  const sql = sqlOf(db)
  // A batch examines up to its size (kept events included): the sweep is done when it examined fewer.
  return deleteInBatches(async () => {
    const { examined, deleted } = await sweepExpiredEvents(sql, retentionMs)
    return { deleted, more: examined === EXPIRED_EVENTS_BATCH }
  }, 'expired events')
}

export function createExpireWebhookDeliveries(db: Database, retentionMs: number): Task {
  const sql = sqlOf(db)
  return deleteInBatches(() => deleteOldDeliveries(sql, retentionMs).then(upTo(OLD_DELIVERIES_BATCH)), 'old webhook deliveries')
}

export function createExpireListingChanges(db: Database): Task {
  const sql = sqlOf(db)
  return deleteInBatches(() => deleteOldListingChanges(sql).then(upTo(OLD_LISTING_CHANGES_BATCH)), 'old listing changes')
}
