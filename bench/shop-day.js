/**
 * A shop's day, whole flow (`pnpm build && node bench/shop-day.js`): shoppers arrive at a fixed
 * rate and browse (list, search, detail), fill carts and check out with a payment; an admin
 * updates products; a worker delivers every event as a webhook to a local receiver; WebSocket
 * listeners hear the events. Run with 1 API instance and then 2 (each its own process, one
 * worker, one PostgreSQL), reporting per step p50/p99, throughput, errors, the processes' RSS and
 * PostgreSQL's connections, and the scaling ratio of the two.
 *
 * Environment: DATABASE_URL (a server: the bench creates and drops `commerce_bench_shop_day`
 * there), else the embedded PostgreSQL; BENCH_RATE arrivals per second (default 60),
 * BENCH_DURATION seconds per run (default 30), BENCH_WS_CLIENTS (default 50),
 * BENCH_MAX_IN_FLIGHT shoppers at once before arrivals are turned away (default 256),
 * BENCH_WARMUP seconds of arrivals before measuring (default 10).
 * Results go to bench/results/shop-day-<timestamp>.json.
 */
import { execFileSync, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { createServer as createNetServer } from 'node:net'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import postgres from 'postgres'
import { Pool } from 'undici'
import WebSocket from 'ws'
import { openScratchDatabase } from './scratch-database.js'
import { COMMON_WORD, seed, stockUp } from './seed.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const API_MAIN = join(ROOT, 'apps/api/dist/main.js')
const WORKER_MAIN = join(ROOT, 'apps/worker/dist/main.js')
const RESULTS_DIR = join(ROOT, 'bench/results')
const RATE = Number(process.env.BENCH_RATE ?? 60)
const DURATION = Number(process.env.BENCH_DURATION ?? 30)
const WS_CLIENTS = Number(process.env.BENCH_WS_CLIENTS ?? 50)
const MAX_IN_FLIGHT = Number(process.env.BENCH_MAX_IN_FLIGHT ?? 256)
/** Seconds of arrivals before measuring: JIT, caches and prepared statements warm up. */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 10)
const JWT_SECRET = 'bench-secret-bench-secret-bench-secret-0123'
const ADDRESS = { first_name: 'Ada', last_name: 'Lovelace', line1: '12 St James Sq', city: 'London', postal_code: 'SW1Y 4JH', country: 'GB' }
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const pick = (list) => list[Math.floor(Math.random() * list.length)]

async function freePort() {
  const server = createNetServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

function startProcess(script, env) {
  const child = spawn(process.execPath, [script], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', JWT_SECRET, RATE_LIMIT_MAX: '10000000', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  return { child, stop: async () => (child.exitCode === null && child.kill('SIGTERM'), await exited) }
}

async function startApi(url) {
  const port = await freePort()
  const api = startProcess(API_MAIN, { DATABASE_URL: url, PORT: String(port), HOST: '127.0.0.1' })
  const base = `http://127.0.0.1:${port}`
  for (let tries = 0; !(await fetch(`${base}/health`).then((r) => r.ok, () => false)); tries++) {
    if (tries > 300) throw new Error('the API did not start')
    await sleep(100)
  }
  return { ...api, base, pool: new Pool(base, { connections: 64, pipelining: 1 }) }
}

/** Resident set size of a process, in MiB (Linux /proc). */
function rssMiB(pid) {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Number(match[1]) / 1024 : NaN
}

const quantile = (sorted, q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : NaN)

/** One run: `instances` API processes and one worker on the database, for DURATION seconds. */
async function run(url, instances, catalog) {
  const apis = []
  for (let index = 0; index < instances; index++) apis.push(await startApi(url))
  const worker = startProcess(WORKER_MAIN, { DATABASE_URL: url })
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  const database = new URL(url).pathname.slice(1)

  // The admin's token, signed in on the first instance (all share the secret).
  const login = await apis[0].pool.request({
    method: 'POST',
    path: '/api/v1/auth/login',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench-admin@example.com', password: 'bench admin password' }),
  })
  const { token } = await login.body.json()
  const admin = { authorization: `Bearer ${token}` }

  // Webhooks of every event to a receiver that answers at once.
  let delivered = 0
  const receiver = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      delivered++
      response.writeHead(200).end()
    })
  })
  await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  await sql`delete from webhooks`
  const hook = await apis[0].pool.request({
    method: 'POST',
    path: '/api/v1/webhooks',
    headers: { ...admin, 'content-type': 'application/json' },
    body: JSON.stringify({ url: `http://127.0.0.1:${receiver.address().port}/hook`, events: ['*'] }),
  })
  if (hook.statusCode !== 201) throw new Error(`webhook: ${hook.statusCode} ${await hook.body.text()}`)
  await hook.body.dump()

  // WebSocket listeners spread over the instances.
  let heard = 0
  const sockets = await Promise.all(
    Array.from({ length: WS_CLIENTS }, (_, index) =>
      new Promise((resolve, reject) => {
        const socket = new WebSocket(`${apis[index % instances].base.replace('http', 'ws')}/api/v1/ws`, { headers: admin })
        socket.on('message', (raw) => {
          const type = JSON.parse(String(raw)).type
          if (type === 'ready') resolve(socket)
          else if (type === 'event') heard++
        })
        socket.on('error', reject)
      }),
    ),
  )

  // The report's order: a shopper's way through the shop, then the admin.
  const steps = new Map(['list', 'search', 'detail', 'cart', 'add item', 'checkout', 'pay', 'admin update'].map((name) => [name, []]))
  let errors = 0
  const errorSamples = []
  // Sessions that arrived during the warm-up run the same way but are not counted.
  async function step(session, name, pool, options, expected) {
    const started = performance.now()
    try {
      const response = await pool.request({ ...options, headers: { 'content-type': 'application/json', ...options.headers } })
      const body = await response.body.text()
      if (response.statusCode !== expected) {
        if (!session.measured) return undefined
        errors++
        if (errorSamples.length < 5) errorSamples.push(`${name}: ${response.statusCode} ${body.slice(0, 200)}`)
        return undefined
      }
      return body ? JSON.parse(body) : undefined
    } catch (error) {
      if (!session.measured) return undefined
      errors++
      if (errorSamples.length < 5) errorSamples.push(`${name}: ${error.code ?? error.message}`)
      return undefined
    } finally {
      if (session.measured) steps.get(name).push(performance.now() - started)
    }
  }

  async function browse(session, pool) {
    await step(session, 'list', pool, { method: 'GET', path: `/api/v1/products?per_page=20&page=${1 + Math.floor(Math.random() * 50)}` }, 200)
    await step(session, 'search', pool, { method: 'GET', path: `/api/v1/products?search=${COMMON_WORD}&per_page=20` }, 200)
    await step(session, 'detail', pool, { method: 'GET', path: `/api/v1/products/${pick(catalog)}` }, 200)
  }

  async function purchase(session, pool) {
    const cart = await step(session, 'cart', pool, { method: 'POST', path: '/api/v1/carts', body: JSON.stringify({ currency: 'USD' }) }, 201)
    if (!cart) return
    const added = await step(session, 'add item', pool, {
      method: 'POST',
      path: `/api/v1/carts/${cart.id}/items`,
      body: JSON.stringify({ product_id: pick(catalog), quantity: 1 }),
    }, 201)
    if (!added) return
    const checkout = await step(session, 'checkout', pool, {
      method: 'POST',
      path: '/api/v1/checkouts',
      body: JSON.stringify({ cart_id: cart.id, email: 'ada@example.com', shipping_address: ADDRESS }),
    }, 201)
    if (!checkout) return
    await step(session, 'pay', pool, {
      method: 'POST',
      path: `/api/v1/checkouts/${checkout.id}/complete`,
      headers: { 'idempotency-key': `bench-${randomUUID()}` },
      body: JSON.stringify({ payment: { method: 'card', token: 'tok_visa' } }),
    }, 201)
  }

  async function adminUpdate(session, pool) {
    await step(session, 'admin update', pool, {
      method: 'PATCH',
      path: `/api/v1/products/${pick(catalog)}`,
      headers: admin,
      body: JSON.stringify({ price: Number((5 + Math.random() * 100).toFixed(2)) }),
    }, 200)
  }

  // Arrivals at a fixed rate, round-robin over the instances (a load balancer's view).
  let inFlight = 0
  let turnedAway = 0
  let sessions = 0
  let completed = 0
  const samples = { rss: [], workerRss: [], connections: [] }
  const sampler = setInterval(async () => {
    samples.rss.push(apis.reduce((sum, api) => sum + rssMiB(api.child.pid), 0))
    samples.workerRss.push(rssMiB(worker.child.pid))
    const [{ count }] = await sql`select count(*)::int as count from pg_stat_activity where datname = ${database}`
    samples.connections.push(count)
  }, 1000)
  let deliveredBefore = delivered
  let heardBefore = heard
  const started = performance.now()
  let measuredFrom = started
  const running = []
  const warmupArrivals = RATE * WARMUP
  for (let arrival = 0; arrival < RATE * (WARMUP + DURATION); arrival++) {
    const due = started + (arrival * 1000) / RATE
    const wait = due - performance.now()
    if (wait > 0) await sleep(wait)
    const session = { measured: arrival >= warmupArrivals }
    if (arrival === warmupArrivals) {
      measuredFrom = performance.now()
      deliveredBefore = delivered
      heardBefore = heard
      samples.rss.length = samples.workerRss.length = samples.connections.length = 0
    }
    if (inFlight >= MAX_IN_FLIGHT) {
      if (session.measured) turnedAway++
      continue
    }
    const pool = apis[arrival % instances].pool
    const roll = Math.random()
    const work = roll < 0.6 ? browse(session, pool) : roll < 0.9 ? purchase(session, pool) : adminUpdate(session, pool)
    inFlight++
    if (session.measured) sessions++
    running.push(work.finally(() => (inFlight--, session.measured && completed++)))
  }
  await Promise.all(running)
  const seconds = (performance.now() - measuredFrom) / 1000
  // Deliveries and WebSocket events still on their way: a moment to drain.
  const [{ events }] = await sql`select count(*)::int as events from events`
  for (let waited = 0; waited < 30_000 && delivered < events; waited += 200) await sleep(200)
  const expectedHeard = () => (delivered - deliveredBefore) * WS_CLIENTS
  for (let waited = 0; waited < 10_000 && heard - heardBefore < expectedHeard(); waited += 200) await sleep(200)
  clearInterval(sampler)

  const requests = [...steps.values()].reduce((sum, list) => sum + list.length, 0)
  const result = {
    instances,
    seconds: Number(seconds.toFixed(1)),
    arrivals_per_s: RATE,
    sessions,
    turned_away: turnedAway,
    sessions_per_s: Number((completed / seconds).toFixed(1)),
    requests_per_s: Number((requests / seconds).toFixed(1)),
    error_rate: Number((errors / Math.max(1, requests)).toFixed(4)),
    error_samples: errorSamples,
    steps: Object.fromEntries(
      [...steps].map(([name, list]) => {
        const sorted = [...list].sort((a, b) => a - b)
        return [name, { count: list.length, p50_ms: Number(quantile(sorted, 0.5).toFixed(1)), p99_ms: Number(quantile(sorted, 0.99).toFixed(1)) }]
      }),
    ),
    webhooks_delivered: delivered - deliveredBefore,
    websocket_events_heard: heard - heardBefore,
    api_rss_mib_max: Number(Math.max(...samples.rss).toFixed(0)),
    worker_rss_mib_max: Number(Math.max(...samples.workerRss).toFixed(0)),
    postgres_connections_max: Math.max(...samples.connections),
  }

  for (const socket of sockets) socket.close()
  await new Promise((resolve) => receiver.close(resolve))
  await Promise.all(apis.map(async (api) => (await api.pool.close(), await api.stop())))
  await worker.stop()
  await sql.end()
  return result
}

function print(result) {
  console.log(`\n${result.instances} API instance(s): ${result.sessions_per_s} sessions/s, ${result.requests_per_s} requests/s, ` +
    `errors ${(result.error_rate * 100).toFixed(2)} %, turned away ${result.turned_away}`)
  for (const [name, step] of Object.entries(result.steps)) {
    console.log(`  ${name.padEnd(13)} ${String(step.count).padStart(6)}  p50 ${String(step.p50_ms).padStart(7)} ms  p99 ${String(step.p99_ms).padStart(7)} ms`)
  }
  console.log(`  webhooks delivered ${result.webhooks_delivered}, WebSocket events heard ${result.websocket_events_heard} (${WS_CLIENTS} clients)`)
  console.log(`  RSS: API ${result.api_rss_mib_max} MiB (all instances), worker ${result.worker_rss_mib_max} MiB; PostgreSQL connections ${result.postgres_connections_max}`)
  for (const sample of result.error_samples) console.log(`  error: ${sample}`)
}

const scratch = await openScratchDatabase('commerce_bench_shop_day')
try {
  await seed(scratch.url, { log: (line) => console.log(line) })
  const sql = postgres(scratch.url, { max: 1, onnotice: () => {} })
  // Stock for every checkout of both runs.
  await sql`update products set is_active = true where id in (select id from products order by id limit 2000)`
  const catalog = (await sql`select id from products order by id limit 2000`).map((row) => row.id)
  await stockUp(sql, catalog, { units: 1_000_000 })
  await sql.end()
  execFileSync(process.execPath, [join(ROOT, 'apps/cli/bin/run.js'), 'users', 'create', '--email', 'bench-admin@example.com',
    '--password', 'bench admin password', '--role', 'admin'], { env: { ...process.env, DATABASE_URL: scratch.url, SCRYPT_COST: '1024' }, stdio: 'ignore' })

  console.log(`\nshop day: ${RATE} arrivals/s for ${DURATION} s after ${WARMUP} s of warm-up (60 % browse, 30 % purchase, 10 % admin update), ${WS_CLIENTS} WebSocket listeners, ${os.cpus().length} CPUs`)
  const one = await run(scratch.url, 1, catalog)
  print(one)
  const two = await run(scratch.url, 2, catalog)
  print(two)
  const ratio = Number((two.sessions_per_s / one.sessions_per_s).toFixed(2))
  console.log(`\nscaling ratio (2 instances / 1, sessions per second): ${ratio}`)
  mkdirSync(RESULTS_DIR, { recursive: true })
  const file = join(RESULTS_DIR, `shop-day-${new Date().toISOString().replace(/[:.]/g, '-')}.json`)
  writeFileSync(file, JSON.stringify({ rate: RATE, duration: DURATION, ws_clients: WS_CLIENTS, cpus: os.cpus().length, runs: [one, two], scaling_ratio: ratio }, null, 2))
  console.log(`results: ${file}`)
} finally {
  await scratch.drop()
}
