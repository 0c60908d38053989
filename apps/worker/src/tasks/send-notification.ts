/**
 * `send-notification {notification_id, attempt, retry}`: one attempt of a notification — its
 * first (queued when the fan-out made it), a retry, or a resend. It sends, then records the
 * attempt and, after a failure, queues the next retry in one statement. A job run again after
 * that statement committed finds its attempt number recorded and sends nothing: one email per
 * attempt however often its job runs. The reads and records of jobs running together are batched.
 */
import type { Task } from 'graphile-worker'
import type { NotificationJob } from '@commerce/db'
import { attemptNotification, nextNotificationStep, reportNotification, type NotificationSettings, type NotificationStore } from '../notifications.js'

export function createSendNotification(store: NotificationStore, settings: NotificationSettings): Task {
  return async (payload) => {
    const job = payload as NotificationJob
    const notification = await store.load(job.notification_id)
    // Recorded already (its job run again, or a resend that made a newer attempt first).
    if (!notification || notification.attempts >= job.attempt) return
    const { outcome, final, subject, messageId } = await attemptNotification(notification, settings)
    const attempt = {
      notificationId: notification.id,
      attempt: job.attempt,
      outcome,
      subject,
      messageId,
      ...nextNotificationStep(outcome, final, job.attempt, job.retry, settings.retrySchedule),
    }
    if (await store.record(attempt)) reportNotification(settings, notification, attempt)
  }
}
