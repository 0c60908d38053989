/** The event log as admins read it: newest first, by kind or family of kinds and by time. */
import { and, count, desc, eq, gte, inArray, lt, type SQL } from 'drizzle-orm'
import { EVENT_KINDS, type Event, type EventList, type ListEventsQuery } from '@commerce/domain'
import { events, type Database } from '@commerce/db'
import { notFound } from '../../errors.js'
import { instant } from '../../fields.js'
import { pageMeta } from '../../list-totals.js'

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
  if (!filter.endsWith('.*')) return eq(events.kind, filter)
  const family = filter.slice(0, -1)
  return inArray(events.kind, EVENT_KINDS.filter((kind) => kind.startsWith(family)))
}

export function createEventService(db: Database) {
  return {
    async list(query: ListEventsQuery): Promise<EventList> {
      const page = query.page ?? 1
      const perPage = query.per_page ?? 20
      const from = instant('from', query.from ?? null)
      const to = instant('to', query.to ?? null)
      const where = and(
        query.event === undefined ? undefined : kindCondition(query.event),
        from ? gte(events.createdAt, from) : undefined,
        to ? lt(events.createdAt, to) : undefined,
      )
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
