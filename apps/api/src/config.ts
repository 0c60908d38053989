/** The API's configuration: read from the environment once, validated, frozen. */
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { Type } from 'typebox'
import { DEFAULT_SCRYPT_COST, parseDuration, type PaymentProvider } from '@commerce/domain'
import { defaultDataDir } from '@commerce/db'
import { PAYMENT_VARIABLES, choosePaymentProvider } from '@commerce/payments'
import { STORAGE_VARIABLES, chooseStorage, type FileStorage } from '@commerce/storage'
import {
  DATABASE_LOCATION,
  DATABASE_POOL,
  ENVIRONMENT,
  LISTENING,
  LOGGING,
  PASSWORD_HASHING,
  TRACING,
  WEBHOOK_TARGETS,
  boolean,
  custom,
  duration,
  integer,
  oneOf,
  readEnvironment,
  refuseProblems,
  shutdownVariables,
  tracingSettings,
  url,
  type EnvironmentSource,
  type LogLevel,
  type TracingSettings,
} from '@commerce/runtime/config'

export interface Config {
  nodeEnv: 'development' | 'production' | 'test'
  /** Unset: the embedded PostgreSQL in `dataDir`. */
  databaseUrl: string | undefined
  /** PostgreSQL itself, when DATABASE_URL goes through a transaction pooler: for migrations and the LISTEN connection. */
  databaseDirectUrl: string | undefined
  /** DATABASE_URL is a transaction pooler (PgBouncer): no session settings at connect. */
  databasePgbouncer: boolean
  databasePoolMax: number
  databaseStatementTimeoutMs: number
  /** How long a request waits for a database connection (to be made or to come free) before it answers 503. */
  databaseConnectTimeoutMs: number
  dataDir: string
  host: string
  port: number
  jwtSecret: string
  jwtExpiresInSeconds: number
  rateLimitMax: number
  rateLimitWindowMs: number
  rateLimitApiKeyMax: number
  redisUrl: string | undefined
  /** How long a password reset link works. */
  passwordResetTtlMs: number
  /** A customer's sign-up waits for its email address to be verified (the emailed link) before it can sign in. */
  requireEmailVerification: boolean
  /** How long an email verification or email change link works. */
  emailVerificationTtlMs: number
  /** Account requests (password reset, verification, email and password change) of one kind per account per window. */
  accountRateLimitMax: number
  /** The same per client address. */
  accountRateLimitIpMax: number
  accountRateLimitWindowMs: number
  /** Failed sign-ins of one account from one client address before that address is refused for it (429). */
  loginMaxFailures: number
  /** How long failed sign-ins count, from the first. */
  loginFailureWindowMs: number
  /** Failed sign-ins of one account from all addresses before every attempt on it is slowed. */
  loginSlowdownAfter: number
  /** How much later a slowed sign-in attempt is answered. */
  loginSlowdownDelayMs: number
  trustProxy: boolean
  logLevel: LogLevel
  scryptCost: number
  /** How often WebSocket clients are pinged; one that has not answered the previous ping is dropped. */
  wsHeartbeatIntervalMs: number
  /** Open WebSocket connections one caller (user, API key, OAuth client) may hold on an instance. */
  wsMaxConnectionsPerCaller: number
  /** The most events after a WebSocket client's resume point that a resume reads; beyond it the resume is refused. */
  wsReplayMaxEvents: number
  /** Let webhook subscriptions target private, loopback and link-local addresses (local development and tests). */
  webhookAllowPrivateTargets: boolean
  /** automatic: a checkout's payment is taken at once; manual: only authorized, and captured at fulfillment (or by POST /payments/:id/capture). */
  paymentCapture: 'automatic' | 'manual'
  /** How long a checkout holds its stock and coupons while its payment waits (3-D Secure); later the worker releases them. */
  checkoutReservationTtlMs: number
  /** How long a product's detail may be answered from memory after it was read; 0: always read. A write through this instance's catalog, inventory or order routes empties it. */
  productCacheTtlMs: number
  /** The storefront's address, without a trailing slash: a draft order's payment link is `<shopUrl>/invoices/<token>`. */
  shopUrl: string
  /** Where payments go: PAYMENT_PROVIDER and the STRIPE_* settings (@commerce/payments config.ts). */
  paymentProvider: PaymentProvider
  /** The API's own public address, without a trailing slash: uploads to the API and disk files are addressed under it. */
  publicUrl: string
  /** Where uploaded files go: STORAGE and its settings (@commerce/storage config.ts). */
  storage: FileStorage
  /** The largest file an upload may be, in bytes. */
  uploadMaxBytes: number
  /** The largest CSV file an import may be (IMPORT_MAX_BYTES). */
  importMaxBytes: number
  /**
   * Browser origins allowed to call the API (CORS) and to open its WebSocket: exact origins, or
   * `'*'` for any. Undefined: no CORS headers at all, and WebSocket upgrades are not checked.
   */
  corsOrigins: '*' | readonly string[] | undefined
  /** The built admin dashboard, served at /admin/; undefined when it is not built (ADMIN_DIR, else @commerce/admin's dist/). */
  adminDir: string | undefined
  /** Where traces go (OTEL_*); undefined: no traces, and nothing of OpenTelemetry is loaded. */
  tracing: TracingSettings | undefined
  /** How long closing may take on SIGTERM before the process exits anyway. */
  shutdownGraceMs: number
}

export { ConfigError } from '@commerce/runtime/config'

/** CORS_ORIGINS: `*`, or comma-separated exact origins (`https://shop.example.com`, no path). */
const CORS_ORIGINS = custom({
  schema: Type.Union([Type.Literal('*'), Type.Array(Type.String(), { minItems: 1 })]),
  decode: (text) => {
    const entries = text.split(',').map((entry) => entry.trim()).filter(Boolean)
    if (entries.length === 1 && entries[0] === '*') return '*'
    return entries.every(isExactOrigin) ? Object.freeze([...new Set(entries)]) : undefined
  },
  problem:
    'must be * alone or comma-separated origins such as https://shop.example.com ' +
    '(scheme, lower-case host and optional port; no path or trailing slash)',
})

/** Every variable the API reads: the shared ones (@commerce/runtime, @commerce/payments) and its own. */
export const API_VARIABLES = {
  ...ENVIRONMENT,
  ...DATABASE_LOCATION,
  ...DATABASE_POOL,
  /** PostgreSQL itself, when DATABASE_URL goes through a transaction pooler. */
  DATABASE_DIRECT_URL: url(['postgres:', 'postgresql:']),
  DATABASE_PGBOUNCER: boolean(false),
  DATABASE_STATEMENT_TIMEOUT: duration({ default: '30s', bareUnit: 'ms' }),
  ...LISTENING,
  PORT: integer({ min: 0, max: 65535, default: 3000 }),
  JWT_SECRET: custom({ schema: Type.String(), decode: (text) => (Buffer.byteLength(text) >= 32 ? text : undefined), problem: 'must be at least 32 bytes long', secret: true }),
  JWT_EXPIRES_IN: duration({ default: '24h' }),
  RATE_LIMIT_MAX: integer({ min: 1, default: 60 }),
  RATE_LIMIT_WINDOW: duration({ default: '1m', bareUnit: 'ms' }),
  RATE_LIMIT_API_KEY_MAX: integer({ min: 1, default: 600 }),
  REDIS_URL: url(['redis:', 'rediss:']),
  PASSWORD_RESET_TTL: duration({ default: '30m' }),
  REQUIRE_EMAIL_VERIFICATION: boolean(false),
  EMAIL_VERIFICATION_TTL: duration({ default: '24h' }),
  ACCOUNT_RATE_LIMIT_MAX: integer({ min: 1, default: 5 }),
  ACCOUNT_RATE_LIMIT_IP_MAX: integer({ min: 1, default: 20 }),
  ACCOUNT_RATE_LIMIT_WINDOW: duration({ default: '15m', bareUnit: 'ms' }),
  LOGIN_MAX_FAILURES: integer({ min: 1, default: 10 }),
  LOGIN_FAILURE_WINDOW: duration({ default: '15m', bareUnit: 'ms' }),
  LOGIN_SLOWDOWN_AFTER: integer({ min: 1, default: 100 }),
  LOGIN_SLOWDOWN_DELAY: duration({ default: '1s', bareUnit: 'ms' }),
  TRUST_PROXY: boolean(false),
  ...PASSWORD_HASHING,
  WS_HEARTBEAT_INTERVAL: duration({ default: '30s' }),
  WS_MAX_CONNECTIONS_PER_CALLER: integer({ min: 1, max: 100_000, default: 20 }),
  WS_REPLAY_MAX_EVENTS: integer({ min: 0, max: 1_000_000, default: 10_000 }),
  ...WEBHOOK_TARGETS,
  ...PAYMENT_VARIABLES,
  PAYMENT_CAPTURE: oneOf(['automatic', 'manual'], 'automatic'),
  CHECKOUT_RESERVATION_TTL: duration({ default: '15m', bareUnit: 'ms' }),
  /** How long a product's detail or a public list page may be answered from memory after it was read (0: never); routes/products/catalog-cache.ts. */
  PRODUCT_CACHE_TTL: custom({
    schema: Type.Integer({ minimum: 0 }),
    decode: (text) => (text === '0' ? 0 : parseDuration(text, 'ms')),
    problem: 'must be 0 (off) or a duration such as 500ms or 2s',
    default: '5s',
  }),
  SHOP_URL: url(['http:', 'https:'], 'must be an http:// or https:// URL'),
  PUBLIC_URL: url(['http:', 'https:'], 'must be an http:// or https:// URL'),
  ...STORAGE_VARIABLES,
  /** The largest CSV file an import may be, in bytes (256 MiB: a catalog of about a million variants). */
  IMPORT_MAX_BYTES: integer({ min: 1024, max: 16 * 1024 * 1024 * 1024, default: 256 * 1024 * 1024 }),
  CORS_ORIGINS,
  /** Another build of the dashboard to serve at /admin/ (a folder with index.html); default: @commerce/admin's. */
  ADMIN_DIR: custom({
    schema: Type.String(),
    decode: (text) => (existsSync(join(text, 'index.html')) ? text : undefined),
    problem: 'must be a folder with index.html (a built dashboard)',
  }),
  ...LOGGING,
  ...TRACING,
  ...shutdownVariables('10s'),
}

/**
 * Reads the configuration, naming every bad variable in one error. Outside production a missing
 * JWT_SECRET is generated once and kept in the data directory, so tokens survive restarts.
 */
export function loadConfig(env: EnvironmentSource = process.env): Config {
  const { values: v, problems } = readEnvironment(API_VARIABLES, env)
  if (v.JWT_SECRET === undefined && v.NODE_ENV === 'production') problems.push('JWT_SECRET is required when NODE_ENV=production')
  const payments = choosePaymentProvider(v)
  const dataDir = v.COMMERCE_DATA_DIR ?? defaultDataDir()
  const publicUrl = (v.PUBLIC_URL ?? `http://localhost:${v.PORT}`).replace(/\/+$/, '')
  const files = chooseStorage(v, { dataDir, publicUrl })
  refuseProblems([...problems, ...payments.problems, ...files.problems])
  return Object.freeze({
    nodeEnv: v.NODE_ENV,
    databaseUrl: v.DATABASE_URL,
    databaseDirectUrl: v.DATABASE_DIRECT_URL,
    databasePgbouncer: v.DATABASE_PGBOUNCER,
    databasePoolMax: v.DATABASE_POOL_MAX,
    databaseStatementTimeoutMs: v.DATABASE_STATEMENT_TIMEOUT,
    databaseConnectTimeoutMs: v.DATABASE_CONNECT_TIMEOUT,
    dataDir,
    host: v.HOST,
    port: v.PORT,
    jwtSecret: v.JWT_SECRET ?? developmentJwtSecret(dataDir),
    jwtExpiresInSeconds: v.JWT_EXPIRES_IN / 1000,
    rateLimitMax: v.RATE_LIMIT_MAX,
    rateLimitWindowMs: v.RATE_LIMIT_WINDOW,
    rateLimitApiKeyMax: v.RATE_LIMIT_API_KEY_MAX,
    redisUrl: v.REDIS_URL,
    passwordResetTtlMs: v.PASSWORD_RESET_TTL,
    requireEmailVerification: v.REQUIRE_EMAIL_VERIFICATION,
    emailVerificationTtlMs: v.EMAIL_VERIFICATION_TTL,
    accountRateLimitMax: v.ACCOUNT_RATE_LIMIT_MAX,
    accountRateLimitIpMax: v.ACCOUNT_RATE_LIMIT_IP_MAX,
    accountRateLimitWindowMs: v.ACCOUNT_RATE_LIMIT_WINDOW,
    loginMaxFailures: v.LOGIN_MAX_FAILURES,
    loginFailureWindowMs: v.LOGIN_FAILURE_WINDOW,
    loginSlowdownAfter: v.LOGIN_SLOWDOWN_AFTER,
    loginSlowdownDelayMs: v.LOGIN_SLOWDOWN_DELAY,
    trustProxy: v.TRUST_PROXY,
    logLevel: v.LOG_LEVEL,
    scryptCost: v.SCRYPT_COST ?? DEFAULT_SCRYPT_COST,
    wsHeartbeatIntervalMs: v.WS_HEARTBEAT_INTERVAL,
    wsMaxConnectionsPerCaller: v.WS_MAX_CONNECTIONS_PER_CALLER,
    wsReplayMaxEvents: v.WS_REPLAY_MAX_EVENTS,
    webhookAllowPrivateTargets: v.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    paymentCapture: v.PAYMENT_CAPTURE,
    checkoutReservationTtlMs: v.CHECKOUT_RESERVATION_TTL,
    productCacheTtlMs: v.PRODUCT_CACHE_TTL,
    // The worker's default too (its emails' links).
    shopUrl: (v.SHOP_URL ?? 'http://localhost:3000').replace(/\/+$/, ''),
    paymentProvider: payments.provider,
    publicUrl,
    storage: files.storage,
    uploadMaxBytes: v.UPLOAD_MAX_BYTES,
    importMaxBytes: v.IMPORT_MAX_BYTES,
    corsOrigins: v.CORS_ORIGINS,
    adminDir: builtDashboard(v.ADMIN_DIR),
    tracing: tracingSettings(v, 'commerce-api'),
    shutdownGraceMs: v.SHUTDOWN_GRACE_PERIOD,
  })
}

/** The dashboard's folder: the one given, else the built @commerce/admin beside the API; undefined when it is not built. */
function builtDashboard(given: string | undefined): string | undefined {
  if (given) return given
  try {
    const folder = join(dirname(createRequire(import.meta.url).resolve('@commerce/admin/package.json')), 'dist')
    return existsSync(join(folder, 'index.html')) ? folder : undefined
  } catch {
    return undefined
  }
}

/** `https://shop.example.com[:port]` exactly as a browser sends it in `Origin`. */
function isExactOrigin(text: string): boolean {
  try {
    const url = new URL(text)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === text
  } catch {
    return false
  }
}

/** A generated secret kept in `<dataDir>/jwt-secret` (never used in production). */
function developmentJwtSecret(dataDir: string): string {
  const file = join(dataDir, 'jwt-secret')
  if (existsSync(file)) return readFileSync(file, 'utf8').trim()
  mkdirSync(dataDir, { recursive: true })
  const secret = randomBytes(48).toString('base64url')
  writeFileSync(file, secret, { mode: 0o600 })
  return secret
}
