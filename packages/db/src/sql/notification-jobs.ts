/**
 * The jobs of notification attempts (send-notification), added from SQL in the statement or
 * transaction that asks for them: the fan-out that makes notifications, the worker's records of
 * attempts (notification-records.ts), a resend (apps/api).
 */
import { sqlOf, type Executor } from '../client.js'
import { TASKS, type NotificationJob } from '../queue.js'

/**
 * The SQL of one notification job's spec (a graphile_worker.job_spec), from SQL expressions of
 * its values. Keyed `notify:<notification id>:<attempt>`, so an attempt number is one job however
 * often it is asked for (a resend asked twice, or while a retry waits). Priority 1, as webhook
 * retries: after the fan-outs of new events.
 */
export function notificationJobSpec(values: { notificationId: string; attempt: string; retry: string; runAt: string }): string {
  const { notificationId, attempt, retry, runAt } = values
  return `row('${TASKS.sendNotification}', json_build_object('notification_id', ${notificationId}, 'attempt', ${attempt}, 'retry', ${retry}),
    null, ${runAt}, null, 'notify:' || ${notificationId} || ':' || ${attempt}, 1, null)::graphile_worker.job_spec`
}

const ADD_NOTIFICATION = `select count(*) as "added" from graphile_worker.add_jobs(array[
  ${notificationJobSpec({ notificationId: '$1::uuid', attempt: '$2::int', retry: '$3::int', runAt: 'null' })}])`

/** Adds one notification attempt's job, due now, in the caller's transaction. */
export async function addNotificationJob(tx: Executor, job: NotificationJob): Promise<void> {
  await sqlOf(tx).unsafe(ADD_NOTIFICATION, [job.notification_id, job.attempt, job.retry], { prepare: true })
}
