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
import { spawn } from 'node:child_process'
import { createHmac } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Pool } from 'undici'
import { createDb, newId, writeEvents } from '@commerce/db'
import { openScratchDatabase } from './scratch-database.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const WORKER_MAIN = join(ROOT, 'apps/worker/dist/main.js')
const NOOP_WORKER = join(ROOT, 'bench/noop-worker.js')
const RESULTS_DIR = join(ROOT, 'bench/results')
const DATABASE = 'commerce_bench_webhooks'
const EVENTS = Number(process.env.BENCH_EVENTS ?? 5000)
const CONCURRENCY = Number(process.env.BENCH_WORKER_CONCURRENCY ?? 16)
const LATENCY_EVENTS = Number(process.env.BENCH_LATENCY_EVENTS ?? 300)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const POOL_MAX = 10
const now = () => performance.timeOrigin + performance.now()
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}

/** A receiver that answers 200 at once and notes when each event id arrived. */
async function startReceiver() {
  const arrivals = new Map()
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      const id = request.headers['webhook-id']
      if (id && !arrivals.has(id)) arrivals.set(id, now())
      response.writeHead(200).end()
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${server.address().port}/hook`, arrivals, close: () => new Promise((resolve) => server.close(resolve)) }
}

function startProcess(script, env) {
  const nodeArgs = process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []
  const child = spawn(process.execPath, [...nodeArgs, script], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
  const started = new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
      if (out.includes('"worker started"')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before it started`)))
  })
  started.catch(() => {})
  const exited = new Promise((resolve) => child.once('exit', resolve))
  return { started, stop: async () => (child.kill('SIGTERM'), await exited) }
}

async function waitUntil(condition, timeoutMs = 300_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting')
    await sleep(5)
  }
}

/** Both measurements start from the same queue: empty, its dead rows vacuumed. */
async function settleQueue(sql) {
  await waitUntil(async () => Number((await sql`select count(*) as n from graphile_worker._private_jobs`)[0].n) === 0)
  await sql`vacuum analyze graphile_worker._private_jobs`
}

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

function startWorker(url) {
  return startProcess(WORKER_MAIN, {
    DATABASE_URL: url,
    WORKER_CONCURRENCY: String(CONCURRENCY),
    DATABASE_POOL_MAX: String(POOL_MAX),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    // Info would log every delivery, so 'worker started' is not awaited: its connections are.
    LOG_LEVEL: 'warn',
  })
}

async function workerConnected(sql) {
  await waitUntil(async () => Number((await sql`select count(*) as n from pg_stat_activity where datname = ${DATABASE} and application_name = 'commerce-worker'`)[0].n) > 0)
  await sleep(500)
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
    await sql`insert into webhooks (id, url, events, secret) values (gen_random_uuid(), ${receiver.url}, ${['*']}, 'whsec_YmVuY2ggc2VjcmV0IG9mIHRoaXJ0eS10d28gYnl0ZXMh')`
    results.rounds = []
    for (let round = 1; round <= ROUNDS; round++) {
      const noop = await noopJobsPerSecond(sql, url)
      const worker = startWorker(url)
      try {
        await workerConnected(sql)
        await settleQueue(sql)
        // Throughput: all events written at once (in transactions of 500), delivered as fast as it can.
        receiver.arrivals.clear()
        const started = now()
        for (let offset = 0; offset < EVENTS; offset += 500) {
          const list = Array.from({ length: Math.min(500, EVENTS - offset) }, (_, n) => ({ kind: 'order.paid', resourceId: newId(), data: { order_id: `o${offset + n}`, order_number: String(offset + n), total: 10, currency: 'USD' } }))
          await db.transaction((tx) => writeEvents(tx, list))
        }
        await waitUntil(() => receiver.arrivals.size >= EVENTS)
        const deliveries = EVENTS / ((now() - started) / 1000)
        results.rounds.push({ noopJobsPerSecond: noop, deliveriesPerSecond: deliveries, ratio: deliveries / noop })
        console.log(`  [${round}/${ROUNDS}] no-op ${noop.toFixed(0)} jobs/s, deliveries ${deliveries.toFixed(0)}/s = ${((100 * deliveries) / noop).toFixed(1)} %`)
      } finally {
        await worker.stop()
      }
    }
    results.ratio = median(results.rounds.map((r) => r.ratio))
    results.noopJobsPerSecond = median(results.rounds.map((r) => r.noopJobsPerSecond))
    results.deliveriesPerSecond = median(results.rounds.map((r) => r.deliveriesPerSecond))
    console.log(`  median: no-op ${results.noopJobsPerSecond.toFixed(0)} jobs/s, deliveries ${results.deliveriesPerSecond.toFixed(0)}/s, ratio ${(100 * results.ratio).toFixed(1)} %`)

    const worker = startWorker(url)
    await workerConnected(sql)
    await settleQueue(sql)
    try {
      // Latency: single events, one per transaction, on an idle worker.
      const latencies = []
      for (let n = 0; n < LATENCY_EVENTS; n++) {
        const [id] = await db.transaction((tx) => writeEvents(tx, [{ kind: 'order.paid', resourceId: newId(), data: { n } }]))
        const committed = now()
        await waitUntil(() => receiver.arrivals.has(id), 10_000)
        latencies.push(receiver.arrivals.get(id) - committed)
        await sleep(10)
      }
      latencies.sort((a, b) => a - b)
      results.latencyMs = { p50: quantile(latencies, 0.5), p90: quantile(latencies, 0.9), p99: quantile(latencies, 0.99) }
      console.log(`  event to delivery          p50 ${results.latencyMs.p50.toFixed(1)} ms, p90 ${results.latencyMs.p90.toFixed(1)} ms, p99 ${results.latencyMs.p99.toFixed(1)} ms`)
    } finally {
      await worker.stop()
    }
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
  mkdirSync(RESULTS_DIR, { recursive: true })
  writeFileSync(join(RESULTS_DIR, `webhooks-${results.startedAt.replaceAll(':', '-')}.json`), `${JSON.stringify(results, null, 2)}\n`)
  process.exit(targets.every(([, pass]) => pass) ? 0 : 1)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
