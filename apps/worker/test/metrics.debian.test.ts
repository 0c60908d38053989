/**
 * The worker's GET /metrics as Prometheus' own linter reads it: promtool, from Debian's prometheus
 * package (`pnpm test:debian`; .ci/run installs the package when it is missing).
 */
import { spawnSync } from 'node:child_process'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import type { Outcome } from '../src/delivery.js'
import { startHealthServer } from '../src/health.js'
import { createWorkerMetrics } from '../src/metrics.js'

const failed: Outcome = { succeeded: false, statusCode: 503, durationMs: 1, error: 'HTTP 503', responseBody: null }

describe('GET /metrics', () => {
  it('passes promtool check metrics (Prometheus: the text format, and names, types and help as Prometheus wants them)', async () => {
    const metrics = createWorkerMetrics()
    // Every series of ours there, by recording what the worker records.
    const delivered: Outcome = { succeeded: true, statusCode: 200, durationMs: 12, error: null, responseBody: null }
    metrics.attempt(delivered, { status: 'succeeded', nextAttemptAt: null })
    metrics.attempt(failed, { status: 'pending', nextAttemptAt: new Date() })
    metrics.job('fanout-event', 'completed', 0.02)
    metrics.relayed(2)
    const server = await startHealthServer(0, '127.0.0.1', () => true, metrics.registry)
    try {
      const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`)
      expect(response.status).toBe(200)
      const text = await response.text()
      expect(text).toContain('nodejs_active_handles{')
      expect(text).toContain('commerce_webhook_attempts_total{outcome="retrying"} 1')
      const promtool = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' })
      expect({ missing: promtool.error?.message, status: promtool.status, says: promtool.stdout + promtool.stderr }).toEqual({ missing: undefined, status: 0, says: '' })
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
