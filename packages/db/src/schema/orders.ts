/**
 * Checkouts, orders and what happens to them: payments, refunds, fulfillments, tracking. Money is
 * integer minor units of the order's currency; an order keeps its own copy of every price,
 * address and name, so later catalog or customer changes never rewrite it.
 */
import { sql } from 'drizzle-orm'
import {
  type AnyPgColumn,
  bigint,
  check,
  index,
  integer,
  json,
  jsonb,
  pgEnum,
  pgSequence,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core'
import {
  CHECKOUT_STATUSES,
  FULFILLMENT_STATUSES,
  ORDER_STATUSES,
  PAYMENT_STATES,
  PAYMENT_STATUSES,
  REFUND_STATUSES,
  RESERVATION_STATUSES,
  RETURN_STATUSES,
  type Address,
} from '@commerce/domain'
import { customers } from './accounts.js'
import { carts } from './carts.js'
import { createdAt, id, updatedAt } from './columns.js'
import { stockLocations } from './inventory.js'
import { campaigns, promotions } from './pricing.js'

export const orderStatus = pgEnum('order_status', ORDER_STATUSES)
export const paymentStatus = pgEnum('payment_status', PAYMENT_STATUSES)
export const fulfillmentStatus = pgEnum('fulfillment_status', FULFILLMENT_STATUSES)
export const paymentState = pgEnum('payment_state', PAYMENT_STATES)
export const refundStatus = pgEnum('refund_status', REFUND_STATUSES)
export const captureMode = pgEnum('capture_mode', ['automatic', 'manual'])
export const reservationStatus = pgEnum('reservation_status', RESERVATION_STATUSES)
export const checkoutStatus = pgEnum('checkout_status', CHECKOUT_STATUSES)
export const returnStatus = pgEnum('return_status', RETURN_STATUSES)

/** Order numbers "1001", "1002", …: gaps are possible (a rolled-back checkout), repeats never. */
export const orderNumberSequence = pgSequence('order_number_seq', { startWith: 1001 })

const money = (name: string) => bigint(name, { mode: 'number' })

export const checkouts = pgTable(
  'checkouts',
  {
    id: id(),
    cartId: uuid('cart_id')
      .notNull()
      .references(() => carts.id, { onDelete: 'cascade' }),
    status: checkoutStatus('status').notNull().default('open'),
    billingAddress: jsonb('billing_address').$type<Address>(),
    orderId: uuid('order_id'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('checkouts_cart_idx').on(t.cartId)],
)

export interface OrderShippingMethod {
  id: string | null
  name: string
  amount_minor: number
}

export interface OrderCoupon {
  id: string
  code: string
  type: string
  discount_minor: number
}

/** A promotion applied to the order (automatic or by code): what it took off the goods and the shipping. */
export interface OrderPromotion {
  id: string
  code: string | null
  name: string
  type: string
  discount_minor: number
  shipping_discount_minor: number
}

export const orders = pgTable(
  'orders',
  {
    id: id(),
    orderNumber: text('order_number')
      .notNull()
      .default(sql`nextval('order_number_seq')::text`),
    status: orderStatus('status').notNull().default('pending'),
    paymentStatus: paymentStatus('payment_status').notNull().default('unpaid'),
    fulfillmentStatus: fulfillmentStatus('fulfillment_status').notNull().default('unfulfilled'),
    customerId: uuid('customer_id').references(() => customers.id, { onDelete: 'set null' }),
    email: text('email').notNull(),
    currency: text('currency').notNull(),
    subtotalMinor: money('subtotal_minor').notNull(),
    discountMinor: money('discount_minor').notNull(),
    taxMinor: money('tax_minor').notNull(),
    shippingMinor: money('shipping_minor').notNull(),
    totalMinor: money('total_minor').notNull(),
    /** Sums of what payments captured, hold (authorized, not captured) and refunded, kept with every change of a payment. */
    paidMinor: money('paid_minor').notNull().default(0),
    authorizedMinor: money('authorized_minor').notNull().default(0),
    refundedMinor: money('refunded_minor').notNull().default(0),
    shippingAddress: jsonb('shipping_address').$type<Address>(),
    billingAddress: jsonb('billing_address').$type<Address>(),
    shippingMethod: jsonb('shipping_method').$type<OrderShippingMethod>(),
    /** The promotions with a code, as the coupons API names them. */
    coupons: jsonb('coupons').$type<OrderCoupon[]>().notNull().default([]),
    /** Every promotion applied, automatic ones included. */
    promotions: jsonb('promotions').$type<OrderPromotion[]>().notNull().default([]),
    notes: text('notes'),
    cartId: uuid('cart_id'),
    /** Set by DELETE: the order is hidden from lists and reads, and kept. */
    archivedAt: timestamp('archived_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('orders_order_number_key').on(t.orderNumber),
    index('orders_customer_idx').on(t.customerId, t.id.desc()),
    index('orders_status_idx').on(t.status, t.id.desc()),
    check('orders_totals_identity', sql`${t.totalMinor} = ${t.subtotalMinor} - ${t.discountMinor} + ${t.taxMinor} + ${t.shippingMinor}`),
    check('orders_amounts_nonnegative', sql`${t.subtotalMinor} >= 0 and ${t.discountMinor} >= 0 and ${t.taxMinor} >= 0 and ${t.shippingMinor} >= 0 and ${t.totalMinor} >= 0`),
    check('orders_refunds_within_payments', sql`${t.refundedMinor} >= 0 and ${t.refundedMinor} <= ${t.paidMinor}`),
    check('orders_authorized_nonnegative', sql`${t.authorizedMinor} >= 0`),
  ],
)

export const orderItems = pgTable(
  'order_items',
  {
    id: id(),
    orderId: uuid('order_id')
      .notNull()
      .references(() => orders.id, { onDelete: 'cascade' }),
    productId: uuid('product_id'),
    variantId: uuid('variant_id'),
    title: text('title').notNull(),
    variantTitle: text('variant_title'),
    sku: text('sku'),
    quantity: integer('quantity').notNull(),
    unitPriceMinor: money('unit_price_minor').notNull(),
    subtotalMinor: money('subtotal_minor').notNull(),
    discountMinor: money('discount_minor').notNull(),
    taxMinor: money('tax_minor').notNull(),
    totalMinor: money('total_minor').notNull(),
    fulfilledQuantity: integer('fulfilled_quantity').notNull().default(0),
    /** Units in returns that were not declined or canceled: never more than were shipped. */
    returnedQuantity: integer('returned_quantity').notNull().default(0),
    /** Units an order edit cancelled before they were shipped: their share is off the order's totals. */
    canceledQuantity: integer('canceled_quantity').notNull().default(0),
    createdAt: createdAt(),
  },
  (t) => [
    index('order_items_order_idx').on(t.orderId),
    check('order_items_quantity_positive', sql`${t.quantity} > 0`),
    check('order_items_fulfilled_within_quantity', sql`${t.fulfilledQuantity} between 0 and ${t.quantity}`),
    check('order_items_returned_within_fulfilled', sql`${t.returnedQuantity} between 0 and ${t.fulfilledQuantity}`),
    check('order_items_canceled_within_unfulfilled', sql`${t.canceledQuantity} >= 0 and ${t.canceledQuantity} + ${t.fulfilledQuantity} <= ${t.quantity}`),
    check('order_items_totals_identity', sql`${t.totalMinor} = ${t.subtotalMinor} - ${t.discountMinor} + ${t.taxMinor}`),
  ],
)

export const payments = pgTable(
  'payments',
  {
    id: id(),
    /** Null until the payment's order exists (a checkout payment in progress, or declined: the attempt is kept). */
    orderId: uuid('order_id').references(() => orders.id, { onDelete: 'cascade' }),
    checkoutId: uuid('checkout_id').references(() => checkouts.id, { onDelete: 'set null' }),
    provider: text('provider').notNull(),
    method: text('method').notNull(),
    status: paymentState('status').notNull(),
    captureMode: captureMode('capture_mode').notNull().default('automatic'),
    /** What the payment is for: asked, then held once authorized. */
    amountMinor: money('amount_minor').notNull(),
    capturedMinor: money('captured_minor').notNull().default(0),
    currency: text('currency').notNull(),
    refundedMinor: money('refunded_minor').notNull().default(0),
    /** The provider's id of the payment (a Stripe PaymentIntent); null until it answered. */
    providerReference: text('provider_reference'),
    failureCode: text('failure_code'),
    failureMessage: text('failure_message'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('payments_order_idx').on(t.orderId, t.id),
    index('payments_checkout_idx').on(t.checkoutId),
    index('payments_provider_reference_idx').on(t.provider, t.providerReference),
    // What the reconciliation sweep looks for: payments the provider has not settled.
    index('payments_unsettled_idx').on(t.updatedAt).where(sql`${t.status} in ('pending', 'requires_action')`),
    check('payments_captured_within_amount', sql`${t.capturedMinor} >= 0 and ${t.capturedMinor} <= ${t.amountMinor}`),
    check('payments_refunds_within_captured', sql`${t.refundedMinor} >= 0 and ${t.refundedMinor} <= ${t.capturedMinor}`),
  ],
)

/**
 * What a checkout holds while its payment is with the provider (issue 20): the stock and promotion
 * uses it took (already out of inventory_quantity, into times_used and the campaigns' budgets, so
 * nothing else can take them), and the order to place once the payment succeeds, made when the cart was priced. `held`
 * until the order is placed (the row is then deleted: the order, its allocations and the stock
 * movements say what it held; settlementOf reports it `converted`) or the stock and coupons are
 * given back (`released`: declined, cancelled, expired; kept for CHECKOUT_RESERVATION_RETENTION,
 * as a payment that succeeds late becomes its order from it, then deleted by the worker).
 */
export const checkoutReservations = pgTable(
  'checkout_reservations',
  {
    paymentId: uuid('payment_id')
      .primaryKey()
      .references(() => payments.id, { onDelete: 'cascade' }),
    checkoutId: uuid('checkout_id')
      .notNull()
      .references(() => checkouts.id, { onDelete: 'cascade' }),
    status: reservationStatus('status').notNull().default('held'),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    /** The units held, one entry per order line and location (ReservedStock). */
    stock: jsonb('stock').$type<ReservedStock[]>().notNull(),
    /** The promotions whose uses (and campaign budgets) it took: promotion_usages rows of this payment. */
    promotionIds: uuid('promotion_ids').array().notNull(),
    /** The order to place: its row's columns, its items, its events and its answer (see checkouts/reserve.ts). */
    placement: json('placement').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    // One payment in progress per checkout.
    uniqueIndex('checkout_reservations_held_key').on(t.checkoutId).where(sql`${t.status} = 'held'`),
    index('checkout_reservations_expiry_idx').on(t.expiresAt).where(sql`${t.status} = 'held'`),
    index('checkout_reservations_released_idx').on(t.updatedAt).where(sql`${t.status} = 'released'`),
  ],
)

/** Units of one order line held at one location: `id` is the stock item (variant, or product), `line` the order item to place. */
export interface ReservedStock {
  id: string
  variant: boolean
  location: string
  line: string
  quantity: number
}

/**
 * One use of a promotion by a checkout: what per-customer limits count and campaign budgets add
 * up. Written with the reservation that took it, marked released when the reservation is given
 * back (and unmarked if a late payment holds it again), linked to the order once placed.
 */
export const promotionUsages = pgTable(
  'promotion_usages',
  {
    id: id(),
    promotionId: uuid('promotion_id')
      .notNull()
      .references(() => promotions.id, { onDelete: 'cascade' }),
    campaignId: uuid('campaign_id').references(() => campaigns.id, { onDelete: 'set null' }),
    paymentId: uuid('payment_id')
      .notNull()
      .references(() => payments.id, { onDelete: 'cascade' }),
    orderId: uuid('order_id').references(() => orders.id, { onDelete: 'set null' }),
    /** Who used it: the customer's id, or the cart's email lower-cased; null when neither is known. */
    customerKey: text('customer_key'),
    /** What it took off, goods and shipping, in minor units of `currency`. */
    discountMinor: money('discount_minor').notNull(),
    currency: text('currency').notNull(),
    releasedAt: timestamp('released_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
  },
  (t) => [
    index('promotion_usages_customer_idx').on(t.promotionId, t.customerKey).where(sql`${t.releasedAt} is null`),
    index('promotion_usages_payment_idx').on(t.paymentId),
    index('promotion_usages_order_idx').on(t.orderId),
    // A promotion's uses, newest first (GET /promotions/:id/usages).
    index('promotion_usages_promotion_idx').on(t.promotionId, t.createdAt, t.id),
  ],
)

/**
 * A customer's held uses of a promotion with a per-customer limit: the row a checkout takes a use
 * on when it writes, so that two checkouts of one customer cannot both take the last use and no
 * checkout waits for another customer's. Made when first needed, from the customer's held
 * promotion_usages; dropped when the promotion's limit changes (a trigger), so made again from
 * them. `use_limit` is the limit as the last use took it: the CHECK refuses a use past it.
 */
export const promotionCustomerUses = pgTable(
  'promotion_customer_uses',
  {
    promotionId: uuid('promotion_id')
      .notNull()
      .references(() => promotions.id, { onDelete: 'cascade' }),
    customerKey: text('customer_key').notNull(),
    uses: integer('uses').notNull(),
    useLimit: integer('use_limit').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.promotionId, t.customerKey] }),
    check('promotion_customer_uses_within_limit', sql`${t.uses} >= 0 and ${t.uses} <= ${t.useLimit}`),
  ],
)

/** Provider notifications already handled, by the provider's event id: each is handled once. */
export const providerEvents = pgTable(
  'provider_events',
  {
    provider: text('provider').notNull(),
    eventId: text('event_id').notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.provider, t.eventId] })],
)

/**
 * Returns of shipped units (RMA). The refund columns hold the estimate made when the return was
 * asked for until it is received, then the figure refunded (@commerce/domain computeReturnRefund);
 * `refunded_minor` is what went back through the provider.
 */
export const returns = pgTable(
  'returns',
  {
    id: id(),
    orderId: uuid('order_id')
      .notNull()
      .references(() => orders.id, { onDelete: 'cascade' }),
    status: returnStatus('status').notNull().default('requested'),
    currency: text('currency').notNull(),
    reason: text('reason'),
    declineReason: text('decline_reason'),
    merchandiseMinor: money('merchandise_minor').notNull(),
    shippingMinor: money('shipping_minor').notNull().default(0),
    feeMinor: money('fee_minor').notNull().default(0),
    totalMinor: money('total_minor').notNull(),
    refundedMinor: money('refunded_minor').notNull().default(0),
    /** The part of the refund kept towards what the order owed (an exchange's new items) instead of refunded. */
    creditMinor: money('credit_minor').notNull().default(0),
    /** The order edit that added an exchange's new items: the return pays for them. */
    exchangeEditId: uuid('exchange_edit_id').references((): AnyPgColumn => orderEdits.id, { onDelete: 'set null' }),
    approvedAt: timestamp('approved_at', { withTimezone: true, mode: 'date' }),
    declinedAt: timestamp('declined_at', { withTimezone: true, mode: 'date' }),
    receivedAt: timestamp('received_at', { withTimezone: true, mode: 'date' }),
    canceledAt: timestamp('canceled_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('returns_order_idx').on(t.orderId, t.id),
    check('returns_refund_identity', sql`${t.totalMinor} = ${t.merchandiseMinor} + ${t.shippingMinor} - ${t.feeMinor} and ${t.totalMinor} >= 0`),
    check('returns_settled_within_refund', sql`${t.refundedMinor} >= 0 and ${t.creditMinor} >= 0 and ${t.refundedMinor} + ${t.creditMinor} <= ${t.totalMinor}`),
  ],
)

export const returnItems = pgTable(
  'return_items',
  {
    returnId: uuid('return_id')
      .notNull()
      .references(() => returns.id, { onDelete: 'cascade' }),
    orderItemId: uuid('order_item_id')
      .notNull()
      .references(() => orderItems.id, { onDelete: 'cascade' }),
    quantity: integer('quantity').notNull(),
    restockedQuantity: integer('restocked_quantity').notNull().default(0),
    damagedQuantity: integer('damaged_quantity').notNull().default(0),
    subtotalMinor: money('subtotal_minor').notNull(),
    discountMinor: money('discount_minor').notNull(),
    taxMinor: money('tax_minor').notNull(),
    totalMinor: money('total_minor').notNull(),
  },
  (t) => [
    primaryKey({ name: 'return_items_pkey', columns: [t.returnId, t.orderItemId] }),
    check('return_items_quantity_positive', sql`${t.quantity} > 0`),
    // Nothing received yet, or every unit received as restocked or damaged.
    check(
      'return_items_received_units',
      sql`${t.restockedQuantity} >= 0 and ${t.damagedQuantity} >= 0 and ${t.restockedQuantity} + ${t.damagedQuantity} in (0, ${t.quantity})`,
    ),
    check('return_items_totals_identity', sql`${t.totalMinor} = ${t.subtotalMinor} - ${t.discountMinor} + ${t.taxMinor}`),
  ],
)

/**
 * Order edits: units not shipped cancelled and lines added, in one change. `changes` keeps what
 * the edit did as the API shows it (the units each line gave up with the share of its amounts,
 * the lines added); the totals before and after, and what the edit refunded or left owed.
 */
export const orderEdits = pgTable(
  'order_edits',
  {
    id: id(),
    orderId: uuid('order_id')
      .notNull()
      .references(() => orders.id, { onDelete: 'cascade' }),
    reason: text('reason'),
    changes: jsonb('changes').$type<OrderEditChanges>().notNull(),
    totalBeforeMinor: money('total_before_minor').notNull(),
    totalAfterMinor: money('total_after_minor').notNull(),
    refundedMinor: money('refunded_minor').notNull().default(0),
    owedMinor: money('owed_minor').notNull().default(0),
    createdAt: createdAt(),
  },
  (t) => [index('order_edits_order_idx').on(t.orderId, t.id)],
)

export interface OrderEditChanges {
  canceled: { line_id: string; quantity: number; subtotal_minor: number; discount_minor: number; tax_minor: number; total_minor: number }[]
  added: string[]
}

/**
 * Money given back on a payment. A refund through the provider is written `pending` (its amount
 * counted in the payment's and the order's refunded sums at once, so nothing can refund the same
 * money twice) in the transaction that decides it; the provider is asked after that transaction
 * commits (@commerce/payments refunds.ts), never while it holds locks, under `provider_key`, so
 * asking again (the worker's sweep of refunds left pending) never refunds twice. The provider's
 * refusal makes it `failed` and gives its amount back to the sums. A refund made at the provider
 * itself (its dashboard), learnt from its webhook, is recorded `succeeded`.
 */
export const refunds = pgTable(
  'refunds',
  {
    id: id(),
    paymentId: uuid('payment_id')
      .notNull()
      .references(() => payments.id, { onDelete: 'cascade' }),
    /** Null only for a payment that succeeded after its checkout was released: it never had an order. */
    orderId: uuid('order_id').references(() => orders.id, { onDelete: 'cascade' }),
    amountMinor: money('amount_minor').notNull(),
    currency: text('currency').notNull(),
    reason: text('reason'),
    status: refundStatus('status').notNull().default('succeeded'),
    /** The idempotency key the provider is asked with; null for a refund the provider made itself, or a manual payment's. */
    providerKey: text('provider_key'),
    providerReference: text('provider_reference'),
    failureCode: text('failure_code'),
    failureMessage: text('failure_message'),
    /** The return whose receipt made this refund, if one did. */
    returnId: uuid('return_id').references(() => returns.id, { onDelete: 'set null' }),
    /** The order edit that made this refund, if one did: such refunds settle the total, the others give value back. */
    orderEditId: uuid('order_edit_id').references(() => orderEdits.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('refunds_payment_idx').on(t.paymentId),
    index('refunds_order_idx').on(t.orderId),
    index('refunds_return_idx').on(t.returnId).where(sql`${t.returnId} is not null`),
    index('refunds_order_edit_idx').on(t.orderEditId).where(sql`${t.orderEditId} is not null`),
    // One refund per key: the same decision made twice (copies of a webhook) refunds once.
    uniqueIndex('refunds_provider_key_idx').on(t.providerKey),
    // What the worker's sweep looks for: refunds the provider has not made yet.
    index('refunds_pending_idx').on(t.createdAt).where(sql`${t.status} = 'pending'`),
    check('refunds_amount_positive', sql`${t.amountMinor} > 0`),
  ],
)

export const fulfillments = pgTable(
  'fulfillments',
  {
    id: id(),
    orderId: uuid('order_id')
      .notNull()
      .references(() => orders.id, { onDelete: 'cascade' }),
    carrier: text('carrier').notNull(),
    trackingNumber: text('tracking_number').notNull(),
    trackingUrl: text('tracking_url'),
    /** Where the units were sent from; null for fulfillments made before stock locations. */
    locationId: uuid('location_id').references(() => stockLocations.id),
    /** The latest tracking event's status ("in_transit", "delivered", …); "shipped" until the first one. */
    status: text('status').notNull().default('shipped'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('fulfillments_order_idx').on(t.orderId, t.id), index('fulfillments_tracking_idx').on(t.trackingNumber)],
)

export const fulfillmentItems = pgTable(
  'fulfillment_items',
  {
    fulfillmentId: uuid('fulfillment_id')
      .notNull()
      .references(() => fulfillments.id, { onDelete: 'cascade' }),
    orderItemId: uuid('order_item_id')
      .notNull()
      .references(() => orderItems.id, { onDelete: 'cascade' }),
    quantity: integer('quantity').notNull(),
  },
  (t) => [
    primaryKey({ name: 'fulfillment_items_pkey', columns: [t.fulfillmentId, t.orderItemId] }),
    check('fulfillment_items_quantity_positive', sql`${t.quantity} > 0`),
  ],
)

export const trackingEvents = pgTable(
  'tracking_events',
  {
    id: id(),
    fulfillmentId: uuid('fulfillment_id')
      .notNull()
      .references(() => fulfillments.id, { onDelete: 'cascade' }),
    status: text('status').notNull(),
    description: text('description'),
    location: text('location'),
    occurredAt: timestamp('occurred_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    createdAt: createdAt(),
  },
  (t) => [index('tracking_events_fulfillment_idx').on(t.fulfillmentId, t.occurredAt)],
)

/**
 * Idempotency keys: one row per (principal, key), written in the same transaction as the
 * business write it guards, so a replay returns exactly what the first request committed.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    /** `user:<id>`, `key:<id>` or `ip:<address>`: whose key this is. */
    principal: text('principal').notNull(),
    key: text('key').notNull(),
    /** Method, route and a hash of the body: the same key with another request is refused. */
    fingerprint: text('fingerprint').notNull(),
    responseStatus: integer('response_status'),
    /** The answer's JSON text as it was sent (json, not jsonb): a replay sends the same bytes. */
    responseBody: json('response_body'),
    /** Null while the first request is still running. */
    completedAt: timestamp('completed_at', { withTimezone: true, mode: 'date' }),
    expiresAt: timestamp('expires_at', { withTimezone: true, mode: 'date' }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ name: 'idempotency_keys_pkey', columns: [t.principal, t.key] }), index('idempotency_keys_expires_idx').on(t.expiresAt)],
)

/** Where an order line's units not shipped yet are committed: quantity − canceled − fulfilled in all. */
export const orderItemAllocations = pgTable(
  'order_item_allocations',
  {
    orderItemId: uuid('order_item_id')
      .notNull()
      .references(() => orderItems.id, { onDelete: 'cascade' }),
    locationId: uuid('location_id')
      .notNull()
      .references(() => stockLocations.id),
    quantity: integer('quantity').notNull(),
  },
  (t) => [
    primaryKey({ name: 'order_item_allocations_pkey', columns: [t.orderItemId, t.locationId] }),
    check('order_item_allocations_quantity_nonnegative', sql`${t.quantity} >= 0`),
  ],
)
