/**
 * Redis (REDIS_URL) killed, and hung, under two running API instances: every use of it (the rate
 * limit, the sign-in throttle, the account request limits) lets requests through at once, without
 * rate-limit headers claiming an allowance, and counts again by itself once Redis is back.
 * Needs Debian's redis-server (`pnpm test:debian`; .ci/run installs it when it is missing): a
 * server of its own on a free port, so the machine's Redis, which other runs share, is not touched.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { connect } from 'node:net'
import type { AddressInfo } from 'node:net'
import { delimiter, join } from 'node:path'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REDIS_TIMEOUTS } from '../src/plugins/rate-limit.js'
import { createTestContext, type TestContext } from './helpers.js'
import { freePort } from './processes.js'

/**
 * The longest a request may take while Redis is away (connections refused): failing open is a
 * local decision, so this is far above what it takes and far below the seconds requests waited
 * when commands were queued through the reconnect back-off.
 */
const FAIL_OPEN_BOUND_MS = 200
/** While Redis hangs: each of a request's Redis calls (up to three, a sign-in's) waits the command timeout at most. */
const HUNG_BOUND_MS = 3 * REDIS_TIMEOUTS.commandMs + FAIL_OPEN_BOUND_MS
/** Redis back: the instances count again within a reconnect attempt or two. */
const RECOVERY_BOUND_MS = 2 * REDIS_TIMEOUTS.reconnectMaxMs + 1_000

const RATE_LIMIT_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit', 'ratelimit-policy', 'retry-after']
const LIMITS = { rateLimitMax: 20, loginMaxFailures: 3, accountRateLimitMax: 2 }
const PASSWORD = 'correct horse battery'

function redisServerPath(): string {
  const candidates = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, 'redis-server')), '/usr/bin/redis-server']
  const found = candidates.find((path) => existsSync(path))
  if (!found) throw new Error('redis-server is not on PATH nor at /usr/bin/redis-server: apt-get install redis-server')
  return found
}

/** True once a PING on a new connection answers PONG. */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.setTimeout(500, () => socket.destroy())
    socket.on('connect', () => socket.write('PING\r\n'))
    socket.on('data', (data) => {
      resolve(data.toString().startsWith('+PONG'))
      socket.destroy()
    })
    socket.on('close', () => resolve(false))
    socket.on('error', () => {})
  })
}

/** A redis-server of its own on `port`, keeping nothing on disk; resolves once it answers. */
async function startRedis(port: number): Promise<ChildProcess> {
  const server = spawn(redisServerPath(), ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  for (let tries = 0; tries < 100; tries++) {
    if (await answersPing(port)) return server
    if (server.exitCode !== null) break
    await sleep(50)
  }
  server.kill('SIGKILL')
  throw new Error(`redis-server did not start on port ${port}:\n${output}`)
}

async function kill(server: ChildProcess) {
  if (server.exitCode !== null || server.signalCode !== null) return
  const exited = new Promise((resolve) => server.once('exit', resolve))
  server.kill('SIGKILL')
  await exited
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Request {
  what: string
  method: 'GET' | 'POST'
  path: string
  body?: unknown
}

interface Answer {
  what: string
  status: number
  /** When it was sent, and how long its answer took (performance.now() milliseconds). */
  sentAt: number
  ms: number
  /** The rate-limit headers it carries, by name. */
  limitHeaders: Record<string, string>
}

/** Sends a request from client address `ip` (behind the trusted proxy) and times its answer. */
async function send(base: string, ip: string, { what, method, path, body }: Request): Promise<Answer> {
  const sentAt = performance.now()
  const response = await request(`${base}${path}`, {
    method,
    headers: { 'x-forwarded-for': ip, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
    headersTimeout: 30_000,
  })
  await response.body.text()
  const ms = performance.now() - sentAt
  const limitHeaders = Object.fromEntries(RATE_LIMIT_HEADERS.filter((name) => response.headers[name] !== undefined).map((name) => [name, String(response.headers[name])]))
  return { what, status: response.statusCode, sentAt, ms, limitHeaders }
}

let redisPort: number
let redis: ChildProcess
let instances: TestContext[] = []
let bases: string[] = []
const email = 'outage@example.com'

const PRODUCTS: Request = { what: 'GET /products', method: 'GET', path: '/api/v1/products?per_page=1' }
const RIGHT_SIGN_IN: Request = { what: 'right sign-in', method: 'POST', path: '/api/v1/auth/login', body: { email, password: PASSWORD } }
const WRONG_SIGN_IN: Request = { what: 'wrong sign-in', method: 'POST', path: '/api/v1/auth/login', body: { email, password: 'wrong password' } }
const PASSWORD_RESET: Request = { what: 'password reset', method: 'POST', path: '/api/v1/auth/password-reset', body: { email } }
/** Every use of Redis: the rate limit on every request, the sign-in throttle (three calls in a row), the account request limits. */
const LOAD = [PRODUCTS, RIGHT_SIGN_IN, WRONG_SIGN_IN, PASSWORD_RESET]
const EXPECTED_STATUS: Record<string, number> = { [PRODUCTS.what]: 200, [RIGHT_SIGN_IN.what]: 200, [WRONG_SIGN_IN.what]: 401, [PASSWORD_RESET.what]: 202 }

/**
 * Requests of every kind from `ip` for `ms`, one after the other, to each instance in turn: more
 * at once would time this machine's CPU (shared with other test runs) rather than Redis's absence.
 */
async function load(ip: string, ms: number): Promise<Answer[]> {
  const answers: Answer[] = []
  const until = performance.now() + ms
  for (let next = 0; performance.now() < until; next++) answers.push(await send(bases[next % 2]!, ip, LOAD[Math.floor(next / 2) % LOAD.length]!))
  return answers
}

/** Answered as if unlimited (never 429, though far past every limit), each within `boundMs`, with no rate-limit header. */
function expectFailedOpen(answers: Answer[], boundMs: number) {
  expect(answers.filter((answer) => answer.status !== EXPECTED_STATUS[answer.what])).toEqual([])
  expect(answers.filter((answer) => answer.ms >= boundMs).map(({ what, ms }) => `${what}: ${Math.round(ms)} ms`)).toEqual([])
  expect(answers.filter((answer) => Object.keys(answer.limitHeaders).length > 0)).toEqual([])
}

/** Milliseconds until every instance counts `ip`'s requests in Redis again (a request answered with the rate-limit headers). */
async function recovery(ip: string): Promise<number> {
  const start = performance.now()
  for (const base of bases) {
    while (!(await send(base, ip, PRODUCTS)).limitHeaders['x-ratelimit-limit'] && performance.now() - start < 2 * RECOVERY_BOUND_MS) await sleep(20)
  }
  return performance.now() - start
}

/** The sign-in throttle, the account request limits and the rate limit all refuse again, each shared by both instances. */
async function expectLimitsApply(ip: string) {
  const [first, second] = bases as [string, string]
  for (let failure = 0; failure < LIMITS.loginMaxFailures; failure++) expect((await send(failure % 2 ? first : second, ip, WRONG_SIGN_IN)).status).toBe(401)
  expect((await send(first, ip, RIGHT_SIGN_IN)).status).toBe(429)
  for (let reset = 0; reset < LIMITS.accountRateLimitMax; reset++) expect((await send(reset % 2 ? first : second, ip, PASSWORD_RESET)).status).toBe(202)
  expect((await send(first, ip, PASSWORD_RESET)).status).toBe(429)

  let last = await send(second, ip, PRODUCTS)
  while (last.status === 200) {
    expect(last.limitHeaders).toMatchObject({ 'x-ratelimit-limit': String(LIMITS.rateLimitMax), ratelimit: expect.stringMatching(/^"ip";r=\d+;t=\d+$/) })
    last = await send(Number(last.limitHeaders['x-ratelimit-remaining']) % 2 ? first : second, ip, PRODUCTS)
  }
  expect(last.status).toBe(429)
  expect(last.limitHeaders).toMatchObject({ 'x-ratelimit-remaining': '0', 'retry-after': expect.stringMatching(/^\d+$/) })
}

beforeAll(async () => {
  redisPort = await freePort()
  redis = await startRedis(redisPort)
  const settings = { ...LIMITS, redisUrl: `redis://127.0.0.1:${redisPort}`, trustProxy: true }
  const first = await createTestContext(settings)
  // The second instance on the first one's database, as two processes behind a load balancer.
  const second = await createTestContext(() => ({ ...settings, databaseUrl: first.database.url }))
  instances = [first, second]
  await first.signIn('customer', email)
  bases = await Promise.all(
    instances.map(async (instance) => {
      await instance.app.listen({ host: '127.0.0.1', port: 0 })
      return `http://127.0.0.1:${(instance.app.server.address() as AddressInfo).port}`
    }),
  )
})

afterAll(async () => {
  for (const instance of instances.reverse()) await instance.close()
  if (redis) await kill(redis)
})

describe('Redis killed under running API instances', () => {
  it('answers every request within 200 ms, unlimited and without rate-limit headers, while it is down; once it is back the limits apply again', { timeout: 60_000 }, async () => {
    const ip = '198.51.100.1'
    const counted = await send(bases[0]!, ip, PRODUCTS)
    expect(counted.limitHeaders).toMatchObject({ 'x-ratelimit-limit': String(LIMITS.rateLimitMax), 'x-ratelimit-remaining': String(LIMITS.rateLimitMax - 1) })
    // Warm (connection pools, compiled routes), so that the bound times failing open and nothing else.
    await load('198.51.100.9', 500)

    await kill(redis)
    // Three seconds: the client's reconnect back-off grows meanwhile, and commands queued through it
    // made requests wait longer and longer.
    const answers = await load(ip, 3_000)
    expectFailedOpen(answers, FAIL_OPEN_BOUND_MS)
    // Past every limit, had they been counted.
    const sent = (what: string) => answers.filter((answer) => answer.what === what).length
    expect(answers.length).toBeGreaterThan(LIMITS.rateLimitMax)
    expect(sent(WRONG_SIGN_IN.what)).toBeGreaterThan(LIMITS.loginMaxFailures)
    expect(sent(PASSWORD_RESET.what)).toBeGreaterThan(LIMITS.accountRateLimitMax)

    // The same port again, so that the instances reconnect to it unchanged; it starts with no counts.
    redis = await startRedis(redisPort)
    expect(await recovery(ip)).toBeLessThan(RECOVERY_BOUND_MS)
    await expectLimitsApply(ip)
  })
})

describe('Redis that stops answering (SIGSTOP) under running API instances', () => {
  it('answers every request within the command timeouts, unlimited and without rate-limit headers, and without waiting once the silent connection is dropped; counts again when it answers', { timeout: 60_000 }, async () => {
    const ip = '198.51.100.2'
    expect((await send(bases[1]!, ip, PRODUCTS)).limitHeaders['x-ratelimit-limit']).toBe(String(LIMITS.rateLimitMax))

    redis.kill('SIGSTOP')
    // Each instance drops its silent connection the socket timeout after its first request since the
    // stop, which is sent within one request's time of it; from then on nothing waits.
    const givenUpAfterMs = REDIS_TIMEOUTS.socketMs + HUNG_BOUND_MS
    let answers: Answer[]
    const stoppedAt = performance.now()
    try {
      answers = await load(ip, givenUpAfterMs + 1_000)
    } finally {
      redis.kill('SIGCONT')
    }
    const givenUp = (answer: Answer) => answer.sentAt - stoppedAt > givenUpAfterMs
    expectFailedOpen(answers.filter((answer) => !givenUp(answer)), HUNG_BOUND_MS)
    expectFailedOpen(answers.filter(givenUp), FAIL_OPEN_BOUND_MS)
    expect(answers.filter(givenUp).length).toBeGreaterThan(LOAD.length)
    expect(await recovery(ip)).toBeLessThan(RECOVERY_BOUND_MS + REDIS_TIMEOUTS.socketMs)
  })
})
