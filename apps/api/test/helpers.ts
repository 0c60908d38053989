/** Test harness: a cloned database per test file, the real app on it, and signed-in callers. */
import { randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { expect, inject, test as vitestTest } from 'vitest'
import { apiKeyLookupPrefix, generateApiKey, hashApiKey, hashPassword, type Product, type Role } from '@commerce/domain'
import { createApiKey, createDb, createUser, type DatabaseHandle } from '@commerce/db'
import { createTestDatabase, type TestDatabase } from '@commerce/db/testing'
import { testProvider } from '@commerce/payments'
import { diskStorage } from '@commerce/storage'
import { buildApp, type BuildOptions } from '../src/app.js'
import type { Config } from '../src/config.js'

export const TEST_SCRYPT_COST = 1024

export function testConfig(databaseUrl: string, overrides: Partial<Config> = {}): Config {
  return {
    nodeEnv: 'test',
    databaseUrl,
    databaseDirectUrl: undefined,
    databasePgbouncer: false,
    databasePoolMax: 5,
    databaseStatementTimeoutMs: 30_000,
    databaseConnectTimeoutMs: 5_000,
    dataDir: '.data/test',
    host: '127.0.0.1',
    port: 0,
    jwtSecret: 'test-secret-test-secret-test-secret-0123456789',
    jwtExpiresInSeconds: 3600,
    rateLimitMax: 100_000,
    rateLimitWindowMs: 60_000,
    rateLimitApiKeyMax: 100_000,
    redisUrl: undefined,
    passwordResetTtlMs: 30 * 60_000,
    requireEmailVerification: false,
    emailVerificationTtlMs: 24 * 3600_000,
    accountRateLimitMax: 100_000,
    accountRateLimitIpMax: 100_000,
    accountRateLimitWindowMs: 15 * 60_000,
    loginMaxFailures: 10,
    loginFailureWindowMs: 15 * 60_000,
    loginSlowdownAfter: 100,
    loginSlowdownDelayMs: 1000,
    trustProxy: false,
    logLevel: 'silent',
    scryptCost: TEST_SCRYPT_COST,
    wsHeartbeatIntervalMs: 30_000,
    wsMaxConnectionsPerCaller: 20,
    wsReplayMaxEvents: 10_000,
    // Test receivers listen on 127.0.0.1; the SSRF tests turn this off.
    webhookAllowPrivateTargets: true,
    paymentCapture: 'automatic',
    checkoutReservationTtlMs: 15 * 60_000,
    // Tests read a product right after changing it by SQL, a checkout or the worker: catalog-cache.test.ts turns it on.
    productCacheTtlMs: 0,
    shopUrl: 'https://shop.example',
    paymentProvider: testProvider,
    publicUrl: 'https://api.shop.example',
    // A folder of its own per app: tests that look at the files make their own storage.
    storage: diskStorage({ root: join(tmpdir(), `commerce-test-uploads-${process.pid}-${randomUUID()}`), publicUrl: 'https://api.shop.example/files' }),
    uploadMaxBytes: 10 * 1024 * 1024,
    importMaxBytes: 64 * 1024 * 1024,
    corsOrigins: undefined,
    adminDir: undefined,
    tracing: undefined,
    shutdownGraceMs: 10_000,
    ...overrides,
  }
}

export interface TestContext {
  app: FastifyInstance
  database: TestDatabase
  handle: DatabaseHandle
  config: Config
  /** Creates a user directly in the database and returns a bearer token for it. */
  signIn(role: Role, email?: string): Promise<{ token: string; userId: string; customerId: string | null }>
  /** Stores an API key as `commerce api-keys create` does and returns its text and id. */
  createApiKey(scopes: string[], rateLimitPerMinute?: number | null): Promise<{ key: string; id: string }>
  request(options: InjectOptions & { token?: string }): Promise<LightMyRequestResponse>
  /** Sends a request, asserts its status (the body shows on failure) and returns the JSON body. */
  expectStatus<T>(status: number, options: InjectOptions & { token?: string }): Promise<T>
  /** Sends a request, asserts the status and the error code, and returns the error object. */
  expectError(status: number, code: string, options: InjectOptions & { token?: string }): Promise<ApiErrorBody['error']>
  /** Expects a 400 validation_error whose details name `field`, with no row added to `table`. */
  expectInvalidField(options: InjectOptions & { token?: string }, field: string, table: string): Promise<ApiErrorBody['error']>
  /** Rows in a table, to show a refused write left nothing behind. */
  countRows(table: string): Promise<number>
  /** The events whose data is the product with this id, oldest first. */
  productEvents(productId: string): Promise<{ kind: string; data: Product; request_id: string }[]>
  /** The kinds of the events about this order (order.*, and payment.* of its payments), oldest first. */
  orderEvents(orderId: string): Promise<string[]>
  /**
   * Runs `work` while every insert into `table` (matching `when`, a trigger condition on NEW)
   * fails (with the SQLSTATE `code`, by default a plain raised exception), to show that a
   * failure mid-transaction keeps nothing.
   */
  withFailingInserts<T>(table: string, work: () => Promise<T>, when?: string, code?: string): Promise<T>
  close(): Promise<void>
}

export interface ApiErrorBody {
  error: { code: string; message: string; details?: { field: string; message: string }[]; request_id: string }
}

let emails = 0

/** Settings over `testConfig`; a function of the test database's URL when they depend on it. */
export type ConfigOverrides = Partial<Config> | ((databaseUrl: string) => Partial<Config>)

export async function createTestContext(overrides: ConfigOverrides = {}, build: BuildOptions = {}): Promise<TestContext> {
  const database = await createTestDatabase(inject('adminUrl'), inject('template'))
  const config = testConfig(database.url, typeof overrides === 'function' ? overrides(database.url) : overrides)
  const handle = createDb({ url: database.url, poolMax: config.databasePoolMax })
  const app = await buildApp(config, { logger: process.env.TEST_LOG ? { level: 'error' } : false, ...build })
  await app.ready()
  const request: TestContext['request'] = ({ token, headers, ...options }) =>
    app.inject({ ...options, headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) } })
  const expectStatus: TestContext['expectStatus'] = async (status, options) => {
    const response = await request(options)
    expect(response.statusCode, response.body).toBe(status)
    return (status === 204 ? undefined : response.json()) as never
  }
  const countRows: TestContext['countRows'] = async (table) => {
    const [row] = await handle.sql<{ n: number }[]>`select count(*)::int as n from ${handle.sql(table)}`
    return row!.n
  }
  const expectError: TestContext['expectError'] = async (status, code, options) => {
    const { error } = await expectStatus<ApiErrorBody>(status, options)
    expect(error.code, error.message).toBe(code)
    return error
  }
  return {
    app,
    database,
    handle,
    config,
    async signIn(role, email = `${role}-${++emails}-${Date.now()}@example.com`) {
      const { user, customer } = await createUser(handle.db, {
        email,
        passwordHash: await hashPassword('correct horse battery', TEST_SCRYPT_COST),
        role,
      })
      return { token: app.issueUserToken(user), userId: user.id, customerId: customer?.id ?? null }
    },
    async createApiKey(scopes, rateLimitPerMinute = null) {
      const key = generateApiKey()
      const row = await createApiKey(handle.db, {
        name: `test ${scopes.join(',')}`,
        prefix: apiKeyLookupPrefix(key),
        keyHash: hashApiKey(key),
        scopes,
        rateLimitPerMinute,
      })
      return { key, id: row!.id }
    },
    request,
    expectStatus,
    expectError,
    async expectInvalidField(options, field, table) {
      const before = await countRows(table)
      const error = await expectError(400, 'validation_error', options)
      const payload = JSON.stringify(options.payload)
      expect(error.details, payload).toContainEqual({ field, message: expect.stringContaining(`'${field}'`) })
      expect(await countRows(table), payload).toBe(before)
      return error
    },
    countRows,
    productEvents(productId) {
      return handle.sql<{ kind: string; data: Product; request_id: string }[]>`
        select kind, data, request_id from events where data->>'id' = ${productId} order by id`
    },
    async orderEvents(orderId) {
      const rows = await handle.sql<{ kind: string }[]>`select kind from events where data->>'order_id' = ${orderId} order by id`
      return rows.map((row) => row.kind)
    },
    async withFailingInserts(table, work, when = 'true', code = 'P0001') {
      const name = handle.sql(`fail_${table}`)
      await handle.sql.unsafe(
        `create function "fail_${table}"() returns trigger language plpgsql as $$ begin raise exception 'forced failure' using errcode = '${code}'; end $$`,
      )
      await handle.sql`create trigger ${name} before insert on ${handle.sql(table)} for each row when (${handle.sql.unsafe(when)}) execute function ${name}()`
      try {
        return await work()
      } finally {
        await handle.sql`drop trigger ${name} on ${handle.sql(table)}`
        await handle.sql`drop function ${name}()`
      }
    },
    async close() {
      await app.close()
      await database.drop()
    },
  }
}

interface ApiFixtures {
  /** What the file's `ctx` is made with; a file sets it once, at its top: `test.scoped({ contextOptions: … })`. */
  contextOptions: { config?: ConfigOverrides; build?: BuildOptions }
  /** The file's database and app, made for the first test that asks for it and closed after the file's last test. */
  ctx: TestContext
  /** The file's app listening on 127.0.0.1 (for fetch, raw sockets, WebSocket): `http://127.0.0.1:<port>`. */
  baseUrl: string
  /** Bearer tokens of an admin and of a customer of the file's database. */
  admin: string
  customer: string
}

const apiFixtures: Parameters<typeof vitestTest.extend<ApiFixtures>>[0] = {
  contextOptions: [{}, { scope: 'file' }],
  ctx: [
    async ({ contextOptions }, use) => {
      const ctx = await createTestContext(contextOptions.config, contextOptions.build)
      await use(ctx)
      await ctx.close()
    },
    { scope: 'file' },
  ],
  baseUrl: [
    async ({ ctx }, use) => {
      await ctx.app.listen({ host: '127.0.0.1', port: 0 })
      await use(`http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`)
    },
    { scope: 'file' },
  ],
  admin: [async ({ ctx }, use) => use((await ctx.signIn('admin')).token), { scope: 'file' }],
  customer: [async ({ ctx }, use) => use((await ctx.signIn('customer')).token), { scope: 'file' }],
}

/**
 * The API tests' `test`: `test('…', async ({ ctx, admin }) => …)`. Every fixture is per file; a test
 * or a describe block that needs an app of its own settings calls `createTestContext` itself.
 * `test.extend` starts again from vitest's own test: vitest's (3.2) adds the new fixtures to the
 * test it is called on as well, so a file's fixtures (an `auto` one seeds rows) would reach the
 * files run after it in the same process (`pnpm test:fast` runs files without isolation).
 */
const apiTest = vitestTest.extend<ApiFixtures>(apiFixtures)
export const test: typeof apiTest = Object.assign(apiTest, {
  extend: ((fixtures: object) => vitestTest.extend({ ...apiFixtures, ...fixtures } as never)) as typeof apiTest.extend,
})
