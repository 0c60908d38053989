/**
 * Prices a cart: line subtotals, coupon discounts spread over the lines, tax per line (rounded per
 * line, or per order and shared out: TaxRounding), shipping.
 * Everything is integer minor units computed in bigint, and every cart-level figure is the exact
 * sum of its per-line figures, so what a shopper sees on the lines always adds up.
 */
import type { CouponRule } from './coupons.js'
import { AmountTooLargeError, DomainError } from './errors.js'
import { MAX_MINOR_UNITS } from './money.js'
import { MAX_PPM } from './percent.js'
import { allocateByLargestRemainder, divideRounded } from './rounding.js'
import type { TaxRounding } from './tax.js'

export interface TotalsLine {
  id: string
  unitPriceMinor: number
  quantity: number
}

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

/** total = subtotal - discount + tax */
export interface LineTotals {
  id: string
  subtotal: number
  discount: number
  tax: number
  total: number
}

/** What one coupon took off the merchandise; for free_shipping, the shipping it waived. */
export interface CouponDiscount {
  id: string
  discount: number
}

/**
 * `discount` is merchandise only: a waived shipping fee shows as shipping 0 (and in its
 * coupon's CouponDiscount), not as a discount, so discount <= subtotal and
 * total = subtotal - discount + tax + shipping holds with the shipping actually charged.
 */
export interface CartTotals {
  subtotal: number
  discount: number
  tax: number
  shipping: number
  total: number
  lines: LineTotals[]
  coupons: CouponDiscount[]
}

const COUPON_TYPE_ORDER = { percentage: 0, fixed_amount: 1, free_shipping: 2 } as const

/**
 * Coupons apply in one fixed order whatever order they arrive in: percentages first (so a
 * fixed amount is never scaled down by a later percentage), then fixed amounts, then free
 * shipping, each by code. Line order does not matter either: discount pennies are handed out
 * by largest remainder with ties going to the lower line id. Shipping is not taxed.
 * Lines come back in input order; coupons in the order they were applied.
 */
export function computeCartTotals(input: TotalsInput): CartTotals {
  const taxRatePpm = ppmOf(input.taxRatePpm, 'Tax rate')
  const shippingCharged = input.shippingMinor === null ? 0n : minorUnitsOf(input.shippingMinor, 'Shipping')
  const lineSubtotals = input.lines.map(
    (line) => minorUnitsOf(line.unitPriceMinor, 'Unit price') * quantityOf(line.quantity),
  )
  const tieOrder = lineIndicesById(input.lines)
  const remaining = [...lineSubtotals]
  const lineDiscounts = lineSubtotals.map(() => 0n)
  let shipping = shippingCharged
  const coupons: CouponDiscount[] = []

  for (const coupon of [...input.coupons].sort(compareCoupons)) {
    if (coupon.type === 'free_shipping') {
      coupons.push({ id: coupon.id, discount: Number(shipping) })
      shipping = 0n
      continue
    }
    const merchandise = sum(remaining)
    const discount =
      coupon.type === 'percentage'
        ? divideRounded(merchandise * percentOffOf(coupon), BigInt(MAX_PPM))
        : minBigInt(amountOffOf(coupon, input.currency), merchandise)
    const shares = allocateByLargestRemainder(
      discount,
      tieOrder.map((index) => remaining[index] ?? 0n),
    )
    tieOrder.forEach((lineIndex, position) => {
      const share = shares[position] ?? 0n
      remaining[lineIndex] = (remaining[lineIndex] ?? 0n) - share
      lineDiscounts[lineIndex] = (lineDiscounts[lineIndex] ?? 0n) + share
    })
    coupons.push({ id: coupon.id, discount: Number(discount) })
  }

  const lineTaxes = input.taxRounding === 'order' ? orderTaxShares(remaining, taxRatePpm, tieOrder) : remaining.map((amount) => divideRounded(amount * taxRatePpm, BigInt(MAX_PPM)))
  const lines = input.lines.map((line, index): LineTotals => {
    const subtotal = lineSubtotals[index] ?? 0n
    const discount = lineDiscounts[index] ?? 0n
    const tax = lineTaxes[index] ?? 0n
    return {
      id: line.id,
      subtotal: totalOf(subtotal),
      discount: Number(discount),
      tax: totalOf(tax),
      total: totalOf(subtotal - discount + tax),
    }
  })
  const subtotal = sum(lineSubtotals)
  const discount = sum(lineDiscounts)
  const tax = sum(lineTaxes)
  return {
    subtotal: totalOf(subtotal),
    discount: totalOf(discount),
    tax: totalOf(tax),
    shipping: Number(shipping),
    total: totalOf(subtotal - discount + tax + shipping),
    lines,
    coupons,
  }
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

/** The rounded tax of everything taxable, shared out by each line's taxable amount (ties by line id). */
function orderTaxShares(taxable: readonly bigint[], taxRatePpm: bigint, tieOrder: readonly number[]): bigint[] {
  const tax = divideRounded(sum(taxable) * taxRatePpm, BigInt(MAX_PPM))
  const shares = allocateByLargestRemainder(tax, tieOrder.map((index) => taxable[index] ?? 0n))
  const byLine = taxable.map(() => 0n)
  tieOrder.forEach((lineIndex, position) => (byLine[lineIndex] = shares[position] ?? 0n))
  return byLine
}

function compareCoupons(a: CouponRule, b: CouponRule): number {
  return (
    COUPON_TYPE_ORDER[a.type] - COUPON_TYPE_ORDER[b.type] || compareText(a.code, b.code) || compareText(a.id, b.id)
  )
}

/** Code-unit order, not locale order, so every server sorts the same way. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

function lineIndicesById(lines: readonly TotalsLine[]): number[] {
  const order = lines.map((_, index) => index).sort((a, b) => compareText(lines[a]?.id ?? '', lines[b]?.id ?? ''))
  for (let position = 1; position < order.length; position++) {
    if (lines[order[position] ?? 0]?.id === lines[order[position - 1] ?? 0]?.id) {
      throw new DomainError('validation_error', 'Cart lines must have distinct ids')
    }
  }
  return order
}

function percentOffOf(coupon: CouponRule): bigint {
  if (coupon.percentOffPpm === null) {
    throw new DomainError('validation_error', `Coupon '${coupon.code}' has no percentage`)
  }
  return ppmOf(coupon.percentOffPpm, `Coupon '${coupon.code}' percentage`)
}

function amountOffOf(coupon: CouponRule, currency: string): bigint {
  if (coupon.amountOffMinor === null || coupon.currency === null) {
    throw new DomainError('validation_error', `Coupon '${coupon.code}' needs an amount and a currency`)
  }
  if (coupon.currency !== currency) {
    throw new DomainError('currency_mismatch', `Coupon '${coupon.code}' applies only to carts in ${coupon.currency}`)
  }
  return minorUnitsOf(coupon.amountOffMinor, `Coupon '${coupon.code}' amount`)
}

function minorUnitsOf(value: number, what: string): bigint {
  if (!Number.isSafeInteger(value) || value < 0 || value > MAX_MINOR_UNITS) {
    throw new DomainError('validation_error', `${what} must be a whole number of minor units from 0 to ${MAX_MINOR_UNITS}`)
  }
  return BigInt(value)
}

function quantityOf(value: number): bigint {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new DomainError('validation_error', 'Quantity must be a non-negative whole number')
  }
  return BigInt(value)
}

function ppmOf(value: number, what: string): bigint {
  if (!Number.isInteger(value) || value < 0 || value > MAX_PPM) {
    throw new DomainError('validation_error', `${what} must be whole parts per million from 0 to ${MAX_PPM}`)
  }
  return BigInt(value)
}

function totalOf(value: bigint): number {
  if (value > BigInt(MAX_MINOR_UNITS)) throw new AmountTooLargeError('Cart total is too large')
  return Number(value)
}

function sum(values: readonly bigint[]): bigint {
  return values.reduce((total, value) => total + value, 0n)
}

function minBigInt(a: bigint, b: bigint): bigint {
  return a < b ? a : b
}
