import { describe, expect, it } from 'vitest'
import { redactUrl } from '@commerce/db'
import { createLogger, graphileLogger } from '../src/logger.js'

function capture(level: Parameters<typeof createLogger>[0]) {
  const lines: Record<string, unknown>[] = []
  const logger = createLogger(level, (line) => lines.push(JSON.parse(line) as Record<string, unknown>))
  return { logger, lines }
}

/** The fields pino adds to every line of the worker (@commerce/runtime/logger). */
const BASE = { time: expect.any(String), pid: process.pid, hostname: expect.any(String), name: 'worker' }

describe('logger', () => {
  it('writes one JSON object per line in the shared shape: level by name, ISO time, name, msg and the fields', () => {
    const { logger, lines } = capture('info')
    logger.info('worker started', { concurrency: 5 })
    expect(lines).toEqual([{ ...BASE, level: 'info', msg: 'worker started', concurrency: 5 }])
    expect(new Date(lines[0]!.time as string).toISOString()).toBe(lines[0]!.time)
  })

  it('drops entries below the configured level and everything when silent', () => {
    const warn = capture('warn')
    warn.logger.info('hidden')
    warn.logger.debug('hidden')
    warn.logger.warn('shown')
    warn.logger.error('shown too')
    expect(warn.lines.map((line) => line.level)).toEqual(['warn', 'error'])
    const silent = capture('silent')
    silent.logger.error('hidden')
    expect(silent.lines).toEqual([])
  })

  it('serialises errors with their message and stack', () => {
    const { logger, lines } = capture('info')
    logger.error('worker failed', { error: new Error('connection refused') })
    expect(lines[0]!.error).toMatchObject({ type: 'Error', message: 'connection refused', stack: expect.stringContaining('Error: connection refused') })
  })

  it("maps Graphile Worker's levels and scope onto our lines", () => {
    const { logger, lines } = capture('debug')
    const graphile = graphileLogger(logger).scope({ taskIdentifier: 'deliver-webhook' })
    graphile.warn('job failed', { attempts: 2 })
    graphile.debug('polling')
    expect(lines).toEqual([
      { ...BASE, level: 'warn', msg: 'job failed', component: 'graphile-worker', taskIdentifier: 'deliver-webhook', attempts: 2 },
      { ...BASE, level: 'debug', msg: 'polling', component: 'graphile-worker', taskIdentifier: 'deliver-webhook' },
    ])
  })

  it('masks the password of a database URL', () => {
    expect(redactUrl('postgres://app:s3cret@db.internal:5432/commerce')).toBe('postgres://app:***@db.internal:5432/commerce')
    expect(redactUrl('postgres://app@db/commerce')).toBe('postgres://app@db/commerce')
    expect(redactUrl('not a url :s3cret')).toBe('<unparseable URL>')
  })
})
