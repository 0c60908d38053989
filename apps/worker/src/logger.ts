/** Structured logs: one JSON object per line on stdout, and the adapter Graphile Worker logs through. */
import { Logger as GraphileLogger, type LogFunctionFactory } from 'graphile-worker'
import type { LogLevel } from './config.js'

export interface Logger {
  error(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  debug(msg: string, fields?: Record<string, unknown>): void
}

const SEVERITY: Record<LogLevel, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: 100 }

function serialise(value: unknown): unknown {
  return value instanceof Error ? { name: value.name, message: value.message, stack: value.stack } : value
}

export function createLogger(level: LogLevel, write: (line: string) => void = (line) => process.stdout.write(line)): Logger {
  const at = (entryLevel: 'error' | 'warn' | 'info' | 'debug') => (msg: string, fields: Record<string, unknown> = {}) => {
    if (SEVERITY[entryLevel] < SEVERITY[level]) return
    const entry: Record<string, unknown> = { level: entryLevel, time: new Date().toISOString(), msg }
    for (const [key, value] of Object.entries(fields)) entry[key] = serialise(value)
    write(`${JSON.stringify(entry)}\n`)
  }
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') }
}

/** Routes Graphile Worker's own messages (connections, jobs, failures) into our JSON lines. */
export function graphileLogger(logger: Logger): GraphileLogger {
  const factory: LogFunctionFactory = (scope) => (level, message, meta) => {
    const fields = { component: 'graphile-worker', ...scope, ...meta }
    // Graphile's levels are error, warning, info, debug.
    switch (level as string) {
      case 'error':
        return logger.error(message, fields)
      case 'warning':
        return logger.warn(message, fields)
      case 'info':
        return logger.info(message, fields)
      default:
        return logger.debug(message, fields)
    }
  }
  return new GraphileLogger(factory)
}
