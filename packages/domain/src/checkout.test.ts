import { describe, expect, it } from 'vitest'
import { checkoutRefusal, type CheckoutLine, type CheckoutRefusalInput } from './checkout.js'
import { DomainError } from './errors.js'

const line = (overrides: Partial<CheckoutLine> = {}): CheckoutLine => ({
  id: 'line-1',
  title: 'Mug',
  quantity: 2,
  stockKey: 'variant-1',
  problem: null,
  ...overrides,
})

/** A cart that may complete: one line in stock, an unlimited coupon, the one rate chosen. */
const ready = (overrides: Partial<CheckoutRefusalInput> = {}): CheckoutRefusalInput => ({
  lines: [line()],
  coupons: [{ code: 'SAVE10', usageLimit: null, timesUsed: 7 }],
  stock: { 'variant-1': 2 },
  shippingRates: [{ id: 'rate-1' }, { id: 'rate-2' }],
  shippingRateId: 'rate-2',
  ...overrides,
})

const notSold = { code: 'not_sold' as const, message: 'This product is no longer sold; remove it from the cart' }
const usedUp = { code: 'ONCE', usageLimit: 1, timesUsed: 1 }

/** The refusal as the API answers it: code, message, details. */
const refusalOf = (input: CheckoutRefusalInput) => {
  const refusal = checkoutRefusal(input)
  if (refusal === null) return null
  expect(refusal).toBeInstanceOf(DomainError)
  return { code: refusal.code, message: refusal.message, details: refusal.details }
}

describe('checkoutRefusal', () => {
  it('lets a cart with its lines in stock, its coupons usable and a rate chosen complete', () => {
    expect(checkoutRefusal(ready())).toBeNull()
  })

  it('refuses an empty cart with conflict', () => {
    expect(refusalOf(ready({ lines: [] }))).toEqual({ code: 'conflict', message: 'The cart is empty', details: undefined })
  })

  it('refuses a line that cannot be bought now, naming it and its problem, with the line id under items', () => {
    const lines = [line(), line({ id: 'line-2', title: 'Old lamp', stockKey: 'product-2', problem: notSold })]
    expect(refusalOf(ready({ lines, stock: { 'variant-1': 2, 'product-2': 5 } }))).toEqual({
      code: 'conflict',
      message: "'Old lamp': This product is no longer sold; remove it from the cart",
      details: [{ field: 'items', message: 'line-2' }],
    })
  })

  it('refuses a coupon that reached its usage limit with coupon_invalid, naming the first such coupon', () => {
    const coupons = [{ code: 'SAVE10', usageLimit: 5, timesUsed: 4 }, usedUp, { code: 'TWICE', usageLimit: 2, timesUsed: 3 }]
    expect(refusalOf(ready({ coupons }))).toEqual({
      code: 'coupon_invalid',
      message: "Coupon 'ONCE' has reached its usage limit; remove it from the cart",
      details: undefined,
    })
  })

  it('refuses a cart without a chosen rate when rates are available, on field rate_id', () => {
    const message = 'Choose a shipping rate first (POST /checkouts/:id/shipping)'
    const refusal = { code: 'validation_error', message, details: [{ field: 'rate_id', message }] }
    expect(refusalOf(ready({ shippingRateId: null }))).toEqual(refusal)
    // A rate chosen before the address changed, no longer among the rates.
    expect(refusalOf(ready({ shippingRateId: 'rate-gone' }))).toEqual(refusal)
  })

  it('needs no rate when no shipping method can carry the cart', () => {
    expect(checkoutRefusal(ready({ shippingRates: [], shippingRateId: null }))).toBeNull()
    expect(checkoutRefusal(ready({ shippingRates: [], shippingRateId: 'rate-gone' }))).toBeNull()
  })

  it('refuses a line wanting more units than in stock with insufficient_inventory at items[i]', () => {
    const lines = [line(), line({ id: 'line-2', title: 'Lamp', quantity: 3, stockKey: 'product-2' })]
    expect(refusalOf(ready({ lines, stock: { 'variant-1': 2, 'product-2': 2 } }))).toEqual({
      code: 'insufficient_inventory',
      message: "Not enough stock for 'Lamp': 3 requested",
      details: [{ field: 'items[1]', message: 'Lamp: 3 requested' }],
    })
    expect(checkoutRefusal(ready({ lines, stock: { 'variant-1': 2, 'product-2': 3 } }))).toBeNull()
  })

  it('counts a stock key missing from the stock as none in stock', () => {
    expect(refusalOf(ready({ stock: {} }))?.code).toBe('insufficient_inventory')
    // Not a key of Object.prototype either.
    expect(refusalOf(ready({ lines: [line({ stockKey: 'constructor' })], stock: {} }))?.code).toBe('insufficient_inventory')
  })

  it('adds up the units two lines want from one stock row', () => {
    const lines = [line({ quantity: 1 }), line({ id: 'line-2', quantity: 1 })]
    expect(checkoutRefusal(ready({ lines, stock: { 'variant-1': 2 } }))).toBeNull()
    expect(refusalOf(ready({ lines, stock: { 'variant-1': 1 } }))?.details).toEqual([{ field: 'items[1]', message: 'Mug: 1 requested' }])
  })

  it('answers the first refusal: empty, unavailable line, used-up coupon, no rate, then stock', () => {
    const everythingWrong = ready({
      lines: [line({ problem: notSold })],
      coupons: [usedUp],
      shippingRateId: null,
      stock: {},
    })
    const messageOf = (input: CheckoutRefusalInput) => refusalOf(input)?.message
    expect(messageOf({ ...everythingWrong, lines: [] })).toBe('The cart is empty')
    expect(messageOf(everythingWrong)).toBe("'Mug': This product is no longer sold; remove it from the cart")
    const available = { ...everythingWrong, lines: [line()] }
    expect(messageOf(available)).toBe("Coupon 'ONCE' has reached its usage limit; remove it from the cart")
    expect(messageOf({ ...available, coupons: [] })).toBe('Choose a shipping rate first (POST /checkouts/:id/shipping)')
    expect(messageOf({ ...available, coupons: [], shippingRateId: 'rate-1' })).toBe("Not enough stock for 'Mug': 2 requested")
  })
})
