/**
 * Behind a transaction pooler (DATABASE_PGBOUNCER=true): no session settings are sent at connect,
 * and the WebSocket feed's LISTEN runs on its own connection to DATABASE_DIRECT_URL.
 */
import type { AddressInfo } from 'node:net'
import WebSocket from 'ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestContext, type TestContext } from './helpers.js'

let direct: TestContext
let pooled: TestContext

beforeAll(async () => {
  direct = await createTestContext()
  // Another spelling of the same server stands for the direct URL beside the pooler's.
  pooled = await createTestContext((url) => ({
    databasePgbouncer: true,
    databaseDirectUrl: Object.assign(new URL(url), { hostname: 'localhost' }).toString(),
  }))
})

afterAll(async () => {
  await Promise.all([direct?.close(), pooled?.close()])
})

const statementTimeout = async (ctx: TestContext) => ((await ctx.app.sql`show statement_timeout`)[0] as { statement_timeout: string }).statement_timeout

describe('DATABASE_PGBOUNCER and DATABASE_DIRECT_URL', () => {
  it('sets the statement timeout at connect normally, and sends no session setting through a pooler', async () => {
    expect(await statementTimeout(direct)).toBe('30s')
    // The server's default (here none): with PgBouncer it comes from ALTER ROLE … SET statement_timeout.
    expect(await statementTimeout(pooled)).toBe('0')
  })

  it('listens on its own connection to DATABASE_DIRECT_URL, and the WebSocket clients get the events', async () => {
    await pooled.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = pooled.app.server.address() as AddressInfo
    const admin = await pooled.signIn('admin')
    const socket = new WebSocket(`ws://127.0.0.1:${port}/api/v1/ws`, { headers: { authorization: `Bearer ${admin.token}` } })
    const events: { event: string; data: { id: string } }[] = []
    await new Promise<void>((resolve, reject) => {
      socket.on('message', (raw) => {
        const message = JSON.parse(String(raw)) as { type: string; event: string; data: { id: string } }
        if (message.type === 'ready') resolve()
        if (message.type === 'event') events.push(message)
      })
      socket.on('error', reject)
    })
    const [listening] = await pooled.app.sql<{ query: string }[]>`
      select query from pg_stat_activity where datname = current_database() and application_name = 'commerce-api-listen'`
    expect(listening?.query).toMatch(/^listen /i)

    const product = await pooled.expectStatus<{ id: string }>(201, {
      method: 'POST',
      url: '/api/v1/products',
      token: admin.token,
      payload: { title: 'Pooled lamp', price: 3, currency: 'USD' },
    })
    for (let waited = 0; waited < 5_000 && events.length === 0; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50))
    socket.close()
    expect(events.map((event) => [event.event, event.data.id])).toEqual([['product.created', product.id]])
  })
})
