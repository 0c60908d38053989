/**
 * The admin dashboard's first load on the benchmark catalog (100,000 products) in Debian's
 * Chromium, and the size of what it downloads. A copy of the catalog (`bench_admin`, dropped at
 * the end) gets an admin account and ORDER_COUNT orders placed through the API; the real API
 * process serves the built dashboard at /admin/.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_catalog node bench/admin-load.js
 *
 * Each round is a new browser profile (nothing cached): open /admin/ until the sign-in form shows,
 * sign in until the orders list shows its rows, open the products until their rows show; then a
 * reload with the files cached (signed in already) until the orders show again. Medians of ROUNDS.
 */
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, gzipSync } from 'node:zlib'
import postgres from 'postgres'
import { createClient } from '@commerce/client'
import { createDb, createUser } from '@commerce/db'
import { hashPassword } from '@commerce/domain'

const require = createRequire(fileURLToPath(new URL('../apps/admin/package.json', import.meta.url)))
const { chromium } = require('playwright-core')

const ROUNDS = Number(process.env.ROUNDS ?? 5)
const ORDER_COUNT = 300
const ADMIN = { email: 'bench-admin@example.com', password: 'a long benchmark password' }
const ASSETS = fileURLToPath(new URL('../apps/admin/dist/assets/', import.meta.url))
const API_MAIN = fileURLToPath(new URL('../apps/api/dist/main.js', import.meta.url))
const CHROMIUM_FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run']

if (!process.env.DATABASE_URL) throw new Error('DATABASE_URL: the seeded benchmark catalog (bench/seed.js)')

// What a browser downloads: every asset, raw and compressed as a server or CDN would send it.
const files = readdirSync(ASSETS).map((name) => {
  const bytes = readFileSync(join(ASSETS, name))
  return { name, raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length, brotli: brotliCompressSync(bytes).length }
})
const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`
for (const file of files) console.log(`${file.name}: ${kb(file.raw)} raw, ${kb(file.gzip)} gzip, ${kb(file.brotli)} brotli`)

// A copy of the catalog, so that the orders placed here never reach the other benchmarks' data.
const catalog = new URL(process.env.DATABASE_URL)
const server = postgres(Object.assign(new URL(catalog), { pathname: '/postgres' }).toString(), { max: 1, onnotice: () => {} })
await server.unsafe('drop database if exists bench_admin with (force)')
await server.unsafe(`create database bench_admin template ${catalog.pathname.slice(1)}`)
const databaseUrl = Object.assign(new URL(catalog), { pathname: '/bench_admin' }).toString()
const handle = createDb({ url: databaseUrl, poolMax: 1 })
await createUser(handle.db, { email: ADMIN.email, passwordHash: await hashPassword(ADMIN.password, 1024), role: 'admin' })
await handle.close()

const port = await new Promise((resolve) => {
  const probe = createServer().listen(0, '127.0.0.1', () => {
    const { port } = probe.address()
    probe.close(() => resolve(port))
  })
})
const baseUrl = `http://localhost:${port}`
const api = spawn(process.execPath, [API_MAIN], {
  env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), HOST: '127.0.0.1', JWT_SECRET: 'bench-admin-secret-bench-admin-secret-0123456789', RATE_LIMIT_MAX: '1000000', LOG_LEVEL: 'warn' },
  stdio: 'inherit',
})
for (let tries = 0; !(await fetch(`${baseUrl}/health`).then((response) => response.ok, () => false)); tries++) {
  if (tries > 300) throw new Error('the API did not start')
  await new Promise((resolve) => setTimeout(resolve, 100))
}

const shopper = createClient({ baseUrl })
const { products } = await shopper.listProducts({ per_page: 50 })
const address = { first_name: 'Ada', last_name: 'Lovelace', line1: '12 St James Sq', city: 'London', postal_code: 'SW1Y 4JH', country: 'GB' }
for (let placed = 0; placed < ORDER_COUNT; placed++) {
  const product = products[placed % products.length]
  const cart = await shopper.createCart({ currency: product.currency })
  await shopper.addCartItem(cart.id, { product_id: product.id, quantity: 1 })
  const checkout = await shopper.createCheckout({ cart_id: cart.id, email: `shopper${placed}@example.com`, shipping_address: address })
  await shopper.completeCheckout(checkout.id, { payment: { method: 'card', token: 'tok_visa' } })
}
console.log(`${ORDER_COUNT} orders placed; ${ROUNDS} rounds`)

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_FLAGS })
const rounds = []
const since = (start) => Math.round(performance.now() - start)
try {
  for (let round = 0; round < ROUNDS; round++) {
    const context = await browser.newContext({ viewport: { width: 1366, height: 900 } })
    const page = await context.newPage()
    let listReads = 0
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/api/v1/orders') listReads++
    })
    let start = performance.now()
    await page.goto(`${baseUrl}/admin/`)
    await page.getByRole('button', { name: 'Sign in' }).waitFor()
    const signInShown = since(start)
    const paint = await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null)

    await page.getByLabel('Email').fill(ADMIN.email)
    await page.getByLabel('Password').fill(ADMIN.password)
    start = performance.now()
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.locator('tbody tr').first().waitFor()
    const ordersShown = since(start)
    // What the orders list asked in its first two seconds: one read, unless something made it stale.
    await page.waitForTimeout(2000)
    const ordersReads = listReads

    start = performance.now()
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Products' }).click()
    await page.locator('tbody tr').first().waitFor()
    const productsShown = since(start)

    start = performance.now()
    await page.goto(`${baseUrl}/admin/#/orders`)
    await page.reload()
    await page.locator('tbody tr').first().waitFor()
    const warmReload = since(start)

    rounds.push({ signInShown, paint: paint && Math.round(paint), ordersShown, ordersReads, productsShown, warmReload })
    console.log(
      `[${round + 1}/${ROUNDS}] sign-in form ${signInShown} ms (first paint ${rounds.at(-1).paint} ms), orders after sign-in ${ordersShown} ms ` +
        `(${ordersReads} reads of the list), products ${productsShown} ms, warm reload to orders ${warmReload} ms`,
    )
    await context.close()
  }
} finally {
  await browser.close()
  api.kill('SIGTERM')
  await new Promise((resolve) => api.once('exit', resolve))
  await server.unsafe('drop database if exists bench_admin with (force)')
  await server.end()
}

const median = (key) => rounds.map((row) => row[key]).sort((a, b) => a - b)[Math.floor(rounds.length / 2)]
console.log(
  `median: sign-in form ${median('signInShown')} ms (first paint ${median('paint')} ms), orders after sign-in ${median('ordersShown')} ms ` +
    `(${median('ordersReads')} reads of the list), ` +
    `products ${median('productsShown')} ms, warm reload ${median('warmReload')} ms`,
)
