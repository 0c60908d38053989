/** Money typed into the dashboard: read exactly, digit by digit, in each currency's minor unit. */
import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { formatMoney, fractionDigits, moneyInputValue, parseMoney } from '../src/money'

describe('parseMoney', () => {
  test('reads what a person types, with a point or a comma', () => {
    expect(parseMoney('12', 'EUR')).toEqual({ ok: true, amount: 12 })
    expect(parseMoney(' 12.5 ', 'EUR')).toEqual({ ok: true, amount: 12.5 })
    expect(parseMoney('0,07', 'EUR')).toEqual({ ok: true, amount: 0.07 })
    expect(parseMoney('1500', 'JPY')).toEqual({ ok: true, amount: 1500 })
    expect(parseMoney('1.234', 'KWD')).toEqual({ ok: true, amount: 1.234 })
  })

  test('refuses more minor digits than the currency has, and anything not an amount', () => {
    expect(parseMoney('12.345', 'EUR')).toEqual({ ok: false, message: 'EUR has 2 decimal places at most' })
    expect(parseMoney('12.5', 'JPY')).toEqual({ ok: false, message: 'JPY has no minor unit: enter a whole amount' })
    expect(parseMoney('9999999999999999', 'EUR')).toEqual({ ok: false, message: 'This amount is too large' })
    for (const text of ['', '-1', '1e3', '12.50.1', '€12', 'abc', '1 000']) expect(parseMoney(text, 'EUR').ok, text).toBe(false)
  })

  test('every amount in minor units survives being shown in the input and read back', () => {
    fc.assert(
      fc.property(fc.constantFrom('EUR', 'JPY', 'KWD', 'USD'), fc.bigInt({ min: 0n, max: 10n ** 13n }), (currency, minor) => {
        const digits = fractionDigits(currency)
        const amount = Number(minor) / 10 ** digits
        const parsed = parseMoney(moneyInputValue(amount, currency), currency)
        expect(parsed).toEqual({ ok: true, amount })
        // Back to minor units exactly: nothing was rounded on the way.
        if (parsed.ok) expect(BigInt(Math.round(parsed.amount * 10 ** digits))).toBe(minor)
      }),
    )
  })
})

test('formatMoney shows the currency and its minor digits', () => {
  expect(formatMoney(12.5, 'EUR', 'en')).toBe('€12.50')
  expect(formatMoney(1500, 'JPY', 'en')).toBe('¥1,500')
  expect(formatMoney(0, 'USD', 'en')).toBe('$0.00')
})
