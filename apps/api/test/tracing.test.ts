/**
 * Traces of the API (tracing.ts of @commerce/runtime), read from an in-memory exporter: a real
 * HTTP request to the app makes a SERVER span with its route and request id, joined to the
 * caller's trace, and the statements it sends to PostgreSQL are spans beneath it.
 */
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InMemorySpanExporter, SpanKind, startTracing, type ReadableSpan, type Tracing } from '@commerce/runtime/tracing'
import { SYSTEM_PATHS } from '../src/routes/system/routes.js'
import { createTestContext, type TestContext } from './helpers.js'

const exporter = new InMemorySpanExporter()
let tracing: Tracing
let ctx: TestContext
let base = ''
let productId = ''

beforeAll(async () => {
  // Before the app is built: Fastify apps are instrumented as they are created.
  tracing = startTracing({ endpoint: 'http://127.0.0.1:4318', headers: {}, serviceName: 'commerce-api-test' }, { exporter, untracedRoutes: SYSTEM_PATHS })
  ctx = await createTestContext()
  await ctx.app.listen({ host: '127.0.0.1', port: 0 })
  base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`
  const { token } = await ctx.signIn('admin')
  const created = await fetch(`${base}/api/v1/products`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'Traced shirt', price: 12.5, currency: 'USD' }),
  })
  productId = ((await created.json()) as { id: string }).id
})

afterAll(async () => {
  await ctx?.close()
  await tracing?.shutdown()
})

/** The chain of spans from `span` up to its trace's root (as far as this process saw it). */
function ancestors(span: ReadableSpan, spans: readonly ReadableSpan[]): ReadableSpan[] {
  const parent = spans.find((candidate) => candidate.spanContext().spanId === span.parentSpanContext?.spanId)
  return parent ? [parent, ...ancestors(parent, spans)] : []
}

describe('traces of the API', () => {
  it('a request is a SERVER span named by its route, with its request_id, in the caller’s trace, above the statements it ran', async () => {
    exporter.reset()
    const traceId = '0af7651916cd43dd8448eb211c80319c'
    const callerSpanId = 'b7ad6b7169203331'
    const response = await fetch(`${base}/api/v1/products/${productId}`, {
      headers: { 'x-request-id': 'traced-read', traceparent: `00-${traceId}-${callerSpanId}-01` },
    })
    expect(response.status).toBe(200)

    const spans = exporter.getFinishedSpans()
    const servers = spans.filter((span) => span.kind === SpanKind.SERVER)
    expect(servers).toHaveLength(1)
    const server = servers[0]!
    expect(server.name).toBe('GET /api/v1/products/:id')
    expect(server.attributes).toMatchObject({ request_id: 'traced-read', 'http.route': '/api/v1/products/:id', 'http.response.status_code': 200 })
    expect(server.spanContext().traceId).toBe(traceId)
    expect(server.parentSpanContext?.spanId).toBe(callerSpanId)

    // This request's trace: an earlier request's late work (announcing its events) has its own.
    const statements = spans.filter((span) => span.attributes['db.system.name'] === 'postgresql' && span.spanContext().traceId === traceId)
    expect(statements.length).toBeGreaterThan(0)
    for (const statement of statements) {
      expect(statement.kind).toBe(SpanKind.CLIENT)
      expect(statement.attributes['db.query.text']).toMatch(/\bproducts\b|\bselect\b/i)
      expect(ancestors(statement, spans)).toContain(server)
    }
  })

  it('a request without traceparent starts a trace of its own; an error answer is still its span', async () => {
    exporter.reset()
    const response = await fetch(`${base}/api/v1/products/not-a-uuid`, { headers: { 'x-request-id': 'traced-bad' } })
    expect(response.status).toBe(400)
    const [server] = exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.SERVER)
    expect(server?.parentSpanContext).toBeUndefined()
    expect(server?.attributes).toMatchObject({ request_id: 'traced-bad', 'http.response.status_code': 400 })
  })

  it('the probes and the metrics scrape make no span, nor do their statements', async () => {
    exporter.reset()
    for (const path of ['/health', '/ready', '/metrics']) expect((await fetch(base + path)).status).toBe(200)
    expect(exporter.getFinishedSpans()).toEqual([])
  })
})
