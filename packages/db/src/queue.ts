/**
 * The job queue (Graphile Worker, in the same database): its schema is installed by `migrate`,
 * and jobs are added from SQL inside the caller's transaction, so a job exists exactly when the
 * change that asked for it was committed.
 */
import { sqlOf, type Executor } from './client.js'

/** Task identifiers, shared by the code that adds jobs and the worker that runs them. */
export const TASKS = {
  /** `{event_id}`: one delivery per active subscription that wants the event. */
  fanOutEvent: 'fanout-event',
  /** `{delivery_id, attempt, retry}`: one attempt of one delivery. */
  deliverWebhook: 'deliver-webhook',
} as const

/** The NOTIFY channel of committed events; the payload is the event id (API instances LISTEN). */
export const EVENTS_CHANNEL = 'commerce_events'

export interface DeliveryJob {
  delivery_id: string
  /** The attempt's number over the delivery's life (1, 2, …): names the job, numbers the log. */
  attempt: number
  /** 0 for a first try or a redelivery, then 1, 2, 3 for the scheduled retries. */
  retry: number
}

const ADD_DELIVERY = `select graphile_worker.add_job($1, json_build_object('delivery_id', $2::uuid, 'attempt', $3::int, 'retry', $4::int),
  run_at => $5::timestamptz, job_key => 'deliver:' || $2 || ':' || $3) is not null as "added"`

/** Adds one delivery attempt's job (at `runAt`, now when omitted) in the caller's transaction. */
export async function addDeliveryJob(tx: Executor, job: DeliveryJob, runAt: Date | null = null): Promise<void> {
  await sqlOf(tx).unsafe(ADD_DELIVERY, [TASKS.deliverWebhook, job.delivery_id, job.attempt, job.retry, runAt?.toISOString() ?? null], {
    prepare: true,
  })
}
