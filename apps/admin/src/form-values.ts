/**
 * Typed values read from a form's text, the same way on every screen. A reader returns the value,
 * or null when there is none: the field was empty (and may be), or what was typed is refused, and
 * then the reader records a message under the field's name in `errors`, which the form shows
 * beside that field. A form that words a message its own way passes it in as `message`.
 */
import type { Schemas } from './api'
import { parseMoney } from './money'

/** Field errors by field name. */
export type Errors = Record<string, string>

type Country = Schemas['CreateTaxRateRequest']['country']

/** The largest integer the API's columns hold (a Postgres integer). */
export const LARGEST_INTEGER = 2_147_483_647

/** A three-letter currency code, upper-cased. */
export function readCurrency(
  text: string | undefined,
  field: string,
  errors: Errors,
  { required = false, message = 'Enter a three-letter currency code, such as EUR' }: { required?: boolean; message?: string } = {},
): string | null {
  const code = (text ?? '').trim().toUpperCase()
  if (!code && !required) return null
  if (/^[A-Z]{3}$/.test(code)) return code
  errors[field] = message
  return null
}

/** An amount in the currency's minor digits, read exactly by parseMoney (whose message says what is wrong). */
export function readMoney(text: string | undefined, currency: string, field: string, errors: Errors, { required = false }: { required?: boolean } = {}): number | null {
  if (!text?.trim() && !required) return null
  const parsed = parseMoney(text ?? '', currency)
  if (parsed.ok) return parsed.amount
  errors[field] = parsed.message
  return null
}

/**
 * A whole number from `min` to `max`. Without a `max` the message names only the minimum (the
 * API's integer limit still applies). A minus sign is read only where `min` allows negatives.
 */
export function readWhole(
  text: string | undefined,
  field: string,
  errors: Errors,
  { min, max, required = false, message }: { min: number; max?: number; required?: boolean; message?: string },
): number | null {
  const value = (text ?? '').trim()
  if (!value && !required) return null
  const number = Number(value)
  const digits = min < 0 ? /^-?\d{1,10}$/ : /^\d{1,10}$/
  if (digits.test(value) && number >= min && number <= (max ?? LARGEST_INTEGER)) return number
  errors[field] = message ?? (max === undefined ? `Enter a whole number, ${min} or more` : `Enter a whole number from ${min} to ${max.toLocaleString()}`)
  return null
}

/**
 * A weight from 0 to 1,000,000,000 with at most 4 decimals: what the API keeps exactly (it refuses
 * more decimals). A comma as the decimal mark is read as a point. The message names the unit.
 */
export function readWeight(text: string | undefined, field: string, errors: Errors, { message }: { message: string }): number | null {
  const value = (text ?? '').trim().replace(',', '.')
  if (!value) return null
  if (/^\d{1,10}(\.\d{1,4})?$/.test(value) && Number(value) <= 1_000_000_000) return Number(value)
  errors[field] = message
  return null
}

/**
 * A percent up to 100 with at most 4 decimals (what the API keeps exactly), above 0 unless 0 is
 * allowed (a tax rate may be 0 %, a discount may not). Required: empty is refused.
 */
export function readPercent(
  text: string | undefined,
  field: string,
  errors: Errors,
  { allowZero = false, message }: { allowZero?: boolean; message?: string } = {},
): number | null {
  const value = (text ?? '').trim().replace(',', '.')
  if (!/^\d{1,3}(\.\d{1,4})?$/.test(value)) {
    errors[field] = message ?? 'Enter a percent such as 12.5, with at most 4 decimals'
    return null
  }
  const number = Number(value)
  if (number > 100 || (number === 0 && !allowZero)) {
    errors[field] = message ?? `Enter a percent ${allowZero ? 'from 0 to 100' : 'above 0 and at most 100'}`
    return null
  }
  return number
}

/**
 * A datetime-local value (the viewer's time, no zone) as the ISO 8601 UTC instant the API takes.
 * Only that shape is read: a date alone would be read as UTC midnight, not the viewer's time.
 */
export function readDateTime(text: string | undefined, field: string, errors: Errors): string | null {
  if (!text) return null
  const date = new Date(text)
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(text) || Number.isNaN(date.getTime())) {
    errors[field] = 'Enter a date and time'
    return null
  }
  return date.toISOString()
}

const COUNTRY_CODE = /^[A-Z]{2}$/

/**
 * A two-letter country code, upper-cased; required. Well-formed is all that is checked here: the
 * API refuses a code that is not an assigned ISO 3166-1 one, naming the field.
 */
export function readCountry(text: string | undefined, field: string, errors: Errors): Country | null {
  const code = (text ?? '').trim().toUpperCase()
  if (COUNTRY_CODE.test(code)) return code as Country
  errors[field] = 'Enter a two-letter country code, such as DE'
  return null
}

/** Two-letter country codes separated by commas or spaces, upper-cased, each once; empty: none. */
export function readCountries(text: string | undefined, field: string, errors: Errors): Country[] {
  const codes = [...new Set((text ?? '').toUpperCase().split(/[\s,]+/).filter(Boolean))]
  const wrong = codes.filter((code) => !COUNTRY_CODE.test(code))
  if (wrong.length === 0) return codes as Country[]
  errors[field] = `Not a two-letter country code: ${wrong.join(', ')}`
  return []
}
