import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, test } from 'vitest'
import { testProvider } from '@commerce/payments'
import { parseDuration } from '@commerce/domain'
import { ConfigError, loadConfig } from '../src/config.js'

const dataDir = () => mkdtempSync(join(tmpdir(), 'commerce-config-'))

describe('loadConfig', () => {
  test('applies the documented defaults', () => {
    const config = loadConfig({ COMMERCE_DATA_DIR: dataDir() })
    expect(config).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      jwtExpiresInSeconds: 86_400,
      rateLimitMax: 60,
      rateLimitWindowMs: 60_000,
      rateLimitApiKeyMax: 600,
      databaseUrl: undefined,
      logLevel: 'info',
      trustProxy: false,
      webhookAllowPrivateTargets: false,
      wsReplayMaxEvents: 10_000,
      loginMaxFailures: 10,
      loginFailureWindowMs: 900_000,
      loginSlowdownAfter: 100,
      loginSlowdownDelayMs: 1000,
      productCacheTtlMs: 5000,
      tracing: undefined,
      shutdownGraceMs: 10_000,
    })
  })

  test('reads the sign-in throttle settings and names bad ones', () => {
    const config = loadConfig({
      LOGIN_MAX_FAILURES: '5',
      LOGIN_FAILURE_WINDOW: '1h',
      LOGIN_SLOWDOWN_AFTER: '50',
      LOGIN_SLOWDOWN_DELAY: '2s',
      COMMERCE_DATA_DIR: dataDir(),
    })
    expect(config).toMatchObject({ loginMaxFailures: 5, loginFailureWindowMs: 3_600_000, loginSlowdownAfter: 50, loginSlowdownDelayMs: 2000 })
    const bad = () => loadConfig({ LOGIN_MAX_FAILURES: '0', LOGIN_SLOWDOWN_DELAY: 'later', COMMERCE_DATA_DIR: dataDir() })
    expect(bad).toThrow(/LOGIN_MAX_FAILURES must be an integer from 1/)
    expect(bad).toThrow(/LOGIN_SLOWDOWN_DELAY must be a duration/)
  })

  test('PRODUCT_CACHE_TTL takes a duration or 0 (off)', () => {
    expect(loadConfig({ PRODUCT_CACHE_TTL: '0', COMMERCE_DATA_DIR: dataDir() }).productCacheTtlMs).toBe(0)
    expect(loadConfig({ PRODUCT_CACHE_TTL: '500ms', COMMERCE_DATA_DIR: dataDir() }).productCacheTtlMs).toBe(500)
    expect(loadConfig({ PRODUCT_CACHE_TTL: '750', COMMERCE_DATA_DIR: dataDir() }).productCacheTtlMs).toBe(750)
    expect(() => loadConfig({ PRODUCT_CACHE_TTL: 'briefly', COMMERCE_DATA_DIR: dataDir() })).toThrow(/PRODUCT_CACHE_TTL must be 0 \(off\) or a duration/)
  })

  test('names every bad variable in one error', () => {
    const attempt = () =>
      loadConfig({
        PORT: 'eighty',
        RATE_LIMIT_MAX: '0',
        JWT_EXPIRES_IN: 'soon',
        DATABASE_URL: 'mysql://x',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'maybe',
        COMMERCE_DATA_DIR: dataDir(),
      })
    expect(attempt).toThrow(ConfigError)
    try {
      attempt()
    } catch (error) {
      const message = (error as Error).message
      for (const name of ['PORT', 'RATE_LIMIT_MAX', 'JWT_EXPIRES_IN', 'DATABASE_URL', 'WEBHOOK_ALLOW_PRIVATE_TARGETS']) {
        expect(message).toContain(name)
      }
    }
  })

  test('refuses to start in production without JWT_SECRET, and refuses a short secret', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', COMMERCE_DATA_DIR: dataDir() })).toThrow(/JWT_SECRET is required/)
    expect(() => loadConfig({ JWT_SECRET: 'short', COMMERCE_DATA_DIR: dataDir() })).toThrow(/at least 32 bytes/)
  })

  test('outside production generates a JWT secret once and keeps it in the data directory', () => {
    const dir = dataDir()
    const first = loadConfig({ COMMERCE_DATA_DIR: dir })
    const second = loadConfig({ COMMERCE_DATA_DIR: dir })
    expect(first.jwtSecret.length).toBeGreaterThanOrEqual(32)
    expect(second.jwtSecret).toBe(first.jwtSecret)
    expect(readFileSync(join(dir, 'jwt-secret'), 'utf8')).toBe(first.jwtSecret)
  })

  test('WEBHOOK_ALLOW_PRIVATE_TARGETS takes true or false', () => {
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', COMMERCE_DATA_DIR: dataDir() }).webhookAllowPrivateTargets).toBe(true)
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', COMMERCE_DATA_DIR: dataDir() }).webhookAllowPrivateTargets).toBe(false)
  })

  test('payments go to the test provider by default and to Stripe with both of its keys; half of them is refused', () => {
    expect(loadConfig({ COMMERCE_DATA_DIR: dataDir() }).paymentProvider).toBe(testProvider)
    const keys = { STRIPE_SECRET_KEY: 'sk_test_not_shown_0123456789', STRIPE_WEBHOOK_SECRET: 'whsec_not_shown_0123456789' }
    expect(loadConfig({ ...keys, COMMERCE_DATA_DIR: dataDir() }).paymentProvider.name).toBe('stripe')
    const half = () => loadConfig({ STRIPE_SECRET_KEY: keys.STRIPE_SECRET_KEY, PORT: 'eighty', COMMERCE_DATA_DIR: dataDir() })
    expect(half).toThrow(ConfigError)
    expect(half).toThrow(/^Invalid environment:\n {2}- PORT must be an integer from 0 to 65535 \(got 'eighty'\)\n {2}- STRIPE_WEBHOOK_SECRET is required with STRIPE_SECRET_KEY \(Stripe needs both\)$/)
    expect(half).not.toThrow(/not_shown/)
  })

  test('reads durations with units', () => {
    expect(parseDuration('24h')).toBe(86_400_000)
    expect(parseDuration('15m')).toBe(900_000)
    expect(parseDuration('90')).toBe(90_000)
    expect(parseDuration('250', 'ms')).toBe(250)
    expect(parseDuration('2d')).toBe(172_800_000)
    expect(parseDuration('soon')).toBeUndefined()
  })
})
