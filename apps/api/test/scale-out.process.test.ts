/**
 * Several API instances and workers on one PostgreSQL, as built processes (dist/main.js): webhooks
 * delivered exactly once by two workers, WebSocket clients of either instance seeing every event,
 * a stopped instance finishing what it accepted, and (with REDIS_URL) one rate limit for all.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { ChildProcess } from 'node:child_process'
import postgres from 'postgres'
import { Agent, request } from 'undici'
import WebSocket from 'ws'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { hashPassword } from '@commerce/domain'
import { createDb, createUser } from '@commerce/db'
import { createTestDatabase, type TestDatabase } from '@commerce/db/testing'
import { startApi, startWorker, stopProcess } from './processes.js'

const EVENTS = 2_000
const CONCURRENCY = 16

let database: TestDatabase
const processes: ChildProcess[] = []
let apis: string[] = []
let token: string

async function call<T>(base: string, method: 'GET' | 'POST', path: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await request(`${base}${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  })
  const text = await response.body.text()
  return { status: response.statusCode, headers: response.headers, body: (text ? JSON.parse(text) : undefined) as T }
}

const createProduct = (base: string, title: string) =>
  call<{ id: string }>(base, 'POST', '/api/v1/products', { title, price: 1, currency: 'USD', inventory_quantity: 1 })

/** Runs `work` for 0..count-1 with at most `limit` at a time. */
async function pooled(count: number, limit: number, work: (index: number) => Promise<void>) {
  let next = 0
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < count) await work(next++)
  }))
}

async function waitFor(check: () => boolean, timeoutMs: number) {
  const until = Date.now() + timeoutMs
  while (!check() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100))
}

beforeAll(async () => {
  database = await createTestDatabase(inject('adminUrl'), inject('template'))
  const handle = createDb({ url: database.url, poolMax: 1 })
  await createUser(handle.db, { email: 'scale@example.com', passwordHash: await hashPassword('scale-out password', 1024), role: 'admin' })
  await handle.close()
  const started = await Promise.all([startApi(database.url), startApi(database.url)])
  apis = started.map((api) => api.baseUrl)
  processes.push(...started.map((api) => api.process))
  const login = await call<{ token: string }>(apis[0]!, 'POST', '/api/v1/auth/login', { email: 'scale@example.com', password: 'scale-out password' })
  if (login.status !== 200) throw new Error(`login: ${login.status} ${JSON.stringify(login.body)}`)
  token = login.body.token
}, 120_000)

afterAll(async () => {
  await Promise.all(processes.map(stopProcess))
  await database?.drop()
})

describe('two API instances and two workers on one PostgreSQL', () => {
  let receiver: Server

  afterAll(async () => {
    if (receiver) await new Promise((resolve) => receiver.close(resolve))
  })

  it(`delivers ${EVENTS} events exactly once each, and WebSocket clients of both instances see them all`, { timeout: 300_000 }, async () => {
    const delivered: string[] = []
    receiver = createServer((incoming, response) => {
      const chunks: Buffer[] = []
      incoming.on('data', (chunk: Buffer) => chunks.push(chunk))
      incoming.on('end', () => {
        delivered.push((JSON.parse(Buffer.concat(chunks).toString()) as { data: { id: string } }).data.id)
        response.writeHead(204).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
    expect((await call(apis[1]!, 'POST', '/api/v1/webhooks', { url, events: ['product.created'] })).status).toBe(201)
    processes.push(startWorker(database.url), startWorker(database.url))

    // A WebSocket client on each instance, counting the products it hears about.
    const heard = apis.map(() => new Set<string>())
    const sockets = await Promise.all(
      apis.map(
        (base, index) =>
          new Promise<WebSocket>((resolve, reject) => {
            const socket = new WebSocket(`${base.replace('http', 'ws')}/api/v1/ws`, { headers: { authorization: `Bearer ${token}` } })
            socket.on('message', (raw) => {
              const message = JSON.parse(String(raw)) as { type: string; event?: string; data?: { id: string } }
              if (message.type === 'ready') resolve(socket)
              if (message.event === 'product.created') heard[index]!.add(message.data!.id)
            })
            socket.on('error', reject)
          }),
      ),
    )

    // The events are made through both instances, alternately.
    const created: string[] = []
    await pooled(EVENTS, CONCURRENCY, async (index) => {
      const answer = await createProduct(apis[index % 2]!, `Scale ${index}`)
      expect(answer.status).toBe(201)
      created.push(answer.body.id)
    })

    await waitFor(() => delivered.length >= EVENTS && heard.every((ids) => ids.size >= EVENTS), 180_000)
    // A moment more, for a duplicate to show if a job ran twice.
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    for (const socket of sockets) socket.close()
    expect(delivered).toHaveLength(EVENTS)
    expect(new Set(delivered)).toEqual(new Set(created))
    for (const ids of heard) expect(ids).toEqual(new Set(created))
  })

  it('an instance stopped with SIGTERM answers every request it accepted; nothing is written unanswered', { timeout: 120_000 }, async () => {
    const stopping = processes[1]!
    const agent = new Agent({ connections: 64 })
    const marker = randomUUID()
    let answered = 0
    let refused = 0
    const failures: string[] = []
    const exited = new Promise((resolve) => stopping.once('exit', resolve))
    await pooled(400, 64, async (index) => {
      if (index === 100) stopping.kill('SIGTERM')
      try {
        const response = await request(`${apis[1]}/api/v1/products`, {
          method: 'POST',
          dispatcher: agent,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ title: `${marker} ${index}`, price: 1, currency: 'USD' }),
        })
        await response.body.text()
        if (response.statusCode === 201) answered++
        else failures.push(`HTTP ${response.statusCode}`)
      } catch (error) {
        // Refused or closed before the request was taken: a load balancer sends it elsewhere.
        const code = (error as { code?: string }).code ?? ''
        if (['ECONNREFUSED', 'UND_ERR_SOCKET', 'ECONNRESET'].includes(code)) refused++
        else failures.push(code || String(error))
      }
    })
    await exited
    await agent.close()
    expect(failures).toEqual([])
    expect(answered).toBeGreaterThan(0)
    expect(refused).toBeGreaterThan(0)
    // Every product the stopped instance wrote was answered 201: none was lost in flight.
    const sql = postgres(database.url, { max: 1, onnotice: () => {} })
    const [written] = await sql<{ count: number }[]>`select count(*)::int as count from products where title like ${`${marker} %`}`
    await sql.end()
    expect(written!.count).toBe(answered)
  })
})

// Needs a real Redis: CI provides one (REDIS_URL); without it, this part does not run.
describe.runIf(process.env.REDIS_URL)('one rate limit across API instances (REDIS_URL)', () => {
  let limited: string[] = []

  beforeAll(async () => {
    const env = { REDIS_URL: process.env.REDIS_URL!, RATE_LIMIT_MAX: '60', TRUST_PROXY: 'true' }
    const started = await Promise.all([startApi(database.url, env), startApi(database.url, env)])
    limited = started.map((api) => api.baseUrl)
    processes.push(...started.map((api) => api.process))
  }, 60_000)

  it('refuses the 61st request of a minute from one client, whichever instance answers', async () => {
    // A client address of its own (behind a trusted proxy), so that other runs sharing this Redis do not count.
    const uniqueIp = `10.${[...randomBytes(3)].join('.')}`
    const remaining: number[] = []
    for (let index = 0; index < 60; index++) {
      const answer = await request(`${limited[index % 2]}/api/v1/products?per_page=1`, { headers: { 'x-forwarded-for': uniqueIp } })
      await answer.body.text()
      expect(answer.statusCode).toBe(200)
      remaining.push(Number(answer.headers['x-ratelimit-remaining']))
    }
    expect(remaining).toEqual(Array.from({ length: 60 }, (_, index) => 59 - index))
    for (const base of limited) {
      const refused = await request(`${base}/api/v1/products?per_page=1`, { headers: { 'x-forwarded-for': uniqueIp } })
      expect(refused.statusCode).toBe(429)
      expect(await refused.body.json()).toMatchObject({ error: { code: 'rate_limited' } })
    }
  })
})
