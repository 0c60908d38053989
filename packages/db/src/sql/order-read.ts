/**
 * An order with its items, payments (with their refunds) and fulfillments (with their items),
 * read in one query: the JSON columns a Drizzle select of `orders`, `payments` or `fulfillments`
 * adds to its row (orderSelection, paymentColumn, fulfillmentColumn), and their row types.
 */
import { sql, type SQL } from 'drizzle-orm'
import type { Executor } from '../client.js'
import { fulfillmentItems, fulfillments, orderItems, orders, payments, refunds } from '../schema/index.js'
import { columnsOf, jsonColumns, jsonObject, type JsonOf, type JsonRow } from './json-rows.js'

const ITEM_KEYS = [
  'id',
  'productId',
  'variantId',
  'title',
  'variantTitle',
  'sku',
  'quantity',
  'fulfilledQuantity',
  'returnedQuantity',
  'canceledQuantity',
  'unitPriceMinor',
  'subtotalMinor',
  'discountMinor',
  'taxMinor',
  'totalMinor',
] as const
export type ItemJson = JsonOf<typeof orderItems, (typeof ITEM_KEYS)[number]>

const REFUND_KEYS = ['id', 'paymentId', 'orderId', 'amountMinor', 'currency', 'reason', 'status', 'failureCode', 'failureMessage', 'createdAt'] as const
export type RefundJson = JsonOf<typeof refunds, (typeof REFUND_KEYS)[number]>

const PAYMENT_KEYS = [
  'id',
  'orderId',
  'checkoutId',
  'provider',
  'method',
  'status',
  'captureMode',
  'amountMinor',
  'capturedMinor',
  'refundedMinor',
  'currency',
  'failureCode',
  'failureMessage',
  'createdAt',
] as const
export type PaymentJson = JsonOf<typeof payments, (typeof PAYMENT_KEYS)[number]> & { refunds: RefundJson[] }

const FULFILLMENT_KEYS = ['id', 'orderId', 'locationId', 'carrier', 'trackingNumber', 'trackingUrl', 'status', 'createdAt', 'updatedAt'] as const
type FulfillmentItemJson = JsonRow<typeof fulfillmentItems.$inferSelect>
export type FulfillmentJson = JsonOf<typeof fulfillments, (typeof FULFILLMENT_KEYS)[number]> & {
  /** As the API shows them. */
  items: { order_item_id: FulfillmentItemJson['orderItemId']; quantity: FulfillmentItemJson['quantity'] }[]
}

/** A payment with its refunds as JSON; `alias` is the payments row in the surrounding query. */
const paymentJson = (alias: string) =>
  jsonObject<PaymentJson>({
    ...columnsOf(payments, alias, PAYMENT_KEYS),
    refunds: `coalesce((select json_agg(${jsonColumns(refunds, 'r', REFUND_KEYS)} order by r.id)
      from refunds r where r.payment_id = ${alias}.id), '[]'::json)`,
  })

/** A fulfillment with its items as JSON; `alias` is the fulfillments row in the surrounding query. */
const fulfillmentJson = (alias: string) =>
  jsonObject<FulfillmentJson>({
    ...columnsOf(fulfillments, alias, FULFILLMENT_KEYS),
    items: `coalesce((select json_agg(json_build_object('order_item_id', fi.order_item_id,
      'quantity', fi.quantity) order by fi.order_item_id)
      from fulfillment_items fi where fi.fulfillment_id = ${alias}.id), '[]'::json)`,
  })

const itemsOfOrder = sql<ItemJson[]>`coalesce((
  select json_agg(${sql.raw(jsonColumns(orderItems, 'i', ITEM_KEYS))} order by i.id)
  from order_items i where i.order_id = "orders"."id"), '[]'::json)`

const paymentsOfOrder = sql<PaymentJson[]>`coalesce((
  select json_agg(${sql.raw(paymentJson('p'))} order by p.id)
  from payments p where p.order_id = "orders"."id"), '[]'::json)`

const fulfillmentsOfOrder = sql<FulfillmentJson[]>`coalesce((
  select json_agg(${sql.raw(fulfillmentJson('f'))} order by f.id)
  from fulfillments f where f.order_id = "orders"."id"), '[]'::json)`

/**
 * What the sums of the order row leave out of its balance (balanceDue of @commerce/domain): what
 * edits refunded, what received returns credited, and the estimated refunds of exchanges not
 * received yet. `exceptReturn` leaves out that return's (the one being received).
 */
export const orderBalanceSql = (order: SQL, exceptReturn?: string) => sql<OrderBalanceJson>`(
  select json_build_object(
    'editRefundedMinor', (select coalesce(sum(r.amount_minor), 0) from refunds r
      where r.order_id = ${order} and r.order_edit_id is not null and r.status <> 'failed'),
    'creditedMinor', coalesce(sum(t.credit_minor), 0),
    'pendingCreditMinor', coalesce(sum(t.total_minor) filter (where t.status in ('requested', 'approved') and t.exchange_edit_id is not null
      ${exceptReturn === undefined ? sql`` : sql`and t.id <> ${exceptReturn}`}), 0))
  from returns t where t.order_id = ${order})`
export interface OrderBalanceJson {
  editRefundedMinor: number
  creditedMinor: number
  pendingCreditMinor: number
}

/** The order's balance figures alone (orderBalanceSql), inside `tx`. */
export async function readOrderBalance(tx: Executor, orderId: string, exceptReturn?: string): Promise<OrderBalanceJson> {
  const [read] = await tx.execute<{ balance: OrderBalanceJson }>(sql`select ${orderBalanceSql(sql`${orderId}::uuid`, exceptReturn)} as balance`)
  return read!.balance
}

/** A select of `orders`: the row, its items, payments and fulfillments as JSON, and what its balance needs. */
export const orderSelection = {
  row: orders,
  items: itemsOfOrder,
  payments: paymentsOfOrder,
  fulfillments: fulfillmentsOfOrder,
  balance: orderBalanceSql(sql`"orders"."id"`),
}

export type OrderRow = typeof orders.$inferSelect
export type OrderRead = { row: OrderRow; items: ItemJson[]; payments: PaymentJson[]; fulfillments: FulfillmentJson[]; balance: OrderBalanceJson }

/** In a select of `payments`: the payment with its refunds. */
export const paymentColumn = sql<PaymentJson>`${sql.raw(paymentJson('payments'))}`

/** In a select of `fulfillments`: the fulfillment with its items. */
export const fulfillmentColumn = sql<FulfillmentJson>`${sql.raw(fulfillmentJson('fulfillments'))}`
