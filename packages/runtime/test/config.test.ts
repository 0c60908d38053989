import { describe, expect, it } from 'vitest'
import {
  ConfigError,
  DATABASE_LOCATION,
  DATABASE_POOL,
  TRACING,
  boolean,
  duration,
  integer,
  oneOf,
  readEnvironment,
  refuseProblems,
  text,
  tracingSettings,
} from '../src/config.js'

const TABLE = {
  COUNT: integer({ min: 1, max: 100, default: 5 }),
  WAIT: duration({ default: '30s' }),
  SHORT_WAIT: duration({ default: '250', bareUnit: 'ms' }),
  MODE: oneOf(['fast', 'safe'], 'safe'),
  ENABLED: boolean(false),
  NAME: text(),
  TOKEN: text({ secret: true }),
}

describe('readEnvironment', () => {
  it('gives each variable its default when unset or empty, and undefined to those without one', () => {
    const { values, problems } = readEnvironment(TABLE, { COUNT: '', MODE: '  ' })
    expect(problems).toEqual([])
    expect(values).toEqual({ COUNT: 5, WAIT: 30_000, SHORT_WAIT: 250, MODE: 'safe', ENABLED: false, NAME: undefined, TOKEN: undefined })
  })

  it('reads each kind from its text, trimmed', () => {
    const { values } = readEnvironment(TABLE, { COUNT: ' 42 ', WAIT: '2m', SHORT_WAIT: '1500', MODE: 'fast', ENABLED: 'YES', NAME: 'shop', TOKEN: 't0k3n' })
    expect(values).toEqual({ COUNT: 42, WAIT: 120_000, SHORT_WAIT: 1500, MODE: 'fast', ENABLED: true, NAME: 'shop', TOKEN: 't0k3n' })
    for (const [given, read] of [['1', true], ['true', true], ['no', false], ['0', false], ['False', false]] as const) {
      expect(readEnvironment(TABLE, { ENABLED: given }).values.ENABLED).toBe(read)
    }
  })

  it('names every refused variable with what is wrong and what it got, and gives it its default meanwhile', () => {
    const { values, problems } = readEnvironment(TABLE, { COUNT: '2.5', WAIT: 'soon', MODE: 'reckless', ENABLED: 'maybe' })
    expect(problems).toEqual([
      "COUNT must be an integer from 1 to 100 (got '2.5')",
      "WAIT must be a duration such as 30s, 15m, 24h or 7d, more than zero (got 'soon')",
      "MODE must be one of fast, safe (got 'reckless')",
      "ENABLED must be true or false (got 'maybe')",
    ])
    expect(values).toMatchObject({ COUNT: 5, WAIT: 30_000, MODE: 'safe', ENABLED: false })
    // A sign, zero or a value out of range is refused, not rounded or clamped.
    expect(readEnvironment(TABLE, { COUNT: '-3', WAIT: '0s' }).problems).toHaveLength(2)
    expect(readEnvironment(TABLE, { COUNT: '101' }).problems).toEqual(["COUNT must be an integer from 1 to 100 (got '101')"])
  })

  it('never shows the value of a secret or of a URL (it may carry a password)', () => {
    const { problems } = readEnvironment({ ...DATABASE_LOCATION, ...TRACING }, {
      DATABASE_URL: 'mysql://root:hunter22@db/shop',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://collector',
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key',
    })
    expect(problems).toEqual([
      'DATABASE_URL must be a postgres:// or postgresql:// URL',
      'OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL',
      'OTEL_EXPORTER_OTLP_HEADERS must be comma-separated key=value pairs',
    ])
  })

  it('reads the shared database variables as the API and the worker document them', () => {
    const { values } = readEnvironment({ ...DATABASE_LOCATION, ...DATABASE_POOL }, { DATABASE_URL: 'postgresql://app@db/shop', DATABASE_CONNECT_TIMEOUT: '1500' })
    expect(values).toEqual({ DATABASE_URL: 'postgresql://app@db/shop', COMMERCE_DATA_DIR: undefined, DATABASE_POOL_MAX: 10, DATABASE_CONNECT_TIMEOUT: 1500 })
  })
})

describe('refuseProblems', () => {
  it('throws one ConfigError listing every problem, a line each', () => {
    expect(() => refuseProblems([])).not.toThrow()
    expect(() => refuseProblems(['A must be x', 'B must be y'])).toThrow(new ConfigError(['A must be x', 'B must be y']))
    expect(new ConfigError(['A must be x', 'B must be y']).message).toBe('Invalid environment:\n  - A must be x\n  - B must be y')
  })
})

describe('tracingSettings', () => {
  it('is undefined (traces off) unless OTEL_EXPORTER_OTLP_ENDPOINT is set', () => {
    expect(tracingSettings(readEnvironment(TRACING, {}).values, 'commerce-api')).toBeUndefined()
  })

  it('takes the endpoint, the headers (percent-decoded) and the service name, defaulting to the process’s', () => {
    const on = readEnvironment(TRACING, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_EXPORTER_OTLP_HEADERS: 'api-key=a%2Cb, x-team=shop' }).values
    expect(tracingSettings(on, 'commerce-api')).toEqual({ endpoint: 'http://collector:4318', headers: { 'api-key': 'a,b', 'x-team': 'shop' }, serviceName: 'commerce-api' })
    const named = readEnvironment(TRACING, { OTEL_EXPORTER_OTLP_ENDPOINT: 'https://collector', OTEL_SERVICE_NAME: 'shop-api' }).values
    expect(tracingSettings(named, 'commerce-api')).toMatchObject({ headers: {}, serviceName: 'shop-api' })
  })
})
