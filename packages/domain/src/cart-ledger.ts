/**
 * The running account of a cart being priced: each line's subtotal, what discounts have taken off
 * it so far, what is left of it, and the shipping still charged; then the tax and totals that
 * settles into. computeCartTotals and applyPromotions both price through it, so a discount comes
 * off the lines, and tax is worked out, one way only.
 */
import { AmountTooLargeError, DomainError } from './errors.js'
import { MAX_MINOR_UNITS } from './money.js'
import { MAX_PPM } from './percent.js'
import { allocateByLargestRemainder, divideRounded } from './rounding.js'
import type { TaxRounding } from './tax.js'
import { compareText } from './text-order.js'

export interface CartLedger {
  /** in input order; every other per-line array is indexed the same way */
  readonly lineIds: readonly string[]
  readonly unitPrices: readonly bigint[]
  readonly quantities: readonly bigint[]
  readonly subtotals: readonly bigint[]
  readonly discounts: bigint[]
  /** subtotal - discount: what later discounts and the tax work on */
  readonly remaining: bigint[]
  /** line indices by line id: the order that settles every tie */
  readonly byId: readonly number[]
  /** the shipping still charged after any waiver */
  shipping: bigint
}

/** A cart line as priced: its unit price in minor units and its quantity. */
export interface TotalsLine {
  id: string
  unitPriceMinor: number
  quantity: number
}

/** total = subtotal - discount + tax */
export interface LineTotals {
  id: string
  subtotal: number
  discount: number
  tax: number
  total: number
}

/**
 * The cart's figures after its discounts. `discount` is merchandise only: a waived shipping fee
 * shows as shipping 0 (and in what its coupon or promotion took), not as a discount, so
 * discount <= subtotal and total = subtotal - discount + tax + shipping holds with the shipping
 * actually charged.
 */
export interface SettledTotals {
  subtotal: number
  discount: number
  tax: number
  shipping: number
  total: number
  lines: LineTotals[]
}

/** Validates the lines (distinct ids, whole minor units and quantities) and shipping, nothing taken off yet. */
export function openCartLedger(lines: readonly TotalsLine[], shippingMinor: number | null): CartLedger {
  const shipping = shippingMinor === null ? 0n : minorUnitsOf(shippingMinor, 'Shipping')
  const unitPrices: bigint[] = []
  const quantities: bigint[] = []
  for (const line of lines) {
    unitPrices.push(minorUnitsOf(line.unitPriceMinor, 'Unit price'))
    quantities.push(quantityOf(line.quantity))
  }
  const subtotals = unitPrices.map((unitPrice, index) => unitPrice * (quantities[index] ?? 0n))
  return {
    lineIds: lines.map((line) => line.id),
    unitPrices,
    quantities,
    subtotals,
    discounts: subtotals.map(() => 0n),
    remaining: [...subtotals],
    byId: lineIndicesById(lines),
    shipping,
  }
}

/** A ledger to try a set of discounts on without touching this one. */
export function copyCartLedger(ledger: CartLedger): CartLedger {
  return { ...ledger, discounts: [...ledger.discounts], remaining: [...ledger.remaining] }
}

export function remainingOf(ledger: CartLedger, lineIndices: readonly number[]): bigint {
  return sum(lineIndices.map((index) => ledger.remaining[index] ?? 0n))
}

/**
 * Takes `amount` (at most what is left of those lines) off the lines, shared in proportion to
 * what is left of each by largest remainder. `lineIndices` must be in line-id order, so the lower
 * id wins a tie whatever order the cart's lines came in. Returns each line's share, aligned.
 */
export function takeShared(ledger: CartLedger, amount: bigint, lineIndices: readonly number[]): bigint[] {
  const shares = allocateByLargestRemainder(
    amount,
    lineIndices.map((index) => ledger.remaining[index] ?? 0n),
  )
  lineIndices.forEach((lineIndex, position) => takeFromLine(ledger, lineIndex, shares[position] ?? 0n))
  return shares
}

/** Takes up to `amount` off one line, never below zero; returns what it took. */
export function takeFromLine(ledger: CartLedger, lineIndex: number, amount: bigint): bigint {
  const left = ledger.remaining[lineIndex] ?? 0n
  const taken = amount < left ? amount : left
  ledger.remaining[lineIndex] = left - taken
  ledger.discounts[lineIndex] = (ledger.discounts[lineIndex] ?? 0n) + taken
  return taken
}

/** `ppm` parts per million of `amount`, rounded half away from zero. */
export function percentOf(amount: bigint, ppm: bigint): bigint {
  return divideRounded(amount * ppm, BigInt(MAX_PPM))
}

/**
 * Taxes what is left of each line (rounded per line, or once on the order and shared out by
 * largest remainder: TaxRounding) and adds the shipping still charged, which is never taxed.
 * Every cart figure is the exact sum of the lines' figures; lines come back in input order.
 */
export function settleCartTotals(ledger: CartLedger, taxRatePpm: bigint, taxRounding: TaxRounding = 'line'): SettledTotals {
  const lineTaxes =
    taxRounding === 'order'
      ? orderTaxShares(ledger, taxRatePpm)
      : ledger.remaining.map((amount) => percentOf(amount, taxRatePpm))
  const lines = ledger.lineIds.map((id, index): LineTotals => {
    const subtotal = ledger.subtotals[index] ?? 0n
    const discount = ledger.discounts[index] ?? 0n
    const tax = lineTaxes[index] ?? 0n
    return {
      id,
      subtotal: totalOf(subtotal),
      discount: Number(discount),
      tax: totalOf(tax),
      total: totalOf(subtotal - discount + tax),
    }
  })
  const subtotal = sum(ledger.subtotals)
  const discount = sum(ledger.discounts)
  const tax = sum(lineTaxes)
  return {
    subtotal: totalOf(subtotal),
    discount: totalOf(discount),
    tax: totalOf(tax),
    shipping: Number(ledger.shipping),
    total: totalOf(subtotal - discount + tax + ledger.shipping),
    lines,
  }
}

/** The rounded tax of everything taxable, shared out by each line's taxable amount (ties by line id). */
function orderTaxShares(ledger: CartLedger, taxRatePpm: bigint): bigint[] {
  const tax = percentOf(sum(ledger.remaining), taxRatePpm)
  const shares = allocateByLargestRemainder(
    tax,
    ledger.byId.map((index) => ledger.remaining[index] ?? 0n),
  )
  const byLine = ledger.remaining.map(() => 0n)
  ledger.byId.forEach((lineIndex, position) => (byLine[lineIndex] = shares[position] ?? 0n))
  return byLine
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

export function minorUnitsOf(value: number, what: string): bigint {
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

export function ppmOf(value: number, what: string): bigint {
  if (!Number.isInteger(value) || value < 0 || value > MAX_PPM) {
    throw new DomainError('validation_error', `${what} must be whole parts per million from 0 to ${MAX_PPM}`)
  }
  return BigInt(value)
}

export function totalOf(value: bigint): number {
  if (value > BigInt(MAX_MINOR_UNITS)) throw new AmountTooLargeError('Cart total is too large')
  return Number(value)
}

export function sum(values: readonly bigint[]): bigint {
  return values.reduce((total, value) => total + value, 0n)
}
