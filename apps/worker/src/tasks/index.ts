/**
 * Every task this worker runs, by the identifier jobs are added under (TASKS of @commerce/db).
 */
import { parseCronItems, type ParsedCronItem, type TaskList } from 'graphile-worker'
import type pg from 'pg'
import { TASKS } from '@commerce/db'
import type { DeliverySettings } from '../delivery.js'
import { createDeliverWebhook } from './deliver-webhook.js'
import { expireIdempotencyKeys } from './expire-idempotency-keys.js'
import { createFanOutEvent } from './fanout-event.js'

export function createTaskList(pool: pg.Pool, delivery: DeliverySettings): TaskList {
  return {
    [TASKS.fanOutEvent]: createFanOutEvent(pool, delivery),
    [TASKS.deliverWebhook]: createDeliverWebhook(pool, delivery),
    [TASKS.expireIdempotencyKeys]: expireIdempotencyKeys,
  }
}

/** The worker's schedule: Graphile runs each at most once per slot however many workers run. */
export const cronItems: ParsedCronItem[] = parseCronItems([
  // Missed runs are not made up: the next one deletes everything expired by then.
  { task: TASKS.expireIdempotencyKeys, match: '7 * * * *', identifier: TASKS.expireIdempotencyKeys },
])
