/**
 * Per-resource sequence numbers of events: 1, 2, 3… per resource, in commit order, without gaps
 * or repeats, also when transactions write events of one resource at the same time or roll back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { writeEvents, type NewEvent } from '../src/outbox.js'
import { newId } from '../src/schema/columns.js'
import { openTestDatabase, type OpenTestDatabase } from './test-database.js'

let database: OpenTestDatabase

beforeAll(async () => {
  database = await openTestDatabase()
})
afterAll(() => database?.dispose())

const event = (resourceId: string, n: number): NewEvent => ({ kind: 'order.paid', resourceId, data: { n } })

async function sequencesOf(resourceId: string) {
  return database.sql<{ id: string; sequence: number; n: number }[]>`
    select id, sequence, (data->>'n')::int as n from events where resource_id = ${resourceId} order by sequence`
}

describe('event sequences', () => {
  it('numbers the events of one statement per resource, in the order given', async () => {
    const [order, product] = [newId(), newId()]
    await database.db.transaction((tx) => writeEvents(tx, [event(order, 1), event(product, 1), event(order, 2), event(order, 3)]))
    await database.db.transaction((tx) => writeEvents(tx, [event(product, 2), event(order, 4)]))
    expect((await sequencesOf(order)).map((row) => [row.sequence, row.n])).toEqual([[1, 1], [2, 2], [3, 3], [4, 4]])
    expect((await sequencesOf(product)).map((row) => [row.sequence, row.n])).toEqual([[1, 1], [2, 2]])
  })

  it('gives concurrent transactions of one resource consecutive numbers, without gaps or repeats, across rollbacks', async () => {
    const resource = newId()
    // 40 transactions at once on the pool's connections; every fifth rolls back after writing.
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, n) =>
        database.db.transaction(async (tx) => {
          await writeEvents(tx, [event(resource, n), event(resource, n)])
          await new Promise((resolve) => setTimeout(resolve, n % 3))
          if (n % 5 === 0) throw new Error('rolled back')
        }),
      ),
    )
    expect(results.filter((result) => result.status === 'rejected')).toHaveLength(8)
    const rows = await sequencesOf(resource)
    // 32 committed transactions × 2 events: exactly 1..64, each transaction's two adjacent.
    expect(rows.map((row) => row.sequence)).toEqual(Array.from({ length: 64 }, (_, i) => i + 1))
    for (let i = 0; i < rows.length; i += 2) expect(rows[i + 1]!.n).toBe(rows[i]!.n)
    expect(new Set(rows.map((row) => row.n)).size).toBe(32)
    expect(rows.every((row) => row.n % 5 !== 0)).toBe(true)
    const [counter] = await database.sql<{ last_sequence: number }[]>`select last_sequence from event_sequences where resource_id = ${resource}`
    expect(counter!.last_sequence).toBe(64)
  })

  it('makes a second writer of a resource wait for the first: it takes the next number after a commit, the same after a rollback', async () => {
    const resource = newId()
    for (const outcome of ['commit', 'rollback'] as const) {
      let release!: () => void
      const held = new Promise<void>((resolve) => (release = resolve))
      let firstWrote!: () => void
      const wrote = new Promise<void>((resolve) => (firstWrote = resolve))
      const first = database.db.transaction(async (tx) => {
        await writeEvents(tx, [event(resource, 100)])
        firstWrote()
        await held
        if (outcome === 'rollback') throw new Error('rolled back')
      })
      await wrote
      let secondDone = false
      const second = database.db.transaction((tx) => writeEvents(tx, [event(resource, 200)])).then(() => (secondDone = true))
      await new Promise((resolve) => setTimeout(resolve, 200))
      expect(secondDone).toBe(false)
      release()
      await Promise.allSettled([first, second])
      expect(secondDone).toBe(true)
    }
    // commit: 100 → 1, 200 → 2; rollback: 100's number 3 given back, 200 → 3.
    expect((await sequencesOf(resource)).map((row) => [row.sequence, row.n])).toEqual([[1, 100], [2, 200], [3, 200]])
  })
})
