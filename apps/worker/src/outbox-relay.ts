/**
 * The outbox relay: turns the outbox rows of committed transactions (written with their events by
 * writeEvents) into fan-out jobs, deleting each row in the statement that adds its job, so a row
 * becomes exactly one job whatever crashes (@commerce/db worker-jobs.ts). It wakes on the NOTIFY
 * every event sends at commit, and sweeps on a timer too, for rows committed while it was not
 * listening (a lost connection, no worker running). Several workers relay side by side: each
 * takes rows the others have not locked.
 */
import { EVENTS_CHANNEL, createDb, relayOutboxRows, type SqlClient } from '@commerce/db'
import type { Logger } from './logger.js'

/** Outbox rows (transactions) moved per statement. */
export const RELAY_BATCH = 500

export interface OutboxRelaySettings {
  /** Where the relay LISTENs, on a connection of its own. */
  databaseUrl: string
  /** How long the LISTEN connection may take to be made. */
  connectTimeoutMs: number
  /** Where the relay's statements run. */
  sql: SqlClient
  logger: Logger
  /** How often the relay sweeps without being woken. */
  sweepIntervalMs: number
  /** Called with the number of transactions relayed by each statement that moved some. */
  onRelayed?: (transactions: number) => void
}

export interface OutboxRelay {
  /** Stops listening and sweeping, and waits for a relay under way. */
  stop(): Promise<void>
}

/** Moves every outbox row there is (in batches); answers how many. */
export async function relayOutbox(sql: SqlClient, onRelayed?: (transactions: number) => void): Promise<number> {
  let total = 0
  for (;;) {
    const moved = await relayOutboxRows(sql, RELAY_BATCH)
    if (moved > 0) onRelayed?.(moved)
    total += moved
    if (moved < RELAY_BATCH) return total
  }
}

export async function startOutboxRelay(settings: OutboxRelaySettings): Promise<OutboxRelay> {
  const { sql, logger } = settings
  let stopped = false
  let running: Promise<void> | undefined
  let again = false

  // One relay at a time; a wake-up during one runs it once more afterwards (its rows may have
  // committed after the statement's snapshot).
  const wake = (): void => {
    if (stopped) return
    if (running) {
      again = true
      return
    }
    again = false
    running = relayOutbox(sql, settings.onRelayed)
      .then(
        () => undefined,
        (error: unknown) => logger.warn('could not relay the event outbox', { error: error instanceof Error ? error.message : String(error) }),
      )
      .finally(() => {
        running = undefined
        if (again) wake()
      })
  }

  // postgres.js keeps the LISTEN connection apart from the pool and listens again when it drops.
  const listener = createDb({ url: settings.databaseUrl, poolMax: 1, connectTimeoutMs: settings.connectTimeoutMs, applicationName: 'commerce-worker-relay' })
  let listens = 0
  const onListen = () => {
    if (++listens > 1) logger.warn('event outbox listener lost; listening again')
    // Whatever committed before the LISTEN took effect.
    wake()
  }
  try {
    await listener.sql.listen(EVENTS_CHANNEL, wake, onListen)
  } catch (error) {
    await listener.close()
    throw error
  }
  const sweep = setInterval(wake, settings.sweepIntervalMs)
  sweep.unref()

  return {
    async stop() {
      stopped = true
      clearInterval(sweep)
      await listener.close()
      await running
    },
  }
}
