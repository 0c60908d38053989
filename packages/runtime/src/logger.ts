/**
 * The one log shape of every process — the API, the worker and `pnpm start`: pino JSON lines on
 * standard output with `level` as its name ("info"), `time` in ISO 8601, `name` the process
 * ("api", "worker", "start") and, on a request's lines, its id as `request_id` (the name the error
 * body and the event log use). When standard output is a terminal the same entries are printed
 * for a person instead (pino-pretty, in the process: nothing to lose at exit, no thread to start);
 * a deployment's standard output is a pipe or a file, so it always gets JSON.
 *
 * Why this shape: a level by name and an ISO time read the same to a person, `jq` and a log
 * store, with no table of pino's numbers or epoch conversion; `request_id` is the name the API's
 * error body, its `X-Request-Id` and the events table give the same id, so one search finds a
 * request's lines, its error and the webhook deliveries it caused.
 */
import { createRequire } from 'node:module'
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino'
import type { LogLevel } from './config.js'

export type { DestinationStream as LogDestination, Logger as ProcessLogger } from 'pino'
export type { LogLevel } from './config.js'

/** The field that carries a request's id on each of its log lines. */
export const REQUEST_ID_LOG_FIELD = 'request_id'

/** pino options of the shared shape; a process adds its own (redaction, serializers) over them. */
export function logOptions(name: string, level: LogLevel): LoggerOptions {
  return {
    name,
    level,
    formatters: { level: (label: string) => ({ level: label }) },
    timestamp: pino.stdTimeFunctions.isoTime,
    // Errors are logged as `err` (pino's and Fastify's name) or `error` (the worker's).
    serializers: { err: pino.stdSerializers.err, error: pino.stdSerializers.err },
  }
}

const require = createRequire(import.meta.url)

/** Standard output: JSON lines, or lines for people when it is a terminal. */
export function logDestination(): DestinationStream | undefined {
  if (!process.stdout.isTTY) return undefined // pino's own asynchronous stdout, flushed at exit
  // Loaded only here: a deployment never needs it.
  const pretty = require('pino-pretty') as typeof import('pino-pretty')
  return pretty({ sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true })
}

/**
 * A process's own logger (start-up, shutdown, the worker's jobs): each line written at once, so
 * exiting never waits on a flush (pino's asynchronous stdout, whose reader has gone, would keep
 * `process.exit` waiting for ever). The API's request lines go through Fastify's logger instead.
 */
export function createLogger(name: string, level: LogLevel, destination: DestinationStream | undefined = logDestination() ?? pino.destination({ dest: 1, sync: true })): Logger {
  return pino(logOptions(name, level), destination)
}
