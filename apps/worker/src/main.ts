/** The worker process: config, database (embedded when DATABASE_URL is unset), runner, signals. */
import { openDatabase, redactUrl } from '@commerce/db'
import { loadConfig, type Config } from './config.js'
import { startHealthServer } from './health.js'
import { createLogger } from './logger.js'
import { startWorker } from './worker.js'

const SHUTDOWN_SIGNALS = ['SIGTERM', 'SIGINT'] as const

function readConfig(): Config {
  try {
    return loadConfig()
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  }
}

async function main(): Promise<void> {
  const config = readConfig()
  const logger = createLogger(config.logLevel)

  let stopping = false
  let onSignal: (signal: NodeJS.Signals) => void = () => {}
  const signalled = new Promise<NodeJS.Signals>((resolve) => {
    onSignal = (signal) => {
      if (stopping) {
        logger.warn('second signal: exiting without waiting for running jobs', { signal })
        process.exit(1)
      }
      stopping = true
      resolve(signal)
    }
  })
  for (const signal of SHUTDOWN_SIGNALS) process.on(signal, onSignal)

  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir })
  let exitCode = 0
  try {
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
      payments: {
        provider: config.paymentProvider,
        intervalMs: config.paymentSweepIntervalMs,
        reconcileAfterMs: config.paymentReconcileAfterMs,
      },
      logger,
    })
    const health = config.healthPort === undefined ? undefined : await startHealthServer(config.healthPort, config.healthHost, () => !stopping, worker.metrics.registry)
    logger.info('worker started', {
      concurrency: config.concurrency,
      database: redactUrl(database.url),
      embedded: database.startedHere,
      // Its name only: the provider's keys are never logged.
      payment_provider: config.paymentProvider.name,
      health: health?.address(),
    })
    const outcome = await Promise.race([
      signalled.then((signal) => ({ signal })),
      worker.runner.promise.then(
        () => ({ error: new Error('the runner stopped by itself') }),
        (error: unknown) => ({ error }),
      ),
    ])
    if ('signal' in outcome) {
      logger.info('stopping: waiting for running jobs', { signal: outcome.signal })
      await worker.stop()
      health?.close()
    } else {
      logger.error('worker failed', { error: outcome.error })
      exitCode = 1
    }
  } catch (error) {
    logger.error('worker could not start', { error })
    exitCode = 1
  } finally {
    await database.stop()
  }
  logger.info('worker stopped', { exitCode })
  process.exit(exitCode)
}

main().catch((error: unknown) => {
  createLogger('error').error('the worker could not start', { error })
  process.exit(1)
})
