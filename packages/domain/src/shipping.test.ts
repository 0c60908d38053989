import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MAX_MINOR_UNITS } from './money.js'
import { type ShippingMethodRule, shippingRate } from './shipping.js'
import { MASS_PER_KG, massOf, massOfKilograms } from './weight.js'

const method = (overrides: Partial<ShippingMethodRule> = {}): ShippingMethodRule => ({
  id: 'm1',
  name: 'Standard',
  currency: 'USD',
  countries: [],
  basePriceMinor: 500,
  pricePerKgMinor: 250,
  freeOverMinor: null,
  minWeightKg: null,
  maxWeightKg: null,
  isActive: true,
  ...overrides,
})
const cart = (overrides: Partial<Parameters<typeof shippingRate>[1]> = {}) => ({
  currency: 'USD',
  country: 'US',
  mass: massOfKilograms(2),
  merchandiseMinor: 1000,
  ...overrides,
})

describe('shippingRate', () => {
  it('charges the base price plus the price per kilogram of the cart mass', () => {
    expect(shippingRate(method(), cart())).toBe(1000)
    expect(shippingRate(method(), cart({ mass: 0n }))).toBe(500)
  })

  it('prices pounds and ounces exactly, rounding the per-kg part half away from zero', () => {
    // 1 lb = 0.45359237 kg; 250 x 0.45359237 = 113.3980925
    expect(shippingRate(method(), cart({ mass: massOf(1, 'lb') }))).toBe(500 + 113)
    // 8 oz = 0.226796185 kg; 250 x 0.226796185 = 56.69904625
    expect(shippingRate(method(), cart({ mass: massOf(8, 'oz') }))).toBe(500 + 57)
    // 100 lb at 10.00/kg = 453.59237 -> 45359.237 cents
    expect(shippingRate(method({ pricePerKgMinor: 1000 }), cart({ mass: massOf(100, 'lb') }))).toBe(500 + 45_359)
    // exactly half a minor unit rounds up
    expect(shippingRate(method({ pricePerKgMinor: 3 }), cart({ mass: massOfKilograms(0.5) }))).toBe(500 + 2)
    expect(shippingRate(method({ pricePerKgMinor: 1 }), cart({ mass: massOf(499.9, 'g') }))).toBe(500)
  })

  it('prices a JPY cart in yen and a KWD cart in fils', () => {
    const yen = method({ currency: 'JPY', basePriceMinor: 800, pricePerKgMinor: 100 })
    expect(shippingRate(yen, cart({ currency: 'JPY', mass: massOfKilograms(2.5) }))).toBe(1050)
    const dinar = method({ currency: 'KWD', basePriceMinor: 1500, pricePerKgMinor: 333 })
    // 333 x 1.5 = 499.5 fils -> 500
    expect(shippingRate(dinar, cart({ currency: 'KWD', mass: massOfKilograms(1.5) }))).toBe(2000)
  })

  it('does not apply when inactive or in another currency', () => {
    expect(shippingRate(method({ isActive: false }), cart())).toBeNull()
    expect(shippingRate(method({ currency: 'EUR' }), cart())).toBeNull()
  })

  it('ships only to listed countries, and everywhere when the list is empty', () => {
    const domestic = method({ countries: ['US', 'CA'] })
    expect(shippingRate(domestic, cart({ country: 'CA' }))).toBe(1000)
    expect(shippingRate(domestic, cart({ country: 'DE' }))).toBeNull()
    expect(shippingRate(domestic, cart({ country: null }))).toBeNull()
    expect(shippingRate(method(), cart({ country: null }))).toBe(1000)
    expect(shippingRate(method(), cart({ country: 'DE' }))).toBe(1000)
  })

  it('includes both weight bounds and refuses one mass unit beyond either', () => {
    const bounded = method({ minWeightKg: 1, maxWeightKg: 5 })
    expect(shippingRate(bounded, cart({ mass: massOfKilograms(1) }))).toBe(750)
    expect(shippingRate(bounded, cart({ mass: massOfKilograms(5) }))).toBe(1750)
    expect(shippingRate(bounded, cart({ mass: massOfKilograms(1) - 1n }))).toBeNull()
    expect(shippingRate(bounded, cart({ mass: massOfKilograms(5) + 1n }))).toBeNull()
  })

  it('compares pound weights against kilogram bounds exactly', () => {
    // 1 lb = 0.45359237 kg lies between 0.4535 and 0.4536
    expect(shippingRate(method({ maxWeightKg: 0.4536 }), cart({ mass: massOf(1, 'lb') }))).not.toBeNull()
    expect(shippingRate(method({ maxWeightKg: 0.4535 }), cart({ mass: massOf(1, 'lb') }))).toBeNull()
    expect(shippingRate(method({ minWeightKg: 0.4536 }), cart({ mass: massOf(1, 'lb') }))).toBeNull()
    // 35.2739 oz = 999.9975 g fits under 1 kg; 35.274 oz = 1000.0003 g does not
    expect(shippingRate(method({ maxWeightKg: 1 }), cart({ mass: massOf(35.2739, 'oz') }))).not.toBeNull()
    expect(shippingRate(method({ maxWeightKg: 1 }), cart({ mass: massOf(35.274, 'oz') }))).toBeNull()
  })

  it('is free from exactly freeOverMinor of merchandise, and charged a minor unit below', () => {
    const freeOver = method({ freeOverMinor: 5000 })
    expect(shippingRate(freeOver, cart({ merchandiseMinor: 5000 }))).toBe(0)
    expect(shippingRate(freeOver, cart({ merchandiseMinor: 4999 }))).toBe(1000)
    expect(shippingRate(method({ freeOverMinor: 0 }), cart({ merchandiseMinor: 0 }))).toBe(0)
  })

  it('refuses a price beyond MAX_MINOR_UNITS instead of losing digits', () => {
    const expensive = method({ pricePerKgMinor: MAX_MINOR_UNITS })
    expect(() => shippingRate(expensive, cart({ mass: massOfKilograms(2) }))).toThrow(
      expect.objectContaining({ code: 'validation_error', message: 'Shipping price is too large' }),
    )
  })

  it('is the base price plus the per-kg price times the exact mass, within half a minor unit', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.bigInt({ min: 0n, max: 1000n * MASS_PER_KG }),
        (base, perKg, mass) => {
          const price = shippingRate(method({ basePriceMinor: base, pricePerKgMinor: perKg }), cart({ mass }))
          expect(price).not.toBeNull()
          const error = (BigInt((price ?? 0) - base) * MASS_PER_KG - BigInt(perKg) * mass) * 2n
          expect(error <= MASS_PER_KG && error >= -MASS_PER_KG).toBe(true)
        },
      ),
    )
  })
})
