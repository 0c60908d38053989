/** The built API's start (dist/main.js) refuses a bad environment before it does anything else. */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, test } from 'vitest'

const dataDir = () => mkdtempSync(join(tmpdir(), 'commerce-config-'))

describe('loadConfig', () => {
  test('the built API (dist/main.js) refuses to start with half of the Stripe keys, naming the missing one', () => {
    const main = fileURLToPath(new URL('../dist/main.js', import.meta.url))
    if (!existsSync(main)) throw new Error(`${main} is missing: run \`pnpm build\` in apps/api first`)
    const secretKey = 'sk_test_not_shown_0123456789'
    const exit = spawnSync(process.execPath, [main], {
      env: { PATH: process.env.PATH, COMMERCE_DATA_DIR: dataDir(), STRIPE_SECRET_KEY: secretKey },
      encoding: 'utf8',
      timeout: 30_000,
    })
    expect(exit.status).toBe(1)
    expect(exit.stderr.trim()).toBe('Invalid environment:\n  - STRIPE_WEBHOOK_SECRET is required with STRIPE_SECRET_KEY (Stripe needs both)')
    expect(exit.stdout).toBe('')
  })
})
