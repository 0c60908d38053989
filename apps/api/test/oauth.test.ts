/** OAuth 2.0 client credentials: POST /oauth/token and its access tokens as credentials. */
import { describe, expect } from 'vitest'
import { generateClientId, generateClientSecret, hashClientSecret } from '@commerce/domain'
import { createOAuthClient } from '@commerce/db'
import { test, type TestContext } from './helpers.js'

const TOKEN = '/api/v1/oauth/token'
const PRODUCTS = '/api/v1/products'
const FORM = { 'content-type': 'application/x-www-form-urlencoded' }
const newProduct = (title: string) => ({ method: 'POST' as const, url: PRODUCTS, payload: { title, price: 3, currency: 'EUR' } })

/** Stores a client as `commerce oauth-clients create` does. */
async function makeClient(ctx: TestContext, scopes: string[]) {
  const clientId = generateClientId()
  const secret = generateClientSecret()
  const row = await createOAuthClient(ctx.handle.db, { name: 'test', clientId, secretHash: hashClientSecret(secret), scopes })
  return { clientId, secret, id: row!.id }
}

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`

function formToken(ctx: TestContext, fields: Record<string, string>, headers: Record<string, string> = {}) {
  return ctx.request({ method: 'POST', url: TOKEN, headers: { ...FORM, ...headers }, payload: new URLSearchParams(fields).toString() })
}

async function tokenOf(ctx: TestContext, client: { clientId: string; secret: string }, scope?: string): Promise<string> {
  const response = await formToken(ctx, {
    grant_type: 'client_credentials',
    client_id: client.clientId,
    client_secret: client.secret,
    ...(scope === undefined ? {} : { scope }),
  })
  expect(response.statusCode, response.body).toBe(200)
  return (response.json() as { access_token: string }).access_token
}

describe('POST /oauth/token', () => {
  test('a form body issues a token with every scope of the client, not cached', async ({ ctx }) => {
    const client = await makeClient(ctx, ['products:write', 'orders:read'])
    const response = await formToken(ctx, { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret })
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'products:write orders:read',
    })
    expect(response.headers['cache-control']).toBe('no-store')
    expect(response.headers.pragma).toBe('no-cache')
    const [row] = await ctx.handle.sql<{ used: boolean }[]>`select last_used_at is not null as used from oauth_clients where id = ${client.id}`
    expect(row!.used).toBe(true)
  })

  test('a JSON body and HTTP Basic issue tokens too', async ({ ctx }) => {
    const client = await makeClient(ctx, ['products:read'])
    const json = await ctx.request({
      method: 'POST',
      url: TOKEN,
      payload: { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret },
    })
    expect(json.statusCode, json.body).toBe(200)
    const viaBasic = await formToken(ctx, { grant_type: 'client_credentials' }, { authorization: basic(client.clientId, client.secret) })
    expect(viaBasic.statusCode, viaBasic.body).toBe(200)
    expect(viaBasic.json().scope).toBe('products:read')
  })

  test('scope narrows the token; a scope beyond the client’s or unknown is invalid_scope', async ({ ctx }) => {
    const client = await makeClient(ctx, ['products:write', 'orders:write'])
    const narrowed = await formToken(ctx, { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret, scope: 'products:read' })
    expect(narrowed.json().scope).toBe('products:read')
    await ctx.expectStatus(403, { ...newProduct('Narrowed'), token: narrowed.json().access_token })

    for (const scope of ['products:read customers:read', '*', 'widgets:read']) {
      const response = await formToken(ctx, { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret, scope })
      expect(response.statusCode, scope).toBe(400)
      expect(response.json()).toEqual({ error: 'invalid_scope', error_description: expect.any(String) })
    }
  })

  test('wrong secret, unknown client and revoked client are 401 invalid_client, alike', async ({ ctx }) => {
    const client = await makeClient(ctx, ['products:read'])
    const revoked = await makeClient(ctx, ['products:read'])
    await ctx.handle.sql`update oauth_clients set revoked_at = now() where id = ${revoked.id}`
    const attempts = [
      { clientId: client.clientId, secret: generateClientSecret() },
      { clientId: generateClientId(), secret: client.secret },
      { clientId: 'nope', secret: 'nope' },
      revoked,
    ]
    const descriptions = new Set<string>()
    for (const attempt of attempts) {
      const inBody = await formToken(ctx, { grant_type: 'client_credentials', client_id: attempt.clientId, client_secret: attempt.secret })
      expect(inBody.statusCode).toBe(401)
      expect(inBody.headers['www-authenticate']).toBeUndefined()
      expect(Object.keys(inBody.json())).toEqual(['error', 'error_description'])
      expect(inBody.json().error).toBe('invalid_client')
      descriptions.add(inBody.json().error_description)

      const viaBasic = await formToken(ctx, { grant_type: 'client_credentials' }, { authorization: basic(attempt.clientId, attempt.secret) })
      expect(viaBasic.statusCode).toBe(401)
      expect(viaBasic.headers['www-authenticate']).toBe('Basic realm="commerce"')
      expect(viaBasic.json().error).toBe('invalid_client')
      descriptions.add(viaBasic.json().error_description)
    }
    expect(descriptions.size).toBe(1)
  })

  test('request errors: missing grant_type, other grants, two ways of authenticating, no authentication', async ({ ctx }) => {
    const client = await makeClient(ctx, ['products:read'])
    const credentials = { client_id: client.clientId, client_secret: client.secret }
    const cases: [Record<string, string>, Record<string, string>, number, string][] = [
      [credentials, {}, 400, 'invalid_request'],
      [{ ...credentials, grant_type: 'password' }, {}, 400, 'unsupported_grant_type'],
      [{ ...credentials, grant_type: 'client_credentials' }, { authorization: basic(client.clientId, client.secret) }, 400, 'invalid_request'],
      [{ grant_type: 'client_credentials', client_id: client.clientId }, {}, 400, 'invalid_request'],
      [{ grant_type: 'client_credentials' }, {}, 401, 'invalid_client'],
    ]
    for (const [fields, headers, status, error] of cases) {
      const response = await formToken(ctx, fields, headers)
      expect(response.statusCode, JSON.stringify(fields)).toBe(status)
      expect(response.json()).toEqual({ error, error_description: expect.any(String) })
    }
    const repeated = await ctx.request({
      method: 'POST',
      url: TOKEN,
      headers: FORM,
      payload: `grant_type=client_credentials&grant_type=client_credentials&client_id=${client.clientId}&client_secret=${client.secret}`,
    })
    expect(repeated.statusCode).toBe(400)
    expect(repeated.json().error).toBe('invalid_request')
  })

  test('a Bearer header is not read on this route: it is an unsupported client authentication', async ({ ctx }) => {
    const { token } = await ctx.signIn('admin')
    const response = await formToken(ctx, { grant_type: 'client_credentials' }, { authorization: `Bearer ${token}` })
    expect(response.statusCode).toBe(401)
    expect(response.json().error).toBe('invalid_client')
  })

  test('is in the OpenAPI document', async ({ ctx }) => {
    const document = (await ctx.request({ method: 'GET', url: '/api/v1/openapi.json' })).json()
    const operation = document.paths[TOKEN].post
    expect(operation.tags).toEqual(['auth'])
    expect(Object.keys(operation.requestBody.content)).toContain('application/x-www-form-urlencoded')
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '429']))
  })
})

describe('client access tokens', () => {
  test('work where their scope allows and get 403 elsewhere', async ({ ctx }) => {
    const token = await tokenOf(ctx, await makeClient(ctx, ['products:write']))
    await ctx.expectStatus(201, { ...newProduct('Client Kettle'), token })
    const taxRate = { country: 'DE', rate: 19, name: 'MwSt' }
    await ctx.expectError(403, 'forbidden', { method: 'POST', url: '/api/v1/tax-rates', payload: taxRate, token })
    await ctx.expectError(403, 'forbidden', { method: 'GET', url: '/api/v1/webhooks', token })
  })

  test('of a revoked client stay valid until they expire (at most an hour); it gets no new one', async ({ ctx }) => {
    const client = await makeClient(ctx, ['products:write'])
    const token = await tokenOf(ctx, client)
    await ctx.handle.sql`update oauth_clients set revoked_at = now() where id = ${client.id}`
    await ctx.expectStatus(201, { ...newProduct('Still valid'), token })
    const again = await formToken(ctx, { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret })
    expect(again.statusCode).toBe(401)
  })

  test('expire: an expired client token is 401', async ({ ctx }) => {
    const client = await makeClient(ctx, ['products:read'])
    const expired = ctx.app.issueClientToken({ id: client.id, scopes: ['products:read'] }, -10)
    await ctx.expectError(401, 'unauthorized', { method: 'GET', url: PRODUCTS, token: expired })
  })

  test('are not users: /auth/me is 403, and a role claim grants nothing', async ({ ctx }) => {
    const client = await makeClient(ctx, ['products:read'])
    const token = await tokenOf(ctx, client)
    const me = await ctx.expectError(403, 'forbidden', { method: 'GET', url: '/api/v1/auth/me', token })
    expect(me.message).toBe('An OAuth client has no user account; /auth/me needs a user token')

    // Signed with the app's secret but carrying an admin role: `typ: client` still decides.
    const forged = ctx.app.jwt.sign({ sub: client.id, typ: 'client', scope: 'products:read', role: 'admin' } as never)
    await ctx.expectError(403, 'forbidden', { ...newProduct('Forged'), token: forged })
    await ctx.expectError(403, 'forbidden', { method: 'GET', url: '/api/v1/auth/me', token: forged })
    // A user-typed token without a valid role, and a client-typed one without scope, are refused.
    for (const claims of [{ sub: client.id, typ: 'user', scope: '*' }, { sub: client.id, typ: 'client', role: 'admin' }]) {
      await ctx.expectError(401, 'unauthorized', { ...newProduct('Forged'), token: ctx.app.jwt.sign(claims as never) })
    }
  })

  test('a user token is not a client token: it keeps its role’s rights only', async ({ ctx }) => {
    const { token } = await ctx.signIn('customer')
    await ctx.expectError(403, 'forbidden', { ...newProduct('Customer'), token })
  })

  test('are rate-limited per client at RATE_LIMIT_API_KEY_MAX', async ({ ctx }) => {
    const token = await tokenOf(ctx, await makeClient(ctx, ['products:read']))
    const response = await ctx.request({ method: 'GET', url: PRODUCTS, token })
    expect(response.headers['x-ratelimit-limit']).toBe(String(ctx.config.rateLimitApiKeyMax))
  })
})
