import { randomBytes } from 'node:crypto'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { createLogger } from '../src/logger.js'
import { startWorker } from '../src/worker.js'

// An empty database (not a clone of the migrated template): startWorker has to migrate it.
const adminUrl = inject('adminUrl')
const name = `commerce_worker_fresh_${randomBytes(6).toString('hex')}`
const url = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString()
const admin = postgres(adminUrl, { max: 1, onnotice: () => {} })
const WEBHOOKS = { timeoutMs: 1000, retrySchedule: [1000], allowPrivateTargets: true }

/** Open connections of the worker: its statements (commerce-worker), Graphile Worker's (commerce-worker-jobs) and its outbox relay's (commerce-worker-relay). */
async function workerConnections(): Promise<number> {
  const [row] = await admin<{ count: string }[]>`
    select count(*) from pg_stat_activity where datname = ${name} and application_name like 'commerce-worker%'`
  return Number(row!.count)
}

beforeAll(async () => {
  await admin.unsafe(`create database "${name}"`)
})

afterAll(async () => {
  await admin.unsafe(`drop database if exists "${name}" with (force)`)
  await admin.end({ timeout: 5 })
})

describe('startWorker', () => {
  it('migrates a fresh database (our tables and the graphile_worker schema), accepts jobs, and stops with every connection closed', async () => {
    const lines: Record<string, unknown>[] = []
    const logger = createLogger('info', (line) => lines.push(JSON.parse(line) as Record<string, unknown>))
    const worker = await startWorker({ databaseUrl: url, concurrency: 2, databasePoolMax: 4, webhooks: WEBHOOKS, logger })

    const sql = postgres(url, { max: 1, onnotice: () => {} })
    try {
      const schemas = await sql<{ nspname: string }[]>`
        select nspname from pg_namespace where nspname in ('graphile_worker', 'drizzle') order by nspname`
      expect(schemas.map((row) => row.nspname)).toEqual(['drizzle', 'graphile_worker'])
      const tables = await sql<{ table_name: string }[]>`
        select table_name from information_schema.tables
        where table_schema = 'public' and table_name in ('users', 'customers', 'events') order by table_name`
      expect(tables.map((row) => row.table_name)).toEqual(['customers', 'events', 'users'])
      const [applied] = await sql<{ count: string }[]>`select count(*) from drizzle.__drizzle_migrations`
      expect(Number(applied!.count)).toBeGreaterThan(0)

      // Graphile Worker's own SQL works: a job can be queued through add_job.
      await sql`select graphile_worker.add_job('no-such-task', '{}'::json, job_key => 'probe')`
      const [job] = await sql<{ task_identifier: string }[]>`select task_identifier from graphile_worker.jobs`
      expect(job!.task_identifier).toBe('no-such-task')
    } finally {
      await sql.end({ timeout: 5 })
    }

    // Graphile's own messages come through our JSON logger.
    expect(lines.some((line) => line.component === 'graphile-worker' && String(line.msg).includes('Worker connected'))).toBe(true)

    expect(await workerConnections()).toBeGreaterThan(0)
    await expect(worker.stop()).resolves.toBeUndefined()
    // stop() resolves once the pool is closed (the server drops the sessions a moment later).
    await vi.waitFor(async () => expect(await workerConnections()).toBe(0), { timeout: 3000 })
    // A second stop (say, a second signal) is harmless.
    await expect(worker.stop()).resolves.toBeUndefined()
    await expect(worker.runner.promise).resolves.toBeUndefined()
  })

  it('lets two workers start at once on an already-migrated database and stop cleanly', async () => {
    const logger = createLogger('silent')
    const [first, second] = await Promise.all([
      startWorker({ databaseUrl: url, concurrency: 1, databasePoolMax: 2, webhooks: WEBHOOKS, logger }),
      startWorker({ databaseUrl: url, concurrency: 1, databasePoolMax: 2, webhooks: WEBHOOKS, logger }),
    ])
    // Each runner holds at least its LISTEN connection.
    expect(await workerConnections()).toBeGreaterThanOrEqual(2)
    await Promise.all([first.stop(), second.stop()])
    await vi.waitFor(async () => expect(await workerConnections()).toBe(0), { timeout: 3000 })
  })

  it('fails to start, leaving no connection behind, when the database does not exist', async () => {
    const missing = Object.assign(new URL(adminUrl), { pathname: `/${name}_missing` }).toString()
    await expect(
      startWorker({ databaseUrl: missing, concurrency: 1, databasePoolMax: 2, webhooks: WEBHOOKS, logger: createLogger('silent') }),
    ).rejects.toThrow(/does not exist/)
  })
})
