import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { defaultDataDir } from '@commerce/db'
import { testProvider } from '@commerce/payments'
import { loadConfig } from '../src/config.js'

describe('loadConfig', () => {
  it('uses the defaults when nothing is set, leaving DATABASE_URL unset for the embedded database', () => {
    expect(loadConfig({})).toEqual({
      databaseUrl: undefined,
      dataDir: undefined,
      databasePoolMax: 10,
      databaseConnectTimeoutMs: 5_000,
      concurrency: 5,
      logLevel: 'info',
      webhookTimeoutMs: 10_000,
      webhookRetrySchedule: [60_000, 300_000, 1_800_000],
      webhookDisableAfterMs: 5 * 86_400_000,
      webhookAllowPrivateTargets: false,
      healthPort: undefined,
      healthHost: '0.0.0.0',
      paymentProvider: testProvider,
      paymentSweepIntervalMs: 30_000,
      paymentReconcileAfterMs: 120_000,
      paymentUnrecordedGraceMs: 90_000,
      notifications: {
        smtpUrl: undefined,
        from: '"Our shop" <shop@localhost>',
        mailDir: join(defaultDataDir(), 'mail'),
        templatesDir: undefined,
        retrySchedule: [60_000, 300_000, 1_800_000],
        smtpTimeoutMs: 10_000,
        shopName: 'Our shop',
        shopUrl: 'http://localhost:3000',
      },
      tracing: undefined,
      storage: expect.objectContaining({ kind: 'disk', root: join(defaultDataDir(), 'uploads') }),
      importBatchRows: 500,
      csvRetentionMs: 30 * 86_400_000,
      reservationRetentionMs: 7 * 86_400_000,
      eventRetentionMs: 90 * 86_400_000,
      webhookDeliveryRetentionMs: 90 * 86_400_000,
      shutdownGraceMs: 25_000,
    })
  })

  it('binds the health port where HOST says, as the API does, unless WORKER_HEALTH_HOST says otherwise', () => {
    expect(loadConfig({ HOST: '127.0.0.1' }).healthHost).toBe('127.0.0.1')
    expect(loadConfig({ HOST: '127.0.0.1', WORKER_HEALTH_HOST: '0.0.0.0' }).healthHost).toBe('0.0.0.0')
    expect(loadConfig({ HOST: ' ', WORKER_HEALTH_HOST: '' }).healthHost).toBe('0.0.0.0')
  })

  it('reads every variable and treats empty values as unset', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgresql://app:pw@db:5432/commerce',
      WORKER_CONCURRENCY: '12',
      DATABASE_POOL_MAX: ' 4 ',
      DATABASE_CONNECT_TIMEOUT: '1500ms',
      LOG_LEVEL: 'debug',
      COMMERCE_DATA_DIR: '/srv/commerce/.data',
      WEBHOOK_TIMEOUT_MS: '2500',
      WEBHOOK_RETRY_SCHEDULE: '500ms, 2s,1m,1h',
      WEBHOOK_DISABLE_AFTER: '36h',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WORKER_HEALTH_PORT: '9464',
      WORKER_HEALTH_HOST: '10.0.0.5',
      PAYMENT_SWEEP_INTERVAL: '200ms',
      PAYMENT_RECONCILE_AFTER: '90s',
      PAYMENT_UNRECORDED_GRACE: '5m',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      SHUTDOWN_GRACE_PERIOD: '40s',
      SMTP_URL: 'smtps://mailer:secret@smtp.example.com:465',
      MAIL_FROM: 'Shop <orders@shop.example.com>',
      SMTP_TIMEOUT: '5s',
      NOTIFICATION_RETRY_SCHEDULE: '10s,1m',
      NOTIFICATION_TEMPLATES_DIR: '/srv/commerce/templates',
      SHOP_NAME: 'Bicycle Barn',
      SHOP_URL: 'https://bicycles.example.com/',
      UPLOADS_DIR: '/srv/commerce/files',
      IMPORT_BATCH_ROWS: '250',
      CSV_RETENTION: '7d',
      CHECKOUT_RESERVATION_RETENTION: '36h',
      EVENT_RETENTION: '30d',
      WEBHOOK_DELIVERY_RETENTION: '336h',
    })
    expect(config).toEqual({
      databaseUrl: 'postgresql://app:pw@db:5432/commerce',
      dataDir: '/srv/commerce/.data',
      databasePoolMax: 4,
      databaseConnectTimeoutMs: 1500,
      concurrency: 12,
      logLevel: 'debug',
      webhookTimeoutMs: 2500,
      webhookRetrySchedule: [500, 2000, 60_000, 3_600_000],
      webhookDisableAfterMs: 36 * 3_600_000,
      webhookAllowPrivateTargets: true,
      healthPort: 9464,
      healthHost: '10.0.0.5',
      paymentProvider: testProvider,
      paymentSweepIntervalMs: 200,
      paymentReconcileAfterMs: 90_000,
      paymentUnrecordedGraceMs: 300_000,
      notifications: {
        smtpUrl: 'smtps://mailer:secret@smtp.example.com:465',
        from: 'Shop <orders@shop.example.com>',
        mailDir: '/srv/commerce/.data/mail',
        templatesDir: '/srv/commerce/templates',
        retrySchedule: [10_000, 60_000],
        smtpTimeoutMs: 5_000,
        shopName: 'Bicycle Barn',
        shopUrl: 'https://bicycles.example.com',
      },
      tracing: { endpoint: 'http://collector:4318', headers: {}, serviceName: 'commerce-worker' },
      storage: expect.objectContaining({ kind: 'disk', root: '/srv/commerce/files' }),
      importBatchRows: 250,
      csvRetentionMs: 7 * 86_400_000,
      reservationRetentionMs: 36 * 3_600_000,
      eventRetentionMs: 30 * 86_400_000,
      webhookDeliveryRetentionMs: 14 * 86_400_000,
      shutdownGraceMs: 40_000,
    })
    expect(loadConfig({ WORKER_CONCURRENCY: '', LOG_LEVEL: '' })).toMatchObject({ concurrency: 5, logLevel: 'info' })
    expect(loadConfig({ WEBHOOK_DISABLE_AFTER: 'never' }).webhookDisableAfterMs).toBeNull()
  })

  it('names every bad variable in one error, a line each, as the API and the CLI do', () => {
    expect(() => loadConfig({ WORKER_CONCURRENCY: 'abc', LOG_LEVEL: 'loud', DATABASE_POOL_MAX: '0' })).toThrow(
      'Invalid environment:\n' +
        "  - DATABASE_POOL_MAX must be an integer from 1 to 1000 (got '0')\n" +
        "  - WORKER_CONCURRENCY must be an integer from 1 to 1000 (got 'abc')\n" +
        "  - LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got 'loud')",
    )
  })

  it('refuses a retry schedule that is not durations with units, and unknown booleans', () => {
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '1m,5,30m' })).toThrow(/WEBHOOK_RETRY_SCHEDULE must be up to 10 comma-separated durations/)
    expect(() => loadConfig({ WEBHOOK_RETRY_SCHEDULE: '1d' })).toThrow(/WEBHOOK_RETRY_SCHEDULE/)
    expect(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'maybe' })).toThrow(/WEBHOOK_ALLOW_PRIVATE_TARGETS must be true or false/)
    // The API's spellings too: one reader for both.
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'yes' }).webhookAllowPrivateTargets).toBe(true)
    expect(() => loadConfig({ WEBHOOK_TIMEOUT_MS: '10' })).toThrow(/WEBHOOK_TIMEOUT_MS/)
    expect(() => loadConfig({ WEBHOOK_DISABLE_AFTER: '5' })).toThrow(/WEBHOOK_DISABLE_AFTER must be a duration with a unit/)
  })

  it('reads the payment provider as the API does, and names its problems after the others', () => {
    const keys = { STRIPE_SECRET_KEY: 'sk_test_not_shown_0123456789', STRIPE_WEBHOOK_SECRET: 'whsec_not_shown_0123456789' }
    expect(loadConfig(keys).paymentProvider.name).toBe('stripe')
    const half = () => loadConfig({ STRIPE_WEBHOOK_SECRET: keys.STRIPE_WEBHOOK_SECRET, PAYMENT_SWEEP_INTERVAL: 'often' })
    expect(half).toThrow(
      'Invalid environment:\n' +
        "  - PAYMENT_SWEEP_INTERVAL must be a duration such as 30s or 500ms, more than zero (got 'often')\n" +
        '  - STRIPE_SECRET_KEY is required with STRIPE_WEBHOOK_SECRET (Stripe needs both)',
    )
    expect(half).not.toThrow(/not_shown/)
    expect(() => loadConfig({ PAYMENT_RECONCILE_AFTER: '0s' })).toThrow(/PAYMENT_RECONCILE_AFTER must be a duration such as 2m or 90s, more than zero/)
  })

  it('in production with notifications on, refuses to start without SMTP_URL and MAIL_FROM, saying how to turn them off', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(
      'Invalid environment:\n' +
        '  - SMTP_URL is required when NODE_ENV=production and NOTIFICATIONS_ENABLED=true (or set NOTIFICATIONS_ENABLED=false)\n' +
        '  - MAIL_FROM is required when NODE_ENV=production and NOTIFICATIONS_ENABLED=true (or set NOTIFICATIONS_ENABLED=false)',
    )
    const mail = { SMTP_URL: 'smtp://smtp.example.com:587', MAIL_FROM: 'orders@shop.example.com' }
    expect(loadConfig({ NODE_ENV: 'production', ...mail }).notifications).toMatchObject({ smtpUrl: mail.SMTP_URL, from: mail.MAIL_FROM })
    expect(loadConfig({ NODE_ENV: 'production', NOTIFICATIONS_ENABLED: 'false' }).notifications).toBeUndefined()
  })

  it('refuses an SMTP_URL that is not smtp:// or smtps:// without echoing it, and a MAIL_FROM without an address', () => {
    let message = ''
    try {
      loadConfig({ SMTP_URL: 'https://mailer:hunter22@smtp.example.com', MAIL_FROM: 'the shop', SHOP_URL: 'shop.example.com' })
    } catch (error) {
      message = (error as Error).message
    }
    expect(message).toBe(
      'Invalid environment:\n' +
        '  - SMTP_URL must be a smtp:// or smtps:// URL\n' +
        "  - MAIL_FROM must be an email address, optionally with a name (Shop <shop@example.com>) (got 'the shop')\n" +
        '  - SHOP_URL must be an http:// or https:// URL',
    )
    expect(message).not.toContain('hunter22')
  })

  it('refuses fractional and negative integers rather than rounding them', () => {
    expect(() => loadConfig({ WORKER_CONCURRENCY: '2.5' })).toThrow(/WORKER_CONCURRENCY must be an integer from 1 to 1000/)
    expect(() => loadConfig({ WORKER_CONCURRENCY: '-3' })).toThrow(/WORKER_CONCURRENCY must be an integer from 1 to 1000/)
  })

  it('refuses a non-postgres DATABASE_URL without echoing it (it may hold a password)', () => {
    let message = ''
    try {
      loadConfig({ DATABASE_URL: 'mysql://root:hunter22@db/shop' })
    } catch (error) {
      message = (error as Error).message
    }
    expect(message).toBe('Invalid environment:\n  - DATABASE_URL must be a postgres:// or postgresql:// URL')
    expect(message).not.toContain('hunter22')
  })
})
