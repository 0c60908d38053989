/** A coupon rule for tests: 10 % off, active, without limits, unless told otherwise. */
import type { CouponRule } from './coupons.js'

export const couponRule = (overrides: Partial<CouponRule> = {}): CouponRule => ({
  id: 'c1',
  code: 'SAVE10',
  type: 'percentage',
  percentOffPpm: 100_000,
  amountOffMinor: null,
  currency: null,
  minSubtotalMinor: null,
  startsAt: null,
  endsAt: null,
  usageLimit: null,
  timesUsed: 0,
  isActive: true,
  ...overrides,
})
