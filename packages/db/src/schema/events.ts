import { index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core'
import { createdAt, id } from './columns.js'

/** The event log: one row per change, written in the change's own transaction. */
export const events = pgTable(
  'events',
  {
    id: id(),
    kind: text('kind').notNull(),
    data: jsonb('data').$type<Record<string, unknown>>().notNull(),
    /** The customer the event concerns, for filtering what a customer may see. */
    customerId: uuid('customer_id'),
    requestId: text('request_id'),
    createdAt: createdAt(),
  },
  (t) => [index('events_created_idx').on(t.createdAt), index('events_kind_idx').on(t.kind)],
)
