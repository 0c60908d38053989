/**
 * The cells of a products file that carry the catalog's rules (docs/catalog.md): status, tags,
 * identifiers and logistics, options and attribute values. Each is written by the export and read
 * back by the import with the API's own checks (@commerce/domain), so what one writes the other
 * takes, and what the API refuses the import refuses, naming the column.
 */
import {
  COUNTRY_CODES,
  CreateProduct,
  DIMENSION_UNITS,
  PRODUCT_STATUSES,
  checkAttributeValue,
  isValidGtin,
  normalizeHsCode,
  normalizeTags,
  DomainError,
  type AttributeDefinitionRecord,
  type AttributeValue,
  type DimensionUnitCode,
  type OptionInput,
  type OptionRecord,
  type ProductStatusCode,
} from '@commerce/domain'
import { CellProblem, checked, listCell, readBoolean, readDecimal, readList, readText, textCell } from './cells.js'

/** The most a length, width or height may be (the API's limit). */
const MAX_LENGTH = 1_000_000

export function readStatus(column: string, cell: string): ProductStatusCode {
  const text = cell.trim().toLowerCase()
  if (!(PRODUCT_STATUSES as readonly string[]).includes(text)) throw new CellProblem(`${column}: '${cell}' is not one of ${PRODUCT_STATUSES.join(', ')}`)
  return text as ProductStatusCode
}

/** Tags separated by commas (`summer, sale`); a tag holding a comma or a backslash escapes it with `\`. */
export function tagsCell(tags: readonly string[]): string {
  return listCell(tags, ',')
}

/** Tags as the API keeps them (normalizeTags: trimmed, one per spelling whatever its case), each checked as the API checks them. */
export function readTags(column: string, cell: string): string[] {
  const tags = readList(cell, ',').map((tag) => tag.trim()).filter((tag) => tag !== '')
  return normalizeTags(checked(column, CreateProduct.properties.tags, tags))
}

/** A GTIN-8, -12, -13 or -14 whose check digit is right; null when empty. */
export function readBarcode(column: string, cell: string): string | null {
  const text = cell.trim()
  if (text === '') return null
  if (!isValidGtin(text)) throw new CellProblem(`${column}: '${text}' is not a GTIN-8, -12, -13 or -14 with a valid check digit`)
  return text
}

/** An HS code as stored (digits only: `6109.10.00` → `61091000`); null when empty. */
export function readHsCode(column: string, cell: string): string | null {
  const text = cell.trim()
  if (text === '') return null
  checked(column, CreateProduct.properties.hs_code, text)
  const code = normalizeHsCode(text)
  if (code === null) throw new CellProblem(`${column}: '${text}' is not an HS code of 6 to 10 digits`)
  return code
}

/** An ISO 3166-1 alpha-2 country (upper case, as the API takes it); null when empty. */
export function readCountry(column: string, cell: string): string | null {
  const text = cell.trim()
  if (text === '') return null
  if (!COUNTRY_CODES.includes(text)) throw new CellProblem(`${column}: '${text}' is not an ISO 3166-1 alpha-2 country code (such as FR or US)`)
  return text
}

/** A length, width or height: an exact decimal of up to 4 places; null when empty. */
export function readLength(column: string, cell: string): string | null {
  return cell.trim() === '' ? null : readDecimal(column, cell, MAX_LENGTH)
}

export function readDimensionUnit(column: string, cell: string): DimensionUnitCode {
  const text = cell.trim() || 'cm'
  if (!(DIMENSION_UNITS as readonly string[]).includes(text)) throw new CellProblem(`${column}: '${cell}' is not one of ${DIMENSION_UNITS.join(', ')}`)
  return text as DimensionUnitCode
}

/**
 * A product's options as JSON in the API's form, with their ids (so an import gives back the same
 * options, and the variants' choices with them): `[{"id": …, "name": "Size", "values": [{"id": …,
 * "value": "S"}, {"id": …, "value": "M", "swatch_color": "#1e40af"}]}]`. Empty without options.
 */
export function optionsCell(options: readonly OptionRecord[]): string {
  if (options.length === 0) return ''
  const written = options.map((option) => ({
    id: option.id,
    name: option.name,
    values: option.values.map((value) => ({
      id: value.id,
      value: value.value,
      ...(value.swatchColor !== null && { swatch_color: value.swatchColor }),
      ...(value.swatchImageUrl !== null && { swatch_image_url: value.swatchImageUrl }),
    })),
  }))
  return textCell(JSON.stringify(written))
}

/**
 * The options a cell gives, checked as the API checks its `options`: ids are optional, a value may
 * be written as its text alone (`"values": ["S", "M"]`), and a value without a swatch has none
 * (the cell is the whole list, as in a PATCH). Empty: no options.
 */
export function readOptions(column: string, cell: string): OptionInput[] {
  const text = readText(cell)
  if (text === null) return []
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new CellProblem(`${column}: not JSON: write the options as [{"name": "Size", "values": ["S", "M"]}]`)
  }
  if (Array.isArray(parsed)) {
    parsed = parsed.map((option: unknown) =>
      option !== null && typeof option === 'object' && Array.isArray((option as { values?: unknown }).values)
        ? { ...option, values: (option as { values: unknown[] }).values.map((value) => (typeof value === 'string' ? { value } : value)) }
        : option,
    )
  }
  const input = checked(column, CreateProduct.properties.options, parsed) as OptionInput[]
  return input.map((option) => ({
    ...option,
    values: option.values.map((value) => ({ ...value, swatch_color: value.swatch_color ?? null, swatch_image_url: value.swatch_image_url ?? null })),
  }))
}

/** A variant's options (option name → value) as JSON: `{"Size": "M", "Colour": "Blue"}`. */
export function variantOptionsCell(options: Readonly<Record<string, string>>): string {
  return textCell(JSON.stringify(options))
}

/** A value of an attribute as text: numbers and dates as written, true/false, a multi-select as a JSON array. */
export function attributeCell(value: AttributeValue | undefined): string {
  if (value === undefined) return ''
  if (Array.isArray(value)) return textCell(JSON.stringify(value))
  return textCell(String(value))
}

const NUMBER = /^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/

/**
 * An attribute's value from its cell, read by the definition's type and checked against the
 * definition (checkAttributeValue, as the API checks it); null when empty (the value is removed).
 */
export function readAttribute(column: string, definition: AttributeDefinitionRecord, cell: string): AttributeValue | null {
  const text = readText(cell)
  if (text === null) return null
  let value: unknown = text
  switch (definition.type) {
    case 'integer':
    case 'decimal':
      if (!NUMBER.test(text.trim())) throw new CellProblem(`${column}: '${text}' is not a number`)
      value = Number(text.trim())
      break
    case 'boolean':
      value = readBoolean(column, text)
      break
    case 'multi_select':
      try {
        value = JSON.parse(text)
      } catch {
        throw new CellProblem(`${column}: not JSON: write the values as ["red", "blue"]`)
      }
      break
    case 'date':
    case 'product_reference':
      value = text.trim()
      break
    default:
  }
  try {
    return checkAttributeValue(definition, value, column)
  } catch (error) {
    if (error instanceof DomainError) throw new CellProblem(error.message.replace(/^Field '([^']+)' /, '$1: '))
    throw error
  }
}
