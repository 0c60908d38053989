/** The worker's scheduled upkeep, run by a real worker on a real database. */
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { createDb, type DatabaseHandle } from '@commerce/db'
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
    expect(known.map((row) => row.identifier)).toEqual(['expire-checkout-reservations', 'expire-idempotency-keys'])

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
