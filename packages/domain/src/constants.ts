/** Closed sets of values, defined once: TypeBox unions and Postgres enums are built from them. */
export const ROLES = ['customer', 'admin'] as const

export const WEIGHT_UNITS = ['g', 'kg', 'lb', 'oz'] as const
export type WeightUnitCode = (typeof WEIGHT_UNITS)[number]

export const COUPON_TYPES = ['percentage', 'fixed_amount', 'free_shipping'] as const
export type CouponType = (typeof COUPON_TYPES)[number]

export const EVENT_KINDS = [
  'order.created',
  'order.paid',
  'order.shipped',
  'order.completed',
  'order.cancelled',
  'order.refunded',
  'payment.succeeded',
  'payment.failed',
  'product.created',
  'product.updated',
  'customer.created',
] as const
export type EventKind = (typeof EVENT_KINDS)[number]

/** Page size bounds of every list endpoint. */
export const DEFAULT_PER_PAGE = 20
export const MAX_PER_PAGE = 100

/** Bounds of one cart, so a cart stays cheap to price and its totals stay exact. */
export const MAX_CART_LINES = 100
export const MAX_LINE_QUANTITY = 10_000
export const MAX_CART_COUPONS = 5
