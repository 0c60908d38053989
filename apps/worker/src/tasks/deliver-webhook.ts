/**
 * `deliver-webhook {delivery_id, attempt, retry}`: a retry or a redelivery of one delivery, or a
 * first attempt the fan-out put off or handed off. It POSTs, then records the attempt and, after
 * a failure, schedules the next retry in one statement; an attempt put off or handed off
 * (attemptAll) adds this job again instead, and one handed off is recorded when it ends. Graphile's own retries only cover a crash or a
 * database error before that statement; our schedule (1 min, 5 min, 30 min) is data, not
 * Graphile's backoff. The reads and the records of jobs running together are batched into one
 * statement each.
 */
import type { Task } from 'graphile-worker'
import type pg from 'pg'
import { deliveryJobSpec, newId, type DeliveryJob } from '@commerce/db'
import { batched } from '../batch.js'
import { healthCtes, healthParams, DISABLED_COLUMNS } from '../endpoint-health.js'
import {
  SECRETS_COLUMN,
  STEP_NAMES,
  attemptAll,
  lockedSubscriptions,
  reportAttempt,
  reportDisabled,
  reportGone,
  reportStarted,
  stepColumns,
  stepOf,
  stepParameters,
  type DeliverySettings,
  type Outcome,
  type Recorded,
  type Step,
  type Target,
} from '../delivery.js'

interface Loaded extends Target {
  deliveryId: string
  attempts: number
  isActive: boolean
}

const LOAD = `select d.id as "deliveryId", d.attempts, w.id as "webhookId", w.url, ${SECRETS_COLUMN}, w.is_active as "isActive",
    e.id as "eventId", e.kind, e.data, e.created_at as "createdAt", e.resource_id as "resourceId", e.sequence, e.request_id as "requestId"
  from webhook_deliveries d join webhooks w on w.id = d.webhook_id join events e on e.id = d.event_id
  where d.id = any($1::uuid[])`

// The attempts, the deliveries' new states and the jobs (next attempts, or these again), in one
// statement. Deliveries deleted with their subscription since they were loaded are left out and
// answered as `gone`: their subscription is locked first, then the delivery, so a delete either
// came before (nothing here) or waits for this statement. add_jobs runs only when there is a
// job: even with none it would NOTIFY every worker. The lease of an attempt that outlived its
// job is removed ($15), whether the attempt is recorded or dropped.
const RECORD = `with recorded as (
  select * from unnest($1::uuid[], $2::uuid[], $3::int[], $4::uuid[], ${stepParameters(5)}, $15::bool[])
    as r(id, delivery_id, attempt, webhook_id, ${STEP_NAMES}, leased)),
${lockedSubscriptions('select webhook_id from recorded')},
live as materialized (
  select d.id from webhook_deliveries d
  where d.id in (select delivery_id from recorded) and d.webhook_id in (select id from subscriptions)
  for no key update),
kept_rows as (select r.* from recorded r where r.delivery_id in (select id from live)),
logged as (
  insert into webhook_attempts (id, delivery_id, attempt, succeeded, status_code, duration_ms, error, response_body)
  select id, delivery_id, attempt, succeeded, status_code, duration_ms, error, response_body from kept_rows where succeeded is not null),
updated as (
  update webhook_deliveries d set
    attempts = case when r.succeeded is null then d.attempts else r.attempt end,
    last_status_code = case when r.succeeded is null then d.last_status_code else r.status_code end,
    status = r.status, next_attempt_at = r.next_attempt_at, updated_at = now()
  from kept_rows r where d.id = r.delivery_id),
${healthCtes('select webhook_id, succeeded from kept_rows where succeeded is not null', 16)}
select case when exists (select from kept_rows where job_run_at is not null) then (
  select count(*) from graphile_worker.add_jobs(array(
    select ${deliveryJobSpec({ deliveryId: 'r.delivery_id', attempt: 'r.job_attempt', retry: 'r.job_retry', runAt: 'r.job_run_at' })}
    from kept_rows r where r.job_run_at is not null))) end as "jobs",
  array(select delivery_id from recorded where delivery_id not in (select id from live)) as "gone",
  (select count(*) from recorded r, graphile_worker.remove_job('deliver:' || r.delivery_id || ':' || r.attempt) where r.leased) as "released",
  ${DISABLED_COLUMNS}`

/** One delivery's step after its attempt number `attempt`, to record. */
export interface DeliveryStep {
  deliveryId: string
  attempt: number
  webhookId: string
  step: Step
  /** The attempt outlived its job: its lease job is removed. */
  leased?: boolean
}

export interface DeliveryStore {
  load(deliveryId: string): Promise<Loaded | undefined>
  /** Records the step; answers false when the delivery was deleted with its subscription meanwhile. */
  record(step: DeliveryStep): Promise<boolean>
}

/** The batched reads and writes of deliveries, on the worker's pool. */
export function createDeliveryStore(pool: pg.Pool, settings: DeliverySettings): DeliveryStore {
  const load = batched<string, Loaded | undefined>(async (ids) => {
    const { rows } = await pool.query<Loaded>(LOAD, [ids])
    const byId = new Map(rows.map((row) => [row.deliveryId, row]))
    return ids.map((id) => byId.get(id))
  })
  const record = batched<DeliveryStep, boolean>(async (steps) => {
    const webhookIds = steps.map((s) => s.webhookId)
    const { rows } = await pool.query<Recorded>(RECORD, [
      steps.map(() => newId()),
      steps.map((s) => s.deliveryId),
      steps.map((s) => s.attempt),
      webhookIds,
      ...stepColumns(steps.map((s) => s.step)),
      steps.map((s) => s.leased ?? false),
      ...healthParams(webhookIds, settings.disableAfterMs),
    ])
    reportDisabled(settings, rows[0]!.disabled)
    const gone = new Set(rows[0]!.gone)
    return steps.map((s) => !gone.has(s.deliveryId))
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
  return async (payload, helpers) => {
    const job = payload as DeliveryJob
    const target = await store.load(job.delivery_id)
    // Deleted with its subscription: nothing to do.
    if (!target) return reportGone(settings, { deliveryId: job.delivery_id, attempt: job.attempt })
    // This attempt already recorded (a job run again after its statement committed, or the lease
    // of an attempt that outlived its job): nothing to do.
    if (target.attempts >= job.attempt) return
    if (!target.isActive) {
      await helpers.query(`update webhook_deliveries set status = 'failed', next_attempt_at = null, updated_at = now() where id = $1`, [
        job.delivery_id,
      ])
      return
    }
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
