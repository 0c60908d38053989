/** The worker's scheduled upkeep, run by a real worker on a real database. */
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { EXPIRED_EVENTS_BATCH, createDb, newId, sweepExpiredEvents, writeEvents, type DatabaseHandle } from '@commerce/db'
import { createTestDatabase, type TestDatabase } from '@commerce/db/testing'
import { createLogger } from '../src/logger.js'
import { startWorker, type StartedWorker } from '../src/worker.js'
import { reserveCheckout } from './checkout-reservations.js'

let database: TestDatabase
let sql: postgres.Sql
let worker: StartedWorker
let handle: DatabaseHandle

beforeAll(async () => {
  database = await createTestDatabase(inject('adminUrl'), inject('template'))
  sql = postgres(database.url, { max: 1, onnotice: () => {} })
  handle = createDb({ url: database.url, poolMax: 2 })
  worker = await startWorker({
    databaseUrl: database.url,
    concurrency: 2,
    databasePoolMax: 3,
    webhooks: { timeoutMs: 1000, retrySchedule: [1000], allowPrivateTargets: true },
    logger: createLogger('silent'),
  })
})

afterAll(async () => {
  await worker?.stop()
  await handle?.close()
  await sql?.end({ timeout: 5 })
  await database?.drop()
})

describe('expire-idempotency-keys', () => {
  it('is on the hourly schedule and deletes only the expired keys', async () => {
    const known = await sql<{ identifier: string }[]>`select identifier from graphile_worker._private_known_crontabs order by identifier`
    expect(known.map((row) => row.identifier)).toEqual(['expire-checkout-reservations', 'expire-events', 'expire-idempotency-keys', 'expire-listing-changes', 'expire-webhook-deliveries', 'refresh-best-sellers'])

    await sql`insert into idempotency_keys (principal, key, fingerprint, response_status, response_body, completed_at, expires_at)
      select 'ip:127.0.0.1', 'expired-key-' || n, 'f', 201, '{}'::jsonb, now() - interval '2 days', now() - interval '1 day'
      from generate_series(1, 12) as n`
    await sql`insert into idempotency_keys (principal, key, fingerprint, response_status, response_body, completed_at, expires_at)
      values ('ip:127.0.0.1', 'fresh-key-0000001', 'f', 201, '{}'::jsonb, now(), now() + interval '23 hours')`
    await sql`select graphile_worker.add_job('expire-idempotency-keys')`

    await vi.waitFor(async () => {
      const rows = await sql<{ key: string }[]>`select key from idempotency_keys order by key`
      expect(rows.map((row) => row.key)).toEqual(['fresh-key-0000001'])
    }, { timeout: 10_000 })
  })
})

describe('expire-checkout-reservations', () => {
  it('deletes the reservations released longer than CHECKOUT_RESERVATION_RETENTION (7 days) ago, and no other', async () => {
    const reservation = async (status: 'held' | 'released', daysAgo: number) => {
      const { paymentId } = await reserveCheckout(handle, { provider: 'retention-test' })
      await sql`update checkout_reservations set status = ${status}, updated_at = now() - make_interval(days => ${daysAgo}) where payment_id = ${paymentId}`
      return paymentId
    }
    const old = [await reservation('released', 8), await reservation('released', 30)]
    const kept = [await reservation('released', 6), await reservation('held', 30)]
    await sql`select graphile_worker.add_job('expire-checkout-reservations')`

    await vi.waitFor(async () => {
      const rows = await sql<{ id: string }[]>`select payment_id as id from checkout_reservations where payment_id in ${sql([...old, ...kept])}`
      expect(rows.map((row) => row.id).sort()).toEqual([...kept].sort())
    }, { timeout: 10_000 })
    // Their payments stay: a late success of one is given back at the provider (payment-sweeps.test.ts).
    expect((await sql<{ n: number }[]>`select count(*)::int as n from payments where id in ${sql(old)}`)[0]!.n).toBe(2)
  })
})

const DAY_MS = 86_400_000
/** EVENT_RETENTION's and WEBHOOK_DELIVERY_RETENTION's default, which the worker of this file runs with. */
const RETENTION_MS = 90 * DAY_MS

/** A UUIDv7 made `agoMs` before now, plus `n` ms: ids sort by n, as the ids of rows written one after the other. */
function idMadeAgo(agoMs: number, n = 0): string {
  const hex = (Date.now() - agoMs + n).toString(16).padStart(12, '0')
  return `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-${n.toString(16).padStart(12, '0')}`
}

/** Events written `agoMs` ago (their ids and created_at), each its own resource unless `resourceId` says. */
async function oldEvents(agoMs: number, count: number, options: { from?: number; resourceId?: string } = {}): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, n) => idMadeAgo(agoMs, (options.from ?? 0) + n))
  await sql`insert into events (id, kind, data, resource_id, sequence, created_at)
    select id, 'product.updated', '{}', coalesce(${options.resourceId ?? null}::uuid, id), 1, now() - make_interval(secs => ${agoMs / 1000})
    from unnest(${ids}::uuid[]) as id`
  return ids
}

async function existing(table: 'events' | 'webhook_deliveries', ids: readonly string[]): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`select id from ${sql(table)} where id in ${sql(ids)} order by id`
  return rows.map((row) => row.id)
}

describe('the retention of events and webhook deliveries', () => {
  it('deletes events older than EVENT_RETENTION in batches, keeps newer ones, an order\'s, and those a delivery or a notification refers to, until their delivery goes; sequences go on', async () => {
    const OLD_MS = RETENTION_MS + 10 * DAY_MS
    // More than two batches of events nothing keeps, in the middle of the old ones.
    const plain = await oldEvents(OLD_MS, 2 * EXPIRED_EVENTS_BATCH + 500, { from: 1_000 })
    // A resource whose two first events are old: its next event is number 3.
    const resource = newId()
    const ofResource = await oldEvents(OLD_MS, 2, { from: 10_000, resourceId: resource })
    await sql`update events set sequence = 2 where id = ${ofResource[1]!}`
    await sql`insert into event_sequences (resource_id, last_sequence) values (${resource}, 2)`
    // An order's event: the order's history.
    const orderId = newId()
    await sql`insert into orders (id, email, currency, subtotal_minor, discount_minor, tax_minor, shipping_minor, total_minor)
      values (${orderId}, 'kept@example.com', 'USD', 0, 0, 0, 0, 0)`
    const [ofOrder] = await oldEvents(OLD_MS, 1, { from: 20_000, resourceId: orderId })
    // An event an email was made of.
    const [notified] = await oldEvents(OLD_MS, 1, { from: 20_001 })
    await sql`insert into notifications (id, event_id, template, recipient, status) values (${newId()}, ${notified!}, 'order_confirmation', 'kept@example.com', 'sent')`
    // Events with deliveries: old and failed (with its attempt), old and waiting for a retry, redelivered yesterday.
    const webhookId = newId()
    await sql`insert into webhooks (id, url, events, secret) values (${webhookId}, 'https://example.com/hook', ${['product.updated']}, 'a-secret-of-the-test')`
    const [failedEvent, pendingEvent, redeliveredEvent] = await oldEvents(OLD_MS, 3, { from: 20_002 })
    const delivery = async (eventId: string, status: string, updatedAgoMs: number, n: number) => {
      const id = idMadeAgo(OLD_MS, 30_000 + n)
      await sql`insert into webhook_deliveries (id, webhook_id, event_id, status, attempts, created_at, updated_at)
        values (${id}, ${webhookId}, ${eventId}, ${status}, 1, now() - make_interval(secs => ${OLD_MS / 1000}), now() - make_interval(secs => ${updatedAgoMs / 1000}))`
      await sql`insert into webhook_attempts (id, delivery_id, attempt, succeeded, status_code, duration_ms) values (${newId()}, ${id}, 1, false, 500, 12)`
      return id
    }
    const failed = await delivery(failedEvent!, 'failed', OLD_MS, 0)
    const pending = await delivery(pendingEvent!, 'pending', OLD_MS, 1)
    const redelivered = await delivery(redeliveredEvent!, 'succeeded', DAY_MS, 2)
    // Newer than the retention, by a day.
    const recent = await oldEvents(RETENTION_MS - DAY_MS, 3)

    // One statement examines one batch, in id order.
    expect(await sweepExpiredEvents(sql, RETENTION_MS)).toEqual({ examined: EXPIRED_EVENTS_BATCH, deleted: EXPIRED_EVENTS_BATCH })
    await sql`select graphile_worker.add_job('expire-events')`
    await vi.waitFor(async () => expect(await existing('events', plain)).toEqual([]), { timeout: 10_000 })
    const kept = [ofOrder!, notified!, failedEvent!, pendingEvent!, redeliveredEvent!]
    expect(await existing('events', [...ofResource, ...kept, ...recent])).toEqual([...kept, ...recent].sort())
    // The sweep went as far as the retention reaches, past the events it kept.
    const [swept] = await sql<{ swept_through: string }[]>`select swept_through from event_retention`
    expect(swept!.swept_through).toBe(redeliveredEvent)

    // The resource's numbers go on where they were: no number is given twice.
    const [next] = await handle.db.transaction((tx) => writeEvents(tx, [{ kind: 'product.updated', resourceId: resource, data: {} }]))
    expect((await sql<{ sequence: number }[]>`select sequence from events where id = ${next!}`)[0]!.sequence).toBe(3)

    // The deliveries past WEBHOOK_DELIVERY_RETENTION go with their attempts, and the event only
    // the failed one kept with it; the one waiting for a retry and the one redelivered yesterday stay.
    await sql`select graphile_worker.add_job('expire-webhook-deliveries')`
    await vi.waitFor(async () => expect(await existing('webhook_deliveries', [failed, pending, redelivered])).toEqual([pending, redelivered]), { timeout: 10_000 })
    expect((await sql<{ n: number }[]>`select count(*)::int as n from webhook_attempts where delivery_id = ${failed}`)[0]!.n).toBe(0)
    expect(await existing('events', kept)).toEqual(kept.filter((id) => id !== failedEvent).sort())
  })

  it('deletes old deliveries in batches, and with them the events the sweep passed because of them', async () => {
    // Past the retention, and newer than what the sweep of the test before reached.
    const OLD_MS = RETENTION_MS + 5 * DAY_MS
    const webhookId = newId()
    await sql`insert into webhooks (id, url, events, secret) values (${webhookId}, 'https://example.com/batch', ${['product.updated']}, 'a-secret-of-the-test')`
    const eventIds = await oldEvents(OLD_MS, 1_500, { from: 40_000 })
    const deliveryIds = eventIds.map((_, n) => idMadeAgo(OLD_MS, 50_000 + n))
    await sql`insert into webhook_deliveries (id, webhook_id, event_id, status, attempts, created_at, updated_at)
      select d, ${webhookId}, e, 'succeeded', 1, now() - make_interval(secs => ${OLD_MS / 1000}), now() - make_interval(secs => ${OLD_MS / 1000})
      from unnest(${deliveryIds}::uuid[], ${eventIds}::uuid[]) as pair(d, e)`
    // The events sweep first: their deliveries keep them.
    await sql`select graphile_worker.add_job('expire-events')`
    await vi.waitFor(async () => expect((await sql<{ id: string }[]>`select swept_through as id from event_retention`)[0]?.id).toBe(eventIds.at(-1)), { timeout: 10_000 })
    expect(await existing('events', eventIds)).toHaveLength(eventIds.length)

    await sql`select graphile_worker.add_job('expire-webhook-deliveries')`
    await vi.waitFor(async () => expect(await existing('webhook_deliveries', deliveryIds)).toEqual([]), { timeout: 10_000 })
    expect(await existing('events', eventIds)).toEqual([])
  })
})

describe('expire-listing-changes', () => {
  it('deletes the listing changes older than an hour and keeps the others', async () => {
    const [old, recent] = [newId(), newId()]
    await sql`insert into listing_changes (product_id, at) values (${old}, now() - interval '61 minutes'), (${recent}, now() - interval '59 minutes')`
    await sql`select graphile_worker.add_job('expire-listing-changes')`
    await vi.waitFor(async () => {
      const rows = await sql<{ id: string }[]>`select product_id as id from listing_changes where product_id in (${old}, ${recent})`
      expect(rows.map((row) => row.id)).toEqual([recent])
    }, { timeout: 10_000 })
  })
})

describe('jobs of stopped workers', () => {
  it('are unlocked once locked longer than any of our jobs runs (a SIGKILLed worker), and only then', async () => {
    // A task no worker knows, so that nothing runs the jobs once they are unlocked.
    const lock = async (worker: string, lockedFor: string) => {
      const [job] = await sql<{ id: string }[]>`select id from graphile_worker.add_job('no-such-task')`
      await sql`update graphile_worker._private_jobs set locked_by = ${worker}, locked_at = now() - ${lockedFor}::interval where id = ${job!.id}`
      return job!.id
    }
    const stale = await lock('worker-gone', '1 hour')
    const fresh = await lock('worker-busy', '1 second')
    const lockedBy = async (id: string) => (await sql<{ locked_by: string | null }[]>`select locked_by from graphile_worker._private_jobs where id = ${id}`)[0]!.locked_by
    // The worker looks every 5 s; stale is past 2 × the delivery time limit (1 s) + 5 s.
    await vi.waitFor(async () => expect(await lockedBy(stale)).toBeNull(), { timeout: 8_000, interval: 200 })
    expect(await lockedBy(fresh)).toBe('worker-busy')
  })
})
