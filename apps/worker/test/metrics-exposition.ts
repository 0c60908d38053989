/** The worker's GET /metrics text after one of each thing the worker records, for the metrics tests. */
import type { AddressInfo } from 'node:net'
import { expect } from 'vitest'
import type { Outcome } from '../src/attempt-outcome.js'
import { startHealthServer } from '../src/health.js'
import { createWorkerMetrics } from '../src/metrics.js'

export async function scrapeRecordedMetrics(): Promise<string> {
  const metrics = createWorkerMetrics()
  const delivered: Outcome = { succeeded: true, statusCode: 200, durationMs: 12, error: null, responseBody: null }
  const failed: Outcome = { succeeded: false, statusCode: 503, durationMs: 1, error: 'HTTP 503', responseBody: null }
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
    return text
  } finally {
    await new Promise((resolve) => server.close(resolve))
  }
}
