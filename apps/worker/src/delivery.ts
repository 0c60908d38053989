/**
 * One delivery attempt: the signed POST of an event's envelope to a subscription, and what its
 * outcome means (done, retry when, or failed). The fan-out makes first attempts, the
 * deliver-webhook task retries and redeliveries; both start them with attemptAll, which waits
 * for them only as long as HAND_OFF allows and lets each endpoint's limits (endpoints.ts) put
 * some off.
 */
import { signedDelivery } from '@commerce/domain'
import type { Tracing } from '@commerce/runtime/tracing'
import { request, type Dispatcher } from 'undici'
import type { EndpointLimits } from './endpoints.js'
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
  /** Which endpoints are slowed down or lagging (per worker). */
  endpoints: EndpointLimits
  /** Attempts that outlived the job that started them, recorded when they end. */
  background: Background
  /** A span per attempt, and the request id on the job's span; none when traces are off. */
  tracing?: Tracing | undefined
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

/**
 * How long a job waits for its attempts: a tenth of the time limit, at most a second. Attempts
 * still in flight then are handed off: the job records their deliveries as pending with a lease
 * (this attempt's job again, due after the time limit and LEASE_MARGIN_MS, run only if this
 * worker dies before recording the outcome) and ends, freeing its slot for other endpoints.
 */
export function handOffAfterMs(timeoutMs: number): number {
  return Math.min(1_000, Math.ceil(timeoutMs / 10))
}
const LEASE_MARGIN_MS = 5_000

/** What became of an attempt a job started (attemptAll). */
export type Started =
  /** It ended while the job waited. */
  | { outcome: Outcome }
  /** Not made: its endpoint is slowed down and busy (endpoints.ts); made at this time instead. */
  | { deferredUntil: Date }
  /** Still in flight when the job stopped waiting; recorded when it ends, else sent again at leaseUntil. */
  | { inFlight: Promise<Outcome>; leaseUntil: Date }

/**
 * Starts an attempt to each target as its endpoint allows, and waits for them, but not beyond
 * handOffAfterMs, and not at all for endpoints known to be lagging or slowed down: one slow
 * receiver never holds a job (and its worker slot) for its whole time limit.
 */
export async function attemptAll(targets: readonly Target[], settings: DeliverySettings): Promise<Started[]> {
  // The job's span: the API request that wrote its events, when they all come from one.
  const requestIds = new Set(targets.map((target) => target.requestId))
  if (requestIds.size === 1) settings.tracing?.annotate({ request_id: targets[0]!.requestId })
  const leaseUntil = new Date(Date.now() + settings.timeoutMs + LEASE_MARGIN_MS)
  const runs = targets.map((target) => {
    const permit = settings.endpoints.admit(target.webhookId)
    if (permit instanceof Date) return { deferredUntil: permit }
    const run: { permit: typeof permit; outcome?: Outcome; finished: Promise<Outcome> } = { permit, finished: undefined! }
    run.finished = attempt(target, settings).then((outcome) => {
      permit.done(outcome)
      run.outcome = outcome
      return outcome
    })
    return run
  })
  const awaited = runs.flatMap((run) => ('permit' in run && !run.permit.handOffAtOnce ? [run.finished] : []))
  if (awaited.length > 0) {
    let timer: NodeJS.Timeout | undefined
    const patience = new Promise((resolve) => (timer = setTimeout(resolve, handOffAfterMs(settings.timeoutMs))))
    await Promise.race([Promise.all(awaited), patience])
    clearTimeout(timer)
  }
  return runs.map((run): Started => {
    if ('deferredUntil' in run) return run
    if (run.outcome) return { outcome: run.outcome }
    run.permit.handedOff()
    return { inFlight: run.finished, leaseUntil }
  })
}

/** What a recording statement writes of one delivery after a job's attempt. */
export interface Step extends NextStep {
  /** null: no attempt to log (put off, or still in flight). */
  outcome: Outcome | null
  /** The job to add: the next attempt's, or this attempt's again (put off, or the lease of one in flight). */
  job: { runAt: Date; attempt: number; retry: number } | null
}

/** The step after attempt number `attempt` (retry number `retry`) started as `started`. */
export function stepOf(started: Started, attempt: number, retry: number, settings: DeliverySettings): Step {
  if ('outcome' in started) {
    const next = nextStep(started.outcome, retry, settings)
    const job = next.nextAttemptAt && { runAt: next.nextAttemptAt, attempt: attempt + 1, retry: retry + 1 }
    return { outcome: started.outcome, ...next, job }
  }
  if ('deferredUntil' in started) {
    return { outcome: null, status: 'pending', nextAttemptAt: started.deferredUntil, job: { runAt: started.deferredUntil, attempt, retry } }
  }
  return { outcome: null, status: 'pending', nextAttemptAt: null, job: { runAt: started.leaseUntil, attempt, retry } }
}

/**
 * The step columns of the statements that record attempts: their SQL (parameters from $first,
 * named as `STEP_NAMES`) and their values (stepColumns), in that order.
 */
export const STEP_NAMES = 'succeeded, status_code, duration_ms, error, response_body, status, next_attempt_at, job_run_at, job_attempt, job_retry'
export function stepParameters(first: number): string {
  const types = ['bool', 'int', 'int', 'text', 'text', 'text', 'timestamptz', 'timestamptz', 'int', 'int']
  return types.map((type, n) => `$${first + n}::${type}[]`).join(', ')
}
export function stepColumns(steps: readonly Step[]): unknown[][] {
  const column = (of: (step: Step) => unknown) => steps.map(of)
  return [
    column((s) => s.outcome?.succeeded ?? null),
    column((s) => s.outcome?.statusCode ?? null),
    column((s) => s.outcome?.durationMs ?? null),
    column((s) => s.outcome?.error ?? null),
    column((s) => s.outcome?.responseBody ?? null),
    column((s) => s.status),
    column((s) => s.nextAttemptAt),
    column((s) => s.job?.runAt ?? null),
    column((s) => s.job?.attempt ?? null),
    column((s) => s.job?.retry ?? null),
  ]
}

/**
 * The subscriptions of a recording statement's rows (`source`: a query of their ids), locked
 * first and in id order, as deleting one locks it before its deliveries: a statement that then
 * locks or inserts deliveries cannot deadlock with a delete, and sees whether it came first.
 */
export function lockedSubscriptions(source: string): string {
  return `subscriptions as materialized (select id from webhooks where id in (${source}) order by id for no key update)`
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
  /** The deliveries not recorded: their subscription was deleted meanwhile. */
  gone: string[]
}

/** Counts and logs (info: nothing is wrong) what a job skipped because its subscription was deleted. */
export function reportGone(settings: DeliverySettings, fields: { deliveryId: string; webhookId?: string; attempt: number }) {
  settings.metrics.skipped('deleted')
  settings.logger.info('webhook delivery dropped: its subscription was deleted', {
    delivery_id: fields.deliveryId,
    webhook_id: fields.webhookId,
    attempt: fields.attempt,
  })
}

/** Counts a step that was not an attempt's end: put off, or handed off. */
export function reportStarted(settings: DeliverySettings, started: Started) {
  if ('deferredUntil' in started) settings.metrics.deferred()
  else if ('inFlight' in started) settings.metrics.handedOff()
}

/** Attempts that outlive their job; the worker waits for them when it stops. */
export interface Background {
  run(work: Promise<unknown>): void
  drain(): Promise<void>
}

export function createBackground(logger: Logger): Background {
  const running = new Set<Promise<void>>()
  return {
    run(work) {
      const tracked: Promise<void> = work.then(
        () => undefined,
        (error: unknown) =>
          // Its lease job sends the attempt again.
          logger.warn('could not record a webhook attempt that outlived its job', { error: error instanceof Error ? error.message : String(error) }),
      )
      running.add(tracked)
      void tracked.finally(() => running.delete(tracked))
    },
    async drain() {
      while (running.size > 0) await Promise.all(running)
    },
  }
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

const TIMED_OUT = 'timed out after'

/** Whether the attempt ran out of its time limit (connecting, waiting, or reading the answer). */
export function timedOut(outcome: Outcome): boolean {
  return outcome.error?.startsWith(TIMED_OUT) ?? false
}

function describeError(error: unknown, timeoutMs: number): string {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof RefusedTarget) return cause.message
    if (cause.name === 'TimeoutError' || cause.name === 'AbortError') return `${TIMED_OUT} ${timeoutMs} ms`
  }
  if (!(error instanceof Error)) return String(error)
  const code = (error as { code?: string }).code ?? (error.cause as { code?: string } | undefined)?.code
  const message = error.message || (error.cause instanceof Error ? error.cause.message : '')
  return code ? `${code}: ${message}` : message
}

/** post(), in a span of its own when traces are on: never the URL (it may carry a token), only its host. */
function attempt(target: Target, settings: DeliverySettings): Promise<Outcome> {
  const { tracing } = settings
  if (!tracing) return post(target, settings)
  const attributes = {
    'http.request.method': 'POST',
    'server.address': new URL(target.url).hostname,
    request_id: target.requestId,
    event_id: target.eventId,
    event: target.kind,
    webhook_id: target.webhookId,
  }
  return tracing.inSpan('webhook delivery', 'client', attributes, async () => {
    const outcome = await post(target, settings)
    tracing.annotate({ 'http.response.status_code': outcome.statusCode, succeeded: outcome.succeeded })
    return outcome
  })
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
