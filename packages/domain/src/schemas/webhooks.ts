/** Webhook subscriptions, their deliveries and attempt logs, as the API shows and takes them. */
import { Type, type Static } from 'typebox'
import { DELIVERY_STATUSES, EVENT_KINDS, MAX_REPLAY_DELIVERIES, MAX_SECRET_GRACE_SECONDS } from '../constants.js'
import { Nullable, PageOrCursorMeta, PaginationQuery, Timestamp, Uuid } from './common.js'

export const WEBHOOK_URL_MAX_LENGTH = 2048

const WebhookUrl = Type.String({
  minLength: 1,
  maxLength: WEBHOOK_URL_MAX_LENGTH,
  description:
    'Absolute http:// or https:// URL without credentials, stored normalised. Unless private targets are allowed, ' +
    'every address its host resolves to must be public (no private, loopback, link-local or metadata addresses).',
  examples: ['https://example.com/hooks/commerce'],
})

/** Every kind, and each family of kinds as `<family>.*`. */
export const EVENT_FILTERS = [...EVENT_KINDS, ...new Set(EVENT_KINDS.map((kind) => `${kind.split('.')[0]}.*`))]

/** An event kind as the API shows it (events, deliveries, webhook bodies). */
export const EventKindSchema = Type.Enum(EVENT_KINDS, { title: 'EventKind', description: 'What happened: `<resource>.<change>`' })

const EventSelector = Type.Enum([...EVENT_KINDS, '*'])

const WebhookEvents = Type.Array(EventSelector, {
  minItems: 1,
  // Unique items of the enum: never more than the kinds and '*'.
  maxItems: EVENT_KINDS.length + 1,
  uniqueItems: true,
  description: "Event kinds to receive, or exactly ['*'] for every kind",
  examples: [['order.created', 'order.paid']],
})

const Secret = Type.String({
  minLength: 16,
  maxLength: 256,
  pattern: '^[\\x21-\\x7E]+$',
  description:
    'Signs each delivery. 16–256 printable ASCII characters without spaces; generated as `whsec_` + base64 of 32 random bytes when omitted',
})

const Description = Nullable(Type.String({ maxLength: 1000 }))

/** A subscription as every read shows it: the secret is write-only. */
export const Webhook = Type.Object({
  id: Uuid,
  url: Type.String(),
  events: Type.Array(EventSelector),
  description: Description,
  is_active: Type.Boolean({ description: 'Inactive subscriptions get no new deliveries' }),
  previous_secret_expires_at: Nullable(
    Type.String({
      format: 'date-time',
      description: 'Until then, deliveries are also signed with the secret before the last rotation; null when none is',
    }),
  ),
  consecutive_failures: Type.Integer({ description: 'Failed attempts since the last successful one' }),
  last_success_at: Nullable(Type.String({ format: 'date-time', description: 'The last successful attempt' })),
  last_failure_at: Nullable(Type.String({ format: 'date-time', description: 'The last failed attempt' })),
  failing_since: Nullable(
    Type.String({ format: 'date-time', description: 'The first failure since the last success; null while healthy' }),
  ),
  disabled_at: Nullable(
    Type.String({
      format: 'date-time',
      description: 'When the worker disabled the subscription for failing too long (`webhook.disabled`); null otherwise',
    }),
  ),
  disabled_reason: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { title: 'Webhook', description: 'A webhook subscription: where events of the chosen kinds are delivered, and how delivery goes' })
export type Webhook = Static<typeof Webhook>

const ShownSecret = Type.String({ description: 'Shown only in this answer; keep it to verify signatures' })

/** The answer of a create: the only read of a secret the API did not receive. */
export const WebhookWithSecret = Type.Object(
  { ...Webhook.properties, secret: ShownSecret },
  { title: 'WebhookWithSecret', description: 'A webhook subscription with its signing secret, shown only in this answer' },
)
export type WebhookWithSecret = Static<typeof WebhookWithSecret>

/** The answer of an update: carries `secret` only when the update set a new one. */
export const UpdatedWebhook = Type.Object(
  { ...Webhook.properties, secret: Type.Optional(ShownSecret) },
  { title: 'UpdatedWebhook', description: 'A webhook subscription after an update: with `secret` when the update set a new one' },
)
export type UpdatedWebhook = Static<typeof UpdatedWebhook>

export const CreateWebhook = Type.Object(
  {
    url: WebhookUrl,
    events: WebhookEvents,
    secret: Type.Optional(Secret),
    description: Type.Optional(Description),
    is_active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, title: 'CreateWebhookRequest' },
)
export type CreateWebhook = Static<typeof CreateWebhook>

export const UpdateWebhook = Type.Partial(CreateWebhook, { additionalProperties: false, minProperties: 1, title: 'UpdateWebhookRequest' })
export type UpdateWebhook = Static<typeof UpdateWebhook>

export const RotateWebhookSecret = Type.Object(
  {
    secret: Type.Optional(Secret),
    grace_period_seconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_SECRET_GRACE_SECONDS,
        default: 86_400,
        description: 'How long the current secret keeps signing beside the new one (default 24 hours; 0 ends it now)',
      }),
    ),
  },
  { additionalProperties: false, title: 'RotateWebhookSecretRequest' },
)
export type RotateWebhookSecret = Static<typeof RotateWebhookSecret>

/** The answer of a rotation: the new secret, shown once. */
export const RotatedWebhook = WebhookWithSecret

export const WebhookList = Type.Object(
  { webhooks: Type.Array(Webhook), meta: PageOrCursorMeta },
  { title: 'WebhookList', description: 'A page of webhook subscriptions' },
)
export type WebhookList = Static<typeof WebhookList>

export const WebhookAttempt = Type.Object({
  attempt: Type.Integer({ description: '1 for the first attempt, counting on over redeliveries' }),
  succeeded: Type.Boolean(),
  status_code: Nullable(Type.Integer({ description: "The receiver's HTTP status; null when no answer came" })),
  duration_ms: Type.Integer(),
  error: Nullable(Type.String({ description: 'Why the attempt failed without an answer (timeout, refused target, …)' })),
  response_body: Nullable(Type.String({ description: 'The first 1 KiB of the response body' })),
  created_at: Timestamp,
}, { title: 'WebhookAttempt', description: 'One attempt at a delivery: what the receiver answered, or why nothing came' })
export type WebhookAttempt = Static<typeof WebhookAttempt>

const DeliveryStatus = Type.Enum(DELIVERY_STATUSES)

export const WebhookDelivery = Type.Object({
  id: Uuid,
  webhook_id: Uuid,
  event_id: Uuid,
  event: EventKindSchema,
  status: DeliveryStatus,
  attempts: Type.Integer({ description: 'Attempts made so far' }),
  next_attempt_at: Nullable(Type.String({ format: 'date-time', description: 'When the next attempt is due; null when none is' })),
  last_status_code: Nullable(Type.Integer()),
  created_at: Timestamp,
  updated_at: Timestamp,
  attempt_log: Type.Array(WebhookAttempt, { description: 'Every attempt, oldest first' }),
}, { title: 'WebhookDelivery', description: 'The delivery of one event to one subscription, with its attempts' })
export type WebhookDelivery = Static<typeof WebhookDelivery>

export const WebhookDeliveryList = Type.Object(
  { deliveries: Type.Array(WebhookDelivery), meta: PageOrCursorMeta },
  { title: 'WebhookDeliveryList', description: "A page of a subscription's deliveries" },
)
export type WebhookDeliveryList = Static<typeof WebhookDeliveryList>

export const ListWebhookDeliveriesQuery = Type.Object({
  ...PaginationQuery.properties,
  status: Type.Optional(DeliveryStatus),
})
export type ListWebhookDeliveriesQuery = Static<typeof ListWebhookDeliveriesQuery>

/** What a replay selects: existing deliveries by status, and `missing` for events this subscription has none of. */
export const REPLAY_STATUSES = [...DELIVERY_STATUSES, 'missing'] as const

export const ReplayWebhook = Type.Object(
  {
    from: Type.String({ format: 'date-time', maxLength: 64, description: 'Events created at or after this (inclusive)' }),
    to: Type.String({ format: 'date-time', maxLength: 64, description: 'Events created before this (exclusive)' }),
    events: Type.Optional(
      Type.Array(Type.Enum(EVENT_FILTERS), {
        minItems: 1,
        uniqueItems: true,
        maxItems: EVENT_FILTERS.length,
        description: 'Kinds (`order.paid`) or families (`order.*`); every kind the subscription receives when omitted',
      }),
    ),
    status: Type.Optional(
      Type.Array(Type.Enum(REPLAY_STATUSES), {
        minItems: 1,
        maxItems: REPLAY_STATUSES.length,
        uniqueItems: true,
        description:
          "Deliveries in these states; `missing` adds the window's events the subscription wants but has no delivery of " +
          '(made while it was inactive, or before it existed). Default: every existing delivery, not `missing`',
      }),
    ),
    dry_run: Type.Optional(Type.Boolean({ default: false, description: 'Count what would be replayed, queue nothing' })),
  },
  { additionalProperties: false, title: 'ReplayWebhookRequest' },
)
export type ReplayWebhook = Static<typeof ReplayWebhook>

export const WebhookReplay = Type.Object({
  matched: Type.Integer({ description: 'Deliveries (and missing events) the filters select' }),
  replayed: Type.Integer({ description: `Queued to be sent now: 0 in a dry run; at most ${MAX_REPLAY_DELIVERIES}` }),
  created: Type.Integer({ description: 'Of those, new deliveries made for `missing` events' }),
  dry_run: Type.Boolean(),
}, { title: 'WebhookReplay', description: 'What a replay selected and queued' })
export type WebhookReplay = Static<typeof WebhookReplay>

/** `/webhooks/:id/deliveries/:delivery_id` */
export const WebhookDeliveryParams = Type.Object({ id: Uuid, delivery_id: Uuid })
