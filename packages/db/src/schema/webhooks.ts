import type { DeliveryStatus } from '@commerce/domain'
import { boolean, index, integer, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { createdAt, id, updatedAt } from './columns.js'
import { events } from './events.js'

/** A webhook subscription: where to POST which event kinds, and the secret that signs them. */
export const webhooks = pgTable(
  'webhooks',
  {
    id: id(),
    url: text('url').notNull(),
    /** Event kinds of the catalog, or '*' for all. */
    events: text('events').array().notNull(),
    /** Write-only in the API (shown once when created or rotated); the worker signs with it. */
    secret: text('secret').notNull(),
    /** The secret before the last rotation, still signing beside `secret` until it expires. */
    previousSecret: text('previous_secret'),
    previousSecretExpiresAt: timestamp('previous_secret_expires_at', { withTimezone: true, mode: 'date' }),
    description: text('description'),
    isActive: boolean('is_active').notNull().default(true),
    /** Endpoint health, kept by the worker at every attempt: failures since the last success. */
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    lastSuccessAt: timestamp('last_success_at', { withTimezone: true, mode: 'date' }),
    lastFailureAt: timestamp('last_failure_at', { withTimezone: true, mode: 'date' }),
    /** The first failure since the last success; null while healthy. */
    failingSince: timestamp('failing_since', { withTimezone: true, mode: 'date' }),
    /** Set when the worker disabled the subscription for failing too long; cleared by enable. */
    disabledAt: timestamp('disabled_at', { withTimezone: true, mode: 'date' }),
    disabledReason: text('disabled_reason'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('webhooks_created_idx').on(t.createdAt, t.id)],
)

/** One event to one subscription: made by the fan-out, retried on its schedule, redeliverable. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: id(),
    webhookId: uuid('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    eventId: uuid('event_id')
      .notNull()
      .references(() => events.id),
    status: text('status').$type<DeliveryStatus>().notNull().default('pending'),
    /** Attempts made so far, over every (re)delivery. */
    attempts: integer('attempts').notNull().default(0),
    /** When the next scheduled attempt runs; null when none is scheduled. */
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, mode: 'date' }),
    lastStatusCode: integer('last_status_code'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    // The fan-out may run twice for one event (at least once): the pair stays one delivery.
    uniqueIndex('webhook_deliveries_webhook_event_key').on(t.webhookId, t.eventId),
    index('webhook_deliveries_webhook_created_idx').on(t.webhookId, t.createdAt, t.id),
    index('webhook_deliveries_event_idx').on(t.eventId),
  ],
)

/** Every attempt of a delivery, as the receiver answered it (or why it could not). */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: id(),
    deliveryId: uuid('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    /** 1 for the first attempt of the delivery, counting on over redeliveries. */
    attempt: integer('attempt').notNull(),
    succeeded: boolean('succeeded').notNull(),
    statusCode: integer('status_code'),
    durationMs: integer('duration_ms').notNull(),
    error: text('error'),
    /** The first 1 KiB of the response body. */
    responseBody: text('response_body'),
    createdAt: createdAt(),
  },
  (t) => [index('webhook_attempts_delivery_idx').on(t.deliveryId, t.attempt)],
)
