/**
 * GET /metrics as Prometheus' own linter reads it: promtool, from Debian's prometheus package
 * (`pnpm test:debian`; .ci/run installs the package when it is missing).
 */
import { spawnSync } from 'node:child_process'
import { expect } from 'vitest'
import { test } from './helpers.js'

test('GET /metrics passes promtool check metrics (the text format, and names, types and help as Prometheus wants them)', async ({ baseUrl }) => {
  // Every kind of series there: requests of several routes and statuses, the database's figures.
  await fetch(`${baseUrl}/api/v1/products`)
  await fetch(`${baseUrl}/api/v1/orders`)
  const response = await fetch(`${baseUrl}/metrics`)
  expect(response.status).toBe(200)
  const text = await response.text()
  expect(text).toContain('nodejs_active_handles{')
  expect(text).toContain('commerce_db_connections{')
  const promtool = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' })
  expect({ missing: promtool.error?.message, status: promtool.status, says: promtool.stdout + promtool.stderr }).toEqual({ missing: undefined, status: 0, says: '' })
})
