import { sql } from 'drizzle-orm'
import { boolean, index, integer, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import type { NotificationStatus, NotificationTemplate } from '@commerce/domain'
import { createdAt, id, updatedAt } from './columns.js'
import { events } from './events.js'

/** An email made from an event by the worker: one per (event, template, recipient), retried on its schedule, resendable. */
export const notifications = pgTable(
  'notifications',
  {
    id: id(),
    eventId: uuid('event_id')
      .notNull()
      .references(() => events.id),
    template: text('template').$type<NotificationTemplate>().notNull(),
    recipient: text('recipient').notNull(),
    status: text('status').$type<NotificationStatus>().notNull().default('pending'),
    /** Attempts made so far, over every resend. */
    attempts: integer('attempts').notNull().default(0),
    /** When the next scheduled attempt runs; null when none is scheduled. */
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, mode: 'date' }),
    /** The subject of the last email made. */
    subject: text('subject'),
    /** The Message-ID header, the same on every attempt of this notification. */
    messageId: text('message_id'),
    /** When the mail server accepted it. */
    sentAt: timestamp('sent_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    // A job run twice for one event (at least once) still makes one email per recipient.
    uniqueIndex('notifications_event_template_recipient_key').on(t.eventId, t.template, t.recipient),
    index('notifications_recipient_idx').on(sql`lower(${t.recipient})`, t.id.desc()),
  ],
)

/** Every attempt to hand a notification to the mail server, as it answered (or why it could not). */
export const notificationAttempts = pgTable(
  'notification_attempts',
  {
    id: id(),
    notificationId: uuid('notification_id')
      .notNull()
      .references(() => notifications.id, { onDelete: 'cascade' }),
    /** 1 for the first attempt, counting on over resends. */
    attempt: integer('attempt').notNull(),
    succeeded: boolean('succeeded').notNull(),
    /** The SMTP reply code (250, 550, …); null when there was no answer, or for a file written in development. */
    responseCode: integer('response_code'),
    durationMs: integer('duration_ms').notNull(),
    error: text('error'),
    /** The server's reply, its first 1 KiB (or where the development mail was written). */
    response: text('response'),
    createdAt: createdAt(),
  },
  (t) => [index('notification_attempts_notification_idx').on(t.notificationId, t.attempt)],
)

/** Which templates are turned off (PUT /notifications/settings); a template without a row is on. */
export const notificationSettings = pgTable('notification_settings', {
  template: text('template').$type<NotificationTemplate>().primaryKey(),
  enabled: boolean('enabled').notNull(),
  updatedAt: updatedAt(),
})
