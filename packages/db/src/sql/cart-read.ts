/**
 * A cart as one row: the cart, its lines with the live product and variant data, its coupons,
 * the tax rates of its address's country and its chosen shipping method, read in one round trip.
 * The parts read as JSON are written once, here: the cart reads below (Drizzle, the public GET
 * prepared), a line's addition (cart-add-line.ts) and the checkout completion's locked read
 * (checkout-reservation.ts) select them from a row named "carts".
 */
import { eq, sql } from 'drizzle-orm'
import type { Database, Executor } from '../client.js'
import { cartItems, carts, promotions, products, productVariants, shippingMethods, taxRates } from '../schema/index.js'
import { jsonColumns, jsonObject, type JsonOf, type JsonRow } from './json-rows.js'

/** A line with its product's live data; a variant's own price, stock, sku and weight override the product's. */
export type LineRow = JsonOf<typeof cartItems, 'id' | 'productId' | 'variantId' | 'quantity'> &
  JsonOf<typeof products, 'title' | 'sku' | 'imageUrl' | 'priceMinor' | 'currency' | 'isActive' | 'inventoryQuantity' | 'weight' | 'weightUnit'> & {
    /** The variant's title; null without a variant. */
    variantTitle: JsonOf<typeof productVariants, 'title'>['title'] | null
  }

const COUPON_KEYS = ['id', 'code', 'type', 'percentOffPpm', 'amountOffMinor', 'currency', 'minSubtotalMinor', 'startsAt', 'endsAt', 'usageLimit', 'timesUsed', 'isActive'] as const
export type CouponRow = JsonOf<typeof promotions, (typeof COUPON_KEYS)[number]>

const TAX_RATE_KEYS = ['id', 'country', 'region', 'ratePpm', 'name', 'rounding'] as const
export type TaxRateRow = JsonOf<typeof taxRates, (typeof TAX_RATE_KEYS)[number]>

const SHIPPING_METHOD_KEYS = [
  'id',
  'name',
  'currency',
  'countries',
  'basePriceMinor',
  'pricePerKgMinor',
  'freeOverMinor',
  'minWeightKg',
  'maxWeightKg',
  'estimatedDays',
  'isActive',
] as const
export type ShippingMethodRow = JsonOf<typeof shippingMethods, (typeof SHIPPING_METHOD_KEYS)[number]>

/** A coupon row `c` as the JSON of CouponRow. */
export const COUPON_JSON = jsonColumns(promotions, 'c', COUPON_KEYS)

/** A shipping method row `s` as the JSON of ShippingMethodRow. */
export const SHIPPING_METHOD_JSON = jsonColumns(shippingMethods, 's', SHIPPING_METHOD_KEYS)

const LINE_JSON = jsonObject<LineRow>({
  id: 'i.id',
  productId: 'i.product_id',
  variantId: 'i.variant_id',
  quantity: 'i.quantity',
  title: 'p.title',
  variantTitle: 'v.title',
  sku: 'coalesce(v.sku, p.sku)',
  imageUrl: 'p.image_url',
  priceMinor: 'coalesce(v.price_minor, p.price_minor)',
  currency: 'p.currency',
  isActive: 'p.is_active',
  inventoryQuantity: 'coalesce(v.inventory_quantity, p.inventory_quantity)',
  weight: 'case when v.weight is not null then v.weight else p.weight end',
  weightUnit: 'case when v.weight is not null then v.weight_unit else p.weight_unit end',
})

// The lines, oldest first.
const LINES_OF_CART = `coalesce((
  select json_agg(${LINE_JSON} order by i.id)
  from cart_items i
  join products p on p.id = i.product_id
  left join product_variants v on v.id = i.variant_id
  where i.cart_id = "carts"."id"), '[]'::json)`

const COUPONS_OF_CART = `coalesce((
  select json_agg(${COUPON_JSON} order by cc.created_at, c.code)
  from cart_coupons cc join promotions c on c.id = cc.coupon_id
  where cc.cart_id = "carts"."id"), '[]'::json)`

const TAX_RATES_OF_CART = `coalesce((
  select json_agg(${jsonColumns(taxRates, 't', TAX_RATE_KEYS)})
  from tax_rates t where t.country = "carts"."shipping_address"->>'country'), '[]'::json)`

const SHIPPING_METHOD_OF_CART = `(select ${SHIPPING_METHOD_JSON} from shipping_methods s where s.id = "carts"."shipping_method_id")`

/**
 * Every column of CartRow, read from a row named "carts"; `coupons` is the SQL of its coupons'
 * JSON array (by default read from the cart's coupons, as of the statement's snapshot).
 */
export function cartRowSql(coupons = COUPONS_OF_CART): string {
  return `"carts"."id" as "id", "carts"."currency" as "currency", "carts"."customer_id" as "customerId",
  "carts"."email" as "email", "carts"."shipping_address" as "shippingAddress",
  "carts"."shipping_method_id" as "shippingMethodId", "carts"."completed_at" as "completedAt",
  "carts"."created_at" as "createdAt", "carts"."updated_at" as "updatedAt",
  ${LINES_OF_CART} as "lines", ${coupons} as "coupons", ${TAX_RATES_OF_CART} as "taxRates",
  ${SHIPPING_METHOD_OF_CART} as "shippingMethod"`
}

const cartSelection = {
  id: carts.id,
  currency: carts.currency,
  customerId: carts.customerId,
  email: carts.email,
  shippingAddress: carts.shippingAddress,
  shippingMethodId: carts.shippingMethodId,
  completedAt: carts.completedAt,
  createdAt: carts.createdAt,
  updatedAt: carts.updatedAt,
  lines: sql<LineRow[]>`${sql.raw(LINES_OF_CART)}`,
  coupons: sql<CouponRow[]>`${sql.raw(COUPONS_OF_CART)}`,
  taxRates: sql<TaxRateRow[]>`${sql.raw(TAX_RATES_OF_CART)}`,
  shippingMethod: sql<ShippingMethodRow | null>`${sql.raw(SHIPPING_METHOD_OF_CART)}`,
}

/** One cart with everything its totals need, read inside a transaction (it sees that transaction's writes). */
export async function readCart(tx: Executor, id: string) {
  const [row] = await tx.select(cartSelection).from(carts).where(eq(carts.id, id))
  return row
}

/** The same read, prepared once, for the public GET. */
export function prepareCartRead(db: Database) {
  return db.select(cartSelection).from(carts).where(eq(carts.id, sql.placeholder('id'))).prepare('cart_detail')
}

export type CartRow = Awaited<ReturnType<ReturnType<typeof prepareCartRead>['execute']>>[number]

/** A CartRow read by raw SQL (cartRowSql): its instants as text. */
export type CartRowText = JsonRow<CartRow>

/** A cart row read by raw SQL as the Drizzle reads give it. */
export function cartRowOf(row: CartRowText): CartRow {
  const { completedAt, createdAt, updatedAt } = row
  return { ...row, completedAt: completedAt === null ? null : new Date(completedAt), createdAt: new Date(createdAt), updatedAt: new Date(updatedAt) }
}
