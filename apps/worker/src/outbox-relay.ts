/**
 * The outbox relay: turns the outbox rows of committed transactions (written with their events by
 * writeEvents) into fan-out jobs, deleting each row in the statement that adds its job, so a row
 * becomes exactly one job whatever crashes. It wakes on the NOTIFY every event sends at commit,
 * and sweeps on a timer too, for rows committed while it was not listening (a lost connection, no
 * worker running). Several workers relay side by side: each takes rows the others have not locked.
 */
import pg from 'pg'
import { EVENTS_CHANNEL, TASKS } from '@commerce/db'
import type { Logger } from './logger.js'

/** Outbox rows (transactions) moved per statement. */
export const RELAY_BATCH = 500

const RELAY = `with moved as (
  delete from event_outbox where id in (select id from event_outbox order by id limit $1 for update skip locked)
  returning id, event_ids)
select count(*)::int as "moved", case when count(*) > 0 then (
  select count(*) from graphile_worker.add_jobs(array(
    select row('${TASKS.fanOutEvent}', json_build_object('event_ids', event_ids), null, null, null, null, null, null)::graphile_worker.job_spec
    from moved order by id))) end as "queued"
from moved`

export interface OutboxRelaySettings {
  databaseUrl: string
  /** How long the LISTEN connection may take to be made. */
  connectTimeoutMs: number
  pool: pg.Pool
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
export async function relayOutbox(pool: pg.Pool, onRelayed?: (transactions: number) => void): Promise<number> {
  let total = 0
  for (;;) {
    const { rows } = await pool.query<{ moved: number }>(RELAY, [RELAY_BATCH])
    const moved = rows[0]?.moved ?? 0
    if (moved > 0) onRelayed?.(moved)
    total += moved
    if (moved < RELAY_BATCH) return total
  }
}

export async function startOutboxRelay(settings: OutboxRelaySettings): Promise<OutboxRelay> {
  const { pool, logger } = settings
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
    running = relayOutbox(pool, settings.onRelayed)
      .then(
        () => undefined,
        (error: unknown) => logger.warn('could not relay the event outbox', { error: error instanceof Error ? error.message : String(error) }),
      )
      .finally(() => {
        running = undefined
        if (again) wake()
      })
  }

  let listener: pg.Client | undefined
  let reconnect: NodeJS.Timeout | undefined
  const listen = async (): Promise<void> => {
    const client = new pg.Client({
      connectionString: settings.databaseUrl,
      connectionTimeoutMillis: settings.connectTimeoutMs,
      application_name: 'commerce-worker-relay',
    })
    const lost = (error?: Error) => {
      if (listener !== client) return
      listener = undefined
      client.removeAllListeners()
      client.on('error', () => {})
      void client.end().catch(() => {})
      if (stopped) return
      logger.warn('event outbox listener lost; reconnecting', { error: error?.message })
      reconnect = setTimeout(() => void listen().catch(() => {}), 1_000)
    }
    listener = client
    client.on('error', lost)
    client.on('end', () => lost())
    client.on('notification', wake)
    try {
      await client.connect()
      await client.query(`listen ${EVENTS_CHANNEL}`)
    } catch (error) {
      lost(error as Error)
      throw error
    }
    // Whatever committed before the LISTEN took effect.
    wake()
  }

  await listen()
  const sweep = setInterval(wake, settings.sweepIntervalMs)
  sweep.unref()

  return {
    async stop() {
      stopped = true
      clearInterval(sweep)
      clearTimeout(reconnect)
      const client = listener
      listener = undefined
      if (client) {
        client.removeAllListeners()
        client.on('error', () => {})
        await client.end().catch(() => {})
      }
      await running
    },
  }
}
