/**
 * `expire-idempotency-keys` (hourly, on the worker's schedule): deletes the stored answers of
 * Idempotency-Keys past their 24 hours, in batches (@commerce/db idempotency-keys.ts).
 */
import type { Task } from 'graphile-worker'
import { EXPIRED_KEYS_BATCH, deleteExpiredKeys, sqlOf, type Database } from '@commerce/db'

export function createExpireIdempotencyKeys(db: Database): Task {
  const sql = sqlOf(db)
  return async (_payload, helpers) => {
    let deleted = 0
    for (;;) {
      const batch = await deleteExpiredKeys(sql)
      deleted += batch
      if (batch < EXPIRED_KEYS_BATCH) break
    }
    if (deleted > 0) helpers.logger.info(`deleted ${deleted} expired idempotency keys`)
  }
}
