/**
 * `deliver-webhook {delivery_id, attempt, retry}`: one attempt of one delivery. It POSTs the
 * signed envelope, then records the attempt and, after a failure, schedules the next retry in
 * one statement. Graphile's own retries only cover a crash or a database error before that
 * statement; our schedule (1 min, 5 min, 30 min) is data, not Graphile's backoff.
 */
import type { Task } from 'graphile-worker'
import { deliveryJobSpec, newId, type DeliveryJob } from '@commerce/db'
import { sign, signStandardWebhook } from '@commerce/domain'
import { request, type Dispatcher } from 'undici'
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
  status: 'pending' | 'succeeded' | 'failed'
  attempts: number
  url: string
  secret: string
  isActive: boolean
  eventId: string
  kind: string
  data: unknown
  createdAt: Date
}

const LOAD = `select d.status, d.attempts, w.url, w.secret, w.is_active as "isActive",
    e.id as "eventId", e.kind, e.data, e.created_at as "createdAt"
  from webhook_deliveries d join webhooks w on w.id = d.webhook_id join events e on e.id = d.event_id
  where d.id = $1`

// The attempt, the delivery's new state and the next attempt's job, in one statement. add_jobs
// runs only for a retry: even with no job it would NOTIFY every worker.
const RECORD = `with logged as (
  insert into webhook_attempts (id, delivery_id, attempt, succeeded, status_code, duration_ms, error, response_body)
  values ($10, $1, $2, $3, $4, $5, $6, $7)),
updated as (
  update webhook_deliveries set attempts = $2, status = $8, last_status_code = $4, next_attempt_at = $9, updated_at = now()
  where id = $1)
select case when $9::timestamptz is not null then (select count(*) from graphile_worker.add_jobs(array[
  ${deliveryJobSpec({ deliveryId: '$1::uuid', attempt: '$2::int + 1', retry: '$11::int', runAt: '$9::timestamptz' })}])) end`

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

export function createDeliverWebhook(settings: DeliverySettings): Task {
  return async (payload, helpers) => {
    const job = payload as DeliveryJob
    const { rows } = await helpers.query<Target>(LOAD, [job.delivery_id])
    const target = rows[0]
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
    await helpers.query(RECORD, [
      job.delivery_id,
      job.attempt,
      outcome.succeeded,
      outcome.statusCode,
      outcome.durationMs,
      outcome.error,
      outcome.responseBody,
      status,
      nextAttemptAt,
      newId(),
      job.retry + 1,
    ])
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
