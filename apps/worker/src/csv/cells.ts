/**
 * Cells of the service's CSV files (docs/csv.md). Text a spreadsheet would run as a formula
 * (`=`, `+`, `-`, `@`, tab, carriage return first) gets a leading apostrophe, as OWASP's CSV
 * injection advice says, and reading takes it off again, so export then import gives back the
 * same text. Lists separate their items with `|` (tags with `,`), escaping the separator and `\`
 * with `\`. An empty cell is no value (null).
 */
import { Value } from 'typebox/value'
import type { TSchema } from 'typebox'
import { formatMinorUnits, isCurrency, toMinorUnits } from '@commerce/domain'

const GUARDED = /^[=+\-@\t\r]|^'[=+\-@\t\r']/

export function textCell(value: string | null | undefined): string {
  if (value === null || value === undefined) return ''
  return GUARDED.test(value) ? `'${value}` : value
}

/** A cell's text with the formula guard taken off; null when empty. */
export function readText(cell: string): string | null {
  if (cell === '') return null
  return GUARDED.test(cell.slice(1)) && cell.startsWith("'") ? cell.slice(1) : cell
}

/** Items joined by `separator` (`|`, or `,` for tags, written `, ` to read well), each escaping it and `\` with `\`. */
export function listCell(items: readonly string[], separator: '|' | ',' = '|'): string {
  const escape = separator === '|' ? /[\\|]/g : /[\\,]/g
  return textCell(items.map((item) => item.replace(escape, (char) => `\\${char}`)).join(separator === '|' ? '|' : ', '))
}

export function readList(cell: string, separator: '|' | ',' = '|'): string[] {
  const text = readText(cell)
  if (text === null) return []
  const items: string[] = []
  let item = ''
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!
    if (char === '\\' && index + 1 < text.length) item += text[++index]
    else if (char === separator) {
      items.push(item)
      item = ''
    } else item += char
  }
  items.push(item)
  return items
}

/** Integer minor units (as text, from the database) as a decimal in major units with the currency's exponent. */
export function moneyCell(minor: string | number | null, currency: string): string {
  return minor === null ? '' : formatMinorUnits(Number(minor), currency)
}

/** A problem with one cell, said as the report says it. */
export class CellProblem extends Error {}

export function readMoney(column: string, cell: string, currency: string): number {
  if (!isCurrency(currency)) throw new CellProblem(`${column}: '${currency}' is not a known ISO 4217 currency`)
  let minor: number
  try {
    minor = toMinorUnits(cell, currency)
  } catch (error) {
    throw new CellProblem(`${column}: ${(error as Error).message} (an amount in major units, such as 19.99)`)
  }
  if (minor < 0) throw new CellProblem(`${column}: must not be negative`)
  return minor
}

export function readBoolean(column: string, cell: string): boolean {
  const text = cell.trim().toLowerCase()
  if (text === 'true' || text === 'yes' || text === '1') return true
  if (text === 'false' || text === 'no' || text === '0') return false
  throw new CellProblem(`${column}: '${cell}' is not true or false`)
}

export function readInteger(column: string, cell: string, minimum = 0): number {
  if (!/^\d+$/.test(cell.trim())) throw new CellProblem(`${column}: '${cell}' is not a whole number of ${minimum} or more`)
  const value = Number(cell.trim())
  if (value < minimum || value > 2_147_483_647) throw new CellProblem(`${column}: '${cell}' is out of range`)
  return value
}

/** A weight or a length as an exact decimal (up to 4 places, as stored), at most `maximum`. */
export function readDecimal(column: string, cell: string, maximum?: number): string {
  const text = cell.trim()
  const match = /^(\d{1,10})(?:\.(\d{1,4}))?$/.exec(text)
  if (!match) throw new CellProblem(`${column}: '${cell}' is not a decimal of at most 4 places`)
  if (maximum !== undefined && Number(text) > maximum) throw new CellProblem(`${column}: must be at most ${maximum}`)
  return text
}

/**
 * A moment in ISO 8601 with its offset (`2026-03-01T09:00:00Z`, `…+01:00`), as the API's
 * date-time fields take it, between the years 1 and 9999; answered as written (PostgreSQL keeps
 * its microseconds, which a Date would cut to milliseconds). Null when empty.
 */
export function readInstant(column: string, cell: string, schema: TSchema): string | null {
  const text = cell.trim()
  if (text === '') return null
  checked(column, schema, text)
  const year = new Date(text).getUTCFullYear()
  if (Number.isNaN(year) || year < 1 || year > 9999) throw new CellProblem(`${column}: '${text}' is not a valid date-time between the years 1 and 9999`)
  return text
}

/** A value checked against the API's own schema of the field, so an import accepts what the API does. */
export function checked<T>(column: string, schema: TSchema, value: T): T {
  const [first] = Value.Errors(schema, value)
  if (first) throw new CellProblem(`${column}${first.instancePath}: ${first.message}`)
  return value
}
