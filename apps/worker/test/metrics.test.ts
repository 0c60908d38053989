import { describe, expect, it } from 'vitest'
import { attemptOutcome, type Outcome } from '../src/attempt-outcome.js'
import { failureReason } from '../src/metrics.js'
import { scrapeRecordedMetrics } from './metrics-exposition.js'

const failed = (statusCode: number | null, error: string): Outcome => ({ succeeded: false, statusCode, durationMs: 1, error, responseBody: null })

describe('metric labels', () => {
  it('name a failed attempt by the status class of its answer, or by what kept an answer from coming', () => {
    expect(failureReason(failed(302, 'HTTP 302'))).toBe('http_3xx')
    expect(failureReason(failed(410, 'HTTP 410'))).toBe('http_4xx')
    expect(failureReason(failed(503, 'HTTP 503'))).toBe('http_5xx')
    expect(failureReason(failed(null, 'timed out after 10000 ms'))).toBe('timeout')
    expect(failureReason(failed(null, 'refused: 10.0.0.1 is not a public address'))).toBe('refused')
    expect(failureReason(failed(null, 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9'))).toBe('connection')
  })

  it("name an attempt's outcome by what comes next", () => {
    expect(attemptOutcome({ status: 'succeeded', nextAttemptAt: null })).toBe('succeeded')
    expect(attemptOutcome({ status: 'pending', nextAttemptAt: new Date() })).toBe('retrying')
    expect(attemptOutcome({ status: 'failed', nextAttemptAt: null })).toBe('failed')
  })
})

describe('GET /metrics', () => {
  it('types every series, and only counters end in _total (promtool checks the rest: metrics.debian.test.ts)', async () => {
    const text = await scrapeRecordedMetrics()
    const types = new Map([...text.matchAll(/^# TYPE (\w+) (\w+)$/gm)].map((match) => [match[1]!, match[2]!]))
    expect(types.get('commerce_webhook_attempts_total')).toBe('counter')
    expect([...types].filter(([name, type]) => name.endsWith('_total') !== (type === 'counter'))).toEqual([])
  })
})
