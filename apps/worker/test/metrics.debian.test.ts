/**
 * The worker's GET /metrics as Prometheus' own linter reads it: promtool, from Debian's prometheus
 * package (`pnpm test:debian`; .ci/run installs the package when it is missing).
 */
import { spawnSync } from 'node:child_process'
import { expect, it } from 'vitest'
import { scrapeRecordedMetrics } from './metrics-exposition.js'

it('GET /metrics passes promtool check metrics (the text format, and names, types and help as Prometheus wants them)', async () => {
  const promtool = spawnSync('promtool', ['check', 'metrics'], { input: await scrapeRecordedMetrics(), encoding: 'utf8' })
  expect({ missing: promtool.error?.message, status: promtool.status, says: promtool.stdout + promtool.stderr }).toEqual({ missing: undefined, status: 0, says: '' })
})
