/** The API's configuration: read from the environment once, validated, frozen. */
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DEFAULT_SCRYPT_COST, parseDuration, type DurationUnit, type PaymentProvider } from '@commerce/domain'
import { defaultDataDir } from '@commerce/db'
import { paymentProviderFromEnv } from '@commerce/payments'
import { LOG_LEVELS, type LogLevel } from '@commerce/db/logger'

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
  /** Where payments go: PAYMENT_PROVIDER and the STRIPE_* settings (@commerce/payments config.ts). */
  paymentProvider: PaymentProvider
  /**
   * Browser origins allowed to call the API (CORS) and to open its WebSocket: exact origins, or
   * `'*'` for any. Undefined: no CORS headers at all, and WebSocket upgrades are not checked.
   */
  corsOrigins: '*' | readonly string[] | undefined
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError'
}

const NODE_ENVS = ['development', 'production', 'test'] as const

/**
 * Reads the configuration, naming every bad variable in one error. Outside production a missing
 * JWT_SECRET is generated once and kept in the data directory, so tokens survive restarts.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = []
  const text = (name: string) => {
    const value = env[name]?.trim()
    return value === '' ? undefined : value
  }
  const integer = (name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER) => {
    const value = text(name)
    if (value === undefined) return fallback
    const parsed = Number(value)
    if (!/^\d+$/.test(value) || parsed < min || parsed > max) {
      problems.push(`${name} must be an integer from ${min} to ${max} (got '${value}')`)
      return fallback
    }
    return parsed
  }
  const duration = (name: string, fallback: string, defaultUnit: DurationUnit) => {
    const value = text(name) ?? fallback
    const parsed = parseDuration(value, defaultUnit)
    if (parsed === undefined || parsed <= 0) {
      problems.push(`${name} must be a duration such as 30s, 15m, 24h or 7d (got '${value}')`)
      return parseDuration(fallback, defaultUnit)!
    }
    return parsed
  }
  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const value = text(name) ?? fallback
    if (!allowed.includes(value as T)) {
      problems.push(`${name} must be one of ${allowed.join(', ')} (got '${value}')`)
      return fallback
    }
    return value as T
  }
  const boolean = (name: string, fallback: boolean) => {
    const value = text(name)?.toLowerCase()
    if (value === undefined) return fallback
    if (['true', '1', 'yes'].includes(value)) return true
    if (['false', '0', 'no'].includes(value)) return false
    problems.push(`${name} must be true or false (got '${value}')`)
    return fallback
  }
  const url = (name: string, protocols: string[]) => {
    const value = text(name)
    if (value === undefined) return undefined
    try {
      if (protocols.includes(new URL(value).protocol)) return value
    } catch {
      // reported below
    }
    problems.push(`${name} must be a ${protocols.join(' or ')}// URL`)
    return undefined
  }

  /** CORS_ORIGINS: `*`, or comma-separated exact origins (`https://shop.example.com`, no path). */
  const origins = (name: string): Config['corsOrigins'] => {
    const value = text(name)
    if (value === undefined) return undefined
    const entries = value.split(',').map((entry) => entry.trim()).filter(Boolean)
    if (entries.length === 1 && entries[0] === '*') return '*'
    const bad = entries.filter((entry) => entry === '*' || !isExactOrigin(entry))
    if (entries.length === 0 || bad.length > 0) {
      problems.push(
        `${name} must be * alone or comma-separated origins such as https://shop.example.com ` +
          `(scheme, lower-case host and optional port; no path or trailing slash) (got '${bad.join(', ') || value}')`,
      )
      return undefined
    }
    return Object.freeze([...new Set(entries)])
  }

  const nodeEnv = oneOf('NODE_ENV', NODE_ENVS, 'development')
  const dataDir = text('COMMERCE_DATA_DIR') ?? defaultDataDir()
  let jwtSecret = text('JWT_SECRET')
  if (jwtSecret !== undefined && Buffer.byteLength(jwtSecret) < 32) {
    problems.push('JWT_SECRET must be at least 32 bytes long')
  }
  if (jwtSecret === undefined && nodeEnv === 'production') {
    problems.push('JWT_SECRET is required when NODE_ENV=production')
  }
  const payments = paymentProviderFromEnv(env)
  problems.push(...payments.problems)
  const config: Omit<Config, 'jwtSecret'> = {
    nodeEnv,
    databaseUrl: url('DATABASE_URL', ['postgres:', 'postgresql:']),
    databaseDirectUrl: url('DATABASE_DIRECT_URL', ['postgres:', 'postgresql:']),
    databasePgbouncer: boolean('DATABASE_PGBOUNCER', false),
    databasePoolMax: integer('DATABASE_POOL_MAX', 10, 1, 1000),
    databaseStatementTimeoutMs: duration('DATABASE_STATEMENT_TIMEOUT', '30s', 'ms'),
    databaseConnectTimeoutMs: duration('DATABASE_CONNECT_TIMEOUT', '5s', 'ms'),
    dataDir,
    host: text('HOST') ?? '0.0.0.0',
    port: integer('PORT', 3000, 0, 65535),
    jwtExpiresInSeconds: duration('JWT_EXPIRES_IN', '24h', 's') / 1000,
    rateLimitMax: integer('RATE_LIMIT_MAX', 60, 1),
    rateLimitWindowMs: duration('RATE_LIMIT_WINDOW', '1m', 'ms'),
    rateLimitApiKeyMax: integer('RATE_LIMIT_API_KEY_MAX', 600, 1),
    redisUrl: url('REDIS_URL', ['redis:', 'rediss:']),
    loginMaxFailures: integer('LOGIN_MAX_FAILURES', 10, 1),
    loginFailureWindowMs: duration('LOGIN_FAILURE_WINDOW', '15m', 'ms'),
    loginSlowdownAfter: integer('LOGIN_SLOWDOWN_AFTER', 100, 1),
    loginSlowdownDelayMs: duration('LOGIN_SLOWDOWN_DELAY', '1s', 'ms'),
    trustProxy: boolean('TRUST_PROXY', false),
    logLevel: oneOf('LOG_LEVEL', LOG_LEVELS, 'info'),
    scryptCost: integer('SCRYPT_COST', DEFAULT_SCRYPT_COST, 2),
    wsHeartbeatIntervalMs: duration('WS_HEARTBEAT_INTERVAL', '30s', 's'),
    wsMaxConnectionsPerCaller: integer('WS_MAX_CONNECTIONS_PER_CALLER', 20, 1, 100_000),
    wsReplayMaxEvents: integer('WS_REPLAY_MAX_EVENTS', 10_000, 0, 1_000_000),
    webhookAllowPrivateTargets: boolean('WEBHOOK_ALLOW_PRIVATE_TARGETS', false),
    paymentCapture: oneOf('PAYMENT_CAPTURE', ['automatic', 'manual'] as const, 'automatic'),
    checkoutReservationTtlMs: duration('CHECKOUT_RESERVATION_TTL', '15m', 'ms'),
    paymentProvider: payments.provider,
    corsOrigins: origins('CORS_ORIGINS'),
  }
  if ((config.scryptCost & (config.scryptCost - 1)) !== 0) problems.push('SCRYPT_COST must be a power of two')
  if (problems.length > 0) {
    throw new ConfigError(`Invalid environment:\n  - ${problems.join('\n  - ')}`)
  }
  jwtSecret ??= developmentJwtSecret(dataDir)
  return Object.freeze({ ...config, jwtSecret })
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
