/**
 * Every task this worker runs, by the identifier jobs are added under (TASKS of @commerce/db).
 */
import { parseCronItems, type ParsedCronItem, type Task, type TaskList } from 'graphile-worker'
import { TASKS } from '@commerce/db'
import type { Tracing } from '@commerce/runtime/tracing'
import type { DeliverySettings } from '../delivery.js'
import type { WorkerMetrics } from '../metrics.js'
import { createNotificationStore, type NotificationSettings } from '../notifications.js'
import { createExportCsv, createImportCsv, type CsvTaskSettings } from './csv.js'
import { createExpireFiles } from './expire-files.js'
import { createDeliverWebhook, createDeliveryStore } from './deliver-webhook.js'
import { createExpireCheckoutReservations, createExpireEvents, createExpireIdempotencyKeys, createExpireListingChanges, createExpireWebhookDeliveries, type RowRetention } from './expire-rows.js'
import { createFanOutEvent } from './fanout-event.js'
import { createPublishProduct } from './publish-product.js'
import { createRefreshBestSellers } from './refresh-best-sellers.js'
import { createSendNotification } from './send-notification.js'

/**
 * The tasks, their statements on `delivery.db` (not on Graphile Worker's pool). Without
 * `notifications` (NOTIFICATIONS_ENABLED=false) no notification is made, and the jobs of those
 * made before wait in the queue; without `csv` (the file storage), exports and imports wait and no file is swept.
 */
export function createTaskList(delivery: DeliverySettings, retention: RowRetention, notifications?: NotificationSettings, csv?: CsvTaskSettings): TaskList {
  const counted = (task: string, run: Task) => traced(delivery.tracing, task, countRuns(delivery.metrics, task, run))
  const store = createDeliveryStore(delivery)
  return {
    [TASKS.fanOutEvent]: counted(TASKS.fanOutEvent, createFanOutEvent(store, delivery, notifications !== undefined)),
    [TASKS.deliverWebhook]: counted(TASKS.deliverWebhook, createDeliverWebhook(store, delivery)),
    ...(notifications && {
      [TASKS.sendNotification]: counted(TASKS.sendNotification, createSendNotification(createNotificationStore(notifications.db), notifications)),
    }),
    [TASKS.expireIdempotencyKeys]: counted(TASKS.expireIdempotencyKeys, createExpireIdempotencyKeys(delivery.db)),
    [TASKS.expireCheckoutReservations]: counted(TASKS.expireCheckoutReservations, createExpireCheckoutReservations(delivery.db, retention.reservationsMs)),
    [TASKS.expireEvents]: counted(TASKS.expireEvents, createExpireEvents(delivery.db, retention.eventsMs)),
    [TASKS.expireWebhookDeliveries]: counted(TASKS.expireWebhookDeliveries, createExpireWebhookDeliveries(delivery.db, retention.deliveriesMs)),
    [TASKS.expireListingChanges]: counted(TASKS.expireListingChanges, createExpireListingChanges(delivery.db)),
    [TASKS.publishProduct]: counted(TASKS.publishProduct, createPublishProduct(delivery.db)),
    [TASKS.refreshBestSellers]: counted(TASKS.refreshBestSellers, createRefreshBestSellers(delivery.db)),
    ...(csv && {
      [TASKS.exportCsv]: counted(TASKS.exportCsv, createExportCsv(csv)),
      [TASKS.importCsv]: counted(TASKS.importCsv, createImportCsv(csv)),
      [TASKS.expireFiles]: counted(TASKS.expireFiles, createExpireFiles(csv.db.sql, csv.storage, csv.retentionMs)),
    }),
  }
}

/** The task, counting each run (completed, or error when it throws) and its duration. */
function countRuns(metrics: WorkerMetrics, task: string, run: Task): Task {
  return async (payload, helpers) => {
    const started = performance.now()
    try {
      await run(payload, helpers)
      metrics.job(task, 'completed', (performance.now() - started) / 1000)
    } catch (error) {
      metrics.job(task, 'error', (performance.now() - started) / 1000)
      throw error
    }
  }
}

/** The task, each run in a span of its own when traces are on. */
function traced(tracing: Tracing | undefined, task: string, run: Task): Task {
  if (!tracing) return run
  return (payload, helpers) =>
    tracing.inSpan(task, 'consumer', { 'job.task': task, 'job.id': helpers.job.id, 'job.attempt': helpers.job.attempts }, async () => run(payload, helpers))
}

/** The worker's schedule: Graphile runs each at most once per slot however many workers run. */
export function cronItems(csv: boolean): ParsedCronItem[] {
  return parseCronItems([
    // Missed runs are not made up: the next one deletes everything expired by then.
    { task: TASKS.expireIdempotencyKeys, match: '7 * * * *', identifier: TASKS.expireIdempotencyKeys },
    { task: TASKS.expireCheckoutReservations, match: '27 * * * *', identifier: TASKS.expireCheckoutReservations },
    { task: TASKS.expireEvents, match: '37 * * * *', identifier: TASKS.expireEvents },
    { task: TASKS.expireWebhookDeliveries, match: '47 * * * *', identifier: TASKS.expireWebhookDeliveries },
    { task: TASKS.expireListingChanges, match: '57 * * * *', identifier: TASKS.expireListingChanges },
    { task: TASKS.refreshBestSellers, match: '*/10 * * * *', identifier: TASKS.refreshBestSellers },
    ...(csv ? [{ task: TASKS.expireFiles, match: '17 * * * *', identifier: TASKS.expireFiles }] : []),
  ])
}
