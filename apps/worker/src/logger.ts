/**
 * The worker's logs: the shared shape of @commerce/runtime/logger (pino), and the adapter Graphile
 * Worker logs through. The worker calls its logger message first (`logger.warn('msg', fields)`).
 */
import { Logger as GraphileLogger, type LogFunctionFactory } from 'graphile-worker'
import { createLogger as createProcessLogger, type LogLevel, type ProcessLogger } from '@commerce/runtime/logger'

export interface Logger {
  error(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  debug(msg: string, fields?: Record<string, unknown>): void
}

/** Standard output, unless `write` is given (tests): it then receives each line. */
export function createLogger(level: LogLevel, write?: (line: string) => void): Logger {
  return messageFirst(createProcessLogger('worker', level, write && { write }))
}

/** The process's pino logger, called message first. */
export function messageFirst(log: ProcessLogger): Logger {
  return {
    error: (msg, fields) => log.error(fields, msg),
    warn: (msg, fields) => log.warn(fields, msg),
    info: (msg, fields) => log.info(fields, msg),
    debug: (msg, fields) => log.debug(fields, msg),
  }
}

/** Routes Graphile Worker's own messages (connections, jobs, failures) into our lines. */
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
