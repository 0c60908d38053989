/**
 * More attempts to one receiver's origin than the worker keeps connections to it: those that find
 * every connection busy wait in the worker, not against the receiver's time limit. A real receiver
 * that answers each request in 600 ms, well within the 1 s limit, and a worker allowed two
 * connections to it.
 */
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { createDb, newId, writeEvents, type DatabaseHandle } from '@commerce/db'
import { createTestDatabase, type TestDatabase } from '@commerce/db/testing'
import { createLogger } from '../src/logger.js'
import { createWorkerMetrics } from '../src/metrics.js'
import { startWorker, type StartedWorker } from '../src/worker.js'
import { ok, startReceiver, type Receiver } from './receiver.js'

const TIMEOUT_MS = 1000
const ANSWER_MS = 600
const CONNECTIONS = 2
const SUBSCRIPTIONS = 6

let database: TestDatabase
let handle: DatabaseHandle
let receiver: Receiver
let worker: StartedWorker
const metrics = createWorkerMetrics()
let open = 0
let mostOpen = 0

beforeAll(async () => {
  database = await createTestDatabase(inject('adminUrl'), inject('template'))
  handle = createDb({ url: database.url, poolMax: 4 })
  receiver = await startReceiver()
  worker = await startWorker({
    databaseUrl: database.url,
    concurrency: 4,
    databasePoolMax: 6,
    pollIntervalMs: 50,
    webhooks: { timeoutMs: TIMEOUT_MS, retrySchedule: [500, 500, 500], allowPrivateTargets: true, connectionsPerOrigin: CONNECTIONS },
    metrics,
    logger: createLogger('silent'),
  })
})

afterAll(async () => {
  await worker?.stop()
  await receiver?.close()
  await handle?.close()
  await database?.drop()
})

describe('attempts beyond the connections to one origin', () => {
  it('wait for a connection in the worker, or are put off: none is recorded as the receiver timing out', async () => {
    const paths = Array.from({ length: SUBSCRIPTIONS }, (_, n) => `/hook-${n}`)
    const webhookIds: string[] = []
    for (const path of paths) {
      receiver.answer(path, (response) => {
        open++
        mostOpen = Math.max(mostOpen, open)
        setTimeout(() => {
          open--
          ok(response, 0)
        }, ANSWER_MS)
      })
      const id = newId()
      webhookIds.push(id)
      await handle.sql`insert into webhooks (id, url, events, secret) values (${id}, ${receiver.url(path)}, ${['order.paid']}, ${`whsec_${Buffer.from(id).toString('base64')}`})`
    }
    // One event, one fan-out job: six attempts to one origin start together.
    const [eventId] = await handle.db.transaction((tx) => writeEvents(tx, [{ kind: 'order.paid', resourceId: newId(), data: { n: 1 } }]))

    await vi.waitFor(
      async () => {
        const [row] = await handle.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where event_id = ${eventId!} and status = 'succeeded'`
        expect(row!.n).toBe(SUBSCRIPTIONS)
      },
      { timeout: 20_000, interval: 100 },
    )
    const attempts = await handle.sql<{ attempt: number; succeeded: boolean; error: string | null }[]>`
      select a.attempt, a.succeeded, a.error from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id where d.event_id = ${eventId!}`
    // Each delivery took one attempt, answered in time; waiting for a connection was none.
    expect(attempts).toEqual(Array.from({ length: SUBSCRIPTIONS }, () => ({ attempt: 1, succeeded: true, error: null })))
    expect(mostOpen).toBeLessThanOrEqual(CONNECTIONS)
    const health = await handle.sql<{ consecutive_failures: number; last_failure_at: Date | null }[]>`
      select consecutive_failures, last_failure_at from webhooks where id in ${handle.sql(webhookIds)}`
    expect(health.every((row) => row.consecutive_failures === 0 && row.last_failure_at === null)).toBe(true)
    // The put-off attempts are counted as such, not as failures.
    const exposition = await metrics.registry.metrics()
    expect(exposition).not.toMatch(/commerce_webhook_attempt_failures_total\{reason="timeout"\} [1-9]/)
    expect(exposition).toMatch(/commerce_webhook_attempts_deferred_total\{reason="connections_busy"\} [1-9]/)
  })
})
