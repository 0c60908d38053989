/** Order edits: units not shipped cancelled and lines added, previewed, then committed. */
import { Type, type Static } from 'typebox'
import { MAX_CART_LINES, MAX_LINE_QUANTITY } from '../constants.js'
import { Nullable, PageOrCursorMeta, Timestamp, Uuid } from './common.js'
import { Money, Order } from './orders.js'

/** Lines a change adds to an order (an edit, an exchange). */
export const NewLines = (description: string) =>
  Type.Array(
    Type.Object(
      { product_id: Uuid, variant_id: Type.Optional(Nullable(Uuid)), quantity: Type.Integer({ minimum: 1, maximum: MAX_LINE_QUANTITY }) },
      { additionalProperties: false },
    ),
    { maxItems: MAX_CART_LINES, description },
  )

export const EditOrder = Type.Object(
  {
    lines: Type.Optional(
      Type.Array(
        Type.Object(
          {
            line_id: Uuid,
            quantity: Type.Integer({
              minimum: 0,
              maximum: MAX_LINE_QUANTITY,
              description: 'The units the line keeps: fewer cancels units not shipped (never below those shipped); more is refused (add a line)',
            }),
          },
          { additionalProperties: false },
        ),
        { maxItems: MAX_CART_LINES },
      ),
    ),
    add: Type.Optional(NewLines('Lines to add, at today’s price and tax for the order’s shipping address, without the order’s coupons')),
    reason: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 500 }))),
  },
  { additionalProperties: false, title: 'EditOrderRequest' },
)
export type EditOrder = Static<typeof EditOrder>

export const OrderEdit = Type.Object(
  {
    id: Uuid,
    order_id: Uuid,
    reason: Nullable(Type.String()),
    canceled: Type.Array(
      Type.Object(
        { line_id: Uuid, quantity: Type.Integer(), subtotal: Money, discount: Money, tax: Money, total: Money },
        { title: 'OrderEditCancellation', description: 'Units of a line the edit cancelled, and the share of the line’s amounts they took off the order' },
      ),
    ),
    added_line_ids: Type.Array(Uuid, { description: 'The lines the edit added (`items[].id` of the order)' }),
    total_before: Money,
    total_after: Money,
    difference: Type.Number({ description: 'total_after − total_before' }),
    amount_refunded: Type.Number({ description: 'What the edit gave back through the payment provider: what had been paid beyond the new total' }),
    amount_owed: Type.Number({ description: 'What the order owes after the edit: pay it with POST /orders/{id}/payments' }),
    refund_ids: Type.Array(Uuid, { description: 'The refunds the edit made' }),
    created_at: Timestamp,
  },
  { title: 'OrderEdit', description: 'A change to an order’s lines before they ship, and the money it moved' },
)
export type OrderEdit = Static<typeof OrderEdit>

export const OrderEditResult = Type.Object(
  { edit: OrderEdit, order: Order },
  { title: 'OrderEditResult', description: 'An order edit and the order after it (for a preview: as it would be; nothing was kept)' },
)
export type OrderEditResult = Static<typeof OrderEditResult>

export const OrderEditList = Type.Object(
  { edits: Type.Array(OrderEdit), meta: PageOrCursorMeta },
  { title: 'OrderEditList', description: "A page of an order's edits, oldest first" },
)
export type OrderEditList = Static<typeof OrderEditList>
