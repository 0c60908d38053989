/** The worker's configuration: read from the environment once, validated, typed. */
import { Type, type Static, type TSchema } from 'typebox'
import { Value } from 'typebox/value'
import { parseDuration, type PaymentProvider } from '@commerce/domain'
import { LOG_LEVELS, type LogLevel } from '@commerce/db/logger'
import { paymentProviderFromEnv } from '@commerce/payments'

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
}

const DURATION = /^(\d+)(ms|s|m|h)$/
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const

/** "1m,5m,30m" → [60000, 300000, 1800000]; undefined when any part is not a duration. */
export function parseRetrySchedule(text: string): number[] | undefined {
  const waits = text.split(',').map((part) => DURATION.exec(part.trim()))
  if (waits.some((match) => !match)) return undefined
  return waits.map((match) => Number(match![1]) * UNIT_MS[match![2] as keyof typeof UNIT_MS])
}

/** A duration more than zero, as parseDuration reads it (a bare number is in the variable's default unit). */
const DURATION_PATTERN = '^0*[1-9]\\d*\\s*(ms|s|m|h|d)?$'

/** Each variable with the sentence that explains it when its value is refused. */
const VARIABLES = {
  DATABASE_URL: {
    schema: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
    problem: 'must be a postgres:// or postgresql:// URL',
  },
  COMMERCE_DATA_DIR: {
    schema: Type.Optional(Type.String({ minLength: 1 })),
    problem: 'must be a directory path',
  },
  WORKER_CONCURRENCY: {
    schema: Type.Integer({ minimum: 1, maximum: 1000, default: 5 }),
    problem: 'must be an integer >= 1 (at most 1000)',
  },
  DATABASE_POOL_MAX: {
    schema: Type.Integer({ minimum: 1, maximum: 1000, default: 10 }),
    problem: 'must be an integer >= 1 (at most 1000)',
  },
  DATABASE_CONNECT_TIMEOUT: {
    // As the API reads it: a bare number is milliseconds.
    schema: Type.String({ pattern: DURATION_PATTERN, default: '5s' }),
    problem: 'must be a duration such as 5s or 1500ms, more than zero',
  },
  PAYMENT_SWEEP_INTERVAL: {
    schema: Type.String({ pattern: DURATION_PATTERN, default: '30s' }),
    problem: 'must be a duration such as 30s or 500ms, more than zero',
  },
  PAYMENT_RECONCILE_AFTER: {
    schema: Type.String({ pattern: DURATION_PATTERN, default: '2m' }),
    problem: 'must be a duration such as 2m or 90s, more than zero',
  },
  WEBHOOK_TIMEOUT_MS: {
    schema: Type.Integer({ minimum: 100, maximum: 120_000, default: 10_000 }),
    problem: 'must be an integer number of milliseconds from 100 to 120000',
  },
  WEBHOOK_RETRY_SCHEDULE: {
    schema: Type.String({ pattern: '^\\s*\\d+(ms|s|m|h)\\s*(,\\s*\\d+(ms|s|m|h)\\s*){0,9}$', default: '1m,5m,30m' }),
    problem: 'must be up to 10 comma-separated durations with a unit ms, s, m or h (e.g. 1m,5m,30m)',
  },
  WEBHOOK_DISABLE_AFTER: {
    schema: Type.String({ pattern: '^(\\d+(ms|s|m|h|d)|never)$', default: '5d' }),
    problem: 'must be a duration with a unit ms, s, m, h or d (e.g. 5d), or never',
  },
  WEBHOOK_ALLOW_PRIVATE_TARGETS: {
    schema: Type.Union([Type.Literal('true'), Type.Literal('false')], { default: 'false' }),
    problem: 'must be true or false',
  },
  WORKER_HEALTH_PORT: {
    schema: Type.Optional(Type.Integer({ minimum: 0, maximum: 65535 })),
    problem: 'must be a port number (0 to 65535)',
  },
  WORKER_HEALTH_HOST: {
    schema: Type.Optional(Type.String({ minLength: 1 })),
    problem: 'must be a host name or IP address',
  },
  HOST: {
    schema: Type.Optional(Type.String({ minLength: 1 })),
    problem: 'must be a host name or IP address',
  },
  LOG_LEVEL: {
    schema: Type.Union(
      LOG_LEVELS.map((level) => Type.Literal(level)),
      { default: 'info' },
    ),
    problem: `must be one of ${LOG_LEVELS.join(', ')}`,
  },
} satisfies Record<string, { schema: TSchema; problem: string }>

type Name = keyof typeof VARIABLES
const NAMES = Object.keys(VARIABLES) as Name[]
const Environment = Type.Object({
  DATABASE_URL: VARIABLES.DATABASE_URL.schema,
  COMMERCE_DATA_DIR: VARIABLES.COMMERCE_DATA_DIR.schema,
  WORKER_CONCURRENCY: VARIABLES.WORKER_CONCURRENCY.schema,
  DATABASE_POOL_MAX: VARIABLES.DATABASE_POOL_MAX.schema,
  DATABASE_CONNECT_TIMEOUT: VARIABLES.DATABASE_CONNECT_TIMEOUT.schema,
  LOG_LEVEL: VARIABLES.LOG_LEVEL.schema,
  PAYMENT_SWEEP_INTERVAL: VARIABLES.PAYMENT_SWEEP_INTERVAL.schema,
  PAYMENT_RECONCILE_AFTER: VARIABLES.PAYMENT_RECONCILE_AFTER.schema,
  WEBHOOK_TIMEOUT_MS: VARIABLES.WEBHOOK_TIMEOUT_MS.schema,
  WEBHOOK_RETRY_SCHEDULE: VARIABLES.WEBHOOK_RETRY_SCHEDULE.schema,
  WEBHOOK_DISABLE_AFTER: VARIABLES.WEBHOOK_DISABLE_AFTER.schema,
  WEBHOOK_ALLOW_PRIVATE_TARGETS: VARIABLES.WEBHOOK_ALLOW_PRIVATE_TARGETS.schema,
  WORKER_HEALTH_PORT: VARIABLES.WORKER_HEALTH_PORT.schema,
  WORKER_HEALTH_HOST: VARIABLES.WORKER_HEALTH_HOST.schema,
  HOST: VARIABLES.HOST.schema,
})
type Environment = Static<typeof Environment>

/** Values that may be echoed back in an error message (a URL may carry a password). */
const ECHOED: ReadonlySet<Name> = new Set([
  'WORKER_CONCURRENCY',
  'DATABASE_POOL_MAX',
  'DATABASE_CONNECT_TIMEOUT',
  'LOG_LEVEL',
  'PAYMENT_SWEEP_INTERVAL',
  'PAYMENT_RECONCILE_AFTER',
  'WEBHOOK_TIMEOUT_MS',
  'WEBHOOK_RETRY_SCHEDULE',
  'WEBHOOK_DISABLE_AFTER',
  'WEBHOOK_ALLOW_PRIVATE_TARGETS',
  'WORKER_HEALTH_PORT',
])

/**
 * Reads the configuration, naming every bad variable in one error. Empty values count as unset.
 * Integers are converted only from plain digits: TypeBox's Convert would quietly turn "2.5" into 2.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const input: Record<string, unknown> = {}
  for (const name of NAMES) {
    const value = env[name]?.trim()
    if (value === undefined || value === '') continue
    const schema: object = VARIABLES[name].schema
    const integer = 'type' in schema && schema.type === 'integer' && /^\d+$/.test(value)
    input[name] = integer ? Number(value) : value
  }
  const candidate = Value.Default(Environment, input)
  const payments = paymentProviderFromEnv(env)
  if (!Value.Check(Environment, candidate) || payments.problems.length > 0) {
    const bad = new Set<Name>()
    for (const error of Value.Errors(Environment, candidate)) {
      const name = error.instancePath.split('/')[1] as Name | undefined
      if (name && name in VARIABLES) bad.add(name)
    }
    const problems = NAMES.filter((name) => bad.has(name)).map((name) => {
      const got = ECHOED.has(name) ? ` (got '${String(input[name])}')` : ''
      return `${name} ${VARIABLES[name].problem}${got}`
    })
    throw new Error(`Invalid environment: ${[...problems, ...payments.problems].join('; ')}`)
  }
  const valid = candidate as Environment
  return {
    databaseUrl: valid.DATABASE_URL,
    dataDir: valid.COMMERCE_DATA_DIR,
    databasePoolMax: valid.DATABASE_POOL_MAX,
    databaseConnectTimeoutMs: parseDuration(valid.DATABASE_CONNECT_TIMEOUT, 'ms')!,
    concurrency: valid.WORKER_CONCURRENCY,
    logLevel: valid.LOG_LEVEL,
    webhookTimeoutMs: valid.WEBHOOK_TIMEOUT_MS,
    webhookRetrySchedule: parseRetrySchedule(valid.WEBHOOK_RETRY_SCHEDULE)!,
    webhookDisableAfterMs: valid.WEBHOOK_DISABLE_AFTER === 'never' ? null : parseDuration(valid.WEBHOOK_DISABLE_AFTER)!,
    webhookAllowPrivateTargets: valid.WEBHOOK_ALLOW_PRIVATE_TARGETS === 'true',
    healthPort: valid.WORKER_HEALTH_PORT,
    healthHost: valid.WORKER_HEALTH_HOST ?? valid.HOST ?? '0.0.0.0',
    paymentProvider: payments.provider,
    paymentSweepIntervalMs: parseDuration(valid.PAYMENT_SWEEP_INTERVAL)!,
    paymentReconcileAfterMs: parseDuration(valid.PAYMENT_RECONCILE_AFTER)!,
  }
}
