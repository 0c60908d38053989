/**
 * Checkout completion, the hot path of every sale: one transaction that locks the cart, re-prices
 * it, uses up the coupons, takes the stock (never below zero), creates the order, charges it and
 * writes the events — or changes nothing. It costs two round trips and two statements. The first
 * locks and reads everything the price and the stock depend on, with the Idempotency-Key's lookup,
 * and opens the transaction itself (BEGIN deferred: an implicit block, @commerce/db
 * transaction.ts); it writes nothing, so a refusal has nothing to undo. After the charge, the
 * second writes the stock, the order, its payment, its events and the stored answer, and commits
 * them (sendLast: no COMMIT statement either). The
 * statements are fixed SQL text (prepared once per connection): building them with Drizzle cost
 * more CPU than the database spent running them (bench/README.md, Checkout).
 */
import { moveOrder, type Address, type CompleteCheckout, type Order } from '@commerce/domain'
import { announceWhenCommitted, eventRows, eventsCte, newId, payments, sendLast, sqlOf, writeEvent, type Executor, type NewEvent } from '@commerce/db'
import { ApiError, conflict, invalidField, notFound } from '../../errors.js'
import { CLAIM_COLUMNS, claimCte, RefusalWithRecord, storeCte, WORK_RUNS, type Claim, type Remember } from '../../idempotency.js'
import type { PaymentProvider } from '../../payments/provider.js'
import type { PricedCart } from '../carts/pricing.js'
import { COUPON_JSON, SHIPPING_METHOD_JSON, cartRowSql, type CartRow, type ShippingMethodRow } from '../carts/rows.js'
import { priceOrRefuse, visibleTo, type CartViewer } from '../carts/service.js'
import { orderItemRows, type NewOrderLine, type OrderItemRow } from '../orders/lines.js'
import { orderEvent, orderEventJson, paymentJsonOfRow, paymentOfRow, toOrder, type OrderRow } from '../orders/view.js'
import { ratesFor } from '../shipping/rates.js'

// Locks, in this order (every completion takes them so, and none deadlocks with another): the
// cart, through the checkout, which serializes this completion with every other completion and
// change of the cart; its coupons by id, so their use counts stay true until the order uses
// them; then the stock rows of its lines (the variant's, or the product's for a line without
// one), products then variants, each by id, so the stock read here is what the order will take.
// It reads what prices the cart (the cart read of carts/rows.ts, with the coupons as locked), the
// order's number (from its sequence) and the transaction's time, so the order can be written in
// one go after the charge. A cart changed by a transaction that committed while this one waited
// for its lock is read as of before that change by the rest of the statement: "stale" says so,
// and the statement is sent again (the lock held, it then reads the change). It claims the
// Idempotency-Key first ($2–$4), and nothing is locked or read unless this request runs
// (WORK_RUNS: not a replay, not a key in flight); it always answers one row, the claim's. Last, it has
// the rest of the transaction use generic plans: WRITE_ORDER's parameters are arrays, whose sizes
// a custom plan knows, so PostgreSQL's plan cache would otherwise plan it anew on every call
// (0.18 ms, as long as running it); a generic plan is made once per connection.
const LOCK_AND_READ = `
with ${claimCte(2)},
locked as materialized (
  select c.*, c.xmin::text as row_version, k.status as checkout_status, k.billing_address as checkout_billing_address
  from checkouts k join carts c on c.id = k.cart_id
  where k.id = $1 and ${WORK_RUNS}
  for update of c),
locked_coupons as materialized (
  select c.*, cc.created_at as added_at from cart_coupons cc join coupons c on c.id = cc.coupon_id
  where cc.cart_id = (select id from locked)
  order by c.id for update of c),
lines as materialized (
  select i.product_id, i.variant_id from cart_items i where i.cart_id = (select id from locked)),
locked_products as materialized (
  select p.id, p.inventory_quantity from products p
  where p.id in (select product_id from lines where variant_id is null)
  order by p.id for update of p),
locked_variants as materialized (
  select v.id, v.inventory_quantity from product_variants v
  where v.id in (select variant_id from lines)
  order by v.id for update of v)
select ${cartRowSql(`coalesce((select json_agg(${COUPON_JSON} order by c.added_at, c.code) from locked_coupons c), '[]'::json)`)},
  "carts".checkout_status as "checkoutStatus", "carts".checkout_billing_address as "billingAddress",
  coalesce((select json_agg(${SHIPPING_METHOD_JSON}) from shipping_methods s where s.currency = "carts"."currency"), '[]'::json)
    as "shippingMethods",
  coalesce((select json_object_agg(s.id, s.inventory_quantity)
    from (select * from locked_products union all select * from locked_variants) as s), '{}'::json) as "stock",
  (select as_read.xmin::text from carts as as_read where as_read.id = "carts"."id") is distinct from "carts".row_version as "stale",
  case when "carts".id is not null then nextval('order_number_seq')::text end as "orderNumber",
  now() as "now",
  set_config('plan_cache_mode', 'force_generic_plan', true) as "planCacheMode",
  ${CLAIM_COLUMNS}
from claim left join locked as "carts" on true`

// Everything the order changes, in one statement (foreign keys are checked at its end): the
// stock taken (its rows locked and checked by LOCK_AND_READ; the tables' CHECK (inventory_quantity
// >= 0) would fail the whole transaction if a decrement ever went below zero), the coupons used,
// the paid order and its lines, the succeeded payment, the checkout closed and the cart completed,
// the events ($24) and the Idempotency-Key's stored answer ($25–$30). A table the order does not
// touch (variants, coupons) is left out of the statement, whose every part PostgreSQL sets up on
// each run: one text per combination, each prepared once per connection.
function writeOrderSql(parts: { products: boolean; variants: boolean; coupons: boolean }): string {
  const ctes = [
    parts.products &&
      `products_taken as (
  update products p set inventory_quantity = p.inventory_quantity - l.quantity, updated_at = $3
  from json_to_recordset($18::json) as l(id uuid, quantity int, variant bool) where p.id = l.id and not l.variant)`,
    parts.variants &&
      `variants_taken as (
  update product_variants v set inventory_quantity = v.inventory_quantity - l.quantity, updated_at = $3
  from json_to_recordset($18::json) as l(id uuid, quantity int, variant bool) where v.id = l.id and l.variant)`,
    parts.coupons && `used as (update coupons set times_used = times_used + 1 where id = any($31::uuid[]))`,
    `placed as (
  insert into orders (id, order_number, status, payment_status, paid_minor, customer_id, email, currency, subtotal_minor,
    discount_minor, tax_minor, shipping_minor, total_minor, shipping_address, billing_address, shipping_method,
    coupons, cart_id, created_at, updated_at)
  values ($1, $2, 'paid', 'paid', $4, $5, $6, $7, $8, $9, $10, $11, $4, $12, $13, $14, $15, $16, $3, $3))`,
    `lines as (
  insert into order_items (id, order_id, product_id, variant_id, title, variant_title, sku, quantity,
    unit_price_minor, subtotal_minor, discount_minor, tax_minor, total_minor)
  select l.id, $1, l."productId", l."variantId", l.title, l."variantTitle", l.sku, l.quantity, l."unitPriceMinor",
    l."subtotalMinor", l."discountMinor", l."taxMinor", l."totalMinor"
  from json_to_recordset($17::json) as l(id uuid, "productId" uuid, "variantId" uuid, title text, "variantTitle" text,
    sku text, quantity int, "unitPriceMinor" int8, "subtotalMinor" int8, "discountMinor" int8, "taxMinor" int8, "totalMinor" int8))`,
    `paid as (
  insert into payments (id, order_id, checkout_id, provider, method, status, amount_minor, currency,
    refunded_minor, provider_reference, created_at, updated_at)
  values ($19, $1, $20, $21, $22, 'succeeded', $4, $7, 0, $23, $3, $3))`,
    `closed as (update checkouts set status = 'completed', order_id = $1, updated_at = $3 where id = $20)`,
    eventsCte(24),
    storeCte(25),
  ].filter(Boolean)
  return `with ${ctes.join(',\n')}\nupdate carts set completed_at = $3, updated_at = $3 where id = $16`
}

const WRITE_ORDER = new Map<string, string>()
for (const products of [false, true]) {
  for (const variants of [false, true]) {
    for (const coupons of [false, true]) WRITE_ORDER.set(`${products} ${variants} ${coupons}`, writeOrderSql({ products, variants, coupons }))
  }
}

// Raw SQL reads timestamps as ISO text (see sqlOf).
type Text<T> = { [K in keyof T]: T[K] extends Date ? string : T[K] extends Date | null ? string | null : T[K] }

interface LockedCheckout extends Text<CartRow>, Claim {
  checkoutStatus: 'open' | 'completed'
  billingAddress: Address | null
  shippingMethods: ShippingMethodRow[]
  /** The units in stock of each locked stock row (variant or product id). */
  stock: Record<string, number>
  stale: boolean
  orderNumber: string
  now: string
}

/** The checkout's row when found (and this request runs). */
export interface LockedCart {
  checkout: LockedCheckout | undefined
}

/** The new order's number and times, read with the locks (its sequence's next value, the transaction's time). */
type NumberAndTimes = Pick<OrderRow, 'orderNumber' | 'createdAt' | 'updatedAt'>

/** The paid order's row as this transaction writes it. */
function orderValues(id: string, billingAddress: Address | null, priced: PricedCart, rate: { id: string; name: string } | null, made: NumberAndTimes): OrderRow {
  const { view: cart, totals } = priced
  return {
    id,
    ...made,
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

/** The succeeded charge as the order's statement records it. */
interface Charged {
  id: string
  provider: string
  method: string
  reference: string | null
}

interface LastWrites {
  events: NewEvent[]
  /** The stored answer's parameters (Remember.inline). */
  stored: readonly (string | number | null)[]
}

function writeOrder(tx: Executor, row: OrderRow, items: readonly OrderItemRow[], lines: readonly NewOrderLine[], couponIds: readonly string[], checkoutId: string, payment: Charged, now: string, last: LastWrites) {
  const json = (value: unknown) => (value === null ? null : JSON.stringify(value))
  const stock = lines.map((line) => ({ id: line.variantId ?? line.productId, quantity: line.quantity, variant: line.variantId !== null }))
  const events = eventRows(last.events)
  const sql = sqlOf(tx)
  const products = lines.some((line) => line.variantId === null)
  const variants = lines.some((line) => line.variantId !== null)
  const coupons = couponIds.length > 0
  const written = sql.unsafe(
    WRITE_ORDER.get(`${products} ${variants} ${coupons}`)!,
    [
      row.id,
      row.orderNumber,
      now,
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
      // The item rows as they are (json_to_recordset takes the columns it names).
      JSON.stringify(items),
      JSON.stringify(stock),
      payment.id,
      checkoutId,
      payment.provider,
      payment.method,
      payment.reference,
      events.json,
      ...last.stored,
      ...(coupons ? [[...couponIds]] : []),
    ],
    { prepare: true },
  )
  announceWhenCommitted(sql, events.ids)
  return written
}

/**
 * The first round trip: the key claimed, the cart, its coupons and its stock rows locked, and
 * what prices it read (the runner's `first`). The checkout is missing when it is not found or
 * this request does not run.
 */
export async function lockCheckout(tx: Executor, id: string, claim: readonly (string | null)[]): Promise<LockedCart & Claim> {
  const sql = sqlOf(tx)
  const read = async () => (await sql.unsafe<LockedCheckout[]>(LOCK_AND_READ, [id, ...claim], { prepare: true }))[0]!
  let row = await read()
  // Read again, with the lock held: the change the lock waited for is seen now.
  if (row.stale) row = await read()
  return { keyFree: row.keyFree, keyStored: row.keyStored, checkout: row.id === null ? undefined : row }
}

export function createCheckoutCompletion(provider: PaymentProvider) {
  /**
   * Completes the checkout inside `tx` (the idempotency runner's transaction) from what
   * lockCheckout read, and answers the order. Every refusal comes before the first write.
   */
  return async function completeCheckout(
    tx: Executor,
    id: string,
    { checkout: locked }: LockedCart,
    body: CompleteCheckout,
    viewer: CartViewer,
    requestId: string,
    idempotencyKey: string,
    /** Stores the answer with the last writes (its parameters, for the order's statement). */
    remember: Remember,
  ): Promise<Order> {
    if (!locked || !visibleTo(locked, viewer)) throw notFound('Checkout')
    if (locked.checkoutStatus !== 'open') throw conflict('This checkout is already completed')
    if (locked.completedAt) throw conflict('This cart was already checked out')

    const priced = priceOrRefuse({ ...locked, completedAt: null, createdAt: new Date(locked.createdAt), updatedAt: new Date(locked.updatedAt) })
    const cart = priced.view
    if (cart.items.length === 0) throw conflict('The cart is empty')
    const unavailable = cart.items.find((item) => item.problem !== null)
    if (unavailable?.problem) {
      throw new ApiError('conflict', `'${unavailable.title}': ${unavailable.problem.message}`, [
        { field: 'items', message: unavailable.id },
      ])
    }
    // Read locked: a coupon another checkout has used up is refused here rather than dropped
    // from the price, so the customer is never charged more than the checkout showed unawares.
    const usedUp = locked.coupons.find((coupon) => coupon.usageLimit !== null && coupon.timesUsed >= coupon.usageLimit)
    if (usedUp) throw new ApiError('coupon_invalid', `Coupon '${usedUp.code}' has reached its usage limit; remove it from the cart`)
    const rates = ratesFor(locked.shippingMethods, priced)
    const rate = rates.find((candidate) => candidate.id === cart.shipping_method_id) ?? null
    if (!rate && rates.length > 0) throw invalidField('rate_id', 'Choose a shipping rate first (POST /checkouts/:id/shipping)')

    const lines = priced.availableLines.map((line) => ({ ...line, unitPriceMinor: line.priceMinor }))
    const short = lines.findIndex((line) => (locked.stock[line.variantId ?? line.productId] ?? 0) < line.quantity)
    if (short >= 0) {
      const line = lines[short]!
      throw new ApiError('insufficient_inventory', `Not enough stock for '${line.title}': ${line.quantity} requested`, [
        { field: `items[${short}]`, message: `${line.title}: ${line.quantity} requested` },
      ])
    }

    const total = priced.totals.total
    const charge = await provider.charge({
      amountMinor: total,
      currency: cart.currency,
      method: body.payment.method,
      token: body.payment.token,
      idempotencyKey: `checkout:${id}:${idempotencyKey}`,
    })
    const now = new Date(locked.now)
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
        await writeEvent(recordTx, { kind: 'payment.failed', resourceId: failed.id, data: paymentOfRow(failed), customerId: cart.customer_id, requestId })
      })
    }

    // The order is written paid: the pending state before its payment is never seen outside
    // this transaction, so only the move to paid is an event.
    const paidEvent = moveOrder('pending', 'paid')
    const orderId = newId()
    const lineTotals = new Map(priced.totals.lines.map((line) => [line.id, line]))
    const items = orderItemRows(orderId, lines, priced.availableLines.map((line) => lineTotals.get(line.id)!))
    const row = orderValues(orderId, locked.billingAddress, priced, rate, { orderNumber: locked.orderNumber, createdAt: now, updatedAt: now })
    const payment = { ...attempt, orderId, status: 'succeeded' as const, providerReference: charge.reference }
    const placed = toOrder({ row, items, payments: [paymentJsonOfRow(payment)], fulfillments: [] })
    const couponIds = priced.applicableCoupons.map((coupon) => coupon.id)
    // The order serialized once: the answer, and (with order_id and total) both order events' data.
    const placedJson = JSON.stringify(placed)
    const created = { ...orderEvent('order.created', placed, requestId), dataJson: orderEventJson(placed, placedJson) }
    const paymentData = paymentOfRow(payment)
    // The order's statement commits (with its own Sync in the runner's implicit block).
    await Promise.all(
      sendLast(sqlOf(tx), () =>
        writeOrder(tx, row, items, lines, couponIds, id, { id: payment.id, provider: payment.provider, method: payment.method, reference: charge.reference }, locked.now, {
          events: [
            created,
            { kind: 'payment.succeeded', resourceId: orderId, data: paymentData, customerId: placed.customer_id, requestId },
            // The same snapshot as order.created's.
            { ...created, kind: paidEvent },
          ],
          stored: remember.inline({ status: 201, body: placed, json: placedJson }),
        }),
      ),
    )
    return placed
  }
}
