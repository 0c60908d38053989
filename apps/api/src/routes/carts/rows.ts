/**
 * A cart as one row: the cart, its lines with the live product and variant data, its coupons,
 * the tax rates of its address's country and its chosen shipping method, read in one round trip.
 */
import { eq, sql } from 'drizzle-orm'
import type { CouponType, TaxRounding, WeightUnitCode } from '@commerce/domain'
import { carts, type Database, type Executor } from '@commerce/db'

export interface LineRow {
  id: string
  productId: string
  variantId: string | null
  quantity: number
  title: string
  variantTitle: string | null
  sku: string | null
  imageUrl: string | null
  priceMinor: number
  currency: string
  isActive: boolean
  inventoryQuantity: number
  weight: number | null
  weightUnit: WeightUnitCode
}

export interface CouponRow {
  id: string
  code: string
  type: CouponType
  percentOffPpm: number | null
  amountOffMinor: number | null
  currency: string | null
  minSubtotalMinor: number | null
  startsAt: string | null
  endsAt: string | null
  usageLimit: number | null
  timesUsed: number
  isActive: boolean
}

export interface TaxRateRow {
  id: string
  country: string
  region: string | null
  ratePpm: number
  name: string
  rounding: TaxRounding
}

export interface ShippingMethodRow {
  id: string
  name: string
  currency: string
  countries: string[]
  basePriceMinor: number
  pricePerKgMinor: number
  freeOverMinor: number | null
  minWeightKg: number | null
  maxWeightKg: number | null
  estimatedDays: number | null
  isActive: boolean
}

// The parts of a cart read as SQL text, written once: the Drizzle selection below and the raw
// checkout completion (checkouts/complete.ts) both use them. "carts" is the cart row being read.

// A variant's own price, stock, sku and weight override the product's; the line is oldest first.
const LINES_OF_CART = `coalesce((
  select json_agg(json_build_object(
    'id', i.id, 'productId', i.product_id, 'variantId', i.variant_id, 'quantity', i.quantity,
    'title', p.title, 'variantTitle', v.title, 'sku', coalesce(v.sku, p.sku), 'imageUrl', p.image_url,
    'priceMinor', coalesce(v.price_minor, p.price_minor), 'currency', p.currency, 'isActive', p.is_active,
    'inventoryQuantity', coalesce(v.inventory_quantity, p.inventory_quantity),
    'weight', case when v.weight is not null then v.weight else p.weight end,
    'weightUnit', case when v.weight is not null then v.weight_unit else p.weight_unit end)
    order by i.id)
  from cart_items i
  join products p on p.id = i.product_id
  left join product_variants v on v.id = i.variant_id
  where i.cart_id = "carts"."id"), '[]'::json)`

/** A coupon row `c` as the JSON of CouponRow. */
export const COUPON_JSON = `json_build_object(
    'id', c.id, 'code', c.code, 'type', c.type, 'percentOffPpm', c.percent_off_ppm,
    'amountOffMinor', c.amount_off_minor, 'currency', c.currency, 'minSubtotalMinor', c.min_subtotal_minor,
    'startsAt', c.starts_at, 'endsAt', c.ends_at, 'usageLimit', c.usage_limit, 'timesUsed', c.times_used,
    'isActive', c.is_active)`

const COUPONS_OF_CART = `coalesce((
  select json_agg(${COUPON_JSON} order by cc.created_at, c.code)
  from cart_coupons cc join coupons c on c.id = cc.coupon_id
  where cc.cart_id = "carts"."id"), '[]'::json)`

const TAX_RATES_OF_CART = `coalesce((
  select json_agg(json_build_object(
    'id', t.id, 'country', t.country, 'region', t.region, 'ratePpm', t.rate_ppm, 'name', t.name, 'rounding', t.rounding))
  from tax_rates t where t.country = "carts"."shipping_address"->>'country'), '[]'::json)`

/** A shipping method row `s` as the JSON of ShippingMethodRow. */
export const SHIPPING_METHOD_JSON = `json_build_object(
    'id', s.id, 'name', s.name, 'currency', s.currency, 'countries', s.countries,
    'basePriceMinor', s.base_price_minor, 'pricePerKgMinor', s.price_per_kg_minor,
    'freeOverMinor', s.free_over_minor, 'minWeightKg', s.min_weight_kg, 'maxWeightKg', s.max_weight_kg,
    'estimatedDays', s.estimated_days, 'isActive', s.is_active)`

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

const linesOfCart = sql<LineRow[]>`${sql.raw(LINES_OF_CART)}`
const couponsOfCart = sql<CouponRow[]>`${sql.raw(COUPONS_OF_CART)}`
const taxRatesOfCart = sql<TaxRateRow[]>`${sql.raw(TAX_RATES_OF_CART)}`
const shippingMethodOfCart = sql<ShippingMethodRow | null>`${sql.raw(SHIPPING_METHOD_OF_CART)}`

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
  lines: linesOfCart,
  coupons: couponsOfCart,
  taxRates: taxRatesOfCart,
  shippingMethod: shippingMethodOfCart,
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
