/**
 * Prices a cart: line subtotals, coupon discounts spread over the lines, tax per line (rounded per
 * line, or per order and shared out: TaxRounding), shipping.
 * Everything is integer minor units computed in bigint, and every cart-level figure is the exact
 * sum of its per-line figures, so what a shopper sees on the lines always adds up.
 */
import { openCartLedger, ppmOf, settleCartTotals, type SettledTotals, type TotalsLine } from './cart-ledger.js'
import type { CouponRule } from './coupons.js'
import { AmountTooLargeError } from './errors.js'
import { applyAcceptedCoupons, type CouponDiscount } from './promotions.js'
import type { TaxRounding } from './tax.js'

export interface TotalsInput {
  currency: string
  lines: readonly TotalsLine[]
  /** only coupons the caller already accepted (couponRejection === null) */
  coupons: readonly CouponRule[]
  /** 0 when there is no address or no rate */
  taxRatePpm: number
  /** the rate's rounding; line by default */
  taxRounding?: TaxRounding
  /** the chosen shipping rate's price; null = none chosen yet (shipping 0) */
  shippingMinor: number | null
}

/** The cart's figures (SettledTotals) and what each coupon took. */
export interface CartTotals extends SettledTotals {
  coupons: CouponDiscount[]
}

/**
 * Coupons apply in one fixed order whatever order they arrive in: percentages first (so a
 * fixed amount is never scaled down by a later percentage), then fixed amounts, then free
 * shipping, each by code. Line order does not matter either: discount pennies are handed out
 * by largest remainder with ties going to the lower line id. Shipping is not taxed.
 * Lines come back in input order; coupons in the order they were applied.
 * This is applyPromotions' engine (promotions.ts) with the coupons as promotions, minus its
 * eligibility checks: the caller has already accepted them.
 */
export function computeCartTotals(input: TotalsInput): CartTotals {
  const taxRatePpm = ppmOf(input.taxRatePpm, 'Tax rate')
  const ledger = openCartLedger(input.lines, input.shippingMinor)
  const coupons = applyAcceptedCoupons(ledger, input.coupons, input.currency)
  return { ...settleCartTotals(ledger, taxRatePpm, input.taxRounding), coupons }
}

/**
 * Prices the lines that fit: `price` over every line, or, when a figure would pass
 * MAX_MINOR_UNITS (a product repriced after it was put in the cart), over the lines that fit
 * taken in order, each line that would take a figure past the limit set aside as `over`. A cart
 * therefore always prices; what it sets aside is for the caller to show and refuse to sell.
 */
export function priceWithinLimit<L, T>(lines: readonly L[], price: (lines: readonly L[]) => T): { priced: T; over: L[] } {
  const fits = (candidate: readonly L[]) => {
    try {
      return { priced: price(candidate) }
    } catch (error) {
      if (error instanceof AmountTooLargeError) return undefined
      throw error
    }
  }
  const all = fits(lines)
  if (all) return { priced: all.priced, over: [] }
  const kept: L[] = []
  const over: L[] = []
  let priced: T | undefined
  for (const line of lines) {
    const attempt = fits([...kept, line])
    if (attempt) {
      kept.push(line)
      priced = attempt.priced
    } else over.push(line)
  }
  return { priced: priced ?? price(kept), over }
}
