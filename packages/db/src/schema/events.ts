import { bigint, index, json, pgTable, text, uuid } from 'drizzle-orm/pg-core'
import { createdAt, id } from './columns.js'

/** The event log: one row per change, written in the change's own transaction. */
export const events = pgTable(
  'events',
  {
    id: id(),
    kind: text('kind').notNull(),
    /** The text as written (json, not jsonb: checked, not rebuilt; keys keep their order). */
    data: json('data').$type<Record<string, unknown>>().notNull(),
    /** The customer the event concerns, for filtering what a customer may see. */
    customerId: uuid('customer_id'),
    requestId: text('request_id'),
    createdAt: createdAt(),
  },
  (t) => [index('events_created_idx').on(t.createdAt), index('events_kind_idx').on(t.kind)],
)

/**
 * Committed events not yet handed to the job queue: one row per transaction's events, written
 * with them; the worker's relay moves rows to fan-out jobs and deletes them in one statement.
 */
export const eventOutbox = pgTable('event_outbox', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  eventIds: uuid('event_ids').array().notNull(),
})
