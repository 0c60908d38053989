/**
 * Checkout completion, the hot path of every sale: one transaction that locks the cart, re-prices
 * it, uses up the coupons, takes the stock (never below zero), creates the order, charges it and
 * writes the events — or changes nothing. Its statements are fixed SQL text (prepared once per
 * connection) and those that do not wait on each other's answers are sent together: three round
 * trips from the lock to the events and the stored answer, where building each statement with
 * Drizzle cost more CPU than the database spent running them (bench/README.md, checkout).
 */
import { and, inArray, isNull, or, sql } from 'drizzle-orm'
import { moveOrder, type Address, type CompleteCheckout, type Order } from '@commerce/domain'
import { coupons, newId, payments, sqlOf, writeEvent, writeEvents, type Executor } from '@commerce/db'
import { ApiError, conflict, invalidField, notFound } from '../../errors.js'
import { RefusalWithRecord } from '../../idempotency.js'
import type { PaymentProvider } from '../../payments/provider.js'
import type { PricedCart } from '../carts/pricing.js'
import { CART_ROW_SQL, SHIPPING_METHOD_JSON, type CartRow, type ShippingMethodRow } from '../carts/rows.js'
import { priceOrRefuse, visibleTo, type CartViewer } from '../carts/service.js'
import { orderItemRows, takeStockOfLines, type OrderItemRow } from '../orders/lines.js'
import { orderEvent, paymentJsonOfRow, paymentOfRow, toOrder, type OrderRow } from '../orders/view.js'
import { ratesFor } from '../shipping/rates.js'

// The cart's row lock, taken through the checkout, serializes this completion with every other
// completion and change of the cart; the read that prices it is the cart read of carts/rows.ts.
const LOCK_AND_READ = `
with locked as materialized (
  select c.*, k.status as checkout_status, k.billing_address as checkout_billing_address
  from checkouts k join carts c on c.id = k.cart_id
  where k.id = $1
  for update of c)
select ${CART_ROW_SQL},
  "carts".checkout_status as "checkoutStatus", "carts".checkout_billing_address as "billingAddress",
  coalesce((select json_agg(${SHIPPING_METHOD_JSON}) from shipping_methods s where s.currency = "carts"."currency"), '[]'::json)
    as "shippingMethods"
from locked as "carts"`

// The order and its lines in one statement (foreign keys are checked at its end).
const INSERT_ORDER = `
with placed as (
  insert into orders (id, status, payment_status, paid_minor, customer_id, email, currency, subtotal_minor,
    discount_minor, tax_minor, shipping_minor, total_minor, shipping_address, billing_address, shipping_method,
    coupons, cart_id)
  values ($1, 'paid', 'paid', $2, $3, $4, $5, $6, $7, $8, $9, $2, $10, $11, $12, $13, $14)
  returning order_number, created_at, updated_at),
lines as (
  insert into order_items (id, order_id, product_id, variant_id, title, variant_title, sku, quantity,
    unit_price_minor, subtotal_minor, discount_minor, tax_minor, total_minor)
  select l.id, $1, l.product_id, l.variant_id, l.title, l.variant_title, l.sku, l.quantity, l.unit_price,
    l.subtotal, l.discount, l.tax, l.total
  from unnest($15::uuid[], $16::uuid[], $17::uuid[], $18::text[], $19::text[], $20::text[], $21::int[],
    $22::int8[], $23::int8[], $24::int8[], $25::int8[], $26::int8[])
    as l(id, product_id, variant_id, title, variant_title, sku, quantity, unit_price, subtotal, discount, tax, total))
select order_number as "orderNumber", created_at as "createdAt", updated_at as "updatedAt" from placed`

// The succeeded payment, the checkout closed and the cart completed.
const RECORD_PAYMENT = `
with paid as (
  insert into payments (id, order_id, checkout_id, provider, method, status, amount_minor, currency,
    refunded_minor, provider_reference, created_at, updated_at)
  values ($1, $2, $3, $4, $5, 'succeeded', $6, $7, 0, $8, $9, $9)),
closed as (update checkouts set status = 'completed', order_id = $2, updated_at = $9 where id = $3)
update carts set completed_at = $9, updated_at = $9 where id = $10`

// Raw SQL reads timestamps as ISO text (see sqlOf).
type Text<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K] }

interface LockedCheckout extends Text<CartRow> {
  checkoutStatus: 'open' | 'completed'
  billingAddress: Address | null
  shippingMethods: ShippingMethodRow[]
}

/** Each applicable coupon is used once more, refused when another checkout took its last use. */
async function useCoupons(tx: Executor, priced: PricedCart) {
  const ids = priced.applicableCoupons.map((coupon) => coupon.id)
  if (ids.length === 0) return
  const used = await tx
    .update(coupons)
    .set({ timesUsed: sql`${coupons.timesUsed} + 1` })
    .where(and(inArray(coupons.id, ids), or(isNull(coupons.usageLimit), sql`${coupons.timesUsed} < ${coupons.usageLimit}`)))
    .returning({ id: coupons.id })
  const usedUp = priced.applicableCoupons.find((coupon) => !used.some((row) => row.id === coupon.id))
  if (usedUp) throw new ApiError('coupon_invalid', `Coupon '${usedUp.code}' has reached its usage limit; remove it from the cart`)
}

/** What the database makes of a new order: its number and times. */
type MadeByDatabase = Pick<OrderRow, 'orderNumber' | 'createdAt' | 'updatedAt'>

/** The paid order's row as this transaction writes it (all but what the database makes). */
function orderValues(id: string, billingAddress: Address | null, priced: PricedCart, rate: { id: string; name: string } | null): Omit<OrderRow, keyof MadeByDatabase> {
  const { view: cart, totals } = priced
  return {
    id,
    status: 'paid',
    paymentStatus: 'paid',
    fulfillmentStatus: 'unfulfilled',
    customerId: cart.customer_id,
    email: cart.email!,
    currency: cart.currency,
    subtotalMinor: totals.subtotal,
    discountMinor: totals.discount,
    taxMinor: totals.tax,
    shippingMinor: totals.shipping,
    totalMinor: totals.total,
    paidMinor: totals.total,
    refundedMinor: 0,
    shippingAddress: cart.shipping_address,
    billingAddress,
    shippingMethod: rate && { id: rate.id, name: rate.name, amount_minor: totals.shipping },
    coupons: priced.applicableCoupons.map((coupon) => ({
      id: coupon.id,
      code: coupon.code,
      type: coupon.type,
      discount_minor: totals.coupons.find((entry) => entry.id === coupon.id)?.discount ?? 0,
    })),
    notes: null,
    cartId: cart.id,
    archivedAt: null,
  }
}

function insertOrder(tx: Executor, row: Omit<OrderRow, keyof MadeByDatabase>, items: readonly OrderItemRow[]) {
  const json = (value: unknown) => (value === null ? null : JSON.stringify(value))
  const column = <K extends keyof OrderItemRow>(key: K) => items.map((item) => item[key])
  return sqlOf(tx).unsafe<Text<MadeByDatabase>[]>(
    INSERT_ORDER,
    [
      row.id,
      row.totalMinor,
      row.customerId,
      row.email,
      row.currency,
      row.subtotalMinor,
      row.discountMinor,
      row.taxMinor,
      row.shippingMinor,
      json(row.shippingAddress),
      json(row.billingAddress),
      json(row.shippingMethod),
      json(row.coupons),
      row.cartId,
      column('id'),
      column('productId'),
      column('variantId'),
      column('title'),
      column('variantTitle'),
      column('sku'),
      column('quantity'),
      column('unitPriceMinor'),
      column('subtotalMinor'),
      column('discountMinor'),
      column('taxMinor'),
      column('totalMinor'),
    ],
    { prepare: true },
  )
}

export function createCheckoutCompletion(provider: PaymentProvider) {
  /**
   * Completes the checkout inside `tx` (the idempotency runner's transaction) and answers the
   * order. Lock order: the cart, coupons, then stock rows by id, so concurrent checkouts never
   * deadlock.
   */
  return async function completeCheckout(
    tx: Executor,
    id: string,
    body: CompleteCheckout,
    viewer: CartViewer,
    requestId: string,
    idempotencyKey: string,
    /** Sent with the last writes: the stored answer of the Idempotency-Key (idempotency.ts). */
    withLastWrites: (order: Order) => PromiseLike<unknown>,
  ): Promise<Order> {
    const [locked] = await sqlOf(tx).unsafe<LockedCheckout[]>(LOCK_AND_READ, [id], { prepare: true })
    if (!locked || !visibleTo(locked, viewer)) throw notFound('Checkout')
    if (locked.checkoutStatus !== 'open') throw conflict('This checkout is already completed')
    if (locked.completedAt) throw conflict('This cart was already checked out')

    const priced = priceOrRefuse({ ...locked, completedAt: null, createdAt: new Date(locked.createdAt), updatedAt: new Date(locked.updatedAt) })
    const cart = priced.view
    if (cart.items.length === 0) throw conflict('The cart is empty')
    const unavailable = cart.items.find((item) => !item.available)
    if (unavailable) {
      throw new ApiError('conflict', `'${unavailable.title}' is no longer sold; remove it from the cart`, [
        { field: 'items', message: unavailable.id },
      ])
    }
    const rates = ratesFor(locked.shippingMethods, priced)
    const rate = rates.find((candidate) => candidate.id === cart.shipping_method_id) ?? null
    if (!rate && rates.length > 0) throw invalidField('rate_id', 'Choose a shipping rate first (POST /checkouts/:id/shipping)')

    // The order is written as it will be once paid: if the charge fails, all of it rolls back,
    // so the pending state between the two moves is never seen outside this transaction.
    const paidEvent = moveOrder('pending', 'paid')
    const orderId = newId()
    const lines = priced.availableLines.map((line) => ({ ...line, unitPriceMinor: line.priceMinor }))
    const lineTotals = new Map(priced.totals.lines.map((line) => [line.id, line]))
    const items = orderItemRows(orderId, lines, priced.availableLines.map((line) => lineTotals.get(line.id)!))
    const values = orderValues(orderId, locked.billingAddress, priced, rate)
    const [, , [made]] = await Promise.all([useCoupons(tx, priced), takeStockOfLines(tx, lines), insertOrder(tx, values, items)])

    const total = priced.totals.total
    const charge = await provider.charge({
      amountMinor: total,
      currency: cart.currency,
      method: body.payment.method,
      token: body.payment.token,
      idempotencyKey: `checkout:${id}:${idempotencyKey}`,
    })
    const now = new Date()
    const attempt = {
      id: newId(),
      orderId: null,
      checkoutId: id,
      provider: provider.name,
      method: body.payment.method,
      amountMinor: total,
      currency: cart.currency,
      refundedMinor: 0,
      providerReference: null,
      failureCode: null,
      failureMessage: null,
      createdAt: now,
      updatedAt: now,
    }
    if (charge.status === 'failed') {
      const declined = new ApiError('payment_declined', charge.message, [{ field: 'payment.token', message: charge.code }])
      const failed = { ...attempt, status: 'failed' as const, failureCode: charge.code, failureMessage: charge.message }
      throw new RefusalWithRecord(declined, async (recordTx) => {
        await recordTx.insert(payments).values(failed)
        await writeEvent(recordTx, { kind: 'payment.failed', data: paymentOfRow(failed), customerId: cart.customer_id, requestId })
      })
    }

    const payment = { ...attempt, orderId, status: 'succeeded' as const, providerReference: charge.reference }
    const row = { ...values, orderNumber: made!.orderNumber, createdAt: new Date(made!.createdAt), updatedAt: new Date(made!.updatedAt) }
    const placed = toOrder({ row, items, payments: [paymentJsonOfRow(payment)], fulfillments: [] })
    await Promise.all([
      sqlOf(tx).unsafe(
        RECORD_PAYMENT,
        [payment.id, orderId, id, payment.provider, payment.method, total, cart.currency, charge.reference, now.toISOString(), cart.id],
        { prepare: true },
      ),
      writeEvents(tx, [
        orderEvent('order.created', placed, requestId),
        { kind: 'payment.succeeded', data: paymentOfRow(payment), customerId: placed.customer_id, requestId },
        orderEvent(paidEvent, placed, requestId),
      ]),
      withLastWrites(placed),
    ])
    return placed
  }
}
