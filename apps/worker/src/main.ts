/**
 * The worker process: config, traces when OTEL_EXPORTER_OTLP_ENDPOINT is set, database (embedded
 * when DATABASE_URL is unset), runner; on SIGTERM or SIGINT it stops taking jobs, waits for the
 * running ones, then closes the database (shutdown.ts of @commerce/runtime).
 */
import { openDatabase, redactUrl } from '@commerce/db'
import { createLogger } from '@commerce/runtime/logger'
import { handleShutdown } from '@commerce/runtime/shutdown'
import { loadConfig, type Config } from './config.js'
import { startHealthServer } from './health.js'
import { messageFirst } from './logger.js'
import { startWorker } from './worker.js'

function readConfig(): Config {
  try {
    return loadConfig()
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  }
}

const config = readConfig()
const log = createLogger('worker', config.logLevel)
const logger = messageFirst(log)
const shutdown = handleShutdown({ logger: log, graceMs: config.shutdownGraceMs })
try {
  const tracing = config.tracing && (await import('@commerce/runtime/tracing')).startTracing(config.tracing)
  if (tracing) shutdown.add('traces', () => tracing.shutdown())
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir })
  shutdown.add('database', () => database.stop())
  const worker = await startWorker({
    databaseUrl: database.url,
    concurrency: config.concurrency,
    databasePoolMax: config.databasePoolMax,
    databaseConnectTimeoutMs: config.databaseConnectTimeoutMs,
    webhooks: {
      timeoutMs: config.webhookTimeoutMs,
      retrySchedule: config.webhookRetrySchedule,
      disableAfterMs: config.webhookDisableAfterMs,
      allowPrivateTargets: config.webhookAllowPrivateTargets,
    },
    notifications: config.notifications,
    csv: { storage: config.storage, batchRows: config.importBatchRows, retentionMs: config.csvRetentionMs },
    retention: { reservationsMs: config.reservationRetentionMs, eventsMs: config.eventRetentionMs, deliveriesMs: config.webhookDeliveryRetentionMs },
    payments: {
      provider: config.paymentProvider,
      intervalMs: config.paymentSweepIntervalMs,
      reconcileAfterMs: config.paymentReconcileAfterMs,
      unrecordedGraceMs: config.paymentUnrecordedGraceMs,
    },
    logger,
    tracing,
  })
  const health = config.healthPort === undefined ? undefined : await startHealthServer(config.healthPort, config.healthHost, () => !shutdown.stopping, worker.metrics.registry)
  // The health port answers 503 while the running jobs finish, and closes after them.
  shutdown.add('job runner', async () => {
    await worker.stop()
    health?.close()
  })
  worker.runner.promise.then(
    () => shutdown.exit(1, { reason: 'the runner stopped by itself' }),
    (error: unknown) => shutdown.exit(1, { err: error, reason: 'the runner failed' }),
  )
  logger.info('worker started', {
    concurrency: config.concurrency,
    database: redactUrl(database.url),
    embedded: database.startedHere,
    // Its name only: the provider's keys are never logged.
    payment_provider: config.paymentProvider.name,
    // smtp (never its URL: it holds a password), the folder of .eml files, or false: notifications off.
    mail: worker.mail ?? false,
    health: health?.address(),
    tracing: tracing !== undefined,
  })
} catch (error) {
  await shutdown.exit(1, { err: error, reason: 'the worker could not start' })
}
