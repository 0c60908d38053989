/** The worker's scheduled upkeep, run by a real worker on a real database. */
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@commerce/db/testing'
import { createLogger } from '../src/logger.js'
import { startWorker, type StartedWorker } from '../src/worker.js'

let database: TestDatabase
let sql: postgres.Sql
let worker: StartedWorker

beforeAll(async () => {
  database = await createTestDatabase(inject('adminUrl'), inject('template'))
  sql = postgres(database.url, { max: 1, onnotice: () => {} })
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
  await sql?.end({ timeout: 5 })
  await database?.drop()
})

describe('expire-idempotency-keys', () => {
  it('is on the hourly schedule and deletes only the expired keys', async () => {
    const [known] = await sql<{ identifier: string }[]>`select identifier from graphile_worker._private_known_crontabs`
    expect(known?.identifier).toBe('expire-idempotency-keys')

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
