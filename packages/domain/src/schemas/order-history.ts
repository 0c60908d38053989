/** An order's history: every change, who made it, when, and the money it moved. */
import { Type, type Static } from 'typebox'
import { EventKindSchema } from './webhooks.js'
import { Nullable, PageOrCursorMeta, Timestamp } from './common.js'

export const ACTOR_TYPES = ['user', 'api_key', 'oauth_client', 'provider'] as const

export const OrderHistoryEntry = Type.Object(
  {
    event_id: Type.String({ format: 'uuid', description: 'The event (GET /events/{id} has the order as it was after the change)' }),
    event: EventKindSchema,
    sequence: Type.Integer({ minimum: 1, description: 'Its place in the order’s events: 1, 2, 3… without gaps' }),
    timestamp: Timestamp,
    actor: Nullable(
      Type.Object(
        {
          type: Type.Enum(ACTOR_TYPES, { description: 'user: an account’s token; api_key, oauth_client: an integration; provider: the payment provider’s notification' }),
          id: Type.String({ description: 'The account, key or client id, or the provider’s name' }),
        },
        { title: 'Actor', description: 'Who made a change; null for a guest’s checkout and for the worker (a payment settled by its sweep)' },
      ),
    ),
    request_id: Nullable(Type.String({ description: 'The request that made the change (X-Request-Id), for the logs' })),
    amount_captured: Type.Number({ description: 'Money taken by this change, in major units (payment.succeeded), else 0' }),
    amount_refunded: Type.Number({ description: 'Money given back by this change, in major units (order.refunded, payment.refunded), else 0' }),
  },
  { title: 'OrderHistoryEntry', description: 'A change of an order, from its event' },
)
export type OrderHistoryEntry = Static<typeof OrderHistoryEntry>

export const OrderHistory = Type.Object(
  { history: Type.Array(OrderHistoryEntry), meta: PageOrCursorMeta },
  { title: 'OrderHistory', description: "A page of an order's changes, oldest first" },
)
export type OrderHistory = Static<typeof OrderHistory>
