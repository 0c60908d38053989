/** Closed sets of values, defined once: TypeBox unions and Postgres enums are built from them. */
export const ROLES = ['customer', 'admin'] as const

export const WEIGHT_UNITS = ['g', 'kg', 'lb', 'oz'] as const

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
