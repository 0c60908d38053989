/**
 * One delivery attempt: the signed POST of an event's envelope to a subscription, and what its
 * outcome means (done, retry when, or failed). The fan-out makes first attempts, the
 * deliver-webhook task retries and redeliveries.
 */
import { signedDelivery } from '@commerce/domain'
import { request, type Dispatcher } from 'undici'
import type { Logger } from './logger.js'
import { attemptOutcome, type WorkerMetrics } from './metrics.js'
import { RefusedTarget, refusedLiteral } from './ssrf.js'

/** Kept of a response body in the attempt log. */
const RESPONSE_LOG_BYTES = 1024

export interface DeliverySettings {
  timeoutMs: number
  /** The waits before the retries, in milliseconds; its length is the number of retries. */
  retrySchedule: readonly number[]
  /** Guarded by the SSRF lookup unless private targets are allowed (createDeliveryAgent). */
  dispatcher: Dispatcher
  allowPrivateTargets: boolean
  /** A subscription failing, without a success, for longer than this is disabled; null: never. */
  disableAfterMs: number | null
  logger: Logger
  metrics: WorkerMetrics
}

/**
 * `secrets` of a Target, selected from a subscription `w`: the current secret, then the previous
 * one until its grace period ends (now() of the statement that loads the delivery).
 */
export const SECRETS_COLUMN = `array_remove(array[w.secret, case when w.previous_secret_expires_at > now() then w.previous_secret end], null) as secrets`

/** The event and where it goes. */
export interface Target {
  url: string
  /** The current secret, then the previous one while its grace period after a rotation lasts. */
  secrets: [string, ...string[]]
  webhookId: string
  eventId: string
  kind: string
  data: unknown
  createdAt: Date
  /** What the event is about, and its number among that resource's events. */
  resourceId: string
  sequence: number
  /** The API request that wrote the event (its X-Request-Id), for the logs; null when none did. */
  requestId: string | null
}

export interface Outcome {
  succeeded: boolean
  statusCode: number | null
  durationMs: number
  error: string | null
  responseBody: string | null
}

export interface NextStep {
  status: 'pending' | 'succeeded' | 'failed'
  /** When the next retry runs; null when none is due. */
  nextAttemptAt: Date | null
}

/** After the outcome of retry number `retry` (0 for a first try): done, retry later, or failed. */
export function nextStep(outcome: Outcome, retry: number, settings: DeliverySettings): NextStep {
  if (outcome.succeeded) return { status: 'succeeded', nextAttemptAt: null }
  // 410 Gone: the receiver asks us to stop.
  const wait = outcome.statusCode === 410 ? undefined : settings.retrySchedule[retry]
  return wait === undefined ? { status: 'failed', nextAttemptAt: null } : { status: 'pending', nextAttemptAt: new Date(Date.now() + wait) }
}

/** The outcome parameters of the statements that record attempts, in their order there. */
export function outcomeColumns(attempts: readonly (NextStep & { outcome: Outcome })[]): unknown[][] {
  const column = (of: (attempt: NextStep & { outcome: Outcome }) => unknown) => attempts.map(of)
  return [
    column((a) => a.outcome.succeeded),
    column((a) => a.outcome.statusCode),
    column((a) => a.outcome.durationMs),
    column((a) => a.outcome.error),
    column((a) => a.outcome.responseBody),
    column((a) => a.status),
    column((a) => a.nextAttemptAt),
  ]
}

/**
 * After an attempt was recorded: counts it and logs it as one JSON line carrying the ids that
 * tie it to the API request that wrote the event. Never the URL (it may carry a token), the
 * secret or a body.
 */
export function reportAttempt(settings: DeliverySettings, fields: { deliveryId: string; target: Target; attempt: number; outcome: Outcome; next: NextStep }) {
  const { deliveryId, target, attempt, outcome, next } = fields
  settings.metrics.attempt(outcome, next)
  const entry = {
    event_id: target.eventId,
    event: target.kind,
    request_id: target.requestId,
    webhook_id: target.webhookId,
    delivery_id: deliveryId,
    attempt,
    outcome: attemptOutcome(next),
    status_code: outcome.statusCode,
    duration_ms: outcome.durationMs,
  }
  if (outcome.succeeded) settings.logger.info('webhook delivered', entry)
  else settings.logger.warn('webhook attempt failed', { ...entry, error: outcome.error, next_attempt_at: next.nextAttemptAt })
}

/** The final row of a statement that records attempts (endpoint-health.ts). */
export interface Recorded {
  disabled: string[]
}

/** Logs the subscriptions a recording statement disabled for failing too long. */
export function reportDisabled(settings: DeliverySettings, webhookIds: readonly string[]) {
  for (const webhookId of webhookIds) {
    settings.logger.warn('webhook disabled: its attempts have failed for too long', { webhook_id: webhookId })
  }
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

/** One signed POST of an event's envelope; never throws: a failure is an outcome too. */
export async function post(target: Target, settings: DeliverySettings): Promise<Outcome> {
  const started = performance.now()
  const elapsed = () => Math.round(performance.now() - started)
  const url = new URL(target.url)
  // IP literals are not looked up, so the lookup's guard does not see them.
  const refused = settings.allowPrivateTargets ? undefined : refusedLiteral(url)
  if (refused) return { succeeded: false, statusCode: null, durationMs: elapsed(), error: refused.message, responseBody: null }
  const { body, headers } = signedDelivery(
    { id: target.eventId, kind: target.kind, createdAt: target.createdAt, resourceId: target.resourceId, sequence: target.sequence, data: target.data },
    target.secrets,
    Math.floor(Date.now() / 1000),
  )
  try {
    const response = await request(url, {
      method: 'POST',
      body,
      dispatcher: settings.dispatcher,
      signal: AbortSignal.timeout(settings.timeoutMs),
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
      headers,
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
