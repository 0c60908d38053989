/** The event log as admins read it: newest first, by kind or family of kinds and by time. */
import { and, count, desc, eq, getTableColumns, gte, inArray, lt, lte, or, sql, type SQL } from 'drizzle-orm'
import { eventKindsOf, type Event, type EventList, type ListEventsQuery } from '@commerce/domain'
import { events, type Database } from '@commerce/db'
import { notFound } from '../../errors.js'
import { instant } from '../../fields.js'
import { cursorPage, decodeCursor } from '../../list-cursor.js'
import { pageMeta } from '../../list-totals.js'

/** `created_at` to the microsecond, as text a cursor keeps (a Date would drop the microseconds). */
const EVENT_CURSOR_TIME = sql<string>`to_char(${events.createdAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

/**
 * Events after (older than) a cursor's `(created_at, id)`, written so the `created_at` index
 * bounds the scan (`created_at <= at`); the row comparison alone would not use it.
 */
function olderThan(at: string, id: string): SQL {
  const time = sql`${at}::timestamptz`
  return and(lte(events.createdAt, time), or(lt(events.createdAt, time), lt(events.id, id)))!
}

function toEvent(row: typeof events.$inferSelect): Event {
  return {
    id: row.id,
    event: row.kind,
    timestamp: row.createdAt.toISOString(),
    resource_id: row.resourceId,
    sequence: row.sequence,
    data: row.data,
    customer_id: row.customerId,
  }
}

/** `order.paid` matches itself; `order.*` every kind of its family (listed, so the kind index serves it). */
function kindCondition(filter: string): SQL {
  const kinds = eventKindsOf(filter)
  return kinds.length === 1 ? eq(events.kind, kinds[0]!) : inArray(events.kind, [...kinds])
}

export function createEventService(db: Database) {
  return {
    async list(query: ListEventsQuery): Promise<EventList> {
      const after = query.after ? decodeCursor('events', query.after) : undefined
      const page = query.page ?? 1
      const perPage = query.per_page ?? 20
      const from = instant('from', query.from ?? null)
      const to = instant('to', query.to ?? null)
      const where = and(
        query.event === undefined ? undefined : kindCondition(query.event),
        from ? gte(events.createdAt, from) : undefined,
        to ? lt(events.createdAt, to) : undefined,
      )
      if (query.after !== undefined) {
        // Cursor mode: the same order, from the cursor's place on, one row more than the page to
        // tell whether another follows; nothing counted.
        const rows = await db
          .select({ ...getTableColumns(events), cursorAt: EVENT_CURSOR_TIME })
          .from(events)
          .where(and(where, after ? olderThan(...after) : undefined))
          .orderBy(desc(events.createdAt), desc(events.id))
          .limit(perPage + 1)
        const found = cursorPage('events', rows, perPage, (row) => [row.cursorAt, row.id])
        return { events: found.rows.map(toEvent), meta: found.meta }
      }
      const [rows, [counted]] = await Promise.all([
        db
          .select()
          .from(events)
          .where(where)
          .orderBy(desc(events.createdAt), desc(events.id))
          .limit(perPage)
          .offset((page - 1) * perPage),
        db.select({ total: count() }).from(events).where(where),
      ])
      return { events: rows.map(toEvent), meta: pageMeta(page, perPage, counted!.total) }
    },

    async get(id: string): Promise<Event> {
      const [row] = await db.select().from(events).where(eq(events.id, id))
      if (!row) throw notFound('Event')
      return toEvent(row)
    },
  }
}
