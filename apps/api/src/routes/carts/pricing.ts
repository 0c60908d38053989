/** Turns a cart row into its API view: the live prices through the domain's pricing rules. */
import {
  computeCartTotals,
  couponRejection,
  couponRejectionMessage,
  massOf,
  ppmToPercent,
  selectTaxRate,
  shippingRate,
  toMajorUnits,
  type Cart,
  type CartCoupon,
  type CartTotals,
  type CouponRule,
  type ShippingMethodRule,
  type TotalsLine,
} from '@commerce/domain'
import type { CartRow, CouponRow, LineRow, ShippingMethodRow } from './rows.js'

export interface PricedCart {
  view: Cart
  /** What the shipping rates need: the country, the mass of the goods, the discounted subtotal. */
  country: string | null
  mass: bigint
  merchandiseMinor: number
  /** The subtotal before discounts, which coupon minimums compare against. */
  subtotalMinor: number
  /** The totals in minor units, per line and per coupon: what an order copies. */
  totals: CartTotals
  /** The lines that count (sold now in the cart's currency), with their live product data. */
  availableLines: LineRow[]
  /** The coupons that apply now. */
  applicableCoupons: CouponRule[]
}

export function toCouponRule(row: CouponRow): CouponRule {
  return {
    ...row,
    startsAt: row.startsAt === null ? null : new Date(row.startsAt),
    endsAt: row.endsAt === null ? null : new Date(row.endsAt),
  }
}

export function toShippingMethodRule(row: ShippingMethodRow): ShippingMethodRule {
  return row
}

/** A line counts only while its product is sold in the cart's currency. */
function isAvailable(line: LineRow, currency: string): boolean {
  return line.isActive && line.currency === currency
}

function couponValue(coupon: CouponRow): number | null {
  if (coupon.type === 'percentage') return ppmToPercent(coupon.percentOffPpm ?? 0)
  if (coupon.type === 'fixed_amount') return toMajorUnits(coupon.amountOffMinor ?? 0, coupon.currency ?? 'USD')
  return null
}

export function priceCart(row: CartRow, now: Date = new Date()): PricedCart {
  const { currency } = row
  const available = row.lines.filter((line) => isAvailable(line, currency))
  const lines: TotalsLine[] = available.map((line) => ({ id: line.id, unitPriceMinor: line.priceMinor, quantity: line.quantity }))
  const subtotalMinor = computeCartTotals({ currency, lines, coupons: [], taxRatePpm: 0, shippingMinor: null }).subtotal

  const rejections = new Map(
    row.coupons.map((coupon) => [coupon.id, couponRejection(toCouponRule(coupon), { currency, subtotalMinor, now })]),
  )
  const coupons = row.coupons.filter((coupon) => rejections.get(coupon.id) === null).map(toCouponRule)
  const address = row.shippingAddress
  const taxRate = selectTaxRate(row.taxRates, address && { country: address.country, region: address.region })
  const taxRatePpm = taxRate?.ratePpm ?? 0
  const taxRounding = taxRate?.rounding
  const mass = available.reduce((sum, line) => sum + (line.weight === null ? 0n : massOf(line.weight, line.weightUnit)) * BigInt(line.quantity), 0n)

  let totals = computeCartTotals({ currency, lines, coupons, taxRatePpm, taxRounding, shippingMinor: null })
  const merchandiseMinor = totals.subtotal - totals.discount
  if (row.shippingMethod) {
    const shippingMinor = shippingRate(toShippingMethodRule(row.shippingMethod), {
      currency,
      country: address?.country ?? null,
      mass,
      merchandiseMinor,
    })
    if (shippingMinor !== null) totals = computeCartTotals({ currency, lines, coupons, taxRatePpm, taxRounding, shippingMinor })
  }

  const major = (minor: number) => toMajorUnits(minor, currency)
  const lineTotals = new Map(totals.lines.map((line) => [line.id, line]))
  const couponDiscounts = new Map(totals.coupons.map((coupon) => [coupon.id, coupon.discount]))

  const view: Cart = {
    id: row.id,
    cart_id: row.id,
    currency,
    customer_id: row.customerId,
    email: row.email,
    items: row.lines.map((line) => {
      const priced = lineTotals.get(line.id)
      return {
        id: line.id,
        product_id: line.productId,
        variant_id: line.variantId,
        title: line.title,
        variant_title: line.variantTitle,
        sku: line.sku,
        image_url: line.imageUrl,
        quantity: line.quantity,
        unit_price: toMajorUnits(line.priceMinor, line.currency),
        line_total: major(priced?.subtotal ?? 0),
        discount: major(priced?.discount ?? 0),
        tax: major(priced?.tax ?? 0),
        available: priced !== undefined,
      }
    }),
    coupons: row.coupons.map((coupon): CartCoupon => {
      const rejection = rejections.get(coupon.id) ?? null
      return {
        id: coupon.id,
        code: coupon.code,
        type: coupon.type,
        value: couponValue(coupon),
        discount: major(couponDiscounts.get(coupon.id) ?? 0),
        applicable: rejection === null,
        reason: rejection === null ? null : couponRejectionMessage(toCouponRule(coupon), rejection),
      }
    }),
    shipping_address: row.shippingAddress,
    shipping_method_id: row.shippingMethodId,
    totals: {
      subtotal: major(totals.subtotal),
      discount: major(totals.discount),
      tax: major(totals.tax),
      shipping: major(totals.shipping),
      total: major(totals.total),
    },
    completed_at: row.completedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
  return {
    view,
    country: address?.country ?? null,
    mass,
    merchandiseMinor,
    subtotalMinor,
    totals,
    availableLines: available,
    applicableCoupons: coupons,
  }
}
