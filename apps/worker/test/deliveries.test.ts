/**
 * Events to webhook deliveries, end to end: events written the way the API writes them
 * (writeEvents in a transaction), a worker running in this process, a real receiver.
 */
import { createHmac } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { addDeliveryJob, createDb, newId, sqlOf, writeEvents, type DatabaseHandle, type NewEvent } from '@commerce/db'
import { createTestDatabase, type TestDatabase } from '@commerce/db/testing'
import { createLogger } from '../src/logger.js'
import { startWorker, type StartedWorker, type WebhookSettings } from '../src/worker.js'
import { startReceiver, type Receiver } from './receiver.js'

const RETRIES = [300, 900, 1500]
let database: TestDatabase
let handle: DatabaseHandle
let receiver: Receiver
let worker: StartedWorker

/** The log lines of the running worker, when started with `logs`. */
interface LogLine {
  level: string
  msg: string
  [field: string]: unknown
}

async function startTestWorker(webhooks: Partial<WebhookSettings> = {}, logs?: LogLine[]) {
  return startWorker({
    databaseUrl: database.url,
    concurrency: 4,
    databasePoolMax: 6,
    // Retries are due within a second here: look for them often.
    pollIntervalMs: 50,
    webhooks: { timeoutMs: 1000, retrySchedule: RETRIES, allowPrivateTargets: true, ...webhooks },
    logger: logs ? createLogger('debug', (line) => void logs.push(JSON.parse(line) as LogLine)) : createLogger('silent'),
  })
}

beforeAll(async () => {
  database = await createTestDatabase(inject('adminUrl'), inject('template'))
  handle = createDb({ url: database.url, poolMax: 4 })
  receiver = await startReceiver()
  worker = await startTestWorker()
})

afterAll(async () => {
  await worker?.stop()
  await receiver?.close()
  await handle?.close()
  await database?.drop()
})

async function subscribe(path: string, events: string[], options: { secret?: string; active?: boolean; url?: string } = {}) {
  const id = newId()
  const secret = options.secret ?? `whsec_${Buffer.from(id).toString('base64')}`
  await handle.sql`insert into webhooks (id, url, events, secret, is_active)
    values (${id}, ${options.url ?? receiver.url(path)}, ${events}, ${secret}, ${options.active ?? true})`
  return { id, secret }
}

async function emit(...list: NewEvent[]): Promise<string[]> {
  return handle.db.transaction((tx) => writeEvents(tx, list))
}

const paid = (n = 1): NewEvent => ({
  kind: 'order.paid',
  resourceId: newId(),
  data: { order_id: newId(), order_number: String(1000 + n), total: 42.5, currency: 'USD' },
})

async function deliveryOf(webhookId: string, eventId: string) {
  const [delivery] = await handle.sql<{ id: string; status: string; attempts: number; next_attempt_at: Date | null; last_status_code: number | null }[]>`
    select id, status, attempts, next_attempt_at, last_status_code from webhook_deliveries where webhook_id = ${webhookId} and event_id = ${eventId}`
  return delivery
}

async function attemptsOf(deliveryId: string) {
  return handle.sql<{ attempt: number; succeeded: boolean; status_code: number | null; error: string | null; response_body: string | null }[]>`
    select attempt, succeeded, status_code, error, response_body from webhook_attempts where delivery_id = ${deliveryId} order by attempt`
}

async function healthOf(webhookId: string) {
  const [row] = await handle.sql<
    { consecutive_failures: number; last_success_at: Date | null; last_failure_at: Date | null; failing_since: Date | null; is_active: boolean; disabled_at: Date | null; disabled_reason: string | null }[]
  >`select consecutive_failures, last_success_at::text, last_failure_at::text, failing_since::text, is_active, disabled_at::text, disabled_reason
    from webhooks where id = ${webhookId}`
  if (!row) return undefined
  const date = (text: Date | null) => (text === null ? null : new Date(text as unknown as string))
  return { ...row, last_success_at: date(row.last_success_at), last_failure_at: date(row.last_failure_at), failing_since: date(row.failing_since), disabled_at: date(row.disabled_at) }
}

/** What a Standard Webhooks verifier holding this secret makes of a received request. */
function verifyWith(secret: string, request: { body: string; headers: Record<string, string | string[] | undefined> }) {
  const headers = { 'webhook-id': String(request.headers['webhook-id']), 'webhook-timestamp': String(request.headers['webhook-timestamp']), 'webhook-signature': String(request.headers['webhook-signature']) }
  return new Webhook(secret).verify(request.body, headers)
}

describe('fan-out and delivery', () => {
  it('delivers an event to each active subscription that wants it and to no other, signed both ways', async () => {
    const wantsPaid = await subscribe('/paid', ['order.paid'])
    const wantsAll = await subscribe('/all', ['*'], { secret: 'a plain secret of the seed' })
    await subscribe('/products', ['product.created'])
    await subscribe('/inactive', ['order.paid'], { active: false })

    const [eventId] = await emit(paid())
    await vi.waitFor(
      () => {
        expect(receiver.received('/paid')).toHaveLength(1)
        expect(receiver.received('/all')).toHaveLength(1)
      },
      { timeout: 10_000 },
    )
    // Nothing more comes: the others do not want it or are inactive.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(receiver.received('/products')).toHaveLength(0)
    expect(receiver.received('/inactive')).toHaveLength(0)

    // (this client reads timestamps as text, see sqlOf)
    const [event] = await handle.sql<{ data: Record<string, unknown>; created_at: string; resource_id: string; sequence: number }[]>`
      select data, created_at, resource_id, sequence from events where id = ${eventId!}`
    for (const [path, subscription] of [['/paid', wantsPaid], ['/all', wantsAll]] as const) {
      const [request] = receiver.received(path)
      const body = JSON.parse(request!.body) as Record<string, unknown>
      expect(Object.keys(body)).toEqual(['id', 'event', 'timestamp', 'resource_id', 'sequence', 'data'])
      expect(body).toEqual({
        id: eventId,
        event: 'order.paid',
        timestamp: new Date(event!.created_at).toISOString(),
        resource_id: event!.resource_id,
        sequence: 1,
        data: event!.data,
      })
      expect(request!.headers['content-type']).toBe('application/json')
      expect(request!.headers['x-webhook-id']).toBe(eventId)
      expect(request!.headers['x-webhook-event']).toBe('order.paid')
      // X-Webhook-Signature: lowercase hex HMAC-SHA256 of the exact body, keyed with the secret's UTF-8 bytes.
      expect(request!.headers['x-webhook-signature']).toBe(createHmac('sha256', Buffer.from(subscription.secret, 'utf8')).update(request!.body).digest('hex'))
      // Standard Webhooks: the npm verifier accepts it (base64 key for whsec_, raw bytes otherwise).
      const verifier = subscription.secret.startsWith('whsec_') ? new Webhook(subscription.secret) : new Webhook(Buffer.from(subscription.secret, 'utf8'), { format: 'raw' })
      const headers = { 'webhook-id': String(request!.headers['webhook-id']), 'webhook-timestamp': String(request!.headers['webhook-timestamp']), 'webhook-signature': String(request!.headers['webhook-signature']) }
      expect(headers['webhook-id']).toBe(eventId)
      expect(verifier.verify(request!.body, headers)).toEqual(body)
    }

    const delivery = await deliveryOf(wantsPaid.id, eventId!)
    await vi.waitFor(async () => expect((await deliveryOf(wantsPaid.id, eventId!))!.status).toBe('succeeded'))
    const attempts = await attemptsOf(delivery!.id)
    expect(attempts).toEqual([{ attempt: 1, succeeded: true, status_code: 200, error: null, response_body: 'thanks' }])
  })

  it('splits a fan-out wider than one job takes into several, and delivers each pair once', async () => {
    const wide = [await subscribe('/wide-a', ['order.created']), await subscribe('/wide-b', ['order.created'])]
    // 130 events × 2 subscriptions = 260 first attempts: more than one fan-out job makes.
    const ids = await emit(...Array.from({ length: 130 }, (_, n): NewEvent => ({ kind: 'order.created', resourceId: newId(), data: { n } })))
    await vi.waitFor(
      () => {
        expect(receiver.received('/wide-a')).toHaveLength(130)
        expect(receiver.received('/wide-b')).toHaveLength(130)
      },
      { timeout: 15_000 },
    )
    await new Promise((resolve) => setTimeout(resolve, 300))
    for (const path of ['/wide-a', '/wide-b']) {
      expect(receiver.received(path).map((request) => JSON.parse(request.body).id).sort()).toEqual([...ids].sort())
    }
    const [rows] = await handle.sql<{ deliveries: number; attempts: number }[]>`
      select count(distinct d.id)::int as deliveries, count(a.id)::int as attempts
      from webhook_deliveries d join webhook_attempts a on a.delivery_id = d.id
      where d.webhook_id in ${handle.sql(wide.map((subscription) => subscription.id))}`
    expect(rows).toEqual({ deliveries: 260, attempts: 260 })
  })

  it('sends nothing for events of a rolled-back transaction', async () => {
    await subscribe('/rolled-back', ['order.refunded'])
    await expect(
      handle.db.transaction(async (tx) => {
        await writeEvents(tx, [{ kind: 'order.refunded', resourceId: newId(), data: { n: 1 } }])
        throw new Error('the change failed')
      }),
    ).rejects.toThrow('the change failed')
    const [committed] = await emit({ kind: 'order.refunded', resourceId: newId(), data: { n: 2 } })
    await vi.waitFor(() => expect(receiver.received('/rolled-back')).toHaveLength(1), { timeout: 10_000 })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(receiver.received('/rolled-back').map((request) => JSON.parse(request.body).id)).toEqual([committed])
  })
})

describe('secret rotation', () => {
  it('signs with the new and the previous secret during the grace period, then with the new one only', async () => {
    const { id, secret: previous } = await subscribe('/rotating', ['order.paid'])
    const current = `whsec_${Buffer.from('the new secret of the rotation').toString('base64')}`
    await handle.sql`update webhooks set secret = ${current}, previous_secret = ${previous},
      previous_secret_expires_at = now() + interval '1 hour' where id = ${id}`
    await emit(paid(20))
    await vi.waitFor(() => expect(receiver.received('/rotating')).toHaveLength(1), { timeout: 10_000 })
    const [during] = receiver.received('/rotating')
    const signatures = String(during!.headers['webhook-signature']).split(' ')
    expect(signatures).toHaveLength(2)
    expect(signatures.every((signature) => signature.startsWith('v1,'))).toBe(true)
    // A receiver holding either secret verifies the delivery; X-Webhook-Signature is the new secret's.
    expect(verifyWith(current, during!)).toMatchObject({ event: 'order.paid' })
    expect(verifyWith(previous, during!)).toMatchObject({ event: 'order.paid' })
    expect(during!.headers['x-webhook-signature']).toBe(createHmac('sha256', current).update(during!.body).digest('hex'))

    await handle.sql`update webhooks set previous_secret_expires_at = now() - interval '1 second' where id = ${id}`
    await emit(paid(21))
    await vi.waitFor(() => expect(receiver.received('/rotating')).toHaveLength(2), { timeout: 10_000 })
    const after = receiver.received('/rotating')[1]!
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1)
    expect(verifyWith(current, after)).toMatchObject({ event: 'order.paid' })
    expect(() => verifyWith(previous, after)).toThrow()
  })
})

describe('retries', () => {
  it('retries a receiver that fails twice, with growing gaps, and then succeeds on the third attempt', async () => {
    const { id } = await subscribe('/flaky', ['order.paid'])
    receiver.answer('/flaky', (response, n) => response.writeHead(n < 2 ? 500 : 204).end(n < 2 ? 'not now' : undefined))
    const [eventId] = await emit(paid(2))
    await vi.waitFor(async () => expect((await deliveryOf(id, eventId!))!.status).toBe('succeeded'), { timeout: 15_000 })

    const requests = receiver.received('/flaky')
    expect(requests).toHaveLength(3)
    // The same webhook-id on every attempt; a fresh timestamp header each time.
    expect(new Set(requests.map((request) => request.headers['webhook-id']))).toEqual(new Set([eventId]))
    const gaps = [requests[1]!.at - requests[0]!.at, requests[2]!.at - requests[1]!.at]
    expect(gaps[0]).toBeGreaterThanOrEqual(RETRIES[0]!)
    expect(gaps[1]).toBeGreaterThanOrEqual(RETRIES[1]!)
    expect(gaps[1]).toBeGreaterThan(gaps[0]!)

    const delivery = await deliveryOf(id, eventId!)
    expect(delivery).toMatchObject({ attempts: 3, last_status_code: 204, next_attempt_at: null })
    const attempts = await attemptsOf(delivery!.id)
    expect(attempts.map((attempt) => [attempt.attempt, attempt.succeeded, attempt.status_code, attempt.error])).toEqual([
      [1, false, 500, 'HTTP 500'],
      [2, false, 500, 'HTTP 500'],
      [3, true, 204, null],
    ])
    expect(attempts[0]!.response_body).toBe('not now')
  })

  it('makes exactly four attempts to a receiver that always fails, ends failed, and a redelivery succeeds', async () => {
    const { id } = await subscribe('/down', ['order.paid'])
    let up = false
    receiver.answer('/down', (response) => (up ? response.writeHead(200).end() : response.writeHead(503).end('x'.repeat(5000))))
    const [eventId] = await emit(paid(3))
    await vi.waitFor(async () => expect((await deliveryOf(id, eventId!))!.status).toBe('failed'), { timeout: 20_000 })
    await new Promise((resolve) => setTimeout(resolve, RETRIES.at(-1)! + 500))
    expect(receiver.received('/down')).toHaveLength(4)
    const delivery = await deliveryOf(id, eventId!)
    expect(delivery).toMatchObject({ attempts: 4, last_status_code: 503, next_attempt_at: null })
    const attempts = await attemptsOf(delivery!.id)
    expect(attempts.map((attempt) => attempt.attempt)).toEqual([1, 2, 3, 4])
    // Only the first KiB of an answer is kept.
    expect(attempts[0]!.response_body).toBe('x'.repeat(1024))
    // The fan-out's first attempt and the three retries each count against the endpoint's health.
    const failing = await healthOf(id)
    expect(failing).toMatchObject({ consecutive_failures: 4, last_success_at: null, is_active: true })
    expect(failing!.failing_since).not.toBeNull()
    expect(failing!.last_failure_at!.getTime()).toBeGreaterThan(failing!.failing_since!.getTime())

    up = true
    await handle.db.transaction((tx) => addDeliveryJob(tx, { delivery_id: delivery!.id, attempt: 5, retry: 0 }))
    await vi.waitFor(async () => expect((await deliveryOf(id, eventId!))!.status).toBe('succeeded'), { timeout: 10_000 })
    expect(receiver.received('/down')).toHaveLength(5)
    expect((await attemptsOf(delivery!.id)).map((attempt) => [attempt.attempt, attempt.succeeded])).toEqual([
      [1, false],
      [2, false],
      [3, false],
      [4, false],
      [5, true],
    ])
    // A success ends the failure streak.
    expect(await healthOf(id)).toMatchObject({ consecutive_failures: 0, failing_since: null, last_failure_at: failing!.last_failure_at })
    expect((await healthOf(id))!.last_success_at).not.toBeNull()
  })

  it('retries a receiver that resets the connection, per the schedule, until it answers', async () => {
    const { id } = await subscribe('/reset', ['order.paid'])
    // The first two attempts: the connection is cut before any answer.
    receiver.answer('/reset', (response, n) => (n < 2 ? response.socket!.destroy() : response.writeHead(200).end()))
    const [eventId] = await emit(paid(4))
    await vi.waitFor(async () => expect((await deliveryOf(id, eventId!))!.status).toBe('succeeded'), { timeout: 15_000 })
    const requests = receiver.received('/reset')
    expect(requests).toHaveLength(3)
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(RETRIES[0]!)
    const attempts = await attemptsOf((await deliveryOf(id, eventId!))!.id)
    expect(attempts.map((attempt) => [attempt.attempt, attempt.succeeded, attempt.status_code])).toEqual([
      [1, false, null],
      [2, false, null],
      [3, true, 200],
    ])
    expect(attempts[0]!.error).toBeTruthy()
  })

  it('stops at 410 Gone, and counts redirects (not followed) and timeouts as failures', async () => {
    const gone = await subscribe('/gone', ['product.updated'])
    receiver.answer('/gone', (response) => response.writeHead(410).end())
    const moved = await subscribe('/moved', ['product.updated'])
    receiver.answer('/moved', (response) => response.writeHead(302, { location: receiver.url('/target') }).end())
    const slow = await subscribe('/slow', ['product.updated'])
    receiver.answer('/slow', () => {})

    const [eventId] = await emit({ kind: 'product.updated', resourceId: newId(), data: { id: newId() } })
    await vi.waitFor(async () => expect((await deliveryOf(gone.id, eventId!))!.status).toBe('failed'), { timeout: 10_000 })
    expect(await attemptsOf((await deliveryOf(gone.id, eventId!))!.id)).toHaveLength(1)

    await vi.waitFor(async () => expect((await deliveryOf(moved.id, eventId!))!.attempts).toBeGreaterThanOrEqual(1), { timeout: 10_000 })
    const [redirect] = await attemptsOf((await deliveryOf(moved.id, eventId!))!.id)
    expect(redirect).toMatchObject({ succeeded: false, status_code: 302, error: 'HTTP 302' })
    expect(receiver.received('/target')).toHaveLength(0)

    await vi.waitFor(async () => expect((await deliveryOf(slow.id, eventId!))!.attempts).toBeGreaterThanOrEqual(1), { timeout: 10_000 })
    const [timedOut] = await attemptsOf((await deliveryOf(slow.id, eventId!))!.id)
    expect(timedOut).toMatchObject({ succeeded: false, status_code: null, error: 'timed out after 1000 ms' })
  })
})

describe('SSRF guard', () => {
  it('refuses loopback, metadata and private targets, by literal or by name, without connecting', async () => {
    const guarded = await startTestWorker({ allowPrivateTargets: false })
    // The unguarded worker of this file must not take these jobs: stop it while the guarded one runs.
    await worker.stop()
    try {
      const targets = [
        receiver.url('/ssrf-literal'),
        receiver.url('/ssrf-name').replace('127.0.0.1', 'localhost'),
        'http://169.254.169.254/latest/meta-data/',
        'http://[::1]:9/',
        'http://10.0.0.1:9/',
      ]
      const subscriptions = await Promise.all(targets.map((url, n) => subscribe(`/ssrf-${n}`, ['customer.created'], { url })))
      const [eventId] = await emit({ kind: 'customer.created', resourceId: newId(), data: { id: newId() } })
      for (const subscription of subscriptions) {
        await vi.waitFor(async () => expect((await deliveryOf(subscription.id, eventId!))?.attempts).toBe(1), { timeout: 10_000 })
        const [attempt] = await attemptsOf((await deliveryOf(subscription.id, eventId!))!.id)
        expect(attempt!.succeeded).toBe(false)
        expect(attempt!.status_code).toBeNull()
        expect(attempt!.error).toMatch(/^refused: .+ is not a public address$/)
      }
      expect(receiver.received('/ssrf-literal')).toHaveLength(0)
      expect(receiver.received('/ssrf-name')).toHaveLength(0)
    } finally {
      await guarded.stop()
      worker = await startTestWorker()
    }
  })
})

describe('endpoint health', () => {
  it('disables a subscription failing for longer than the period, once, with a webhook.disabled event; a shorter streak stays active', async () => {
    await worker.stop()
    worker = await startTestWorker({ disableAfterMs: 86_400_000 })
    await subscribe('/watcher', ['webhook.disabled'])
    const broken = await subscribe('/broken', ['order.refunded'])
    const flaky = await subscribe('/flaky', ['order.refunded'])
    for (const path of ['/broken', '/flaky']) receiver.answer(path, (response) => response.writeHead(500).end())
    await handle.sql`update webhooks set failing_since = now() - interval '2 days', consecutive_failures = 9 where id = ${broken.id}`
    await handle.sql`update webhooks set failing_since = now() - interval '23 hours', consecutive_failures = 9 where id = ${flaky.id}`

    // Three events in one transaction: one fan-out, three failed attempts to each.
    const refunded = (n: number): NewEvent => ({ kind: 'order.refunded', resourceId: newId(), data: { n } })
    await emit(refunded(1), refunded(2), refunded(3))
    await vi.waitFor(() => expect(receiver.received('/watcher')).toHaveLength(1), { timeout: 10_000 })

    const disabled = await healthOf(broken.id)
    expect(disabled).toMatchObject({ is_active: false, consecutive_failures: 12 })
    expect(disabled!.disabled_at).not.toBeNull()
    expect(disabled!.disabled_reason).toBe(`Every attempt failed since ${disabled!.failing_since!.toISOString()}`)
    expect(await healthOf(flaky.id)).toMatchObject({ is_active: true, consecutive_failures: 12, disabled_at: null })

    // The event, delivered like any other, shows the subscription as the API does (no secret).
    const [notice] = receiver.received('/watcher')
    const envelope = JSON.parse(notice!.body) as { event: string; data: Record<string, unknown> }
    expect(envelope.event).toBe('webhook.disabled')
    expect(envelope.data).toMatchObject({
      id: broken.id,
      url: receiver.url('/broken'),
      events: ['order.refunded'],
      is_active: false,
      consecutive_failures: 12,
      disabled_at: disabled!.disabled_at!.toISOString(),
      failing_since: disabled!.failing_since!.toISOString(),
    })
    expect(JSON.stringify(envelope.data)).not.toContain(broken.secret)
    const events = await handle.sql<{ kind: string }[]>`select kind from events where kind = 'webhook.disabled' and data->>'id' = ${broken.id}`
    expect(events).toHaveLength(1)

    // Disabled: later events are not sent to it.
    const sent = receiver.received('/broken').length
    expect(sent).toBe(3)
    await emit(refunded(4))
    const ofFourth = () => receiver.received('/flaky').filter((request) => JSON.parse(request.body).data.n === 4)
    await vi.waitFor(() => expect(ofFourth().length).toBeGreaterThan(0), { timeout: 10_000 })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(receiver.received('/broken')).toHaveLength(sent)
    expect(receiver.received('/watcher')).toHaveLength(1)
  })
})

describe('a subscription deleted during a delivery', () => {
  const logs: LogLine[] = []
  beforeAll(async () => {
    await worker.stop()
    worker = await startTestWorker({}, logs)
  })
  afterAll(async () => {
    await worker.stop()
    worker = await startTestWorker()
  })

  const deleteSubscription = (id: string) => handle.sql`delete from webhooks where id = ${id}`
  /** A promise and the function that resolves it. */
  function signal() {
    let resolve!: () => void
    const promise = new Promise<void>((done) => (resolve = done))
    return { promise, resolve }
  }
  async function deliveryMade(webhookId: string, eventId: string) {
    return vi.waitFor(
      async () => {
        const delivery = await deliveryOf(webhookId, eventId)
        expect(delivery).toBeDefined()
        return delivery!
      },
      { timeout: 10_000 },
    )
  }
  async function skippedDeleted() {
    const metric = await worker.metrics.registry.getSingleMetric('commerce_webhook_deliveries_skipped_total')?.get()
    return metric?.values.find((value) => value.labels.reason === 'deleted')?.value ?? 0
  }
  /** Waits for the job to end, quietly or not, and checks it was quiet: no error logged, none counted. */
  async function expectQuietEnd(skippedBefore: number) {
    await vi.waitFor(async () => expect((await skippedDeleted()) > skippedBefore || (await jobErrors()) > 0).toBe(true), { timeout: 10_000 })
    expect(logs.filter((line) => line.level === 'error')).toEqual([])
    expect(await jobErrors()).toBe(0)
    expect(await skippedDeleted()).toBe(skippedBefore + 1)
  }
  async function jobErrors() {
    const metric = await worker.metrics.registry.getSingleMetric('commerce_worker_jobs_total')!.get()
    return metric.values.filter((value) => value.labels.result === 'error').reduce((sum, value) => sum + value.value, 0)
  }

  /**
   * A subscription whose receiver fails the first attempt and holds the retry's request: `during`
   * runs while it is held (the attempt is under way), then the receiver answers 500.
   */
  async function holdRetry(path: string, during: (id: string) => Promise<unknown>) {
    const { id } = await subscribe(path, ['order.paid'])
    const held = signal()
    receiver.answer(path, (response, n) => {
      if (n === 0) return void response.writeHead(500).end()
      void during(id)
        .then(() => response.writeHead(500).end())
        .finally(() => held.resolve())
    })
    const [eventId] = await emit(paid(30))
    const deliveryId = (await deliveryMade(id, eventId!)).id
    await held.promise
    return { id, deliveryId }
  }

  async function expectEndedQuietly(deliveryId: string, skippedBefore: number) {
    await expectQuietEnd(skippedBefore)
    expect(logs.filter((line) => line.msg === 'webhook delivery dropped: its subscription was deleted').at(-1)).toMatchObject({
      level: 'info',
      delivery_id: deliveryId,
    })
    expect(await handle.sql`select from webhook_attempts where delivery_id = ${deliveryId}`).toHaveLength(0)
    // Nothing left to run for it.
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await handle.sql`select from graphile_worker._private_jobs where key like ${`deliver:${deliveryId}:%`}`).toHaveLength(0)
  }

  it('ends a retry quietly when its subscription is deleted while the retry is being sent', async () => {
    const before = await skippedDeleted()
    const { deliveryId } = await holdRetry('/deleted-while-sent', deleteSubscription)
    await expectEndedQuietly(deliveryId, before)
  })

  it('ends quietly when the subscription is deleted after the job stopped waiting for the attempt', async () => {
    const before = await skippedDeleted()
    // Held longer than the job waits (a tenth of the 1 s limit): the attempt outlives its job.
    const { deliveryId } = await holdRetry('/deleted-after-hand-off', async (id) => {
      await new Promise((resolve) => setTimeout(resolve, 400))
      await deleteSubscription(id)
    })
    await expectEndedQuietly(deliveryId, before)
    expect(logs.filter((line) => line.msg === 'webhook delivery dropped: its subscription was deleted' && line.delivery_id === deliveryId)).toHaveLength(1)
  })

  it("ends a fan-out's first attempt quietly when the subscription is deleted while it is being sent", async () => {
    const before = await skippedDeleted()
    const { id } = await subscribe('/deleted-first', ['order.paid'])
    const deleted = signal()
    receiver.answer('/deleted-first', (response) =>
      void deleteSubscription(id)
        .then(() => response.writeHead(200).end())
        .finally(() => deleted.resolve()),
    )
    await emit(paid(31))
    await deleted.promise
    await expectQuietEnd(before)
    expect(await handle.sql`select from webhook_deliveries where webhook_id = ${id}`).toHaveLength(0)
  })

  it('ends a redelivery quietly when its subscription was deleted before it ran', async () => {
    const { id } = await subscribe('/deleted-redelivery', ['order.paid'])
    const [eventId] = await emit(paid(32))
    const delivery = await deliveryMade(id, eventId!)
    const before = await skippedDeleted()
    await handle.db.transaction(async (tx) => {
      await addDeliveryJob(tx, { delivery_id: delivery.id, attempt: 2, retry: 0 }, new Date(Date.now() + 300))
      await sqlOf(tx).unsafe('delete from webhooks where id = $1', [id])
    })
    await expectQuietEnd(before)
    expect(receiver.received('/deleted-redelivery')).toHaveLength(1)
  })
})
