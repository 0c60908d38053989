/** The event log as admins read it: newest first, by kind or family of kinds and by time. */
import { and, eq, getTableColumns, gte, inArray, lt, type SQL } from 'drizzle-orm'
import { eventKindsOf, type Event, type EventList, type ListEventsQuery } from '@commerce/domain'
import { events, type Database } from '@commerce/db'
import { notFound } from '../../errors.js'
import { instant } from '../../fields.js'
import { key, keyset, selectList } from '../../list-cursor.js'

/** Newest first, then by id: the events of one transaction share their `created_at`. */
const EVENTS_KEYSET = keyset('events', 'desc', [key.time(events.createdAt), key.uuid(events.id)])

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
      const from = instant('from', query.from ?? null)
      const to = instant('to', query.to ?? null)
      const where = and(
        query.event === undefined ? undefined : kindCondition(query.event),
        from ? gte(events.createdAt, from) : undefined,
        to ? lt(events.createdAt, to) : undefined,
      )
      const select = db.select({ ...getTableColumns(events), cursorKey: EVENTS_KEYSET.cursorKey }).from(events).$dynamic()
      const { rows, meta } = await selectList(EVENTS_KEYSET, query, select, where, () => db.$count(events, where))
      return { events: rows.map(toEvent), meta }
    },

    async get(id: string): Promise<Event> {
      const [row] = await db.select().from(events).where(eq(events.id, id))
      if (!row) throw notFound('Event')
      return toEvent(row)
    },
  }
}
