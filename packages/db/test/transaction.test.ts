/**
 * The pipelined transactions every db.transaction() runs (BEGIN sent with the first statement,
 * COMMIT possibly with the last writes), on a real server: atomicity, sendCommit, failures
 * nobody awaited, connections lost under a transaction, and the stock listeners told once committed.
 */
import { sql as drizzleSql } from 'drizzle-orm'
import postgres from 'postgres'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDb, sqlOf, type DatabaseHandle } from '../src/client.js'
import { noteStockMoved, onStockMoved, sendCommit } from '../src/transaction.js'
import { openTestDatabase, postgresError, rejection, type OpenTestDatabase } from './test-database.js'

let database: OpenTestDatabase
let outside: postgres.Sql

beforeAll(async () => {
  database = await openTestDatabase({ empty: true })
  outside = postgres(database.url, { max: 1, onnotice: () => {} })
  await outside`create table probe (id int primary key, note text)`
})
afterAll(async () => {
  await outside?.end({ timeout: 5 })
  await database?.dispose()
})

let nextId = 0
function ids(count: 1): [number]
function ids(count: 2): [number, number]
function ids(count: 3): [number, number, number]
function ids(count: 4): [number, number, number, number]
function ids(count: number): number[]
function ids(count: number): number[] {
  return Array.from({ length: count }, () => ++nextId)
}
const kept = async (list: number[]) => (await outside<{ id: number }[]>`select id from probe where id = any(${list}) order by id`).map((row) => row.id)

describe('db.transaction (pipelined)', () => {
  it('runs the work as one transaction: its writes are seen inside, unseen outside until COMMIT, and gone when it throws', async () => {
    const [a, b] = ids(2)
    await database.db.transaction(async (tx) => {
      await tx.execute(drizzleSql`insert into probe (id) values (${a}), (${b})`)
      const inside = await sqlOf(tx).unsafe<{ n: number }[]>('select count(*)::int as n from probe where id = any($1)', [[a, b]])
      expect(inside[0]!.n).toBe(2)
      expect(await kept([a, b])).toEqual([])
    })
    expect(await kept([a, b])).toEqual([a, b])

    const [c] = ids(1)
    const error = await rejection(
      database.db.transaction(async (tx) => {
        await tx.execute(drizzleSql`insert into probe (id) values (${c})`)
        throw new Error('changed my mind')
      }),
    )
    expect((error as Error).message).toBe('changed my mind')
    expect(await kept([c])).toEqual([])
  })

  it('sendCommit commits with the last writes; nothing can be sent afterwards, and a failing last write rolls all of it back', async () => {
    const [a, b] = ids(2)
    await database.db.transaction(async (tx) => {
      const sql = sqlOf(tx)
      await sql.unsafe('insert into probe (id) values ($1)', [a])
      const last = sql.unsafe('insert into probe (id) values ($1)', [b])
      const committed = sendCommit(sql)
      await Promise.all([last, committed])
      // Committed: another session sees both rows before the work has even returned.
      expect(await kept([a, b])).toEqual([a, b])
      expect(() => sql.unsafe('insert into probe (id) values ($1)', [ids(1)[0]])).toThrow('This transaction has ended')
    })

    const [c] = ids(1)
    const failure = await postgresError(
      database.db.transaction(async (tx) => {
        const sql = sqlOf(tx)
        await sql.unsafe('insert into probe (id) values ($1)', [c])
        // A duplicate of a committed row: the last write fails, and with it the whole transaction.
        await Promise.all([sql.unsafe('insert into probe (id) values ($1)', [a]), sendCommit(sql)])
      }),
    )
    expect(failure.code).toBe('23505')
    expect(await kept([c])).toEqual([])
  })

  it('a statement the work did not await still fails the transaction: COMMIT answers ROLLBACK and its error is thrown', async () => {
    const [a, b] = ids(2)
    await outside`insert into probe (id) values (${a})`
    const failure = await postgresError(
      database.db.transaction(async (tx) => {
        const sql = sqlOf(tx)
        void sql.unsafe('insert into probe (id) values ($1)', [b])
        void sql.unsafe('insert into probe (id) values ($1)', [a])
      }),
    )
    expect(failure.code).toBe('23505')
    expect(await kept([b])).toEqual([])
  })

  it('runs 40 transactions at once on a pool of 3, each on a connection of its own', async () => {
    const list = ids(40)
    await Promise.all(
      list.map((id) =>
        database.db.transaction(async (tx) => {
          const sql = sqlOf(tx)
          await sql.unsafe('insert into probe (id, note) values ($1, $2)', [id, `tx ${id}`])
          const [row] = await sql.unsafe<{ note: string; others: number }[]>(
            'select note, (select count(*)::int from probe where id = any($2) and id <> $1) as others from probe where id = $1',
            [id, list],
          )
          // Another transaction's uncommitted rows are not seen, whatever it shares a connection with.
          expect(row).toEqual({ note: `tx ${id}`, others: expect.any(Number) })
        }),
      ),
    )
    expect(await kept(list)).toEqual(list)
  })
})

describe('stock listeners (onStockMoved)', () => {
  it('are told of the products noted in a transaction once it committed (a COMMIT sent behind the statement too), never for one rolled back, and at once outside one', async () => {
    const told: string[][] = []
    onStockMoved(sqlOf(database.db), (productIds) => told.push([...productIds]))
    await database.db.transaction(async (tx) => {
      await noteStockMoved(sqlOf(tx), ['committed'])
      expect(told).toEqual([])
    })
    expect(told).toEqual([['committed']])

    await rejection(
      database.db.transaction(async (tx) => {
        await noteStockMoved(sqlOf(tx), ['rolled back'])
        throw new Error('changed my mind')
      }),
    )
    expect(told).toEqual([['committed']])

    await database.db.transaction(async (tx) => {
      const client = sqlOf(tx)
      await Promise.all([client.unsafe('select 1'), sendCommit(client)])
      // Noted once COMMIT was answered, as a statement's caller may: told before the transaction answers all the same.
      await noteStockMoved(client, ['committed behind'])
    })
    expect(told).toEqual([['committed'], ['committed behind']])

    await noteStockMoved(sqlOf(database.db), ['outside'])
    expect(told).toEqual([['committed'], ['committed behind'], ['outside']])
  })
})

describe('a connection lost under a transaction', () => {
  let small: DatabaseHandle
  beforeAll(() => {
    small = createDb({ url: database.url, poolMax: 1, applicationName: 'commerce-tx-loss-test' })
  })
  afterAll(() => small?.close())

  const terminate = (pid: number) => outside`select pg_terminate_backend(${pid})`

  it('fails that transaction, sends nothing more on it, and the pool goes on with a new connection', async () => {
    const [a, b] = ids(2)
    const error = await rejection(
      small.db.transaction(async (tx) => {
        const sql = sqlOf(tx)
        const pid = (await sql.unsafe<{ pid: number }[]>('select pg_backend_pid() as pid'))[0]!.pid
        await sql.unsafe('insert into probe (id) values ($1)', [a])
        await terminate(pid)
        // The loss is noticed while the work does something else (a payment provider's call, say).
        await new Promise((resolve) => setTimeout(resolve, 200))
        await sql.unsafe('insert into probe (id) values ($1)', [b])
      }),
    )
    expect(String((error as { code?: string }).code ?? error)).toMatch(/CONNECTION|57P01|ECONNRESET|EPIPE/)
    expect(await kept([a, b])).toEqual([])

    // The one connection of the pool was replaced: transactions and plain queries work again.
    await small.db.transaction(async (tx) => {
      await sqlOf(tx).unsafe('insert into probe (id) values ($1)', [b])
    })
    expect(await kept([b])).toEqual([b])
    expect((await small.sql<{ ok: number }[]>`select 1 as ok`)[0]!.ok).toBe(1)
  })

  it('fails a transaction whose statement is in flight when the connection goes, without crashing the process', async () => {
    const [a] = ids(1)
    const error = await rejection(
      small.db.transaction(async (tx) => {
        const sql = sqlOf(tx)
        const pid = (await sql.unsafe<{ pid: number }[]>('select pg_backend_pid() as pid'))[0]!.pid
        const slow = sql.unsafe('select pg_sleep(5), $1::int', [a])
        await terminate(pid)
        await slow
      }),
    )
    expect(String((error as { code?: string }).code ?? error)).toMatch(/CONNECTION|57P01|ECONNRESET|EPIPE/)
    await small.db.transaction(async (tx) => {
      await sqlOf(tx).unsafe('insert into probe (id) values ($1)', [a])
    })
    expect(await kept([a])).toEqual([a])
  })
})
