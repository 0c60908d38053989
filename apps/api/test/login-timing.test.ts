/**
 * Broken authentication (OWASP API2): a sign-in with an unknown email takes as long as one with a
 * wrong password, so timing does not tell which emails have accounts. With a slow password hash
 * (scrypt N = 2^14, tens of milliseconds) skipping the hash for unknown emails would make them
 * several times faster; the test compares medians of interleaved attempts and allows anything
 * within a factor of two either way, so machine noise does not decide it — a missing decoy does.
 */
import { describe, expect } from 'vitest'
import { test as it } from './helpers.js'

const SAMPLES = 15
it.scoped({ contextOptions: { config: { scryptCost: 2 ** 14 } } })

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

describe('sign-in timing', () => {
  it('is the same for an unknown email and a wrong password', { timeout: 120_000 }, async ({ ctx }) => {
    // One account per attempt: the per-account throttle must not answer instead of the password check.
    const emails = Array.from({ length: SAMPLES }, (_, index) => `timing-${index}@example.com`)
    for (const email of emails) {
      const registered = await ctx.request({ method: 'POST', url: '/api/v1/auth/register', payload: { email, password: 'the right password' } })
      expect(registered.statusCode).toBe(201)
    }
    const timed = async (email: string) => {
      const started = performance.now()
      const response = await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password: 'a wrong password' } })
      expect(response.statusCode).toBe(401)
      return performance.now() - started
    }
    await timed('warm-up@example.com')
    const known: number[] = []
    const unknown: number[] = []
    for (let index = 0; index < SAMPLES; index++) {
      known.push(await timed(emails[index]!))
      unknown.push(await timed(`nobody-${index}@example.com`))
    }
    const ratio = median(unknown) / median(known)
    expect(ratio, `unknown ${median(unknown).toFixed(1)} ms, known ${median(known).toFixed(1)} ms`).toBeGreaterThan(0.5)
    expect(ratio).toBeLessThan(2)
  })
})
