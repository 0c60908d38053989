/**
 * The committed events of every API instance, for this process's WebSocket clients: one LISTEN
 * connection on EVENTS_CHANNEL (postgres.js keeps it apart from the pool and listens again when
 * it drops), the ids announced while a load runs loaded together with one query, a replay from
 * the events table after each reconnect, and every few seconds a look for events committed but
 * never announced (their writer died between its COMMIT and the announcement, @commerce/db
 * announce.ts).
 */
import type { FastifyBaseLogger } from 'fastify'
import type postgres from 'postgres'
import { EVENTS_CHANNEL, eventIdsSince, eventsSince, newestEventId, notifiedEvents, type FeedEvent } from '@commerce/db'

export interface EventFeed {
  /** Listens from the first call on; a failed start is tried again by the next call. */
  start(): Promise<void>
  stop(): void
  /**
   * The largest id among the events delivered so far and those already in the table when the feed
   * started (null: none). An event committed now with a larger id has not been delivered yet, so
   * it will be after this call (announced, or found by the look for missed events), never before:
   * a client that joins now needs a replay up to this id only.
   */
  newestId(): string | null
  /**
   * Whether this id is still within the window in which the feed remembers what it delivered; one
   * older than that is sent again only if it is announced again.
   */
  remembers(id: string): boolean
}

/**
 * How far back a replay looks. Event ids are UUIDv7 made when the event is written, not when
 * it commits, so an event can commit after one with a later id: a replay reloads the whole
 * window and skips what was already delivered.
 */
export const REPLAY_WINDOW_MS = 60_000

/** How often the feed looks for events that were committed but not announced, and how far back. */
const CATCH_UP_INTERVAL_MS = 2_000
const CATCH_UP_WINDOW_MS = 10_000

/** The milliseconds since the epoch in a UUIDv7's first 48 bits. */
const idTime = (id: string) => parseInt(id.slice(0, 8) + id.slice(9, 13), 16)

/** The smallest UUID of a millisecond. */
function firstIdOf(ms: number): string {
  const hex = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0')
  return `${hex.slice(0, 8)}-${hex.slice(8)}-0000-0000-000000000000`
}

/** `sql` reads the events; `listener` holds the LISTEN connection (app.listenSql). */
export function createEventFeed(
  sql: postgres.Sql,
  listener: postgres.Sql,
  log: FastifyBaseLogger,
  deliver: (events: FeedEvent[]) => void,
): EventFeed {
  let starting: Promise<void> | null = null
  let listening: Promise<unknown> | null = null
  let stopped = false
  let listens = 0
  let listeningSince = 0
  /** The newest event time delivered, and every id delivered within the window before it. */
  let newest = 0
  let newestId: string | null = null
  const delivered = new Set<string>()
  let notified: string[] = []
  let loading = false
  let catchingUp: NodeJS.Timeout | undefined

  function accept(rows: FeedEvent[]) {
    const fresh = rows.filter((row) => !delivered.has(row.id))
    for (const row of fresh) {
      delivered.add(row.id)
      newest = Math.max(newest, idTime(row.id))
      if (newestId === null || row.id > newestId) newestId = row.id
    }
    // Ids were added in about time order: forget from the oldest until one is inside the window.
    for (const id of delivered) {
      if (idTime(id) >= newest - REPLAY_WINDOW_MS) break
      delivered.delete(id)
    }
    if (fresh.length > 0 && !stopped) deliver(fresh)
  }

  async function sendNotified() {
    while (notified.length > 0 && !stopped) {
      const ids = notified
      notified = []
      try {
        accept(await notifiedEvents(sql, ids))
      } catch (error) {
        log.error({ err: error, events: ids.length }, 'could not load notified events for WebSocket clients')
      }
    }
    loading = false
  }

  function onNotify(payload: string) {
    notified.push(...payload.split(','))
    if (loading) return
    loading = true
    // Wait a turn so that the notifications of one network read share a query.
    setImmediate(sendNotified)
  }

  async function replay() {
    const since = Math.max(newest - REPLAY_WINDOW_MS, listeningSince)
    try {
      accept(await eventsSince(sql, firstIdOf(since)))
    } catch (error) {
      log.error({ err: error }, 'could not replay events after the LISTEN connection came back')
    }
  }

  async function catchUp() {
    try {
      // Only the ids first: the events are loaded only when some are new.
      // Never before LISTEN began, as the replay: what was committed before is not this instance's
      // to send live (a connection gets the events of its own lifetime).
      const since = Math.max(newest - CATCH_UP_WINDOW_MS, listeningSince)
      const missed = (await eventIdsSince(sql, firstIdOf(since))).filter((id) => !delivered.has(id))
      if (missed.length > 0) accept(await notifiedEvents(sql, missed))
    } catch (error) {
      log.warn({ err: error }, 'could not look for events committed but not announced')
    }
  }

  function onListen() {
    // The first call is the start; later ones follow a dropped connection, which missed events.
    if (++listens > 1 && !stopped) void replay()
  }

  return {
    start() {
      starting ??= (async () => {
        // Once: a second LISTEN on the channel would hear every announcement twice.
        if (!listening) {
          listeningSince = newest = Date.now()
          listening = listener.listen(EVENTS_CHANNEL, onNotify, onListen).catch((error: unknown) => {
            listening = null
            throw error
          })
        }
        await listening
        // After LISTEN: an event committed from here on is announced to us, one committed before has an id up to this.
        const inTable = await newestEventId(sql)
        if (inTable && (newestId === null || inTable > newestId)) newestId = inTable
        catchingUp = setInterval(() => void catchUp(), CATCH_UP_INTERVAL_MS)
        catchingUp.unref()
      })().catch((error: unknown) => {
        starting = null
        throw error
      })
      return starting
    },
    // The LISTEN connection ends with the client it belongs to (database plugin).
    stop() {
      stopped = true
      clearInterval(catchingUp)
    },
    newestId: () => newestId,
    remembers: (id) => idTime(id) >= newest - REPLAY_WINDOW_MS,
  }
}
