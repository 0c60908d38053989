import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { type TaxRateRule, selectTaxRate } from './tax.js'

const rate = (id: string, country: string, region: string | null, ratePpm: number): TaxRateRule => ({
  id,
  country,
  region,
  ratePpm,
  name: `${country}${region ? `-${region}` : ''}`,
  rounding: 'line',
})
const usFederal = rate('r1', 'US', null, 0)
const newYork = rate('r2', 'US', 'NY', 88_750)
const california = rate('r3', 'US', 'CA', 72_500)
const germany = rate('r4', 'DE', null, 190_000)
const rates = [usFederal, newYork, california, germany]

describe('selectTaxRate', () => {
  it('prefers the rate of the address region over the country-wide rate', () => {
    expect(selectTaxRate(rates, { country: 'US', region: 'NY' })).toBe(newYork)
    expect(selectTaxRate([newYork, usFederal], { country: 'US', region: 'NY' })).toBe(newYork)
  })

  it('falls back to the country-wide rate for another region or no region', () => {
    expect(selectTaxRate(rates, { country: 'US', region: 'TX' })).toBe(usFederal)
    expect(selectTaxRate(rates, { country: 'US', region: null })).toBe(usFederal)
    expect(selectTaxRate(rates, { country: 'DE', region: 'BY' })).toBe(germany)
  })

  it('compares regions case-insensitively and ignoring surrounding spaces', () => {
    expect(selectTaxRate(rates, { country: 'US', region: ' ny ' })).toBe(newYork)
    expect(selectTaxRate([rate('r9', 'US', ' ca', 1)], { country: 'US', region: 'Ca' })?.id).toBe('r9')
  })

  it('returns null without an address, for a country with no rate, or when only other regions have rates', () => {
    expect(selectTaxRate(rates, null)).toBeNull()
    expect(selectTaxRate(rates, { country: 'FR', region: null })).toBeNull()
    expect(selectTaxRate([newYork], { country: 'US', region: 'TX' })).toBeNull()
    expect(selectTaxRate([newYork], { country: 'US', region: null })).toBeNull()
    expect(selectTaxRate([], { country: 'US', region: 'NY' })).toBeNull()
  })

  it('gives the same answer whatever order the rates come in', () => {
    const duplicates = [...rates, rate('r0', 'US', 'NY', 1), rate('r5', 'US', null, 2)]
    const addresses = fc.constantFrom(
      { country: 'US', region: 'NY' },
      { country: 'US', region: 'TX' },
      { country: 'DE', region: null },
      { country: 'FR', region: null },
    )
    fc.assert(
      fc.property(fc.shuffledSubarray(duplicates, { minLength: duplicates.length }), addresses, (shuffled, address) => {
        expect(selectTaxRate(shuffled, address)).toBe(selectTaxRate(duplicates, address))
      }),
    )
  })
})
