/**
 * The WebSocket fan-out benchmark (`pnpm build && node bench/websocket.js`): BENCH_WS_CLIENTS
 * (default 1,000) admin clients connected to one API process (apps/api/dist/main.js, clients in
 * a process of their own), BENCH_WS_EVENTS events (default 50) committed one per transaction
 * 100 ms apart; the time from each commit to each client's receipt, p50/p99.
 *
 * Environment: DATABASE_URL (a server: the bench creates and drops its own database
 * `commerce_bench_ws` there), else the embedded PostgreSQL. Exits 0 when p99 ≤ 100 ms.
 */
import { fork, spawn } from 'node:child_process'
import { createHmac, randomBytes, randomUUID } from 'node:crypto'
import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createDb, createUser, newId, writeEvents } from '@commerce/db'
import { openScratchDatabase } from './scratch-database.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const API_MAIN = join(ROOT, 'apps/api/dist/main.js')
const RESULTS_DIR = join(ROOT, 'bench/results')
const DATABASE = 'commerce_bench_ws'
const CLIENTS = Number(process.env.BENCH_WS_CLIENTS ?? 1000)
const EVENTS = Number(process.env.BENCH_WS_EVENTS ?? 50)
const now = () => performance.timeOrigin + performance.now()
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]

/** An HS256 JWT as the API issues them (plugins/auth.ts). */
function adminToken(secret, userId) {
  const encode = (value) => Buffer.from(JSON.stringify(value)).toString('base64url')
  const issued = Math.floor(Date.now() / 1000)
  const unsigned = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode({ sub: userId, role: 'admin', typ: 'user', iat: issued, exp: issued + 3600, jti: randomUUID() })}`
  return `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`
}

function ask(child, message, answer) {
  return new Promise((resolve, reject) => {
    child.on('message', (reply) => reply.type === answer && resolve(reply))
    child.once('exit', (code) => reject(new Error(`the clients' process exited with ${code}`)))
    child.send(message)
  })
}

async function main() {
  const scratch = await openScratchDatabase(DATABASE)
  const url = scratch.url
  const { db, close } = createDb({ url, poolMax: 2 })
  const secret = randomBytes(32).toString('hex')
  const { user } = await createUser(db, { email: 'bench-admin@example.com', passwordHash: 'not-used', role: 'admin' })
  const api = spawn(process.execPath, [API_MAIN], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: url, JWT_SECRET: secret, PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'production', LOG_LEVEL: 'info', RATE_LIMIT_MAX: '100000000' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const clients = fork(join(ROOT, 'bench/ws-clients.js'))
  const results = { startedAt: new Date().toISOString(), host: { cpus: os.cpus().length, node: process.version }, clients: CLIENTS, events: EVENTS }
  try {
    const port = await new Promise((resolve, reject) => {
      let output = ''
      api.stdout.on('data', (chunk) => {
        output += chunk
        const match = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output)
        if (match) resolve(Number(match[1]))
      })
      api.once('exit', (code) => reject(new Error(`the API exited with ${code}`)))
    })
    const { ready } = await ask(clients, { type: 'connect', count: CLIENTS, url: `ws://127.0.0.1:${port}/api/v1/ws`, token: adminToken(secret, user.id) }, 'connected')
    console.log(`bench: ${ready} WebSocket clients connected, ${EVENTS} events, ${os.cpus().length} CPUs`)
    const committedAt = new Map()
    for (let n = 0; n < EVENTS; n++) {
      const [id] = await db.transaction((tx) => writeEvents(tx, [{ kind: 'product.updated', resourceId: newId(), data: { n } }]))
      committedAt.set(id, now())
      await sleep(100)
    }
    await sleep(1000)
    const { arrivals } = await ask(clients, { type: 'report' }, 'arrivals')
    const latencies = arrivals.filter(([id]) => committedAt.has(id)).map(([id, at]) => at - committedAt.get(id)).sort((a, b) => a - b)
    results.received = latencies.length
    results.expected = CLIENTS * EVENTS
    results.latencyMs = { p50: quantile(latencies, 0.5), p90: quantile(latencies, 0.9), p99: quantile(latencies, 0.99), max: latencies.at(-1) }
    console.log(`  received ${results.received} of ${results.expected} (event × client)`)
    console.log(`  commit to client  p50 ${results.latencyMs.p50.toFixed(1)} ms, p90 ${results.latencyMs.p90.toFixed(1)} ms, p99 ${results.latencyMs.p99.toFixed(1)} ms, max ${results.latencyMs.max.toFixed(1)} ms`)
  } finally {
    clients.kill()
    api.kill('SIGTERM')
    await new Promise((resolve) => api.once('exit', resolve))
    await close()
    await scratch.drop()
  }
  const pass = results.received === results.expected && results.latencyMs.p99 <= 100
  console.log(`  ${pass ? 'PASS' : 'FAIL'}  every event reached every client; fan-out p99 ≤ 100 ms`)
  results.pass = pass
  mkdirSync(RESULTS_DIR, { recursive: true })
  writeFileSync(join(RESULTS_DIR, `websocket-${results.startedAt.replaceAll(':', '-')}.json`), `${JSON.stringify(results, null, 2)}\n`)
  process.exit(pass ? 0 : 1)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
