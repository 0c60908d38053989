/**
 * What browsers are told, over real HTTP: the security headers (API and reference page), CORS from
 * CORS_ORIGINS, and the same origin allowlist on the WebSocket handshake.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import WebSocket from 'ws'
import { ConfigError, loadConfig } from '../src/config.js'
import { createTestContext, type ApiErrorBody, type TestContext } from './helpers.js'

const SHOP = 'https://shop.example.com'
const EVIL = 'https://evil.example'
const API_CSP = "default-src 'none';base-uri 'none';form-action 'none';frame-ancestors 'none'"

interface Answer {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

/** A request over a real socket (node:http sends any header, Origin included). */
function call(base: string, method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(new URL(path, base), { method, headers }, (response) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (body += chunk))
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }))
    })
    sent.on('error', reject)
    sent.end()
  })
}

const corsHeadersOf = (headers: IncomingHttpHeaders) => Object.keys(headers).filter((name) => name.startsWith('access-control-'))

async function listening(ctx: TestContext): Promise<string> {
  await ctx.app.listen({ host: '127.0.0.1', port: 0 })
  return `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`
}

/** Opens a WebSocket and resolves with its first message, or with the HTTP refusal of the upgrade. */
function handshake(base: string, headers: Record<string, string>) {
  return new Promise<{ opened: true; first: unknown } | { opened: false; status: number; body: ApiErrorBody }>((resolve, reject) => {
    const socket = new WebSocket(`${base.replace('http', 'ws')}/api/v1/ws`, { headers })
    socket.once('message', (data) => {
      socket.terminate()
      resolve({ opened: true, first: JSON.parse(data.toString()) })
    })
    socket.on('error', reject)
    socket.on('unexpected-response', (_request, response) => {
      let body = ''
      response.on('data', (chunk: Buffer) => (body += chunk.toString()))
      response.on('end', () => resolve({ opened: false, status: response.statusCode!, body: JSON.parse(body) as ApiErrorBody }))
    })
  })
}

describe('without CORS_ORIGINS', () => {
  let ctx: TestContext
  let base: string
  beforeAll(async () => {
    ctx = await createTestContext()
    base = await listening(ctx)
  })
  afterAll(() => ctx.close())

  test('an API response carries the security headers of a JSON API', async () => {
    const response = await call(base, 'GET', '/api/v1/products')
    expect(response.status).toBe(200)
    expect(response.headers).toMatchObject({
      'content-security-policy': API_CSP,
      'strict-transport-security': 'max-age=31536000; includeSubDomains',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-resource-policy': 'same-origin',
      'x-permitted-cross-domain-policies': 'none',
    })
    expect(response.headers['x-powered-by']).toBeUndefined()
  })

  test('refusals carry them too: 401 from a guard, 404 of an unknown route, 400 of validation', async () => {
    const refused = await call(base, 'GET', '/api/v1/orders')
    const unknown = await call(base, 'GET', '/api/v1/nothing-here')
    const invalid = await call(base, 'GET', '/api/v1/products?per_page=1000')
    expect([refused.status, unknown.status, invalid.status]).toEqual([401, 404, 400])
    for (const response of [refused, unknown, invalid]) {
      expect(response.headers['content-security-policy']).toBe(API_CSP)
      expect(response.headers['x-content-type-options']).toBe('nosniff')
      expect(response.headers['x-frame-options']).toBe('DENY')
    }
  })

  test('no CORS header on any answer, and a preflight is an unknown route', async () => {
    const simple = await call(base, 'GET', '/api/v1/products', { origin: SHOP })
    expect(corsHeadersOf(simple.headers)).toEqual([])
    const preflight = await call(base, 'OPTIONS', '/api/v1/products', {
      origin: SHOP,
      'access-control-request-method': 'POST',
    })
    expect(preflight.status).toBe(404)
    expect(corsHeadersOf(preflight.headers)).toEqual([])
  })

  test('the reference page has its own policy, strict enough, and every asset it names loads', async () => {
    const page = await call(base, 'GET', '/docs/')
    expect(page.status).toBe(200)
    expect(page.headers['content-type']).toContain('text/html')
    const policy = new Map(
      String(page.headers['content-security-policy']).split(';').map((directive): [string, string[]] => {
        const [name, ...values] = directive.trim().split(/\s+/)
        return [name!, values]
      }),
    )
    expect(policy.get('default-src')).toEqual(["'self'"])
    expect(policy.get('script-src')?.[0]).toBe("'self'")
    expect(policy.get('script-src')).not.toContain("'unsafe-inline'")
    expect(policy.get('script-src')).not.toContain("'unsafe-eval'")
    expect(policy.get('style-src')).not.toContain('https:')
    expect(policy.get('object-src')).toEqual(["'none'"])
    expect(policy.get('frame-ancestors')).toEqual(["'none'"])
    expect(policy.get('connect-src')).toEqual(["'self'"])
    expect(policy.has('upgrade-insecure-requests')).toBe(false)
    // The rest of the headers stay.
    expect(page.headers['x-content-type-options']).toBe('nosniff')
    expect(page.headers['x-frame-options']).toBe('DENY')

    // Every script is a file of its own origin ('self'): no inline script the policy would block.
    expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/)
    const assets = [...page.body.matchAll(/<(?:script|link)\b[^>]*\b(?:src|href)="([^"]+)"/g)].map((match) => match[1]!)
    expect(assets.length).toBeGreaterThanOrEqual(5)
    for (const asset of assets) {
      const target = new URL(asset, `${base}/docs/`)
      expect(target.origin, asset).toBe(base)
      const response = await call(base, 'GET', target.pathname)
      expect(response.status, asset).toBe(200)
      expect(response.headers['x-content-type-options'], asset).toBe('nosniff')
    }
    const initializer = await call(base, 'GET', '/docs/static/swagger-initializer.js')
    expect(initializer.body).toContain('"validatorUrl":null')
    const document = await call(base, 'GET', '/docs/json')
    expect(document.status).toBe(200)
    expect(JSON.parse(document.body).openapi).toBe('3.1.0')
  })

  test('the WebSocket handshake is not checked for its Origin', async () => {
    const { token } = await ctx.signIn('admin')
    expect(await handshake(base, { authorization: `Bearer ${token}`, origin: EVIL })).toEqual({ opened: true, first: { type: 'ready' } })
  })
})

describe('with CORS_ORIGINS listing origins', () => {
  let ctx: TestContext
  let base: string
  let token: string
  beforeAll(async () => {
    ctx = await createTestContext({ corsOrigins: [SHOP, 'http://localhost:5173'] })
    base = await listening(ctx)
    token = (await ctx.signIn('admin')).token
  })
  afterAll(() => ctx.close())

  const preflight = (origin: string) =>
    call(base, 'OPTIONS', '/api/v1/orders/0190a6c4-0000-7000-8000-000000000000/payments', {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization,content-type,idempotency-key,x-request-id',
    })

  test('a preflight from a listed origin is answered with the methods, headers and max age', async () => {
    const response = await preflight(SHOP)
    expect(response.status).toBe(204)
    expect(response.headers['access-control-allow-origin']).toBe(SHOP)
    expect(response.headers['access-control-allow-methods']).toBe('GET, HEAD, POST, PUT, PATCH, DELETE')
    expect(response.headers['access-control-allow-headers']).toBe('Authorization, Content-Type, Idempotency-Key, X-Request-Id')
    expect(response.headers['access-control-max-age']).toBe('600')
    expect(response.headers['access-control-allow-credentials']).toBeUndefined()
    expect(response.headers.vary).toContain('Origin')
  })

  test('a preflight from another origin gets no CORS header', async () => {
    for (const origin of [EVIL, 'https://shop.example.com.evil.example', 'http://shop.example.com', 'null']) {
      const response = await preflight(origin)
      expect(corsHeadersOf(response.headers), origin).toEqual([])
    }
  })

  test('answers to a listed origin expose the request id, rate-limit and idempotency headers; others get none', async () => {
    const allowed = await call(base, 'GET', '/api/v1/products', { origin: SHOP })
    expect(allowed.status).toBe(200)
    expect(allowed.headers['access-control-allow-origin']).toBe(SHOP)
    expect(allowed.headers['access-control-expose-headers']).toBe(
      'X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, RateLimit, RateLimit-Policy, Retry-After, Idempotent-Replayed, Deprecation, Sunset, Link',
    )
    expect(allowed.headers['x-ratelimit-remaining']).toBeDefined()
    expect((await call(base, 'GET', '/api/v1/products', { origin: 'http://localhost:5173' })).headers['access-control-allow-origin']).toBe(
      'http://localhost:5173',
    )

    const other = await call(base, 'GET', '/api/v1/products', { origin: EVIL })
    expect(other.status).toBe(200)
    expect(corsHeadersOf(other.headers)).toEqual([])
  })

  test('a refusal answered to a listed origin keeps its CORS headers, so the page can read the error', async () => {
    const response = await call(base, 'GET', '/api/v1/orders', { origin: SHOP })
    expect(response.status).toBe(401)
    expect(response.headers['access-control-allow-origin']).toBe(SHOP)
    expect((JSON.parse(response.body) as ApiErrorBody).error.code).toBe('unauthorized')
  })

  test('a WebSocket handshake from another origin is refused with 403 before the credential is looked at', async () => {
    const refused = await handshake(base, { authorization: `Bearer ${token}`, origin: EVIL })
    expect(refused).toMatchObject({ opened: false, status: 403, body: { error: { code: 'forbidden' } } })
    if (!refused.opened) expect(refused.body.error.request_id).toBeTruthy()
    expect(await handshake(base, { origin: EVIL })).toMatchObject({ opened: false, status: 403 })
  })

  test('a WebSocket handshake from a listed origin, from the API’s own origin or without Origin opens', async () => {
    const authorization = `Bearer ${token}`
    const ready = { opened: true, first: { type: 'ready' } }
    expect(await handshake(base, { authorization, origin: SHOP })).toEqual(ready)
    expect(await handshake(base, { authorization, origin: base })).toEqual(ready)
    expect(await handshake(base, { authorization })).toEqual(ready)
    // The origin check does not replace the credential check.
    expect(await handshake(base, { origin: SHOP })).toMatchObject({ opened: false, status: 401 })
  })

  test('the OpenAPI document lists the 403 of the handshake', async () => {
    const document = (await ctx.request({ method: 'GET', url: '/api/v1/openapi.json' })).json()
    expect(Object.keys(document.paths['/api/v1/ws'].get.responses)).toContain('403')
  })
})

describe('with CORS_ORIGINS=*', () => {
  let ctx: TestContext
  let base: string
  beforeAll(async () => {
    ctx = await createTestContext({ corsOrigins: '*' })
    base = await listening(ctx)
  })
  afterAll(() => ctx.close())

  test('any origin may call the API and open the WebSocket', async () => {
    const preflight = await call(base, 'OPTIONS', '/api/v1/products', { origin: EVIL, 'access-control-request-method': 'POST' })
    expect(preflight.status).toBe(204)
    expect(preflight.headers['access-control-allow-origin']).toBe('*')
    expect((await call(base, 'GET', '/api/v1/products', { origin: EVIL })).headers['access-control-allow-origin']).toBe('*')
    const { token } = await ctx.signIn('customer')
    expect(await handshake(base, { authorization: `Bearer ${token}`, origin: EVIL })).toEqual({ opened: true, first: { type: 'ready' } })
  })
})

describe('CORS_ORIGINS', () => {
  const load = (value: string) => loadConfig({ CORS_ORIGINS: value, JWT_SECRET: 'x'.repeat(32) })

  test('is *, or a list of exact origins; unset means no CORS', () => {
    expect(loadConfig({ JWT_SECRET: 'x'.repeat(32) }).corsOrigins).toBeUndefined()
    expect(load('*').corsOrigins).toBe('*')
    expect(load(' https://shop.example.com , http://localhost:5173 ').corsOrigins).toEqual([SHOP, 'http://localhost:5173'])
  })

  test('refuses what a browser would never send as an Origin, naming the variable', () => {
    for (const bad of ['https://shop.example.com/', 'https://Shop.example.com', 'shop.example.com', 'https://shop.example.com/path', '*,https://a.example', 'ftp://a.example', ',']) {
      expect(() => load(bad), bad).toThrow(ConfigError)
      expect(() => load(bad), bad).toThrow(/CORS_ORIGINS must be \* alone or comma-separated origins/)
    }
  })
})
