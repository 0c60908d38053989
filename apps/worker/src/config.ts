/** The worker's configuration: read from the environment once, validated, typed. */
import { join } from 'node:path'
import { Type } from 'typebox'
import { defaultDataDir } from '@commerce/db'
import { parseDuration, type PaymentProvider } from '@commerce/domain'
import { PAYMENT_VARIABLES, choosePaymentProvider } from '@commerce/payments'
import { STORAGE_VARIABLES, chooseStorage, type FileStorage } from '@commerce/storage'
import {
  DATABASE_LOCATION,
  DATABASE_POOL,
  ENVIRONMENT,
  LISTENING,
  LOGGING,
  TRACING,
  WEBHOOK_TARGETS,
  custom,
  duration,
  integer,
  boolean,
  readEnvironment,
  refuseProblems,
  shutdownVariables,
  text,
  tracingSettings,
  url,
  type EnvironmentSource,
  type LogLevel,
  type TracingSettings,
} from '@commerce/runtime/config'
import { domainOf } from './mailer.js'

export interface Config {
  /** Unset: the embedded PostgreSQL in `dataDir`. */
  databaseUrl: string | undefined
  /** COMMERCE_DATA_DIR, as the API reads it; unset: the workspace's `.data/`. */
  dataDir: string | undefined
  databasePoolMax: number
  /** The longest a query waits for a connection, to be made or to come free (as the API's). */
  databaseConnectTimeoutMs: number
  concurrency: number
  logLevel: LogLevel
  /** A delivery attempt's whole time limit (connect, send, answer). */
  webhookTimeoutMs: number
  /** The wait before each retry after a failed attempt, in milliseconds. */
  webhookRetrySchedule: number[]
  /** A subscription failing, without a success, for longer than this is disabled; null: never. */
  webhookDisableAfterMs: number | null
  /** Lets deliveries reach private, loopback and link-local addresses (development, tests). */
  webhookAllowPrivateTargets: boolean
  /** Serves GET /health and GET /metrics on this port when set, */
  healthPort: number | undefined
  /** on this address: WORKER_HEALTH_HOST, else HOST (where the API listens), else every interface. */
  healthHost: string
  /** The provider the sweeps ask, as the API's (PAYMENT_PROVIDER, STRIPE_*: @commerce/payments config.ts). */
  paymentProvider: PaymentProvider
  /** How often one of the workers sweeps the checkouts' payments (payment-sweeps.ts). */
  paymentSweepIntervalMs: number
  /** A payment in progress unchanged for this long is looked up at the provider. */
  paymentReconcileAfterMs: number
  /** The provider's "no such payment" for one we never learnt the reference of is believed only after this (its search lags). */
  paymentUnrecordedGraceMs: number
  /** The emails made from events (notifications.ts); undefined when NOTIFICATIONS_ENABLED=false. */
  notifications: NotificationConfig | undefined
  /** Where traces go (OTEL_*); undefined: no traces, and nothing of OpenTelemetry is loaded. */
  tracing: TracingSettings | undefined
  /** Where CSV exports are written and imports read (STORAGE and its settings, as the API's). */
  storage: FileStorage
  /** Rows of a CSV import per transaction. */
  importBatchRows: number
  /** How long finished exports and imports (and their files) are kept. */
  csvRetentionMs: number
  /** Released checkout reservations are deleted this long after their release. */
  reservationRetentionMs: number
  /** Events are deleted this long after they were written, but an order's and those still referred to. */
  eventRetentionMs: number
  /** Webhook deliveries are deleted this long after their last attempt, unless one is still due. */
  webhookDeliveryRetentionMs: number
  /** How long stopping may take on SIGTERM (running jobs finish) before the process exits anyway. */
  shutdownGraceMs: number
}

export interface NotificationConfig {
  /** smtp:// or smtps:// with credentials; undefined (never in production): `.eml` files in `mailDir`. */
  smtpUrl: string | undefined
  /** The From header. */
  from: string
  /** Where the `.eml` files go without SMTP_URL: the data directory's `mail/`. */
  mailDir: string
  /** Files here replace the built-in templates of the same path. */
  templatesDir: string | undefined
  /** The wait before each retry after a failed attempt, in milliseconds. */
  retrySchedule: number[]
  /** Each step of an SMTP exchange within this. */
  smtpTimeoutMs: number
  /** What the templates call the shop and link to. */
  shopName: string
  shopUrl: string
}

const DURATION = /^(\d+)(ms|s|m|h)$/
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const

/** "1m,5m,30m" → [60000, 300000, 1800000]; undefined when any part is not a duration with a unit. */
export function parseRetrySchedule(text: string): number[] | undefined {
  const waits = text.split(',').map((part) => DURATION.exec(part.trim()))
  if (waits.some((match) => !match)) return undefined
  return waits.map((match) => Number(match![1]) * UNIT_MS[match![2] as keyof typeof UNIT_MS])
}

/** A retry schedule: up to 10 waits with a unit. */
function retrySchedule(fallback: string) {
  return custom({
    schema: Type.Array(Type.Integer({ minimum: 0 }), { minItems: 1, maxItems: 10 }),
    decode: parseRetrySchedule,
    problem: 'must be up to 10 comma-separated durations with a unit ms, s, m or h (e.g. 1m,5m,30m)',
    default: fallback,
  })
}

/** A From address: one mailbox with an @ (`Shop <shop@example.com>` or `shop@example.com`). */
const MAIL_FROM = custom({
  schema: Type.String(),
  decode: (text) => (domainOf(text) === undefined ? undefined : text),
  problem: 'must be an email address, optionally with a name (Shop <shop@example.com>)',
})

/** Every variable the worker reads: the shared ones (@commerce/runtime, @commerce/payments) and its own. */
export const WORKER_VARIABLES = {
  ...ENVIRONMENT,
  ...DATABASE_LOCATION,
  ...DATABASE_POOL,
  WORKER_CONCURRENCY: integer({ min: 1, max: 1000, default: 5 }),
  PAYMENT_SWEEP_INTERVAL: duration({ default: '30s', example: '30s or 500ms' }),
  PAYMENT_RECONCILE_AFTER: duration({ default: '2m', example: '2m or 90s' }),
  // Stripe: "under normal operating conditions, data is searchable in under 1 minute".
  PAYMENT_UNRECORDED_GRACE: duration({ default: '90s', example: '90s or 5m' }),
  WEBHOOK_TIMEOUT_MS: integer({ min: 100, max: 120_000, default: 10_000 }),
  WEBHOOK_RETRY_SCHEDULE: retrySchedule('1m,5m,30m'),
  /** A duration with its unit, or never (null). */
  WEBHOOK_DISABLE_AFTER: custom({
    schema: Type.Union([Type.Integer({ exclusiveMinimum: 0 }), Type.Null()]),
    decode: (text) => (text === 'never' ? null : /^\d+(ms|s|m|h|d)$/.test(text) ? parseDuration(text) : undefined),
    problem: 'must be a duration with a unit ms, s, m, h or d (e.g. 5d), or never',
    default: '5d',
  }),
  ...WEBHOOK_TARGETS,
  NOTIFICATIONS_ENABLED: boolean(true),
  SMTP_URL: url(['smtp:', 'smtps:']),
  MAIL_FROM,
  SMTP_TIMEOUT: duration({ default: '10s', bareUnit: 'ms', example: '10s or 1500ms' }),
  NOTIFICATION_RETRY_SCHEDULE: retrySchedule('1m,5m,30m'),
  NOTIFICATION_TEMPLATES_DIR: text({ problem: 'must be a directory path' }),
  SHOP_NAME: text({ default: 'Our shop' }),
  SHOP_URL: url(['http:', 'https:'], 'must be an http:// or https:// URL'),
  WORKER_HEALTH_PORT: integer({ min: 0, max: 65535 }),
  WORKER_HEALTH_HOST: text({ problem: 'must be a host name or IP address' }),
  IMPORT_BATCH_ROWS: integer({ min: 1, max: 100_000, default: 500 }),
  CSV_RETENTION: duration({ default: '30d', example: '30d or 12h' }),
  CHECKOUT_RESERVATION_RETENTION: duration({ default: '7d', example: '7d or 12h' }),
  EVENT_RETENTION: duration({ default: '90d', example: '90d or 720h' }),
  WEBHOOK_DELIVERY_RETENTION: duration({ default: '90d', example: '90d or 720h' }),
  ...STORAGE_VARIABLES,
  ...LISTENING,
  ...PAYMENT_VARIABLES,
  ...LOGGING,
  ...TRACING,
  ...shutdownVariables('25s'),
}

/** Reads the configuration, naming every bad variable in one error. Empty values count as unset. */
export function loadConfig(env: EnvironmentSource = process.env): Config {
  const { values: v, problems } = readEnvironment(WORKER_VARIABLES, env)
  const payments = choosePaymentProvider(v)
  if (v.NODE_ENV === 'production' && v.NOTIFICATIONS_ENABLED) {
    // Mail must reach customers: no silent .eml files, no From address a server would refuse.
    const missing = ['SMTP_URL', 'MAIL_FROM'].filter((name) => v[name as 'SMTP_URL' | 'MAIL_FROM'] === undefined)
    for (const name of missing) problems.push(`${name} is required when NODE_ENV=production and NOTIFICATIONS_ENABLED=true (or set NOTIFICATIONS_ENABLED=false)`)
  }
  // The worker makes no public addresses of files (the API does): any base does for disk storage.
  const files = chooseStorage(v, { dataDir: v.COMMERCE_DATA_DIR ?? defaultDataDir(), publicUrl: 'http://localhost' })
  refuseProblems([...problems, ...payments.problems, ...files.problems])
  return {
    databaseUrl: v.DATABASE_URL,
    dataDir: v.COMMERCE_DATA_DIR,
    databasePoolMax: v.DATABASE_POOL_MAX,
    databaseConnectTimeoutMs: v.DATABASE_CONNECT_TIMEOUT,
    concurrency: v.WORKER_CONCURRENCY,
    logLevel: v.LOG_LEVEL,
    webhookTimeoutMs: v.WEBHOOK_TIMEOUT_MS,
    webhookRetrySchedule: v.WEBHOOK_RETRY_SCHEDULE,
    webhookDisableAfterMs: v.WEBHOOK_DISABLE_AFTER,
    webhookAllowPrivateTargets: v.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    healthPort: v.WORKER_HEALTH_PORT,
    healthHost: v.WORKER_HEALTH_HOST ?? v.HOST,
    paymentProvider: payments.provider,
    paymentSweepIntervalMs: v.PAYMENT_SWEEP_INTERVAL,
    paymentReconcileAfterMs: v.PAYMENT_RECONCILE_AFTER,
    paymentUnrecordedGraceMs: v.PAYMENT_UNRECORDED_GRACE,
    notifications: v.NOTIFICATIONS_ENABLED
      ? {
          smtpUrl: v.SMTP_URL,
          from: v.MAIL_FROM ?? `"${v.SHOP_NAME.replaceAll('"', '')}" <shop@localhost>`,
          mailDir: join(v.COMMERCE_DATA_DIR ?? defaultDataDir(), 'mail'),
          templatesDir: v.NOTIFICATION_TEMPLATES_DIR,
          retrySchedule: v.NOTIFICATION_RETRY_SCHEDULE,
          smtpTimeoutMs: v.SMTP_TIMEOUT,
          shopName: v.SHOP_NAME,
          shopUrl: (v.SHOP_URL ?? 'http://localhost:3000').replace(/\/+$/, ''),
        }
      : undefined,
    tracing: tracingSettings(v, 'commerce-worker'),
    storage: files.storage,
    importBatchRows: v.IMPORT_BATCH_ROWS,
    csvRetentionMs: v.CSV_RETENTION,
    reservationRetentionMs: v.CHECKOUT_RESERVATION_RETENTION,
    eventRetentionMs: v.EVENT_RETENTION,
    webhookDeliveryRetentionMs: v.WEBHOOK_DELIVERY_RETENTION,
    shutdownGraceMs: v.SHUTDOWN_GRACE_PERIOD,
  }
}
