/**
 * Checkout against a payment provider that takes its time (`pnpm build && node bench/slow-provider.js`):
 * the API with the Stripe adapter (official SDK) pointed at the fake Stripe API, which answers
 * every call after BENCH_PROVIDER_LATENCY_MS (200). No lock is held while the provider decides, so
 * (1) at 64 connections the throughput is bounded by the provider's latency, close to
 * 64 / 0.2 s = 320 checkouts/s, not by a lock; (2) 50 concurrent checkouts of ONE product complete
 * in about one provider latency, not fifty; (3) 50 concurrent checkouts of one product with 7 in
 * stock give exactly 7 orders, as fast.
 *
 * Environment: DATABASE_URL (a server: the bench creates and drops `commerce_bench_payments`
 * there), else the embedded PostgreSQL; BENCH_PROVIDER_LATENCY_MS (200), BENCH_DURATION (10 s).
 */
import { spawn } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import postgres from 'postgres'
import { startFakeStripe } from '@commerce/payments/fake-stripe'
import { openScratchDatabase } from './scratch-database.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const LATENCY_MS = Number(process.env.BENCH_PROVIDER_LATENCY_MS ?? 200)
const DURATION = Number(process.env.BENCH_DURATION ?? 10)
const CONNECTIONS = 64
const CHECKOUTS = 20_000
const ADDRESS = { line1: '1 Bench St', city: 'Bench', country: 'US' }

const freePort = () =>
  new Promise((resolve, reject) => {
    const server = createServer().once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

async function startApi(env) {
  const port = await freePort()
  const child = spawn(process.execPath, [join(ROOT, 'apps/api/dist/main.js')], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', NODE_ENV: 'production', LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '100000000', JWT_SECRET: randomBytes(32).toString('hex') },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  const base = `http://127.0.0.1:${port}`
  for (let tries = 0; tries < 300; tries++) {
    if (await fetch(`${base}/health`).then((r) => r.ok, () => false)) return { base, stop: () => child.kill('SIGTERM') }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  child.kill('SIGKILL')
  throw new Error('the API did not start')
}

/** Open checkouts of one unit each, straight into the database, for `productIds` in turn. */
async function makeCheckouts(sql, productIds, count) {
  const rows = await sql`
    with carts_made as (
      insert into carts (id, currency, email, shipping_address)
      select gen_random_uuid(), 'USD', 'bench@example.com', ${sql.json(ADDRESS)} from generate_series(1, ${count}) returning id),
    numbered as (select id, row_number() over () as n from carts_made),
    items as (
      insert into cart_items (id, cart_id, product_id, quantity)
      select gen_random_uuid(), id, (${productIds}::uuid[])[1 + (n % ${productIds.length})], 1 from numbered)
    insert into checkouts (id, cart_id, billing_address) select gen_random_uuid(), id, ${sql.json(ADDRESS)} from numbered
    returning id`
  return rows.map((row) => row.id)
}

async function makeProducts(sql, count, stock) {
  const rows = await sql`
    insert into products (id, title, slug, price_minor, currency, inventory_quantity)
    select gen_random_uuid(), 'Bench ' || n, 'bench-' || n || '-' || ${randomUUID()}, 1999, 'USD', ${stock}
    from generate_series(1, ${count}) as n returning id`
  return rows.map((row) => row.id)
}

const complete = (base, id) =>
  fetch(`${base}/api/v1/checkouts/${id}/complete`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': `bench-${randomUUID()}` },
    body: JSON.stringify({ payment: { method: 'card', token: 'pm_card_visa' } }),
  }).then((response) => response.status)

/** `n` checkouts of one product at once: the wall time and the answers. */
async function burst(base, sql, n, stock) {
  const [product] = await makeProducts(sql, 1, stock)
  const ids = await makeCheckouts(sql, [product], n)
  const started = performance.now()
  const statuses = await Promise.all(ids.map((id) => complete(base, id)))
  const ms = performance.now() - started
  const counts = {}
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1
  const [{ orders }] = await sql`select count(*)::int as orders from order_items where product_id = ${product}`
  return { ms: Math.round(ms), counts, orders }
}

const database = await openScratchDatabase('commerce_bench_payments')
const fake = await startFakeStripe({ latencyMs: LATENCY_MS })
const sql = postgres(database.url, { max: 2, onnotice: () => {} })
const api = await startApi({
  DATABASE_URL: database.url,
  PAYMENT_PROVIDER: 'stripe',
  STRIPE_SECRET_KEY: 'sk_test_bench',
  STRIPE_WEBHOOK_SECRET: 'whsec_bench',
  STRIPE_API_BASE: fake.url,
})
try {
  console.log(`bench: provider latency ${LATENCY_MS} ms (the fake Stripe API, through the official SDK)`)
  const products = await makeProducts(sql, 200, 100_000_000)
  const ids = await makeCheckouts(sql, products, CHECKOUTS)
  let next = 0
  const result = await autocannon({
    url: api.base,
    connections: CONNECTIONS,
    duration: DURATION,
    timeout: 10,
    requests: [
      {
        setupRequest: (request) => ({
          ...request,
          method: 'POST',
          path: `/api/v1/checkouts/${ids[next++]}/complete`,
          headers: { 'content-type': 'application/json', 'idempotency-key': `bench-${randomUUID()}` },
          body: JSON.stringify({ payment: { method: 'card', token: 'pm_card_visa' } }),
        }),
      },
    ],
  })
  const ceiling = CONNECTIONS / (LATENCY_MS / 1000)
  console.log(
    `checkouts at ${CONNECTIONS} connections: ${Math.round(result.requests.average)} req/s (${((result.requests.average / ceiling) * 100).toFixed(1)} % of ${ceiling} = ${CONNECTIONS} / ${LATENCY_MS} ms), ` +
      `p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, non-2xx ${result.non2xx}, errors ${result.errors}`,
  )
  const plenty = await burst(api.base, sql, 50, 1000)
  console.log(`50 concurrent checkouts of one product: ${plenty.ms} ms (${(plenty.ms / LATENCY_MS).toFixed(1)} provider latencies), answers ${JSON.stringify(plenty.counts)}, orders ${plenty.orders}`)
  const seven = await burst(api.base, sql, 50, 7)
  console.log(`50 concurrent checkouts of one product with 7 in stock: ${seven.ms} ms, answers ${JSON.stringify(seven.counts)}, orders ${seven.orders}`)
} finally {
  api.stop()
  await sql.end()
  await fake.close()
  await new Promise((resolve) => setTimeout(resolve, 500))
  await database.drop()
}
