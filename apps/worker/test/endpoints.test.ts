import { describe, expect, it } from 'vitest'
import { errors } from 'undici'
import { describeError, type Outcome } from '../src/attempt-outcome.js'
import { createEndpointLimits, type Permit } from '../src/endpoints.js'

const TIMEOUT_MS = 1000
const timedOut: Outcome = { succeeded: false, statusCode: null, durationMs: TIMEOUT_MS, error: `timed out after ${TIMEOUT_MS} ms`, responseBody: null }
const answered: Outcome = { succeeded: false, statusCode: 500, durationMs: 3, error: 'HTTP 500', responseBody: null }

/** How long from now an attempt put off waits, in units of the time limit. */
const deferral = (admitted: Permit | Date) => {
  expect(admitted).toBeInstanceOf(Date)
  return ((admitted as Date).getTime() - Date.now()) / TIMEOUT_MS
}

describe('endpoint limits', () => {
  it('let attempts to an endpoint run side by side until one times out, then one at a time, spaced more with each timeout', () => {
    const limits = createEndpointLimits(TIMEOUT_MS)
    const burst = [1, 2, 3].map(() => limits.admit('hook') as Permit)
    expect(burst.every((permit) => !(permit instanceof Date) && !permit.handOffAtOnce)).toBe(true)
    // Attempts in flight together time out: one timeout in a row, not three.
    for (const permit of burst) permit.done(timedOut)
    const first = limits.admit('hook') as Permit
    expect(first.handOffAtOnce).toBe(true)
    expect(deferral(limits.admit('hook'))).toBeGreaterThanOrEqual(1)
    expect(deferral(limits.admit('hook'))).toBeLessThan(1.26)
    first.done(timedOut)
    const second = limits.admit('hook') as Permit
    expect(deferral(limits.admit('hook'))).toBeGreaterThanOrEqual(2)
    // Another endpoint is not concerned.
    expect(limits.admit('other')).not.toBeInstanceOf(Date)
    // An answer, even an error, lifts the slowing down.
    second.done(answered)
    const again = [limits.admit('hook'), limits.admit('hook')]
    expect(again.every((permit) => !(permit instanceof Date) && !permit.handOffAtOnce)).toBe(true)
  })

  it('have jobs stop waiting for an endpoint while one of its attempts outlived its job', () => {
    const limits = createEndpointLimits(TIMEOUT_MS)
    const slow = limits.admit('hook') as Permit
    slow.handedOff()
    expect((limits.admit('hook') as Permit).handOffAtOnce).toBe(true)
    slow.done(answered)
    expect((limits.admit('hook') as Permit).handOffAtOnce).toBe(false)
  })
})

describe('an attempt that runs out of time', () => {
  it('is a timeout whichever limit fired: the signal, or undici connecting, waiting for the headers or for the body', () => {
    const abort = new DOMException('The operation was aborted due to timeout', 'TimeoutError')
    for (const error of [abort, new errors.ConnectTimeoutError(), new errors.HeadersTimeoutError(), new errors.BodyTimeoutError()]) {
      expect(describeError(error, TIMEOUT_MS)).toBe(timedOut.error)
    }
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' })
    expect(describeError(refused, TIMEOUT_MS)).toBe('ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9')
  })
})
