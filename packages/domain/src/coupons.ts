/** Whether a coupon may apply to a cart, and the words that tell the shopper why not. */
import type { CouponType } from './constants.js'
import { formatMinorUnits } from './money.js'

export interface CouponRule {
  id: string
  code: string
  type: CouponType
  /** percentage coupons: the percent off, in parts per million */
  percentOffPpm: number | null
  /** fixed_amount coupons: the amount off, in minor units of `currency` */
  amountOffMinor: number | null
  /** Required for fixed_amount and with minSubtotalMinor; a coupon with a currency applies only to carts in it. */
  currency: string | null
  minSubtotalMinor: number | null
  /** inclusive */
  startsAt: Date | null
  /** exclusive: the coupon stops working at this instant */
  endsAt: Date | null
  usageLimit: number | null
  timesUsed: number
  isActive: boolean
}

export type CouponRejection =
  | 'inactive'
  | 'not_started'
  | 'expired'
  | 'usage_limit_reached'
  | 'currency_mismatch'
  | 'min_subtotal_not_met'

/** What couponRejection looks at; promotions (promotions.ts) are held to the same checks. */
export type CouponEligibility = Pick<
  CouponRule,
  'isActive' | 'startsAt' | 'endsAt' | 'usageLimit' | 'timesUsed' | 'currency' | 'minSubtotalMinor'
>

/**
 * Whether the coupon has been used as many times as its limit allows (never, without a limit).
 * The one definition of the rule: pricing drops such a coupon (couponRejection) and checkout
 * completion refuses a cart that still carries one (checkoutRefusal).
 */
export function couponUsedUp(coupon: Pick<CouponRule, 'usageLimit' | 'timesUsed'>): boolean {
  return coupon.usageLimit !== null && coupon.timesUsed >= coupon.usageLimit
}

/**
 * Why the coupon cannot apply to this cart now, or null when it can; the first failing check
 * wins. `subtotalMinor` is before any discount, so coupons never disqualify each other.
 */
export function couponRejection(
  coupon: CouponEligibility,
  cart: { currency: string; subtotalMinor: number; now: Date },
): CouponRejection | null {
  const now = cart.now.getTime()
  if (!coupon.isActive) return 'inactive'
  if (coupon.startsAt !== null && now < coupon.startsAt.getTime()) return 'not_started'
  if (coupon.endsAt !== null && now >= coupon.endsAt.getTime()) return 'expired'
  if (couponUsedUp(coupon)) return 'usage_limit_reached'
  if (coupon.currency !== null && coupon.currency !== cart.currency) return 'currency_mismatch'
  if (coupon.minSubtotalMinor !== null && cart.subtotalMinor < coupon.minSubtotalMinor) {
    return 'min_subtotal_not_met'
  }
  return null
}

export function couponRejectionMessage(coupon: CouponRule, reason: CouponRejection): string {
  const name = `Coupon '${coupon.code}'`
  switch (reason) {
    case 'inactive':
      return `${name} is not active`
    case 'not_started':
      return coupon.startsAt ? `${name} is not valid before ${coupon.startsAt.toISOString()}` : `${name} is not valid yet`
    case 'expired':
      return coupon.endsAt ? `${name} expired on ${coupon.endsAt.toISOString()}` : `${name} has expired`
    case 'usage_limit_reached':
      return `${name} has reached its usage limit`
    case 'currency_mismatch':
      return `${name} applies only to carts in ${coupon.currency ?? 'another currency'}`
    case 'min_subtotal_not_met':
      return coupon.minSubtotalMinor !== null && coupon.currency !== null
        ? `${name} requires a subtotal of at least ${formatMinorUnits(coupon.minSubtotalMinor, coupon.currency)} ${coupon.currency}`
        : `${name} requires a higher subtotal`
  }
}

/** Codes are matched case-insensitively and without surrounding spaces ("  save10 " = "SAVE10"). */
export function normalizeCouponCode(code: string): string {
  return code.trim().toUpperCase()
}
