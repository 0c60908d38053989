import { Validator } from '@seriousme/openapi-schema-validator'
import { describe, expect } from 'vitest'
import { buildApp } from '../src/app.js'
import { createTestContext, test, testConfig } from './helpers.js'

describe('errors', () => {
  test('malformed JSON answers 400 validation_error', async ({ ctx }) => {
    const { token } = await ctx.signIn('admin')
    const response = await ctx.request({
      method: 'POST',
      url: '/api/v1/products',
      token,
      headers: { 'content-type': 'application/json' },
      payload: '{"title": "broken',
    })
    expect(response.statusCode).toBe(400)
    expect(response.json().error).toMatchObject({ code: 'validation_error', message: 'The request body is not valid JSON' })
  })

  test('a body over 1 MiB answers 413 payload_too_large', async ({ ctx }) => {
    const { token } = await ctx.signIn('admin')
    const response = await ctx.request({
      method: 'POST',
      url: '/api/v1/products',
      token,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ title: 'x', description: 'y'.repeat(1024 * 1024) }),
    })
    expect(response.statusCode).toBe(413)
    expect(response.json().error.code).toBe('payload_too_large')
  })

  test('a non-JSON content type answers 415 unsupported_media_type', async ({ ctx }) => {
    const { token } = await ctx.signIn('admin')
    const response = await ctx.request({
      method: 'POST',
      url: '/api/v1/products',
      token,
      headers: { 'content-type': 'text/plain' },
      payload: 'title=x',
    })
    expect(response.statusCode).toBe(415)
    expect(response.json().error.code).toBe('unsupported_media_type')
  })

  test('an unknown route answers 404 not_found in the error format', async ({ ctx }) => {
    const response = await ctx.request({ method: 'GET', url: '/api/v1/nothing-here?token=abc' })
    expect(response.statusCode).toBe(404)
    expect(response.json()).toEqual({
      error: { code: 'not_found', message: 'No route GET /api/v1/nothing-here', request_id: response.headers['x-request-id'] },
    })
  })

  test('text PostgreSQL cannot store (a NUL character) answers 400, not 500', async ({ ctx }) => {
    const { token } = await ctx.signIn('admin')
    const body = await ctx.request({ method: 'POST', url: '/api/v1/products', token, payload: { title: 'a\u0000b' } })
    expect(body.statusCode).toBe(400)
    expect(body.json().error.code).toBe('validation_error')
    const query = await ctx.request({ method: 'GET', url: '/api/v1/products?category=%00' })
    expect(query.statusCode).toBe(400)
  })

  test('a bad token is refused with 401 on public routes too', async ({ ctx }) => {
    const response = await ctx.request({ method: 'GET', url: '/api/v1/products', token: 'expired.or.forged' })
    expect(response.statusCode).toBe(401)
    expect(response.json().error.code).toBe('unauthorized')
  })

  test('every response carries X-Request-Id, echoing a safe incoming one', async ({ ctx }) => {
    const fresh = await ctx.request({ method: 'GET', url: '/health' })
    expect(fresh.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/)
    const echoed = await ctx.request({ method: 'GET', url: '/api/v1/products', headers: { 'x-request-id': 'trace-42' } })
    expect(echoed.headers['x-request-id']).toBe('trace-42')
    const unsafe = await ctx.request({ method: 'GET', url: '/health', headers: { 'x-request-id': 'a b<script>' } })
    expect(unsafe.headers['x-request-id']).not.toBe('a b<script>')
  })

  test('an unexpected error answers 500 internal_error without internals', async ({ ctx }) => {
    const app = await buildApp(testConfig(ctx.database.url), { logger: false })
    // A hook on the existing routes: a route of the test's own would have no entry in the access table.
    app.addHook('preHandler', async () => {
      throw new Error('secret internal detail at /srv/app.js:42')
    })
    try {
      const response = await app.inject({ method: 'GET', url: '/health' })
      expect(response.statusCode).toBe(500)
      expect(response.json().error).toMatchObject({ code: 'internal_error', message: 'Internal server error' })
      expect(response.body).not.toContain('secret internal detail')
      expect(response.body).not.toContain('stack')
    } finally {
      await app.close()
    }
  })

  test('a database that cannot be reached answers 503 and /ready says so', async () => {
    const app = await buildApp(testConfig('postgres://postgres@127.0.0.1:1/none'), { logger: false })
    try {
      const ready = await app.inject({ method: 'GET', url: '/ready' })
      expect(ready.statusCode).toBe(503)
      expect(ready.json().error.code).toBe('service_unavailable')
      const list = await app.inject({ method: 'GET', url: '/api/v1/products' })
      expect(list.statusCode).toBe(503)
      expect(list.json().error.code).toBe('service_unavailable')
      const health = await app.inject({ method: 'GET', url: '/health' })
      expect(health.statusCode).toBe(200)
    } finally {
      await app.close()
    }
  })
})

describe('health, readiness, metrics, OpenAPI', () => {
  test('GET /health and GET /ready answer 200 with a live database', async ({ ctx }) => {
    const health = await ctx.request({ method: 'GET', url: '/health' })
    expect(health.json()).toEqual({ status: 'ok' })
    // Never counted: no rate-limit fields of either kind.
    expect(Object.keys(health.headers).filter((name) => name.includes('ratelimit'))).toEqual([])
    expect((await ctx.request({ method: 'GET', url: '/ready' })).json()).toEqual({ status: 'ready' })
  })

  test('GET /metrics answers Prometheus text with request durations by route and status', async ({ ctx }) => {
    await ctx.request({ method: 'GET', url: '/api/v1/products' })
    const response = await ctx.request({ method: 'GET', url: '/metrics' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toContain('text/plain')
    expect(response.body).toMatch(/commerce_http_request_duration_seconds_count\{method="GET",route="\/api\/v1\/products",status_code="200"\} \d+/)
    expect(response.body).toContain('process_cpu_seconds_total')
  })

  test('GET /api/v1/openapi.json is OpenAPI 3.1 with every API route and its responses', async ({ ctx }) => {
    const document = (await ctx.request({ method: 'GET', url: '/api/v1/openapi.json' })).json()
    expect(document.openapi).toBe('3.1.0')
    const routes = ctx.app.printRoutes({ commonPrefix: false })
    expect(routes).toContain('/api/v1/products')
    const expected = [
      ['get', '/api/v1/products'],
      ['post', '/api/v1/products'],
      ['get', '/api/v1/products/{id}'],
      ['patch', '/api/v1/products/{id}'],
      ['delete', '/api/v1/products/{id}'],
      ['get', '/api/v1/products/{id}/variants'],
      ['post', '/api/v1/products/{id}/variants'],
      ['patch', '/api/v1/products/{id}/variants/{variant_id}'],
      ['delete', '/api/v1/products/{id}/variants/{variant_id}'],
      ['get', '/api/v1/products/{id}/images'],
      ['post', '/api/v1/products/{id}/images'],
      ['delete', '/api/v1/products/{id}/images/{image_id}'],
      ['get', '/api/v1/categories'],
      ['post', '/api/v1/categories'],
      ['post', '/api/v1/auth/register'],
      ['post', '/api/v1/auth/login'],
      ['get', '/api/v1/auth/me'],
    ]
    for (const [method, path] of expected) {
      const operation = document.paths[path!]?.[method!]
      expect(operation, `${method} ${path}`).toBeDefined()
      const statuses = Object.keys(operation.responses)
      expect(statuses.some((status) => status.startsWith('2')), `${method} ${path} success response`).toBe(true)
      expect(statuses.some((status) => status.startsWith('4')), `${method} ${path} error responses`).toBe(true)
    }
    expect(document.components.schemas.Error).toBeDefined()
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
  })

  test('the OpenAPI document passes the OpenAPI 3.1 schema validator', async ({ ctx }) => {
    const document = (await ctx.request({ method: 'GET', url: '/api/v1/openapi.json' })).json()
    const result = await new Validator().validate(document)
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
  })

  test('GET /docs serves the reference page', async ({ ctx }) => {
    const response = await ctx.request({ method: 'GET', url: '/docs/' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toContain('text/html')
  })
})

describe('rate limit', () => {
  test('the request over the limit answers 429 rate_limited with Retry-After; health is not counted', async () => {
    const limited = await createTestContext({ rateLimitMax: 3 })
    try {
      for (let i = 0; i < 5; i++) expect((await limited.request({ method: 'GET', url: '/health' })).statusCode).toBe(200)
      const first = await limited.request({ method: 'GET', url: '/api/v1/products' })
      expect(first.headers['x-ratelimit-limit']).toBe('3')
      expect(first.headers['x-ratelimit-remaining']).toBe('2')
      expect(Number(first.headers['x-ratelimit-reset'])).toBeGreaterThan(0)
      await limited.request({ method: 'GET', url: '/api/v1/nothing' })
      await limited.request({ method: 'GET', url: '/api/v1/categories' })
      const over = await limited.request({ method: 'GET', url: '/api/v1/products' })
      expect(over.statusCode).toBe(429)
      expect(over.json().error.code).toBe('rate_limited')
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(0)
      expect(over.headers['x-ratelimit-remaining']).toBe('0')
    } finally {
      await limited.close()
    }
  })
})
