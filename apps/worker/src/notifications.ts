/**
 * One attempt of a notification (an email made from an event): its email made from the template
 * with the event's data (and, for the account links, a fresh single-use token), handed to the
 * mailer, and what its outcome means — sent, a retry after NOTIFICATION_RETRY_SCHEDULE's next
 * wait, or failed — recorded with its log row in one statement. Like a webhook delivery: the
 * attempt number names the job, and one already recorded is neither sent nor recorded again.
 */
import { ACCOUNT_TOKEN_PURPOSES, generateAccountToken, hashAccountToken, type AccountTokenPurpose, type NotificationTemplate } from '@commerce/domain'
import { loadNotifications, recordNotificationAttempts, sqlOf, storeAccountToken, type Database, type LoadedNotification, type MailOutcome, type NotificationAttempt } from '@commerce/db'
import { batched } from './batch.js'
import type { Logger } from './logger.js'
import { domainOf, type Mailer } from './mailer.js'
import type { WorkerMetrics } from './metrics.js'
import type { Templates } from './templates.js'

export interface NotificationSettings {
  /** Our statements' pool (as the deliveries'). */
  db: Database
  templates: Templates
  mailer: Mailer
  /** The From address's domain names each Message-ID. */
  from: string
  /** The waits before the retries, in milliseconds; its length is the number of retries. */
  retrySchedule: readonly number[]
  shop: { name: string; url: string }
  logger: Logger
  metrics: WorkerMetrics
}

export interface NotificationStore {
  load(id: string): Promise<LoadedNotification | undefined>
  /** Records the attempt; false when that attempt number was recorded already. */
  record(attempt: NotificationAttempt): Promise<boolean>
}

/** The reads and records of the notification jobs running together, one statement each. */
export function createNotificationStore(db: Database): NotificationStore {
  const sql = sqlOf(db)
  const load = batched<string, LoadedNotification | undefined>(async (ids) => {
    const byId = new Map((await loadNotifications(sql, ids)).map((row) => [row.id, row]))
    return ids.map((id) => byId.get(id))
  })
  const record = batched<NotificationAttempt, boolean>(async (attempts) => {
    const recorded = new Set(await recordNotificationAttempts(sql, attempts))
    return attempts.map((attempt) => recorded.has(attempt.notificationId))
  })
  return { load, record }
}

/** What the email is made of, by template: the event's data under a name the templates use. */
function templateValues(notification: LoadedNotification, settings: NotificationSettings): Record<string, unknown> {
  const { data } = notification
  const common = { shop: settings.shop, recipient: notification.recipient, event: { id: notification.eventId, kind: notification.kind } }
  if (notification.kind.startsWith('account.')) return { ...common, account: data }
  // return.* data: the return, with its order's number and address.
  if (notification.kind.startsWith('return.')) return { ...common, return: data }
  // draft_order.invoice_sent: the draft with its payment link (`invoice_url`).
  if (notification.kind.startsWith('draft_order.')) return { ...common, draft_order: data }
  // order.* data: the order, with the fulfillment sent (shipped) or the refund made (refunded).
  return { ...common, order: data, fulfillment: data.fulfillment, refund: data.refund }
}

const isLinkTemplate = (template: NotificationTemplate): template is AccountTokenPurpose => (ACCOUNT_TOKEN_PURPOSES as readonly string[]).includes(template)

/** An attempt that was not made: `error` says why, and no retry would change it. */
const notSent = (error: string): MailOutcome => ({ succeeded: false, responseCode: null, durationMs: 0, error, response: null })

/**
 * Makes and sends the email of one attempt. An account link gets a new token, stored (hashed)
 * before the email leaves; a link that expired, was used already or whose account is gone is not
 * sent at all (`final`).
 */
export async function attemptNotification(notification: LoadedNotification, settings: NotificationSettings): Promise<{ outcome: MailOutcome; final: boolean; subject: string | null; messageId: string }> {
  const messageId = `<${notification.id}@${domainOf(settings.from) ?? 'localhost'}>`
  const values = templateValues(notification, settings)
  const { template } = notification
  if (isLinkTemplate(template)) {
    const data = notification.data as { user_id: string; email: string; expires_at: string }
    if (new Date(data.expires_at).getTime() <= Date.now()) return { outcome: notSent('the link expired before it could be sent'), final: true, subject: null, messageId }
    const token = generateAccountToken()
    const stored = await storeAccountToken(sqlOf(settings.db), {
      notificationId: notification.id,
      userId: data.user_id,
      purpose: template,
      email: data.email,
      tokenHash: hashAccountToken(token),
      expiresAt: data.expires_at,
    })
    if (!stored) return { outcome: notSent('the link was used already, or its account no longer exists'), final: true, subject: null, messageId }
    values.token = token
  }
  let email
  try {
    email = await settings.templates.render(template, values)
  } catch (error) {
    // A shop's template that fails on this data: retried, so that a fixed template (and a restart) still sends it.
    return { outcome: notSent(`template ${template}: ${error instanceof Error ? error.message : String(error)}`), final: false, subject: null, messageId }
  }
  const outcome = await settings.mailer.send({ to: notification.recipient, messageId, ...email })
  return { outcome, final: false, subject: email.subject, messageId }
}

/** After attempt number `attempt` (retry number `retry`, 0 for a first try or a resend): sent, a retry later, or failed. */
export function nextNotificationStep(outcome: MailOutcome, final: boolean, attempt: number, retry: number, retrySchedule: readonly number[]): Pick<NotificationAttempt, 'status' | 'retry'> {
  if (outcome.succeeded) return { status: 'sent', retry: null }
  const wait = final ? undefined : retrySchedule[retry]
  if (wait === undefined) return { status: 'failed', retry: null }
  return { status: 'pending', retry: { runAt: new Date(Date.now() + wait), attempt: attempt + 1, retry: retry + 1 } }
}

/**
 * After an attempt was recorded: counts it and logs it with the ids that tie it to its event and
 * the API request that wrote it. Never the recipient, the subject or the body (personal data),
 * nor the link's token; a mail written to a file outside production is logged with its path.
 */
export function reportNotification(settings: NotificationSettings, notification: LoadedNotification, recorded: NotificationAttempt) {
  const { outcome, status } = recorded
  const result = status === 'pending' ? 'retrying' : status
  settings.metrics.notification(notification.template, result)
  const entry = {
    notification_id: notification.id,
    event_id: notification.eventId,
    event: notification.kind,
    request_id: notification.requestId,
    template: notification.template,
    attempt: recorded.attempt,
    outcome: result,
    response_code: outcome.responseCode,
    duration_ms: outcome.durationMs,
  }
  if (outcome.succeeded && settings.mailer.destination !== 'smtp') {
    settings.logger.info('notification written to a file (no SMTP_URL)', { ...entry, file: outcome.response })
  } else if (outcome.succeeded) {
    settings.logger.info('notification sent', entry)
  } else {
    // A server's refusal often quotes the address: the log line says `<recipient>` instead (the attempt log keeps it).
    const error = outcome.error?.replace(new RegExp(notification.recipient.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi'), '<recipient>')
    settings.logger.warn('notification attempt failed', { ...entry, error, next_attempt_at: recorded.retry?.runAt ?? null })
  }
}
