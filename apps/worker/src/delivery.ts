/**
 * One delivery attempt: the signed POST of an event's envelope to a subscription, and what its
 * outcome means (done, retry when, or failed). The fan-out makes first attempts, the
 * deliver-webhook task retries and redeliveries; both start them with attemptAll, which waits
 * for them only as long as HAND_OFF allows and lets each endpoint's limits (endpoints.ts) and
 * the connections to each origin (origin-connections.ts) put some off.
 */
import { signedDelivery } from '@commerce/domain'
import { disableFailingWebhooks, type Database, type DeliveryStep, type Target } from '@commerce/db'
import type { Tracing } from '@commerce/runtime/tracing'
import { request, type Dispatcher } from 'undici'
import { attemptOutcome, describeError, type DeferralReason, type NextStep, type Outcome } from './attempt-outcome.js'
import { putOffBy, type EndpointLimits, type Permit } from './endpoints.js'
import type { Logger } from './logger.js'
import type { WorkerMetrics } from './metrics.js'
import type { OriginConnections } from './origin-connections.js'
import { refusedLiteral } from './ssrf.js'

/** Kept of a response body in the attempt log. */
const RESPONSE_LOG_BYTES = 1024

export interface DeliverySettings {
  /** Where deliveries are read and recorded (our statements' pool). */
  db: Database
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
  /** The connections to each receiver's origin in use (per worker). */
  connections: OriginConnections
  /** Attempts that outlived the job that started them, recorded when they end. */
  background: Background
  /** A span per attempt, and the request id on the job's span; none when traces are off. */
  tracing?: Tracing | undefined
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
  /** Not made (not an attempt against the receiver): made at this time instead. */
  | { deferredUntil: Date; reason: DeferralReason }
  /** Still in flight when the job stopped waiting; recorded when it ends, else sent again at leaseUntil. */
  | { inFlight: Promise<Outcome>; leaseUntil: Date }

/** An attempt its endpoint admitted: made once a connection to its origin is free. */
interface Run {
  permit: Permit
  /** Settles once the attempt has a connection and started, or was given up for want of one. */
  connected: Promise<void>
  finished?: Promise<Outcome>
  outcome?: Outcome
}

/**
 * Starts an attempt to each target as its endpoint and the connections to its origin allow, and
 * waits for them, but not beyond handOffAfterMs, and not at all for endpoints known to be lagging
 * or slowed down: one slow receiver never holds a job (and its worker slot) for its whole time
 * limit. An attempt's time limit starts once it has a connection: the wait for one is ours, and an
 * attempt that gets none in that time is put off, as one of a slowed-down endpoint is.
 */
export async function attemptAll(targets: readonly Target[], settings: DeliverySettings): Promise<Started[]> {
  // The job's span: the API request that wrote its events, when they all come from one.
  const requestIds = new Set(targets.map((target) => target.requestId))
  if (requestIds.size === 1) settings.tracing?.annotate({ request_id: targets[0]!.requestId })
  const patienceMs = handOffAfterMs(settings.timeoutMs)
  const runs = targets.map((target): Run | Started => {
    const permit = settings.endpoints.admit(target.webhookId)
    if (permit instanceof Date) return { deferredUntil: permit, reason: 'slowed_down' }
    const run: Run = { permit, connected: Promise.resolve() }
    run.connected = settings.connections.take(new URL(target.url).origin, permit.handOffAtOnce ? 0 : patienceMs).then((release) => {
      if (!release) return permit.withdrawn()
      run.finished = attempt(target, settings)
        .finally(release)
        .then((outcome) => {
          permit.done(outcome)
          run.outcome = outcome
          return outcome
        })
    })
    return run
  })
  await Promise.all(runs.map((run) => ('connected' in run ? run.connected : undefined)))
  // Every attempt in flight from here on started by now.
  const leaseUntil = new Date(Date.now() + settings.timeoutMs + LEASE_MARGIN_MS)
  const awaited = runs.flatMap((run) => ('permit' in run && run.finished && !run.permit.handOffAtOnce ? [run.finished] : []))
  if (awaited.length > 0) {
    let timer: NodeJS.Timeout | undefined
    const patience = new Promise((resolve) => (timer = setTimeout(resolve, patienceMs)))
    await Promise.race([Promise.all(awaited), patience])
    clearTimeout(timer)
  }
  return runs.map((run): Started => {
    if (!('permit' in run)) return run
    if (!run.finished) return { deferredUntil: putOffBy(settings.timeoutMs), reason: 'connections_busy' }
    if (run.outcome) return { outcome: run.outcome }
    run.permit.handedOff()
    return { inFlight: run.finished, leaseUntil }
  })
}

/** The step after attempt number `attempt` (retry number `retry`) started as `started`. */
export function stepOf(started: Started, attempt: number, retry: number, settings: DeliverySettings): DeliveryStep {
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
  if ('deferredUntil' in started) settings.metrics.deferred(started.reason)
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

/**
 * After a recording statement: disables the subscriptions it found failing for longer than
 * WEBHOOK_DISABLE_AFTER (rare: a transaction of its own, with their webhook.disabled events), and
 * logs those disabled.
 */
export async function disableDue(settings: DeliverySettings, due: readonly string[]) {
  const period = disablePeriodSeconds(settings)
  if (due.length === 0 || period === null) return
  try {
    for (const webhookId of await disableFailingWebhooks(settings.db, due, period)) {
      settings.logger.warn('webhook disabled: its attempts have failed for too long', { webhook_id: webhookId })
    }
  } catch (error) {
    // The attempts are recorded; the next failed one finds the subscription due again.
    settings.logger.warn('could not disable a failing webhook subscription', { webhook_ids: due, error: error instanceof Error ? error.message : String(error) })
  }
}

/** WEBHOOK_DISABLE_AFTER in seconds, as the recording statements take it (null: never). */
export function disablePeriodSeconds(settings: DeliverySettings): number | null {
  return settings.disableAfterMs === null ? null : settings.disableAfterMs / 1000
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
    { id: target.eventId, kind: target.kind, createdAt: new Date(target.createdAt), resourceId: target.resourceId, sequence: target.sequence, data: target.data },
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
