/**
 * The logs, read as an operator reads them: the API and the worker as built processes write one
 * shape (level by name, ISO time, `name`, the request id as `request_id`), one line per request
 * with its method, route, path, status and duration, and the probes only at debug. An event made
 * by a request is delivered by the worker under the same `request_id`.
 */
import type { ChildProcess } from 'node:child_process'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import WebSocket from 'ws'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { hashPassword } from '@commerce/domain'
import { createDb, createUser } from '@commerce/db'
import { createTestDatabase, type TestDatabase } from '@commerce/db/testing'
import { buildApp } from '../src/app.js'
import { TEST_SCRYPT_COST, testConfig } from './helpers.js'
import { startApi, startWorker, stopProcess } from './processes.js'

type Line = Record<string, unknown>
const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal']
const parse = (text: string): Line[] =>
  text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Line)

let database: TestDatabase
let receiver: Server | undefined
const processes: ChildProcess[] = []
let apiOutput = ''
let workerOutput = ''
let productId = ''
let token = ''

async function waitFor(check: () => boolean, what: string) {
  for (let tries = 0; !check(); tries++) {
    if (tries > 300) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** The requests of the process test, each under its own X-Request-Id. */
const sent = {
  health: 'logs-health',
  ready: 'logs-ready',
  metrics: 'logs-metrics',
  list: 'logs-list',
  create: 'logs-create',
  read: 'logs-read',
  unknown: 'logs-unknown',
  websocketToken: 'logs-ws-token',
  websocket: 'logs-ws',
}

beforeAll(async () => {
  database = await createTestDatabase(inject('adminUrl'), inject('template'))
  const handle = createDb({ url: database.url, poolMax: 1 })
  await createUser(handle.db, { email: 'logs@example.com', passwordHash: await hashPassword('a logs test password', TEST_SCRYPT_COST), role: 'admin' })
  await handle.close()
  const deliveries: string[] = []
  receiver = createServer((request, response) => {
    deliveries.push(request.url ?? '')
    request.resume().on('end', () => response.writeHead(204).end())
  })
  await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve))

  const api = await startApi(database.url, { LOG_LEVEL: 'info' }, (text) => (apiOutput += text))
  processes.push(api.process)
  const call = async (requestId: string, path: string, init: { method?: string; body?: unknown } = {}) => {
    const response = await fetch(`${api.baseUrl}${path}`, {
      method: init.method ?? 'GET',
      headers: {
        'x-request-id': requestId,
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(init.body ? { 'content-type': 'application/json' } : {}),
      },
      body: init.body ? JSON.stringify(init.body) : undefined,
    })
    return { status: response.status, body: (await response.text().then((text) => (text.startsWith('{') ? JSON.parse(text) : text))) as Record<string, string> }
  }
  const login = await call('logs-login', '/api/v1/auth/login', { method: 'POST', body: { email: 'logs@example.com', password: 'a logs test password' } })
  token = login.body.token!
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
  expect((await call('logs-webhook', '/api/v1/webhooks', { method: 'POST', body: { url: hook, events: ['product.created'] } })).status).toBe(201)
  processes.push(startWorker(database.url, { LOG_LEVEL: 'info' }, (text) => (workerOutput += text)))

  for (const [id, path] of [[sent.health, '/health'], [sent.ready, '/ready'], [sent.metrics, '/metrics']] as const) {
    expect((await call(id, path)).status).toBe(200)
  }
  expect((await call(sent.list, '/api/v1/products?search=shirt&per_page=5')).status).toBe(200)
  const created = await call(sent.create, '/api/v1/products', { method: 'POST', body: { title: 'Logged shirt', price: 5, currency: 'USD' } })
  expect(created.status).toBe(201)
  productId = created.body.id!
  expect((await call(sent.read, `/api/v1/products/${productId}`)).status).toBe(200)
  expect((await call(sent.unknown, '/api/v1/nothing-here?page=2')).status).toBe(404)
  // A WebSocket URL with its token in the query, sent as a plain GET (426), then connected.
  expect((await call(sent.websocketToken, `/api/v1/ws?access_token=${token}`)).status).toBe(426)
  const socket = new WebSocket(`${api.baseUrl.replace('http', 'ws')}/api/v1/ws?access_token=${token}`, { headers: { 'x-request-id': sent.websocket } })
  await new Promise((resolve, reject) => socket.once('message', resolve).once('error', reject))
  socket.close(1000)
  await new Promise((resolve) => socket.once('close', resolve))

  await waitFor(() => deliveries.length > 0 && workerOutput.includes('"webhook delivered"'), 'the delivery of product.created')
  // Stopped, so that every line is written out.
  await Promise.all(processes.map(stopProcess))
}, 120_000)

afterAll(async () => {
  await Promise.all(processes.map(stopProcess))
  if (receiver) await new Promise((resolve) => receiver!.close(resolve))
  await database?.drop()
})

describe('the API and worker processes', () => {
  it('write every line in one shape: level by name, ISO time, the process name, no reqId', () => {
    const api = parse(apiOutput)
    const worker = parse(workerOutput)
    expect(api.length).toBeGreaterThan(3)
    expect(worker.length).toBeGreaterThan(1)
    for (const [name, lines] of [['api', api], ['worker', worker]] as const) {
      for (const line of lines) {
        expect(line, JSON.stringify(line)).toMatchObject({ level: expect.any(String), time: expect.any(String), name, pid: expect.any(Number), msg: expect.any(String) })
        expect(LEVELS).toContain(line.level)
        expect(new Date(line.time as string).toISOString()).toBe(line.time)
        expect(line).not.toHaveProperty('reqId')
      }
    }
  })

  it('log each request once, when answered, with method, route, path, status and duration under its request_id', () => {
    const api = parse(apiOutput)
    const of = (requestId: string) => api.filter((line) => line.request_id === requestId)
    const expected = {
      [sent.list]: { method: 'GET', route: '/api/v1/products', path: '/api/v1/products', status_code: 200 },
      [sent.create]: { method: 'POST', route: '/api/v1/products', path: '/api/v1/products', status_code: 201 },
      [sent.read]: { method: 'GET', route: '/api/v1/products/:id', path: `/api/v1/products/${productId}`, status_code: 200 },
      [sent.websocketToken]: { method: 'GET', route: '/api/v1/ws', path: '/api/v1/ws', status_code: 426 },
      // A WebSocket's line comes when it closes: how long it was open, and the close code.
      [sent.websocket]: { method: 'GET', route: '/api/v1/ws', path: '/api/v1/ws', status_code: 101, close_code: 1000 },
    }
    for (const [requestId, fields] of Object.entries(expected)) {
      expect(of(requestId)).toEqual([
        expect.objectContaining({ level: 'info', msg: 'request completed', ...fields, duration_ms: expect.any(Number) }),
      ])
    }
    // An unknown URL has no route; the path never carries its query string (or a token in it).
    const [unknown] = of(sent.unknown)
    expect(of(sent.unknown)).toHaveLength(1)
    expect(unknown).toMatchObject({ method: 'GET', path: '/api/v1/nothing-here', status_code: 404 })
    expect(unknown).not.toHaveProperty('route')
    expect(apiOutput).not.toContain(token)
    expect(api.some((line) => line.msg === 'incoming request')).toBe(false)
  })

  it('leave the probes and the metrics scrape out at info', () => {
    const api = parse(apiOutput)
    for (const requestId of [sent.health, sent.ready, sent.metrics]) expect(api.filter((line) => line.request_id === requestId)).toEqual([])
    // Nor the start-up probes of the test harness, which sent no request id of their own.
    expect(api.filter((line) => ['/health', '/ready', '/metrics'].includes(line.route as string))).toEqual([])
  })

  it("log the worker's delivery of an event under the request_id of the request that made it", () => {
    const delivered = parse(workerOutput).filter((line) => line.msg === 'webhook delivered')
    expect(delivered).toEqual([expect.objectContaining({ level: 'info', event: 'product.created', request_id: sent.create })])
  })
})

describe('request lines by level', () => {
  /** The lines an API logging at `level` writes while answering a probe, a scrape, a list and a 404. */
  async function serve(level: 'debug' | 'warn') {
    const lines: Line[] = []
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(...parse(chunk.toString()))
        done()
      },
    })
    const app = await buildApp(testConfig(database.url, { logLevel: level }), { logger: { level, stream } })
    try {
      await app.listen({ host: '127.0.0.1', port: 0 })
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
      for (const path of ['/health', '/ready', '/metrics', '/api/v1/products', '/api/v1/nothing-here']) await (await fetch(base + path)).arrayBuffer()
    } finally {
      // Closed first: every answered request has then been logged.
      await app.close()
    }
    return lines
  }

  it('at debug, the probes and the metrics scrape are logged, at debug', async () => {
    const lines = await serve('debug')
    const completed = lines.filter((line) => line.msg === 'request completed')
    expect(completed.map((line) => [line.level, line.path])).toEqual([
      ['debug', '/health'],
      ['debug', '/ready'],
      ['debug', '/metrics'],
      ['info', '/api/v1/products'],
      ['info', '/api/v1/nothing-here'],
    ])
  })

  it('at warn, no request is logged', async () => {
    expect(await serve('warn')).toEqual([])
  })
})
