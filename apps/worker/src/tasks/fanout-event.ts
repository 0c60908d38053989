/**
 * `fanout-event {event_ids}` (the events of one transaction) or `{event_ids, webhook_ids}` (a
 * share of a larger fan-out, as pairs): the first attempt of each delivery — one per event and
 * active subscription that wants it — made here, all at once, and recorded with the delivery in
 * one statement; only failures queue a job (their retry). It does not wait for slow endpoints
 * (attemptAll): an attempt still in flight is recorded as a pending delivery with a lease job,
 * and recorded again when it ends; one put off gets a pending delivery and its job. A fan-out
 * wider than FIRST_ATTEMPTS_PER_JOB is split into jobs of that many pairs first, so no job runs
 * much longer than one attempt's time limit (the dead-worker unlock must never see a live job as
 * stale). Run again after a crash, it
 * sends only what was not recorded (at least once).
 */
import type { Task } from 'graphile-worker'
import type pg from 'pg'
import { TASKS, deliveryJobSpec, newId } from '@commerce/db'
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
  type Recorded,
  type Target,
} from '../delivery.js'
import { recordWhenDone, type DeliveryStore } from './deliver-webhook.js'

/** First attempts one fan-out job makes at once. */
export const FIRST_ATTEMPTS_PER_JOB = 100

export interface FanOutPayload {
  event_ids: string[]
  /** With it, the pairs (event_ids[i], webhook_ids[i]) only. */
  webhook_ids?: string[]
}

const PAIR_COLUMNS = `e.id as "eventId", e.kind, e.data, e.created_at as "createdAt", e.resource_id as "resourceId", e.sequence, e.request_id as "requestId", w.id as "webhookId", w.url, ${SECRETS_COLUMN}`
// Pairs already recorded (by an earlier run of this job) are not sent again.
const NOT_RECORDED = `not exists (select from webhook_deliveries d where d.webhook_id = w.id and d.event_id = e.id)`

const PAIRS_OF_EVENTS = `select ${PAIR_COLUMNS}
  from events e join webhooks w on w.is_active and (e.kind = any(w.events) or '*' = any(w.events))
  where e.id = any($1::uuid[]) and ${NOT_RECORDED}
  order by e.id, w.id`

const PAIRS = `select ${PAIR_COLUMNS}
  from unnest($1::uuid[], $2::uuid[]) as p(event_id, webhook_id)
  join events e on e.id = p.event_id join webhooks w on w.id = p.webhook_id and w.is_active
  where ${NOT_RECORDED}
  order by e.id, w.id`

const SPLIT = `select count(*) from graphile_worker.add_jobs(array(
  select row('${TASKS.fanOutEvent}', json_build_object('event_ids', c.event_ids, 'webhook_ids', c.webhook_ids),
    null, null, null, null, null, null)::graphile_worker.job_spec
  from jsonb_to_recordset($1::jsonb) as c(event_ids uuid[], webhook_ids uuid[])))`

// The deliveries with their first attempt's outcome (or none yet), their log rows, and their jobs
// (retries, attempts put off, leases). A pair recorded meanwhile by another run keeps its row (on
// conflict): this send was a duplicate. Pairs whose subscription was deleted since they were read
// are left out and answered as `gone` (its row locked first: a delete waits or came before).
const RECORD = `with attempted as (
  select * from unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], ${stepParameters(5)})
    as a(id, webhook_id, event_id, attempt_id, ${STEP_NAMES})),
${lockedSubscriptions('select webhook_id from attempted')},
made as (
  insert into webhook_deliveries (id, webhook_id, event_id, status, attempts, last_status_code, next_attempt_at)
  select id, webhook_id, event_id, status, case when succeeded is null then 0 else 1 end, status_code, next_attempt_at from attempted
  where webhook_id in (select id from subscriptions)
  on conflict (webhook_id, event_id) do nothing
  returning id),
recorded as (select a.* from attempted a join made using (id)),
logged as (
  insert into webhook_attempts (id, delivery_id, attempt, succeeded, status_code, duration_ms, error, response_body)
  select attempt_id, id, 1, succeeded, status_code, duration_ms, error, response_body from recorded where succeeded is not null),
${healthCtes('select webhook_id, succeeded from recorded where succeeded is not null', 15)}
select case when exists (select from recorded where job_run_at is not null) then (
  select count(*) from graphile_worker.add_jobs(array(
    select ${deliveryJobSpec({ deliveryId: 'r.id', attempt: 'r.job_attempt', retry: 'r.job_retry', runAt: 'r.job_run_at' })}
    from recorded r where r.job_run_at is not null))) end as "jobs",
  array(select id from attempted where webhook_id not in (select id from subscriptions)) as "gone",
  ${DISABLED_COLUMNS}`

export function createFanOutEvent(pool: pg.Pool, store: DeliveryStore, settings: DeliverySettings): Task {
  return async (payload) => {
    const { event_ids: eventIds, webhook_ids: webhookIds } = payload as FanOutPayload
    const { rows: pairs } = webhookIds ? await pool.query<Target>(PAIRS, [eventIds, webhookIds]) : await pool.query<Target>(PAIRS_OF_EVENTS, [eventIds])
    if (pairs.length === 0) return
    if (pairs.length > FIRST_ATTEMPTS_PER_JOB) {
      const chunks = []
      for (let start = 0; start < pairs.length; start += FIRST_ATTEMPTS_PER_JOB) {
        const chunk = pairs.slice(start, start + FIRST_ATTEMPTS_PER_JOB)
        chunks.push({ event_ids: chunk.map((pair) => pair.eventId), webhook_ids: chunk.map((pair) => pair.webhookId) })
      }
      await pool.query(SPLIT, [JSON.stringify(chunks)])
      return
    }
    const started = await attemptAll(pairs, settings)
    const deliveryIds = pairs.map(() => newId())
    const steps = started.map((start) => stepOf(start, 1, 0, settings))
    const { rows } = await pool.query<Recorded>(RECORD, [
      deliveryIds,
      pairs.map((pair) => pair.webhookId),
      pairs.map((pair) => pair.eventId),
      pairs.map(() => newId()),
      ...stepColumns(steps),
      ...healthParams(
        pairs.map((pair) => pair.webhookId),
        settings.disableAfterMs,
      ),
    ])
    reportDisabled(settings, rows[0]!.disabled)
    const gone = new Set(rows[0]!.gone)
    pairs.forEach((target, n) => {
      const deliveryId = deliveryIds[n]!
      const [start, step] = [started[n]!, steps[n]!]
      if (gone.has(deliveryId)) return reportGone(settings, { deliveryId, webhookId: target.webhookId, attempt: 1 })
      if (step.outcome) return reportAttempt(settings, { deliveryId, target, attempt: 1, outcome: step.outcome, next: step })
      reportStarted(settings, start)
      if ('inFlight' in start) recordWhenDone(store, settings, { inFlight: start.inFlight, deliveryId, attempt: 1, retry: 0, target })
    })
  }
}
