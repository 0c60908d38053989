/**
 * Traces of the worker (tracing.ts of @commerce/runtime), read from an in-memory exporter: a real
 * job, delivering an event to a real receiver, is a CONSUMER span carrying the request id that
 * wrote the event; its delivery is a CLIENT span beneath it, and so are its statements.
 */
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { createDb, newId, writeEvents, type DatabaseHandle } from '@commerce/db'
import { createTestDatabase, type TestDatabase } from '@commerce/db/testing'
import { InMemorySpanExporter, SpanKind, startTracing, type ReadableSpan, type Tracing } from '@commerce/runtime/tracing'
import { createLogger } from '../src/logger.js'
import { startWorker, type StartedWorker } from '../src/worker.js'
import { startReceiver, type Receiver } from './receiver.js'

const exporter = new InMemorySpanExporter()
let tracing: Tracing
let database: TestDatabase
let handle: DatabaseHandle
let receiver: Receiver
let worker: StartedWorker

beforeAll(async () => {
  tracing = startTracing({ endpoint: 'http://127.0.0.1:4318', headers: {}, serviceName: 'commerce-worker-test' }, { exporter })
  database = await createTestDatabase(inject('adminUrl'), inject('template'))
  handle = createDb({ url: database.url, poolMax: 2 })
  receiver = await startReceiver()
  const webhooks = { timeoutMs: 2000, retrySchedule: [60_000], allowPrivateTargets: true }
  worker = await startWorker({ databaseUrl: database.url, concurrency: 2, databasePoolMax: 4, webhooks, logger: createLogger('silent'), tracing })
})

afterAll(async () => {
  await worker?.stop()
  await handle?.close()
  await receiver?.close()
  await database?.drop()
  await tracing?.shutdown()
})

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId
const idOf = (span: ReadableSpan) => span.spanContext().spanId

describe('traces of the worker', () => {
  it('a job is a CONSUMER span with the request id of its event; its delivery and its statements are spans beneath it', async () => {
    await handle.sql`insert into webhooks (id, url, events, secret) values (${newId()}, ${receiver.url('/traced?token=not-in-spans')}, ${['order.paid']}, 'traced-secret')`
    const [eventId] = await handle.db.transaction((tx) =>
      writeEvents(tx, [{ kind: 'order.paid', resourceId: newId(), data: { n: 1 }, requestId: 'req-traced-1' }]),
    )
    const job = await vi.waitFor(
      () => {
        const found = exporter.getFinishedSpans().find((span) => span.name === 'fanout-event')
        if (!found) throw new Error('no fanout-event span yet')
        return found
      },
      { timeout: 20_000, interval: 100 },
    )
    expect(receiver.received()).toHaveLength(1)
    expect(job.kind).toBe(SpanKind.CONSUMER)
    expect(job.attributes).toMatchObject({ 'job.task': 'fanout-event', 'job.attempt': 1, request_id: 'req-traced-1' })
    expect(job.parentSpanContext).toBeUndefined()

    const spans = exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === job.spanContext().traceId)
    const [delivery] = spans.filter((span) => span.name === 'webhook delivery')
    expect(delivery).toBeDefined()
    expect(delivery!.kind).toBe(SpanKind.CLIENT)
    expect(parentOf(delivery!)).toBe(idOf(job))
    expect(delivery!.attributes).toEqual({
      'http.request.method': 'POST',
      'server.address': '127.0.0.1',
      request_id: 'req-traced-1',
      event_id: eventId,
      event: 'order.paid',
      webhook_id: expect.any(String),
      'http.response.status_code': 200,
      succeeded: true,
    })

    // The job's reads and its record of the attempt (postgres.js, our statements' pool).
    const statements = spans.filter((span) => span.attributes['db.system.name'] === 'postgresql')
    expect(statements.some((span) => /webhook_deliveries/.test(String(span.attributes['db.query.text'])))).toBe(true)
    for (const statement of statements) expect(parentOf(statement)).toBe(idOf(job))
    // Never the receiver's URL (it may carry a token), nor the webhook's secret.
    expect(JSON.stringify(spans.map((span) => span.attributes))).not.toMatch(/not-in-spans|traced-secret/)
  })

  it('polling for jobs makes no span: statements outside a job are not traced', async () => {
    exporter.reset()
    await new Promise((resolve) => setTimeout(resolve, 1200))
    expect(exporter.getFinishedSpans()).toEqual([])
  })
})
