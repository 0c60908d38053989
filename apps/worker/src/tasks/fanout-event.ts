/**
 * `fanout-event {event_ids}` (the events of one transaction) or `{event_ids, webhook_ids}` (a
 * share of a larger fan-out, as pairs): the first attempt of each delivery — one per event and
 * active subscription that wants it — made here, all at once, and recorded with the delivery in
 * one statement; only failures queue a job (their retry). A fan-out wider than FIRST_ATTEMPTS_PER_JOB
 * is split into jobs of that many pairs first, so no job runs much longer than one attempt's time
 * limit (the dead-worker unlock must never see a live job as stale). Run again after a crash, it
 * sends only what was not recorded (at least once).
 */
import type { Task } from 'graphile-worker'
import type pg from 'pg'
import { TASKS, deliveryJobSpec, newId } from '@commerce/db'
import { healthCtes, healthParams, DISABLED_COLUMNS } from '../endpoint-health.js'
import { SECRETS_COLUMN, nextStep, outcomeColumns, post, reportAttempt, reportDisabled, type Recorded, type DeliverySettings, type NextStep, type Outcome, type Target } from '../delivery.js'

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

// The deliveries with their first attempt's outcome, their log rows, and the retries' jobs. A
// pair recorded meanwhile by another run keeps its row (on conflict): this send was a duplicate.
const RECORD = `with attempted as (
  select * from unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::bool[], $6::int[], $7::int[], $8::text[], $9::text[],
    $10::text[], $11::timestamptz[])
    as a(id, webhook_id, event_id, attempt_id, succeeded, status_code, duration_ms, error, response_body, status, next_attempt_at)),
made as (
  insert into webhook_deliveries (id, webhook_id, event_id, status, attempts, last_status_code, next_attempt_at)
  select id, webhook_id, event_id, status, 1, status_code, next_attempt_at from attempted
  on conflict (webhook_id, event_id) do nothing
  returning id),
logged as (
  insert into webhook_attempts (id, delivery_id, attempt, succeeded, status_code, duration_ms, error, response_body)
  select a.attempt_id, a.id, 1, a.succeeded, a.status_code, a.duration_ms, a.error, a.response_body from attempted a join made using (id)),
${healthCtes('select webhook_id, succeeded from attempted', 12)}
select case when exists (select from attempted a join made using (id) where a.next_attempt_at is not null) then (
  select count(*) from graphile_worker.add_jobs(array(
    select ${deliveryJobSpec({ deliveryId: 'a.id', attempt: '2', retry: '1', runAt: 'a.next_attempt_at' })}
    from attempted a join made using (id) where a.next_attempt_at is not null))) end as "retries",
  ${DISABLED_COLUMNS}`

interface FirstAttempt extends NextStep {
  pair: Target
  deliveryId: string
  outcome: Outcome
}

export function createFanOutEvent(pool: pg.Pool, settings: DeliverySettings): Task {
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
    const attempts: FirstAttempt[] = await Promise.all(
      pairs.map(async (pair) => {
        const outcome = await post(pair, settings)
        return { pair, deliveryId: newId(), outcome, ...nextStep(outcome, 0, settings) }
      }),
    )
    const { rows } = await pool.query<Recorded>(RECORD, [
      attempts.map((a) => a.deliveryId),
      attempts.map((a) => a.pair.webhookId),
      attempts.map((a) => a.pair.eventId),
      attempts.map(() => newId()),
      ...outcomeColumns(attempts),
      ...healthParams(
        attempts.map((a) => a.pair.webhookId),
        settings.disableAfterMs,
      ),
    ])
    reportDisabled(settings, rows[0]!.disabled)
    for (const attempt of attempts) {
      reportAttempt(settings, { deliveryId: attempt.deliveryId, target: attempt.pair, attempt: 1, outcome: attempt.outcome, next: attempt })
    }
  }
}
