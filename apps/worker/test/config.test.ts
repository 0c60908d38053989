import { describe, expect, it } from 'vitest'
import { loadConfig } from '../src/config.js'

describe('loadConfig', () => {
  it('uses the defaults when nothing is set, leaving DATABASE_URL unset for the embedded database', () => {
    expect(loadConfig({})).toEqual({ databaseUrl: undefined, dataDir: undefined, databasePoolMax: 10, concurrency: 5, logLevel: 'info' })
  })

  it('reads every variable and treats empty values as unset', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgresql://app:pw@db:5432/commerce',
      WORKER_CONCURRENCY: '12',
      DATABASE_POOL_MAX: ' 4 ',
      LOG_LEVEL: 'debug',
      COMMERCE_DATA_DIR: '/srv/commerce/.data',
    })
    expect(config).toEqual({
      databaseUrl: 'postgresql://app:pw@db:5432/commerce',
      dataDir: '/srv/commerce/.data',
      databasePoolMax: 4,
      concurrency: 12,
      logLevel: 'debug',
    })
    expect(loadConfig({ WORKER_CONCURRENCY: '', LOG_LEVEL: '' })).toMatchObject({ concurrency: 5, logLevel: 'info' })
  })

  it('names every bad variable in one error', () => {
    expect(() => loadConfig({ WORKER_CONCURRENCY: 'abc', LOG_LEVEL: 'loud', DATABASE_POOL_MAX: '0' })).toThrow(
      "Invalid environment: WORKER_CONCURRENCY must be an integer >= 1 (at most 1000) (got 'abc'); " +
        "DATABASE_POOL_MAX must be an integer >= 1 (at most 1000) (got '0'); " +
        'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got \'loud\')',
    )
  })

  it('refuses fractional and negative integers rather than rounding them', () => {
    expect(() => loadConfig({ WORKER_CONCURRENCY: '2.5' })).toThrow(/WORKER_CONCURRENCY must be an integer >= 1/)
    expect(() => loadConfig({ WORKER_CONCURRENCY: '-3' })).toThrow(/WORKER_CONCURRENCY must be an integer >= 1/)
  })

  it('refuses a non-postgres DATABASE_URL without echoing it (it may hold a password)', () => {
    let message = ''
    try {
      loadConfig({ DATABASE_URL: 'mysql://root:hunter22@db/shop' })
    } catch (error) {
      message = (error as Error).message
    }
    expect(message).toBe('Invalid environment: DATABASE_URL must be a postgres:// or postgresql:// URL')
    expect(message).not.toContain('hunter22')
  })
})
