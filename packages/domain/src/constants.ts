/** Closed sets of values, defined once: TypeBox unions and Postgres enums are built from them. */
export const ROLES = ['customer', 'admin'] as const

export const WEIGHT_UNITS = ['g', 'kg', 'lb', 'oz'] as const
export type WeightUnitCode = (typeof WEIGHT_UNITS)[number]

/** Lengths of a product's package (length, width, height). */
export const DIMENSION_UNITS = ['mm', 'cm', 'm', 'in', 'ft'] as const
export type DimensionUnitCode = (typeof DIMENSION_UNITS)[number]

/**
 * A product's place in its life (docs/catalog.md, "Status"): a `draft` is the staff's only, an
 * `active` one is public from its `published_at` on, an `archived` one is no longer sold.
 */
/** The kinds of value a custom attribute holds (docs/catalog.md, "Attributes"). */
export const ATTRIBUTE_TYPES = ['text', 'rich_text', 'integer', 'decimal', 'boolean', 'date', 'select', 'multi_select', 'product_reference'] as const
export type AttributeType = (typeof ATTRIBUTE_TYPES)[number]
/** What an attribute definition applies to. */
export const ATTRIBUTE_OWNERS = ['product', 'variant'] as const
export type AttributeOwner = (typeof ATTRIBUTE_OWNERS)[number]

/** A collection is a hand-ordered list, or what its rules match (docs/catalog.md, "Collections"). */
export const COLLECTION_KINDS = ['manual', 'automatic'] as const
export type CollectionKind = (typeof COLLECTION_KINDS)[number]
export const COLLECTION_MATCHES = ['all', 'any'] as const
export type CollectionMatch = (typeof COLLECTION_MATCHES)[number]
/** The orders a list of products can be sorted in; `manual` only within a collection, `relevance` only with a search. */
export const PRODUCT_SORTS = ['relevance', 'newest', 'title', 'price_asc', 'price_desc', 'best_selling', 'manual'] as const
export type ProductSort = (typeof PRODUCT_SORTS)[number]
export const COLLECTION_SORTS = ['manual', 'best_selling', 'price_asc', 'price_desc', 'newest', 'title'] as const
export type CollectionSort = (typeof COLLECTION_SORTS)[number]
/** What an automatic collection's rule reads. */
export const COLLECTION_RULE_FIELDS = ['tag', 'type', 'vendor', 'title', 'price', 'attribute', 'option', 'stock', 'on_sale'] as const
export type CollectionRuleField = (typeof COLLECTION_RULE_FIELDS)[number]
export const COLLECTION_RULE_OPERATORS = ['equals', 'not_equals', 'contains', 'greater_than', 'less_than', 'in_stock', 'out_of_stock', 'is_true', 'is_false'] as const
export type CollectionRuleOperator = (typeof COLLECTION_RULE_OPERATORS)[number]

export const PRODUCT_STATUSES = ['draft', 'active', 'archived'] as const
export type ProductStatusCode = (typeof PRODUCT_STATUSES)[number]

export const COUPON_TYPES = ['percentage', 'fixed_amount', 'free_shipping'] as const
export type CouponType = (typeof COUPON_TYPES)[number]

/** A coupon is a promotion with a code; promotions add buy X get Y (promotions.ts). */
export const PROMOTION_TYPES = [...COUPON_TYPES, 'buy_x_get_y'] as const
export type PromotionType = (typeof PROMOTION_TYPES)[number]
/** `combinable` promotions add up; an `exclusive` one applies alone (promotions.ts says which wins). */
export const PROMOTION_STACKING = ['combinable', 'exclusive'] as const
export type PromotionStacking = (typeof PROMOTION_STACKING)[number]

/** A campaign's budget counts money discounted (`spend`) or uses (`usage`). */
export const CAMPAIGN_BUDGET_TYPES = ['spend', 'usage'] as const
export type CampaignBudgetType = (typeof CAMPAIGN_BUDGET_TYPES)[number]

/** `sale` lists can only lower a line's price; an `override` list replaces the base price (price-selection.ts). */
export const PRICE_LIST_TYPES = ['sale', 'override'] as const
export type PriceListType = (typeof PRICE_LIST_TYPES)[number]

/** Why a cart line cannot be bought now (and counts 0): its product is no longer sold, is sold in another currency, or takes the total past the most an amount can be. */
export const CART_LINE_PROBLEMS = ['not_sold', 'other_currency', 'total_too_large'] as const
export type CartLineProblem = (typeof CART_LINE_PROBLEMS)[number]

export const EVENT_KINDS = [
  'order.created',
  'order.paid',
  'order.shipped',
  'order.completed',
  'order.cancelled',
  'order.refunded',
  'order.edited',
  'payment.authorized',
  'payment.succeeded',
  'payment.failed',
  'payment.canceled',
  'payment.refunded',
  'refund.failed',
  'return.requested',
  'return.approved',
  'return.declined',
  'return.received',
  'return.canceled',
  'draft_order.invoice_sent',
  'inventory.adjusted',
  'inventory.low',
  'product.created',
  'product.updated',
  'collection.created',
  'collection.updated',
  'collection.deleted',
  'customer.created',
  'account.activated',
  'account.verification_requested',
  'account.email_verified',
  'account.password_reset_requested',
  'account.password_changed',
  'account.email_change_requested',
  'account.email_changed',
  'webhook.disabled',
] as const
export type EventKind = (typeof EVENT_KINDS)[number]

/** The kinds a pattern names: a kind (`order.paid`), a family (`order.*`) or `*`; none when it names nothing known. */
export function eventKindsOf(pattern: string): readonly EventKind[] {
  if (pattern === '*') return EVENT_KINDS
  if (pattern.endsWith('.*')) return EVENT_KINDS.filter((kind) => kind.startsWith(pattern.slice(0, -1)))
  return EVENT_KINDS.filter((kind) => kind === pattern)
}

/** A webhook delivery: `pending` until an attempt succeeds or the retries run out. */
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number]

/**
 * The emails the worker sends, each made from one event kind (NOTIFICATION_TRIGGERS): the order
 * and return mails and the welcome can be turned off per shop; the three account mails carry a
 * link with a single-use token (ACCOUNT_TOKEN_PURPOSES). A canceled return makes none
 * (docs/notifications.md says why).
 */
export const NOTIFICATION_TEMPLATES = [
  'order_confirmation',
  'order_shipped',
  'order_refunded',
  'order_cancelled',
  'return_requested',
  'return_approved',
  'return_declined',
  'return_received',
  'welcome',
  'email_verification',
  'password_reset',
  'email_change',
  'draft_order_invoice',
] as const
export type NotificationTemplate = (typeof NOTIFICATION_TEMPLATES)[number]

/** The event kind each email is made from; its recipient is the event data's `email`. */
export const NOTIFICATION_TRIGGERS = {
  order_confirmation: 'order.paid',
  order_shipped: 'order.shipped',
  order_refunded: 'order.refunded',
  order_cancelled: 'order.cancelled',
  return_requested: 'return.requested',
  return_approved: 'return.approved',
  return_declined: 'return.declined',
  return_received: 'return.received',
  welcome: 'account.activated',
  email_verification: 'account.verification_requested',
  password_reset: 'account.password_reset_requested',
  email_change: 'account.email_change_requested',
  draft_order_invoice: 'draft_order.invoice_sent',
} as const satisfies Record<NotificationTemplate, EventKind>

/** The emails that carry a single-use link, and what its token does (account_tokens.purpose). */
export const ACCOUNT_TOKEN_PURPOSES = ['email_verification', 'password_reset', 'email_change'] as const satisfies readonly NotificationTemplate[]
export type AccountTokenPurpose = (typeof ACCOUNT_TOKEN_PURPOSES)[number]

/** An email: `pending` until an attempt is accepted by the mail server (`sent`) or the retries run out (`failed`). */
export const NOTIFICATION_STATUSES = ['pending', 'sent', 'failed'] as const
export type NotificationStatus = (typeof NOTIFICATION_STATUSES)[number]

/** Deliveries one replay may queue; a wider window is refused (its dry run counts it). */
export const MAX_REPLAY_DELIVERIES = 10_000
/** The longest grace period of a rotated webhook secret, in seconds (30 days). */
export const MAX_SECRET_GRACE_SECONDS = 30 * 86_400

/** Page size bounds of every list endpoint. */
export const DEFAULT_PER_PAGE = 20
export const MAX_PER_PAGE = 100

/** Bounds of one cart, so a cart stays cheap to price and its totals stay exact. */
export const MAX_CART_LINES = 100
export const MAX_LINE_QUANTITY = 10_000
export const MAX_CART_COUPONS = 5

export const ORDER_STATUSES = ['pending', 'paid', 'shipped', 'completed', 'cancelled', 'refunded'] as const
export type OrderStatus = (typeof ORDER_STATUSES)[number]
/**
 * What an order's money says (paymentStatusOf): `authorized` and `partially_captured` are held
 * by the provider, in whole or in part, and not owed any more; the rest speak of captured money.
 */
export const PAYMENT_STATUSES = ['unpaid', 'authorized', 'partially_captured', 'paid', 'partially_refunded', 'refunded'] as const
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number]
export const FULFILLMENT_STATUSES = ['unfulfilled', 'partial', 'fulfilled'] as const
export type FulfillmentStatus = (typeof FULFILLMENT_STATUSES)[number]
/** A draft order (an admin's quote): open, its payment link sent, or completed (made into an order). */
export const DRAFT_ORDER_STATUSES = ['open', 'invoice_sent', 'completed'] as const
export type DraftOrderStatus = (typeof DRAFT_ORDER_STATUSES)[number]
export const CHECKOUT_STATUSES = ['open', 'completed'] as const
export type CheckoutStatus = (typeof CHECKOUT_STATUSES)[number]
/** A checkout's hold on stock and coupons while its payment is with the provider. */
/** A return: asked for, then approved or declined, then received (and refunded) or canceled (returns.ts RETURN_MOVES). */
/**
 * Why a level's quantities changed, one per movement (inventory_movements): an admin's
 * adjustment (ADJUSTMENT_REASONS), a transfer between locations, the stock an item started with,
 * a change of safety stock, and what orders do: a checkout holds units (`reserved`) until its order is placed (`committed`)
 * or it ends (`reservation_released`); an order's units are shipped (`fulfilled`), moved to the
 * location that ships them (`reallocated`), given back when cancelled (`order_released`) or
 * come back in a return (`returned`).
 */
export const ADJUSTMENT_REASONS = ['received', 'correction', 'cycle_count', 'damaged', 'shrinkage', 'other'] as const
export type AdjustmentReason = (typeof ADJUSTMENT_REASONS)[number]
export const MOVEMENT_REASONS = [
  ...ADJUSTMENT_REASONS,
  'initial',
  'safety_stock',
  'transfer',
  'reserved',
  'reservation_released',
  'committed',
  'order_released',
  'reallocated',
  'fulfilled',
  'returned',
  'import',
] as const
export type MovementReason = (typeof MOVEMENT_REASONS)[number]

export const RETURN_STATUSES = ['requested', 'approved', 'declined', 'received', 'canceled'] as const
export type ReturnStatus = (typeof RETURN_STATUSES)[number]

export const RESERVATION_STATUSES = ['held', 'converted', 'released'] as const
export type ReservationStatus = (typeof RESERVATION_STATUSES)[number]

/** What a CSV export can hold, and what a CSV import can write (docs/csv.md). */
export const EXPORT_RESOURCES = ['products', 'customers', 'orders'] as const
export type ExportResource = (typeof EXPORT_RESOURCES)[number]
export const IMPORT_RESOURCES = ['products', 'customers'] as const
export type ImportResource = (typeof IMPORT_RESOURCES)[number]
export const EXPORT_STATUSES = ['pending', 'running', 'completed', 'failed'] as const
export type ExportStatus = (typeof EXPORT_STATUSES)[number]
/** `validated`: a dry run's report is ready, nothing was written; `completed`: the rows were applied. */
export const IMPORT_STATUSES = ['pending', 'running', 'validated', 'completed', 'failed'] as const
export type ImportStatus = (typeof IMPORT_STATUSES)[number]
export const IMPORT_ROW_ACTIONS = ['create', 'update', 'refuse'] as const
export type ImportRowAction = (typeof IMPORT_ROW_ACTIONS)[number]
