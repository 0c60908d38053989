/**
 * The outbox relay: every committed transaction's events become exactly one fan-out job, however
 * many relays race, whether the relay was listening at commit time or not.
 */
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { createDb, newId, writeEvents, type DatabaseHandle } from '@commerce/db'
import { createTestDatabase, type TestDatabase } from '@commerce/db/testing'
import { createLogger } from '../src/logger.js'
import { relayOutbox, RELAY_BATCH, startOutboxRelay } from '../src/outbox-relay.js'

let database: TestDatabase
let handle: DatabaseHandle

beforeAll(async () => {
  database = await createTestDatabase(inject('adminUrl'), inject('template'))
  handle = createDb({ url: database.url, poolMax: 8 })
})

afterAll(async () => {
  await handle?.close()
  await database?.drop()
})

/** Commits one transaction of `size` product.updated events; answers their ids. */
function commitEvents(size = 1): Promise<string[]> {
  const events = Array.from({ length: size }, () => ({ kind: 'product.updated' as const, resourceId: newId(), data: { id: newId() } }))
  return handle.db.transaction((tx) => writeEvents(tx, events))
}

/** The fan-out jobs waiting in the queue, by their event ids (no worker runs them in this file). */
async function fanOutJobs(): Promise<string[][]> {
  const rows = await handle.sql<{ payload: { event_ids: string[] } }[]>`
    select j.payload from graphile_worker._private_jobs j join graphile_worker._private_tasks t on t.id = j.task_id
    where t.identifier = 'fanout-event' order by j.id`
  return rows.map((row) => row.payload.event_ids)
}

async function clearQueue(): Promise<void> {
  await handle.sql`delete from graphile_worker._private_jobs`
  await handle.sql`delete from event_outbox`
}

async function outboxRows(): Promise<number> {
  const [row] = await handle.sql<{ count: number }[]>`select count(*)::int as count from event_outbox`
  return row!.count
}

describe('relayOutbox', () => {
  it('turns each committed transaction into one fan-out job of its events, in commit order, and empties the outbox', async () => {
    await clearQueue()
    const committed = [await commitEvents(3), await commitEvents(1), await commitEvents(2)]
    expect(await outboxRows()).toBe(3)

    expect(await relayOutbox(handle.sql)).toBe(3)
    expect(await fanOutJobs()).toEqual(committed)
    expect(await outboxRows()).toBe(0)
    // Nothing left: a second pass moves nothing and adds no job.
    expect(await relayOutbox(handle.sql)).toBe(0)
    expect(await fanOutJobs()).toHaveLength(3)
  })

  it('writes no outbox row for a rolled-back transaction', async () => {
    await clearQueue()
    await expect(
      handle.db.transaction(async (tx) => {
        await writeEvents(tx, [{ kind: 'product.updated', resourceId: newId(), data: {} }])
        throw new Error('rolled back')
      }),
    ).rejects.toThrow('rolled back')
    expect(await outboxRows()).toBe(0)
    expect(await relayOutbox(handle.sql)).toBe(0)
    expect(await fanOutJobs()).toEqual([])
  })

  it('moves each of 1,200 rows exactly once while four relays on two pools race', async () => {
    await clearQueue()
    const written: string[][] = []
    for (let start = 0; start < 1_200; start += 50) written.push(...(await Promise.all(Array.from({ length: 50 }, () => commitEvents(1)))))
    expect(written.length).toBeGreaterThan(2 * RELAY_BATCH)

    const other = createDb({ url: database.url, poolMax: 4 })
    try {
      const moved = await Promise.all([relayOutbox(handle.sql), relayOutbox(other.sql), relayOutbox(handle.sql), relayOutbox(other.sql)])
      expect(moved.reduce((sum, n) => sum + n, 0)).toBe(1_200)
    } finally {
      await other.close()
    }
    const jobs = await fanOutJobs()
    expect(jobs).toHaveLength(1_200)
    expect(new Set(jobs.flat())).toEqual(new Set(written.flat()))
    expect(await outboxRows()).toBe(0)
  })
})

describe('startOutboxRelay', () => {
  const relayConnections = async () => {
    const [row] = await handle.sql<{ count: number }[]>`
      select count(*)::int as count from pg_stat_activity where datname = current_database() and application_name = 'commerce-worker-relay'`
    return row!.count
  }

  it('relays what was committed before it started, then each commit as its NOTIFY arrives (no sweep in the meantime), and closes its connection on stop', async () => {
    await clearQueue()
    const before = await commitEvents(2)
    const relayed: number[] = []
    const relay = await startOutboxRelay({
      databaseUrl: database.url,
      connectTimeoutMs: 5_000,
      sql: handle.sql,
      logger: createLogger('silent'),
      // Far beyond the test: only the NOTIFY can wake it.
      sweepIntervalMs: 600_000,
      onRelayed: (transactions) => relayed.push(transactions),
    })
    try {
      await vi.waitFor(async () => expect(await fanOutJobs()).toEqual([before]), { timeout: 5_000 })
      const after = await commitEvents(1)
      await vi.waitFor(async () => expect(await fanOutJobs()).toEqual([before, after]), { timeout: 5_000 })
      expect(relayed.reduce((sum, n) => sum + n, 0)).toBe(2)
      expect(await relayConnections()).toBe(1)
    } finally {
      await relay.stop()
    }
    await vi.waitFor(async () => expect(await relayConnections()).toBe(0), { timeout: 3_000 })
    // Stopped: nothing is relayed any more.
    await commitEvents(1)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await outboxRows()).toBe(1)
  })

  it('listens again after its connection is killed, and relays what was committed meanwhile', async () => {
    await clearQueue()
    const lines: Record<string, unknown>[] = []
    const relay = await startOutboxRelay({
      databaseUrl: database.url,
      connectTimeoutMs: 5_000,
      sql: handle.sql,
      logger: createLogger('warn', (line) => lines.push(JSON.parse(line) as Record<string, unknown>)),
      sweepIntervalMs: 600_000,
    })
    try {
      await handle.sql`select pg_terminate_backend(pid) from pg_stat_activity
        where datname = current_database() and application_name = 'commerce-worker-relay'`
      const meanwhile = await commitEvents(1)
      await vi.waitFor(async () => expect(await fanOutJobs()).toEqual([meanwhile]), { timeout: 10_000 })
      expect(lines.some((line) => line.msg === 'event outbox listener lost; listening again')).toBe(true)
      // Listening again: the next commit wakes it.
      await vi.waitFor(async () => expect(await relayConnections()).toBe(1), { timeout: 5_000 })
      const next = await commitEvents(1)
      await vi.waitFor(async () => expect(await fanOutJobs()).toEqual([meanwhile, next]), { timeout: 5_000 })
    } finally {
      await relay.stop()
    }
  })
})
