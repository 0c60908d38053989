/**
 * `deliver-webhook {delivery_id, attempt, retry}`: one attempt of one delivery. It POSTs the
 * signed envelope, then records the attempt and, after a failure, schedules the next retry in
 * one statement. Graphile's own retries only cover a crash or a database error before that
 * statement; our schedule (1 min, 5 min, 30 min) is data, not Graphile's backoff. The reads and
 * the records of jobs running together are batched into one statement each.
 */
import type { Task } from 'graphile-worker'
import type pg from 'pg'
import { deliveryJobSpec, newId, type DeliveryJob } from '@commerce/db'
import { sign, signStandardWebhook } from '@commerce/domain'
import { request, type Dispatcher } from 'undici'
import { batched } from '../batch.js'
import type { Logger } from '../logger.js'
import { RefusedTarget, refusedLiteral } from '../ssrf.js'

/** Kept of a response body in the attempt log. */
const RESPONSE_LOG_BYTES = 1024

export interface DeliverySettings {
  timeoutMs: number
  /** The waits before the retries, in milliseconds; its length is the number of retries. */
  retrySchedule: readonly number[]
  /** Guarded by the SSRF lookup unless private targets are allowed (createDeliveryAgent). */
  dispatcher: Dispatcher
  allowPrivateTargets: boolean
  logger: Logger
}

interface Target {
  deliveryId: string
  attempts: number
  url: string
  secret: string
  isActive: boolean
  eventId: string
  kind: string
  data: unknown
  createdAt: Date
}

const LOAD = `select d.id as "deliveryId", d.attempts, w.url, w.secret, w.is_active as "isActive",
    e.id as "eventId", e.kind, e.data, e.created_at as "createdAt"
  from webhook_deliveries d join webhooks w on w.id = d.webhook_id join events e on e.id = d.event_id
  where d.id = any($1::uuid[])`

// The attempts, the deliveries' new states and the next attempts' jobs, in one statement.
// add_jobs runs only when there is a retry: even with no job it would NOTIFY every worker.
const RECORD = `with recorded as (
  select * from unnest($1::uuid[], $2::uuid[], $3::int[], $4::bool[], $5::int[], $6::int[], $7::text[], $8::text[], $9::text[],
    $10::timestamptz[], $11::int[])
    as r(id, delivery_id, attempt, succeeded, status_code, duration_ms, error, response_body, status, next_attempt_at, next_retry)),
logged as (
  insert into webhook_attempts (id, delivery_id, attempt, succeeded, status_code, duration_ms, error, response_body)
  select id, delivery_id, attempt, succeeded, status_code, duration_ms, error, response_body from recorded),
updated as (
  update webhook_deliveries d set attempts = r.attempt, status = r.status, last_status_code = r.status_code,
    next_attempt_at = r.next_attempt_at, updated_at = now()
  from recorded r where d.id = r.delivery_id)
select case when exists (select from recorded where next_attempt_at is not null) then (
  select count(*) from graphile_worker.add_jobs(array(
    select ${deliveryJobSpec({ deliveryId: 'r.delivery_id', attempt: 'r.attempt + 1', retry: 'r.next_retry', runAt: 'r.next_attempt_at', keyed: true })}
    from recorded r where r.next_attempt_at is not null))) end`

interface Attempt {
  job: DeliveryJob
  outcome: Outcome
  status: 'pending' | 'succeeded' | 'failed'
  nextAttemptAt: Date | null
}

interface Outcome {
  succeeded: boolean
  statusCode: number | null
  durationMs: number
  error: string | null
  responseBody: string | null
}

/** The start of a response body as text (PostgreSQL text cannot hold NUL). */
async function readStart(body: Dispatcher.ResponseData['body']): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    chunks.push(chunk as Buffer)
    size += (chunk as Buffer).length
    if (size >= RESPONSE_LOG_BYTES) break
  }
  // Leaving the loop early destroys the stream: a large answer is not read to its end.
  return Buffer.concat(chunks).subarray(0, RESPONSE_LOG_BYTES).toString('utf8').replaceAll('\0', '')
}

function describeError(error: unknown, timeoutMs: number): string {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof RefusedTarget) return cause.message
    if (cause.name === 'TimeoutError' || cause.name === 'AbortError') return `timed out after ${timeoutMs} ms`
  }
  if (!(error instanceof Error)) return String(error)
  const code = (error as { code?: string }).code ?? (error.cause as { code?: string } | undefined)?.code
  const message = error.message || (error.cause instanceof Error ? error.cause.message : '')
  return code ? `${code}: ${message}` : message
}

async function post(target: Target, body: string, settings: DeliverySettings): Promise<Outcome> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  const url = new URL(target.url)
  const timestamp = Math.floor(Date.now() / 1000)
  // IP literals are not looked up, so the lookup's guard does not see them.
  const refused = settings.allowPrivateTargets ? undefined : refusedLiteral(url)
  if (refused) return { succeeded: false, statusCode: null, durationMs: elapsed(), error: refused.message, responseBody: null }
  try {
    const response = await request(url, {
      method: 'POST',
      body,
      dispatcher: settings.dispatcher,
      signal: AbortSignal.timeout(settings.timeoutMs),
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'commerce-webhooks/1',
        'x-webhook-id': target.eventId,
        'x-webhook-event': target.kind,
        'x-webhook-signature': sign(body, target.secret),
        'webhook-id': target.eventId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signStandardWebhook(target.eventId, timestamp, body, target.secret),
      },
    })
    const responseBody = await readStart(response.body)
    const succeeded = response.statusCode >= 200 && response.statusCode < 300
    return {
      succeeded,
      statusCode: response.statusCode,
      durationMs: elapsed(),
      error: succeeded ? null : `HTTP ${response.statusCode}`,
      responseBody,
    }
  } catch (error) {
    return { succeeded: false, statusCode: null, durationMs: elapsed(), error: describeError(error, settings.timeoutMs), responseBody: null }
  }
}

/** The batched reads and writes of deliveries, on the worker's pool. */
function deliveryStore(pool: pg.Pool) {
  const load = batched<string, Target | undefined>(async (ids) => {
    const { rows } = await pool.query<Target>(LOAD, [ids])
    const byId = new Map(rows.map((row) => [row.deliveryId, row]))
    return ids.map((id) => byId.get(id))
  })
  const record = batched<Attempt, void>(async (attempts) => {
    const column = <T>(of: (attempt: Attempt) => T) => attempts.map(of)
    await pool.query(RECORD, [
      column(() => newId()),
      column((a) => a.job.delivery_id),
      column((a) => a.job.attempt),
      column((a) => a.outcome.succeeded),
      column((a) => a.outcome.statusCode),
      column((a) => a.outcome.durationMs),
      column((a) => a.outcome.error),
      column((a) => a.outcome.responseBody),
      column((a) => a.status),
      column((a) => a.nextAttemptAt),
      column((a) => a.job.retry + 1),
    ])
    return attempts.map(() => undefined)
  })
  return { load, record }
}

export function createDeliverWebhook(pool: pg.Pool, settings: DeliverySettings): Task {
  const store = deliveryStore(pool)
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
    const body = JSON.stringify({ id: target.eventId, event: target.kind, timestamp: target.createdAt.toISOString(), data: target.data })
    const outcome = await post(target, body, settings)
    // 410 Gone: the receiver asks us to stop.
    const retryWait = outcome.succeeded || outcome.statusCode === 410 ? undefined : settings.retrySchedule[job.retry]
    const nextAttemptAt = retryWait === undefined ? null : new Date(Date.now() + retryWait)
    const status = outcome.succeeded ? 'succeeded' : nextAttemptAt ? 'pending' : 'failed'
    await store.record({ job, outcome, status, nextAttemptAt })
    const fields = {
      deliveryId: job.delivery_id,
      eventId: target.eventId,
      event: target.kind,
      attempt: job.attempt,
      statusCode: outcome.statusCode,
      durationMs: outcome.durationMs,
    }
    if (outcome.succeeded) settings.logger.info('webhook delivered', fields)
    else settings.logger.warn('webhook attempt failed', { ...fields, error: outcome.error, status, nextAttemptAt })
  }
}
