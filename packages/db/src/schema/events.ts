import { sql } from 'drizzle-orm'
import { bigint, boolean, check, index, integer, json, pgTable, text, uuid } from 'drizzle-orm/pg-core'
import type { EventKind } from '@commerce/domain'
import { createdAt, id } from './columns.js'

/** The event log: one row per change, written in the change's own transaction. */
export const events = pgTable(
  'events',
  {
    id: id(),
    /** One of the catalog's kinds (EVENT_KINDS); only writeEvent and the worker's webhook.disabled write it. */
    kind: text('kind').$type<EventKind>().notNull(),
    /** The text as written (json, not jsonb: checked, not rebuilt; keys keep their order). */
    data: json('data').$type<Record<string, unknown>>().notNull(),
    /** The customer the event concerns, for filtering what a customer may see. */
    customerId: uuid('customer_id'),
    requestId: text('request_id'),
    /** Who made the change (outbox.ts EventOrigin); null for a guest or the worker. */
    actor: text('actor'),
    /** What the event is about: an order (with its payments), a product, a customer, a subscription. */
    resourceId: uuid('resource_id').notNull(),
    /** 1, 2, 3… over the events of one resource, in commit order, without gaps (event_sequences). */
    sequence: integer('sequence').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index('events_created_idx').on(t.createdAt),
    index('events_kind_idx').on(t.kind),
    // A resource's story in order (an order's history).
    index('events_resource_idx').on(t.resourceId, t.sequence),
  ],
)

/**
 * The last sequence number given to each resource's events. The statement that writes events
 * bumps its resources' rows (insert … on conflict do update): the row lock, held to commit,
 * makes a resource's numbers follow the order its events commit in, and a rollback gives its
 * numbers back.
 */
export const eventSequences = pgTable('event_sequences', {
  resourceId: uuid('resource_id').primaryKey(),
  lastSequence: integer('last_sequence').notNull(),
})

/**
 * Committed events not yet handed to the job queue: one row per transaction's events, written
 * with them; the worker's relay moves rows to fan-out jobs and deletes them in one statement.
 */
export const eventOutbox = pgTable('event_outbox', {
  id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  eventIds: uuid('event_ids').array().notNull(),
})

/**
 * How far the worker's event retention (expire-events, sql/event-retention.ts) has swept the log,
 * in id order: of the events with an id up to `sweptThrough`, only those kept are left (an
 * order's, its history; one a webhook delivery or a notification still refers to). A WebSocket
 * resume from before it would miss events and is refused. One row, made by the first sweep.
 */
export const eventRetention = pgTable(
  'event_retention',
  {
    singleton: boolean('singleton').primaryKey().default(true),
    sweptThrough: uuid('swept_through').notNull(),
  },
  (t) => [check('event_retention_one_row', sql`${t.singleton}`)],
)
