/**
 * The queue's ceiling for bench/webhooks.js: Graphile Worker running a task that does nothing,
 * with the settings our worker uses (same concurrency, pool and runner tuning).
 *
 *   DATABASE_URL=... WORKER_CONCURRENCY=16 DATABASE_POOL_MAX=10 node bench/noop-worker.js
 */
import { Logger, run } from 'graphile-worker'
import pg from 'pg'
import { runnerTuning } from '../apps/worker/dist/worker.js'

const concurrency = Number(process.env.WORKER_CONCURRENCY ?? 16)
const pgPool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_MAX ?? 10) })
pgPool.on('error', () => {})
pgPool.on('connect', (client) => client.on('error', () => {}))
const runner = await run({
  pgPool,
  concurrency,
  preset: runnerTuning(concurrency),
  taskList: { noop: async () => {} },
  parsedCronItems: [],
  noHandleSignals: true,
  logger: new Logger(() => () => {}),
})
console.log(JSON.stringify({ msg: 'worker started' }))
process.once('SIGTERM', async () => {
  await runner.stop()
  await pgPool.end()
  process.exit(0)
})
