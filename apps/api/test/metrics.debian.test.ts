/**
 * GET /metrics as Prometheus' own linter reads it: promtool, from Debian's prometheus package
 * (`pnpm test:debian`; .ci/run installs the package when it is missing).
 */
import { spawnSync } from 'node:child_process'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { createTestContext, type TestContext } from './helpers.js'

let ctx: TestContext
let base: string

beforeAll(async () => {
  ctx = await createTestContext()
  await ctx.app.listen({ host: '127.0.0.1', port: 0 })
  base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`
})
afterAll(async () => {
  await ctx?.close()
})

test('GET /metrics passes promtool check metrics (the text format, and names, types and help as Prometheus wants them)', async () => {
  // Every kind of series there: requests of several routes and statuses, the database's figures.
  await fetch(`${base}/api/v1/products`)
  await fetch(`${base}/api/v1/orders`)
  const response = await fetch(`${base}/metrics`)
  expect(response.status).toBe(200)
  const text = await response.text()
  expect(text).toContain('nodejs_active_handles{')
  expect(text).toContain('commerce_db_connections{')
  const promtool = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' })
  expect({ missing: promtool.error?.message, status: promtool.status, says: promtool.stdout + promtool.stderr }).toEqual({ missing: undefined, status: 0, says: '' })
})
