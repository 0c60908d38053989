/**
 * Starts the job runner: our migrations first, then Graphile Worker (which applies its own) on its
 * `pg` pool; our own statements run on a postgres.js pool of @commerce/db (docs/internals.md).
 */
import { run, type Runner } from 'graphile-worker'
import { createDb, migrate, unlockStaleJobs } from '@commerce/db'
import type { Tracing } from '@commerce/runtime/tracing'
import type { NotificationConfig } from './config.js'
import { createBackground } from './delivery.js'
import { createEndpointLimits } from './endpoints.js'
import { createJobPool } from './job-pool.js'
import { graphileLogger, type Logger } from './logger.js'
import { createMailer, type Mailer } from './mailer.js'
import { createOriginConnections } from './origin-connections.js'
import { createWorkerMetrics, type WorkerMetrics } from './metrics.js'
import { startOutboxRelay, type OutboxRelay } from './outbox-relay.js'
import { startPaymentSweeps, type PaymentSweepSettings } from './payment-sweeps.js'
import { createDeliveryAgent } from './ssrf.js'
import type { CsvSettings } from './tasks/csv.js'
import type { RowRetention } from './tasks/expire-rows.js'
import { createTaskList, cronItems } from './tasks/index.js'
import { loadTemplates } from './templates.js'

export interface WebhookSettings {
  timeoutMs: number
  retrySchedule: readonly number[]
  allowPrivateTargets: boolean
  /** At most this many connections to one receiver's origin at once; CONNECTIONS_PER_ORIGIN unless set. */
  connectionsPerOrigin?: number
  /** Disables a subscription failing, without a success, for longer than this; never when omitted or null. */
  disableAfterMs?: number | null
}

export interface WorkerSettings {
  /** A resolved URL: main.ts turns an unset DATABASE_URL into the embedded database's. */
  databaseUrl: string
  concurrency: number
  databasePoolMax: number
  /** The longest a query waits for a connection (DATABASE_CONNECT_TIMEOUT); 5 s unless set. */
  databaseConnectTimeoutMs?: number
  /**
   * How often an idle worker looks for jobs whose time has come (retries scheduled for later);
   * new jobs are announced at once. POLL_INTERVAL_MS unless set.
   */
  pollIntervalMs?: number
  webhooks: WebhookSettings
  /** The emails made from events (notifications.ts); none made when omitted. */
  notifications?: NotificationConfig | undefined
  /** CSV exports and imports (tasks/csv.ts); their jobs wait in the queue when omitted. */
  csv?: CsvSettings | undefined
  /** The checkouts' payment sweeps (payment-sweeps.ts); none when omitted. */
  payments?: PaymentSweepSettings
  /** How long rows past their use are kept (CHECKOUT_RESERVATION_RETENTION, EVENT_RETENTION, WEBHOOK_DELIVERY_RETENTION); ROW_RETENTION where not set. */
  retention?: Partial<RowRetention>
  logger: Logger
  /** Where deliveries and jobs are counted; a registry of its own when omitted. */
  metrics?: WorkerMetrics
  /** Spans of each job and delivery (tracing.ts of @commerce/runtime); none when omitted. */
  tracing?: Tracing | undefined
}

export interface StartedWorker {
  runner: Runner
  /** Where emails go (`smtp`, or the folder of `.eml` files); undefined when notifications are off. */
  mail: string | undefined
  /** Served at GET /metrics by main.ts. */
  metrics: WorkerMetrics
  /**
   * Stops taking jobs, waits for the running ones, then closes every connection.
   * Safe to call more than once.
   */
  stop(): Promise<void>
}

/**
 * An idle worker looks for due jobs this often, so a retry starts within half a second of its
 * time (Graphile's default, 2 s, could make it up to 2 s late). Two small queries a second.
 */
const POLL_INTERVAL_MS = 500
const DAY_MS = 24 * 3600_000
/**
 * The retentions' defaults. A payment succeeding a week after its decline or expiry is given back
 * rather than placed. Events and deliveries for 90 days: a WebSocket resume, a replay and a
 * delivery's log reach that far back.
 */
const ROW_RETENTION: RowRetention = { reservationsMs: 7 * DAY_MS, eventsMs: 90 * DAY_MS, deliveriesMs: 90 * DAY_MS }
/** A delivery connects within this, out of its whole time limit. */
const CONNECT_TIMEOUT_MS = 3_000
/** Connections to one receiver's origin in use at once, per worker. */
const CONNECTIONS_PER_ORIGIN = 32
/**
 * How often a worker looks for jobs left locked by dead workers. Jobs of a worker that died
 * (SIGKILL, lost machine) stay locked for about four hours in Graphile Worker; no task of ours runs
 * longer than a delivery's or an email's time limit, so a job locked for well beyond it
 * (staleAfterMs) belongs to a dead worker: every worker unlocks such jobs when it starts and then
 * this often, and they run again (deliveries are at least once; an email already recorded is not
 * sent again).
 */
const RECOVERY_INTERVAL_MS = 5_000
/**
 * Graphile Worker's own pool (ours is DATABASE_POOL_MAX): its LISTEN, the local queue's fetches,
 * the batched completions and failures, cron. Measured at most 5 connections in use at once, at
 * concurrency 5 and 20 alike (docs/internals.md); never more than DATABASE_POOL_MAX, never fewer
 * than 2 (its LISTEN holds one).
 */
const JOB_POOL_MAX = 5
/** How often the outbox relay sweeps without a NOTIFY (it is woken by every committed event). */
const OUTBOX_SWEEP_INTERVAL_MS = 1_000

/**
 * Graphile Worker's throughput settings: jobs fetched in batches into a local queue and their
 * completions written in batches. What it costs — more jobs locked by one worker when it dies —
 * the unlock of stale jobs takes care of. Exported so the benchmark's no-op worker runs with the
 * same settings.
 */
export function runnerTuning(concurrency: number) {
  return { worker: { localQueue: { size: concurrency + 1 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } }
}

/**
 * Longer than a job can run, with some margin: twice a delivery's time limit for every job, and
 * for an email's job twice an SMTP exchange's (connect, greeting and the replies, each within
 * SMTP_TIMEOUT) when it goes to a server (written to a file, it takes no longer than a delivery).
 */
function staleAfterMs(webhookTimeoutMs: number, smtpTimeoutMs = 0): { emailMs: number; otherMs: number } {
  const otherMs = 2 * webhookTimeoutMs + 5_000
  return { emailMs: Math.max(otherMs, 2 * 3 * smtpTimeoutMs + 5_000), otherMs }
}

export async function startWorker(settings: WorkerSettings): Promise<StartedWorker> {
  const { logger, webhooks } = settings
  const metrics = settings.metrics ?? createWorkerMetrics()
  await migrate(settings.databaseUrl)
  const connectTimeoutMs = settings.databaseConnectTimeoutMs ?? 5_000
  const jobPoolMax = Math.max(2, Math.min(JOB_POOL_MAX, settings.databasePoolMax))
  const pgPool = createJobPool(settings.databaseUrl, jobPoolMax, connectTimeoutMs, logger)
  metrics.watchPool(pgPool)
  const database = createDb({
    url: settings.databaseUrl,
    poolMax: settings.databasePoolMax,
    connectTimeoutMs,
    applicationName: 'commerce-worker',
    onAnnounceError: (error) => logger.warn('could not announce committed events', { error: error instanceof Error ? error.message : String(error) }),
  })
  const connectionsPerOrigin = webhooks.connectionsPerOrigin ?? CONNECTIONS_PER_ORIGIN
  const dispatcher = createDeliveryAgent({
    allowPrivateTargets: webhooks.allowPrivateTargets,
    connectTimeoutMs: Math.min(CONNECT_TIMEOUT_MS, webhooks.timeoutMs),
    connectionsPerOrigin,
  })
  const smtp = settings.notifications?.smtpUrl === undefined ? undefined : settings.notifications
  const staleAfter = staleAfterMs(webhooks.timeoutMs, smtp?.smtpTimeoutMs)
  const recover = async () => {
    try {
      const workers = await unlockStaleJobs(database.sql, staleAfter)
      if (workers.length > 0) logger.warn('unlocked the jobs of stopped workers', { workers })
    } catch (error) {
      logger.warn('could not look for the jobs of stopped workers', { error })
    }
  }
  const background = createBackground(logger)
  const delivery = {
    ...webhooks,
    db: database.db,
    disableAfterMs: webhooks.disableAfterMs ?? null,
    dispatcher,
    logger,
    metrics,
    endpoints: createEndpointLimits(webhooks.timeoutMs),
    connections: createOriginConnections(connectionsPerOrigin),
    background,
    tracing: settings.tracing,
  }
  // Told before the runner stops: a CSV import or export under way stops at its next batch (and
  // carries on in the next worker) instead of holding the stop for minutes.
  const stopping = new AbortController()
  let runner: Runner
  let relay: OutboxRelay | undefined
  let mailer: Mailer | undefined
  try {
    const notifications = settings.notifications && {
      db: database.db,
      // Every template parsed now: a broken override stops the start, naming its file.
      templates: await loadTemplates(settings.notifications.templatesDir),
      mailer: (mailer = createMailer({ ...settings.notifications, timeoutMs: settings.notifications.smtpTimeoutMs, maxConnections: settings.concurrency })),
      from: settings.notifications.from,
      retrySchedule: settings.notifications.retrySchedule,
      shop: { name: settings.notifications.shopName, url: settings.notifications.shopUrl },
      logger,
      metrics,
    }
    await recover()
    relay = await startOutboxRelay({
      databaseUrl: settings.databaseUrl,
      connectTimeoutMs,
      sql: database.sql,
      logger,
      sweepIntervalMs: OUTBOX_SWEEP_INTERVAL_MS,
      onRelayed: (transactions) => metrics.relayed(transactions),
    })
    runner = await run({
      pgPool,
      concurrency: settings.concurrency,
      preset: runnerTuning(settings.concurrency),
      pollInterval: settings.pollIntervalMs ?? POLL_INTERVAL_MS,
      taskList: createTaskList(delivery, { ...ROW_RETENTION, ...settings.retention }, notifications, settings.csv && { ...settings.csv, db: database, logger, signal: stopping.signal }),
      // Given here, so Graphile does not read `./crontab` from whatever directory we run in.
      parsedCronItems: cronItems(settings.csv !== undefined),
      // main.ts owns the signals, so the embedded database is stopped after the runner.
      noHandleSignals: true,
      logger: graphileLogger(logger),
    })
  } catch (error) {
    await relay?.stop()
    mailer?.close()
    await Promise.all([pgPool.end(), database.close(), dispatcher.close()])
    throw error
  }
  const recovery = setInterval(() => void recover(), RECOVERY_INTERVAL_MS)
  recovery.unref()
  const sweeps = settings.payments && startPaymentSweeps({ ...settings.payments, databaseUrl: settings.databaseUrl, connectTimeoutMs, logger, metrics })
  let stopped: Promise<void> | undefined
  const stop = async () => {
    clearInterval(recovery)
    stopping.abort()
    // Told at once, so that a sweep under way ends while the jobs finish.
    const sweepsStopped = sweeps?.stop()
    try {
      // The relay first: jobs it adds while the runner stops would wait for the next worker.
      await relay?.stop()
      await runner.stop()
      // Attempts that outlived their jobs end within the time limit; then they are recorded.
      await background.drain()
    } finally {
      mailer?.close()
      await Promise.all([pgPool.end(), database.close(), dispatcher.close(), sweepsStopped])
    }
  }
  return { runner, metrics, mail: mailer?.destination, stop: () => (stopped ??= stop()) }
}
