/**
 * One slow receiver must not delay the others: a healthy receiver's delivery time with a hanging
 * and a drip-feeding receiver subscribed beside it, against its time alone; and the retries of a
 * failing receiver keep their schedule meanwhile. Each receiver is a server of its own (its own
 * origin, as receivers are), written to by a worker running in this process.
 */
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { createDb, newId, writeEvents, type DatabaseHandle, type NewEvent } from '@commerce/db'
import { createTestDatabase, type TestDatabase } from '@commerce/db/testing'
import { createLogger } from '../src/logger.js'
import { startWorker, type StartedWorker } from '../src/worker.js'
import { startReceiver, type Receiver } from './receiver.js'

const TIMEOUT_MS = 1000
const SCHEDULE = [1000, 2000, 3000]
const EVENTS = 60
const EVENT_GAP_MS = 40
/**
 * The loaded p95 may be twice the solo one plus this floor: a solo p95 of a few milliseconds
 * would otherwise make the bound tighter than the noise of one busy moment on a shared machine
 * (the two phases run seconds apart). Without isolation the loaded p95 is in seconds.
 */
const FLOOR_MS = 100

let database: TestDatabase
let handle: DatabaseHandle
let worker: StartedWorker
const receivers: Record<'healthy' | 'hanging' | 'dripping' | 'failing', Receiver> = {} as never
const logged: { level: string; msg: string }[] = []
const hangingGivenUpAt: number[] = []

beforeAll(async () => {
  database = await createTestDatabase(inject('adminUrl'), inject('template'))
  handle = createDb({ url: database.url, poolMax: 4 })
  for (const name of ['healthy', 'hanging', 'dripping', 'failing'] as const) receivers[name] = await startReceiver()
  // Never answers; notes when the worker gives up on a request (its connection closes).
  receivers.hanging.answer('/', (response) => response.on('close', () => hangingGivenUpAt.push(Date.now())))
  receivers.dripping.answer('/', (response) => {
    // Headers at once, then a byte every 100 ms: only the whole time limit cuts it off.
    response.writeHead(200, { 'content-type': 'text/plain' })
    const drip = setInterval(() => response.write('.'), 100)
    response.on('close', () => clearInterval(drip))
  })
  receivers.failing.answer('/', (response) => response.writeHead(500).end('down'))
  worker = await startWorker({
    databaseUrl: database.url,
    // The worker's defaults: concurrency and how often it looks for due retries.
    concurrency: 5,
    databasePoolMax: 6,
    webhooks: { timeoutMs: TIMEOUT_MS, retrySchedule: SCHEDULE, allowPrivateTargets: true },
    logger: createLogger('info', (line) => void logged.push(JSON.parse(line) as { level: string; msg: string })),
  })
})

afterAll(async () => {
  await worker?.stop()
  for (const receiver of Object.values(receivers)) await receiver.close()
  await handle?.close()
  await database?.drop()
})

async function subscribe(receiver: Receiver, kind: string) {
  const id = newId()
  await handle.sql`insert into webhooks (id, url, events, secret) values (${id}, ${receiver.url('/')}, ${[kind]}, ${`whsec_${Buffer.from(id).toString('base64')}`})`
  return id
}

/** Writes EVENTS events of `kind`, one per transaction, EVENT_GAP_MS apart; answers each one's commit time. */
async function emitEvents(kind: NewEvent['kind']): Promise<Map<string, number>> {
  const committed = new Map<string, number>()
  for (let n = 0; n < EVENTS; n++) {
    const [id] = await handle.db.transaction((tx) => writeEvents(tx, [{ kind, resourceId: newId(), data: { n } }]))
    committed.set(id!, Date.now())
    await new Promise((resolve) => setTimeout(resolve, EVENT_GAP_MS))
  }
  return committed
}

/** The healthy receiver's delivery times (commit to receipt) of these events, sorted. */
async function deliveryTimes(committed: Map<string, number>): Promise<number[]> {
  const ofThese = () => receivers.healthy.received('/').filter((request) => committed.has(JSON.parse(request.body).id as string))
  await vi.waitFor(() => expect(ofThese()).toHaveLength(committed.size), { timeout: 20_000 })
  return ofThese()
    .map((request) => request.at - committed.get(JSON.parse(request.body).id as string)!)
    .sort((a, b) => a - b)
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

async function metricValue(name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = await worker.metrics.registry.getSingleMetric(name)!.get()
  return metric.values.filter((value) => Object.entries(labels).every(([key, label]) => value.labels[key] === label)).reduce((sum, value) => sum + value.value, 0)
}

describe('endpoint isolation', () => {
  it('keeps a healthy receiver within twice its solo delivery time, and a failing one on its retry schedule, beside a hanging and a drip-feeding receiver', async () => {
    await subscribe(receivers.healthy, 'order.paid')
    const solo = await deliveryTimes(await emitEvents('order.paid'))

    // The same, with three bad receivers subscribed to the same events.
    await subscribe(receivers.hanging, 'order.paid')
    await subscribe(receivers.dripping, 'order.paid')
    await subscribe(receivers.failing, 'order.paid')
    const committed = await emitEvents('order.paid')
    const loaded = await deliveryTimes(committed)

    const figures = {
      solo: { p50: percentile(solo, 50), p95: percentile(solo, 95) },
      loaded: { p50: percentile(loaded, 50), p95: percentile(loaded, 95) },
    }
    expect(figures.loaded.p95, JSON.stringify(figures)).toBeLessThanOrEqual(2 * figures.solo.p95 + FLOOR_MS)

    // Every delivery to the failing receiver: four attempts, each retry within a second of its time.
    await vi.waitFor(
      () => {
        for (const id of committed.keys()) expect(receivers.failing.received('/').filter((request) => JSON.parse(request.body).id === id)).toHaveLength(4)
      },
      { timeout: 20_000, interval: 200 },
    )
    const lateness: number[] = []
    for (const id of committed.keys()) {
      const times = receivers.failing
        .received('/')
        .filter((request) => JSON.parse(request.body).id === id)
        .map((request) => request.at)
      SCHEDULE.forEach((wait, n) => lateness.push(times[n + 1]! - times[n]! - wait))
    }
    expect(Math.min(...lateness)).toBeGreaterThanOrEqual(0)
    expect(Math.max(...lateness), `retry gaps late by up to ${Math.max(...lateness)} ms`).toBeLessThan(1000)

    // The hanging receiver was slowed down: once its first attempt timed out, its attempts were put
    // off rather than sent beside the one in flight, so at most one arrives per time limit (without
    // that, every event and retry would arrive at once, dozens a second). Counted from when the
    // worker gave up on the first, as the receiver saw it (not from a timer's due time, which a
    // busy machine misses), plus one time limit: attempts started before the worker knew may still
    // arrive until then.
    expect(await metricValue('commerce_webhook_attempts_deferred_total')).toBeGreaterThan(0)
    const hangingAt = receivers.hanging.received('/').map((request) => request.at)
    const slowedFrom = hangingGivenUpAt[0]! + TIMEOUT_MS + 250
    const afterSlowed = hangingAt.filter((at) => at > slowedFrom)
    const span = afterSlowed.length > 0 ? afterSlowed.at(-1)! - slowedFrom : 0
    const hangingErrors = await handle.sql<{ error: string | null; n: number }[]>`
      select a.error, count(*)::int as n from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
      join webhooks w on w.id = d.webhook_id where w.url = ${receivers.hanging.url('/')} group by a.error`
    expect(afterSlowed.length, `${afterSlowed.length} attempts in ${span} ms; outcomes ${JSON.stringify(hangingErrors)}`).toBeLessThanOrEqual(span / TIMEOUT_MS + 2)
    // The drip-feeding receiver's answers were cut off by the whole time limit, body read included.
    const dripped = await handle.sql<{ error: string | null; duration_ms: number }[]>`
      select a.error, a.duration_ms from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id
      join webhooks w on w.id = d.webhook_id where w.url = ${receivers.dripping.url('/')}`
    expect(dripped.length).toBeGreaterThan(0)
    for (const attempt of dripped) {
      expect(attempt.error).toBe(`timed out after ${TIMEOUT_MS} ms`)
      expect(attempt.duration_ms).toBeLessThan(TIMEOUT_MS + 500)
    }
    expect(await metricValue('commerce_worker_jobs_total', { result: 'error' })).toBe(0)
    expect(logged.filter((entry) => entry.level === 'error')).toEqual([])
    console.info(`healthy receiver, commit to receipt: ${JSON.stringify(figures)}; failing receiver's retries late by ${Math.min(...lateness)}–${Math.max(...lateness)} ms`)
  })
})
