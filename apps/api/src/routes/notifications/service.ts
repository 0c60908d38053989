/** Notifications (admin): the emails' log with their attempts, a resend, and which emails are on. */
import { and, asc, count, eq, inArray, sql, type SQL } from 'drizzle-orm'
import {
  eventKindsOf,
  NOTIFICATION_TEMPLATES,
  NOTIFICATION_TRIGGERS,
  type ListNotificationsQuery,
  type Notification,
  type NotificationList,
  type NotificationSettings,
  type UpdateNotificationSettings,
} from '@commerce/domain'
import { addNotificationJob, events, notificationAttempts, notifications, notificationSettings, type Database, type Executor } from '@commerce/db'
import { notFound } from '../../errors.js'
import { key, keyset, readList } from '../../list-cursor.js'

type NotificationRow = typeof notifications.$inferSelect
type AttemptRow = typeof notificationAttempts.$inferSelect

const iso = (date: Date | null) => date?.toISOString() ?? null

function notificationView(row: NotificationRow, kind: Notification['event'], attempts: readonly AttemptRow[]): Notification {
  return {
    id: row.id,
    event_id: row.eventId,
    event: kind,
    template: row.template,
    recipient: row.recipient,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: iso(row.nextAttemptAt),
    subject: row.subject,
    message_id: row.messageId,
    sent_at: iso(row.sentAt),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    attempt_log: attempts.map((attempt) => ({
      attempt: attempt.attempt,
      succeeded: attempt.succeeded,
      response_code: attempt.responseCode,
      duration_ms: attempt.durationMs,
      error: attempt.error,
      response: attempt.response,
      created_at: attempt.createdAt.toISOString(),
    })),
  }
}

/** Newest first (by id, a UUIDv7). */
const NOTIFICATIONS_KEYSET = keyset('notifications', 'desc', [key.uuid(notifications.id)])

export function createNotificationService(db: Database) {
  /** Notifications in the list's order, each with its event's kind and its attempts. */
  async function load(executor: Executor, where: SQL | undefined, page?: { limit: number; offset: number }): Promise<Notification[]> {
    const query = executor
      .select({ notification: notifications, kind: events.kind })
      .from(notifications)
      .innerJoin(events, eq(events.id, notifications.eventId))
      .where(where)
      .orderBy(...NOTIFICATIONS_KEYSET.orderBy)
    const rows = page ? await query.limit(page.limit).offset(page.offset) : await query
    const ids = rows.map((row) => row.notification.id)
    const attempts =
      ids.length === 0
        ? []
        : await executor.select().from(notificationAttempts).where(inArray(notificationAttempts.notificationId, ids)).orderBy(asc(notificationAttempts.attempt))
    const logs = new Map<string, AttemptRow[]>()
    for (const attempt of attempts) {
      const log = logs.get(attempt.notificationId)
      if (log) log.push(attempt)
      else logs.set(attempt.notificationId, [attempt])
    }
    return rows.map(({ notification, kind }) => notificationView(notification, kind, logs.get(notification.id) ?? []))
  }

  async function settings(): Promise<NotificationSettings> {
    const rows = new Map((await db.select().from(notificationSettings)).map((row) => [row.template, row]))
    return {
      templates: NOTIFICATION_TEMPLATES.map((template) => ({
        template,
        event: NOTIFICATION_TRIGGERS[template],
        enabled: rows.get(template)?.enabled ?? true,
        updated_at: iso(rows.get(template)?.updatedAt ?? null),
      })),
    }
  }

  async function loadOne(executor: Executor, id: string): Promise<Notification> {
    const [found] = await load(executor, eq(notifications.id, id))
    if (!found) throw notFound('Notification')
    return found
  }

  return {
    async list(query: ListNotificationsQuery): Promise<NotificationList> {
      const kinds = query.event === undefined ? undefined : eventKindsOf(query.event)
      const conditions = [
        query.event_id === undefined ? undefined : eq(notifications.eventId, query.event_id),
        kinds === undefined ? undefined : inArray(events.kind, [...kinds]),
        query.template === undefined ? undefined : eq(notifications.template, query.template),
        query.recipient === undefined ? undefined : sql`lower(${notifications.recipient}) = lower(${query.recipient})`,
        query.status === undefined ? undefined : eq(notifications.status, query.status),
      ]
      const where = and(...conditions)
      const { rows, meta } = await readList(
        NOTIFICATIONS_KEYSET,
        query,
        (window) => load(db, and(where, window.after), window),
        async () => {
          const [counted] = await db.select({ total: count() }).from(notifications).innerJoin(events, eq(events.id, notifications.eventId)).where(where)
          return counted!.total
        },
        (row) => [row.id],
      )
      return { notifications: rows, meta }
    },

    get(id: string): Promise<Notification> {
      return loadOne(db, id)
    },

    /**
     * Sends the notification again as its next attempt, now, whatever its status (an account
     * link gets a new token, if it is still unused and unexpired). The job key
     * `notify:<id>:<attempt>` keeps one job per attempt number: resending twice before it runs,
     * or while a retry of that number waits, moves that one job to now.
     */
    resend(id: string): Promise<Notification> {
      return db.transaction(async (tx) => {
        const [row] = await tx
          .update(notifications)
          .set({ status: 'pending', nextAttemptAt: sql`now()` })
          .where(eq(notifications.id, id))
          .returning({ attempts: notifications.attempts })
        if (!row) throw notFound('Notification')
        await addNotificationJob(tx, { notification_id: id, attempt: row.attempts + 1, retry: 0 })
        return loadOne(tx, id)
      })
    },

    settings,

    async updateSettings(change: UpdateNotificationSettings): Promise<NotificationSettings> {
      const values = Object.entries(change).map(([template, enabled]) => ({ template: template as keyof UpdateNotificationSettings, enabled: enabled! }))
      await db
        .insert(notificationSettings)
        .values(values)
        .onConflictDoUpdate({ target: notificationSettings.template, set: { enabled: sql`excluded.enabled`, updatedAt: sql`now()` } })
      return settings()
    },
  }
}
