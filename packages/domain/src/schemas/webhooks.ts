/** Webhook subscriptions, their deliveries and attempt logs, and the event log, as the API shows and takes them. */
import { Type, type Static } from 'typebox'
import { DELIVERY_STATUSES, EVENT_KINDS, MAX_REPLAY_DELIVERIES, MAX_SECRET_GRACE_SECONDS } from '../constants.js'
import { CursorQuery, ListMeta, Nullable, PageOrCursorMeta, PaginationQuery, Timestamp, Uuid } from './common.js'

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
})
export type Webhook = Static<typeof Webhook>

const ShownSecret = Type.String({ description: 'Shown only in this answer; keep it to verify signatures' })

/** The answer of a create: the only read of a secret the API did not receive. */
export const WebhookWithSecret = Type.Object({ ...Webhook.properties, secret: ShownSecret })
export type WebhookWithSecret = Static<typeof WebhookWithSecret>

/** The answer of an update: carries `secret` only when the update set a new one. */
export const UpdatedWebhook = Type.Object({ ...Webhook.properties, secret: Type.Optional(ShownSecret) })
export type UpdatedWebhook = Static<typeof UpdatedWebhook>

export const CreateWebhook = Type.Object(
  {
    url: WebhookUrl,
    events: WebhookEvents,
    secret: Type.Optional(Secret),
    description: Type.Optional(Description),
    is_active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
)
export type CreateWebhook = Static<typeof CreateWebhook>

export const UpdateWebhook = Type.Partial(CreateWebhook, { additionalProperties: false, minProperties: 1 })
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
  { additionalProperties: false },
)
export type RotateWebhookSecret = Static<typeof RotateWebhookSecret>

/** The answer of a rotation: the new secret, shown once. */
export const RotatedWebhook = WebhookWithSecret

export const WebhookList = Type.Object({ webhooks: Type.Array(Webhook), meta: ListMeta })
export type WebhookList = Static<typeof WebhookList>

export const WebhookAttempt = Type.Object({
  attempt: Type.Integer({ description: '1 for the first attempt, counting on over redeliveries' }),
  succeeded: Type.Boolean(),
  status_code: Nullable(Type.Integer({ description: "The receiver's HTTP status; null when no answer came" })),
  duration_ms: Type.Integer(),
  error: Nullable(Type.String({ description: 'Why the attempt failed without an answer (timeout, refused target, …)' })),
  response_body: Nullable(Type.String({ description: 'The first 1 KiB of the response body' })),
  created_at: Timestamp,
})
export type WebhookAttempt = Static<typeof WebhookAttempt>

const DeliveryStatus = Type.Enum(DELIVERY_STATUSES)

export const WebhookDelivery = Type.Object({
  id: Uuid,
  webhook_id: Uuid,
  event_id: Uuid,
  event: Type.String({ description: 'The event kind', examples: ['order.paid'] }),
  status: DeliveryStatus,
  attempts: Type.Integer({ description: 'Attempts made so far' }),
  next_attempt_at: Nullable(Type.String({ format: 'date-time', description: 'When the next attempt is due; null when none is' })),
  last_status_code: Nullable(Type.Integer()),
  created_at: Timestamp,
  updated_at: Timestamp,
  attempt_log: Type.Array(WebhookAttempt, { description: 'Every attempt, oldest first' }),
})
export type WebhookDelivery = Static<typeof WebhookDelivery>

export const WebhookDeliveryList = Type.Object({ deliveries: Type.Array(WebhookDelivery), meta: ListMeta })
export type WebhookDeliveryList = Static<typeof WebhookDeliveryList>

export const ListWebhookDeliveriesQuery = Type.Object({
  page: PaginationQuery.properties.page,
  per_page: PaginationQuery.properties.per_page,
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
  { additionalProperties: false },
)
export type ReplayWebhook = Static<typeof ReplayWebhook>

export const WebhookReplay = Type.Object({
  matched: Type.Integer({ description: 'Deliveries (and missing events) the filters select' }),
  replayed: Type.Integer({ description: `Queued to be sent now: 0 in a dry run; at most ${MAX_REPLAY_DELIVERIES}` }),
  created: Type.Integer({ description: 'Of those, new deliveries made for `missing` events' }),
  dry_run: Type.Boolean(),
})
export type WebhookReplay = Static<typeof WebhookReplay>

/** `/webhooks/:id/deliveries/:delivery_id` */
export const WebhookDeliveryParams = Type.Object({ id: Uuid, delivery_id: Uuid })

export const Event = Type.Object({
  id: Uuid,
  event: Type.String({ description: 'The event kind', examples: ['product.created'] }),
  timestamp: Timestamp,
  resource_id: Type.String({
    format: 'uuid',
    description: 'What the event is about: the order (for order.* and its payments), product, customer or webhook subscription',
  }),
  sequence: Type.Integer({
    minimum: 1,
    description:
      "The event's number among its resource's events: 1, 2, 3… in the order they committed, without gaps. A receiver " +
      'orders the deliveries of one resource by it (deliveries themselves are not ordered)',
  }),
  data: Type.Record(Type.String(), Type.Unknown(), { description: 'The resource as it was after the change' }),
  customer_id: Nullable(Uuid),
})
export type Event = Static<typeof Event>


export const ListEventsQuery = Type.Object({
  page: PaginationQuery.properties.page,
  per_page: PaginationQuery.properties.per_page,
  event: Type.Optional(Type.Enum(EVENT_FILTERS, { description: 'A kind (`order.paid`) or a family (`order.*`)' })),
  from: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'inclusive' })),
  to: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'exclusive' })),
  after: CursorQuery.properties.after,
})
export type ListEventsQuery = Static<typeof ListEventsQuery>

export const EventList = Type.Object({ events: Type.Array(Event), meta: PageOrCursorMeta })
export type EventList = Static<typeof EventList>
