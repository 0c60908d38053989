/** Turns a cart row into its API view: the live prices through the domain's pricing rules. */
import {
  computeCartTotals,
  couponRejection,
  couponRejectionMessage,
  formatMinorUnits,
  massOf,
  MAX_MINOR_UNITS,
  ppmToPercent,
  priceWithinLimit,
  selectTaxRate,
  shippingRate,
  toMajorUnits,
  type Cart,
  type CartCoupon,
  type CartLineProblem,
  type CartTotals,
  type CouponRule,
  type ShippingMethodRule,
  type TotalsLine,
} from '@commerce/domain'
import type { CartRow, CouponRow, LineRow, ShippingMethodRow } from '@commerce/db'

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
    code: row.code ?? '',
    type: row.type as CouponRule['type'],
    startsAt: row.startsAt === null ? null : new Date(row.startsAt),
    endsAt: row.endsAt === null ? null : new Date(row.endsAt),
  }
}

export function toShippingMethodRule(row: ShippingMethodRow): ShippingMethodRule {
  return row
}

/** What keeps a line from being sold now, the total limit aside (priceWithinLimit finds that). */
function availabilityProblem(line: LineRow, currency: string): CartLineProblem | null {
  if (!line.isActive) return 'not_sold'
  return line.currency === currency ? null : 'other_currency'
}

function problemMessage(problem: CartLineProblem, line: LineRow, currency: string): string {
  if (problem === 'not_sold') return 'This product is no longer sold; remove it from the cart'
  if (problem === 'other_currency') return `This product is now sold in ${line.currency}, not in the cart's ${currency}; remove it from the cart`
  return (
    `With this line the cart's total would be more than ${formatMinorUnits(MAX_MINOR_UNITS, currency)} ${currency}, ` +
    'the most an amount can be; lower its quantity or remove it'
  )
}

function couponValue(coupon: CouponRow): number | null {
  if (coupon.type === 'percentage') return ppmToPercent(coupon.percentOffPpm ?? 0)
  if (coupon.type === 'fixed_amount') return toMajorUnits(coupon.amountOffMinor ?? 0, coupon.currency ?? 'USD')
  return null
}

/** The figures of a cart over `lines` (the coupons that apply depend on the subtotal, the shipping on the mass). */
function priceLines(row: CartRow, available: readonly LineRow[], now: Date) {
  const { currency } = row
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
  return { available, subtotalMinor, rejections, coupons, mass, merchandiseMinor, totals }
}

/**
 * Prices a cart at today's prices. It always prices: a line that cannot be sold now (no longer
 * sold, another currency, or taking the total past the most an amount can be) is shown with its
 * `problem` and counts 0, for the customer to act on.
 */
export function priceCart(row: CartRow, now: Date = new Date()): PricedCart {
  const { currency } = row
  const sold = row.lines.filter((line) => availabilityProblem(line, currency) === null)
  const { priced, over } = priceWithinLimit(sold, (lines) => priceLines(row, lines, now))
  const { available, subtotalMinor, rejections, coupons, mass, merchandiseMinor, totals } = priced
  const problemOf = (line: LineRow): CartLineProblem | null =>
    availabilityProblem(line, currency) ?? (over.includes(line) ? 'total_too_large' : null)
  const address = row.shippingAddress

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
      const problem = problemOf(line)
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
        available: problem === null,
        problem: problem === null ? null : { code: problem, message: problemMessage(problem, line, currency) },
      }
    }),
    coupons: row.coupons.map((coupon): CartCoupon => {
      const rejection = rejections.get(coupon.id) ?? null
      return {
        id: coupon.id,
        code: coupon.code ?? '',
        type: coupon.type as CartCoupon['type'],
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
    availableLines: [...available],
    applicableCoupons: coupons,
  }
}
