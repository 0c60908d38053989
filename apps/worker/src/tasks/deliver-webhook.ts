/**
 * `deliver-webhook {delivery_id, attempt, retry}`: a retry or a redelivery of one delivery (the
 * fan-out makes first attempts). It POSTs, then records the attempt and, after a failure,
 * schedules the next retry in one statement. Graphile's own retries only cover a crash or a
 * database error before that statement; our schedule (1 min, 5 min, 30 min) is data, not
 * Graphile's backoff. The reads and the records of jobs running together are batched into one
 * statement each.
 */
import type { Task } from 'graphile-worker'
import type pg from 'pg'
import { deliveryJobSpec, newId, type DeliveryJob } from '@commerce/db'
import { batched } from '../batch.js'
import { healthCtes, healthParams, DISABLED_COLUMNS } from '../endpoint-health.js'
import { SECRETS_COLUMN, nextStep, outcomeColumns, post, reportAttempt, reportDisabled, type DeliverySettings, type Recorded, type NextStep, type Outcome, type Target } from '../delivery.js'

interface Loaded extends Target {
  deliveryId: string
  attempts: number
  isActive: boolean
}

const LOAD = `select d.id as "deliveryId", d.attempts, w.id as "webhookId", w.url, ${SECRETS_COLUMN}, w.is_active as "isActive",
    e.id as "eventId", e.kind, e.data, e.created_at as "createdAt", e.resource_id as "resourceId", e.sequence, e.request_id as "requestId"
  from webhook_deliveries d join webhooks w on w.id = d.webhook_id join events e on e.id = d.event_id
  where d.id = any($1::uuid[])`

// The attempts, the deliveries' new states and the next attempts' jobs, in one statement.
// add_jobs runs only when there is a retry: even with no job it would NOTIFY every worker.
const RECORD = `with recorded as (
  select * from unnest($1::uuid[], $2::uuid[], $3::int[], $4::bool[], $5::int[], $6::int[], $7::text[], $8::text[], $9::text[],
    $10::timestamptz[], $11::int[], $12::uuid[])
    as r(id, delivery_id, attempt, succeeded, status_code, duration_ms, error, response_body, status, next_attempt_at, next_retry, webhook_id)),
logged as (
  insert into webhook_attempts (id, delivery_id, attempt, succeeded, status_code, duration_ms, error, response_body)
  select id, delivery_id, attempt, succeeded, status_code, duration_ms, error, response_body from recorded),
updated as (
  update webhook_deliveries d set attempts = r.attempt, status = r.status, last_status_code = r.status_code,
    next_attempt_at = r.next_attempt_at, updated_at = now()
  from recorded r where d.id = r.delivery_id),
${healthCtes('select r.webhook_id, r.succeeded from recorded r', 13)}
select case when exists (select from recorded where next_attempt_at is not null) then (
  select count(*) from graphile_worker.add_jobs(array(
    select ${deliveryJobSpec({ deliveryId: 'r.delivery_id', attempt: 'r.attempt + 1', retry: 'r.next_retry', runAt: 'r.next_attempt_at' })}
    from recorded r where r.next_attempt_at is not null))) end as "retries",
  ${DISABLED_COLUMNS}`

interface Attempt extends NextStep {
  job: DeliveryJob
  webhookId: string
  outcome: Outcome
}

/** The batched reads and writes of deliveries, on the worker's pool. */
function deliveryStore(pool: pg.Pool, settings: DeliverySettings) {
  const load = batched<string, Loaded | undefined>(async (ids) => {
    const { rows } = await pool.query<Loaded>(LOAD, [ids])
    const byId = new Map(rows.map((row) => [row.deliveryId, row]))
    return ids.map((id) => byId.get(id))
  })
  const record = batched<Attempt, void>(async (attempts) => {
    const webhookIds = attempts.map((a) => a.webhookId)
    const { rows } = await pool.query<Recorded>(RECORD, [
      attempts.map(() => newId()),
      attempts.map((a) => a.job.delivery_id),
      attempts.map((a) => a.job.attempt),
      ...outcomeColumns(attempts),
      attempts.map((a) => a.job.retry + 1),
      webhookIds,
      ...healthParams(webhookIds, settings.disableAfterMs),
    ])
    reportDisabled(settings, rows[0]!.disabled)
    return attempts.map(() => undefined)
  })
  return { load, record }
}

export function createDeliverWebhook(pool: pg.Pool, settings: DeliverySettings): Task {
  const store = deliveryStore(pool, settings)
  return async (payload, helpers) => {
    const job = payload as DeliveryJob
    const target = await store.load(job.delivery_id)
    // Deleted with its subscription, or this attempt already recorded (a job run again after
    // its statement committed): nothing to do.
    if (!target || target.attempts >= job.attempt) return
    if (!target.isActive) {
      await helpers.query(`update webhook_deliveries set status = 'failed', next_attempt_at = null, updated_at = now() where id = $1`, [
        job.delivery_id,
      ])
      return
    }
    const outcome = await post(target, settings)
    const next = nextStep(outcome, job.retry, settings)
    await store.record({ job, webhookId: target.webhookId, outcome, ...next })
    reportAttempt(settings, { deliveryId: job.delivery_id, target, attempt: job.attempt, outcome, next })
  }
}
