/**
 * An order as the API shows it, read in one query (@commerce/db sql/order-read.ts: items,
 * payments with their refunds, fulfillments with their items), and the order.* events that carry it.
 */
import { and, eq, isNull } from 'drizzle-orm'
import { owedBy, toMajorUnits, type EventKind, type Fulfillment, type Order, type Payment } from '@commerce/domain'
import { toPayment } from '@commerce/payments'
import {
  orders,
  orderSelection,
  payments,
  writeEvent,
  type Executor,
  type FulfillmentJson,
  type NewEvent,
  type OrderRead,
  type OrderRow,
  type PaymentJson,
  type EventOrigin,
} from '@commerce/db'

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
    location_id: fulfillment.locationId,
    carrier: fulfillment.carrier,
    tracking_number: fulfillment.trackingNumber,
    tracking_url: fulfillment.trackingUrl,
    status: fulfillment.status,
    items: fulfillment.items,
    created_at: iso(fulfillment.createdAt),
    updated_at: iso(fulfillment.updatedAt),
  }
}

/** An order's (or a draft's) totals as the API shows them. */
export function totalsOf(row: { currency: string } & Pick<OrderRow, 'subtotalMinor' | 'discountMinor' | 'taxMinor' | 'shippingMinor' | 'totalMinor'>): Order['totals'] {
  const money = (minor: number) => toMajorUnits(minor, row.currency)
  return {
    subtotal: money(row.subtotalMinor),
    discount: money(row.discountMinor),
    tax: money(row.taxMinor),
    shipping: money(row.shippingMinor),
    total: money(row.totalMinor),
  }
}

export function toOrder({ row, items, payments, fulfillments, balance }: OrderRead): Order {
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
      returned_quantity: item.returnedQuantity,
      canceled_quantity: item.canceledQuantity,
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
    promotions: row.promotions.map((promotion) => ({
      id: promotion.id,
      code: promotion.code,
      name: promotion.name,
      type: promotion.type as Order['promotions'][number]['type'],
      discount: money(promotion.discount_minor),
      shipping_discount: money(promotion.shipping_discount_minor),
    })),
    totals: totalsOf(row),
    amount_paid: money(row.paidMinor),
    amount_authorized: money(row.authorizedMinor),
    amount_refunded: money(row.refundedMinor),
    amount_owed: money(owedBy(row.status, { ...row, ...balance })),
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
export function orderEvent(kind: EventKind, order: Order, origin: EventOrigin, extra: Record<string, unknown> = {}): NewEvent {
  return { kind, resourceId: order.id, data: { ...order, order_id: order.id, total: order.totals.total, ...extra }, customerId: order.customer_id, ...origin }
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
  origin: EventOrigin,
  extra: Record<string, unknown> = {},
): Promise<void> {
  await writeEvent(tx, orderEvent(kind, order, origin, extra))
}
