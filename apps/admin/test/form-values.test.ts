/** The readers every form shares: each value accepted as typed, each refusal named under its field. */
import { afterEach, describe, expect, test, vi } from 'vitest'
import {
  dateTimeInputValue,
  LARGEST_INTEGER,
  readBarcode,
  readCountries,
  readCountry,
  readCurrency,
  readDate,
  readDateTime,
  readHsCode,
  readLength,
  readMoney,
  readNumber,
  readPercent,
  readWeight,
  readWhole,
  type Errors,
} from '../src/form-values'

/** What a reader returns and the errors it records, for one text. */
function read<T>(reader: (text: string | undefined, errors: Errors) => T, text: string | undefined) {
  const errors: Errors = {}
  return { value: reader(text, errors), errors }
}

describe('readCurrency', () => {
  const optional = (text: string | undefined, errors: Errors) => readCurrency(text, 'currency', errors)
  const required = (text: string | undefined, errors: Errors) => readCurrency(text, 'currency', errors, { required: true })

  test('reads three letters, trimmed and upper-cased', () => {
    expect(read(optional, ' eur ')).toEqual({ value: 'EUR', errors: {} })
    expect(read(required, 'JPY')).toEqual({ value: 'JPY', errors: {} })
  })

  test('empty is no currency unless one is required', () => {
    expect(read(optional, '')).toEqual({ value: null, errors: {} })
    expect(read(optional, undefined)).toEqual({ value: null, errors: {} })
    expect(read(required, '  ')).toEqual({ value: null, errors: { currency: 'Enter a three-letter currency code, such as EUR' } })
  })

  test('refuses anything but three letters, with the form’s own message when it has one', () => {
    for (const text of ['EU', 'EURO', 'E1R', '€', 'US D']) {
      expect(read(optional, text), text).toEqual({ value: null, errors: { currency: 'Enter a three-letter currency code, such as EUR' } })
    }
    const errors: Errors = {}
    expect(readCurrency('US', 'currency', errors, { required: true, message: 'Enter a three-letter currency code such as USD' })).toBeNull()
    expect(errors).toEqual({ currency: 'Enter a three-letter currency code such as USD' })
  })
})

describe('readMoney', () => {
  const euros = (text: string | undefined, errors: Errors) => readMoney(text, 'EUR', 'price', errors)

  test('reads an amount exactly, in the currency’s minor digits', () => {
    expect(read(euros, '12.50')).toEqual({ value: 12.5, errors: {} })
    expect(read(euros, ' 0,07 ')).toEqual({ value: 0.07, errors: {} })
    expect(read(euros, '0')).toEqual({ value: 0, errors: {} })
    expect(read((text, errors) => readMoney(text, 'JPY', 'price', errors), '1500')).toEqual({ value: 1500, errors: {} })
  })

  test('refuses what parseMoney refuses, with its message under the field', () => {
    expect(read(euros, '12.345')).toEqual({ value: null, errors: { price: 'EUR has 2 decimal places at most' } })
    expect(read(euros, '-1')).toEqual({ value: null, errors: { price: 'Enter an amount such as 12.50' } })
    expect(read((text, errors) => readMoney(text, 'JPY', 'price', errors), '12.5')).toEqual({
      value: null,
      errors: { price: 'JPY has no minor unit: enter a whole amount' },
    })
  })

  test('empty is no amount unless one is required', () => {
    expect(read(euros, ' ')).toEqual({ value: null, errors: {} })
    expect(read(euros, undefined)).toEqual({ value: null, errors: {} })
    expect(read((text, errors) => readMoney(text, 'EUR', 'price', errors, { required: true }), '')).toEqual({
      value: null,
      errors: { price: 'Enter an amount such as 12.50' },
    })
  })
})

describe('readWhole', () => {
  test('reads whole numbers within the bounds, the bounds included', () => {
    const bounded = (text: string | undefined, errors: Errors) => readWhole(text, 'n', errors, { min: 1, max: 10_000 })
    expect(read(bounded, ' 1 ')).toEqual({ value: 1, errors: {} })
    expect(read(bounded, '10000')).toEqual({ value: 10_000, errors: {} })
    expect(read(bounded, '007')).toEqual({ value: 7, errors: {} })
    const fromZero = (text: string | undefined, errors: Errors) => readWhole(text, 'n', errors, { min: 0 })
    expect(read(fromZero, '0')).toEqual({ value: 0, errors: {} })
    expect(read(fromZero, String(LARGEST_INTEGER))).toEqual({ value: LARGEST_INTEGER, errors: {} })
  })

  test('refuses what is out of bounds or not a whole number, naming the bounds', () => {
    const bounded = (text: string | undefined, errors: Errors) => readWhole(text, 'n', errors, { min: 1, max: 10_000 })
    for (const text of ['0', '10001', '1.5', '1e3', 'abc', '+3', '-1', '1 000']) {
      expect(read(bounded, text), text).toEqual({ value: null, errors: { n: `Enter a whole number from 1 to ${(10_000).toLocaleString()}` } })
    }
    // Without a max, only the API's integer limit applies and the message names the minimum alone.
    const fromZero = (text: string | undefined, errors: Errors) => readWhole(text, 'n', errors, { min: 0 })
    for (const text of [String(LARGEST_INTEGER + 1), '-0', '-5']) {
      expect(read(fromZero, text), text).toEqual({ value: null, errors: { n: 'Enter a whole number, 0 or more' } })
    }
  })

  test('reads a minus sign only where the minimum is negative', () => {
    const units = (text: string | undefined, errors: Errors) =>
      readWhole(text, 'units', errors, { min: -1_000_000_000, max: 1_000_000_000, message: 'Enter a whole number, negative to remove' })
    expect(read(units, '-25')).toEqual({ value: -25, errors: {} })
    expect(read(units, '25')).toEqual({ value: 25, errors: {} })
    expect(read(units, '-1000000001')).toEqual({ value: null, errors: { units: 'Enter a whole number, negative to remove' } })
  })

  test('empty is no number unless one is required', () => {
    const count = { min: 1, message: 'Enter a whole number of at least 1' }
    expect(read((text, errors) => readWhole(text, 'n', errors, count), '  ')).toEqual({ value: null, errors: {} })
    expect(read((text, errors) => readWhole(text, 'n', errors, count), undefined)).toEqual({ value: null, errors: {} })
    expect(read((text, errors) => readWhole(text, 'n', errors, { ...count, required: true }), '')).toEqual({
      value: null,
      errors: { n: 'Enter a whole number of at least 1' },
    })
  })
})

describe('readWeight', () => {
  const kilograms = (text: string | undefined, errors: Errors) => readWeight(text, 'weight', errors, { message: 'Enter kilograms such as 2.5' })

  test('reads up to 4 decimals, with a point or a comma, from 0 to a billion', () => {
    expect(read(kilograms, '2.5')).toEqual({ value: 2.5, errors: {} })
    expect(read(kilograms, ' 0,1234 ')).toEqual({ value: 0.1234, errors: {} })
    expect(read(kilograms, '0')).toEqual({ value: 0, errors: {} })
    expect(read(kilograms, '1000000000')).toEqual({ value: 1_000_000_000, errors: {} })
  })

  test('empty is no weight', () => {
    expect(read(kilograms, '')).toEqual({ value: null, errors: {} })
    expect(read(kilograms, undefined)).toEqual({ value: null, errors: {} })
  })

  test('refuses more than 4 decimals (the API would), negatives and more than a billion', () => {
    for (const text of ['0.12345', '0.123456', '-1', '1000000000.5', '1e3', '2.', '.5', 'abc']) {
      expect(read(kilograms, text), text).toEqual({ value: null, errors: { weight: 'Enter kilograms such as 2.5' } })
    }
  })
})

describe('readLength', () => {
  const length = (text: string | undefined, errors: Errors) => readLength(text, 'length', errors, { message: 'Enter a length such as 12.5' })

  test('reads up to 4 decimals from 0 to a million, as a weight is read', () => {
    expect(read(length, '12,5')).toEqual({ value: 12.5, errors: {} })
    expect(read(length, '1000000')).toEqual({ value: 1_000_000, errors: {} })
    expect(read(length, '')).toEqual({ value: null, errors: {} })
  })

  test('refuses more than a million, more than 4 decimals and negatives', () => {
    for (const text of ['1000000.0001', '1.23456', '-3', 'abc']) {
      expect(read(length, text), text).toEqual({ value: null, errors: { length: 'Enter a length such as 12.5' } })
    }
  })
})

describe('readNumber', () => {
  const decimal = (text: string | undefined, errors: Errors) => readNumber(text, 'n', errors)
  const bounded = (text: string | undefined, errors: Errors) => readNumber(text, 'n', errors, { integer: true, min: -5, max: 10 })

  test('reads numbers with a point or a comma, negatives included; empty is none', () => {
    expect(read(decimal, ' -2,75 ')).toEqual({ value: -2.75, errors: {} })
    expect(read(decimal, '1500')).toEqual({ value: 1500, errors: {} })
    expect(read(decimal, '')).toEqual({ value: null, errors: {} })
  })

  test('a whole number within bounds where the definition says so, the message naming them', () => {
    expect(read(bounded, '-5')).toEqual({ value: -5, errors: {} })
    expect(read(bounded, '10')).toEqual({ value: 10, errors: {} })
    for (const text of ['11', '-6', '2.5', '1e2']) {
      expect(read(bounded, text), text).toEqual({ value: null, errors: { n: 'Enter a whole number from -5 to 10' } })
    }
    expect(read((text, errors) => readNumber(text, 'n', errors, { min: 0 }), '-1')).toEqual({ value: null, errors: { n: 'Enter a number such as 2.5, 0 or more' } })
    expect(read(decimal, '12 kg')).toEqual({ value: null, errors: { n: 'Enter a number such as 2.5' } })
  })
})

describe('readDate', () => {
  const date = (text: string | undefined, errors: Errors) => readDate(text, 'on', errors)

  test('reads a real calendar date as YYYY-MM-DD; empty is none', () => {
    expect(read(date, '2028-02-29')).toEqual({ value: '2028-02-29', errors: {} })
    expect(read(date, '')).toEqual({ value: null, errors: {} })
  })

  test('refuses what is not one', () => {
    for (const text of ['2027-02-29', '2026-13-01', '01/05/2026', '2026-5-1']) {
      expect(read(date, text), text).toEqual({ value: null, errors: { on: 'Enter a date such as 2026-05-01' } })
    }
  })
})

describe('readBarcode', () => {
  const barcode = (text: string | undefined, errors: Errors) => readBarcode(text, 'barcode', errors)

  test('reads the digits of a GTIN-8, -12, -13 or -14, spaces dropped; empty is none', () => {
    expect(read(barcode, '4006381 333931')).toEqual({ value: '4006381333931', errors: {} })
    expect(read(barcode, '96385074')).toEqual({ value: '96385074', errors: {} })
    expect(read(barcode, '')).toEqual({ value: null, errors: {} })
  })

  test('refuses other lengths and anything but digits (the check digit is the API’s to verify)', () => {
    for (const text of ['1234567', '12345678901', '400638133393X', '-4006381333931']) {
      expect(read(barcode, text), text).toEqual({ value: null, errors: { barcode: 'Enter a GTIN: 8, 12, 13 or 14 digits' } })
    }
  })
})

describe('readHsCode', () => {
  const hsCode = (text: string | undefined, errors: Errors) => readHsCode(text, 'hs_code', errors)

  test('reads 6 to 10 digits with the dots and spaces written between them, as typed', () => {
    expect(read(hsCode, ' 6109.10.00 ')).toEqual({ value: '6109.10.00', errors: {} })
    expect(read(hsCode, '610910')).toEqual({ value: '610910', errors: {} })
    expect(read(hsCode, '')).toEqual({ value: null, errors: {} })
  })

  test('refuses fewer than 6 digits, more than 10, and other characters', () => {
    for (const text of ['6109.1', '61091000001', '6109-10', 'abcdef']) {
      expect(read(hsCode, text), text).toEqual({ value: null, errors: { hs_code: 'Enter 6 to 10 digits, such as 6109.10' } })
    }
  })
})

describe('dateTimeInputValue', () => {
  afterEach(() => {
    vi.unstubAllEnvs()
  })

  test('shows an instant in the viewer’s time, to the minute: what readDateTime reads back', () => {
    vi.stubEnv('TZ', 'Asia/Kolkata')
    expect(dateTimeInputValue('2026-05-01T05:00:42.123Z')).toBe('2026-05-01T10:30')
    const errors: Errors = {}
    expect(readDateTime(dateTimeInputValue('2026-05-01T05:00:00.000Z'), 'at', errors)).toBe('2026-05-01T05:00:00.000Z')
  })
})

describe('readPercent', () => {
  const discount = (text: string | undefined, errors: Errors) => readPercent(text, 'value', errors)
  const taxRate = (text: string | undefined, errors: Errors) => readPercent(text, 'rate', errors, { allowZero: true })

  test('reads up to 100 with at most 4 decimals, with a point or a comma', () => {
    expect(read(discount, '12.5')).toEqual({ value: 12.5, errors: {} })
    expect(read(discount, ' 8,875 ')).toEqual({ value: 8.875, errors: {} })
    expect(read(discount, '0.0001')).toEqual({ value: 0.0001, errors: {} })
    expect(read(discount, '100')).toEqual({ value: 100, errors: {} })
  })

  test('refuses what is not a percent with 4 decimals at most, and says so', () => {
    for (const text of ['', '12.34567', '-5', '1000', 'abc', '12 %']) {
      expect(read(discount, text), text).toEqual({ value: null, errors: { value: 'Enter a percent such as 12.5, with at most 4 decimals' } })
    }
  })

  test('0 only where it is allowed; above 100 never', () => {
    expect(read(discount, '0')).toEqual({ value: null, errors: { value: 'Enter a percent above 0 and at most 100' } })
    expect(read(discount, '100.0001')).toEqual({ value: null, errors: { value: 'Enter a percent above 0 and at most 100' } })
    expect(read(taxRate, '0')).toEqual({ value: 0, errors: {} })
    expect(read(taxRate, '101')).toEqual({ value: null, errors: { rate: 'Enter a percent from 0 to 100' } })
  })

  test('a form’s own message replaces both of the reader’s', () => {
    const message = 'Enter a percent from 0 to 100, with at most 4 decimals'
    const rate = (text: string | undefined, errors: Errors) => readPercent(text, 'rate', errors, { allowZero: true, message })
    expect(read(rate, '101')).toEqual({ value: null, errors: { rate: message } })
    expect(read(rate, '1.23456')).toEqual({ value: null, errors: { rate: message } })
  })
})

describe('readDateTime', () => {
  const starts = (text: string | undefined, errors: Errors) => readDateTime(text, 'starts_at', errors)
  afterEach(() => {
    vi.unstubAllEnvs()
  })

  test('reads a datetime-local value in the viewer’s time zone, as a UTC instant', () => {
    vi.stubEnv('TZ', 'Asia/Kolkata') // UTC+05:30, no daylight saving time: not UTC, so a value read as UTC would show
    expect(read(starts, '2026-05-01T10:30')).toEqual({ value: '2026-05-01T05:00:00.000Z', errors: {} })
    expect(read(starts, '2026-05-01T10:30:15')).toEqual({ value: '2026-05-01T05:00:15.000Z', errors: {} })
  })

  test('empty is no date', () => {
    expect(read(starts, '')).toEqual({ value: null, errors: {} })
    expect(read(starts, undefined)).toEqual({ value: null, errors: {} })
  })

  test('refuses what is not a datetime-local value, a date alone included', () => {
    for (const text of ['tomorrow', '2026-05-01', '2026-05-01T25:00', '2026-05-01 10:30', '1', '2026-05-01T10:30Z']) {
      expect(read(starts, text), text).toEqual({ value: null, errors: { starts_at: 'Enter a date and time' } })
    }
  })
})

describe('readCountry', () => {
  const country = (text: string | undefined, errors: Errors) => readCountry(text, 'country', errors)

  test('reads two letters, trimmed and upper-cased', () => {
    expect(read(country, ' de ')).toEqual({ value: 'DE', errors: {} })
  })

  test('refuses anything but two letters, empty included', () => {
    for (const text of ['', undefined, 'DEU', 'D', 'D1', 'D E']) {
      expect(read(country, text), String(text)).toEqual({ value: null, errors: { country: 'Enter a two-letter country code, such as DE' } })
    }
  })

  test('empty is no country where one is not required', () => {
    const optional = (text: string | undefined, errors: Errors) => readCountry(text, 'country_of_origin', errors, { required: false })
    expect(read(optional, ' ')).toEqual({ value: null, errors: {} })
    expect(read(optional, 'pt')).toEqual({ value: 'PT', errors: {} })
    expect(read(optional, 'PRT')).toEqual({ value: null, errors: { country_of_origin: 'Enter a two-letter country code, such as DE' } })
  })
})

describe('readCountries', () => {
  const countries = (text: string | undefined, errors: Errors) => readCountries(text, 'countries', errors)

  test('reads codes separated by commas or spaces, upper-cased, each once', () => {
    expect(read(countries, 'de, at ch,,DE')).toEqual({ value: ['DE', 'AT', 'CH'], errors: {} })
  })

  test('empty is none', () => {
    expect(read(countries, ' ')).toEqual({ value: [], errors: {} })
    expect(read(countries, undefined)).toEqual({ value: [], errors: {} })
  })

  test('refuses the list when a code is wrong, naming the wrong ones', () => {
    expect(read(countries, 'DE, AUT, 1, AT')).toEqual({ value: [], errors: { countries: 'Not a two-letter country code: AUT, 1' } })
  })
})
