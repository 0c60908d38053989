/** API keys as credentials: scopes decide access, bad, revoked or expired keys are 401, rotation has a grace period, each key has its own rate limit. */
import { describe, expect } from 'vitest'
import { apiKeyLookupPrefix, generateApiKey, hashApiKey, type OrderList, type Product } from '@commerce/domain'
import { rotateApiKey } from '@commerce/db'
import { createTestContext, test, type TestContext } from './helpers.js'
import { insertOrder } from './order-fixtures.js'

const PRODUCTS = '/api/v1/products'
const ORDERS = '/api/v1/orders'
const ADDRESS = { line1: '1 Rue de Rivoli', city: 'Paris', postal_code: '75001', country: 'FR' }

const makeKey = (ctx: TestContext, scopes: string[], rateLimitPerMinute: number | null = null) => ctx.createApiKey(scopes, rateLimitPerMinute)

const newProduct = (title: string) => ({ method: 'POST' as const, url: PRODUCTS, payload: { title, price: 12.5, currency: 'EUR' } })

describe('scopes', () => {
  test('a key with products:write creates a product; one with products:read gets 403 forbidden', async ({ ctx }) => {
    const writer = await makeKey(ctx, ['products:write'])
    const created = await ctx.expectStatus<Product>(201, { ...newProduct('Keyed Kettle'), token: writer.key })
    expect(created).toMatchObject({ title: 'Keyed Kettle', price: 12.5 })

    const reader = await makeKey(ctx, ['products:read'])
    const before = await ctx.countRows('products')
    const refused = await ctx.expectError(403, 'forbidden', { ...newProduct('Refused'), token: reader.key })
    expect(refused.message).toBe('You do not have permission to do this')
    expect(await ctx.countRows('products')).toBe(before)
  })

  test('bare read lists every order but may not create one', async ({ ctx }) => {
    const customer = await ctx.signIn('customer')
    const { order } = await insertOrder(ctx, { customerId: customer.customerId })
    const reader = await makeKey(ctx, ['read'])
    const product = await ctx.expectStatus<Product>(201, { ...newProduct('Orderable'), token: (await makeKey(ctx, ['*'])).key })
    const list = await ctx.expectStatus<OrderList>(200, { method: 'GET', url: `${ORDERS}?per_page=100`, token: reader.key })
    expect(list.orders.map((listed) => listed.id)).toContain(order.id)
    await ctx.expectError(403, 'forbidden', {
      method: 'POST',
      url: ORDERS,
      token: reader.key,
      payload: {
        email: 'x@example.com',
        currency: 'EUR',
        shipping_address: ADDRESS,
        items: [{ product_id: product.id, quantity: 1 }],
      },
    })
  })

  test('a key without an orders scope gets 403 on the orders (it is nobody’s customer)', async ({ ctx }) => {
    const customer = await ctx.signIn('customer')
    const { order } = await insertOrder(ctx, { customerId: customer.customerId })
    const other = await makeKey(ctx, ['products:read'])
    await ctx.expectError(403, 'forbidden', { method: 'GET', url: ORDERS, token: other.key })
    await ctx.expectError(403, 'forbidden', { method: 'GET', url: `${ORDERS}/${order.id}`, token: other.key })
  })

  test('* does admin things: creates a tax rate and lists webhooks', async ({ ctx }) => {
    const all = await makeKey(ctx, ['*'])
    const rate = await ctx.expectStatus<{ id: string }>(201, {
      method: 'POST',
      url: '/api/v1/tax-rates',
      token: all.key,
      payload: { country: 'DE', rate: 19, name: 'MwSt' },
    })
    expect(rate.id).toEqual(expect.any(String))
    await ctx.expectStatus(200, { method: 'GET', url: '/api/v1/webhooks', token: all.key })
  })

  test('/auth/me answers 403 to a key: it is not a user', async ({ ctx }) => {
    const all = await makeKey(ctx, ['*'])
    const error = await ctx.expectError(403, 'forbidden', { method: 'GET', url: '/api/v1/auth/me', token: all.key })
    expect(error.message).toBe('An API key has no user account; /auth/me needs a user token')
  })
})

describe('refused keys', () => {
  const refused = 'The API key is malformed, unknown or revoked'

  test('a revoked key is 401 on its next request', async ({ ctx }) => {
    const { key, id } = await makeKey(ctx, ['products:write'])
    await ctx.expectStatus(201, { ...newProduct('Before revoking'), token: key })
    await ctx.handle.sql`update api_keys set revoked_at = now() where id = ${id}`
    const error = await ctx.expectError(401, 'unauthorized', { ...newProduct('After revoking'), token: key })
    expect(error.message).toBe(refused)
  })

  test('an expired key is 401 saying when it expired; a key expiring later works until then', async ({ ctx }) => {
    const { key, id } = await makeKey(ctx, ['products:write'])
    const later = new Date(Date.now() + 3_600_000)
    await ctx.handle.sql`update api_keys set expires_at = ${later.toISOString()}::timestamptz where id = ${id}`
    await ctx.expectStatus(201, { ...newProduct('Before expiry'), token: key })
    const past = new Date(Date.now() - 1000)
    await ctx.handle.sql`update api_keys set expires_at = ${past.toISOString()}::timestamptz where id = ${id}`
    const error = await ctx.expectError(401, 'unauthorized', { ...newProduct('After expiry'), token: key })
    expect(error.message).toBe(`The API key expired at ${past.toISOString()}`)
  })

  test('a rotated key and its replacement both work during the grace period; then only the replacement', async ({ ctx }) => {
    const { key: oldKey, id } = await makeKey(ctx, ['products:write'], 7)
    const newKey = generateApiKey()
    const graceEnd = new Date(Date.now() + 3_600_000)
    const rotated = await rotateApiKey(ctx.handle.db, id, { prefix: apiKeyLookupPrefix(newKey), keyHash: hashApiKey(newKey) }, graceEnd, () => null)
    expect(rotated).toMatchObject({ usable: true, old: { expiresAt: graceEnd }, created: { scopes: ['products:write'], rateLimitPerMinute: 7, expiresAt: null } })
    await ctx.expectStatus(201, { ...newProduct('Old key in grace'), token: oldKey })
    const fresh = await ctx.request({ ...newProduct('New key'), token: newKey })
    expect(fresh.statusCode).toBe(201)
    expect(fresh.headers['x-ratelimit-limit']).toBe('7')

    // The grace period over: the old key expired, the new one goes on; an expired key cannot be rotated.
    await ctx.handle.sql`update api_keys set expires_at = now() - interval '1 second' where id = ${id}`
    expect((await ctx.expectError(401, 'unauthorized', { ...newProduct('Old key after grace'), token: oldKey })).message).toMatch(/^The API key expired at /)
    await ctx.expectStatus(201, { ...newProduct('New key after grace'), token: newKey })
    const again = await rotateApiKey(ctx.handle.db, id, { prefix: apiKeyLookupPrefix(generateApiKey()), keyHash: 'x' }, graceEnd, () => null)
    expect(again).toMatchObject({ usable: false, created: undefined })
  })

  test('a malformed key, a bad checksum, an unknown key and a right prefix with a wrong rest are 401, even on public routes', async ({ ctx }) => {
    const { key } = await makeKey(ctx, ['*'])
    const lastChar = key.at(-1) === 'a' ? 'b' : 'a'
    const samePrefixOtherKey = (() => {
      // Another well-formed key that shares the stored key's lookup prefix.
      for (;;) {
        const candidate = generateApiKey()
        const forged = `ck_${key.slice(3, 11)}${candidate.slice(11)}`
        if (forged !== key) return forged
      }
    })()
    for (const token of [
      'ck_tooshort',
      `${key.slice(0, -1)}${lastChar}`,
      generateApiKey(),
      samePrefixOtherKey,
    ]) {
      const write = await ctx.expectError(401, 'unauthorized', { ...newProduct('Forged'), token })
      expect(write.message, token).toBe(refused)
      await ctx.expectError(401, 'unauthorized', { method: 'GET', url: PRODUCTS, token })
    }
  })
})

describe('per-key rate limit', () => {
  test('a key limited to 3 gets 429 on its 4th request; another key and the IP are unaffected', async ({ ctx }) => {
    const limited = await makeKey(ctx, ['products:read'], 3)
    const other = await makeKey(ctx, ['products:read'])
    for (let i = 1; i <= 3; i++) {
      const response = await ctx.request({ method: 'GET', url: PRODUCTS, token: limited.key })
      expect(response.statusCode).toBe(200)
      expect(response.headers['x-ratelimit-limit']).toBe('3')
      expect(response.headers['x-ratelimit-remaining']).toBe(String(3 - i))
      // The same figures as the IETF fields (draft-ietf-httpapi-ratelimit-headers-10).
      const window = ctx.config.rateLimitWindowMs / 1000
      expect(response.headers['ratelimit-policy']).toBe(`"api_key";q=3;w=${window}`)
      expect(response.headers.ratelimit).toBe(`"api_key";r=${3 - i};t=${response.headers['x-ratelimit-reset']}`)
      expect(Number(response.headers['x-ratelimit-reset'])).toBeGreaterThan(0)
      expect(Number(response.headers['x-ratelimit-reset'])).toBeLessThanOrEqual(window)
    }
    const over = await ctx.request({ method: 'GET', url: PRODUCTS, token: limited.key })
    expect(over.statusCode).toBe(429)
    expect(over.json().error.code).toBe('rate_limited')
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0)
    expect(over.headers.ratelimit).toMatch(/^"api_key";r=0;t=\d+$/)

    const fine = await ctx.request({ method: 'GET', url: PRODUCTS, token: other.key })
    expect(fine.statusCode).toBe(200)
    expect(fine.headers['x-ratelimit-limit']).toBe(String(ctx.config.rateLimitApiKeyMax))
    expect((await ctx.request({ method: 'GET', url: PRODUCTS })).statusCode).toBe(200)
  })

  test('a forged key counts against the IP at the IP limit, not the key limit', async () => {
    const small = await createTestContext({ rateLimitMax: 2, rateLimitApiKeyMax: 50 })
    try {
      const forged = generateApiKey()
      const first = await small.request({ method: 'GET', url: PRODUCTS, token: forged })
      expect(first.statusCode).toBe(401)
      expect(first.headers['x-ratelimit-limit']).toBe('2')
      expect(first.headers['ratelimit-policy']).toBe(`"ip";q=2;w=${small.config.rateLimitWindowMs / 1000}`)
      expect(first.headers.ratelimit).toMatch(/^"ip";r=1;t=\d+$/)
      await small.request({ method: 'GET', url: PRODUCTS, token: forged })
      expect((await small.request({ method: 'GET', url: PRODUCTS })).statusCode).toBe(429)
    } finally {
      await small.close()
    }
  })
})

describe('last_used_at', () => {
  test('is null until the key is used, then set soon after its first request', async ({ ctx }) => {
    const { key, id } = await makeKey(ctx, ['products:read'])
    const lastUsed = async () => {
      const [row] = await ctx.handle.sql<{ at: string | null }[]>`select last_used_at as at from api_keys where id = ${id}`
      return row!.at === null ? null : new Date(row!.at)
    }
    expect(await lastUsed()).toBeNull()
    const before = Date.now()
    await ctx.expectStatus(200, { method: 'GET', url: PRODUCTS, token: key })
    await expect.poll(lastUsed, { timeout: 2000 }).not.toBeNull()
    expect((await lastUsed())!.getTime()).toBeGreaterThanOrEqual(before - 1000)
  })
})
