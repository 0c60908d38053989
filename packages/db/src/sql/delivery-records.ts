/**
 * The worker's records of webhook attempts, a batch per statement: the deliveries with their
 * first attempts (a fan-out), or the attempts of existing deliveries (retries, redeliveries, and
 * attempts that outlived their job), each with its log row, the delivery's new state, the jobs
 * that follow (the next retry, or this attempt again: put off, or the lease of one in flight) and
 * the subscriptions' health (endpoint-health.ts). add_jobs runs only when there is a job: even
 * with none it would NOTIFY every worker.
 *
 * Deliveries whose subscription was deleted since they were read are left out and answered as
 * `gone`: the subscriptions are locked first, in id order, as deleting one locks it before its
 * deliveries, so a recording statement cannot deadlock with a delete, and sees whether it came
 * first.
 */
import type { DeliveryStatus } from '@commerce/domain'
import { newId } from '../schema/columns.js'
import type { webhookAttempts } from '../schema/index.js'
import type { SqlClient } from '../transaction.js'
import { deliveryJobSpec } from './delivery-jobs.js'
import { dueColumn, healthCtes } from './endpoint-health.js'
import type { JsonOf } from './json-rows.js'

/** What an attempt came to, as its log row keeps it. */
export type AttemptOutcome = JsonOf<typeof webhookAttempts, 'succeeded' | 'statusCode' | 'durationMs' | 'error' | 'responseBody'>

/** What a recording statement writes of one delivery after a job's attempt. */
export interface DeliveryStep {
  /** null: no attempt to log (put off, or still in flight). */
  outcome: AttemptOutcome | null
  status: DeliveryStatus
  /** When the next scheduled attempt runs; null when none is due. */
  nextAttemptAt: Date | null
  /** The job to add: the next attempt's, or this attempt's again (put off, or the lease of one in flight). */
  job: { runAt: Date; attempt: number; retry: number } | null
}

// A step's fields (stepFields) as the columns of a row of json_to_recordset.
const STEP_COLUMNS = `succeeded bool, status_code int, duration_ms int, error text, response_body text, status text,
    next_attempt_at timestamptz, job_run_at timestamptz, job_attempt int, job_retry int`

function stepFields(step: DeliveryStep) {
  const { outcome, job } = step
  return {
    succeeded: outcome?.succeeded ?? null,
    status_code: outcome?.statusCode ?? null,
    duration_ms: outcome?.durationMs ?? null,
    error: outcome?.error ?? null,
    response_body: outcome?.responseBody ?? null,
    status: step.status,
    next_attempt_at: step.nextAttemptAt,
    job_run_at: job?.runAt ?? null,
    job_attempt: job?.attempt ?? null,
    job_retry: job?.retry ?? null,
  }
}

/** The subscriptions of the statement's rows (`source`: a query of their ids), locked first and in id order. */
const lockedSubscriptions = (source: string) => `subscriptions as materialized (select id from webhooks where id in (${source}) order by id for no key update)`

/** A column of the final select: the jobs of the rows of `rows` (a CTE) that have one, added. */
function jobsColumn(rows: string, deliveryId: string): string {
  return `case when exists (select from ${rows} where job_run_at is not null) then (
  select count(*) from graphile_worker.add_jobs(array(
    select ${deliveryJobSpec({ deliveryId: `r.${deliveryId}`, attempt: 'r.job_attempt', retry: 'r.job_retry', runAt: 'r.job_run_at' })}
    from ${rows} r where r.job_run_at is not null))) end as "jobs"`
}

/** What a recording statement answers. */
export interface Recorded {
  /** The deliveries not recorded: their subscription was deleted meanwhile. */
  gone: string[]
  /** The subscriptions now failing for longer than the disable period (disableFailingWebhooks). */
  due: string[]
}

// $1 the deliveries (JSON: each with its subscription, event, attempt log id and step), $2 the
// disable period in seconds (null: never). A pair recorded meanwhile by another run keeps its
// row (on conflict): this send was a duplicate.
const RECORD_FIRST = `with attempted as (
  select * from json_to_recordset($1::json)
    as a(id uuid, webhook_id uuid, event_id uuid, attempt_id uuid, ${STEP_COLUMNS})),
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
${healthCtes('select webhook_id, succeeded from recorded where succeeded is not null')}
select ${jobsColumn('recorded', 'id')},
  array(select id from attempted where webhook_id not in (select id from subscriptions)) as "gone",
  ${dueColumn('$2')}`

/** A new delivery of an event to a subscription, after its first attempt. */
export interface FirstAttempt {
  deliveryId: string
  webhookId: string
  eventId: string
  step: DeliveryStep
}

/** Makes the deliveries with their first attempts (a fan-out's); a pair that has one already keeps it. */
export async function recordFirstAttempts(sql: SqlClient, attempts: readonly FirstAttempt[], disableAfterSeconds: number | null): Promise<Recorded> {
  const rows = attempts.map((a) => ({ id: a.deliveryId, webhook_id: a.webhookId, event_id: a.eventId, attempt_id: newId(), ...stepFields(a.step) }))
  const [row] = await sql.unsafe<Recorded[]>(RECORD_FIRST, [JSON.stringify(rows), disableAfterSeconds], { prepare: true })
  return row!
}

// $1 the attempts (JSON: each with its log id, delivery, number, subscription, step, and whether
// it outlived its job: then its lease job is removed, whether the attempt is recorded or
// dropped), $2 the disable period in seconds (null: never).
const RECORD = `with recorded as (
  select * from json_to_recordset($1::json)
    as r(id uuid, delivery_id uuid, attempt int, webhook_id uuid, ${STEP_COLUMNS}, leased bool)),
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
${healthCtes('select webhook_id, succeeded from kept_rows where succeeded is not null')}
select ${jobsColumn('kept_rows', 'delivery_id')},
  array(select delivery_id from recorded where delivery_id not in (select id from live)) as "gone",
  (select count(*) from recorded r, graphile_worker.remove_job('deliver:' || r.delivery_id || ':' || r.attempt) where r.leased) as "released",
  ${dueColumn('$2')}`

/** An attempt of an existing delivery (its number `attempt` over the delivery's life). */
export interface NextAttempt {
  deliveryId: string
  attempt: number
  webhookId: string
  step: DeliveryStep
  /** The attempt outlived its job: its lease job is removed. */
  leased?: boolean
}

/** Records attempts of existing deliveries. */
export async function recordAttempts(sql: SqlClient, attempts: readonly NextAttempt[], disableAfterSeconds: number | null): Promise<Recorded> {
  const rows = attempts.map((a) => ({
    id: newId(),
    delivery_id: a.deliveryId,
    attempt: a.attempt,
    webhook_id: a.webhookId,
    ...stepFields(a.step),
    leased: a.leased ?? false,
  }))
  const [row] = await sql.unsafe<Recorded[]>(RECORD, [JSON.stringify(rows), disableAfterSeconds], { prepare: true })
  return row!
}
