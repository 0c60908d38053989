/** What one shipping method charges for a cart, or that it cannot ship it. */
import { AmountTooLargeError } from './errors.js'
import { MAX_MINOR_UNITS } from './money.js'
import { divideRounded } from './rounding.js'
import { MASS_PER_KG, massOfKilograms } from './weight.js'

export interface ShippingMethodRule {
  id: string
  name: string
  currency: string
  /** ISO 3166-1 alpha-2; empty = ships everywhere */
  countries: readonly string[]
  basePriceMinor: number
  pricePerKgMinor: number
  /** free when the merchandise after discounts reaches this */
  freeOverMinor: number | null
  /** inclusive */
  minWeightKg: number | null
  /** inclusive */
  maxWeightKg: number | null
  isActive: boolean
}

/**
 * The price in minor units, or null when the method does not apply to the cart. `mass` comes
 * from weight.ts; `merchandiseMinor` is the subtotal after discounts, so a coupon can push a
 * cart below the free-shipping threshold. The per-kg part rounds half away from zero.
 */
export function shippingRate(
  method: ShippingMethodRule,
  cart: { currency: string; country: string | null; mass: bigint; merchandiseMinor: number },
): number | null {
  if (!method.isActive || method.currency !== cart.currency) return null
  if (method.countries.length > 0) {
    const country = cart.country?.trim().toUpperCase()
    if (country === undefined || !method.countries.some((code) => code.trim().toUpperCase() === country)) return null
  }
  if (method.minWeightKg !== null && cart.mass < massOfKilograms(method.minWeightKg)) return null
  if (method.maxWeightKg !== null && cart.mass > massOfKilograms(method.maxWeightKg)) return null
  if (method.freeOverMinor !== null && cart.merchandiseMinor >= method.freeOverMinor) return 0
  const price =
    BigInt(method.basePriceMinor) + divideRounded(BigInt(method.pricePerKgMinor) * cart.mass, MASS_PER_KG)
  if (price > BigInt(MAX_MINOR_UNITS)) throw new AmountTooLargeError('Shipping price is too large')
  return Number(price)
}
