/**
 * Test databases (`@commerce/db/testing`): one server per test run — DATABASE_URL when given,
 * else an embedded cluster — holding a migrated template; each test file clones its own
 * database from the template, so files run in parallel and start in milliseconds.
 */
import { randomBytes } from 'node:crypto'
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net'
import { join } from 'node:path'
import postgres from 'postgres'
import { defaultDataDir, openDatabase, type OpenedDatabase } from './embedded.js'
import { migrate } from './migrate.js'

export { orderEvent, sampleOrder } from './sample-orders.js'

const TEST_CLUSTER_PORT = 54339

interface SharedServer {
  server: Promise<OpenedDatabase>
  users: number
}
// vitest runs each project's globalSetup in the same process: share one server among them.
const shared = globalThis as typeof globalThis & { __commerceTestServer?: SharedServer }

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url)
  parsed.pathname = `/${database}`
  return parsed.toString()
}

export interface TestDatabaseServer {
  /** A URL of the server's maintenance database, for creating and dropping databases. */
  adminUrl: string
  /** The migrated template database to clone. */
  template: string
  teardown(): Promise<void>
}

/** For vitest globalSetup: starts (or reuses) the server and builds a migrated template. */
export async function startTestDatabaseServer(label: string, env = process.env): Promise<TestDatabaseServer> {
  shared.__commerceTestServer ??= {
    server: openDatabase({
      url: env.DATABASE_URL,
      dataDir: join(defaultDataDir(), 'test'),
      port: TEST_CLUSTER_PORT,
      database: 'postgres',
    }),
    users: 0,
  }
  const entry = shared.__commerceTestServer
  entry.users++
  const server = await entry.server
  const adminUrl = server.url
  const template = `commerce_tpl_${label.replace(/\W/g, '_')}_${randomBytes(4).toString('hex')}`
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} })
  try {
    await admin.unsafe(`create database ${quoteIdent(template)}`)
    await migrate(withDatabase(adminUrl, template))
  } finally {
    await admin.end({ timeout: 5 })
  }
  return {
    adminUrl,
    template,
    async teardown() {
      const sql = postgres(adminUrl, { max: 1, onnotice: () => {} })
      try {
        await sql.unsafe(`drop database if exists ${quoteIdent(template)} with (force)`)
      } finally {
        await sql.end({ timeout: 5 })
      }
      if (--entry.users === 0) {
        delete shared.__commerceTestServer
        await server.stop()
      }
    },
  }
}

export interface TestDatabase {
  url: string
  name: string
  drop(): Promise<void>
}

/** Clones the template into a fresh database for one test file. */
export async function createTestDatabase(adminUrl: string, template: string): Promise<TestDatabase> {
  const name = `commerce_test_${randomBytes(6).toString('hex')}`
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} })
  try {
    await admin.unsafe(`create database ${quoteIdent(name)} template ${quoteIdent(template)}`)
  } finally {
    await admin.end({ timeout: 5 })
  }
  return {
    url: withDatabase(adminUrl, name),
    name,
    async drop() {
      const sql = postgres(adminUrl, { max: 1, onnotice: () => {} })
      try {
        await sql.unsafe(`drop database if exists ${quoteIdent(name)} with (force)`)
      } finally {
        await sql.end({ timeout: 5 })
      }
    },
  }
}

export interface ProvidingProject {
  provide(key: 'adminUrl' | 'template', value: string): void
}

/**
 * A vitest globalSetup (`export default testDatabaseSetup('api')`): one server for the run and a
 * migrated template, given to the tests as inject('adminUrl') and inject('template').
 */
export function testDatabaseSetup(label: string) {
  return async function setup(project: ProvidingProject): Promise<() => Promise<void>> {
    const server = await startTestDatabaseServer(label)
    project.provide('adminUrl', server.adminUrl)
    project.provide('template', server.template)
    return () => server.teardown()
  }
}

export type DatabaseProxy = Awaited<ReturnType<typeof startDatabaseProxy>>

/**
 * A TCP proxy in front of PostgreSQL, for fault tests. It forwards connections; or refuses new
 * ones (resets them: the client gets ECONNRESET, as from a server that is down); or accepts new
 * ones and never answers them (a database host gone silent: dropped packets, a hung server).
 * `cut()` drops the connections it holds, as a server going away does.
 */
export async function startDatabaseProxy(target: URL) {
  const upstreams = new Set<Socket>()
  const downstreams = new Set<Socket>()
  let refusing = false
  let silent = false
  const server: Server = createServer((downstream) => {
    if (refusing) return void downstream.on('error', () => {}).resetAndDestroy()
    downstreams.add(downstream)
    downstream.on('close', () => downstreams.delete(downstream))
    if (silent) return void downstream.on('error', () => {})
    const upstream = createConnection(Number(target.port), target.hostname)
    upstreams.add(upstream)
    downstream.pipe(upstream).pipe(downstream)
    const drop = () => {
      upstreams.delete(upstream)
      upstream.destroy()
      downstream.destroy()
    }
    upstream.on('error', drop).on('close', drop)
    downstream.on('error', drop).on('close', drop)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const proxied = new URL(target)
  proxied.port = String((server.address() as AddressInfo).port)
  const cut = () => {
    for (const socket of downstreams) socket.destroy()
  }
  return {
    url: proxied.toString(),
    /** The local ports of the proxy's connections to PostgreSQL (pg_stat_activity.client_port). */
    ports: () => [...upstreams].map((socket) => socket.localPort!),
    refuse(value: boolean) {
      refusing = value
    },
    /** New connections are accepted and never answered (until silence(false)). */
    silence(value: boolean) {
      silent = value
    },
    cut,
    close: () => {
      cut()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
