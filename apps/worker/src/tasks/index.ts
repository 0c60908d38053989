/**
 * Every task this worker runs, by the identifier jobs are added under (TASKS of @commerce/db).
 */
import type { TaskList } from 'graphile-worker'
import type pg from 'pg'
import { TASKS } from '@commerce/db'
import type { DeliverySettings } from '../delivery.js'
import { createDeliverWebhook } from './deliver-webhook.js'
import { createFanOutEvent } from './fanout-event.js'

export function createTaskList(pool: pg.Pool, delivery: DeliverySettings): TaskList {
  return {
    [TASKS.fanOutEvent]: createFanOutEvent(pool, delivery),
    [TASKS.deliverWebhook]: createDeliverWebhook(pool, delivery),
  }
}
