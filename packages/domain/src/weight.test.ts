import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { WEIGHT_UNITS, type WeightUnitCode } from './constants.js'
import { MASS_PER_KG, massOf, massOfKilograms } from './weight.js'

const validationError = (message: string) => expect.objectContaining({ code: 'validation_error', message })
const MASS_PER_GRAM = 10n ** 13n

/** n/10_000 as the JSON number a client would send for it. */
const tenThousandths = (n: number) => Number(`${Math.trunc(n / 10_000)}.${String(n % 10_000).padStart(4, '0')}`)
const count = fc.integer({ min: 0, max: 1_000_000_000 })
const unit = fc.constantFrom(...WEIGHT_UNITS)

describe('massOf', () => {
  it('counts mass in 1e-13 g, so a kilogram is 10^16', () => {
    expect(massOf(1, 'g')).toBe(MASS_PER_GRAM)
    expect(massOf(1, 'kg')).toBe(MASS_PER_KG)
    expect(massOf(1000, 'g')).toBe(massOf(1, 'kg'))
    expect(massOfKilograms(2.5)).toBe(massOf(2500, 'g'))
    expect(massOf(0, 'oz')).toBe(0n)
  })

  it('makes 1 lb exactly 453.59237 g and 1 oz exactly 28.349523125 g', () => {
    expect(massOf(1, 'lb')).toBe((45_359_237n * MASS_PER_GRAM) / 100_000n)
    expect(massOf(1, 'oz')).toBe((28_349_523_125n * MASS_PER_GRAM) / 1_000_000_000n)
    expect(massOf(16, 'oz')).toBe(massOf(1, 'lb'))
    expect(massOf(1, 'lb') > massOf(453.5923, 'g')).toBe(true)
    expect(massOf(1, 'lb') < massOf(453.5924, 'g')).toBe(true)
  })

  it('holds the smallest step of every unit, 0.0001, as a whole number of mass units', () => {
    expect(massOf(0.0001, 'g')).toBe(1_000_000_000n)
    expect(massOf(0.0001, 'kg')).toBe(1_000_000_000_000n)
    expect(massOf(0.0001, 'lb')).toBe(453_592_370_000n)
    expect(massOf(0.0001, 'oz')).toBe(28_349_523_125n)
  })

  it('refuses negative, non-finite and over-precise weights and unknown units', () => {
    expect(() => massOf(-1, 'kg')).toThrow(validationError('Weight must not be negative'))
    expect(() => massOf(Number.NaN, 'kg')).toThrow(validationError('Weight must be a finite number'))
    expect(() => massOf(Number.POSITIVE_INFINITY, 'g')).toThrow(validationError('Weight must be a finite number'))
    expect(() => massOf(0.00001, 'lb')).toThrow(validationError('Weight has at most 4 decimal places'))
    expect(() => massOf(1e-7, 'g')).toThrow(validationError('Weight has at most 4 decimal places'))
    expect(() => massOf(0.1 + 0.2, 'oz')).toThrow(validationError('Weight has at most 4 decimal places'))
    expect(() => massOf(1, 'stone' as WeightUnitCode)).toThrow(validationError('Weight unit must be one of g, kg, lb, oz'))
  })

  it('adds up exactly: the masses of a and b sum to the mass of a + b', () => {
    fc.assert(
      fc.property(count, count, unit, (a, b, code) => {
        expect(massOf(tenThousandths(a), code) + massOf(tenThousandths(b), code)).toBe(massOf(tenThousandths(a + b), code))
      }),
    )
  })

  it('converts between units without loss: kg <-> g and lb <-> oz round-trip exactly', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000 }), (n) => {
        expect(massOf(tenThousandths(n), 'kg')).toBe(massOf(tenThousandths(n * 1000), 'g'))
        expect(massOf(tenThousandths(n), 'lb')).toBe(massOf(tenThousandths(n * 16), 'oz'))
        for (const code of WEIGHT_UNITS) {
          // back from mass to the weight the client sent
          expect(massOf(tenThousandths(n), code) / massOf(0.0001, code)).toBe(BigInt(n))
        }
      }),
    )
  })

  it('orders masses across units as the real weights are ordered', () => {
    const inGrams: Record<WeightUnitCode, number> = { g: 1, kg: 1000, lb: 453.59237, oz: 28.349523125 }
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000 }), unit, fc.integer({ min: 0, max: 100_000 }), unit, (a, ua, b, ub) => {
        const grams = (n: number, code: WeightUnitCode) => (n / 10_000) * inGrams[code]
        const [ga, gb] = [grams(a, ua), grams(b, ub)]
        // the float comparison is only trusted when the weights are clearly apart
        if (Math.abs(ga - gb) < 1e-6) return
        expect(massOf(tenThousandths(a), ua) < massOf(tenThousandths(b), ub)).toBe(ga < gb)
      }),
    )
  })
})
