/**
 * `expire-idempotency-keys` (hourly, on the worker's schedule): deletes the stored answers of
 * Idempotency-Keys past their 24 hours, in batches so no statement holds many row locks or runs
 * long beside the API's writes.
 */
import type { Task } from 'graphile-worker'

const BATCH = 5_000

const DELETE_EXPIRED = `with expired as (
  select principal, key from idempotency_keys where expires_at < now() order by expires_at limit ${BATCH})
delete from idempotency_keys k using expired e where k.principal = e.principal and k.key = e.key`

export const expireIdempotencyKeys: Task = async (_payload, helpers) => {
  let deleted = 0
  for (;;) {
    const { rowCount } = await helpers.query(DELETE_EXPIRED)
    deleted += rowCount ?? 0
    if ((rowCount ?? 0) < BATCH) break
  }
  if (deleted > 0) helpers.logger.info(`deleted ${deleted} expired idempotency keys`)
}
