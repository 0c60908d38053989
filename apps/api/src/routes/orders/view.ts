/**
 * An order as the API shows it, read in one query (items, payments with their refunds,
 * fulfillments with their items), and the order.* events that carry it.
 */
import { and, eq, isNull, sql } from 'drizzle-orm'
import { toMajorUnits, type EventKind, type Fulfillment, type Order, type Payment } from '@commerce/domain'
import { toPayment, type PaymentJson } from '@commerce/payments'
import { orders, payments, writeEvent, type Executor, type NewEvent } from '@commerce/db'

type Json<Row> = { [K in keyof Row]: Row[K] }

export interface ItemJson {
  id: string
  productId: string | null
  variantId: string | null
  title: string
  variantTitle: string | null
  sku: string | null
  quantity: number
  fulfilledQuantity: number
  unitPriceMinor: number
  subtotalMinor: number
  discountMinor: number
  taxMinor: number
  totalMinor: number
}

export interface FulfillmentJson {
  id: string
  orderId: string
  carrier: string
  trackingNumber: string
  trackingUrl: string | null
  status: string
  createdAt: string
  updatedAt: string
  items: { order_item_id: string; quantity: number }[]
}

const itemsOfOrder = sql<Json<ItemJson>[]>`coalesce((
  select json_agg(json_build_object(
    'id', i.id, 'productId', i.product_id, 'variantId', i.variant_id, 'title', i.title,
    'variantTitle', i.variant_title, 'sku', i.sku, 'quantity', i.quantity,
    'fulfilledQuantity', i.fulfilled_quantity, 'unitPriceMinor', i.unit_price_minor,
    'subtotalMinor', i.subtotal_minor, 'discountMinor', i.discount_minor, 'taxMinor', i.tax_minor,
    'totalMinor', i.total_minor) order by i.id)
  from order_items i where i.order_id = "orders"."id"), '[]'::json)`

/** A payment with its refunds as JSON; `alias` is the payments row in the surrounding query. */
export const paymentJson = (alias: string) => sql.raw(`json_build_object(
    'id', ${alias}.id, 'orderId', ${alias}.order_id, 'checkoutId', ${alias}.checkout_id,
    'provider', ${alias}.provider, 'method', ${alias}.method, 'status', ${alias}.status,
    'captureMode', ${alias}.capture_mode, 'amountMinor', ${alias}.amount_minor,
    'capturedMinor', ${alias}.captured_minor, 'refundedMinor', ${alias}.refunded_minor,
    'currency', ${alias}.currency, 'failureCode', ${alias}.failure_code,
    'failureMessage', ${alias}.failure_message, 'createdAt', ${alias}.created_at,
    'refunds', coalesce((select json_agg(json_build_object(
      'id', r.id, 'paymentId', r.payment_id, 'orderId', r.order_id, 'amountMinor', r.amount_minor,
      'currency', r.currency, 'reason', r.reason, 'createdAt', r.created_at) order by r.id)
      from refunds r where r.payment_id = ${alias}.id), '[]'::json))`)

const paymentsOfOrder = sql<PaymentJson[]>`coalesce((
  select json_agg(${paymentJson('p')} order by p.id)
  from payments p where p.order_id = "orders"."id"), '[]'::json)`

/** A fulfillment with its items as JSON; `alias` is the fulfillments row in the surrounding query. */
export const fulfillmentJson = (alias: string) => sql.raw(`json_build_object(
    'id', ${alias}.id, 'orderId', ${alias}.order_id, 'carrier', ${alias}.carrier,
    'trackingNumber', ${alias}.tracking_number, 'trackingUrl', ${alias}.tracking_url,
    'status', ${alias}.status, 'createdAt', ${alias}.created_at, 'updatedAt', ${alias}.updated_at,
    'items', coalesce((select json_agg(json_build_object('order_item_id', fi.order_item_id,
      'quantity', fi.quantity) order by fi.order_item_id)
      from fulfillment_items fi where fi.fulfillment_id = ${alias}.id), '[]'::json))`)

const fulfillmentsOfOrder = sql<FulfillmentJson[]>`coalesce((
  select json_agg(${fulfillmentJson('f')} order by f.id)
  from fulfillments f where f.order_id = "orders"."id"), '[]'::json)`

export const orderSelection = {
  row: orders,
  items: itemsOfOrder,
  payments: paymentsOfOrder,
  fulfillments: fulfillmentsOfOrder,
}

export type OrderRow = typeof orders.$inferSelect
export type OrderRead = { row: OrderRow; items: ItemJson[]; payments: PaymentJson[]; fulfillments: FulfillmentJson[] }

const iso = (value: string | Date) => new Date(value).toISOString()

/** A payment row in the shape the order read gives it, with no refunds (one just made or just declined). */
export function paymentJsonOfRow(row: typeof payments.$inferSelect): PaymentJson {
  return {
    id: row.id,
    orderId: row.orderId,
    checkoutId: row.checkoutId,
    provider: row.provider,
    method: row.method,
    status: row.status,
    captureMode: row.captureMode,
    amountMinor: row.amountMinor,
    capturedMinor: row.capturedMinor,
    refundedMinor: row.refundedMinor,
    currency: row.currency,
    failureCode: row.failureCode,
    failureMessage: row.failureMessage,
    createdAt: row.createdAt.toISOString(),
    refunds: [],
  }
}

/** A payment row as the API shows it, with no refunds (one just made or just declined). */
export const paymentOfRow = (row: typeof payments.$inferSelect): Payment => toPayment(paymentJsonOfRow(row))

export function toFulfillment(fulfillment: FulfillmentJson): Fulfillment {
  return {
    id: fulfillment.id,
    order_id: fulfillment.orderId,
    carrier: fulfillment.carrier,
    tracking_number: fulfillment.trackingNumber,
    tracking_url: fulfillment.trackingUrl,
    status: fulfillment.status,
    items: fulfillment.items,
    created_at: iso(fulfillment.createdAt),
    updated_at: iso(fulfillment.updatedAt),
  }
}

export function toOrder({ row, items, payments, fulfillments }: OrderRead): Order {
  const money = (minor: number) => toMajorUnits(minor, row.currency)
  return {
    id: row.id,
    order_number: row.orderNumber,
    status: row.status,
    payment_status: row.paymentStatus,
    fulfillment_status: row.fulfillmentStatus,
    customer_id: row.customerId,
    email: row.email,
    currency: row.currency,
    items: items.map((item) => ({
      id: item.id,
      product_id: item.productId,
      variant_id: item.variantId,
      title: item.title,
      variant_title: item.variantTitle,
      sku: item.sku,
      quantity: item.quantity,
      fulfilled_quantity: item.fulfilledQuantity,
      unit_price: money(item.unitPriceMinor),
      line_total: money(item.subtotalMinor),
      discount: money(item.discountMinor),
      tax: money(item.taxMinor),
      total: money(item.totalMinor),
    })),
    shipping_address: row.shippingAddress,
    billing_address: row.billingAddress,
    shipping_method: row.shippingMethod && {
      id: row.shippingMethod.id,
      name: row.shippingMethod.name,
      amount: money(row.shippingMethod.amount_minor),
    },
    coupons: row.coupons.map((coupon) => ({
      id: coupon.id,
      code: coupon.code,
      type: coupon.type as Order['coupons'][number]['type'],
      discount: money(coupon.discount_minor),
    })),
    totals: {
      subtotal: money(row.subtotalMinor),
      discount: money(row.discountMinor),
      tax: money(row.taxMinor),
      shipping: money(row.shippingMinor),
      total: money(row.totalMinor),
    },
    amount_paid: money(row.paidMinor),
    amount_authorized: money(row.authorizedMinor),
    amount_refunded: money(row.refundedMinor),
    payments: payments.map(toPayment),
    fulfillments: fulfillments.map(toFulfillment),
    notes: row.notes,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

/** The order as the API shows it, read inside `tx`; archived orders are not found. */
export async function loadOrder(tx: Executor, id: string): Promise<Order | undefined> {
  const [read] = await tx
    .select(orderSelection)
    .from(orders)
    .where(and(eq(orders.id, id), isNull(orders.archivedAt)))
  return read && toOrder(read)
}

/** Locks the order row for a change (one writer per order); archived orders are not found. */
export async function lockOrder(tx: Executor, id: string): Promise<OrderRow | undefined> {
  const [row] = await tx
    .select()
    .from(orders)
    .where(and(eq(orders.id, id), isNull(orders.archivedAt)))
    .for('update')
  return row
}

/**
 * An order.* event: its data is the order plus `order_id` and `total` (the seed's `order.paid`
 * shape) and whatever `extra` the event adds, such as the refund.
 */
export function orderEvent(kind: EventKind, order: Order, requestId: string, extra: Record<string, unknown> = {}): NewEvent {
  return { kind, resourceId: order.id, data: { ...order, order_id: order.id, total: order.totals.total, ...extra }, customerId: order.customer_id, requestId }
}

/** orderEvent's data (without extra) as JSON, from the order's own JSON: one serialization for both. */
export function orderEventJson(order: Order, orderJson: string): string {
  return `${orderJson.slice(0, -1)},"order_id":${JSON.stringify(order.id)},"total":${JSON.stringify(order.totals.total)}}`
}

/** Writes an order.* event (see orderEvent) in the caller's transaction. */
export async function writeOrderEvent(
  tx: Executor,
  kind: EventKind,
  order: Order,
  requestId: string,
  extra: Record<string, unknown> = {},
): Promise<void> {
  await writeEvent(tx, orderEvent(kind, order, requestId, extra))
}
