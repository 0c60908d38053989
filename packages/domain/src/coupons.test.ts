import { describe, expect, it } from 'vitest'
import { couponRule } from './coupon-rules.fixture.js'
import { couponRejection, couponRejectionMessage, couponUsedUp, normalizeCouponCode } from './coupons.js'

const coupon = couponRule
const now = new Date('2026-01-01T00:00:00.000Z')
const cart = { currency: 'USD', subtotalMinor: 5000, now }
const later = (ms: number) => new Date(now.getTime() + ms)

describe('couponRejection', () => {
  it('accepts an active coupon with no limits', () => {
    expect(couponRejection(coupon(), cart)).toBeNull()
  })

  it('rejects an inactive coupon', () => {
    expect(couponRejection(coupon({ isActive: false }), cart)).toBe('inactive')
  })

  it('treats startsAt as inclusive', () => {
    expect(couponRejection(coupon({ startsAt: now }), cart)).toBeNull()
    expect(couponRejection(coupon({ startsAt: later(1) }), cart)).toBe('not_started')
  })

  it('treats endsAt as exclusive: the coupon has expired at that very instant', () => {
    expect(couponRejection(coupon({ endsAt: now }), cart)).toBe('expired')
    expect(couponRejection(coupon({ endsAt: later(1) }), cart)).toBeNull()
  })

  it('rejects once timesUsed reaches usageLimit', () => {
    expect(couponRejection(coupon({ usageLimit: 3, timesUsed: 2 }), cart)).toBeNull()
    expect(couponRejection(coupon({ usageLimit: 3, timesUsed: 3 }), cart)).toBe('usage_limit_reached')
    expect(couponRejection(coupon({ usageLimit: 0 }), cart)).toBe('usage_limit_reached')
  })

  it('applies a coupon with a currency only to carts in that currency', () => {
    const fixed = coupon({ type: 'fixed_amount', percentOffPpm: null, amountOffMinor: 500, currency: 'USD' })
    expect(couponRejection(fixed, cart)).toBeNull()
    expect(couponRejection(fixed, { ...cart, currency: 'EUR' })).toBe('currency_mismatch')
    expect(couponRejection(coupon(), { ...cart, currency: 'JPY' })).toBeNull()
  })

  it('passes a subtotal equal to minSubtotalMinor and rejects one a minor unit below', () => {
    const minimum = coupon({ currency: 'USD', minSubtotalMinor: 5000 })
    expect(couponRejection(minimum, cart)).toBeNull()
    expect(couponRejection(minimum, { ...cart, subtotalMinor: 4999 })).toBe('min_subtotal_not_met')
  })

  it('reports the first failing check: inactive, timing, usage, currency, then subtotal', () => {
    const everythingWrong = coupon({
      isActive: false,
      startsAt: later(1),
      endsAt: now,
      usageLimit: 0,
      currency: 'EUR',
      minSubtotalMinor: 1_000_000,
    })
    expect(couponRejection(everythingWrong, cart)).toBe('inactive')
    expect(couponRejection({ ...everythingWrong, isActive: true }, cart)).toBe('not_started')
    expect(couponRejection({ ...everythingWrong, isActive: true, startsAt: null }, cart)).toBe('expired')
    expect(couponRejection({ ...everythingWrong, isActive: true, startsAt: null, endsAt: null }, cart)).toBe(
      'usage_limit_reached',
    )
  })
})

describe('couponUsedUp', () => {
  it('is used up once timesUsed reaches usageLimit, and never without a limit', () => {
    expect(couponUsedUp({ usageLimit: null, timesUsed: 1_000_000 })).toBe(false)
    expect(couponUsedUp({ usageLimit: 3, timesUsed: 2 })).toBe(false)
    expect(couponUsedUp({ usageLimit: 3, timesUsed: 3 })).toBe(true)
    // A limit lowered below the uses already made keeps it used up.
    expect(couponUsedUp({ usageLimit: 2, timesUsed: 3 })).toBe(true)
    expect(couponUsedUp({ usageLimit: 0, timesUsed: 0 })).toBe(true)
  })
})

describe('couponRejectionMessage', () => {
  it('names the coupon code and the reason in plain words', () => {
    expect(couponRejectionMessage(coupon(), 'inactive')).toBe("Coupon 'SAVE10' is not active")
    expect(couponRejectionMessage(coupon({ startsAt: later(86_400_000) }), 'not_started')).toBe(
      "Coupon 'SAVE10' is not valid before 2026-01-02T00:00:00.000Z",
    )
    expect(couponRejectionMessage(coupon({ endsAt: now }), 'expired')).toBe(
      "Coupon 'SAVE10' expired on 2026-01-01T00:00:00.000Z",
    )
    expect(couponRejectionMessage(coupon(), 'usage_limit_reached')).toBe("Coupon 'SAVE10' has reached its usage limit")
    expect(couponRejectionMessage(coupon({ currency: 'EUR' }), 'currency_mismatch')).toBe(
      "Coupon 'SAVE10' applies only to carts in EUR",
    )
  })

  it('shows the minimum subtotal in major units of the coupon currency', () => {
    const message = (minSubtotalMinor: number, currency: string) =>
      couponRejectionMessage(coupon({ minSubtotalMinor, currency }), 'min_subtotal_not_met')
    expect(message(5000, 'USD')).toBe("Coupon 'SAVE10' requires a subtotal of at least 50.00 USD")
    expect(message(5000, 'JPY')).toBe("Coupon 'SAVE10' requires a subtotal of at least 5000 JPY")
    expect(message(1500, 'KWD')).toBe("Coupon 'SAVE10' requires a subtotal of at least 1.500 KWD")
  })
})

describe('normalizeCouponCode', () => {
  it('trims and upper-cases so codes match however the shopper types them', () => {
    expect(normalizeCouponCode('  save10 ')).toBe('SAVE10')
    expect(normalizeCouponCode('Summer-Sale_2026')).toBe('SUMMER-SALE_2026')
  })
})
