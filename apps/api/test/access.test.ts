/**
 * The access table (src/access.ts), route by route and read from the table itself: who is refused
 * with 401 or 403 and who gets through to the handler; that the guard answers before the body is
 * read or validated; that the table and the registered routes match; and what OpenAPI shows.
 */
import { randomUUID } from 'node:crypto'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import { afterAll, describe, expect } from 'vitest'
import { SCOPE_RESOURCES } from '@commerce/domain'
import { ACCESS, FILES_ACCESS, PUBLIC, type Access, type Scope } from '../src/access.js'
import accessPlugin from '../src/plugins/access.js'
import { test, type TestContext } from './helpers.js'

// Every route each Fastify instance registers, seen by an onRoute hook added as the instance is
// made (Fastify publishes each new instance on this channel): a record kept apart from the access
// plugin's own, and no module mock, which a file run without isolation could not count on.
const routesOf = new WeakMap<object, Set<string>>()
const recordRoutes = ({ fastify }: { fastify: FastifyInstance }) => {
  const routes = new Set<string>()
  routesOf.set(fastify, routes)
  fastify.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.add(`${method} ${route.url}`)
  })
}
subscribe('fastify.initialization', recordRoutes as (message: unknown) => void)
afterAll(() => unsubscribe('fastify.initialization', recordRoutes as (message: unknown) => void))

interface Entry {
  key: string
  method: string
  url: string
  access: Access
}

const entries: Entry[] = Object.entries(ACCESS).map(([key, access]) => {
  const [method, url] = key.split(' ') as [string, string]
  return { key, method, url, access }
})
const scoped = entries.flatMap((entry) =>
  entry.access.kind === 'scope' || entry.access.kind === 'scope_or_owner'
    ? [{ ...entry, scope: entry.access.scope, customersPass: entry.access.kind === 'scope_or_owner' }]
    : [],
)
/** Reads the Authorization header itself (HTTP Basic): a bearer token means nothing to it. */
const TOKEN_ENDPOINT = 'POST /api/v1/oauth/token'

const keys = new Map<string, Promise<string>>()
/** One API key per set of scopes, made on first use. */
function keyWith(ctx: TestContext, ...scopes: string[]): Promise<string> {
  let key = keys.get(scopes.join(' '))
  if (!key) {
    key = ctx.createApiKey(scopes).then((created) => created.key)
    keys.set(scopes.join(' '), key)
  }
  return key
}

/** A scope of another resource: it grants nothing on this route. */
function unrelatedTo(required: Scope): Scope {
  const resource = required.split(':')[0]
  return `${SCOPE_RESOURCES.find((other) => other !== resource)!}:write`
}

/** The route with its path parameters filled (random UUIDs: no such record) and `{}` as a write's body. */
function send(ctx: TestContext, { method, url }: Entry, token?: string, headers: Record<string, string> = {}) {
  const path = url.replace(/:\w+/g, () => randomUUID()).replace('*', 'nothing-here.js')
  const payload = ['POST', 'PUT', 'PATCH'].includes(method) ? { payload: {} } : {}
  return ctx.request({ method: method as 'GET', url: path, token, headers, ...payload })
}

function expectRefused(response: LightMyRequestResponse, status: 401 | 403, who: string) {
  expect(response.statusCode, `${who}: ${response.body}`).toBe(status)
  expect(response.json()).toEqual({
    error: { code: status === 401 ? 'unauthorized' : 'forbidden', message: expect.any(String), request_id: expect.any(String) },
  })
}

/** Past the guard: whatever the handler answers (404 for the random ids, 400 for `{}`), but not 401 or 403. */
function expectThrough(response: LightMyRequestResponse, who: string) {
  expect([401, 403], `${who} got ${response.statusCode}: ${response.body}`).not.toContain(response.statusCode)
}

describe('routes that need a scope', () => {
  for (const entry of scoped) {
    test(`${entry.key}: 401 anonymous, 403 another scope, through with ${entry.scope}, *${entry.scope.endsWith(':read') ? ' or read' : ''}`, async ({ ctx, admin, customer }) => {
      expectRefused(await send(ctx, entry), 401, 'anonymous')
      expectRefused(await send(ctx, entry, await keyWith(ctx, unrelatedTo(entry.scope))), 403, `a key with ${unrelatedTo(entry.scope)}`)
      expectThrough(await send(ctx, entry, await keyWith(ctx, entry.scope)), `a key with ${entry.scope}`)
      expectThrough(await send(ctx, entry, await keyWith(ctx, '*')), 'a key with *')
      expectThrough(await send(ctx, entry, admin), 'an admin')
      if (entry.scope.endsWith(':read')) expectThrough(await send(ctx, entry, await keyWith(ctx, 'read')), 'a key with read')
      if (entry.customersPass) expectThrough(await send(ctx, entry, customer), 'a customer (its own records only)')
      else expectRefused(await send(ctx, entry, customer), 403, 'a customer')
    })
  }
})

describe('routes for anyone signed in', () => {
  for (const entry of entries.filter(({ access }) => access.kind === 'signed_in')) {
    test(`${entry.key}: 401 anonymous, through with a customer's token`, async ({ ctx, customer }) => {
      expectRefused(await send(ctx, entry), 401, 'anonymous')
      expectThrough(await send(ctx, entry, customer), 'a customer')
    })
  }
})

describe('routes of a user’s own account', () => {
  for (const entry of entries.filter(({ access }) => access.kind === 'user')) {
    test(`${entry.key}: 401 anonymous, 403 with an API key (it has no account) even holding *, through with a customer's token`, async ({ ctx, customer }) => {
      expectRefused(await send(ctx, entry), 401, 'anonymous')
      expectRefused(await send(ctx, entry, await keyWith(ctx, '*')), 403, 'a key with *')
      expectThrough(await send(ctx, entry, customer), 'a customer')
    })
  }
})

describe('public routes', () => {
  for (const entry of entries.filter(({ access }) => access === PUBLIC)) {
    test(`${entry.key}: through anonymous${entry.key === TOKEN_ENDPOINT ? '' : '; 401 with a bad bearer token'}`, async ({ ctx }) => {
      expectThrough(await send(ctx, entry), 'anonymous')
      if (entry.key === TOKEN_ENDPOINT) return
      const refused = await send(ctx, entry, 'not-a-token')
      expectRefused(refused, 401, 'a bad bearer token')
      expect(refused.json().error.message).toBe('The access token is malformed, expired or invalid')
    })
  }
})

describe('the guard answers first', () => {
  const createProduct = { method: 'POST' as const, url: '/api/v1/products' }

  test('before body validation: an invalid body is 401 anonymous and 403 for an API key without the scope', async ({ ctx }) => {
    await ctx.expectError(401, 'unauthorized', { ...createProduct, payload: { title: 5 } })
    await ctx.expectError(403, 'forbidden', { ...createProduct, payload: { title: 5 }, token: await keyWith(ctx, 'products:read') })
    await ctx.expectError(400, 'validation_error', { ...createProduct, payload: { title: 5 }, token: await keyWith(ctx, 'products:write') })
  })

  test('before reading a body over the limit, over real HTTP: 401 and 403, not 413', async ({ ctx }) => {
    const address = await ctx.app.listen({ host: '127.0.0.1', port: 0 })
    const body = JSON.stringify({ title: 'x', description: 'y'.repeat(2 * 1024 * 1024) })
    const post = async (token?: string) => {
      const response = await fetch(`${address}/api/v1/products`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body,
      })
      return { status: response.status, body: (await response.json()) as { error: { code: string } } }
    }
    expect(await post()).toMatchObject({ status: 401, body: { error: { code: 'unauthorized' } } })
    expect(await post(await keyWith(ctx, 'products:read'))).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } })
    expect(await post(await keyWith(ctx, 'products:write'))).toMatchObject({ status: 413, body: { error: { code: 'payload_too_large' } } })
  })

  test('after the rate limiter: a refused request is counted', async ({ ctx }) => {
    const response = await ctx.request({ method: 'GET', url: '/api/v1/orders' })
    expect(response.statusCode).toBe(401)
    expect(response.headers['x-ratelimit-limit']).toBe(String(ctx.config.rateLimitMax))
  })

  test("a HEAD route shares its GET's entry", async ({ ctx }) => {
    const response = await ctx.request({ method: 'HEAD', url: '/api/v1/orders' })
    expect(response.statusCode).toBe(401)
    expect((await ctx.request({ method: 'HEAD', url: '/api/v1/orders', token: await keyWith(ctx, 'orders:read') })).statusCode).toBe(200)
  })
})

describe('the table and the routes', () => {
  test('every route the app registers has an entry, and every entry is a registered route', ({ ctx }) => {
    const registered = routesOf.get(ctx.app)!
    // The tests' storage is a disk: its files are served too.
    const table: Record<string, unknown> = { ...ACCESS, ...FILES_ACCESS }
    const entryOf = (route: string) =>
      route in table ? route : route.startsWith('HEAD ') && `GET ${route.slice(5)}` in table ? `GET ${route.slice(5)}` : undefined
    expect([...registered].filter((route) => entryOf(route) === undefined)).toEqual([])
    const covered = new Set([...registered].map(entryOf))
    expect(Object.keys(table).filter((key) => !covered.has(key))).toEqual([])
    expect(registered.size).toBeGreaterThan(Object.keys(table).length)
  })

  test('startup fails naming a route without an entry and an entry without a route', async () => {
    const app = Fastify()
    await app.register(accessPlugin, { table: { 'GET /listed': PUBLIC, 'GET /gone': PUBLIC } })
    app.get('/listed', async () => 'ok')
    app.get('/unlisted', async () => 'ok')
    await expect(app.ready()).rejects.toThrow(
      'Access table (src/access.ts): the route GET /unlisted has no entry; the entry GET /gone matches no route',
    )
  })
})

describe('OpenAPI', () => {
  test('each operation shows its access: security, x-required-scope and a line of its description', async ({ ctx }) => {
    const document = (await ctx.request({ method: 'GET', url: '/api/v1/openapi.json' })).json()
    const documented = entries.filter(({ url }) => url.startsWith('/api/v1/') && url !== '/api/v1/openapi.json')
    for (const { key, method, url, access } of documented) {
      const operation = document.paths[url.replace(/:(\w+)/g, '{$1}')]?.[method.toLowerCase()]
      expect(operation, key).toBeDefined()
      expect(operation.description, key).toMatch(/Access: .+\.$/)
      if (access.kind === 'public') {
        expect(operation.security, key).toContainEqual({})
        expect(operation['x-required-scope'], key).toBeUndefined()
        continue
      }
      expect(operation.security, key).toEqual([{ bearerAuth: [] }])
      expect(operation['x-required-scope'], key).toBe('scope' in access ? access.scope : undefined)
      if (access.kind === 'user') expect(Object.keys(operation.responses), key).toContain('403')
      expect(Object.keys(operation.responses), key).toContain('401')
    }
  })
})
