import { Type, type Static } from 'typebox'
import {
  PROMOTION_TYPES,
  FULFILLMENT_STATUSES,
  MAX_CART_LINES,
  MAX_LINE_QUANTITY,
  ORDER_STATUSES,
  PAYMENT_STATUSES,
} from '../constants.js'
import { PAYMENT_STATES, REFUND_STATUSES } from '../payments.js'
import { Address, AddressInput } from './addresses.js'
import { CartCoupon, CartItem, Totals } from './carts.js'
import { Currency, Nullable, PageOrCursorMeta, PaginationQuery, Timestamp, Uuid } from './common.js'
import { ShippingRate } from './pricing.js'

const Email = Type.String({ format: 'email', maxLength: 254 })
export const Money = Type.Number({ description: 'Decimal amount in major units of the order currency' })
const Text = (maxLength: number) => Type.String({ minLength: 1, maxLength })

// ---------------------------------------------------------------- checkout

export const CreateCheckout = Type.Object(
  {
    cart_id: Uuid,
    email: Email,
    shipping_address: AddressInput,
    billing_address: Type.Optional(Nullable(AddressInput)),
  },
  { additionalProperties: false, title: 'CreateCheckoutRequest' },
)
export type CreateCheckout = Static<typeof CreateCheckout>

export const SelectShipping = Type.Object({ rate_id: Uuid }, { additionalProperties: false, title: 'SelectShippingRateRequest' })
export type SelectShipping = Static<typeof SelectShipping>

export const PaymentInput = Type.Object(
  {
    method: Text(50),
    token: Text(200),
    return_url: Type.Optional(
      Type.String({ format: 'uri', maxLength: 2000, description: 'Where a redirect-based confirmation (3-D Secure) brings the customer back to' }),
    ),
  },
  { additionalProperties: false, title: 'PaymentInput', description: "How the customer pays: the method and the payment provider's token for it" },
)
export type PaymentInput = Static<typeof PaymentInput>

export const CompleteCheckout = Type.Object({ payment: PaymentInput }, { additionalProperties: false, title: 'CompleteCheckoutRequest' })
export type CompleteCheckout = Static<typeof CompleteCheckout>

export const Checkout = Type.Object({
  id: Uuid,
  cart_id: Uuid,
  status: Type.Enum(['open', 'completed']),
  customer_id: Nullable(Uuid),
  email: Nullable(Type.String()),
  currency: Type.String(),
  items: Type.Array(CartItem),
  coupons: Type.Array(CartCoupon),
  shipping_address: Nullable(Address),
  billing_address: Nullable(Address),
  shipping_rates: Type.Array(ShippingRate, { description: 'The rates available for the address and weight, cheapest first' }),
  shipping_rate_id: Nullable(Uuid),
  totals: Totals,
  order_id: Nullable(Uuid),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { title: 'Checkout', description: 'A checkout of a cart: addresses, the shipping rates to choose from and the totals, until it places an order' })
export type Checkout = Static<typeof Checkout>

// ---------------------------------------------------------------- payments and refunds

export const Refund = Type.Object({
  id: Uuid,
  payment_id: Uuid,
  order_id: Nullable(Type.String({
    format: 'uuid',
    maxLength: 36,
    description: 'Null only for the refund of a payment that succeeded after its checkout had been released (it has no order)',
  })),
  amount: Money,
  currency: Type.String(),
  reason: Nullable(Type.String()),
  status: Type.Enum(REFUND_STATUSES, {
    description:
      'pending: recorded, the provider has not made it yet (its amount already counts as refunded); succeeded; failed: the ' +
      'provider refused it, its amount counts as kept again (refund.failed)',
  }),
  failure_code: Nullable(Type.String({ description: "The provider's code, when the refund failed" })),
  failure_message: Nullable(Type.String({ description: "The provider's reason, when the refund failed" })),
  created_at: Timestamp,
}, { title: 'Refund', description: 'Money given back on a payment' })
export type Refund = Static<typeof Refund>

export const Payment = Type.Object({
  id: Uuid,
  order_id: Nullable(Uuid),
  checkout_id: Nullable(Uuid),
  provider: Type.String(),
  method: Type.String(),
  status: Type.Enum(PAYMENT_STATES, {
    description:
      'pending (the provider has not answered), requires_action (the customer must confirm), authorized (held, not ' +
      'taken), captured, partially_captured, partially_refunded, refunded, failed, canceled (the hold voided)',
  }),
  capture_mode: Type.Enum(['automatic', 'manual'] as const, { description: 'automatic: taken at checkout; manual: held at checkout, taken at fulfillment or by POST /payments/{id}/capture' }),
  amount: Money,
  amount_captured: Money,
  amount_refunded: Money,
  currency: Type.String(),
  failure_code: Nullable(Type.String()),
  failure_message: Nullable(Type.String()),
  refunds: Type.Array(Refund),
  created_at: Timestamp,
}, { title: 'Payment', description: 'A payment of an order (or of a checkout placing one), with its refunds' })
export type Payment = Static<typeof Payment>

export const NextActionSchema = Type.Object({
  type: Type.Enum(['use_sdk', 'redirect'] as const, {
    description: "use_sdk: confirm with the provider's client library (Stripe.js handleNextAction) and client_secret; redirect: send the customer to redirect_url",
  }),
  client_secret: Nullable(Type.String()),
  redirect_url: Nullable(Type.String()),
}, { title: 'NextAction', description: 'What the customer must do to confirm a payment' })

/** The 202 answer of a checkout completion whose payment waits for the customer or the provider. */
export const CheckoutPaymentPending = Type.Object({
  checkout_id: Uuid,
  payment: Payment,
  next_action: Nullable(NextActionSchema),
  reserved_until: Type.String({ format: 'date-time', maxLength: 64, description: 'ISO 8601 UTC. The stock and coupons stay held until then; later, the checkout is released' }),
}, { title: 'CheckoutPaymentPending', description: 'The payment waits for the customer (next_action) or the provider; the order is not placed yet' })
export type CheckoutPaymentPending = Static<typeof CheckoutPaymentPending>
export const PaymentList = Type.Object(
  { payments: Type.Array(Payment), meta: PageOrCursorMeta },
  { title: 'PaymentList', description: "A page of an order's payments, oldest first" },
)
export type PaymentList = Static<typeof PaymentList>

export const CreatePayment = Type.Object(
  {
    method: Text(50),
    token: Text(200),
    amount: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Defaults to what is still owed' })),
  },
  { additionalProperties: false, title: 'CreatePaymentRequest' },
)
export type CreatePayment = Static<typeof CreatePayment>

export const CapturePayment = Type.Object(
  { amount: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Defaults to everything authorized; less releases the rest' })) },
  { additionalProperties: false, title: 'CapturePaymentRequest' },
)
export type CapturePayment = Static<typeof CapturePayment>

export const CreateRefund = Type.Object(
  {
    amount: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Defaults to what is left to refund on the payment' })),
    reason: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
  },
  { additionalProperties: false, title: 'CreateRefundRequest' },
)
export type CreateRefund = Static<typeof CreateRefund>

// ---------------------------------------------------------------- fulfillments and tracking

export const FulfillmentItem = Type.Object(
  { order_item_id: Uuid, quantity: Type.Integer() },
  { title: 'FulfillmentItem', description: 'Units of an order line sent in a fulfillment' },
)

export const Fulfillment = Type.Object({
  id: Uuid,
  order_id: Uuid,
  location_id: Nullable(Type.String({ format: 'uuid', description: 'The stock location the units were sent from; null for fulfillments made before stock locations' })),
  carrier: Type.String(),
  tracking_number: Type.String(),
  tracking_url: Nullable(Type.String()),
  status: Type.String(),
  items: Type.Array(FulfillmentItem),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { title: 'Fulfillment', description: 'A shipment of units of an order, with its carrier and tracking number' })
export type Fulfillment = Static<typeof Fulfillment>
export const FulfillmentList = Type.Object(
  { fulfillments: Type.Array(Fulfillment), meta: PageOrCursorMeta },
  { title: 'FulfillmentList', description: "A page of an order's fulfillments" },
)
export type FulfillmentList = Static<typeof FulfillmentList>

export const CreateFulfillment = Type.Object(
  {
    items: Type.Optional(
      Type.Array(
        Type.Object(
          { order_item_id: Uuid, quantity: Type.Integer({ minimum: 1, maximum: MAX_LINE_QUANTITY }) },
          { additionalProperties: false, title: 'FulfillmentItemInput', description: 'Units of an order line to send' },
        ),
        { minItems: 1, maxItems: MAX_CART_LINES, description: 'Omitted: everything not yet fulfilled' },
      ),
    ),
    carrier: Text(100),
    tracking_number: Text(100),
    tracking_url: Type.Optional(Nullable(Type.String({ format: 'uri', maxLength: 2048 }))),
    location_id: Type.Optional(
      Type.String({
        format: 'uuid',
        maxLength: 36,
        description:
          'The stock location the units leave from. Omitted: the one location the units to send are committed at ' +
          '(400 when they are committed at several: name one, or send one fulfillment per location)',
      }),
    ),
  },
  { additionalProperties: false, title: 'CreateFulfillmentRequest' },
)
export type CreateFulfillment = Static<typeof CreateFulfillment>

export const TrackingEvent = Type.Object({
  status: Type.String(),
  description: Nullable(Type.String()),
  location: Nullable(Type.String()),
  occurred_at: Timestamp,
}, { title: 'TrackingEvent', description: "A step of a parcel's journey" })
export type TrackingEvent = Static<typeof TrackingEvent>

export const CreateTrackingEvent = Type.Object(
  {
    status: Type.String({ minLength: 1, maxLength: 50, pattern: '^[a-z][a-z0-9_]*$', examples: ['in_transit', 'delivered'] }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    location: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
    occurred_at: Type.Optional(Type.String({ format: 'date-time', maxLength: 64 })),
  },
  { additionalProperties: false, title: 'CreateTrackingEventRequest' },
)
export type CreateTrackingEvent = Static<typeof CreateTrackingEvent>

export const TrackingParams = Type.Object({ tracking_number: Text(100) })

export const Tracking = Type.Object({
  carrier: Type.String(),
  tracking_number: Type.String(),
  tracking_url: Nullable(Type.String()),
  status: Type.String(),
  events: Type.Array(TrackingEvent, { description: 'Newest first' }),
}, { title: 'Tracking', description: 'Where a parcel is: its status and tracking events' })
export type Tracking = Static<typeof Tracking>

// ---------------------------------------------------------------- orders

export const OrderItem = Type.Object({
  id: Uuid,
  product_id: Nullable(Uuid),
  variant_id: Nullable(Uuid),
  title: Type.String(),
  variant_title: Nullable(Type.String()),
  sku: Nullable(Type.String()),
  quantity: Type.Integer(),
  fulfilled_quantity: Type.Integer(),
  returned_quantity: Type.Integer({ description: 'Units in returns not declined or canceled (at most those fulfilled)' }),
  canceled_quantity: Type.Integer({ description: 'Units an order edit cancelled before they shipped (counted in `quantity`; their share is off the totals)' }),
  unit_price: Money,
  line_total: Money,
  discount: Money,
  tax: Money,
  total: Money,
}, { title: 'OrderItem', description: 'A line of an order, priced as it was placed' })
export type OrderItem = Static<typeof OrderItem>

export const Order = Type.Object({
  id: Uuid,
  order_number: Type.String(),
  status: Type.Enum(ORDER_STATUSES),
  payment_status: Type.Enum(PAYMENT_STATUSES),
  fulfillment_status: Type.Enum(FULFILLMENT_STATUSES),
  customer_id: Nullable(Uuid),
  email: Type.String(),
  currency: Type.String(),
  items: Type.Array(OrderItem),
  shipping_address: Nullable(Address),
  billing_address: Nullable(Address),
  shipping_method: Nullable(
    Type.Object(
      { id: Nullable(Uuid), name: Type.String(), amount: Money },
      { title: 'OrderShippingMethod', description: 'How the order ships and what shipping cost' },
    ),
  ),
  coupons: Type.Array(
    Type.Object(
      { id: Uuid, code: Type.String(), type: Type.Enum(PROMOTION_TYPES), discount: Money },
      { title: 'OrderCoupon', description: 'A coupon (a promotion by code) used on the order and what it took off (free_shipping: the shipping waived)' },
    ),
  ),
  promotions: Type.Array(
    Type.Object(
      {
        id: Uuid,
        code: Nullable(Type.String({ description: 'null for an automatic promotion' })),
        name: Type.String(),
        type: Type.Enum(PROMOTION_TYPES),
        discount: Type.Number({ description: 'What it took off the goods' }),
        shipping_discount: Type.Number({ description: 'What it took off the shipping' }),
      },
      { title: 'OrderPromotion', description: 'A promotion applied to the order, by code or automatic, and what it took off' },
    ),
    { description: 'Every promotion applied at checkout, in the order they applied' },
  ),
  totals: Totals,
  amount_paid: Money,
  amount_authorized: Type.Number({ description: 'Held by authorized payments and not captured yet, in major units (captured at fulfillment)' }),
  amount_refunded: Money,
  amount_owed: Type.Number({
    description:
      'What the customer still owes, in major units: what `POST /orders/{id}/payments` takes by default. A pending order ' +
      'its total less what was paid and is held; a paid or shipped order what edits and exchanges added beyond what was ' +
      'paid towards them (an exchange’s return on its way back counts as paying for its new items); otherwise 0',
  }),
  payments: Type.Array(Payment),
  fulfillments: Type.Array(Fulfillment),
  notes: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { title: 'Order', description: 'An order with its lines, payments and fulfillments' })
export type Order = Static<typeof Order>
export const OrderList = Type.Object(
  { orders: Type.Array(Order), meta: PageOrCursorMeta },
  { title: 'OrderList', description: 'A page of orders' },
)
export type OrderList = Static<typeof OrderList>

export const ListOrdersQuery = Type.Object({
  ...PaginationQuery.properties,
  status: Type.Optional(Type.Enum(ORDER_STATUSES)),
  customer_id: Type.Optional(Uuid),
  created_from: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'inclusive' })),
  created_to: Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description: 'exclusive' })),
})
export type ListOrdersQuery = Static<typeof ListOrdersQuery>

export const CreateOrder = Type.Object(
  {
    email: Email,
    customer_id: Type.Optional(Nullable(Uuid)),
    currency: Currency,
    items: Type.Array(
      Type.Object(
        {
          product_id: Uuid,
          variant_id: Type.Optional(Nullable(Uuid)),
          quantity: Type.Integer({ minimum: 1, maximum: MAX_LINE_QUANTITY }),
        },
        { additionalProperties: false, title: 'OrderItemInput', description: 'A product (or one of its variants) and how many' },
      ),
      { minItems: 1, maxItems: MAX_CART_LINES },
    ),
    shipping_address: AddressInput,
    billing_address: Type.Optional(Nullable(AddressInput)),
    shipping_method_id: Type.Optional(Nullable(Uuid)),
    notes: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
  },
  { additionalProperties: false, title: 'CreateOrderRequest' },
)
export type CreateOrder = Static<typeof CreateOrder>

export const UpdateOrder = Type.Object(
  {
    notes: Type.Optional(Nullable(Type.String({ maxLength: 5000 }))),
    email: Type.Optional(Email),
    shipping_address: Type.Optional(AddressInput),
    billing_address: Type.Optional(Nullable(AddressInput)),
  },
  { additionalProperties: false, minProperties: 1, title: 'UpdateOrderRequest' },
)
export type UpdateOrder = Static<typeof UpdateOrder>


export const OrderAllocations = Type.Object(
  {
    allocations: Type.Array(
      Type.Object({
        order_item_id: Uuid,
        location_id: Uuid,
        location_name: Type.String(),
        quantity: Type.Integer({ description: 'Units of the line promised from this location and not shipped yet' }),
      }),
    ),
  },
  { title: 'OrderAllocations', description: 'Where the units of an order not shipped yet are committed: what to pick where' },
)
export type OrderAllocations = Static<typeof OrderAllocations>
