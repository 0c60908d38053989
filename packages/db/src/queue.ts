/**
 * The job queue (Graphile Worker, in the same database): its schema is installed by `migrate`,
 * and jobs are added from SQL inside the caller's transaction, so a job exists exactly when the
 * change that asked for it was committed.
 */
import { sqlOf, type Executor } from './client.js'

/** Task identifiers, shared by the code that adds jobs and the worker that runs them. */
export const TASKS = {
  /** `{event_ids}`: the first attempts of the deliveries of these events (apps/worker). */
  fanOutEvent: 'fanout-event',
  /** `{delivery_id, attempt, retry}`: a retry or a redelivery of one delivery. */
  deliverWebhook: 'deliver-webhook',
  /** Hourly: deletes the stored answers of expired Idempotency-Keys. */
  expireIdempotencyKeys: 'expire-idempotency-keys',
} as const

export interface DeliveryJob {
  delivery_id: string
  /** The attempt's number over the delivery's life (1, 2, …): names the job, numbers the log. */
  attempt: number
  /** 0 for a first try or a redelivery, then 1, 2, 3 for the scheduled retries. */
  retry: number
}

/**
 * The SQL of one delivery job's spec (a graphile_worker.job_spec: identifier, payload,
 * queue_name, run_at, max_attempts, job_key, priority, flags), from SQL expressions of its
 * values. Jobs are keyed `deliver:<delivery id>:<attempt>`, so an attempt number of a delivery
 * is one job however often it is asked for (a redelivery asked twice, or while a retry waits).
 * Priority 1, after fan-outs (0): retries that came due together, or a bulk replay, do not hold
 * up the first attempts of new events.
 */
export function deliveryJobSpec(values: { deliveryId: string; attempt: string; retry: string; runAt: string }): string {
  const { deliveryId, attempt, retry, runAt } = values
  return `row('${TASKS.deliverWebhook}', json_build_object('delivery_id', ${deliveryId}, 'attempt', ${attempt}, 'retry', ${retry}),
    null, ${runAt}, null, 'deliver:' || ${deliveryId} || ':' || ${attempt}, 1, null)::graphile_worker.job_spec`
}

const ADD_DELIVERY = `select count(*) as "added" from graphile_worker.add_jobs(array[
  ${deliveryJobSpec({ deliveryId: '$1::uuid', attempt: '$2::int', retry: '$3::int', runAt: '$4::timestamptz' })}])`

/** Adds one delivery attempt's job (at `runAt`, now when omitted) in the caller's transaction. */
export async function addDeliveryJob(tx: Executor, job: DeliveryJob, runAt: Date | null = null): Promise<void> {
  await sqlOf(tx).unsafe(ADD_DELIVERY, [job.delivery_id, job.attempt, job.retry, runAt?.toISOString() ?? null], { prepare: true })
}
