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
  return readMeasure(text, field, errors, 1_000_000_000, message)
}

/** A length (a product's dimensions) from 0 to 1,000,000 with at most 4 decimals, read as a weight is. */
export function readLength(text: string | undefined, field: string, errors: Errors, { message }: { message: string }): number | null {
  return readMeasure(text, field, errors, 1_000_000, message)
}

function readMeasure(text: string | undefined, field: string, errors: Errors, most: number, message: string): number | null {
  const value = (text ?? '').trim().replace(',', '.')
  if (!value) return null
  if (/^\d{1,10}(\.\d{1,4})?$/.test(value) && Number(value) <= most) return Number(value)
  errors[field] = message
  return null
}

/**
 * A number typed for an attribute: whole (`integer`) or with decimals (a comma read as a point),
 * negatives allowed, within the definition's bounds when it has them; the message names them.
 */
export function readNumber(
  text: string | undefined,
  field: string,
  errors: Errors,
  { integer = false, min = null, max = null }: { integer?: boolean; min?: number | null; max?: number | null } = {},
): number | null {
  const value = (text ?? '').trim().replace(',', '.')
  if (!value) return null
  const shape = integer ? /^-?\d{1,15}$/ : /^-?\d{1,15}(\.\d{1,15})?$/
  const number = Number(value)
  if (shape.test(value) && Number.isFinite(number) && (min === null || number >= min) && (max === null || number <= max)) return number
  const kind = integer ? 'a whole number' : 'a number such as 2.5'
  errors[field] =
    min !== null && max !== null ? `Enter ${kind} from ${min} to ${max}` : min !== null ? `Enter ${kind}, ${min} or more` : max !== null ? `Enter ${kind}, ${max} or less` : `Enter ${kind}`
  return null
}

/** A date as an <input type="date"> gives it (YYYY-MM-DD), a real one. */
export function readDate(text: string | undefined, field: string, errors: Errors): string | null {
  const value = (text ?? '').trim()
  if (!value) return null
  const date = new Date(`${value}T00:00:00Z`)
  if (/^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value) return value
  errors[field] = 'Enter a date such as 2026-05-01'
  return null
}

/**
 * A barcode: the digits of a GTIN-8, -12, -13 or -14 (spaces people type between groups dropped).
 * Its check digit is the API's to verify (GS1's rule lives in @commerce/domain): a wrong one is its 400.
 */
export function readBarcode(text: string | undefined, field: string, errors: Errors): string | null {
  const digits = (text ?? '').replace(/\s/g, '')
  if (!digits) return null
  if (/^\d+$/.test(digits) && [8, 12, 13, 14].includes(digits.length)) return digits
  errors[field] = 'Enter a GTIN: 8, 12, 13 or 14 digits'
  return null
}

/** An HS code: 6 to 10 digits, with the dots and spaces customs forms print between them (the API drops them). */
export function readHsCode(text: string | undefined, field: string, errors: Errors): string | null {
  const value = (text ?? '').trim()
  if (!value) return null
  if (/^[\d.\s]+$/.test(value) && /^\d{6,10}$/.test(value.replace(/[.\s]/g, ''))) return value
  errors[field] = 'Enter 6 to 10 digits, such as 6109.10'
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

/** An instant as a datetime-local input shows it (the reverse of readDateTime): the viewer's time, to the minute. */
export function dateTimeInputValue(moment: Date | string): string {
  const date = new Date(moment)
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)
}

const COUNTRY_CODE = /^[A-Z]{2}$/

/**
 * A two-letter country code, upper-cased; required unless told otherwise (then empty is none).
 * Well-formed is all that is checked here: the API refuses a code that is not an assigned
 * ISO 3166-1 one, naming the field.
 */
export function readCountry(text: string | undefined, field: string, errors: Errors, { required = true }: { required?: boolean } = {}): Country | null {
  const code = (text ?? '').trim().toUpperCase()
  if (!code && !required) return null
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
