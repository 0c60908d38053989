/**
 * CPU per request, for comparing builds on a busy machine: starts an API build, sends a fixed
 * number of requests of one scenario with autocannon, and reports the CPU time the API process
 * and this database's PostgreSQL backends spent per request (from /proc, so Linux only), with the
 * throughput. Throughput on a shared machine moves with everyone else's load; CPU per request
 * moves much less, so two builds run in turns compare on it (bench/README.md, 2026-11-26).
 *
 *   DATABASE_URL=postgres://…/bench_catalog node bench/cpu.js detail,list,category
 *
 * The database must be seeded (run.js seeds it). Scenarios: pk (the reference app instead of the
 * API), detail, list, category, cart_get, cart_add, checkout. Environment: BENCH_API_MAIN (another build),
 * BENCH_REQUESTS (per repetition, 10,000), BENCH_REPEAT (3), BENCH_CONNECTIONS (64), BENCH_CARTS
 * (2,000, written straight into the database as run.js does), BENCH_NODE_ARGS (e.g. --cpu-prof).
 * `checkout` completes open checkouts of one unit, written straight into the database (one per
 * request, with the `test` provider).
 *
 * BENCH_API_MAIN_B: a second build, measured side by side with the first under the same load at
 * the same time (half the connections each, its own half of the carts and checkouts), so that the
 * machine's swings fall on both alike; the PostgreSQL figure is then the two builds' together.
 */
import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import postgres from 'postgres'
import { cpuMs, databaseCpuMs } from './process-cpu.js'
import { CART_LINES, CHECKOUT_PRODUCTS, CHECKOUT_TABLES, PROMO_CURRENCY, createBenchCarts, createBenchCheckouts, createBenchPromotions } from './shop.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const url = process.env.DATABASE_URL
if (!url) throw new Error('DATABASE_URL is required (a database seeded by bench/run.js)')
const database = new URL(url).pathname.slice(1)
const scenarios = (process.argv[2] ?? 'detail').split(',')
const number = (name, fallback) => Number(process.env[name] ?? fallback)
const REQUESTS = number('BENCH_REQUESTS', 10_000)
const REPEAT = number('BENCH_REPEAT', 3)
const CONNECTIONS = number('BENCH_CONNECTIONS', 64)
const CARTS = number('BENCH_CARTS', 2_000)

const reference = scenarios.includes('pk')
if (reference && scenarios.length > 1) throw new Error('pk runs the reference app: measure it on its own')
const scripts = reference
  ? { reference: join(ROOT, 'bench/reference-app.js') }
  : { api: process.env.BENCH_API_MAIN ?? join(ROOT, 'apps/api/dist/main.js'), ...(process.env.BENCH_API_MAIN_B ? { api_b: process.env.BENCH_API_MAIN_B } : {}) }
const servers = Object.entries(scripts).map(([label, script], index) => {
  const port = 30_000 + Math.floor(Math.random() * 10_000) + index * 10_000
  const server = spawn(process.execPath, [...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []), script], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MAX: '100000000',
      JWT_SECRET: 'cpu-bench-'.repeat(4),
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  return { label, script, server, base: `http://127.0.0.1:${port}`, index }
})
const sql = postgres(url, { max: 1, onnotice: () => {} })
try {
  for (const { script, base } of servers) {
    for (let attempt = 0; ; attempt++) {
      if (attempt > 300) throw new Error(`${script} did not answer /health`)
      const healthy = await fetch(`${base}/health`).then((response) => response.ok, () => false)
      if (healthy) break
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }
  const ids = (await sql`select id from products where is_active order by md5(id::text) limit 2000`).map((row) => row.id)
  const [{ slug }] = await sql`
    select c.slug from categories c join product_categories pc on pc.category_id = c.id
    where not exists (select 1 from categories child where child.parent_id = c.id)
    group by c.slug order by count(*) desc, c.slug limit 1`
  let carts = [], lineProducts = [], promoCarts = [], checkouts = [], promoCheckouts = []
  const wants = (key) => scenarios.includes(key)
  // As run.js: each build its share of CARTS carts and of the checkouts one per request.
  const checkoutCount = Math.ceil((REQUESTS * REPEAT + 3_000) * 1.1 * servers.length)
  if (wants('cart_get_promo') || wants('checkout_promo')) {
    await createBenchPromotions(sql, [...ids.slice(0, CART_LINES), ...ids.slice(CART_LINES + 2 * CHECKOUT_PRODUCTS, CART_LINES + 3 * CHECKOUT_PRODUCTS)])
  }
  if (wants('cart_get') || wants('cart_add')) ({ cartIds: carts, lineProducts } = await createBenchCarts(sql, ids, { count: CARTS }))
  if (wants('cart_get_promo')) ({ cartIds: promoCarts } = await createBenchCarts(sql, ids, { count: CARTS, currency: PROMO_CURRENCY }))
  if (wants('checkout')) ({ checkoutIds: checkouts } = await createBenchCheckouts(sql, ids, { count: checkoutCount }))
  if (wants('checkout_promo')) {
    ;({ checkoutIds: promoCheckouts } = await createBenchCheckouts(sql, ids, { first: CART_LINES + 2 * CHECKOUT_PRODUCTS, currency: PROMO_CURRENCY, count: checkoutCount }))
  }
  if (checkouts.length + promoCheckouts.length > 0) await sql.unsafe(`vacuum (analyze) ${CHECKOUT_TABLES.join(', ')}`)
  const complete = (ids) => ({
    ids,
    path: (id) => `/api/v1/checkouts/${id}/complete`,
    body: () => ({ payment: { method: 'card', token: 'tok_visa' } }),
    headers: () => ({ 'idempotency-key': `cpu-${randomUUID()}` }),
  })
  const paths = {
    pk: { ids, path: (id) => `/pk/products/${id}` },
    detail: { ids, path: (id) => `/api/v1/products/${id}` },
    list: { path: () => '/api/v1/products' },
    category: { path: () => `/api/v1/products?category=${encodeURIComponent(slug)}` },
    cart_get: { ids: carts, path: (id) => `/api/v1/carts/${id}` },
    cart_get_promo: { ids: promoCarts, path: (id) => `/api/v1/carts/${id}` },
    cart_add: { ids: carts, path: (id) => `/api/v1/carts/${id}/items`, body: (n) => ({ product_id: lineProducts[n % CART_LINES], quantity: 1 }) },
    checkout: complete(checkouts),
    checkout_promo: complete(promoCheckouts),
  }
  // Each build its own share of the ids (every other one with two builds): two never want one cart.
  const cursors = servers.map((server) => server.index)
  const load = ({ base, index }, key, amount) => {
    const scenario = paths[key]
    if (!scenario) throw new Error(`unknown scenario ${key}`)
    const setupRequest = (request) => {
      const n = cursors[index]
      cursors[index] += servers.length
      request.path = scenario.path(scenario.ids?.[n % scenario.ids.length])
      if (scenario.body) {
        request.method = 'POST'
        request.headers = { ...request.headers, 'content-type': 'application/json', ...scenario.headers?.() }
        request.body = JSON.stringify(scenario.body(n))
      }
      return request
    }
    return autocannon({ url: base, connections: Math.ceil(CONNECTIONS / servers.length), amount, timeout: 10, requests: [{ setupRequest }] })
  }
  const [{ statements }] = await sql`select exists (select from pg_extension where extname = 'pg_stat_statements') as statements`
  for (const key of scenarios) {
    await Promise.all(servers.map((server) => load(server, key, Math.min(REQUESTS, 3_000)))) // warm-up
    for (let round = 1; round <= REPEAT; round++) {
      if (statements) await sql`select pg_stat_statements_reset()`
      const [before, db] = [servers.map(({ server }) => cpuMs(server.pid)), databaseCpuMs(database)]
      const results = await Promise.all(servers.map((server) => load(server, key, REQUESTS)))
      const total = results.reduce((sum, result) => sum + result.requests.total, 0)
      const perRequest = (ms, n) => ((1000 * ms) / n).toFixed(1)
      const processes = servers.map(({ label, server }, i) => `${label} ${perRequest(cpuMs(server.pid) - before[i], results[i].requests.total)} µs/req`).join('\t')
      const [first] = results
      console.log(
        `${key}\t${processes}\tpostgres ${perRequest(databaseCpuMs(database) - db, total)} µs/req` +
          `\t${Math.round(first.requests.average)} req/s\tp99 ${first.latency.p99} ms\tnon-2xx ${results.reduce((sum, result) => sum + result.non2xx, 0)}, errors ${results.reduce((sum, result) => sum + result.errors, 0)}` +
          `\tload ${readFileSync('/proc/loadavg', 'utf8').split(' ')[0]}`,
      )
      if (statements && round === REPEAT) await printStatements(total)
    }
  }
} finally {
  await sql.end({ timeout: 5 })
  for (const { server } of servers) server.kill('SIGTERM')
}

/**
 * What PostgreSQL ran for the last repetition's requests (pg_stat_statements, where the database
 * has it: it must be in shared_preload_libraries): each statement's calls and execution time per
 * request, the costliest first.
 */
async function printStatements(requests) {
  const rows = await sql`
    select calls, total_exec_time, total_plan_time, plans, rows, regexp_replace(query, '[[:space:]]+', ' ', 'g') as query
    from pg_stat_statements
    where dbid = (select oid from pg_database where datname = current_database()) and query not like '%pg_stat_statements%'
    order by total_exec_time desc`
  const perRequest = (value) => (value / requests).toFixed(2)
  const shown = rows.filter((row) => row.calls >= requests / 100)
  const total = shown.reduce((sum, row) => sum + row.total_exec_time, 0)
  console.log(`  statements per request: ${perRequest(shown.reduce((sum, row) => sum + Number(row.calls), 0))}, executing ${perRequest(total * 1000)} µs`)
  for (const row of shown.slice(0, 25)) {
    console.log(`  ${perRequest(Number(row.calls)).padStart(6)} calls ${perRequest(row.total_exec_time * 1000).padStart(8)} µs ${perRequest(Number(row.rows)).padStart(7)} rows  ${row.query.slice(0, 150)}`)
  }
}
