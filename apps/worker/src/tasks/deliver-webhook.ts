/**
 * `deliver-webhook {delivery_id, attempt, retry}`: a retry or a redelivery of one delivery, or a
 * first attempt the fan-out put off or handed off. It POSTs, then records the attempt and, after
 * a failure, schedules the next retry in one statement; an attempt put off or handed off
 * (attemptAll) adds this job again instead, and one handed off is recorded when it ends.
 * Graphile's own retries only cover a crash or a database error before that statement; our schedule (1 min, 5 min, 30 min) is data, not
 * Graphile's backoff. The reads and the records of jobs running together are batched into one
 * statement each.
 */
import type { Task } from 'graphile-worker'
import { endUnsentDelivery, loadDeliveries, recordAttempts, sqlOf, type DeliveryJob, type LoadedDelivery, type NextAttempt, type Target } from '@commerce/db'
import { batched } from '../batch.js'
import type { Outcome } from '../attempt-outcome.js'
import { attemptAll, disableDue, disablePeriodSeconds, reportAttempt, reportGone, reportStarted, stepOf, type DeliverySettings } from '../delivery.js'

export interface DeliveryStore {
  load(deliveryId: string): Promise<LoadedDelivery | undefined>
  /** Records the attempt; answers false when the delivery was deleted with its subscription meanwhile. */
  record(attempt: NextAttempt): Promise<boolean>
}

/** The batched reads and records of deliveries (@commerce/db delivery-targets.ts, delivery-records.ts). */
export function createDeliveryStore(settings: DeliverySettings): DeliveryStore {
  const sql = sqlOf(settings.db)
  const load = batched<string, LoadedDelivery | undefined>(async (ids) => {
    const byId = new Map((await loadDeliveries(sql, ids)).map((row) => [row.deliveryId, row]))
    return ids.map((id) => byId.get(id))
  })
  const record = batched<NextAttempt, boolean>(async (attempts) => {
    const { gone, due } = await recordAttempts(sql, attempts, disablePeriodSeconds(settings))
    await disableDue(settings, due)
    const goneIds = new Set(gone)
    return attempts.map((a) => !goneIds.has(a.deliveryId))
  })
  return { load, record }
}

/**
 * Records an attempt that outlived its job (handed off) once it ends: in the background, after
 * the statement that recorded its lease.
 */
export function recordWhenDone(
  store: DeliveryStore,
  settings: DeliverySettings,
  handed: { inFlight: Promise<Outcome>; deliveryId: string; attempt: number; retry: number; target: Target },
) {
  const { deliveryId, attempt, retry, target } = handed
  settings.background.run(
    handed.inFlight.then(async (outcome) => {
      const step = stepOf({ outcome }, attempt, retry, settings)
      if (await store.record({ deliveryId, attempt, webhookId: target.webhookId, step, leased: true })) {
        reportAttempt(settings, { deliveryId, target, attempt, outcome, next: step })
      } else reportGone(settings, { deliveryId, webhookId: target.webhookId, attempt })
    }),
  )
}

export function createDeliverWebhook(store: DeliveryStore, settings: DeliverySettings): Task {
  return async (payload) => {
    const job = payload as DeliveryJob
    const target = await store.load(job.delivery_id)
    // Deleted with its subscription: nothing to do.
    if (!target) return reportGone(settings, { deliveryId: job.delivery_id, attempt: job.attempt })
    // This attempt already recorded (a job run again after its statement committed, or the lease
    // of an attempt that outlived its job): nothing to do.
    if (target.attempts >= job.attempt) return
    if (!target.isActive) return endUnsentDelivery(sqlOf(settings.db), job.delivery_id)
    const [started] = await attemptAll([target], settings)
    const step = stepOf(started!, job.attempt, job.retry, settings)
    if (!(await store.record({ deliveryId: job.delivery_id, attempt: job.attempt, webhookId: target.webhookId, step }))) {
      return reportGone(settings, { deliveryId: job.delivery_id, webhookId: target.webhookId, attempt: job.attempt })
    }
    if (step.outcome) reportAttempt(settings, { deliveryId: job.delivery_id, target, attempt: job.attempt, outcome: step.outcome, next: step })
    else reportStarted(settings, started!)
    if ('inFlight' in started!) recordWhenDone(store, settings, { inFlight: started.inFlight, deliveryId: job.delivery_id, attempt: job.attempt, retry: job.retry, target })
  }
}
