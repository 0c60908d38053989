/**
 * Broken authentication (OWASP API2), the logs' side: with every log line captured at the most
 * verbose level, passwords, tokens, API keys, client and webhook secrets sent in every way the API
 * accepts them (bodies, Authorization, HTTP Basic, ?access_token=, errors) never appear.
 */
import { Writable } from 'node:stream'
import { describe, expect } from 'vitest'
import { test as it } from './helpers.js'

const lines: string[] = []
const capture = new Writable({
  write(chunk: Buffer, _encoding, done) {
    lines.push(chunk.toString())
    done()
  },
})
it.scoped({ contextOptions: { config: { logLevel: 'trace' }, build: { logger: { level: 'trace', stream: capture } } } })

describe('secrets never reach the logs', () => {
  it('passwords, JWTs, API keys, client secrets and webhook secrets are absent from every line', async ({ ctx }) => {
    const password = 'Sup3r-secret-passw0rd'
    const registered = await ctx.request({
      method: 'POST', url: '/api/v1/auth/register', payload: { email: 'logs@example.com', password },
    })
    expect(registered.statusCode).toBe(201)
    const jwt = (registered.json() as { token: string }).token
    await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'logs@example.com', password } })
    await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'logs@example.com', password: `${password}-wrong` } })
    // A malformed body around a password: the validation error must not echo it.
    await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'not-an-email', password } })
    await ctx.request({ method: 'GET', url: '/api/v1/auth/me', token: jwt })
    await ctx.request({ method: 'GET', url: `/api/v1/ws?access_token=${jwt}` })

    const { key } = await ctx.createApiKey(['webhooks:write'])
    const webhookSecret = 'whsec_bG9ncy10ZXN0LXNlY3JldC1sb2dzLXRlc3Qtc2VjcmV0'
    const created = await ctx.request({
      method: 'POST', url: '/api/v1/webhooks', token: key, payload: { url: 'http://127.0.0.1:9/hook', events: ['*'], secret: webhookSecret },
    })
    expect(created.statusCode).toBe(201)
    await ctx.request({ method: 'GET', url: '/api/v1/products', token: `${key.slice(0, -1)}x` })

    const clientSecret = 'cs_notARealClientSecretButLongEnough0123456789'
    const basic = Buffer.from(`cc_someclientid:${clientSecret}`).toString('base64')
    await ctx.request({ method: 'POST', url: '/api/v1/oauth/token', headers: { authorization: `Basic ${basic}` }, payload: { grant_type: 'client_credentials' } })
    await ctx.request({
      method: 'POST', url: '/api/v1/oauth/token', payload: { grant_type: 'client_credentials', client_id: 'cc_someclientid', client_secret: clientSecret },
    })

    const log = lines.join('')
    // At least the line of each of the 10 requests.
    expect(lines.length).toBeGreaterThanOrEqual(10)
    // The requests were logged (their URLs and ids), only without the secrets.
    expect(log).toContain('/api/v1/auth/login')
    for (const secret of [password, jwt, jwt.split('.')[2]!, key, webhookSecret, clientSecret, basic]) {
      expect(log.includes(secret), `a secret in the logs: ${secret.slice(0, 12)}…`).toBe(false)
    }
  })
})
