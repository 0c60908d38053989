import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { DomainError } from './errors.js'
import {
  CURRENCY_EXPONENTS,
  MAX_MINOR_UNITS,
  currencyExponent,
  formatMinorUnits,
  formatMoney,
  isCurrency,
  toMajorUnits,
  toMinorUnits,
} from './money.js'

function validationError(run: () => unknown): DomainError {
  let caught: unknown
  try {
    run()
  } catch (error) {
    caught = error
  }
  expect(caught).toBeInstanceOf(DomainError)
  const error = caught as DomainError
  expect(error.code).toBe('validation_error')
  return error
}

const currencies = [...CURRENCY_EXPONENTS.keys()]
const currency = fc.constantFrom(...currencies)
const minorUnits = fc.oneof(
  fc.bigInt({ min: -BigInt(MAX_MINOR_UNITS), max: BigInt(MAX_MINOR_UNITS) }).map(Number),
  fc.integer({ min: -100_000, max: 100_000 }),
  fc.constantFrom(0, 1, -1, MAX_MINOR_UNITS, -MAX_MINOR_UNITS, MAX_MINOR_UNITS - 1, -MAX_MINOR_UNITS + 1),
)
const digits = (minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789'), minLength, maxLength })
const nonZeroDigit = fc.constantFrom(...'123456789')

/** A decimal string whose value fits MAX_MINOR_UNITS, with its expected minor units worked out in bigints. */
const decimalAmount = currency.chain((code) => {
  const exponent = CURRENCY_EXPONENTS.get(code)!
  return fc
    .record({
      negative: fc.boolean(),
      whole: digits(1, 15 - exponent),
      fraction: digits(0, exponent),
      trailingZeros: fc.nat(3),
    })
    .map(({ negative, whole, fraction, trailingZeros }) => {
      const magnitude = BigInt(whole) * 10n ** BigInt(exponent) + BigInt(fraction.padEnd(exponent, '0') || '0')
      const paddedFraction = fraction + '0'.repeat(fraction ? trailingZeros : 0)
      const text = `${negative ? '-' : ''}${whole}${paddedFraction ? `.${paddedFraction}` : ''}`
      const expected = Number(negative ? -magnitude : magnitude)
      return { currency: code, exponent, text, expected: expected === 0 ? 0 : expected }
    })
})

describe('currency table', () => {
  it('gives each currency its ISO 4217 minor-unit exponent', () => {
    expect(currencyExponent('USD')).toBe(2)
    expect(currencyExponent('EUR')).toBe(2)
    expect(currencyExponent('JPY')).toBe(0)
    expect(currencyExponent('KRW')).toBe(0)
    expect(currencyExponent('KWD')).toBe(3)
    expect(currencyExponent('BHD')).toBe(3)
    expect(currencyExponent('CLF')).toBe(4)
    expect(currencyExponent('UYW')).toBe(4)
  })

  it('holds only three-letter upper-case codes with exponents 0, 2, 3 or 4', () => {
    for (const [code, exponent] of CURRENCY_EXPONENTS) {
      expect(code).toMatch(/^[A-Z]{3}$/)
      expect([0, 2, 3, 4]).toContain(exponent)
    }
  })

  it('knows listed codes and refuses unknown, lower-case and empty ones', () => {
    expect(isCurrency('USD')).toBe(true)
    expect(isCurrency('usd')).toBe(false)
    expect(isCurrency('XXX')).toBe(false)
    expect(isCurrency('')).toBe(false)
    expect(validationError(() => currencyExponent('ABC')).message).toContain("'ABC'")
  })
})

describe('toMinorUnits', () => {
  it('parses numbers and strings into integer minor units with the currency exponent', () => {
    expect(toMinorUnits(19.99, 'USD')).toBe(1999)
    expect(toMinorUnits('19.99', 'USD')).toBe(1999)
    expect(toMinorUnits(1000, 'JPY')).toBe(1000)
    expect(toMinorUnits('1.5', 'KWD')).toBe(1500)
    expect(toMinorUnits(1.234, 'KWD')).toBe(1234)
    expect(toMinorUnits('0.0001', 'CLF')).toBe(1)
    expect(toMinorUnits(12.3456, 'CLF')).toBe(123_456)
    expect(toMinorUnits(-5.1, 'EUR')).toBe(-510)
    expect(toMinorUnits('007.50', 'USD')).toBe(750)
  })

  it('refuses 0.1 + 0.2 for USD instead of rounding it to 0.30', () => {
    const error = validationError(() => toMinorUnits(0.1 + 0.2, 'USD'))
    expect(error.message).toBe('USD amounts have at most 2 decimal places')
  })

  it('refuses 1e-7, which JavaScript prints in exponent notation, as too many decimals', () => {
    validationError(() => toMinorUnits(1e-7, 'USD'))
    validationError(() => toMinorUnits(1e-7, 'CLF'))
    validationError(() => toMinorUnits(-1.5e-7, 'USD'))
  })

  it('refuses 1e21 and anything above MAX_MINOR_UNITS as too large', () => {
    expect(validationError(() => toMinorUnits(1e21, 'USD')).message).toBe('Amount is too large')
    expect(validationError(() => toMinorUnits(1e21, 'JPY')).message).toBe('Amount is too large')
    expect(validationError(() => toMinorUnits(Number.MAX_VALUE, 'JPY')).message).toBe('Amount is too large')
    expect(validationError(() => toMinorUnits(MAX_MINOR_UNITS + 1, 'JPY')).message).toBe('Amount is too large')
    expect(validationError(() => toMinorUnits('10000000000000.00', 'USD')).message).toBe('Amount is too large')
    expect(validationError(() => toMinorUnits('-10000000000000', 'USD')).message).toBe('Amount is too large')
  })

  it('accepts the largest and smallest amounts exactly at the bound', () => {
    expect(toMinorUnits(MAX_MINOR_UNITS, 'JPY')).toBe(MAX_MINOR_UNITS)
    expect(toMinorUnits(-MAX_MINOR_UNITS, 'JPY')).toBe(-MAX_MINOR_UNITS)
    expect(toMinorUnits('9999999999999.99', 'USD')).toBe(MAX_MINOR_UNITS)
    expect(toMinorUnits(9999999999999.99, 'USD')).toBe(MAX_MINOR_UNITS)
    expect(toMinorUnits('-99999999999.9999', 'CLF')).toBe(-MAX_MINOR_UNITS)
  })

  it('turns -0 and "-0.00" into plain 0', () => {
    expect(Object.is(toMinorUnits(-0, 'USD'), 0)).toBe(true)
    expect(Object.is(toMinorUnits('-0.00', 'USD'), 0)).toBe(true)
    expect(Object.is(toMinorUnits('-0', 'JPY'), 0)).toBe(true)
  })

  it('ignores surrounding whitespace in strings', () => {
    expect(toMinorUnits('  19.99 ', 'USD')).toBe(1999)
    expect(toMinorUnits('\t1000\n', 'JPY')).toBe(1000)
  })

  const malformed = ['19.', '.5', '1e3', '1E3', '', '   ', '-', '+5', '--1', '1.2.3', '1,5', '1 000', '0x10', '1_000']
  it.each([...malformed, 'NaN', 'Infinity', '١٢'])('refuses the malformed string %j', (text) => {
    expect(validationError(() => toMinorUnits(text, 'USD')).message).toContain('is not a decimal amount')
  })

  it.each([NaN, Infinity, -Infinity])('refuses the non-finite number %s', (value) => {
    expect(validationError(() => toMinorUnits(value, 'USD')).message).toBe('Amount must be a finite number')
  })

  it('refuses any decimals for JPY but accepts zeros after the point', () => {
    expect(validationError(() => toMinorUnits(1000.5, 'JPY')).message).toBe('JPY amounts have at most 0 decimal places')
    validationError(() => toMinorUnits('1.1', 'JPY'))
    expect(toMinorUnits('1000.000', 'JPY')).toBe(1000)
  })

  it('accepts three decimals for KWD and refuses a fourth', () => {
    expect(toMinorUnits('1.234', 'KWD')).toBe(1234)
    validationError(() => toMinorUnits('1.2345', 'KWD'))
  })

  it('accepts four decimals for CLF and refuses a fifth', () => {
    expect(toMinorUnits('1.2345', 'CLF')).toBe(12_345)
    validationError(() => toMinorUnits('1.23456', 'CLF'))
  })

  it('accepts trailing zeros beyond the exponent', () => {
    expect(toMinorUnits('19.990', 'USD')).toBe(1999)
    expect(toMinorUnits('19.99000000000000000000', 'USD')).toBe(1999)
  })

  it('refuses an unknown currency before looking at the amount', () => {
    expect(validationError(() => toMinorUnits('1.00', 'ZZZ')).message).toBe("Unknown currency 'ZZZ'")
    expect(validationError(() => toMinorUnits(NaN, 'usd')).message).toBe("Unknown currency 'usd'")
  })

  it('parses the major-unit number of every amount back to the same minor units', () => {
    fc.assert(
      fc.property(currency, minorUnits, (code, minor) => {
        expect(toMinorUnits(toMajorUnits(minor, code), code)).toBe(minor)
      }),
      { numRuns: 2000 },
    )
  })

  it('parses the formatted string of every amount back to the same minor units', () => {
    fc.assert(
      fc.property(currency, minorUnits, (code, minor) => {
        expect(toMinorUnits(formatMinorUnits(minor, code), code)).toBe(minor)
      }),
      { numRuns: 2000 },
    )
  })

  it('parses decimal strings to their exact value and formats them back canonically', () => {
    fc.assert(
      fc.property(decimalAmount, ({ currency: code, text, expected }) => {
        const minor = toMinorUnits(text, code)
        expect(minor).toBe(expected)
        expect(toMinorUnits(formatMinorUnits(minor, code), code)).toBe(minor)
        expect(toMinorUnits(` ${text} `, code)).toBe(minor)
      }),
      { numRuns: 2000 },
    )
  })

  it('accepts exactly the exponent count of decimals and refuses one more significant decimal', () => {
    const amountAtFullPrecision = currency.chain((code) =>
      fc.tuple(fc.constant(code), digits(1, 6), digits(currencyExponent(code), currencyExponent(code))),
    )
    fc.assert(
      fc.property(amountAtFullPrecision, nonZeroDigit, fc.nat(3), ([code, whole, fraction], extra, zeros) => {
        const exponent = currencyExponent(code)
        const expected = Number(whole + fraction)
        expect(toMinorUnits(exponent === 0 ? whole : `${whole}.${fraction}`, code)).toBe(expected)
        expect(toMinorUnits(`${whole}.${fraction}${'0'.repeat(zeros + 1)}`, code)).toBe(expected)
        const tooPrecise = `${whole}.${fraction}${'0'.repeat(zeros)}${extra}`
        const refusal = `at most ${exponent} decimal`
        expect(validationError(() => toMinorUnits(tooPrecise, code)).message).toContain(refusal)
        expect(validationError(() => toMinorUnits(Number(tooPrecise), code)).message).toContain(refusal)
      }),
    )
  })

  it('refuses numbers that are not a whole count of minor units', () => {
    const belowFifteenDigits = fc.bigInt({ min: -(10n ** 14n) + 1n, max: 10n ** 14n - 1n }).map(Number)
    fc.assert(
      fc.property(currency, belowFifteenDigits, nonZeroDigit, (code, minor, extra) => {
        const exponent = currencyExponent(code)
        const value = Number(`${formatMinorUnits(minor, code)}${exponent === 0 ? '.' : ''}${extra}`)
        validationError(() => toMinorUnits(value, code))
      }),
    )
  })
})

describe('formatMinorUnits', () => {
  it('writes the currency exponent count of decimals', () => {
    expect(formatMinorUnits(1999, 'USD')).toBe('19.99')
    expect(formatMinorUnits(5, 'USD')).toBe('0.05')
    expect(formatMinorUnits(-5, 'USD')).toBe('-0.05')
    expect(formatMinorUnits(0, 'USD')).toBe('0.00')
    expect(formatMinorUnits(-0, 'USD')).toBe('0.00')
    expect(formatMinorUnits(1000, 'JPY')).toBe('1000')
    expect(formatMinorUnits(-1000, 'JPY')).toBe('-1000')
    expect(formatMinorUnits(1500, 'KWD')).toBe('1.500')
    expect(formatMinorUnits(1, 'CLF')).toBe('0.0001')
    expect(formatMinorUnits(MAX_MINOR_UNITS, 'USD')).toBe('9999999999999.99')
  })

  it('refuses fractional, unsafe and non-finite minor units', () => {
    validationError(() => formatMinorUnits(19.99, 'USD'))
    validationError(() => formatMinorUnits(2 ** 53, 'USD'))
    validationError(() => formatMinorUnits(NaN, 'USD'))
    validationError(() => formatMinorUnits(Infinity, 'USD'))
  })

  it('refuses an unknown currency', () => {
    expect(validationError(() => formatMinorUnits(100, 'usd')).message).toBe("Unknown currency 'usd'")
  })

  it('always writes an optional minus, at least one whole digit and exactly exponent decimals', () => {
    fc.assert(
      fc.property(currency, minorUnits, (code, minor) => {
        const exponent = currencyExponent(code)
        const text = formatMinorUnits(minor, code)
        const pattern = exponent === 0 ? /^-?(0|[1-9]\d*)$/ : new RegExp(`^-?(0|[1-9]\\d*)\\.\\d{${exponent}}$`)
        expect(text).toMatch(pattern)
        expect(text.startsWith('-')).toBe(minor < 0)
        expect(text.replace(/[-.]/g, '').replace(/^0+(?=\d)/, '')).toBe(String(Math.abs(minor)))
      }),
      { numRuns: 2000 },
    )
  })
})

describe('toMajorUnits', () => {
  it('returns the amount as a number in major units', () => {
    expect(toMajorUnits(1999, 'USD')).toBe(19.99)
    expect(toMajorUnits(1000, 'JPY')).toBe(1000)
    expect(toMajorUnits(1500, 'KWD')).toBe(1.5)
    expect(toMajorUnits(-1, 'CLF')).toBe(-0.0001)
    expect(toMajorUnits(MAX_MINOR_UNITS, 'USD')).toBe(9999999999999.99)
  })

  it('is the number the exact decimal text of the amount parses to, for every amount and currency', () => {
    fc.assert(
      fc.property(currency, minorUnits, (code, minor) => {
        expect(toMajorUnits(minor, code)).toBe(Number(formatMinorUnits(minor, code)))
      }),
      { numRuns: 5000 },
    )
  })

  it('refuses amounts beyond MAX_MINOR_UNITS, which a double cannot carry exactly', () => {
    expect(validationError(() => toMajorUnits(MAX_MINOR_UNITS + 1, 'USD')).message).toBe('Amount is too large')
    validationError(() => toMajorUnits(-(MAX_MINOR_UNITS + 1), 'JPY'))
    validationError(() => toMajorUnits(Number.MAX_SAFE_INTEGER, 'USD'))
  })
})

describe('formatMoney', () => {
  it("writes an amount for people with exactly the currency's decimals, whatever Intl's own table says", () => {
    expect(formatMoney(19.9, 'USD')).toBe('$19.90')
    expect(formatMoney(0, 'EUR')).toBe('€0.00')
    expect(formatMoney(-5.25, 'USD')).toBe('-$5.25')
    expect(formatMoney(4250, 'JPY')).toBe('¥4,250')
    expect(formatMoney(1.5, 'KWD')).toBe('KWD\u00a01.500')
    expect(formatMoney(0.0001, 'CLF')).toBe('CLF\u00a00.0001')
    // Beyond a double's 15 significant digits of a float formatted directly: the exact text is formatted.
    expect(formatMoney(9999999999999.99, 'USD')).toBe('$9,999,999,999,999.99')
    expect(formatMoney(1234.5, 'EUR', 'de-DE')).toBe('1.234,50\u00a0€')
  })

  it('refuses what the currency cannot hold rather than rounding it', () => {
    expect(validationError(() => formatMoney(19.999, 'USD')).message).toBe('USD amounts have at most 2 decimal places')
    expect(validationError(() => formatMoney(1, 'usd')).message).toBe("Unknown currency 'usd'")
  })

  it('formats every amount to text that reads back as the same minor units', () => {
    fc.assert(
      fc.property(currency, minorUnits, (code, minor) => {
        const exponent = currencyExponent(code)
        // The symbol may hold dots of its own (XCG's is "Cg."): it goes before the digits are read.
        const symbol = new Intl.NumberFormat('en', { style: 'currency', currency: code }).formatToParts(0).find((part) => part.type === 'currency')!.value
        const digits = formatMoney(toMajorUnits(minor, code), code).replace(symbol, '').replace(/[^0-9.-]/g, '').replace(/\.$/, '')
        expect(toMinorUnits(digits, code)).toBe(minor)
        expect(digits.split('.')[1]?.length ?? 0).toBe(exponent)
      }),
    )
  })
})
