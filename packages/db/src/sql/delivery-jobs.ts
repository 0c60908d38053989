/**
 * The jobs of webhook delivery attempts (deliver-webhook), added from SQL in the statement or
 * transaction that asks for them: a redelivery (apps/api), a replay (webhook-replay.ts), the
 * worker's records of attempts (delivery-records.ts).
 */
import { sqlOf, type Executor } from '../client.js'
import { TASKS, type DeliveryJob } from '../queue.js'

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
