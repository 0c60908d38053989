/**
 * Text on the way in is taken as sent or refused, never altered: JSON bodies in UTF-8 only (415
 * otherwise), bytes that are not UTF-8 and lone surrogates refused naming the field, query strings
 * decoded as UTF-8; and what Node's HTTP parser refuses still answers in our error format.
 */
import { connect } from 'node:net'
import fc from 'fast-check'
import { describe, expect } from 'vitest'
import { decodeUtf8, parseQueryString } from '../src/request-text.js'
import { test, type TestContext } from './helpers.js'

const bytes = (...parts: (string | number[])[]) => Buffer.concat(parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : Buffer.from(part))))
const JSON_TYPE = { 'content-type': 'application/json' }

function postProduct(ctx: TestContext, admin: string, payload: string | Buffer, headers: Record<string, string> = JSON_TYPE) {
  return ctx.request({ method: 'POST', url: '/api/v1/products', token: admin, headers, payload })
}

async function titles(ctx: TestContext): Promise<string[]> {
  return (await ctx.handle.sql<{ title: string }[]>`select title from products order by created_at`).map((row) => row.title)
}

describe('JSON bodies', () => {
  test('a charset other than UTF-8 is 415 unsupported_media_type, and nothing is stored', async ({ ctx, admin }) => {
    const before = await titles(ctx)
    const latin1 = bytes('{"title":"caf', [0xe9], '","price":1,"currency":"USD"}')
    for (const contentType of ['application/json; charset=latin1', 'application/json; charset="ISO-8859-1"', 'application/json;charset=utf-16']) {
      const response = await postProduct(ctx, admin, latin1, { 'content-type': contentType })
      expect(response.statusCode, contentType).toBe(415)
      expect(response.json().error).toMatchObject({ code: 'unsupported_media_type', request_id: response.headers['x-request-id'] })
      expect(response.json().error.message).toMatch(/^The charset '.+' is not supported; send JSON in UTF-8$/)
    }
    expect(await titles(ctx)).toEqual(before)
  })

  test('UTF-8 is taken however it is named, or with no charset', async ({ ctx, admin }) => {
    for (const contentType of ['application/json', 'application/json; charset=utf-8', 'application/json; charset=UTF8', 'Application/JSON; Charset="UTF-8"']) {
      const title = `Café ☕ 😀 \uFFFD ${contentType}`
      const response = await postProduct(ctx, admin, JSON.stringify({ title, price: 1, currency: 'USD' }), { 'content-type': contentType })
      expect(response.statusCode, response.body).toBe(201)
      expect(response.json().title).toBe(title)
    }
  })

  test('bytes that are not UTF-8 are 400 naming the field (titles, names, cities), and nothing is stored', async ({ ctx, admin }) => {
    const before = await titles(ctx)
    // Latin-1 é, a truncated sequence, an encoded surrogate (ED A0 80), an overlong "/" and a byte past U+10FFFF.
    for (const bad of [[0xe9], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xf5, 0x80, 0x80, 0x80]]) {
      const response = await postProduct(ctx, admin, bytes('{"title":"caf', bad, '","price":1,"currency":"USD"}'))
      expect(response.statusCode, response.body).toBe(400)
      expect(response.json().error).toMatchObject({
        code: 'validation_error',
        details: [{ field: 'title', message: "Field 'title' is not valid Unicode text (bytes that are not UTF-8, or a lone surrogate)" }],
      })
    }
    expect(await titles(ctx)).toEqual(before)

    const customers = await ctx.countRows('customers')
    const register = await ctx.request({
      method: 'POST',
      url: '/api/v1/auth/register',
      headers: JSON_TYPE,
      payload: bytes('{"email":"latin@example.com","password":"long enough password","first_name":"Ren', [0xe9], '"}'),
    })
    expect(register.statusCode).toBe(400)
    expect(register.json().error.details).toEqual([{ field: 'first_name', message: expect.stringContaining("'first_name' is not valid Unicode") }])
    expect(await ctx.countRows('customers')).toBe(customers)

    const cart = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: 'USD' } })
    const address = await ctx.request({
      method: 'PUT',
      url: `/api/v1/carts/${cart.id}/shipping-address`,
      headers: JSON_TYPE,
      payload: bytes('{"line1":"1 Main St","city":"K', [0xf6], 'ln","postal_code":"50667","country":"DE"}'),
    })
    expect(address.statusCode).toBe(400)
    expect(address.json().error.details).toEqual([{ field: 'city', message: expect.stringContaining("'city' is not valid Unicode") }])
    const [stored] = await ctx.handle.sql<{ shipping_address: unknown }[]>`select shipping_address from carts where id = ${cart.id}`
    expect(stored!.shipping_address).toBeNull()
  })

  test('a bad byte outside a string is malformed JSON', async ({ ctx, admin }) => {
    const response = await postProduct(ctx, admin, bytes('{"title":"x",', [0xff], '"price":1,"currency":"USD"}'))
    expect(response.statusCode).toBe(400)
    expect(response.json().error.message).toBe('The request body is not valid JSON')
  })

  test('lone surrogates (JSON escapes JSON.parse accepts) are 400 naming every field, nested ones by path', async ({ ctx, admin }) => {
    const before = await titles(ctx)
    const product = await postProduct(ctx, admin, '{"title":"caf\\ud800","description":"x\\udfffy","price":1,"currency":"USD"}')
    expect(product.statusCode).toBe(400)
    expect(product.json().error.details.map((detail: { field: string }) => detail.field)).toEqual(['description', 'title'])
    expect(await titles(ctx)).toEqual(before)

    const cart = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: 'USD' } })
    const checkout = await ctx.request({
      method: 'POST',
      url: '/api/v1/checkouts',
      headers: JSON_TYPE,
      payload: `{"cart_id":"${cart.id}","email":"a@example.com","shipping_address":{"line1":"1 Main St","city":"New \\udc00York","postal_code":"10001","country":"US"}}`,
    })
    expect(checkout.statusCode).toBe(400)
    expect(checkout.json().error.details).toEqual([{ field: 'shipping_address.city', message: expect.stringContaining('is not valid Unicode') }])

    // A key too: refused for what it is, whatever the schema thinks of it.
    const key = await postProduct(ctx, admin, '{"title":"x","price":1,"currency":"USD","\\ud83d":1}')
    expect(key.statusCode).toBe(400)
    expect(key.json().error.details[0]).toEqual({ field: '\uFFFD', message: expect.stringContaining('is not valid Unicode') })
    // A well-formed pair of surrogate escapes is one character, and welcome.
    const emoji = await postProduct(ctx, admin, '{"title":"\\ud83d\\ude00","price":1,"currency":"USD"}')
    expect(emoji.statusCode).toBe(201)
    expect(emoji.json().title).toBe('😀')
  })

  test('a body nested deeper than the call stack goes is refused, not a 500', async ({ ctx, admin }) => {
    const deep = `{"title":"x","price":1,"currency":"USD","tags":${'['.repeat(200_000)}${']'.repeat(200_000)}}`
    const response = await postProduct(ctx, admin, deep)
    expect(response.statusCode).toBe(400)
    expect(response.json().error.code).toBe('validation_error')
  })

  test('a body JSON.parse reads but too deep to serialize again (an Idempotency-Key fingerprints it) is refused, not a 500', async ({ ctx, admin }) => {
    const deep = `${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}`
    const response = await ctx.request({
      method: 'POST',
      url: '/api/v1/payments/00000005-7a5e-4480-9c07-7d2800000000/cancel',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'deep-body-0000000001' },
      payload: deep,
      token: admin,
    })
    expect(response.statusCode, response.body).toBe(400)
    expect(response.json().error.code).toBe('validation_error')
  })
})

describe('query strings', () => {
  test('a value whose percent-encoding is not UTF-8 is 400 naming the parameter; UTF-8 is decoded', async ({ ctx, admin }) => {
    for (const search of ['caf%E9', 'x%ED%A0%80', '%E2%82']) {
      const response = await ctx.request({ method: 'GET', url: `/api/v1/products?search=${search}` })
      expect(response.statusCode, search).toBe(400)
      expect(response.json().error.details).toEqual([{ field: 'search', message: expect.stringContaining("'search' is not valid Unicode") }])
    }
    await postProduct(ctx, admin, JSON.stringify({ title: 'Crème brûlée', price: 1, currency: 'USD' }))
    const found = await ctx.expectStatus<{ products: { title: string }[] }>(200, { method: 'GET', url: '/api/v1/products?search=cr%C3%A8me+br%C3%BBl%C3%A9e' })
    expect(found.products.map((product) => product.title)).toEqual(['Crème brûlée'])
  })

  test('parseQueryString reads what URLSearchParams reads, repeated names as arrays, and keeps a stray %', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 12 })
    fc.assert(
      fc.property(fc.array(fc.tuple(text, text), { maxLength: 6 }), (pairs) => {
        const query = pairs.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value).replace(/%20/g, '+')}`).join('&')
        const expected: Record<string, string | string[]> = Object.create(null)
        for (const [name, value] of new URLSearchParams(query)) {
          const seen = expected[name]
          expected[name] = seen === undefined ? value : [seen, value].flat()
        }
        expect({ ...parseQueryString(query) }).toEqual({ ...expected })
      }),
    )
    expect({ ...parseQueryString('a=100%&b=%zz%C3%A9&c&&d=') }).toEqual({ a: '100%', b: '%zzé', c: '', d: '' })
    expect(parseQueryString('a=%E9').a).toBe('\uDCE9')
  })

  test('decodeUtf8 keeps valid text and turns each bad byte into its own lone surrogate', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (valid) => {
        expect(decodeUtf8(Buffer.from(valid))).toBe(valid)
      }),
    )
    expect(decodeUtf8(bytes('a', [0xe9], 'b', [0xe2, 0x82], '€'))).toBe('a\uDCE9b\uDCE2\uDC82€')
  })
})

/** Sends raw bytes over a real connection and reads the whole answer (the server closes it). */
function exchange(baseUrl: string, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(baseUrl).port), '127.0.0.1', () => socket.write(request))
    const chunks: Buffer[] = []
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('error', reject)
    socket.on('close', () => resolve(Buffer.concat(chunks).toString()))
  })
}

function parseAnswer(raw: string) {
  const [head = '', body = ''] = raw.split('\r\n\r\n')
  const [statusLine = '', ...lines] = head.split('\r\n')
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]))
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) as { error: Record<string, unknown> } }
}

describe('requests Node refuses before Fastify sees them', () => {
  test('a 100 KB URL answers 431 request_header_fields_too_large in our format with a request id', async ({ ctx, baseUrl }) => {
    const response = await fetch(`${baseUrl}/api/v1/products?search=${'a'.repeat(100_000)}`)
    expect(response.status).toBe(431)
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8')
    const requestId = response.headers.get('x-request-id')
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/)
    expect(await response.json()).toEqual({
      error: {
        code: 'request_header_fields_too_large',
        message: 'The request line and headers are larger than the limit of 16 KiB (a URL that long: send fewer or shorter query parameters)',
        request_id: requestId,
      },
    })

    // The contract says so: every operation may answer it, and the Error schema names every code.
    const document = await ctx.expectStatus<{ paths: Record<string, Record<string, { responses: Record<string, unknown> }>>; components: { schemas: { Error: { properties: { error: { properties: { code: { description: string } } } } } } } }>(200, { method: 'GET', url: '/api/v1/openapi.json' })
    const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ key: `${method} ${path}`, operation })))
    expect(operations.filter(({ operation }) => !operation.responses['431']).map(({ key }) => key)).toEqual([])
    const codes = document.components.schemas.Error.properties.error.properties.code.description
    for (const code of ['request_header_fields_too_large (431)', 'request_timeout (408)', 'expectation_failed (417)', 'unsupported_media_type (415)']) expect(codes).toContain(code)
  })

  test('a request that is not HTTP answers 400 validation_error in our format', async ({ baseUrl }) => {
    for (const request of ['NOT HTTP AT ALL\r\n\r\n', 'GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n']) {
      const answer = parseAnswer(await exchange(baseUrl, request))
      expect(answer.status).toBe(400)
      expect(answer.body.error).toEqual({ code: 'validation_error', message: 'The request is not valid HTTP', request_id: answer.headers['x-request-id'] })
      expect(answer.headers.connection).toBe('close')
    }
  })

  test('an HTTP/1.1 request without Host, and an Expect other than 100-continue, answer in our format', async ({ baseUrl }) => {
    const hostless = parseAnswer(await exchange(baseUrl, 'GET /health HTTP/1.1\r\nConnection: close\r\n\r\n'))
    expect(hostless.status).toBe(400)
    expect(hostless.body.error).toEqual({ code: 'validation_error', message: 'An HTTP/1.1 request needs a Host header', request_id: hostless.headers['x-request-id'] })
    const expecting = parseAnswer(await exchange(baseUrl, 'GET /health HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n'))
    expect(expecting.status).toBe(417)
    expect(expecting.body.error).toEqual({
      code: 'expectation_failed',
      message: "The expectation '200-ok' is not supported; only 100-continue is",
      request_id: expecting.headers['x-request-id'],
    })
    // HTTP/1.0 needs no Host.
    expect(parseAnswer(await exchange(baseUrl, 'GET /health HTTP/1.0\r\n\r\n')).status).toBe(200)
  })
})
