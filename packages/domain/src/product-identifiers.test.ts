import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isValidGtin, normalizeHsCode, normalizeTags, withGtinCheckDigit } from './product-identifiers.js'

describe('isValidGtin', () => {
  it('accepts published GTINs of each length', () => {
    // EAN-13 of a book (ISBN 978-0-306-40615-7), a UPC-A, an EAN-8 and a GTIN-14 from GS1's examples.
    for (const gtin of ['9780306406157', '036000291452', '96385074', '10614141000415']) expect(isValidGtin(gtin)).toBe(true)
  })

  it('refuses a wrong check digit, other lengths and anything but digits', () => {
    for (const text of ['9780306406158', '036000291453', '1234567', '123456789', '12345678901', '97803064061x', '', ' 96385074']) {
      expect(isValidGtin(text)).toBe(false)
    }
  })

  it('finds every single-digit mistake', () => {
    fc.assert(
      fc.property(fc.constantFrom(7, 11, 12, 13), fc.nat(), fc.integer({ min: 1, max: 9 }), (length, seed, shift) => {
        const body = String(seed).padStart(length, '0').slice(-length)
        const gtin = withGtinCheckDigit(body)
        expect(isValidGtin(gtin)).toBe(true)
        const at = seed % gtin.length
        const wrong = gtin.slice(0, at) + String((Number(gtin[at]) + shift) % 10) + gtin.slice(at + 1)
        expect(isValidGtin(wrong)).toBe(false)
      }),
    )
  })
})

describe('normalizeHsCode', () => {
  it('keeps the digits of 6 to 10 and drops the dots between them', () => {
    expect(normalizeHsCode('6109.10.00')).toBe('61091000')
    expect(normalizeHsCode('610910')).toBe('610910')
    expect(normalizeHsCode('6109 10 00 10')).toBe('6109100010')
    expect(normalizeHsCode('61091')).toBeNull()
    expect(normalizeHsCode('61091000001')).toBeNull()
    expect(normalizeHsCode('6109-10')).toBeNull()
  })
})

describe('normalizeTags', () => {
  it('trims, collapses spaces and keeps the first spelling of tags equal but for case', () => {
    expect(normalizeTags([' Summer ', 'summer', 'New  in', '', 'SALE', 'sale '])).toEqual(['Summer', 'New in', 'SALE'])
  })
})
