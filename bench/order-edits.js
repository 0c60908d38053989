/**
 * Order edits (`pnpm build && node bench/order-edits.js`): paid orders of two lines each, then
 * every order previewed and then edited once (one unit of a line cancelled and refunded through
 * the test provider, a line added), with BENCH_CONNECTIONS requests in flight, each on its own
 * order. Reports each step's throughput and p50/p99 latency.
 *
 * Environment: DATABASE_URL (a server: the bench creates and drops `commerce_bench_order_edits`
 * there), else the embedded PostgreSQL; BENCH_ORDERS (default 2000), BENCH_CONNECTIONS (default 16).
 * Results go to bench/results/order-edits-<timestamp>.json.
 */
import { execFileSync, spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Pool } from 'undici'
import { openScratchDatabase } from './scratch-database.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const API_MAIN = join(ROOT, 'apps/api/dist/main.js')
const RESULTS_DIR = join(ROOT, 'bench/results')
const ORDERS = Number(process.env.BENCH_ORDERS ?? 2000)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16)
const JWT_SECRET = 'bench-secret-bench-secret-bench-secret-0123'
const ADDRESS = { first_name: 'Ada', last_name: 'Lovelace', line1: '12 St James Sq', city: 'London', postal_code: 'SW1Y 4JH', country: 'GB' }

async function freePort() {
  const server = createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

async function waitForReady(base) {
  for (let tries = 0; tries < 300; tries++) {
    try {
      if ((await fetch(`${base}/ready`)).ok) return
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error('the API did not become ready')
}

/** Runs `count` requests made by `request(i)` with CONNECTIONS in flight; the latencies and the rate. */
async function measure(pool, count, request) {
  const latencies = []
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < count) {
        const index = next++
        const begun = performance.now()
        const response = await pool.request(request(index))
        const text = await response.body.text()
        if (response.statusCode >= 300) throw new Error(`${response.statusCode}: ${text}`)
        latencies.push(performance.now() - begun)
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  const at = (share) => Number(latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * share))].toFixed(1))
  return { requests: count, per_second: Math.round(count / seconds), p50_ms: at(0.5), p99_ms: at(0.99) }
}

async function main() {
  const scratch = await openScratchDatabase('commerce_bench_order_edits')
  execFileSync(process.execPath, [join(ROOT, 'apps/cli/bin/run.js'), 'users', 'create', '--email', 'bench-admin@example.com',
    '--password', 'bench admin password', '--role', 'admin'], { env: { ...process.env, DATABASE_URL: scratch.url, SCRYPT_COST: '1024' }, stdio: 'ignore' })
  const port = await freePort()
  const api = spawn(process.execPath, [API_MAIN], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: scratch.url, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', JWT_SECRET, RATE_LIMIT_MAX: '10000000' },
    stdio: ['ignore', 'ignore', 'inherit'],
  })
  const base = `http://127.0.0.1:${port}`
  const pool = new Pool(base, { connections: CONNECTIONS })
  try {
    await waitForReady(base)
    const login = await pool.request({
      method: 'POST',
      path: '/api/v1/auth/login',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'bench-admin@example.com', password: 'bench admin password' }),
    })
    const { token } = await login.body.json()
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
    const post = async (path, body, extra = {}) => {
      const response = await pool.request({ method: 'POST', path, headers: { ...headers, ...extra }, body: JSON.stringify(body) })
      const json = await response.body.json()
      if (response.statusCode >= 300) throw new Error(`${path}: ${response.statusCode} ${JSON.stringify(json)}`)
      return json
    }
    const [mug, plate, bowl] = await Promise.all(
      [['Mug', 12.99], ['Plate', 7.49], ['Bowl', 9.95]].map(([title, price]) =>
        post('/api/v1/products', { title, price, currency: 'GBP', inventory_quantity: 1_000_000 }),
      ),
    )

    // Paid orders: an admin's order of 3 mugs and a plate, paid by the test provider.
    await measure(pool, ORDERS, (index) => ({
      method: 'POST',
      path: '/api/v1/orders',
      headers,
      body: JSON.stringify({
        email: `buyer-${index}@example.com`,
        currency: 'GBP',
        items: [{ product_id: mug.id, quantity: 3 }, { product_id: plate.id, quantity: 1 }],
        shipping_address: ADDRESS,
      }),
    }))
    const orders = []
    for (let page = 1; orders.length < ORDERS; page++) {
      const response = await pool.request({ method: 'GET', path: `/api/v1/orders?per_page=100&page=${page}`, headers })
      orders.push(...(await response.body.json()).orders)
    }
    const paying = await measure(pool, orders.length, (index) => ({
      method: 'POST',
      path: `/api/v1/orders/${orders[index].id}/payments`,
      headers: { ...headers, 'idempotency-key': `bench-${randomUUID()}` },
      body: JSON.stringify({ method: 'card', token: 'tok_visa' }),
    }))

    const editOf = (order) =>
      JSON.stringify({ lines: [{ line_id: order.items.find((item) => item.product_id === mug.id).id, quantity: 2 }], add: [{ product_id: bowl.id, quantity: 1 }] })
    const preview = await measure(pool, orders.length, (index) => ({
      method: 'POST',
      path: `/api/v1/orders/${orders[index].id}/edits/preview`,
      headers,
      body: editOf(orders[index]),
    }))
    const commit = await measure(pool, orders.length, (index) => ({
      method: 'POST',
      path: `/api/v1/orders/${orders[index].id}/edits`,
      headers: { ...headers, 'idempotency-key': `bench-${randomUUID()}` },
      body: editOf(orders[index]),
    }))
    const results = { orders: orders.length, connections: CONNECTIONS, cpus: os.cpus().length, pay: paying, preview, commit }
    console.log(JSON.stringify(results, null, 2))
    mkdirSync(RESULTS_DIR, { recursive: true })
    writeFileSync(join(RESULTS_DIR, `order-edits-${new Date().toISOString().replace(/[:.]/g, '-')}.json`), `${JSON.stringify(results, null, 2)}\n`)
  } finally {
    await pool.close()
    api.kill('SIGTERM')
    await new Promise((resolve) => api.once('exit', resolve))
    await scratch.drop()
  }
}

await main()
