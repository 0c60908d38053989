/**
 * The worker's statements on notifications: making them from a fan-out's events (with the job of
 * each one's first attempt), reading them for an attempt, and recording a batch of attempts
 * (each with its log row, the notification's new state and the job of its retry), one statement
 * each. A notification is one per (event, template, recipient), so a fan-out run twice makes no
 * second one, and an attempt number already recorded is not recorded (nor sent) again.
 */
import { NOTIFICATION_TRIGGERS, type NotificationStatus } from '@commerce/domain'
import { newId } from '../schema/columns.js'
import type { events, notificationAttempts, notifications } from '../schema/index.js'
import type { SqlClient } from '../transaction.js'
import type { JsonOf, JsonRow } from './json-rows.js'
import { notificationJobSpec } from './notification-jobs.js'

// Which template each event kind makes, as a table: fixed text, from the domain's list.
const TRIGGERS = `(values ${Object.entries(NOTIFICATION_TRIGGERS)
  .map(([template, kind]) => `('${kind}', '${template}')`)
  .join(', ')}) as t(kind, template)`

// $1 the events, $2 an id for each one's notification (an event makes at most one). The recipient
// is the event data's `email`; a template turned off (notification_settings) makes none.
const CREATE = `with made as (
  insert into notifications (id, event_id, template, recipient)
  select n.id, e.id, t.template, e.data->>'email'
  from unnest($1::uuid[], $2::uuid[]) as n(event_id, id)
  join events e on e.id = n.event_id
  join ${TRIGGERS} on t.kind = e.kind
  where e.data->>'email' is not null
    and not exists (select from notification_settings s where s.template = t.template and not s.enabled)
  on conflict (event_id, template, recipient) do nothing
  returning id)
select count(*)::int as "made", case when count(*) > 0 then (
  select count(*) from graphile_worker.add_jobs(array(
    select ${notificationJobSpec({ notificationId: 'm.id', attempt: '1', retry: '0', runAt: 'null' })} from made m))) end as "jobs"
from made`

/**
 * Makes the notifications of these events that have none yet, each with the job of its first
 * attempt; answers how many it made. `ids` holds a new id per event.
 */
export async function createNotifications(sql: SqlClient, eventIds: readonly string[], ids: readonly string[]): Promise<number> {
  const [row] = await sql.unsafe<{ made: number }[]>(CREATE, [eventIds as string[], ids as string[]], { prepare: true })
  return row?.made ?? 0
}

type EventJson = JsonRow<typeof events.$inferSelect>

/** A notification to send, with its event. */
export type LoadedNotification = JsonOf<typeof notifications, 'id' | 'template' | 'recipient' | 'attempts'> & {
  eventId: EventJson['id']
  kind: EventJson['kind']
  data: EventJson['data']
  /** The API request that wrote the event, for the logs; null when none did. */
  requestId: EventJson['requestId']
}

// $1 the notifications.
const LOAD = `select n.id, n.template, n.recipient, n.attempts, e.id as "eventId", e.kind, e.data, e.request_id as "requestId"
  from notifications n join events e on e.id = n.event_id
  where n.id = any($1::uuid[])`

export function loadNotifications(sql: SqlClient, ids: readonly string[]): Promise<LoadedNotification[]> {
  return sql.unsafe<LoadedNotification[]>(LOAD, [ids as string[]], { prepare: true })
}

/** What an attempt came to, as its log row keeps it. */
export type MailOutcome = JsonOf<typeof notificationAttempts, 'succeeded' | 'responseCode' | 'durationMs' | 'error' | 'response'>

/** An attempt of a notification and what follows it. */
export interface NotificationAttempt {
  notificationId: string
  /** Its number over the notification's life. */
  attempt: number
  outcome: MailOutcome
  status: NotificationStatus
  /** The email made for it (rendered at each attempt). */
  subject: string | null
  messageId: string | null
  /** The next attempt's job (a retry), or none. */
  retry: { runAt: Date; attempt: number; retry: number } | null
}

// $1 the attempts (JSON: each with its log id, notification, number, outcome, the notification's
// new state and its retry's job). An attempt whose number is recorded already (a job run again
// after its statement committed) is left out.
const RECORD = `with recorded as (
  select * from json_to_recordset($1::json)
    as r(id uuid, notification_id uuid, attempt int, succeeded bool, response_code int, duration_ms int, error text, response text,
      status text, subject text, message_id text, job_run_at timestamptz, job_attempt int, job_retry int)),
updated as (
  update notifications n set attempts = r.attempt, status = r.status, subject = coalesce(r.subject, n.subject),
    message_id = coalesce(r.message_id, n.message_id), next_attempt_at = r.job_run_at,
    sent_at = case when r.succeeded then now() else n.sent_at end, updated_at = now()
  from recorded r where n.id = r.notification_id and n.attempts < r.attempt
  returning n.id),
kept as (select r.* from recorded r join updated u on u.id = r.notification_id),
logged as (
  insert into notification_attempts (id, notification_id, attempt, succeeded, response_code, duration_ms, error, response)
  select id, notification_id, attempt, succeeded, response_code, duration_ms, error, response from kept)
select array(select notification_id from kept) as "recorded", case when exists (select from kept where job_run_at is not null) then (
  select count(*) from graphile_worker.add_jobs(array(
    select ${notificationJobSpec({ notificationId: 'k.notification_id', attempt: 'k.job_attempt', retry: 'k.job_retry', runAt: 'k.job_run_at' })}
    from kept k where k.job_run_at is not null))) end as "jobs"`

/** Records attempts of notifications; answers the notifications whose attempt was recorded (not one recorded before). */
export async function recordNotificationAttempts(sql: SqlClient, attempts: readonly NotificationAttempt[]): Promise<string[]> {
  const rows = attempts.map((a) => ({
    id: newId(),
    notification_id: a.notificationId,
    attempt: a.attempt,
    succeeded: a.outcome.succeeded,
    response_code: a.outcome.responseCode,
    duration_ms: a.outcome.durationMs,
    error: a.outcome.error,
    response: a.outcome.response,
    status: a.status,
    subject: a.subject,
    message_id: a.messageId,
    job_run_at: a.retry?.runAt ?? null,
    job_attempt: a.retry?.attempt ?? null,
    job_retry: a.retry?.retry ?? null,
  }))
  const [row] = await sql.unsafe<{ recorded: string[] }[]>(RECORD, [JSON.stringify(rows)], { prepare: true })
  return row!.recorded
}
