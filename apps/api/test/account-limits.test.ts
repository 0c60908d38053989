/**
 * The limits of the account requests that email a link or try a secret: per kind of request, so
 * many per account and so many per client address in a window, counted whether or not the
 * account exists (so a 429 says nothing about it), in the store the sign-in throttle uses.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect } from 'vitest'
import { test, type TestContext } from './helpers.js'

const PER_ACCOUNT = 3
const PER_ADDRESS = 5
test.scoped({ contextOptions: { config: { accountRateLimitMax: PER_ACCOUNT, accountRateLimitIpMax: PER_ADDRESS, accountRateLimitWindowMs: 60_000 } } })

let addresses = 0
/** A client address of its own, so that each test starts from nothing. */
const newAddress = () => `10.0.${Math.floor(++addresses / 250)}.${addresses % 250}`

const post = (ctx: TestContext, url: string, payload: Record<string, unknown>, remoteAddress: string) => ctx.request({ method: 'POST', url, payload, remoteAddress })

describe('POST /auth/password-reset', () => {
  test(`answers 429 with Retry-After past ${PER_ACCOUNT} requests for one address, for an account and an unknown address alike`, async ({ ctx }) => {
    const { user } = await ctx.expectStatus<{ user: { email: string } }>(201, {
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { email: `limited-${randomUUID()}@example.com`, password: 'correct horse battery' },
    })
    for (const email of [user.email, `nobody-${randomUUID()}@example.com`]) {
      const from = newAddress()
      for (let n = 0; n < PER_ACCOUNT; n++) expect((await post(ctx, '/api/v1/auth/password-reset', { email }, from)).statusCode).toBe(202)
      const refused = await post(ctx, '/api/v1/auth/password-reset', { email }, newAddress())
      expect(refused.statusCode).toBe(429)
      expect(refused.json()).toMatchObject({ error: { code: 'rate_limited', message: 'Too many of these requests for this account or from this address; retry later' } })
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(50)
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60)
      // The same address in other letters is the same account.
      expect((await post(ctx, '/api/v1/auth/password-reset', { email: email.toUpperCase() }, newAddress())).statusCode).toBe(429)
    }
  })

  test(`answers 429 past ${PER_ADDRESS} requests from one client address, whatever the accounts`, async ({ ctx }) => {
    const from = newAddress()
    for (let n = 0; n < PER_ADDRESS; n++) expect((await post(ctx, '/api/v1/auth/password-reset', { email: `spray-${n}-${randomUUID()}@example.com` }, from)).statusCode).toBe(202)
    expect((await post(ctx, '/api/v1/auth/password-reset', { email: `spray-${randomUUID()}@example.com` }, from)).statusCode).toBe(429)
    expect((await post(ctx, '/api/v1/auth/password-reset', { email: `spray-${randomUUID()}@example.com` }, newAddress())).statusCode).toBe(202)
  })
})

describe('POST /auth/password-reset/confirm', () => {
  test(`answers 429 past ${PER_ADDRESS} tries from one client address`, async ({ ctx }) => {
    const from = newAddress()
    for (let n = 0; n < PER_ADDRESS; n++) {
      expect((await post(ctx, '/api/v1/auth/password-reset/confirm', { token: randomUUID(), password: 'long enough' }, from)).statusCode).toBe(400)
    }
    expect((await post(ctx, '/api/v1/auth/password-reset/confirm', { token: randomUUID(), password: 'long enough' }, from)).statusCode).toBe(429)
  })
})

describe('POST /auth/verify-email/resend', () => {
  test(`answers 429 past ${PER_ACCOUNT} requests for one address, and past ${PER_ADDRESS} from one client address`, async ({ ctx }) => {
    const email = `resend-${randomUUID()}@example.com`
    for (let n = 0; n < PER_ACCOUNT; n++) expect((await post(ctx, '/api/v1/auth/verify-email/resend', { email }, newAddress())).statusCode).toBe(202)
    const refused = await post(ctx, '/api/v1/auth/verify-email/resend', { email }, newAddress())
    expect(refused.statusCode).toBe(429)
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(50)
    const from = newAddress()
    for (let n = 0; n < PER_ADDRESS; n++) expect((await post(ctx, '/api/v1/auth/verify-email/resend', { email: `spray-${n}-${randomUUID()}@example.com` }, from)).statusCode).toBe(202)
    expect((await post(ctx, '/api/v1/auth/verify-email/resend', { email: `spray-${randomUUID()}@example.com` }, from)).statusCode).toBe(429)
  })
})

describe.for(['/api/v1/auth/verify-email', '/api/v1/auth/email-change/confirm'])('POST %s', (url) => {
  test(`answers 429 past ${PER_ADDRESS} tries from one client address; another address is not refused`, async ({ ctx }) => {
    const from = newAddress()
    for (let n = 0; n < PER_ADDRESS; n++) expect((await post(ctx, url, { token: randomUUID() }, from)).statusCode).toBe(400)
    const refused = await post(ctx, url, { token: randomUUID() }, from)
    expect(refused.statusCode).toBe(429)
    expect(refused.json()).toMatchObject({ error: { code: 'rate_limited' } })
    expect((await post(ctx, url, { token: randomUUID() }, newAddress())).statusCode).toBe(400)
  })
})

/** The signed-in requests: counted per account (whatever the address) and per client address (whatever the account). */
describe.for([
  { url: '/api/v1/auth/email-change', payload: () => ({ email: `next-${randomUUID()}@example.com`, password: 'a wrong password' }) },
  { url: '/api/v1/auth/password-change', payload: () => ({ current_password: 'a wrong password', new_password: 'another long password' }) },
])('POST $url', ({ url, payload }) => {
  const signedIn = (ctx: TestContext, token: string, from: string) => ctx.request({ method: 'POST', url, payload: payload(), token, remoteAddress: from })

  test(`answers 429 past ${PER_ACCOUNT} requests of one account from any addresses; a wrong password counts`, async ({ ctx }) => {
    const { token } = await ctx.signIn('customer')
    for (let n = 0; n < PER_ACCOUNT; n++) expect((await signedIn(ctx, token, newAddress())).statusCode).toBe(400)
    const refused = await signedIn(ctx, token, newAddress())
    expect(refused.statusCode).toBe(429)
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(50)
    expect((await signedIn(ctx, (await ctx.signIn('customer')).token, newAddress())).statusCode).toBe(400)
  })

  test(`answers 429 past ${PER_ADDRESS} requests from one client address, whatever the accounts`, async ({ ctx }) => {
    const from = newAddress()
    for (let n = 0; n < PER_ADDRESS; n++) expect((await signedIn(ctx, (await ctx.signIn('customer')).token, from)).statusCode).toBe(400)
    expect((await signedIn(ctx, (await ctx.signIn('customer')).token, from)).statusCode).toBe(429)
  })
})
