import { createHmac, randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect } from 'vitest'
import { createTestContext, test, type TestContext } from './helpers.js'

const base64url = (value: object | string) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')

/** Hand-made JWTs, to present the API with tokens its own signer would never issue. */
function forgeToken(header: object, claims: object, secret: string | null): string {
  const unsigned = `${base64url(header)}.${base64url(claims)}`
  const signature = secret === null ? '' : createHmac('sha256', secret).update(unsigned).digest('base64url')
  return `${unsigned}.${signature}`
}

function decodeClaims(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString())
}

async function register(ctx: TestContext, email: string, password = 'long enough password') {
  return ctx.request({ method: 'POST', url: '/api/v1/auth/register', payload: { email, password, first_name: 'Ada' } })
}

describe('POST /auth/register', () => {
  test('creates a customer account, answers 201 with user, customer and a bearer token', async ({ ctx }) => {
    const response = await register(ctx, 'ada@example.com')
    expect(response.statusCode).toBe(201)
    const body = response.json()
    expect(body.user).toMatchObject({ email: 'ada@example.com', role: 'customer' })
    expect(body.customer).toMatchObject({ email: 'ada@example.com', first_name: 'Ada', user_id: body.user.id })
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 })
    expect(body).not.toHaveProperty('user.password_hash')
    expect(JSON.stringify(body)).not.toContain('long enough password')
  })

  test('stores a scrypt hash, never the password, and writes customer.created and account.activated in that order', async ({ ctx }) => {
    const body = (await register(ctx, 'grace@example.com', 'another secret 123')).json()
    const [user] = await ctx.handle.sql`select password_hash from users where id = ${body.user.id}`
    expect(user!.password_hash).toMatch(/^scrypt\$1024\$8\$1\$/)
    expect(user!.password_hash).not.toContain('another secret 123')
    const events = await ctx.handle.sql`select kind, data, customer_id, resource_id from events where customer_id = ${body.customer.id} order by id`
    expect(events).toHaveLength(2)
    expect(events[0]).toMatchObject({ kind: 'customer.created', data: { id: body.customer.id, email: 'grace@example.com' } })
    expect(events[1]).toEqual({
      kind: 'account.activated',
      data: { user_id: body.user.id, customer_id: body.customer.id, email: 'grace@example.com', first_name: 'Ada' },
      customer_id: body.customer.id,
      resource_id: body.user.id,
    })
    expect(body.user.email_verified_at).toBeNull()
  })

  test('refuses an email already registered, ignoring case, with 409 conflict and no new rows', async ({ ctx }) => {
    await register(ctx, 'linus@example.com')
    const [before] = await ctx.handle.sql`select count(*)::int as n from events`
    const response = await register(ctx, 'LINUS@Example.com')
    expect(response.statusCode).toBe(409)
    expect(response.json().error.code).toBe('conflict')
    const [users] = await ctx.handle.sql`select count(*)::int as n from users where lower(email) = 'linus@example.com'`
    const [after] = await ctx.handle.sql`select count(*)::int as n from events`
    expect(users!.n).toBe(1)
    expect(after!.n).toBe(before!.n)
  })

  test('answers 400 validation_error naming the field for a missing email, a short password, a bad email', async ({ ctx }) => {
    const missing = await ctx.request({ method: 'POST', url: '/api/v1/auth/register', payload: { password: 'long enough' } })
    expect(missing.statusCode).toBe(400)
    expect(missing.json().error).toMatchObject({ code: 'validation_error', message: "Field 'email' is required" })

    const short = await register(ctx, 'short@example.com', 'short')
    expect(short.statusCode).toBe(400)
    expect(short.json().error.details).toContainEqual(expect.objectContaining({ field: 'password' }))

    const bad = await register(ctx, 'not-an-email')
    expect(bad.statusCode).toBe(400)
    expect(bad.json().error.details).toContainEqual(expect.objectContaining({ field: 'email' }))
  })

  test('refuses a role sent in the body: accounts made here are always customers', async ({ ctx }) => {
    const response = await ctx.request({
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { email: 'mallory@example.com', password: 'long enough password', role: 'admin' },
    })
    expect(response.statusCode).toBe(400)
    expect(response.json().error.details).toContainEqual({ field: 'role', message: "Field 'role' is not allowed" })
  })
})

describe('POST /auth/login', () => {
  test('answers a token whose claims are sub, role, iat, exp and jti, valid for JWT_EXPIRES_IN', async ({ ctx }) => {
    const registered = (await register(ctx, 'barbara@example.com', 'liskov substitution')).json()
    const response = await ctx.request({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { email: 'Barbara@example.com', password: 'liskov substitution' },
    })
    expect(response.statusCode).toBe(200)
    const body = response.json()
    expect(body.user.id).toBe(registered.user.id)
    const claims = decodeClaims(body.token)
    expect(claims).toMatchObject({ sub: registered.user.id, role: 'customer' })
    expect(typeof claims.jti).toBe('string')
    expect(Number(claims.exp) - Number(claims.iat)).toBe(3600)
    const header = JSON.parse(Buffer.from(body.token.split('.')[0], 'base64url').toString())
    expect(header.alg).toBe('HS256')
  })

  test('answers the same 401 for a wrong password and for an unknown email', async ({ ctx }) => {
    await register(ctx, 'ken@example.com', 'thompson unix')
    const wrong = await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'ken@example.com', password: 'nope nope' } })
    const unknown = await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'nobody@example.com', password: 'nope nope' } })
    expect(wrong.statusCode).toBe(401)
    expect(unknown.statusCode).toBe(401)
    expect(wrong.json().error.code).toBe('unauthorized')
    expect(wrong.json().error.message).toBe(unknown.json().error.message)
  })
})

describe('sign-in throttling (failed attempts per account and client address)', () => {
  const login = (ctx: TestContext, email: string, password: string, remoteAddress = '198.51.100.1') =>
    ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password }, remoteAddress })

  test('twelve successful sign-ins in a row never answer 429', async ({ ctx }) => {
    await register(ctx, 'script@example.com', 'runs on every deploy')
    for (let run = 0; run < 12; run++) {
      const answer = await login(ctx, 'script@example.com', 'runs on every deploy')
      expect(answer.statusCode, `sign-in ${run + 1}: ${answer.body}`).toBe(200)
    }
  })

  test('after fifteen wrong passwords from one address the owner signs in from another; the attacker’s address is refused', async ({ ctx }) => {
    await register(ctx, 'hopper@example.com', 'cobol compiler')
    const attacker = '203.0.113.66'
    const statuses: number[] = []
    for (let guess = 0; guess < 15; guess++) {
      // The same account in any spelling of its address.
      statuses.push((await login(ctx, guess % 2 ? 'HOPPER@example.com' : 'hopper@example.com', `guess ${guess}!`, attacker)).statusCode)
    }
    expect(statuses).toEqual([...Array<number>(ctx.config.loginMaxFailures).fill(401), ...Array<number>(15 - ctx.config.loginMaxFailures).fill(429)])

    const owner = await login(ctx, 'hopper@example.com', 'cobol compiler', '192.0.2.10')
    expect(owner.statusCode, owner.body).toBe(200)

    // Refused before the password is checked: the right one gets the same 429, so the lock tells nothing.
    const refused = await login(ctx, 'hopper@example.com', 'cobol compiler', attacker)
    expect(refused.statusCode).toBe(429)
    expect(refused.json().error).toMatchObject({ code: 'rate_limited', message: 'Too many failed sign-ins to this account from this address; retry later' })
    const retryAfter = Number(refused.headers['retry-after'])
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(ctx.config.loginFailureWindowMs / 1000)
    // Other accounts from that address are not affected.
    await register(ctx, 'alan@example.com', 'turing machine')
    expect((await login(ctx, 'alan@example.com', 'turing machine', attacker)).statusCode).toBe(200)
  })

  test('a successful sign-in clears its address’s failures', async ({ ctx }) => {
    await register(ctx, 'edsger@example.com', 'goto considered harmful')
    const max = ctx.config.loginMaxFailures
    for (let round = 0; round < 2; round++) {
      for (let guess = 0; guess < max - 1; guess++) expect((await login(ctx, 'edsger@example.com', `wrong ${guess}`)).statusCode).toBe(401)
      expect((await login(ctx, 'edsger@example.com', 'goto considered harmful')).statusCode).toBe(200)
    }
    // Unknown accounts are counted alike, so the throttle tells nothing about which emails exist.
    const unknown: number[] = []
    for (let guess = 0; guess <= max; guess++) unknown.push((await login(ctx, 'nobody-here@example.com', `wrong ${guess}`)).statusCode)
    expect(unknown.at(-2)).toBe(401)
    expect(unknown.at(-1)).toBe(429)
  })
})

describe('sign-in throttling across addresses (LOGIN_SLOWDOWN_AFTER)', () => {
  let slowed: TestContext
  beforeAll(async () => {
    slowed = await createTestContext({ loginMaxFailures: 2, loginSlowdownAfter: 3, loginSlowdownDelayMs: 400 })
  })
  afterAll(() => slowed.close())

  test('an account guessed at from many addresses is slowed for everyone, never refused to its owner', async () => {
    await slowed.request({ method: 'POST', url: '/api/v1/auth/register', payload: { email: 'owner@example.com', password: 'the real password' } })
    const login = (password: string, remoteAddress: string) =>
      slowed.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'owner@example.com', password }, remoteAddress })
    for (const address of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) expect((await login('a guess', address)).statusCode).toBe(401)

    const started = performance.now()
    const owner = await login('the real password', '192.0.2.10')
    // The delay is what this limit does (a functional bound, not a speed figure).
    expect(performance.now() - started).toBeGreaterThanOrEqual(390)
    expect(owner.statusCode, owner.body).toBe(200)
  })
})

describe('GET /auth/me and bearer tokens', () => {
  test('answers the signed-in user and customer', async ({ ctx }) => {
    const body = (await register(ctx, 'margaret@example.com')).json()
    const response = await ctx.request({ method: 'GET', url: '/api/v1/auth/me', token: body.token })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ user: { id: body.user.id }, customer: { id: body.customer.id } })
  })

  test('an admin made with the CLI path has no customer record and role admin', async ({ ctx }) => {
    const admin = await ctx.signIn('admin')
    const response = await ctx.request({ method: 'GET', url: '/api/v1/auth/me', token: admin.token })
    expect(response.json()).toMatchObject({ user: { role: 'admin' }, customer: null })
  })

  test('answers 401 without a token', async ({ ctx }) => {
    const response = await ctx.request({ method: 'GET', url: '/api/v1/auth/me' })
    expect(response.statusCode).toBe(401)
    expect(response.json().error.code).toBe('unauthorized')
  })

  const now = () => Math.floor(Date.now() / 1000)
  const claims = (userId: string, extra: object = {}) => ({
    sub: userId,
    role: 'admin',
    typ: 'user',
    iss: 'commerce',
    aud: 'commerce-api',
    iat: now(),
    exp: now() + 600,
    jti: 'x',
    ...extra,
  })

  test.for([
    ['alg none', (id: string) => forgeToken({ alg: 'none', typ: 'JWT' }, claims(id), null)],
    ['a wrong secret', (id: string) => forgeToken({ alg: 'HS256', typ: 'JWT' }, claims(id), 'another-secret-another-secret-0000')],
    ['HS512 with the right secret', (id: string, secret: string) => {
      const unsigned = `${base64url({ alg: 'HS512', typ: 'JWT' })}.${base64url(claims(id))}`
      return `${unsigned}.${createHmac('sha512', secret).update(unsigned).digest('base64url')}`
    }],
    ['an expired token', (id: string, secret: string) => forgeToken({ alg: 'HS256' }, claims(id, { iat: now() - 7200, exp: now() - 3600 }), secret)],
    ['a not-yet-valid token', (id: string, secret: string) => forgeToken({ alg: 'HS256' }, claims(id, { nbf: now() + 3600 }), secret)],
    ['another issuer', (id: string, secret: string) => forgeToken({ alg: 'HS256' }, claims(id, { iss: 'elsewhere' }), secret)],
    ['another audience', (id: string, secret: string) => forgeToken({ alg: 'HS256' }, claims(id, { aud: 'elsewhere' }), secret)],
    ['a token that is not a user token', (id: string, secret: string) => forgeToken({ alg: 'HS256' }, claims(id, { typ: 'client' }), secret)],
    ['garbage', () => 'not.a.token'],
  ] as const)('answers 401 for %s, even on admin routes', async ([_name, makeToken], { ctx }) => {
    const admin = await ctx.signIn('admin')
    const token = makeToken(admin.userId, ctx.config.jwtSecret)
    const me = await ctx.request({ method: 'GET', url: '/api/v1/auth/me', token })
    expect(me.statusCode).toBe(401)
    const write = await ctx.request({ method: 'POST', url: '/api/v1/products', token, payload: { title: 'Forged' } })
    expect(write.statusCode).toBe(401)
    expect(write.json().error.code).toBe('unauthorized')
  })

  test('a correctly signed admin token is accepted (the forging helper is sound)', async ({ ctx }) => {
    const admin = await ctx.signIn('admin')
    const token = forgeToken({ alg: 'HS256', typ: 'JWT' }, claims(admin.userId), ctx.config.jwtSecret)
    const response = await ctx.request({ method: 'GET', url: '/api/v1/auth/me', token })
    expect(response.statusCode).toBe(200)
  })

  test('answers 401 for an Authorization header that is not Bearer', async ({ ctx }) => {
    const response = await ctx.request({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: 'Basic dXNlcjpwYXNz' } })
    expect(response.statusCode).toBe(401)
  })

  test('answers 403 forbidden to a customer on an admin route', async ({ ctx }) => {
    const customer = await ctx.signIn('customer')
    const response = await ctx.request({ method: 'POST', url: '/api/v1/products', token: customer.token, payload: { title: 'Nope' } })
    expect(response.statusCode).toBe(403)
    expect(response.json().error.code).toBe('forbidden')
  })
})

describe('the signed-in account’s own changes', () => {
  test('an API key is answered 403 on /auth/email-change and /auth/password-change (it has no account); no credential is 401', async ({ ctx }) => {
    const { key } = await ctx.createApiKey(['*'])
    const calls = [
      { url: '/api/v1/auth/email-change', payload: { email: 'new@example.com', password: 'long enough password' } },
      { url: '/api/v1/auth/password-change', payload: { current_password: 'long enough password', new_password: 'another long password' } },
    ]
    for (const call of calls) {
      const refused = await ctx.expectError(403, 'forbidden', { method: 'POST', ...call, token: key })
      expect(refused.message).toBe(`An API key has no user account; ${call.url.slice('/api/v1'.length)} needs a user token`)
      await ctx.expectError(401, 'unauthorized', { method: 'POST', ...call })
    }
  })

  test('a new password shorter than 8 characters is 400 on new_password, and the password stays', async ({ ctx }) => {
    const body = (await register(ctx, `short-${randomUUID()}@example.com`)).json()
    const error = await ctx.expectError(400, 'validation_error', {
      method: 'POST',
      url: '/api/v1/auth/password-change',
      payload: { current_password: 'long enough password', new_password: 'short' },
      token: body.token,
    })
    expect(error.details?.[0]?.field).toBe('new_password')
    await ctx.expectStatus(200, { method: 'POST', url: '/api/v1/auth/login', payload: { email: body.user.email, password: 'long enough password' } })
  })
})

describe('REQUIRE_EMAIL_VERIFICATION on', () => {
  let strict: TestContext
  beforeAll(async () => {
    strict = await createTestContext({ requireEmailVerification: true })
  })
  afterAll(async () => {
    await strict?.close()
  })

  test('sign-up answers 202 without a token and writes account.verification_requested, not account.activated', async () => {
    const response = await register(strict, 'pending@example.com')
    expect(response.statusCode).toBe(202)
    const body = response.json()
    expect(Object.keys(body).sort()).toEqual(['customer', 'message', 'user'])
    const events = await strict.handle.sql<{ kind: string; data: { expires_at: string } }[]>`select kind, data from events where resource_id = ${body.user.id}`
    expect(events.map((event) => event.kind)).toEqual(['account.verification_requested'])
    const ttl = Date.parse(events[0]!.data.expires_at) - Date.now()
    expect(ttl).toBeGreaterThan(24 * 3600_000 - 60_000)
    expect(ttl).toBeLessThanOrEqual(24 * 3600_000)
    const [user] = await strict.handle.sql`select activated_at, email_verified_at from users where id = ${body.user.id}`
    expect(user).toEqual({ activated_at: null, email_verified_at: null })
  })

  test('an admin made by an operator signs in unverified; a token an unverified customer holds already keeps working (the check is at sign-in)', async () => {
    const email = `operator-admin-${randomUUID()}@example.com`
    const admin = await strict.signIn('admin', email)
    await strict.expectStatus(200, { method: 'POST', url: '/api/v1/auth/login', payload: { email, password: 'correct horse battery' } })
    expect((await strict.expectStatus<{ user: { email_verified_at: string | null } }>(200, { method: 'GET', url: '/api/v1/auth/me', token: admin.token })).user.email_verified_at).toBeNull()
    const customer = await strict.signIn('customer')
    await strict.expectStatus(200, { method: 'GET', url: '/api/v1/auth/me', token: customer.token })
  })

  test('a customer refused as unverified is not counted as a failed sign-in', async () => {
    await register(strict, 'counted@example.com')
    for (let n = 0; n < strict.config.loginMaxFailures + 2; n++) {
      await strict.expectError(403, 'email_not_verified', { method: 'POST', url: '/api/v1/auth/login', payload: { email: 'counted@example.com', password: 'long enough password' } })
    }
  })
})

// Needs a real Redis: CI provides one (REDIS_URL); without it, this part does not run.
describe.runIf(process.env.REDIS_URL)('sign-in throttling shared by API instances (REDIS_URL)', () => {
  let first: TestContext
  let second: TestContext
  beforeAll(async () => {
    first = await createTestContext({ redisUrl: process.env.REDIS_URL })
    // The second instance on the first one's database, as two processes behind a load balancer.
    second = await createTestContext(() => ({ redisUrl: process.env.REDIS_URL, databaseUrl: first.database.url }))
  })
  afterAll(async () => {
    await second?.close()
    await first?.close()
  })

  test('failures counted by one instance refuse that address on the other; a success on the other clears them', async () => {
    // An account of its own: other runs share this Redis and the window lasts 15 minutes.
    const email = `shared-${randomUUID()}@example.com`
    await first.request({ method: 'POST', url: '/api/v1/auth/register', payload: { email, password: 'shared password' } })
    const login = (instance: TestContext, password: string, remoteAddress: string) =>
      instance.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password }, remoteAddress })
    const max = first.config.loginMaxFailures
    for (let guess = 0; guess < max - 1; guess++) expect((await login(first, 'wrong', '203.0.113.7')).statusCode).toBe(401)
    expect((await login(second, 'shared password', '203.0.113.7')).statusCode).toBe(200)
    for (let guess = 0; guess < max; guess++) expect((await login(guess % 2 ? first : second, 'wrong', '203.0.113.7')).statusCode).toBe(401)
    expect((await login(second, 'shared password', '203.0.113.7')).statusCode).toBe(429)
    expect((await login(first, 'shared password', '192.0.2.7')).statusCode).toBe(200)
  })
})
