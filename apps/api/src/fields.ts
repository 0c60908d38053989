/** Request fields through the domain's rules: a rule the value breaks becomes a 400 naming the field. */
import { DomainError, isCurrency, toMinorUnits } from '@commerce/domain'
import { invalidField } from './errors.js'

export function fieldValue<T>(field: string, convert: () => T): T {
  try {
    return convert()
  } catch (error) {
    if (error instanceof DomainError) throw invalidField(field, `Field '${field}' is invalid: ${error.message}`)
    throw error
  }
}

/** The currency when the money rules know it, else a validation error on `field`. */
export function knownCurrency(currency: string, field = 'currency'): string {
  if (!isCurrency(currency)) {
    throw invalidField(field, `Field '${field}' is not a known ISO 4217 currency: ${currency}`)
  }
  return currency
}

/** An amount in major units as integer minor units of `currency`, or a 400 naming `field`. */
export function minorUnits(field: string, amount: number, currency: string): number {
  return fieldValue(field, () => toMinorUnits(amount, currency))
}

/** A date-time field as a Date PostgreSQL stores as sent, or a 400 naming `field`. */
export function instant(field: string, text: string | null): Date | null {
  if (text === null) return null
  const date = new Date(text)
  // Leap seconds pass the format but not Date; years outside 1..9999 (UTC) PostgreSQL does not take as sent.
  const year = date.getUTCFullYear()
  if (Number.isNaN(date.getTime()) || year < 1 || year > 9999) {
    throw invalidField(field, `Field '${field}' is not a valid date-time between the years 1 and 9999`)
  }
  return date
}
