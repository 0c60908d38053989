/**
 * How every process stops (the API, the worker, `pnpm start`): on SIGTERM or SIGINT, or after an
 * error nothing caught, it closes what it opened, the last opened first, within a grace period,
 * then exits: 0 when a signal asked and everything closed, 1 otherwise. A second signal while
 * closing exits at once (an operator pressing Ctrl-C twice means it).
 */
import type { Logger } from 'pino'

export interface ShutdownOptions {
  logger: Pick<Logger, 'info' | 'warn' | 'error' | 'debug'>
  /** How long closing may take; past it the process exits with 1 whatever is still open. */
  graceMs: number
  /** How the process ends (tests watch it); process.exit unless given. */
  exit?: (code: number) => void
}

export interface Shutdown {
  /** What to close on the way out: steps run one at a time, in the reverse order of adding. */
  add(name: string, close: () => unknown): void
  /** Closes everything and exits with `code`: the way out of a failure the process cannot go on after. */
  exit(code: number, fields?: Record<string, unknown>): Promise<void>
  /** True once closing has begun (a health check then answers 503). */
  readonly stopping: boolean
}

const SIGNALS = ['SIGTERM', 'SIGINT'] as const

export function handleShutdown(options: ShutdownOptions): Shutdown {
  const { logger, graceMs } = options
  const exit = options.exit ?? ((code: number) => process.exit(code))
  const steps: { name: string; close: () => unknown }[] = []
  let closing: Promise<void> | undefined

  const shutDown = (code: number, fields: Record<string, unknown>): Promise<void> => {
    if (closing) return closing
    const started = performance.now()
    const late = setTimeout(() => {
      logger.error({ grace_ms: graceMs, waiting_for: steps.at(-1)?.name }, 'shutdown grace period over: exiting')
      exit(1)
    }, graceMs)
    closing = (async () => {
      if (code === 0) logger.info(fields, 'shutting down')
      else logger.error(fields, 'shutting down')
      let exitCode = code
      for (let step = steps.pop(); step; step = steps.pop()) {
        try {
          await step.close()
          logger.debug({ step: step.name }, 'closed')
        } catch (error) {
          logger.error({ step: step.name, err: error }, 'could not close')
          exitCode = 1
        }
      }
      clearTimeout(late)
      logger.info({ exit_code: exitCode, duration_ms: Math.round(performance.now() - started) }, 'shut down')
      exit(exitCode)
    })()
    return closing
  }

  for (const signal of SIGNALS) {
    process.on(signal, () => {
      if (!closing) return void shutDown(0, { signal })
      logger.warn({ signal }, 'second signal: exiting without waiting')
      exit(1)
    })
  }
  process.on('uncaughtException', (error) => void shutDown(1, { err: error, reason: 'uncaught exception' }))
  process.on('unhandledRejection', (error) => void shutDown(1, { err: error, reason: 'unhandled rejection' }))

  return {
    add: (name, close) => void steps.push({ name, close }),
    exit: (code, fields = {}) => shutDown(code, fields),
    get stopping() {
      return closing !== undefined
    },
  }
}
