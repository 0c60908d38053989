/**
 * Fault injection: PostgreSQL stopped and started again under a running API (503 meanwhile, then
 * it recovers by itself), and an API process killed (SIGKILL) in the middle of checkouts (no half
 * order: every order whole, with its payment and events, and the stock matching the orders).
 */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { request } from 'undici'
import { afterAll, describe, expect, inject, it } from 'vitest'
import { createDb, createUser, EMBEDDED_DEFAULT_PORT, migrate, openDatabase } from '@commerce/db'
import { createTestDatabase } from '@commerce/db/testing'
import { hashPassword } from '@commerce/domain'
import { buildApp } from '../src/app.js'
import { testConfig, TEST_SCRYPT_COST } from './helpers.js'
import { startApi, stopProcess } from './processes.js'

const cleanups: (() => Promise<void>)[] = []
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
})

async function adminToken(databaseUrl: string, base: string) {
  const handle = createDb({ url: databaseUrl, poolMax: 1 })
  await createUser(handle.db, { email: 'faults@example.com', passwordHash: await hashPassword('fault injection', TEST_SCRYPT_COST), role: 'admin' })
  await handle.close()
  const login = await request(`${base}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'faults@example.com', password: 'fault injection' }),
  })
  return ((await login.body.json()) as { token: string }).token
}

async function call(base: string, method: 'GET' | 'POST', path: string, token?: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await request(`${base}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  })
  const text = await response.body.text()
  return { status: response.statusCode, body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> & { error?: { code: string } } }
}

describe('PostgreSQL restarted under a running API', () => {
  it('answers 503 service_unavailable while it is down and recovers by itself when it is back', { timeout: 120_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'commerce-faults-'))
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }))
    // A cluster of its own, on a port of its own: the shared test server is not touched.
    const port = EMBEDDED_DEFAULT_PORT + 20 + Math.floor(Math.random() * 20)
    let cluster = await openDatabase({ dataDir, port })
    cleanups.push(() => cluster.stop())
    await migrate(cluster.url)
    const app = await buildApp(testConfig(cluster.url), { logger: false })
    cleanups.push(() => app.close())
    await app.listen({ port: 0, host: '127.0.0.1' })
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    const token = await adminToken(cluster.url, base)
    expect((await call(base, 'GET', '/ready')).status).toBe(200)

    await cluster.stop()
    const down = await Promise.all([
      call(base, 'GET', '/ready'),
      call(base, 'GET', '/api/v1/products'),
      call(base, 'POST', '/api/v1/products', token, { title: 'While down', price: 1, currency: 'USD' }),
    ])
    expect(down.map((answer) => [answer.status, answer.body.error?.code])).toEqual([
      [503, 'service_unavailable'],
      [503, 'service_unavailable'],
      [503, 'service_unavailable'],
    ])

    const url = cluster.url
    cluster = await openDatabase({ dataDir, port })
    // The same address again, so the API's pools reconnect to it unchanged.
    expect(cluster.url).toBe(url)
    let products = await call(base, 'GET', '/api/v1/products')
    for (let tries = 0; tries < 100 && products.status !== 200; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      products = await call(base, 'GET', '/api/v1/products')
    }
    expect(products.status).toBe(200)
    expect((await call(base, 'GET', '/ready')).status).toBe(200)
    expect((await call(base, 'POST', '/api/v1/products', token, { title: 'After', price: 1, currency: 'USD' })).status).toBe(201)
  })
})

describe('an API process killed in the middle of checkouts', () => {
  it('leaves no half order: each order is whole with its payment and events, and stock matches the orders', { timeout: 120_000 }, async () => {
    const database = await createTestDatabase(inject('adminUrl'), inject('template'))
    cleanups.push(() => database.drop())
    const api = await startApi(database.url)
    cleanups.push(() => stopProcess(api.process))
    const token = await adminToken(database.url, api.baseUrl)
    const product = await call(api.baseUrl, 'POST', '/api/v1/products', token, { title: 'Kettle', price: 20, currency: 'USD', inventory_quantity: 1000 })
    const address = { line1: '1 High St', city: 'Leeds', country: 'GB' }
    const checkouts: string[] = []
    for (let index = 0; index < 60; index++) {
      const cart = await call(api.baseUrl, 'POST', '/api/v1/carts', undefined, { currency: 'USD' })
      await call(api.baseUrl, 'POST', `/api/v1/carts/${String(cart.body.id)}/items`, undefined, { product_id: product.body.id, quantity: 1 + (index % 3) })
      const checkout = await call(api.baseUrl, 'POST', '/api/v1/checkouts', undefined, { cart_id: cart.body.id, email: 'k@example.com', shipping_address: address })
      checkouts.push(String(checkout.body.id))
    }

    let completed = 0
    const payments = checkouts.map((id) =>
      call(api.baseUrl, 'POST', `/api/v1/checkouts/${id}/complete`, undefined, { payment: { method: 'card', token: 'tok_visa' } }, {
        'idempotency-key': `kill-${randomUUID()}`,
      }).then(
        (answer) => (answer.status === 201 && completed++, answer.status),
        () => 'cut',
      ),
    )
    while (completed < 10) await new Promise((resolve) => setTimeout(resolve, 2))
    api.process.kill('SIGKILL')
    const outcomes = await Promise.all(payments)
    expect(outcomes).toContain('cut')

    const sql = postgres(database.url, { max: 1, onnotice: () => {} })
    cleanups.push(() => sql.end())
    const orders = await sql<{ id: string; total: number; lines: number; items_total: number; paid: number; events: string[] }[]>`
      select o.id, o.total_minor::int as total,
        (select count(*)::int from order_items i where i.order_id = o.id) as lines,
        (select coalesce(sum(i.total_minor), 0)::int from order_items i where i.order_id = o.id) as items_total,
        (select coalesce(sum(p.amount_minor), 0)::int from payments p where p.order_id = o.id and p.status = 'succeeded') as paid,
        array(select e.kind from events e where e.data->>'order_id' = o.id::text or e.data->>'id' = o.id::text order by e.id) as events
      from orders o`
    expect(orders.length).toBeGreaterThanOrEqual(10)
    for (const order of orders) {
      // No tax rate and no shipping method here: the total is the line's.
      expect(order).toMatchObject({ lines: 1, items_total: order.total, paid: order.total })
      expect(order.events).toEqual(expect.arrayContaining(['order.created', 'payment.succeeded', 'order.paid']))
    }
    const [stock] = await sql<{ left: number; sold: number; closed: number }[]>`
      select (select inventory_quantity from products where id = ${String(product.body.id)}) as left,
        (select coalesce(sum(quantity), 0)::int from order_items) as sold,
        (select count(*)::int from checkouts where status = 'completed') as closed`
    expect(stock!.left + stock!.sold).toBe(1000)
    expect(stock!.closed).toBe(orders.length)
  })
})
