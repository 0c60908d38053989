/**
 * A checkout whose completion reserved its stock and a coupon use and started its payment, as
 * apps/api's completion leaves it before settling (or when it died before settling): written
 * directly, the worker's tests run no API. The order to place is the reservation's placement
 * (@commerce/db checkout-settlement.ts): its row and items by column name, its events, its answer.
 */
import {
  applyStockMoves,
  carts,
  cartItems,
  checkoutReservations,
  checkouts,
  promotions,
  eventRows,
  newId,
  orderItems,
  orders,
  payments,
  placementRow,
  products,
  type DatabaseHandle,
} from '@commerce/db'

/** Two units of a product of 12.50 with 10 in stock, 5.00 off with a coupon: 20.00 to pay. */
export const STOCK = 10
export const QUANTITY = 2
export const TOTAL_MINOR = 2000

export interface ReservedCheckout {
  paymentId: string
  checkoutId: string
  cartId: string
  orderId: string
  productId: string
  couponId: string
}

export interface ReserveOptions {
  /** payments.provider: the sweeps read the payments of their provider only. */
  provider: string
  /** Made by the caller, so a provider's payment can carry it first (as the API's authorize does). */
  paymentId?: string
  status?: 'pending' | 'requires_action'
  /** The provider's id of the payment; null (the default) when its answer was never recorded. */
  reference?: string | null
  failureCode?: string | null
  /** Past expires_at; else it expires in 15 minutes. */
  expired?: boolean
  createdAgoMs?: number
  updatedAgoMs?: number
}

export async function reserveCheckout({ db, sql }: DatabaseHandle, options: ReserveOptions): Promise<ReservedCheckout> {
  const ids = { paymentId: options.paymentId ?? newId(), checkoutId: newId(), cartId: newId(), orderId: newId(), productId: newId(), couponId: newId() }
  const now = Date.now()
  const createdAt = new Date(now - (options.createdAgoMs ?? 0))
  const code = `SWEEP-${ids.couponId}`
  await db.insert(products).values({ id: ids.productId, title: 'Sweep mug', slug: `sweep-mug-${ids.productId}`, priceMinor: 1250, currency: 'USD', inventoryQuantity: STOCK - QUANTITY })
  // A usage limit: its row counts the use the checkout took (an unlimited one's uses are counted from promotion_usages).
  await db.insert(promotions).values({ id: ids.couponId, code, name: code, type: 'fixed_amount', amountOffMinor: 500, currency: 'USD', usageLimit: 100, timesUsed: 1 })
  await db.insert(carts).values({ id: ids.cartId, currency: 'USD', email: 'buyer@example.com', completedAt: createdAt })
  await db.insert(cartItems).values({ cartId: ids.cartId, productId: ids.productId, quantity: QUANTITY })
  await db.insert(checkouts).values({ id: ids.checkoutId, cartId: ids.cartId })
  await db.insert(payments).values({
    id: ids.paymentId,
    checkoutId: ids.checkoutId,
    provider: options.provider,
    method: 'card',
    status: options.status ?? 'pending',
    amountMinor: TOTAL_MINOR,
    currency: 'USD',
    providerReference: options.reference ?? null,
    failureCode: options.failureCode ?? null,
    createdAt,
    updatedAt: new Date(now - (options.updatedAgoMs ?? 0)),
  })

  // Every column (json_populate_record leaves a missing one null): $inferSelect has them all.
  const order: typeof orders.$inferSelect = {
    id: ids.orderId,
    orderNumber: `S-${ids.orderId}`,
    status: 'paid',
    paymentStatus: 'paid',
    fulfillmentStatus: 'unfulfilled',
    customerId: null,
    email: 'buyer@example.com',
    currency: 'USD',
    subtotalMinor: 2500,
    discountMinor: 500,
    taxMinor: 0,
    shippingMinor: 0,
    totalMinor: TOTAL_MINOR,
    paidMinor: TOTAL_MINOR,
    authorizedMinor: 0,
    refundedMinor: 0,
    shippingAddress: null,
    billingAddress: null,
    shippingMethod: null,
    coupons: [{ id: ids.couponId, code, type: 'fixed_amount', discount_minor: 500 }],
    promotions: [{ id: ids.couponId, code, name: code, type: 'fixed_amount', discount_minor: 500, shipping_discount_minor: 0 }],
    notes: null,
    cartId: ids.cartId,
    archivedAt: null,
    createdAt,
    updatedAt: createdAt,
  }
  const item: typeof orderItems.$inferSelect = {
    id: newId(),
    orderId: ids.orderId,
    productId: ids.productId,
    variantId: null,
    title: 'Sweep mug',
    variantTitle: null,
    sku: null,
    quantity: QUANTITY,
    unitPriceMinor: 1250,
    subtotalMinor: 2500,
    discountMinor: 500,
    taxMinor: 0,
    totalMinor: TOTAL_MINOR,
    fulfilledQuantity: 0,
    returnedQuantity: 0,
    canceledQuantity: 0,
    createdAt,
  }
  const answer = { id: ids.orderId, total_minor: TOTAL_MINOR }
  const events = eventRows([
    { kind: 'order.created', resourceId: ids.orderId, data: answer },
    { kind: 'payment.succeeded', resourceId: ids.orderId, data: { id: ids.paymentId } },
  ])
  // The held units, on hand at the default location beside the product's sellable stock.
  const [location] = await sql<{ id: string }[]>`select id from stock_locations where is_default`
  await applyStockMoves(sql, [{ item: ids.productId, location: location!.id, on_hand: QUANTITY, reserved: QUANTITY, reason: 'initial' }])
  await db.insert(checkoutReservations).values({
    paymentId: ids.paymentId,
    checkoutId: ids.checkoutId,
    expiresAt: new Date(now + (options.expired ? -60_000 : 15 * 60_000)),
    stock: [{ id: ids.productId, variant: false, location: location!.id, line: item.id, quantity: QUANTITY }],
    promotionIds: [ids.couponId],
    placement: { order: placementRow(orders, order), items: [placementRow(orderItems, item)], events: JSON.parse(events.json) as unknown, answer },
  })
  return ids
}
