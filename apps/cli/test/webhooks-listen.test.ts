/**
 * `commerce webhooks listen`, the real binary, against a real API process (restarted on the same
 * port to drop the stream) and worker on a test database, forwarding to real local HTTP servers.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import { connect, createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createDb, newId, writeEvents } from '@commerce/db'
import { createTestDatabase, type TestDatabase } from '@commerce/db/testing'
import { verify } from '@commerce/domain'
import { PROCESS_JWT_SECRET, freePort, processEnv, startWorker, stopProcess } from '../../api/test/processes.js'
import { BIN, userEnvironment } from './binary.js'

const API_MAIN = fileURLToPath(new URL('../../api/dist/main.js', import.meta.url))
const ADMIN = { email: 'listen-admin@example.com', password: 'correct horse battery staple' }
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'
const SIGNED_HEADERS = ['webhook-id', 'webhook-signature', 'webhook-timestamp', 'x-webhook-event', 'x-webhook-id', 'x-webhook-signature']

let database: TestDatabase
let configHome: string
let apiPort: number
let baseUrl: string
let api: ChildProcess
let worker: ChildProcess
let token: string
const cleanups: (() => Promise<unknown>)[] = []

/** Waits (a bounded number of polls, not a timing assertion) until `condition` holds. */
async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let tries = 0; tries < 600; tries++) {
    if (await condition()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`gave up waiting for ${what}`)
}

/** The API on `apiPort`: the same port after a restart, so a listening CLI can reconnect to it. */
async function startApi(): Promise<ChildProcess> {
  const child = spawn(process.execPath, [API_MAIN], {
    env: {
      ...processEnv(database.url),
      PORT: String(apiPort),
      HOST: '127.0.0.1',
      JWT_SECRET: PROCESS_JWT_SECRET,
      RATE_LIMIT_MAX: '100000',
      SCRYPT_COST: '1024',
    },
    stdio: 'ignore',
  })
  await until(async () => {
    if (child.exitCode !== null) throw new Error('the API exited')
    return fetch(`${baseUrl}/health`).then((response) => response.ok, () => false)
  }, 'the API to start')
  return child
}

async function call<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const answer: unknown = response.status === 204 ? undefined : await response.json()
  if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${JSON.stringify(answer)}`)
  return answer as T
}

const createProduct = (title: string) => call<{ id: string }>('POST', '/api/v1/products', { title, price: 5, currency: 'GBP' })

interface Received {
  headers: IncomingHttpHeaders
  body: Buffer
}

/** A local webhook receiver: keeps every request, answers `status`. */
async function startReceiver(port = 0): Promise<{ url: string; requests: Received[]; status: number; server: Server }> {
  const receiver = { url: '', requests: [] as Received[], status: 200, server: undefined as unknown as Server }
  receiver.server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      receiver.requests.push({ headers: request.headers, body: Buffer.concat(chunks) })
      response.writeHead(receiver.status).end()
    })
  })
  await new Promise<void>((resolve) => receiver.server.listen(port, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/hook`
  cleanups.push(() => new Promise((resolve) => receiver.server.close(resolve)))
  return receiver
}

interface Listening {
  stdout: string
  stderr: string
  process: ChildProcess
  /** Ctrl-C, and the exit code. */
  interrupt(): Promise<number | null>
}

function cliEnv(): NodeJS.ProcessEnv {
  return { ...userEnvironment('DATABASE_URL', 'COMMERCE_TOKEN', 'COMMERCE_WEBHOOK_SECRET'), XDG_CONFIG_HOME: configHome, COMMERCE_BASE_URL: baseUrl, COMMERCE_TOKEN: token }
}

/** `commerce webhooks listen …`, running until interrupted; resolves once it says it is ready. */
async function listen(args: string[]): Promise<Listening> {
  const child = spawn(process.execPath, [BIN, 'webhooks', 'listen', ...args], { env: cliEnv() })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const run: Listening = {
    stdout: '',
    stderr: '',
    process: child,
    interrupt: async () => {
      if (child.exitCode === null) child.kill('SIGINT')
      return exited
    },
  }
  child.stdout.on('data', (chunk: Buffer) => (run.stdout += chunk.toString()))
  child.stderr.on('data', (chunk: Buffer) => (run.stderr += chunk.toString()))
  cleanups.push(() => stopProcess(child))
  await until(() => run.stderr.includes('Ready: forwarding') || child.exitCode !== null, 'listen to be ready')
  expect(child.exitCode, run.stderr).toBeNull()
  return run
}

/** A command that ends by itself. */
function commerce(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...cliEnv(), ...env }, timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    )
  })
}

/** oclif prints errors as ` ›   Error: …`, wrapped to the terminal width: back to one line. */
const errorText = (stderr: string) => stderr.replace(/\s*›\s*/g, ' ').replace(/\s+/g, ' ').trim()

/** The headers a Standard Webhooks verifier reads, as plain strings. */
const standardHeaders = (headers: IncomingHttpHeaders) => ({
  'webhook-id': String(headers['webhook-id']),
  'webhook-timestamp': String(headers['webhook-timestamp']),
  'webhook-signature': String(headers['webhook-signature']),
})

/**
 * A TCP proxy to the API that holds what the client sends once the API has answered its upgrade:
 * the client has its `ready` but the API not yet its `subscribe`, until release().
 */
async function holdingProxy(): Promise<{ url: string; fromApi: () => string; release: () => void }> {
  let fromApi = ''
  let held: Socket | undefined
  const server = createTcpServer((client) => {
    const upstream = connect(apiPort, '127.0.0.1')
    client.on('data', (chunk: Buffer) => upstream.write(chunk))
    upstream.on('data', (chunk: Buffer) => {
      fromApi += chunk.toString('latin1')
      if (!held) (held = client).pause()
      client.write(chunk)
    })
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(() => new Promise((resolve) => server.close(resolve)))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    fromApi: () => fromApi,
    release: () => held?.resume(),
  }
}

beforeAll(async () => {
  database = await createTestDatabase(inject('adminUrl'), inject('template'))
  configHome = await mkdtemp(join(tmpdir(), 'commerce-listen-'))
  apiPort = await freePort()
  baseUrl = `http://127.0.0.1:${apiPort}`
  api = await startApi()
  worker = startWorker(database.url)
  const created = await commerce(['users', 'create', '--email', ADMIN.email, '--role', 'admin', '--password', ADMIN.password], {
    DATABASE_URL: database.url,
    SCRYPT_COST: '1024',
  })
  expect(created.code, created.stderr).toBe(0)
  const login = await fetch(`${baseUrl}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ADMIN),
  })
  token = ((await login.json()) as { token: string }).token
})

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup()
  await Promise.all([stopProcess(api), stopProcess(worker)])
  await database?.drop()
  if (configHome) await rm(configHome, { recursive: true, force: true })
})

describe('commerce webhooks listen', () => {
  it('forwards the events of --webhook with the body and headers the worker delivers, signed with --secret', async () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`
    const delivered = await startReceiver()
    const local = await startReceiver()
    const webhook = await call<{ id: string }>('POST', '/api/v1/webhooks', {
      url: delivered.url,
      events: ['product.created', 'product.updated'],
      secret,
    })
    const listening = await listen(['--forward-to', local.url, '--webhook', webhook.id, '--secret', secret, '--json'])
    expect(listening.stderr).toContain(`Ready: forwarding the events of webhook ${webhook.id} (product.created, product.updated)`)
    expect(listening.stderr).not.toContain(secret)

    // Outside the subscription's kinds, and committed first: forwarded, it would come first.
    await call('POST', '/api/v1/customers', { email: 'not-forwarded@example.com' })
    const product = await createProduct('Listen lamp')
    await until(() => local.requests.length > 0, 'the forwarded request')
    const forwarded = local.requests[0]!
    expect(forwarded.headers['x-webhook-event']).toBe('product.created')
    const eventId = String(forwarded.headers['x-webhook-id'])
    await until(() => delivered.requests.some((request) => request.headers['x-webhook-id'] === eventId), "the worker's delivery")
    const delivery = delivered.requests.find((request) => request.headers['x-webhook-id'] === eventId)!

    // Byte for byte the worker's body; the same headers but for the timestamp and what it signs.
    expect(forwarded.body.equals(delivery.body)).toBe(true)
    for (const name of ['content-type', 'user-agent', 'x-webhook-id', 'x-webhook-event', 'x-webhook-signature', 'webhook-id']) {
      expect(forwarded.headers[name], name).toBe(delivery.headers[name])
    }
    expect(Object.keys(forwarded.headers).filter((name) => name.includes('webhook')).sort()).toEqual(SIGNED_HEADERS)
    // The envelope of the event as the API's event log shows it.
    const event = await call<{ id: string; event: string; timestamp: string; resource_id: string; sequence: number; data: { id: string } }>(
      'GET',
      `/api/v1/events/${eventId}`,
    )
    expect(event.data.id).toBe(product.id)
    expect(event).toMatchObject({ resource_id: product.id, sequence: 1 })
    expect(forwarded.body.toString('utf8')).toBe(
      JSON.stringify({ id: event.id, event: event.event, timestamp: event.timestamp, resource_id: event.resource_id, sequence: event.sequence, data: event.data }),
    )

    // Both signatures verify with the subscription's secret, and not with another.
    expect(verify(forwarded.body, secret, String(forwarded.headers['x-webhook-signature']))).toBe(true)
    expect(new Webhook(secret).verify(forwarded.body.toString('utf8'), standardHeaders(forwarded.headers))).toMatchObject({
      id: eventId,
      event: 'product.created',
      data: { id: product.id },
    })
    const other = `whsec_${randomBytes(32).toString('base64')}`
    expect(() => new Webhook(other).verify(forwarded.body.toString('utf8'), standardHeaders(forwarded.headers))).toThrow()
    expect(verify(forwarded.body, other, String(forwarded.headers['x-webhook-signature']))).toBe(false)

    // --json: one object per forwarded event.
    await until(() => listening.stdout.includes('\n'), 'the line of the forwarded event')
    expect(JSON.parse(listening.stdout.split('\n')[0]!)).toEqual({
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      event: 'product.created',
      id: eventId,
      status_code: 200,
      error: null,
    })
    expect(await listening.interrupt()).toBe(0)
    expect(local.requests.map((request) => request.headers['x-webhook-event'])).toEqual(['product.created'])
    await call('DELETE', `/api/v1/webhooks/${webhook.id}`)
  })

  it('without --secret signs with a session secret printed once; --events forwards only those kinds', async () => {
    const local = await startReceiver()
    const listening = await listen(['--forward-to', local.url, '--events', 'product.updated'])
    const secret = /secret for this session is (whsec_\S+) \(/.exec(listening.stderr)?.[1]
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
    expect(Buffer.from(secret!.slice('whsec_'.length), 'base64')).toHaveLength(32)
    expect(listening.stderr.split(secret!)).toHaveLength(2)
    expect(listening.stderr).toContain(`Ready: forwarding product.updated from ${baseUrl.replace('http', 'ws')} to ${local.url}`)

    // product.created first: outside --events, it would be forwarded first.
    const product = await createProduct('Session lamp')
    await call('PATCH', `/api/v1/products/${product.id}`, { price: 7 })
    await until(() => local.requests.length > 0 && listening.stdout.includes('\n'), 'the forwarded request')
    const [forwarded] = local.requests
    expect(forwarded!.headers['x-webhook-event']).toBe('product.updated')
    const body = JSON.parse(forwarded!.body.toString('utf8')) as { id: string; data: { id: string; price: number } }
    expect(body.data).toMatchObject({ id: product.id, price: 7 })
    expect(new Webhook(secret!).verify(forwarded!.body.toString('utf8'), standardHeaders(forwarded!.headers))).toMatchObject({ event: 'product.updated' })
    expect(verify(forwarded!.body, secret!, String(forwarded!.headers['x-webhook-signature']))).toBe(true)

    // The people's line: time, kind, event id, status.
    expect(listening.stdout).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z  product\\.updated {5}  ${body.id}  \\[200\\]\\n$`))
    expect(await listening.interrupt()).toBe(0)
    expect(local.requests).toHaveLength(1)
  })

  it('reports a local server that is down or failing, and keeps forwarding', async () => {
    const port = await freePort()
    const listening = await listen(['--forward-to', `http://127.0.0.1:${port}/hook`, '--events', 'product.created'])
    await createProduct('Nobody home')
    await until(() => listening.stdout.includes('\n'), 'the failed forward')
    expect(listening.stdout).toMatch(new RegExp(`^\\S+Z  product\\.created {5}  ${UUID}  \\[error\\] connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\n$`))

    // The server comes up on that port: first failing, then answering.
    const local = await startReceiver(port)
    local.status = 500
    const failing = await createProduct('Server error')
    await until(() => listening.stdout.includes('[500]'), 'the 500')
    local.status = 204
    const answered = await createProduct('Server fixed')
    await until(() => listening.stdout.includes('[204]'), 'the 204')
    const lines = listening.stdout.trim().split('\n')
    expect(lines).toHaveLength(3)
    expect(lines[1]).toMatch(new RegExp(`  product\\.created {5}  ${UUID}  \\[500\\]$`))
    expect(lines[2]).toMatch(new RegExp(`  product\\.created {5}  ${UUID}  \\[204\\]$`))
    expect(local.requests.map((request) => (JSON.parse(request.body.toString('utf8')) as { data: { id: string } }).data.id)).toEqual([
      failing.id,
      answered.id,
    ])
    expect(await listening.interrupt()).toBe(0)
  })

  it('opens the stream again when the API restarts, says so on standard error, and forwards what it missed first', async () => {
    const local = await startReceiver()
    const listening = await listen(['--forward-to', local.url, '--events', 'product.created'])
    await stopProcess(api)
    await until(() => listening.stderr.includes('reconnecting in'), 'the drop to be reported')
    expect(listening.stderr).toMatch(/^The event stream closed \((.+, )?code 1001\); reconnecting in 1 s…$/m)
    // Committed while no API runs: the resumed stream replays it.
    const handle = createDb({ url: database.url, poolMax: 1 })
    const missedId = newId()
    try {
      await handle.db.transaction((tx) => writeEvents(tx, [{ kind: 'product.created', resourceId: missedId, data: { id: missedId } }]))
    } finally {
      await handle.close()
    }
    api = await startApi()
    await until(() => listening.stderr.includes('Resumed:'), 'the resume')
    expect(listening.stderr).toMatch(new RegExp(`^Reconnected to ${baseUrl.replace('http', 'ws')}; resuming after the last event received\\.$`, 'm'))
    expect(listening.stderr).toMatch(/^Resumed: 1 events missed while disconnected, forwarded first\.$/m)

    const product = await createProduct('After the restart')
    await until(() => local.requests.length > 1, 'the forwarded requests')
    expect(local.requests.map((request) => (JSON.parse(request.body.toString('utf8')) as { data: { id: string } }).data.id)).toEqual([missedId, product.id])
    expect(listening.process.exitCode).toBeNull()
    expect(await listening.interrupt()).toBe(0)
  })

  it('forwards an event of the kinds asked for that arrives before the API confirms the subscription, and only those', async () => {
    const local = await startReceiver()
    const proxy = await holdingProxy()
    const child = spawn(process.execPath, [BIN, 'webhooks', 'listen', '--forward-to', local.url, '--events', 'product.created'], {
      env: { ...cliEnv(), COMMERCE_BASE_URL: proxy.url },
    })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    cleanups.push(() => stopProcess(child))
    await until(() => proxy.fromApi().includes('"ready"'), 'the upgrade and ready')
    // The subscribe is held: the channel still sends every kind, and these two go out live.
    const early = await createProduct('Before the subscription')
    const customer = await call<{ id: string }>('POST', '/api/v1/customers', { email: 'early@example.com', first_name: 'Early', last_name: 'Bird' })
    await until(() => proxy.fromApi().includes(early.id) && proxy.fromApi().includes(customer.id), 'both events on the socket')
    proxy.release()
    await until(() => stderr.includes('Ready: forwarding'), 'the subscription')
    const later = await createProduct('After the subscription')
    await until(() => local.requests.length >= 2, 'the forwarded requests')
    expect(local.requests.map((request) => (JSON.parse(request.body.toString('utf8')) as { data: { id: string } }).data.id)).toEqual([early.id, later.id])
    child.kill('SIGINT')
  })

  it('refuses a --forward-to that is not an http(s) URL, before connecting', async () => {
    for (const target of ['ftp://localhost/hook', 'localhost:4000/hook', 'not a url']) {
      const run = await commerce(['webhooks', 'listen', '--forward-to', target])
      expect(run.code, target).toBe(2)
      expect(errorText(run.stderr)).toContain(
        `Error: --forward-to must be an http:// or https:// URL, such as http://localhost:4000/hook (got '${target}') USAGE $ commerce webhooks listen `,
      )
      expect(run.stdout).toBe('')
    }
  })

  it('exits 1 with the reason when the token is refused or the --webhook does not exist', async () => {
    const refused = await commerce(['webhooks', 'listen', '--forward-to', 'http://localhost:4000/hook'], { COMMERCE_TOKEN: 'not-a-token' })
    expect(refused.code).toBe(1)
    expect(errorText(refused.stderr)).toContain(
      `Could not open the event stream at ${baseUrl.replace('http', 'ws')}: The access token is malformed, expired or invalid (unauthorized, HTTP 401)`,
    )
    const missing = await commerce(['webhooks', 'listen', '--forward-to', 'http://localhost:4000/hook', '--webhook', '0190a6f1-7c3a-7000-8000-00000000beef'])
    expect(missing.code).toBe(1)
    expect(errorText(missing.stderr)).toMatch(/\(not_found, HTTP 404\)$/)
  })
})
