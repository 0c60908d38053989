/**
 * What our patch of postgres.js fixes (patches/README.md), each against the real server. Every
 * test here fails on postgres.js without the hunk it covers (patches/README.md says how that was
 * checked), so one that starts passing without it means upstream has fixed the bug.
 */
import { readFileSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import postgres from 'postgres'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startDatabaseProxy, type DatabaseProxy } from '../src/testing.js'
import { openTestDatabase, rejection, type OpenTestDatabase } from './test-database.js'

let database: OpenTestDatabase
beforeAll(async () => {
  database = await openTestDatabase({ empty: true })
})
afterAll(() => database?.dispose())

const cleanups: (() => Promise<unknown>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A client of its own for one test, ended after it. */
function client(url: string, options: postgres.Options<Record<string, never>>): postgres.Sql {
  const sql = postgres(url, { onnotice: () => {}, ...options })
  cleanups.push(() => sql.end({ timeout: 0 }))
  return sql
}

async function proxy(): Promise<DatabaseProxy> {
  const started = await startDatabaseProxy(new URL(database.url))
  cleanups.push(() => started.close())
  return started
}

/** What `work` settles with, or a failure naming the wait: without the fixes, calls wait for ever. */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([work, late])
  } finally {
    clearTimeout(timer)
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The pid of this database's backend that is running `text`, once it runs it. */
async function backendRunning(text: string): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const [row] = await database.sql<{ pid: number }[]>`
      select pid from pg_stat_activity where datname = current_database() and state = 'active' and query = ${text}`
    if (row) return row.pid
    await sleep(20)
  }
  throw new Error(`no backend is running ${text}`)
}

const terminate = (pid: number) => database.sql`select pg_terminate_backend(${pid})`

const errorCode = (error: unknown) => (error as { code?: unknown }).code

it('every manifest pins postgres to the version the patch is made for', () => {
  const manifest = (path: string) => JSON.parse(readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8'))
  const root = manifest('package.json')
  const patched = Object.keys(root.pnpm.patchedDependencies as Record<string, string>).find((name) => name.startsWith('postgres@'))
  // No patch left: the pin may become a range again, and this test goes with the patch.
  expect(patched).toBeDefined()
  const version = patched!.slice('postgres@'.length)
  const pins = ['package.json', 'packages/db/package.json', 'apps/api/package.json'].map((path) => {
    const { dependencies = {}, devDependencies = {} } = manifest(path)
    return [path, dependencies.postgres ?? devDependencies.postgres]
  })
  expect(pins).toEqual(pins.map(([path]) => [path, version]))
})

describe('a connection whose socket is gone', () => {
  it('fails a statement sent on it when it was reserved, with CONNECTION_CLOSED, instead of throwing from a timer (porsager/postgres#1208)', async () => {
    let closed!: () => void
    const gone = new Promise<void>((resolve) => (closed = resolve))
    const sql = client(database.url, { max: 1, onclose: () => closed() })
    const reserved = await sql.reserve()
    const [row] = await reserved<{ pid: number }[]>`select pg_backend_pid() as pid`
    await terminate(row!.pid)
    await within(2_000, gone)
    // The connection has no socket now: the statement must fail, not crash the process.
    expect(errorCode(await within(2_000, rejection(reserved`select 1`)))).toBe('CONNECTION_CLOSED')
  })

  it('does not fail the next connection\'s first statement with the FATAL error the server sent as it closed the last one', async () => {
    const sql = client(database.url, { max: 1 })
    const sleeping = rejection(sql`select pg_sleep(5)`)
    await terminate(await backendRunning('select pg_sleep(5)'))
    expect(await sleeping).toBeInstanceOf(Error)
    // The server said "terminating connection" (57P01) before it closed; that was the old socket's.
    expect(await within(2_000, sql<{ ok: number }[]>`select 1 as ok`)).toEqual([{ ok: 1 }])
  })

  it('connects again with a clean start when its socket closed with a write still buffered (LanternOps/breeze#3225)', async () => {
    const target = new URL(database.url)
    const sockets: Socket[] = []
    const sql = client(database.url, {
      max: 1,
      connect_timeout: 2,
      // postgres.js's documented `socket` option (missing from its types): the test holds the socket to close it.
      socket: () => {
        const socket = connect(Number(target.port), target.hostname)
        sockets.push(socket)
        return socket
      },
    } as postgres.Options<Record<string, never>>)
    expect(await sql<{ n: number }[]>`select 1 as n`).toEqual([{ n: 1 }])
    // Sent from a setImmediate callback, a statement is buffered for the next turn's flush; its socket
    // closes in this one (the close callbacks run after the immediates).
    const cut = await new Promise<Promise<unknown>>((resolve) =>
      setImmediate(() => {
        resolve(rejection(sql`select 2 as n`))
        sockets.at(-1)!.destroy()
      }),
    )
    expect(errorCode(await cut)).toBe('CONNECTION_CLOSED')
    // The next socket's StartupMessage is neither held back behind the dead flush nor preceded by the dead statement.
    expect(await within(3_000, sql<{ n: number }[]>`select 3 as n`)).toEqual([{ n: 3 }])
    expect(sockets).toHaveLength(2)
  })
})

describe('waiting for a connection', () => {
  it('refuses a statement or a reserve() with CONNECT_TIMEOUT once it has waited connect_timeout for a connection to come free', async () => {
    const sql = client(database.url, { max: 1, connect_timeout: 1 })
    const held = await sql.reserve()
    const start = performance.now()
    const refused = await within(4_000, Promise.all([rejection(sql`select 1`), rejection(sql.reserve())]))
    expect(refused.map(errorCode)).toEqual(['CONNECT_TIMEOUT', 'CONNECT_TIMEOUT'])
    expect(performance.now() - start).toBeGreaterThan(900)
    held.release()
    expect(await sql<{ ok: number }[]>`select 1 as ok`).toEqual([{ ok: 1 }])
  })

  it('refuses every statement waiting at once when a connection cannot be made and none is open', async () => {
    const { url, refuse } = await proxy()
    refuse(true)
    const sql = client(url, { max: 1, connect_timeout: 5 })
    const start = performance.now()
    const refused = await within(10_000, Promise.all(Array.from({ length: 6 }, () => rejection(sql`select 1`))))
    // Refused for the connection's failure, not one by one as each further attempt fails.
    expect(refused.map(errorCode)).not.toContain('CONNECT_TIMEOUT')
    expect(performance.now() - start).toBeLessThan(1_000)
  })

  it('hands a waiting reserve() the connection made again after its one connection was lost', async () => {
    const sql = client(database.url, { max: 1, connect_timeout: 5 })
    const sleeping = rejection(sql`select pg_sleep(5)`)
    const pid = await backendRunning('select pg_sleep(5)')
    const waiting = sql.reserve()
    await terminate(pid)
    await sleeping
    const reserved = await within(3_000, waiting)
    expect(await reserved<{ ok: number }[]>`select 1 as ok`).toEqual([{ ok: 1 }])
    reserved.release()
  })

  it('drops a reserve() refused because its connection could not be made: the connection made later serves the pool', async () => {
    const { url, refuse } = await proxy()
    const sql = client(url, { max: 2, connect_timeout: 2 })
    const held = await sql.reserve()
    refuse(true)
    expect(errorCode(await within(2_000, rejection(sql.reserve())))).toMatch(/^E/)
    refuse(false)
    held.release()
    // Both connections serve again; neither went to the refused reserve().
    const both = await within(4_000, Promise.all([sql.reserve(), sql.reserve()]))
    const pids = await Promise.all(both.map(async (reserved) => (await reserved<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid))
    expect(new Set(pids).size).toBe(2)
    for (const reserved of both) reserved.release()
  })
})

describe("the pool's queues", () => {
  it('stay about as long as what they hold under a steady load, instead of gaining a slot per query (porsager/postgres#747)', async () => {
    const sql = client(database.url, { max: 4 })
    await Promise.all(Array.from({ length: 4 }, () => sql`select 1`))
    // The pool finds a connection in its queues with Array.prototype.indexOf: note the longest searched.
    const indexOf = Array.prototype.indexOf
    let longest = 0
    Array.prototype.indexOf = function (this: unknown[], ...args: Parameters<typeof indexOf>) {
      longest = Math.max(longest, this.length)
      return indexOf.apply(this, args)
    }
    try {
      // Two at a time: the open queue never empties, so without the fix it gains a slot per query.
      for (let i = 0; i < 2_000; i++) await Promise.all([sql`select 1`, sql`select 1`])
    } finally {
      Array.prototype.indexOf = indexOf
    }
    expect(longest).toBeGreaterThan(0)
    expect(longest).toBeLessThan(100)
  })
})
