import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MAX_PPM, percentToPpm, ppmToPercent } from './percent.js'

const validationError = (message: string) => expect.objectContaining({ code: 'validation_error', message })

describe('percentToPpm', () => {
  it('holds a percent as integer parts per million of the amount', () => {
    expect(percentToPpm(8.875)).toBe(88_750)
    expect(percentToPpm(100)).toBe(1_000_000)
    expect(percentToPpm(0)).toBe(0)
    expect(percentToPpm(-0)).toBe(0)
    expect(percentToPpm(10)).toBe(100_000)
    expect(percentToPpm(0.0001)).toBe(1)
    expect(percentToPpm(12.3456)).toBe(123_456)
    expect(percentToPpm(99.9999)).toBe(999_999)
  })

  it('reads the decimal the client sent, not its binary approximation', () => {
    // 8.875 is exact in binary but 0.07 and 19.6 are not; multiplying by 10_000 would drift
    expect(percentToPpm(0.07)).toBe(700)
    expect(percentToPpm(19.6)).toBe(196_000)
    expect(percentToPpm(4.35)).toBe(43_500)
  })

  it('refuses more than 4 decimals, including numbers JavaScript prints with an exponent', () => {
    const message = 'Percentage has at most 4 decimal places'
    expect(() => percentToPpm(12.34567)).toThrow(validationError(message))
    expect(() => percentToPpm(1e-7)).toThrow(validationError(message))
    expect(() => percentToPpm(0.1 + 0.2)).toThrow(validationError(message))
  })

  it('refuses percentages outside 0..100 and non-finite numbers', () => {
    const message = 'Percentage must be between 0 and 100'
    expect(() => percentToPpm(-1)).toThrow(validationError(message))
    expect(() => percentToPpm(-0.0001)).toThrow(validationError(message))
    expect(() => percentToPpm(100.0001)).toThrow(validationError(message))
    expect(() => percentToPpm(1e21)).toThrow(validationError(message))
    expect(() => percentToPpm(Number.NaN)).toThrow(validationError('Percentage must be a finite number'))
    expect(() => percentToPpm(Number.POSITIVE_INFINITY)).toThrow(validationError('Percentage must be a finite number'))
  })
})

describe('ppmToPercent', () => {
  it('gives back the percent number', () => {
    expect(ppmToPercent(88_750)).toBe(8.875)
    expect(ppmToPercent(1_000_000)).toBe(100)
    expect(ppmToPercent(0)).toBe(0)
    expect(ppmToPercent(1)).toBe(0.0001)
    expect(ppmToPercent(700)).toBe(0.07)
  })

  it('refuses fractional and out-of-range parts per million', () => {
    const message = 'Parts per million must be an integer from 0 to 1000000'
    expect(() => ppmToPercent(1.5)).toThrow(validationError(message))
    expect(() => ppmToPercent(-1)).toThrow(validationError(message))
    expect(() => ppmToPercent(MAX_PPM + 1)).toThrow(validationError(message))
  })

  it('is the exact inverse of percentToPpm for every one of the 1,000,001 rates', () => {
    for (let ppm = 0; ppm <= MAX_PPM; ppm++) {
      if (percentToPpm(ppmToPercent(ppm)) !== ppm) expect.fail(`ppm ${ppm} did not round-trip`)
    }
  })

  it('prints the percent with the same decimals it was written with', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 9999 }), (whole, tenThousandths) => {
        const text = `${whole}.${String(tenThousandths).padStart(4, '0')}`
        if (whole === 100 && tenThousandths > 0) return
        const percent = Number(text)
        expect(ppmToPercent(percentToPpm(percent))).toBe(percent)
        expect(percentToPpm(percent)).toBe(whole * 10_000 + tenThousandths)
      }),
    )
  })
})
