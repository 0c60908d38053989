/**
 * Committed events are announced on EVENTS_CHANNEL after COMMIT (not inside the writing
 * transaction), batched, in commit order; rolled-back ones never.
 */
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { EVENTS_CHANNEL } from '../src/announce.js'
import { writeEvents, type NewEvent } from '../src/outbox.js'
import { newId } from '../src/schema/columns.js'
import { openTestDatabase, rejection, type OpenTestDatabase } from './test-database.js'

let database: OpenTestDatabase
let listener: postgres.Sql
const heard: string[][] = []

beforeAll(async () => {
  database = await openTestDatabase()
  listener = postgres(database.url, { max: 1, onnotice: () => {} })
  await listener.listen(EVENTS_CHANNEL, (payload) => heard.push(payload.split(',')))
})
afterAll(async () => {
  await listener?.end({ timeout: 5 })
  await database?.dispose()
})

const event = (n = 0): NewEvent => ({ kind: 'product.updated', resourceId: newId(), data: { n } })
const allHeard = () => heard.flat()

describe('announcing committed events', () => {
  it('announces the ids once the transaction has committed, not while it is open', async () => {
    let written: string[] = []
    let heardInside: string[] = []
    await database.db.transaction(async (tx) => {
      written = await writeEvents(tx, [event(1), event(2)])
      await new Promise((resolve) => setTimeout(resolve, 150))
      heardInside = allHeard().filter((id) => written.includes(id))
    })
    expect(heardInside).toEqual([])
    await vi.waitFor(() => expect(allHeard()).toEqual(expect.arrayContaining(written)))
  })

  it('never announces the events of a rolled-back transaction', async () => {
    let written: string[] = []
    await rejection(
      database.db.transaction(async (tx) => {
        written = await writeEvents(tx, [event(3)])
        throw new Error('rolled back')
      }),
    )
    // A later commit's announcement has arrived, so the rolled-back one would have by now.
    const [later] = await database.db.transaction((tx) => writeEvents(tx, [event(4)]))
    await vi.waitFor(() => expect(allHeard()).toContain(later))
    expect(allHeard()).not.toContain(written[0])
  })

  it('announces in commit order, many transactions in few notifications, however many commit at once', async () => {
    heard.length = 0
    const sequential: string[] = []
    for (let n = 0; n < 5; n++) sequential.push(...(await database.db.transaction((tx) => writeEvents(tx, [event(n)]))))
    await vi.waitFor(() => expect(allHeard()).toEqual(sequential))

    heard.length = 0
    const concurrent = (await Promise.all(Array.from({ length: 40 }, (_, n) => database.db.transaction((tx) => writeEvents(tx, [event(n)]))))).flat()
    await vi.waitFor(() => expect(new Set(allHeard())).toEqual(new Set(concurrent)))
    expect(allHeard()).toHaveLength(40)
    expect(heard.length).toBeLessThan(40)
  })

  it('announces events written outside a transaction once their statement is done, and splits big batches under the payload limit', async () => {
    heard.length = 0
    const many = await writeEvents(database.db, Array.from({ length: 450 }, (_, n) => event(n)))
    await vi.waitFor(() => expect(allHeard()).toEqual(many))
    expect(heard.length).toBe(3)
    expect(Math.max(...heard.map((ids) => ids.join(',').length))).toBeLessThan(8000)
  })
})
