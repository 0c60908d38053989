/**
 * The webhook benchmark (`pnpm build && node bench/webhooks.js`): deliveries per second of one
 * worker process (apps/worker/dist/main.js) to a local receiver, beside Graphile Worker's own
 * no-op job throughput with the same settings (bench/noop-worker.js: the queue is the ceiling)
 * and a bare undici + HMAC sender; then the event-to-delivery latency of single events.
 *
 * Environment: DATABASE_URL (a server: the bench creates and drops its own database
 * `commerce_bench_webhooks` there), else the embedded PostgreSQL; BENCH_EVENTS (default 5000),
 * BENCH_WORKER_CONCURRENCY (default 16), BENCH_ROUNDS (default 3: no-op jobs and deliveries in
 * turns, the ratio per round, its median reported), BENCH_LATENCY_EVENTS (default 300),
 * BENCH_NODE_ARGS (node flags for the worker processes, e.g. --cpu-prof).
 * Exits 0 when every target passes, 1 otherwise.
 */
import { createHmac } from 'node:crypto'
import os from 'node:os'
import { join } from 'node:path'
import { Pool } from 'undici'
import { createDb } from '@commerce/db'
import { openScratchDatabase } from './scratch-database.js'
import {
  CONCURRENCY,
  EVENTS,
  LATENCY_EVENTS,
  POOL_MAX,
  ROOT,
  ROUNDS,
  deliveriesRun,
  deliveryLatencies,
  median,
  now,
  settleQueue,
  startProcess,
  startReceiver,
  subscribeReceiver,
  waitUntil,
  writeResults,
} from './worker-runs.js'

const NOOP_WORKER = join(ROOT, 'bench/noop-worker.js')
const DATABASE = 'commerce_bench_webhooks'

async function noopJobsPerSecond(sql, url) {
  await settleQueue(sql)
  const worker = startProcess(NOOP_WORKER, { DATABASE_URL: url, WORKER_CONCURRENCY: String(CONCURRENCY), DATABASE_POOL_MAX: String(POOL_MAX) })
  await worker.started
  const started = now()
  await sql`select count(*) from graphile_worker.add_jobs(array(
    select row('noop', '{}'::json, null, null, null, null, null, null)::graphile_worker.job_spec from generate_series(1, ${EVENTS})))`
  await waitUntil(async () => Number((await sql`select count(*) as n from graphile_worker._private_jobs`)[0].n) === 0)
  const seconds = (now() - started) / 1000
  await worker.stop()
  return EVENTS / seconds
}

async function bareSenderPerSecond(url) {
  const pool = new Pool(new URL(url).origin, { connections: CONCURRENCY })
  const body = JSON.stringify({ id: 'x', event: 'order.paid', timestamp: new Date().toISOString(), data: { order_id: 'x', total: 1 } })
  let next = 0
  const started = now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < EVENTS) {
        const n = next++
        const signature = createHmac('sha256', 'bench-secret').update(body).digest('hex')
        const response = await pool.request({ path: '/hook', method: 'POST', body, headers: { 'content-type': 'application/json', 'x-webhook-signature': signature, 'webhook-id': `bare-${n}` } })
        await response.body.dump()
      }
    }),
  )
  const perSecond = EVENTS / ((now() - started) / 1000)
  await pool.close()
  return perSecond
}

async function main() {
  const scratch = await openScratchDatabase(DATABASE)
  const url = scratch.url
  const { db, sql, close } = createDb({ url, poolMax: 4 })
  const receiver = await startReceiver()
  const results = { startedAt: new Date().toISOString(), host: { cpus: os.cpus().length, node: process.version }, events: EVENTS, concurrency: CONCURRENCY }
  try {
    console.log(`bench: ${EVENTS} events, worker concurrency ${CONCURRENCY}, ${os.cpus().length} CPUs`)
    results.bareSendsPerSecond = await bareSenderPerSecond(receiver.url)
    console.log(`  bare undici + HMAC sender  ${results.bareSendsPerSecond.toFixed(0)} POSTs/s`)
    receiver.arrivals.clear()
    await subscribeReceiver(sql, receiver)
    results.rounds = []
    for (let round = 1; round <= ROUNDS; round++) {
      const noop = await noopJobsPerSecond(sql, url)
      // Throughput: all events written at once (in transactions of 500), delivered as fast as it can.
      const deliveries = (await deliveriesRun({ db, sql, url, database: DATABASE, receiver, count: EVENTS })).perSecond
      results.rounds.push({ noopJobsPerSecond: noop, deliveriesPerSecond: deliveries, ratio: deliveries / noop })
      console.log(`  [${round}/${ROUNDS}] no-op ${noop.toFixed(0)} jobs/s, deliveries ${deliveries.toFixed(0)}/s = ${((100 * deliveries) / noop).toFixed(1)} %`)
    }
    results.ratio = median(results.rounds.map((r) => r.ratio))
    results.noopJobsPerSecond = median(results.rounds.map((r) => r.noopJobsPerSecond))
    results.deliveriesPerSecond = median(results.rounds.map((r) => r.deliveriesPerSecond))
    console.log(`  median: no-op ${results.noopJobsPerSecond.toFixed(0)} jobs/s, deliveries ${results.deliveriesPerSecond.toFixed(0)}/s, ratio ${(100 * results.ratio).toFixed(1)} %`)

    // Latency: single events, one per transaction, on an idle worker.
    results.latencyMs = await deliveryLatencies({ db, sql, url, database: DATABASE, receiver, count: LATENCY_EVENTS })
    console.log(`  event to delivery          p50 ${results.latencyMs.p50.toFixed(1)} ms, p90 ${results.latencyMs.p90.toFixed(1)} ms, p99 ${results.latencyMs.p99.toFixed(1)} ms`)
  } finally {
    await receiver.close()
    await close()
    await scratch.drop()
  }
  const targets = [
    ['deliveries ≥ 50 % of no-op jobs/s (median of the rounds)', results.ratio >= 0.5],
    ['event-to-delivery p50 ≤ 15 ms', results.latencyMs.p50 <= 15],
  ]
  for (const [label, pass] of targets) console.log(`  ${pass ? 'PASS' : 'FAIL'}  ${label}`)
  results.targets = Object.fromEntries(targets)
  writeResults('webhooks', results)
  process.exit(targets.every(([, pass]) => pass) ? 0 : 1)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
