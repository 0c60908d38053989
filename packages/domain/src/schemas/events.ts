/**
 * The event log and the event catalog: every event kind, what its `data` is, and the body a
 * webhook delivery of it carries (signature.ts signs that body).
 */
import { Type, type Static, type TSchema } from 'typebox'
import { EVENT_KINDS, type EventKind } from '../constants.js'
import { Customer } from './auth.js'
import { Product } from './catalog.js'
import { Collection } from './collections.js'
import { Nullable, PageOrCursorMeta, PaginationQuery, Timestamp, Uuid } from './common.js'
import { Fulfillment, Order, Payment, Refund } from './orders.js'
import { DraftOrderInvoice } from './draft-orders.js'
import { InventoryChange, InventoryLevel } from './inventory.js'
import { OrderEdit } from './order-edits.js'
import { Return } from './returns.js'
import { EVENT_FILTERS, EventKindSchema, Webhook } from './webhooks.js'

const orderEventFields = {
  ...Order.properties,
  order_id: Type.String({ format: 'uuid', description: 'The order’s id again (as `id`)' }),
  total: Type.Number({ description: 'The order’s total again (as `totals.total`)' }),
}
export const OrderEventData = Type.Object(orderEventFields, {
  title: 'OrderEventData',
  description: 'The order as it was after the change, with `order_id` and `total` repeated at the top',
})
export const OrderShippedEventData = Type.Object(
  { ...orderEventFields, fulfillment: Fulfillment },
  { title: 'OrderShippedEventData', description: 'The order as it was after the change, and the fulfillment that was sent' },
)
export const OrderRefundedEventData = Type.Object(
  { ...orderEventFields, refund: Refund },
  { title: 'OrderRefundedEventData', description: 'The order as it was after the change, and the refund that was made' },
)
export const OrderEditedEventData = Type.Object(
  { ...orderEventFields, edit: OrderEdit },
  { title: 'OrderEditedEventData', description: 'The order as it was after the edit, and the edit' },
)

const accountEventFields = {
  user_id: Uuid,
  customer_id: Nullable(Uuid),
  email: Type.String({ description: 'The account’s email address (for the `*_requested` kinds: where the link goes)' }),
  first_name: Nullable(Type.String({ description: 'The customer’s first name, when known (to greet them)' })),
}
export const AccountEventData = Type.Object(accountEventFields, {
  title: 'AccountEventData',
  description: 'A customer account (a user, and its customer record when it has one)',
})
const linkFields = {
  ...accountEventFields,
  expires_at: Type.String({ format: 'date-time', description: 'Until when the emailed link works (the link itself is only in the email)' }),
}
export const AccountLinkEventData = Type.Object(linkFields, {
  title: 'AccountLinkEventData',
  description: 'A customer account and the single-use link the worker emails to `email`; the token is never in an event',
})
const previousEmail = Type.String({ description: 'The account’s email address before the change' })
export const AccountEmailChangeEventData = Type.Object(
  { ...linkFields, previous_email: previousEmail },
  { title: 'AccountEmailChangeEventData', description: 'An email change waiting for its confirmation: `email` is the new address, where the link goes' },
)
export const AccountEmailChangedEventData = Type.Object(
  { ...accountEventFields, previous_email: previousEmail },
  { title: 'AccountEmailChangedEventData', description: 'A customer account whose email address changed to `email`' },
)

interface EventSpec {
  /** The schema of the event's `data`. */
  data: TSchema
  /** When the event is written. */
  description: string
}

/** Every event kind: when it is written and what its `data` is. */
export const EVENT_CATALOG = {
  'order.created': { data: OrderEventData, description: 'An order was placed: by a checkout completion, or by an admin (POST /orders)' },
  'order.paid': { data: OrderEventData, description: 'An order was paid: its captured payments cover the total' },
  'order.shipped': {
    data: OrderShippedEventData,
    description: 'A fulfillment of the order was sent: written for every fulfillment; the first moves the order to shipped',
  },
  'order.completed': { data: OrderEventData, description: 'An order was marked completed' },
  'order.cancelled': { data: OrderEventData, description: 'An order was cancelled' },
  'order.refunded': {
    data: OrderRefundedEventData,
    description: 'Money was refunded on the order: written for every refund; the one that returns everything moves the order to refunded',
  },
  'order.edited': {
    data: OrderEditedEventData,
    description: 'An order edit cancelled units not shipped or added lines: written after the refunds it made (an order.refunded each)',
  },
  'payment.authorized': { data: Payment, description: 'A payment was authorized: held, not taken yet (PAYMENT_CAPTURE=manual)' },
  'payment.succeeded': { data: Payment, description: 'A payment was captured, in full or in part' },
  'payment.failed': { data: Payment, description: 'A payment was declined, or failed at the provider' },
  'payment.canceled': { data: Payment, description: 'A payment was voided: its hold released, nothing taken' },
  'payment.refunded': {
    data: Payment,
    description: 'A payment that succeeded after its checkout had been released was refunded at the provider',
  },
  'refund.failed': {
    data: Refund,
    description:
      'The payment provider refused a refund recorded as pending (e.g. the money was refunded in its dashboard meanwhile): ' +
      'its amount counts as kept again on the payment and the order',
  },
  'return.requested': { data: Return, description: 'A return of shipped units was asked for, by the customer or an admin' },
  'return.approved': { data: Return, description: 'A return was approved: the shop expects the units back' },
  'return.declined': { data: Return, description: 'A return was declined' },
  'return.received': {
    data: Return,
    description: 'The units of a return came back: the restockable ones are in stock again, and the refund was made (an order.refunded each)',
  },
  'return.canceled': { data: Return, description: 'A return was withdrawn before its units were received' },
  'draft_order.invoice_sent': {
    data: DraftOrderInvoice,
    description: 'A draft order’s payment link was made (or made again, which stops the previous one): `invoice_url` is the link to send the customer',
  },
  'inventory.adjusted': {
    data: InventoryChange,
    description: 'An admin adjusted a level (goods received, a count, damage) or moved units between locations: the levels after, and their movements',
  },
  'inventory.low': {
    data: InventoryLevel,
    description: 'A level’s available units fell below its `low_stock_threshold` (once per crossing: it is sent again only after the level has been back at or above it)',
  },
  'product.created': { data: Product, description: 'A product was created' },
  'product.updated': { data: Product, description: 'A product, its variants or its images changed, or it was deactivated' },
  'collection.created': { data: Collection, description: 'A collection was created' },
  'collection.updated': { data: Collection, description: 'A collection, its rules or (manual) its products changed; an automatic one’s products changing with the catalog is not an event' },
  'collection.deleted': { data: Collection, description: 'A collection was deleted (the data is what it was)' },
  'customer.created': { data: Customer, description: 'A customer record was created: at sign-up, or by an admin (POST /customers)' },
  'account.activated': {
    data: AccountEventData,
    description: 'A customer account can be signed in to: at sign-up, or when its email address is verified if REQUIRE_EMAIL_VERIFICATION is on',
  },
  'account.verification_requested': {
    data: AccountLinkEventData,
    description: 'A link to verify the account’s email address is to be emailed: at sign-up when REQUIRE_EMAIL_VERIFICATION is on, or asked again',
  },
  'account.email_verified': { data: AccountEventData, description: 'A customer followed the emailed link: the account’s email address is verified' },
  'account.password_reset_requested': {
    data: AccountLinkEventData,
    description: 'Someone asked for a password reset of the account: a link to set a new password is to be emailed',
  },
  'account.password_changed': {
    data: AccountEventData,
    description: 'The account’s password was changed (by a reset link, or by the signed-in customer): every token issued before is refused',
  },
  'account.email_change_requested': {
    data: AccountEmailChangeEventData,
    description: 'A signed-in customer asked to change the account’s email address: a confirmation link is to be emailed to the new one',
  },
  'account.email_changed': { data: AccountEmailChangedEventData, description: 'The new email address was confirmed and is now the account’s' },
  'webhook.disabled': {
    data: Webhook,
    description: 'A webhook subscription was disabled because its deliveries kept failing',
  },
} as const satisfies Record<EventKind, EventSpec>

/** The `data` of an event of kind K. */
export type EventData<K extends EventKind = EventKind> = Static<(typeof EVENT_CATALOG)[K]['data']>

/** The fields every event has, as the event log shows them and webhook deliveries carry them. */
const eventFields = {
  id: Type.String({
    format: 'uuid',
    description: 'The event’s id (a UUIDv7, ascending in commit order): the same on every delivery attempt and replay; dedupe on it',
  }),
  timestamp: Type.String({ format: 'date-time', description: 'When the event was committed (ISO 8601 UTC)' }),
  resource_id: Type.String({
    format: 'uuid',
    description:
      'What the event is about, whose sequence it counts in: the order for order.* and return.* events and for the payment events of ' +
      'an order; the payment itself for a checkout’s payment that placed no order; the inventory level for inventory.* events (a ' +
      'transfer’s source level); else the product, customer or subscription',
  }),
  sequence: Type.Integer({
    minimum: 1,
    description:
      "The event's number among its resource's events: 1, 2, 3… in the order they committed, without gaps. A receiver " +
      'orders the deliveries of one resource by it (deliveries themselves are not ordered)',
  }),
}

export const Event = Type.Object(
  {
    id: Uuid,
    event: EventKindSchema,
    timestamp: Timestamp,
    resource_id: eventFields.resource_id,
    sequence: eventFields.sequence,
    data: Type.Record(Type.String(), Type.Unknown(), {
      description: 'The resource as it was after the change: for each kind, the `data` of its webhook body (`<Kind>Event`)',
    }),
    customer_id: Nullable(Uuid),
  },
  { title: 'Event', description: 'Something that happened to a resource, as the event log keeps it' },
)
export type Event = Static<typeof Event>

export const ListEventsQuery = Type.Object({
  ...PaginationQuery.properties,
  event: Type.Optional(Type.Enum(EVENT_FILTERS, { description: 'A kind (`order.paid`) or a family (`order.*`)' })),
  from: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'inclusive' })),
  to: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'exclusive' })),
})
export type ListEventsQuery = Static<typeof ListEventsQuery>

export const EventList = Type.Object(
  { events: Type.Array(Event), meta: PageOrCursorMeta },
  { title: 'EventList', description: 'A page of events' },
)
export type EventList = Static<typeof EventList>

/** The name of a delivery body of kind `kind` in the OpenAPI document: `order.created` -> `OrderCreatedEvent`. */
export const webhookEventName = (kind: EventKind) => `${kind.replace(/(?:^|[._])([a-z])/g, (_, letter: string) => letter.toUpperCase())}Event`

/** The body of a webhook delivery of one kind (signedDelivery writes it): the event with its typed data. */
function webhookEventOf<K extends EventKind>(kind: K) {
  const { data, description } = EVENT_CATALOG[kind]
  return Type.Object(
    { id: eventFields.id, event: Type.Literal(kind), timestamp: eventFields.timestamp, resource_id: eventFields.resource_id, sequence: eventFields.sequence, data },
    { title: webhookEventName(kind), description: `The body of a \`${kind}\` delivery. ${description}.` },
  )
}

/** The body of a webhook delivery, by event kind. */
export const WEBHOOK_EVENTS = Object.fromEntries(EVENT_KINDS.map((kind) => [kind, webhookEventOf(kind)])) as {
  [K in EventKind]: ReturnType<typeof webhookEventOf<K>>
}
/** The body of any webhook delivery: narrow it on `event`. */
export type WebhookEvent = { [K in EventKind]: Static<(typeof WEBHOOK_EVENTS)[K]> }[EventKind]
