/** Starts the job runner: our migrations first, then Graphile Worker (which applies its own). */
import { run, type Runner } from 'graphile-worker'
import { migrate } from '@commerce/db'
import { createJobPool } from './job-pool.js'
import { graphileLogger, type Logger } from './logger.js'
import { taskList } from './tasks/index.js'

export interface WorkerSettings {
  /** A resolved URL: main.ts turns an unset DATABASE_URL into the embedded database's. */
  databaseUrl: string
  concurrency: number
  databasePoolMax: number
  logger: Logger
}

export interface StartedWorker {
  runner: Runner
  /**
   * Stops taking jobs, waits for the running ones, then closes every connection.
   * Safe to call more than once.
   */
  stop(): Promise<void>
}

export async function startWorker(settings: WorkerSettings): Promise<StartedWorker> {
  await migrate(settings.databaseUrl)
  const pgPool = createJobPool(settings.databaseUrl, settings.databasePoolMax, settings.logger)
  let runner: Runner
  try {
    runner = await run({
      pgPool,
      concurrency: settings.concurrency,
      taskList,
      // No crontab: without this Graphile reads `./crontab` from whatever directory we run in.
      parsedCronItems: [],
      // main.ts owns the signals, so the embedded database is stopped after the runner.
      noHandleSignals: true,
      logger: graphileLogger(settings.logger),
    })
  } catch (error) {
    await pgPool.end()
    throw error
  }
  let stopping: Promise<void> | undefined
  const stop = async () => {
    try {
      await runner.stop()
    } finally {
      await pgPool.end()
    }
  }
  return { runner, stop: () => (stopping ??= stop()) }
}
