import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { TotalsLine } from './cart-ledger.js'
import { MAX_CART_COUPONS, MAX_CART_LINES } from './constants.js'
import { couponRule } from './coupon-rules.fixture.js'
import type { CouponRule } from './coupons.js'
import { MAX_MINOR_UNITS } from './money.js'
import { divideRounded } from './rounding.js'
import type { TaxRounding } from './tax.js'
import { type CartTotals, type TotalsInput, computeCartTotals, priceWithinLimit } from './totals.js'

const coupon = (id: string, code: string, rule: Partial<CouponRule>): CouponRule => couponRule({ id, code, percentOffPpm: null, ...rule })
const percentOff = (code: string, ppm: number) => coupon(`id-${code}`, code, { type: 'percentage', percentOffPpm: ppm })
const amountOff = (code: string, minor: number, currency = 'USD') =>
  coupon(`id-${code}`, code, { type: 'fixed_amount', amountOffMinor: minor, currency })
const freeShipping = (code: string) => coupon(`id-${code}`, code, { type: 'free_shipping' })
const line = (id: string, unitPriceMinor: number, quantity = 1): TotalsLine => ({ id, unitPriceMinor, quantity })
const cart = (input: Partial<TotalsInput>): TotalsInput => ({
  currency: 'USD',
  lines: [],
  coupons: [],
  taxRatePpm: 0,
  shippingMinor: null,
  ...input,
})
const byId = (totals: CartTotals) => Object.fromEntries(totals.lines.map((entry) => [entry.id, entry]))
const domainError = (code: string, message?: string) =>
  expect.objectContaining(message === undefined ? { code } : { code, message })

describe('computeCartTotals by hand', () => {
  it('multiplies unit price by quantity and adds tax and shipping', () => {
    const totals = computeCartTotals(cart({ lines: [line('a', 1999, 2), line('b', 500)], shippingMinor: 799 }))
    expect(totals).toEqual({
      subtotal: 4498,
      discount: 0,
      tax: 0,
      shipping: 799,
      total: 5297,
      lines: [
        { id: 'a', subtotal: 3998, discount: 0, tax: 0, total: 3998 },
        { id: 'b', subtotal: 500, discount: 0, tax: 0, total: 500 },
      ],
      coupons: [],
    })
  })

  it('splits 10 % off 10.00 over 3.33 + 3.33 + 3.34 by largest remainder', () => {
    // exact shares 0.333, 0.333, 0.334: the 3.34 line has the largest remainder and gets the last cent
    const totals = computeCartTotals(
      cart({ lines: [line('a', 333), line('b', 333), line('c', 334)], coupons: [percentOff('TEN', 100_000)] }),
    )
    expect(totals.lines.map((entry) => entry.discount)).toEqual([33, 33, 34])
    expect(totals).toMatchObject({ subtotal: 1000, discount: 100, total: 900, coupons: [{ id: 'id-TEN', discount: 100 }] })
  })

  it('gives the leftover cent of an even split to the line with the lowest id, whatever the line order', () => {
    // 10 % of 9.99 is 0.999 -> 1.00; each line's exact share is 0.333
    const totals = computeCartTotals(
      cart({ lines: [line('c', 333), line('a', 333), line('b', 333)], coupons: [percentOff('TEN', 100_000)] }),
    )
    expect(totals.lines.map((entry) => [entry.id, entry.discount])).toEqual([
      ['c', 33],
      ['a', 34],
      ['b', 33],
    ])
    expect(totals.discount).toBe(100)
  })

  it('rounds 8.875 % tax half away from zero on each line, not on the sum', () => {
    // 19.99 -> 1.7741125 -> 1.77; 4.00 -> 0.355 -> 0.36; 7.50 -> 0.665625 -> 0.67. The sum 31.49 would give 2.79.
    const totals = computeCartTotals(
      cart({ lines: [line('a', 1999), line('b', 400), line('c', 250, 3)], taxRatePpm: 88_750, shippingMinor: 599 }),
    )
    expect(totals.lines.map((entry) => entry.tax)).toEqual([177, 36, 67])
    expect(totals).toMatchObject({ subtotal: 3149, tax: 280, shipping: 599, total: 3149 + 280 + 599 })
  })

  it('rounds once on the sum with order rounding, sharing the 2.79 out over the lines by largest remainder', () => {
    const totals = computeCartTotals(
      cart({ lines: [line('a', 1999), line('b', 400), line('c', 250, 3)], taxRatePpm: 88_750, taxRounding: 'order', shippingMinor: 599 }),
    )
    // 2.79 in proportion to 19.99 / 4.00 / 7.50: 1.7711 / 0.3544 / 0.6645 -> 1.77, 0.35, 0.67.
    expect(totals.lines.map((entry) => entry.tax)).toEqual([177, 35, 67])
    expect(totals).toMatchObject({ subtotal: 3149, tax: 279, shipping: 599, total: 3149 + 279 + 599 })
  })

  it('taxes the discounted line amounts and never the shipping', () => {
    const totals = computeCartTotals(
      cart({ lines: [line('a', 10_000)], coupons: [amountOff('FIVE', 500)], taxRatePpm: 200_000, shippingMinor: 1000 }),
    )
    expect(totals).toMatchObject({ subtotal: 10_000, discount: 500, tax: 1900, shipping: 1000, total: 12_400 })
  })

  it('prices a JPY cart in whole yen', () => {
    // 500 yen over 4500 + 980: exact shares 410.58 and 89.42 -> 411 and 89; tax 10 % of 4089 and 891
    const totals = computeCartTotals(
      cart({
        currency: 'JPY',
        lines: [line('a', 1500, 3), line('b', 980)],
        coupons: [amountOff('YEN500', 500, 'JPY')],
        taxRatePpm: 100_000,
        shippingMinor: 800,
      }),
    )
    expect(totals).toEqual({
      subtotal: 5480,
      discount: 500,
      tax: 498,
      shipping: 800,
      total: 6278,
      lines: [
        { id: 'a', subtotal: 4500, discount: 411, tax: 409, total: 4498 },
        { id: 'b', subtotal: 980, discount: 89, tax: 89, total: 980 },
      ],
      coupons: [{ id: 'id-YEN500', discount: 500 }],
    })
  })

  it('prices a KWD cart in fils (three decimals)', () => {
    // 15 % of 6.255 KWD = 0.93825 -> 0.938, split 374.90 / 563.10 -> 375 / 563; 5 % tax of 2.125 and 3.192
    const totals = computeCartTotals(
      cart({
        currency: 'KWD',
        lines: [line('a', 1250, 2), line('b', 3755)],
        coupons: [percentOff('FIFTEEN', 150_000)],
        taxRatePpm: 50_000,
      }),
    )
    expect(totals.lines).toEqual([
      { id: 'a', subtotal: 2500, discount: 375, tax: 106, total: 2231 },
      { id: 'b', subtotal: 3755, discount: 563, tax: 160, total: 3352 },
    ])
    expect(totals).toMatchObject({ subtotal: 6255, discount: 938, tax: 266, shipping: 0, total: 5583 })
  })

  it('applies percentage coupons before fixed amounts whatever order they arrive in', () => {
    // 10 % of 100.00, then 10.00 off the remaining 90.00; the other way round would take only 19.00
    for (const coupons of [
      [amountOff('TENOFF', 1000), percentOff('PCT10', 100_000)],
      [percentOff('PCT10', 100_000), amountOff('TENOFF', 1000)],
    ]) {
      const totals = computeCartTotals(cart({ lines: [line('a', 10_000)], coupons }))
      expect(totals.discount).toBe(2000)
      expect(totals.coupons).toEqual([
        { id: 'id-PCT10', discount: 1000 },
        { id: 'id-TENOFF', discount: 1000 },
      ])
    }
  })

  it('caps fixed amounts at what is left, applying coupons of one type by code', () => {
    const totals = computeCartTotals(
      cart({ lines: [line('a', 1000)], coupons: [amountOff('B', 800), amountOff('A', 800)], taxRatePpm: 100_000 }),
    )
    expect(totals.coupons).toEqual([
      { id: 'id-A', discount: 800 },
      { id: 'id-B', discount: 200 },
    ])
    expect(totals).toMatchObject({ subtotal: 1000, discount: 1000, tax: 0, total: 0 })
  })

  it('takes everything with 100 % off', () => {
    const totals = computeCartTotals(cart({ lines: [line('a', 999, 7)], coupons: [percentOff('ALL', 1_000_000)], taxRatePpm: 88_750 }))
    expect(totals).toMatchObject({ subtotal: 6993, discount: 6993, tax: 0, total: 0 })
  })

  it('waives shipping with free_shipping, reporting it on the coupon and not in the merchandise discount', () => {
    const totals = computeCartTotals(
      cart({ lines: [line('a', 2000)], coupons: [freeShipping('SHIP2'), freeShipping('SHIP1')], shippingMinor: 799 }),
    )
    expect(totals).toMatchObject({ subtotal: 2000, discount: 0, shipping: 0, total: 2000 })
    expect(totals.coupons).toEqual([
      { id: 'id-SHIP1', discount: 799 },
      { id: 'id-SHIP2', discount: 0 },
    ])
    expect(computeCartTotals(cart({ lines: [line('a', 2000)], coupons: [freeShipping('SHIP1')] })).coupons).toEqual([
      { id: 'id-SHIP1', discount: 0 },
    ])
  })

  it('prices an empty cart at zero, plus any shipping', () => {
    expect(computeCartTotals(cart({ coupons: [percentOff('TEN', 100_000), amountOff('FIVE', 500)], shippingMinor: 300 }))).toEqual({
      subtotal: 0,
      discount: 0,
      tax: 0,
      shipping: 300,
      total: 300,
      lines: [],
      coupons: [
        { id: 'id-TEN', discount: 0 },
        { id: 'id-FIVE', discount: 0 },
      ],
    })
  })

  it('accepts a total of exactly MAX_MINOR_UNITS and refuses one minor unit more', () => {
    expect(computeCartTotals(cart({ lines: [line('a', MAX_MINOR_UNITS)] })).total).toBe(MAX_MINOR_UNITS)
    const tooLarge = domainError('validation_error', 'Cart total is too large')
    expect(() => computeCartTotals(cart({ lines: [line('a', MAX_MINOR_UNITS, 2)] }))).toThrow(tooLarge)
    expect(() => computeCartTotals(cart({ lines: [line('a', MAX_MINOR_UNITS)], shippingMinor: 1 }))).toThrow(tooLarge)
    expect(() => computeCartTotals(cart({ lines: [line('a', MAX_MINOR_UNITS)], taxRatePpm: 1 }))).toThrow(tooLarge)
    expect(() =>
      computeCartTotals(cart({ lines: [line('a', 500_000_000_000_000), line('b', 500_000_000_000_000)] })),
    ).toThrow(tooLarge)
  })

  it('priceWithinLimit sets aside, in order, each line that would take a figure past the limit, and prices the rest', () => {
    const half = 500_000_000_000_000
    const lines = [line('a', half), line('b', 1), line('c', half), line('d', 2)]
    const price = (kept: readonly TotalsLine[]) => computeCartTotals(cart({ lines: kept }))
    const { priced, over } = priceWithinLimit(lines, price)
    expect(over.map((entry) => entry.id)).toEqual(['c'])
    expect(priced.total).toBe(half + 3)
    // Tax can be what passes the limit too.
    const taxed = priceWithinLimit([line('a', MAX_MINOR_UNITS - 10), line('b', 5)], (kept) => computeCartTotals(cart({ lines: kept, taxRatePpm: 1 })))
    expect(taxed.over.map((entry) => entry.id)).toEqual(['a'])
    expect(taxed.priced.total).toBe(5)
    // Within the limit nothing is set aside; other errors are not swallowed.
    expect(priceWithinLimit(lines.slice(0, 2), price).over).toEqual([])
    expect(() => priceWithinLimit([line('a', -1)], price)).toThrow(domainError('validation_error'))
  })

  it('refuses malformed input rather than pricing it', () => {
    expect(() => computeCartTotals(cart({ lines: [line('a', 100), line('a', 200)] }))).toThrow(
      domainError('validation_error', 'Cart lines must have distinct ids'),
    )
    expect(() => computeCartTotals(cart({ lines: [line('a', -1)] }))).toThrow(domainError('validation_error'))
    expect(() => computeCartTotals(cart({ lines: [line('a', 1.5)] }))).toThrow(domainError('validation_error'))
    expect(() => computeCartTotals(cart({ lines: [line('a', 100, 1.5)] }))).toThrow(domainError('validation_error'))
    expect(() => computeCartTotals(cart({ lines: [line('a', 100, -1)] }))).toThrow(domainError('validation_error'))
    expect(() => computeCartTotals(cart({ taxRatePpm: 1_000_001 }))).toThrow(domainError('validation_error'))
    expect(() => computeCartTotals(cart({ shippingMinor: -1 }))).toThrow(domainError('validation_error'))
    expect(() => computeCartTotals(cart({ coupons: [percentOff('NONE', 1_000_001)] }))).toThrow(domainError('validation_error'))
    expect(() => computeCartTotals(cart({ coupons: [coupon('x', 'X', { type: 'percentage' })] }))).toThrow(
      domainError('validation_error', "Coupon 'X' has no percentage"),
    )
    expect(() => computeCartTotals(cart({ coupons: [amountOff('EURO', 500, 'EUR')] }))).toThrow(
      domainError('currency_mismatch', "Coupon 'EURO' applies only to carts in EUR"),
    )
  })
})

const currencies = ['USD', 'JPY', 'KWD'] as const
const price = fc.oneof(
  { arbitrary: fc.integer({ min: 0, max: 1_000_000_000 }), weight: 100 },
  { arbitrary: fc.integer({ min: 0, max: 10_000 }), weight: 100 },
  // now and then a line near the ceiling, so carts that are too large get priced too
  { arbitrary: fc.integer({ min: 0, max: MAX_MINOR_UNITS }), weight: 1 },
)
const quantity = fc.oneof(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 5 }))
// the line count is drawn first so long carts (up to MAX_CART_LINES) are as likely as short ones
const lines = fc.integer({ min: 1, max: MAX_CART_LINES }).chain((count) =>
  fc.uniqueArray(fc.record({ id: fc.string({ minLength: 1, maxLength: 4 }), unitPriceMinor: price, quantity }), {
    minLength: count,
    maxLength: count,
    selector: (entry) => entry.id,
  }),
)
const couponOf = (currency: string) =>
  fc
    .record({
      id: fc.string({ minLength: 1, maxLength: 4 }),
      // few codes, so coupons of one type often share a code and fall back to the id
      code: fc.constantFrom('A', 'B', 'SAVE', 'save'),
      kind: fc.constantFrom('percentage', 'fixed_amount', 'free_shipping'),
      ppm: fc.oneof(fc.integer({ min: 0, max: 1_000_000 }), fc.constantFrom(0, 88_750, 100_000, 1_000_000)),
      amount: fc.oneof(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: MAX_MINOR_UNITS })),
    })
    .map(({ id, code, kind, ppm, amount }) =>
      kind === 'percentage'
        ? coupon(id, code, { type: kind, percentOffPpm: ppm })
        : kind === 'fixed_amount'
          ? coupon(id, code, { type: kind, amountOffMinor: amount, currency })
          : coupon(id, code, { type: kind }),
    )
const carts = fc.constantFrom(...currencies).chain((currency) =>
  fc.record({
    currency: fc.constant(currency),
    lines,
    coupons: fc.uniqueArray(couponOf(currency), { maxLength: MAX_CART_COUPONS, selector: (entry) => entry.id }),
    taxRatePpm: fc.oneof(fc.integer({ min: 0, max: 300_000 }), fc.constantFrom(0, 88_750, 200_000)),
    // Both roundings, so every property below holds for each.
    taxRounding: fc.constantFrom<TaxRounding>('line', 'order'),
    shippingMinor: fc.option(fc.integer({ min: 0, max: 10_000_000 }), { nil: null }),
  }),
)
const shuffledCarts = carts.chain((input) =>
  fc
    .tuple(
      fc.shuffledSubarray([...input.lines], { minLength: input.lines.length }),
      fc.shuffledSubarray([...input.coupons], { minLength: input.coupons.length }),
    )
    .map(([lines, coupons]) => ({ input, shuffled: { ...input, lines, coupons } })),
)

/** The totals, or null when the cart is refused as too large, which is checked to be plausible. */
function priced(input: TotalsInput): CartTotals | null {
  try {
    return computeCartTotals(input)
  } catch (error) {
    expect(error).toMatchObject({ code: 'validation_error', message: 'Cart total is too large' })
    const subtotal = input.lines.reduce((sum, entry) => sum + BigInt(entry.unitPriceMinor) * BigInt(entry.quantity), 0n)
    const ceiling = subtotal + (subtotal * BigInt(input.taxRatePpm)) / 1_000_000n + BigInt(input.lines.length)
    expect(ceiling + BigInt(input.shippingMinor ?? 0) > BigInt(MAX_MINOR_UNITS)).toBe(true)
    return null
  }
}

const sumOf = (values: readonly number[]) => values.reduce((sum, value) => sum + value, 0)

describe('computeCartTotals over generated carts', () => {
  it('keeps total = subtotal - discount + tax + shipping, on the cart and on every line', () => {
    fc.assert(
      fc.property(carts, (input) => {
        const totals = priced(input)
        if (!totals) return
        expect(totals.total).toBe(totals.subtotal - totals.discount + totals.tax + totals.shipping)
        for (const entry of totals.lines) expect(entry.total).toBe(entry.subtotal - entry.discount + entry.tax)
      }),
    )
  })

  it('has no negative amount anywhere and every amount is a safe integer', () => {
    fc.assert(
      fc.property(carts, (input) => {
        const totals = priced(input)
        if (!totals) return
        const amounts = [
          totals.subtotal,
          totals.discount,
          totals.tax,
          totals.shipping,
          totals.total,
          ...totals.lines.flatMap((entry) => [entry.subtotal, entry.discount, entry.tax, entry.total]),
          ...totals.coupons.map((entry) => entry.discount),
        ]
        for (const amount of amounts) {
          expect(Number.isSafeInteger(amount) && amount >= 0 && amount <= MAX_MINOR_UNITS).toBe(true)
        }
      }),
    )
  })

  it('never discounts more than the subtotal, on the cart or on any line', () => {
    fc.assert(
      fc.property(carts, (input) => {
        const totals = priced(input)
        if (!totals) return
        expect(totals.discount).toBeLessThanOrEqual(totals.subtotal)
        for (const entry of totals.lines) expect(entry.discount).toBeLessThanOrEqual(entry.subtotal)
      }),
    )
  })

  it('makes the lines sum exactly to the cart subtotal, discount, tax and total', () => {
    fc.assert(
      fc.property(carts, (input) => {
        const totals = priced(input)
        if (!totals) return
        expect(sumOf(totals.lines.map((entry) => entry.subtotal))).toBe(totals.subtotal)
        expect(sumOf(totals.lines.map((entry) => entry.discount))).toBe(totals.discount)
        expect(sumOf(totals.lines.map((entry) => entry.tax))).toBe(totals.tax)
        expect(sumOf(totals.lines.map((entry) => entry.total)) + totals.shipping).toBe(totals.total)
      }),
    )
  })

  it('accounts for every coupon: merchandise coupons add up to the discount, free shipping to the waived shipping', () => {
    fc.assert(
      fc.property(carts, (input) => {
        const totals = priced(input)
        if (!totals) return
        const typeOf = new Map(input.coupons.map((entry) => [entry.id, entry.type]))
        const waived = totals.coupons.filter((entry) => typeOf.get(entry.id) === 'free_shipping')
        const merchandise = totals.coupons.filter((entry) => typeOf.get(entry.id) !== 'free_shipping')
        expect(totals.coupons).toHaveLength(input.coupons.length)
        expect(sumOf(merchandise.map((entry) => entry.discount))).toBe(totals.discount)
        expect(sumOf(waived.map((entry) => entry.discount)) + totals.shipping).toBe(input.shippingMinor ?? 0)
        expect(totals.shipping).toBe(waived.length > 0 ? 0 : (input.shippingMinor ?? 0))
      }),
    )
  })

  it('taxes each line at its discounted amount, rounded half away from zero (line rounding)', () => {
    fc.assert(
      fc.property(carts, ({ taxRounding: _order, ...lineRounded }) => {
        const input = { ...lineRounded, taxRounding: 'line' as const }
        const totals = priced(input)
        if (!totals) return
        totals.lines.forEach((entry, index) => {
          const source = input.lines[index]
          expect(entry.id).toBe(source?.id)
          expect(entry.subtotal).toBe((source?.unitPriceMinor ?? 0) * (source?.quantity ?? 0))
          const expectedTax = divideRounded(BigInt(entry.subtotal - entry.discount) * BigInt(input.taxRatePpm), 1_000_000n)
          expect(entry.tax).toBe(Number(expectedTax))
        })
      }),
    )
  })

  it('rounds the tax of the whole cart once and shares it out within a minor unit and a half of each line’s exact tax (order rounding)', () => {
    fc.assert(
      fc.property(carts, ({ taxRounding: _line, ...orderRounded }) => {
        const input = { ...orderRounded, taxRounding: 'order' as const }
        const totals = priced(input)
        if (!totals) return
        const rate = BigInt(input.taxRatePpm)
        const taxable = totals.lines.map((entry) => BigInt(entry.subtotal - entry.discount))
        expect(totals.tax).toBe(Number(divideRounded(taxable.reduce((sum, amount) => sum + amount, 0n) * rate, 1_000_000n)))
        totals.lines.forEach((entry, index) => {
          // |tax - exact| < 1.5, in millionths: 2 * |tax * 10^6 - taxable * rate| < 3 * 10^6.
          const gap = BigInt(entry.tax) * 1_000_000n - taxable[index]! * rate
          expect(2n * (gap < 0n ? -gap : gap) < 3_000_000n).toBe(true)
        })
      }),
    )
  })

  it('changes only the tax between line and order rounding, by at most half a minor unit per line', () => {
    fc.assert(
      fc.property(carts, (input) => {
        const byLine = priced({ ...input, taxRounding: 'line' })
        const byOrder = priced({ ...input, taxRounding: 'order' })
        if (!byLine || !byOrder) return
        expect({ ...byOrder, tax: 0, total: 0, lines: [] }).toEqual({ ...byLine, tax: 0, total: 0, lines: [] })
        expect(byOrder.total - byLine.total).toBe(byOrder.tax - byLine.tax)
        expect(2 * Math.abs(byOrder.tax - byLine.tax)).toBeLessThanOrEqual(input.lines.length)
      }),
    )
  })

  it('gives the same totals and the same per-line values by id for any order of lines and coupons', () => {
    fc.assert(
      fc.property(shuffledCarts, ({ input, shuffled }) => {
        const original = priced(input)
        const reordered = priced(shuffled)
        if (!original || !reordered) {
          expect(reordered).toBe(original)
          return
        }
        expect(reordered.lines.map((entry) => entry.id)).toEqual(shuffled.lines.map((entry) => entry.id))
        const { lines: _originalLines, ...originalTotals } = original
        const { lines: _reorderedLines, ...reorderedTotals } = reordered
        expect(reorderedTotals).toEqual(originalTotals)
        expect(byId(reordered)).toEqual(byId(original))
      }),
    )
  })
})
