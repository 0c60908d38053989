/** Returns of an order's shipped units: the request, the answer, and what receiving them refunds. */
import { Type, type Static } from 'typebox'
import { MAX_CART_LINES, MAX_LINE_QUANTITY, RETURN_STATUSES } from '../constants.js'
import { Nullable, PageOrCursorMeta, PaginationQuery, Timestamp, Uuid } from './common.js'
import { NewLines } from './order-edits.js'
import { Money } from './orders.js'

const Note = Type.String({ minLength: 1, maxLength: 500 })

export const ReturnStatusSchema = Type.Enum(RETURN_STATUSES, {
  description:
    'requested (asked for), approved (the shop expects the parcel), declined, received (the units came back and the ' +
    'refund was made), canceled (withdrawn before it was received)',
})

export const CreateReturn = Type.Object(
  {
    items: Type.Array(
      Type.Object(
        {
          line_id: Type.String({ format: 'uuid', maxLength: 36, description: 'The order line (`items[].id` of the order)' }),
          quantity: Type.Integer({ minimum: 1, maximum: MAX_LINE_QUANTITY, description: 'Units of the line to send back: at most those shipped and not in another return' }),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: MAX_CART_LINES },
    ),
    reason: Type.Optional(Nullable(Note)),
    exchange: Type.Optional(
      NewLines(
        'An exchange: the items to send instead (another size, another product), added to the order now at today’s price and ' +
          'tax, their stock taken; the return’s refund pays for them and the customer pays or gets back only the difference. ' +
          'Shipped orders only',
      ),
    ),
  },
  { additionalProperties: false, title: 'CreateReturnRequest' },
)
export type CreateReturn = Static<typeof CreateReturn>

export const DeclineReturn = Type.Object(
  { reason: Type.Optional(Nullable(Note)) },
  { additionalProperties: false, title: 'DeclineReturnRequest' },
)
export type DeclineReturn = Static<typeof DeclineReturn>

export const ReceiveReturn = Type.Object(
  {
    damaged: Type.Optional(
      Type.Array(
        Type.Object(
          {
            line_id: Uuid,
            quantity: Type.Integer({ minimum: 1, maximum: MAX_LINE_QUANTITY, description: 'Units of the line that came back damaged: refunded, not restocked' }),
          },
          { additionalProperties: false },
        ),
        { maxItems: MAX_CART_LINES, description: 'The units that cannot be sold again; every other unit received goes back into stock' },
      ),
    ),
    shipping_refund: Type.Optional(
      Type.Number({
        minimum: 0,
        description:
          'The shipping to give back, at most what is left of the shipping charged. By default all of it when the return ' +
          'brings back the last units the customer had, else none',
      }),
    ),
    restocking_fee: Type.Optional(
      Type.Number({ minimum: 0, maximum: 100, description: 'A fee kept from the merchandise refunded, as a percentage (up to 4 decimals); none by default' }),
    ),
    location_id: Type.Optional(
      Type.String({
        format: 'uuid',
        maxLength: 36,
        description: 'The stock location the restocked units go on hand at. By default where the order’s latest fulfillment was sent from, else the default location',
      }),
    ),
  },
  { additionalProperties: false, title: 'ReceiveReturnRequest' },
)
export type ReceiveReturn = Static<typeof ReceiveReturn>

export const ReturnLine = Type.Object(
  {
    line_id: Uuid,
    title: Type.String(),
    variant_title: Nullable(Type.String()),
    sku: Nullable(Type.String()),
    quantity: Type.Integer(),
    restocked_quantity: Type.Integer({ description: 'Units put back into stock when the return was received' }),
    damaged_quantity: Type.Integer({ description: 'Units received damaged: refunded, not restocked' }),
    subtotal: Money,
    discount: Money,
    tax: Money,
    total: Type.Number({ description: 'What these units give back: their share of the line’s subtotal, less its discount, plus its tax' }),
  },
  { title: 'ReturnLine', description: 'Units of an order line in a return, and what they give back' },
)

export const ReturnRefundSchema = Type.Object(
  {
    merchandise: Type.Number({ description: 'The lines’ totals added up' }),
    shipping: Money,
    restocking_fee: Money,
    total: Type.Number({ description: 'merchandise + shipping − restocking_fee' }),
  },
  {
    title: 'ReturnRefund',
    description: 'What the return gives back: an estimate until it is received (without shipping or fee), then the figure refunded',
  },
)

export const ReturnExchange = Type.Object(
  {
    edit_id: Type.String({ format: 'uuid', description: 'The order edit that added the new items (`GET /orders/{id}/edits`)' }),
    line_ids: Type.Array(Uuid, { description: 'The order lines added (`items[].id` of the order), shipped like any other' }),
    total: Type.Number({ description: 'What the new items cost, tax included' }),
    difference: Type.Number({
      description: 'The new items’ total less the return’s refund: what the customer pays (positive) or gets back (negative) for the swap',
    }),
  },
  { title: 'ReturnExchange', description: 'The items an exchange sends instead of those returned' },
)

export const Return = Type.Object(
  {
    id: Uuid,
    order_id: Uuid,
    order_number: Type.String({ description: 'The order’s number (`order_number` of the order), as the customer knows it' }),
    email: Type.String({ description: 'The order’s email address: where the return’s emails go' }),
    status: ReturnStatusSchema,
    currency: Type.String(),
    reason: Nullable(Type.String()),
    decline_reason: Nullable(Type.String()),
    items: Type.Array(ReturnLine),
    refund: ReturnRefundSchema,
    amount_refunded: Type.Number({
      description: 'What went back through the payment provider when the return was received: the refund, or less when earlier refunds of the order left less',
    }),
    amount_credited: Type.Number({
      description: 'The part of the refund kept towards what the order owed when the return was received (an exchange’s new items) instead of refunded',
    }),
    refund_ids: Type.Array(Uuid, { description: 'The refunds (`payments[].refunds[]` of the order) the return made' }),
    exchange: Nullable(ReturnExchange),
    created_at: Timestamp,
    approved_at: Nullable(Timestamp),
    declined_at: Nullable(Timestamp),
    received_at: Nullable(Timestamp),
    canceled_at: Nullable(Timestamp),
    updated_at: Timestamp,
  },
  { title: 'Return', description: 'Units of an order that the customer sends back, and their refund' },
)
export type Return = Static<typeof Return>

export const ReturnList = Type.Object(
  { returns: Type.Array(Return), meta: PageOrCursorMeta },
  { title: 'ReturnList', description: 'A page of returns, oldest first' },
)
export type ReturnList = Static<typeof ReturnList>

export const ListReturnsQuery = Type.Object({
  ...PaginationQuery.properties,
  status: Type.Optional(ReturnStatusSchema),
})
export type ListReturnsQuery = Static<typeof ListReturnsQuery>
