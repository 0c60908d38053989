/**
 * Configuration from the environment, one way for every process: a table of variables, each a
 * TypeBox schema of its value, how its text becomes that value, its default and the sentence that
 * says what is wrong. `readEnvironment` reads a table and names every refused variable at once;
 * the variables more than one process reads (the database's, the logs', the traces') are defined
 * here, once, and each process composes them with its own in its `config.ts`.
 */
import { Type, type Static, type TSchema } from 'typebox'
import { Value } from 'typebox/value'
import { parseDuration, type DurationUnit } from '@commerce/domain'

export interface Variable<S extends TSchema = TSchema, Required extends boolean = boolean> {
  /** What the value must be, once decoded. */
  schema: S
  /** The text to a candidate value; undefined when the text cannot be one. */
  decode(text: string): unknown
  /** The text used when the variable is unset or empty; none: the value is undefined. */
  default: string | undefined
  /** Whether it has a default, so always a value. */
  required: Required
  /** Completes "NAME …" when the value is refused. */
  problem: string
  /** Never shown in a message (a URL may carry a password; a key is a secret). */
  secret: boolean
}

export type VariableTable = Record<string, Variable>

/** The values of a table's variables, by name: undefined only for those without a default. */
export type Environment<T extends VariableTable> = {
  [K in keyof T]: T[K] extends Variable<infer S, infer Required> ? (Required extends true ? Static<S> : Static<S> | undefined) : never
}

export type EnvironmentSource = Readonly<Record<string, string | undefined>>

export class ConfigError extends Error {
  override readonly name = 'ConfigError'
  constructor(readonly problems: readonly string[]) {
    super(`Invalid environment:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`)
  }
}

/**
 * Reads every variable of `table` from `env` (empty values count as unset). A refused variable
 * gets its default, so that the checks that span several variables can still run, and a problem
 * naming it: `NAME must be … (got 'text')`, its text left out when it is secret.
 */
export function readEnvironment<T extends VariableTable>(table: T, env: EnvironmentSource): { values: Environment<T>; problems: string[] } {
  const values: Record<string, unknown> = {}
  const problems: string[] = []
  for (const [name, variable] of Object.entries(table)) {
    const text = env[name]?.trim() || undefined
    const fallback = variable.default === undefined ? undefined : variable.decode(variable.default)
    if (text === undefined) {
      values[name] = fallback
      continue
    }
    const value = variable.decode(text)
    if (value !== undefined && Value.Check(variable.schema, value)) {
      values[name] = value
    } else {
      values[name] = fallback
      problems.push(`${name} ${variable.problem}${variable.secret ? '' : ` (got '${text}')`}`)
    }
  }
  return { values: values as Environment<T>, problems }
}

/** Throws a ConfigError listing `problems`, if there are any. */
export function refuseProblems(problems: readonly string[]): void {
  if (problems.length > 0) throw new ConfigError(problems)
}

// The kinds of variable. Each returns a Variable with a default when given one.

/** Whether a default of type D was given (not distributed: `number | undefined` is "maybe"). */
type Given<D> = [D] extends [undefined] ? false : true

function variable<S extends TSchema, D>(schema: S, decode: (text: string) => unknown, problem: string, fallback: unknown, secret = false): Variable<S, Given<D>> {
  const text = fallback === undefined ? undefined : String(fallback)
  return { schema, decode, problem, default: text, required: text !== undefined, secret } as Variable<S, Given<D>>
}

/** Plain digits, from `min` to `max` (a fraction or a sign is refused, not rounded). */
export function integer<D extends number | undefined = undefined>(options: { min: number; max?: number; default?: D }) {
  const max = options.max ?? Number.MAX_SAFE_INTEGER
  const schema = Type.Integer({ minimum: options.min, maximum: max })
  return variable<typeof schema, D>(schema, (text) => (/^\d+$/.test(text) ? Number(text) : undefined), `must be an integer from ${options.min} to ${max}`, options.default)
}

/**
 * A duration more than zero, in milliseconds: `500ms`, `30s`, `15m`, `24h`, `7d`, or a bare
 * number in `bareUnit` (seconds unless said).
 */
export function duration<D extends string | undefined = undefined>(options: { default?: D; bareUnit?: DurationUnit; example?: string } = {}) {
  const example = options.example ?? '30s, 15m, 24h or 7d'
  return variable<ReturnType<typeof Type.Integer>, D>(Type.Integer({ exclusiveMinimum: 0 }), (text) => parseDuration(text, options.bareUnit ?? 's'), `must be a duration such as ${example}, more than zero`, options.default)
}

export function oneOf<const V extends readonly string[], D extends V[number] | undefined = undefined>(allowed: V, fallback?: D) {
  const schema = Type.Unsafe<V[number]>(Type.Union(allowed.map((value) => Type.Literal(value))))
  return variable<typeof schema, D>(schema, (text) => text, `must be one of ${allowed.join(', ')}`, fallback)
}

const TRUE = ['true', '1', 'yes']
const FALSE = ['false', '0', 'no']

/** true, 1 or yes; false, 0 or no (any case). */
export function boolean<D extends boolean | undefined = undefined>(fallback?: D) {
  const decode = (text: string) => (TRUE.includes(text.toLowerCase()) ? true : FALSE.includes(text.toLowerCase()) ? false : undefined)
  return variable<ReturnType<typeof Type.Boolean>, D>(Type.Boolean(), decode, 'must be true or false', fallback)
}

/** An absolute URL with one of `protocols` (`'postgres:'`); never echoed: it may carry a password. */
export function url(protocols: readonly string[], problem = `must be a ${protocols.map((protocol) => `${protocol}//`).join(' or ')} URL`) {
  const decode = (text: string) => {
    try {
      return protocols.includes(new URL(text).protocol) ? text : undefined
    } catch {
      return undefined
    }
  }
  return variable<ReturnType<typeof Type.String>, undefined>(Type.String(), decode, problem, undefined, true)
}

/** Any text; `secret` keeps it out of messages. */
export function text<D extends string | undefined = undefined>(options: { default?: D; secret?: boolean; problem?: string } = {}) {
  return variable<ReturnType<typeof Type.String>, D>(Type.String({ minLength: 1 }), (value) => value, options.problem ?? 'must not be empty', options.default, options.secret)
}

/** Any value `decode` accepts and `schema` allows, for the variables no kind above fits. */
export function custom<S extends TSchema, D extends string | undefined = undefined>(options: {
  schema: S
  decode: (text: string) => unknown
  problem: string
  default?: D
  secret?: boolean
}) {
  return variable<S, D>(options.schema, options.decode, options.problem, options.default, options.secret)
}

// The variables several processes read.

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

/** What the process runs as: production makes the API require JWT_SECRET and the worker an SMTP server. */
export const ENVIRONMENT = {
  NODE_ENV: oneOf(['development', 'production', 'test'], 'development'),
}

/** Where the database is: the API, the worker and the CLI. */
export const DATABASE_LOCATION = {
  /** Unset: the embedded PostgreSQL in COMMERCE_DATA_DIR. */
  DATABASE_URL: url(['postgres:', 'postgresql:']),
  /** Unset: the workspace's `.data/`. */
  COMMERCE_DATA_DIR: text({ problem: 'must be a directory path' }),
}

/** A long-running process's connection pool: the API and the worker. */
export const DATABASE_POOL = {
  DATABASE_POOL_MAX: integer({ min: 1, max: 1000, default: 10 }),
  /** The longest a query waits for a connection, to be made or to come free (a bare number is ms). */
  DATABASE_CONNECT_TIMEOUT: duration({ default: '5s', bareUnit: 'ms', example: '5s or 1500ms' }),
}

/** The API's and the worker's logs (logger.ts). */
export const LOGGING = {
  LOG_LEVEL: oneOf(LOG_LEVELS, 'info'),
}

/** Where the API listens, and the worker's health port unless WORKER_HEALTH_HOST says otherwise. */
export const LISTENING = {
  HOST: text({ default: '0.0.0.0', problem: 'must be a host name or IP address' }),
}

/** Webhook targets: checked by the API when a subscription is saved, by the worker when it connects. */
export const WEBHOOK_TARGETS = {
  WEBHOOK_ALLOW_PRIVATE_TARGETS: boolean(false),
}

/** scrypt N of new password hashes: the API (sign-up) and the CLI (`users create`). */
export const PASSWORD_HASHING = {
  SCRYPT_COST: custom({
    schema: Type.Integer({ minimum: 2, maximum: 2 ** 20 }),
    // scrypt's N is a power of two.
    decode: (text) => (/^\d+$/.test(text) && (Number(text) & (Number(text) - 1)) === 0 ? Number(text) : undefined),
    problem: `must be a power of two from 2 to ${2 ** 20}`,
  }),
}

/**
 * Traces (tracing.ts): off unless OTEL_EXPORTER_OTLP_ENDPOINT is set. The names are
 * OpenTelemetry's own, so a collector's usual settings apply unchanged.
 */
export const TRACING = {
  /** The collector's OTLP/HTTP base URL; spans go to `<it>/v1/traces`. */
  OTEL_EXPORTER_OTLP_ENDPOINT: url(['http:', 'https:'], 'must be an http:// or https:// URL'),
  /** `key=value` pairs separated by commas (an API key for a hosted collector): never logged. */
  OTEL_EXPORTER_OTLP_HEADERS: custom({
    schema: Type.Record(Type.String(), Type.String()),
    decode: parseHeaders,
    problem: 'must be comma-separated key=value pairs',
    secret: true,
  }),
  OTEL_SERVICE_NAME: text(),
}

/** Each process's grace period on SIGTERM or SIGINT (shutdown.ts), from its own default. */
export function shutdownVariables(fallback: string) {
  return { SHUTDOWN_GRACE_PERIOD: duration({ default: fallback, example: '10s or 30s' }) }
}

/** What tracing.ts needs; undefined when traces are off. */
export interface TracingSettings {
  endpoint: string
  headers: Record<string, string>
  serviceName: string
}

export function tracingSettings(values: Environment<typeof TRACING>, defaultServiceName: string): TracingSettings | undefined {
  if (values.OTEL_EXPORTER_OTLP_ENDPOINT === undefined) return undefined
  return {
    endpoint: values.OTEL_EXPORTER_OTLP_ENDPOINT,
    headers: values.OTEL_EXPORTER_OTLP_HEADERS ?? {},
    serviceName: values.OTEL_SERVICE_NAME ?? defaultServiceName,
  }
}

/** `api-key=abc,x-tenant=shop` (values percent-encoded, as OpenTelemetry specifies). */
function parseHeaders(text: string): Record<string, string> | undefined {
  const headers: Record<string, string> = {}
  for (const pair of text.split(',')) {
    const at = pair.indexOf('=')
    if (at <= 0) return undefined
    try {
      headers[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim())
    } catch {
      return undefined
    }
  }
  return headers
}
