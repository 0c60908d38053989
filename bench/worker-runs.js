/**
 * What the worker benchmarks share (webhooks.js, notifications.js): their settings from the
 * environment, our worker process started with them, the queue settled before a measurement, a
 * throughput run of one worker over a batch of events, single events' latency, the webhook
 * receiver and the webhook scenario itself, so both benchmarks measure deliveries the same way.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { newId, writeEvents } from '@commerce/db'
import { cpuMs, databaseCpuMs } from './process-cpu.js'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))
/** BENCH_WORKER_MAIN: another build's worker, to compare two builds in turns. */
const WORKER_MAIN = process.env.BENCH_WORKER_MAIN ?? join(ROOT, 'apps/worker/dist/main.js')
const RESULTS_DIR = join(ROOT, 'bench/results')
export const EVENTS = Number(process.env.BENCH_EVENTS ?? 5000)
export const CONCURRENCY = Number(process.env.BENCH_WORKER_CONCURRENCY ?? 16)
export const LATENCY_EVENTS = Number(process.env.BENCH_LATENCY_EVENTS ?? 300)
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
export const POOL_MAX = 10
/** Events per transaction in a throughput run. */
const BATCH = 500

export const now = () => performance.timeOrigin + performance.now()
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
export const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

export function quantile(sorted, q) {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
}

export async function waitUntil(condition, timeoutMs = 300_000) {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('timed out waiting')
    await sleep(5)
  }
}

/** A node process with BENCH_NODE_ARGS; `started` resolves when it logs 'worker started'. */
export function startProcess(script, env) {
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
  return { pid: child.pid, started, stop: async () => (child.kill('SIGTERM'), await exited) }
}

/** Our worker process with the benchmarks' settings, and `env` (e.g. SMTP_URL) on top. */
export function startWorker(url, env = {}) {
  return startProcess(WORKER_MAIN, {
    DATABASE_URL: url,
    WORKER_CONCURRENCY: String(CONCURRENCY),
    DATABASE_POOL_MAX: String(POOL_MAX),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    // Info would log every delivery, so 'worker started' is not awaited: its connections are.
    LOG_LEVEL: 'warn',
    ...env,
  })
}

export async function workerConnected(sql, database) {
  await waitUntil(async () => Number((await sql`select count(*) as n from pg_stat_activity where datname = ${database} and application_name = 'commerce-worker'`)[0].n) > 0)
  await sleep(500)
}

/** Every measurement starts from the same queue: empty, its dead rows vacuumed. */
export async function settleQueue(sql) {
  await waitUntil(async () => Number((await sql`select count(*) as n from graphile_worker._private_jobs`)[0].n) === 0)
  await sql`vacuum analyze graphile_worker._private_jobs`
}

/**
 * One worker's throughput: a fresh worker (with `env`) on a settled queue, then `count` events
 * (`eventOf(n)`) written at once in transactions of 500, until `arrivals` (cleared first) holds
 * `count` entries. Answers per second from the first write to the last arrival and from the
 * first arrival to the last, and the CPU time per event of the worker process and of the
 * database's PostgreSQL backends over the run.
 */
export async function throughputRun({ db, sql, url, database, env, count, eventOf, arrivals }) {
  const worker = startWorker(url, env)
  try {
    await workerConnected(sql, database)
    await settleQueue(sql)
    arrivals.clear()
    const cpuBefore = { worker: cpuMs(worker.pid), database: databaseCpuMs(database) }
    const started = now()
    for (let offset = 0; offset < count; offset += BATCH) {
      const list = Array.from({ length: Math.min(BATCH, count - offset) }, (_, n) => eventOf(offset + n))
      await db.transaction((tx) => writeEvents(tx, list))
    }
    await waitUntil(() => arrivals.size >= count)
    let [first, last] = [Infinity, -Infinity]
    for (const at of arrivals.values()) [first, last] = [Math.min(first, at), Math.max(last, at)]
    return {
      perSecond: count / ((last - started) / 1000),
      firstToLastPerSecond: (count - 1) / ((last - first) / 1000),
      workerCpuMsPerEvent: (cpuMs(worker.pid) - cpuBefore.worker) / count,
      databaseCpuMsPerEvent: (databaseCpuMs(database) - cpuBefore.database) / count,
    }
  } finally {
    await worker.stop()
  }
}

/**
 * Commit-to-arrival of `count` single events (`eventOf(n)`), one per transaction, 10 ms apart, on
 * an idle worker (with `env`); `arrivedAt(eventId, n)` answers when it arrived, or undefined.
 */
export async function singleEventLatencies({ db, sql, url, database, env, count, eventOf, arrivedAt }) {
  const worker = startWorker(url, env)
  try {
    await workerConnected(sql, database)
    await settleQueue(sql)
    const latencies = []
    for (let n = 0; n < count; n++) {
      const [id] = await db.transaction((tx) => writeEvents(tx, [eventOf(n)]))
      const committed = now()
      await waitUntil(() => arrivedAt(id, n) !== undefined, 10_000)
      latencies.push(arrivedAt(id, n) - committed)
      await sleep(10)
    }
    latencies.sort((a, b) => a - b)
    return { p50: quantile(latencies, 0.5), p90: quantile(latencies, 0.9), p99: quantile(latencies, 0.99) }
  } finally {
    await worker.stop()
  }
}

/** A webhook receiver that answers 200 at once and notes when each event id arrived. */
export async function startReceiver() {
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

/** The webhook scenario's subscription: every event, to the receiver. */
export async function subscribeReceiver(sql, receiver) {
  await sql`insert into webhooks (id, url, events, secret) values (gen_random_uuid(), ${receiver.url}, ${['*']}, 'whsec_YmVuY2ggc2VjcmV0IG9mIHRoaXJ0eS10d28gYnl0ZXMh')`
}

/** The webhook scenario's event: a small order.paid, with no email (so no notification either). */
const webhookEvent = (n) => ({ kind: 'order.paid', resourceId: newId(), data: { order_id: `o${n}`, order_number: String(n), total: 10, currency: 'USD' } })

/** Webhook deliveries per second of one worker: `count` events to the subscribed receiver. */
export function deliveriesRun({ db, sql, url, database, receiver, count }) {
  return throughputRun({ db, sql, url, database, env: {}, count, eventOf: webhookEvent, arrivals: receiver.arrivals })
}

/** Event-to-delivery latency of single events at the subscribed receiver. */
export function deliveryLatencies({ db, sql, url, database, receiver, count }) {
  const eventOf = (n) => ({ kind: 'order.paid', resourceId: newId(), data: { n } })
  return singleEventLatencies({ db, sql, url, database, env: {}, count, eventOf, arrivedAt: (id) => receiver.arrivals.get(id) })
}

/** Writes a run's results to bench/results/<name>-<timestamp>.json (not committed). */
export function writeResults(name, results) {
  mkdirSync(RESULTS_DIR, { recursive: true })
  writeFileSync(join(RESULTS_DIR, `${name}-${results.startedAt.replaceAll(':', '-')}.json`), `${JSON.stringify(results, null, 2)}\n`)
}
