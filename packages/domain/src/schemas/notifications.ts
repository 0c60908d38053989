/** Notifications (the emails the worker makes from events) as the admin API shows them, and their settings. */
import { Type, type Static, type TBoolean, type TOptional } from 'typebox'
import { NOTIFICATION_STATUSES, NOTIFICATION_TEMPLATES, NOTIFICATION_TRIGGERS, type NotificationTemplate } from '../constants.js'
import { Nullable, PageOrCursorMeta, PaginationQuery, Timestamp, Uuid } from './common.js'
import { EVENT_FILTERS, EventKindSchema } from './webhooks.js'

export const NotificationTemplateSchema = Type.Enum(NOTIFICATION_TEMPLATES, {
  title: 'NotificationTemplate',
  description: 'Which email: each is made from one event kind (docs/notifications.md)',
})
const NotificationStatus = Type.Enum(NOTIFICATION_STATUSES, {
  description: 'pending: not sent yet (an attempt is due, or under way); sent: the mail server accepted it; failed: no attempt left',
})

export const NotificationAttempt = Type.Object({
  attempt: Type.Integer({ description: '1 for the first, counting on over resends' }),
  succeeded: Type.Boolean(),
  response_code: Nullable(Type.Integer({ description: 'The SMTP reply code (250, 550, …); null without an answer, or for a file written in development' })),
  duration_ms: Type.Integer(),
  error: Nullable(Type.String()),
  response: Nullable(Type.String({ description: 'The server’s reply (its first 1 KiB), or the path of the development file' })),
  created_at: Timestamp,
}, { title: 'NotificationAttempt', description: 'One attempt to hand an email to the mail server' })

export const Notification = Type.Object({
  id: Uuid,
  event_id: Uuid,
  event: EventKindSchema,
  template: NotificationTemplateSchema,
  recipient: Type.String(),
  status: NotificationStatus,
  attempts: Type.Integer({ description: 'Attempts made so far' }),
  next_attempt_at: Nullable(Type.String({ format: 'date-time', description: 'When the next retry is due; null when none is' })),
  subject: Nullable(Type.String({ description: 'The subject of the last email made; null before the first attempt' })),
  message_id: Nullable(Type.String({ description: 'The Message-ID header, the same on every attempt' })),
  sent_at: Nullable(Type.String({ format: 'date-time', description: 'When the mail server accepted it' })),
  created_at: Timestamp,
  updated_at: Timestamp,
  attempt_log: Type.Array(NotificationAttempt, { description: 'Every attempt, first first' }),
}, { title: 'Notification', description: 'An email made from an event, with its attempts' })
export type Notification = Static<typeof Notification>

export const NotificationList = Type.Object(
  { notifications: Type.Array(Notification), meta: PageOrCursorMeta },
  { title: 'NotificationList', description: 'A page of notifications, newest first' },
)
export type NotificationList = Static<typeof NotificationList>

export const ListNotificationsQuery = Type.Object({
  ...PaginationQuery.properties,
  event_id: Type.Optional(Uuid),
  event: Type.Optional(Type.Enum(EVENT_FILTERS, { description: 'The kind (`order.paid`) or family (`order.*`) of the event it was made from' })),
  template: Type.Optional(Type.Enum(NOTIFICATION_TEMPLATES)),
  recipient: Type.Optional(Type.String({ maxLength: 254, description: 'Exact address, case-insensitive' })),
  status: Type.Optional(NotificationStatus),
})
export type ListNotificationsQuery = Static<typeof ListNotificationsQuery>

export const NotificationSetting = Type.Object({
  template: NotificationTemplateSchema,
  event: EventKindSchema,
  enabled: Type.Boolean({ description: 'false: its events make no email (the webhooks still carry them)' }),
  updated_at: Nullable(Type.String({ format: 'date-time', description: 'When it was last changed; null: never (on)' })),
}, { title: 'NotificationSetting', description: 'Whether an email is sent, and the event kind it is made from' })

export const NotificationSettings = Type.Object(
  { templates: Type.Array(NotificationSetting) },
  { title: 'NotificationSettings', description: 'Every email the shop may send, on or off' },
)
export type NotificationSettings = Static<typeof NotificationSettings>

/** `{"order_shipped": false, …}`: the templates to turn on (true) or off (false); the others stay as they are. */
const switches = Object.fromEntries(
  NOTIFICATION_TEMPLATES.map((template) => [template, Type.Optional(Type.Boolean({ description: `The email made from ${NOTIFICATION_TRIGGERS[template]}` }))]),
) as Record<NotificationTemplate, TOptional<TBoolean>>
export const UpdateNotificationSettings = Type.Object(switches, { additionalProperties: false, minProperties: 1, title: 'UpdateNotificationSettingsRequest' })
export type UpdateNotificationSettings = Static<typeof UpdateNotificationSettings>
