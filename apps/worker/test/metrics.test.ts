import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import type { Outcome } from '../src/delivery.js'
import { startHealthServer } from '../src/health.js'
import { attemptOutcome, createWorkerMetrics, failureReason } from '../src/metrics.js'

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
    const metrics = createWorkerMetrics()
    // Every series of ours there, by recording what the worker records.
    const delivered: Outcome = { succeeded: true, statusCode: 200, durationMs: 12, error: null, responseBody: null }
    metrics.attempt(delivered, { status: 'succeeded', nextAttemptAt: null })
    metrics.attempt(failed(503, 'HTTP 503'), { status: 'pending', nextAttemptAt: new Date() })
    metrics.job('fanout-event', 'completed', 0.02)
    metrics.relayed(2)
    const server = await startHealthServer(0, '127.0.0.1', () => true, metrics.registry)
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`)
      expect(response.status).toBe(200)
      const text = await response.text()
      expect(text).toContain('nodejs_active_handles{')
      expect(text).toContain('commerce_webhook_attempts_total{outcome="retrying"} 1')
      const types = new Map([...text.matchAll(/^# TYPE (\w+) (\w+)$/gm)].map((match) => [match[1]!, match[2]!]))
      expect(types.get('commerce_webhook_attempts_total')).toBe('counter')
      expect([...types].filter(([name, type]) => name.endsWith('_total') !== (type === 'counter'))).toEqual([])
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
