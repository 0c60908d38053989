/**
 * Custom attributes (Shopify's metafields, Saleor's attributes): a definition says what a key of
 * a product's or a variant's `attributes` may hold, and each value written is checked against it
 * (docs/catalog.md, "Attributes"). Free of storage.
 */
import type { AttributeOwner, AttributeType } from './constants.js'
import { DomainError } from './errors.js'

export interface AttributeRules {
  /** integer, decimal: the smallest and largest value; date: the earliest and latest (YYYY-MM-DD). */
  min?: number | string | null | undefined
  max?: number | string | null | undefined
  /** text: a regular expression the whole value must match. */
  pattern?: string | null | undefined
  /** text, rich_text: the most characters. */
  maxLength?: number | null | undefined
}

export interface AttributeDefinitionRecord {
  key: string
  owner: AttributeOwner
  type: AttributeType
  /** select, multi_select: the values allowed, in display order. */
  choices: readonly string[]
  rules: AttributeRules
}

/** What an attribute stores: text, a number, a boolean, a date (YYYY-MM-DD), values of a list, or a product's id. */
export type AttributeValue = string | number | boolean | string[]

/** The types whose values are text a translation may give in another language. */
export const TRANSLATABLE_ATTRIBUTE_TYPES: readonly AttributeType[] = ['text', 'rich_text']
/** The types a filter can name values of (and the facets count); integer, decimal and date filter by range too. */
export const FILTERABLE_ATTRIBUTE_TYPES: readonly AttributeType[] = ['text', 'integer', 'decimal', 'boolean', 'date', 'select', 'multi_select', 'product_reference']
/** The types filtered by range (`min..max`) as well as by value. */
export const RANGE_ATTRIBUTE_TYPES: readonly AttributeType[] = ['integer', 'decimal', 'date']

const DATE = /^\d{4}-\d{2}-\d{2}$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const TEXT_MAX = 20_000

function refuse(field: string, says: string): never {
  const message = `Field '${field}' ${says}`
  throw new DomainError('validation_error', message, [{ field, message }])
}

/** A real calendar date in YYYY-MM-DD. */
export function isCalendarDate(text: string): boolean {
  if (!DATE.test(text)) return false
  const date = new Date(`${text}T00:00:00Z`)
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text
}

/**
 * The value as stored, or a 400 naming `field` (`attributes.<key>`): of the definition's type,
 * within its rules, one of its choices.
 */
export function checkAttributeValue(definition: AttributeDefinitionRecord, value: unknown, field: string): AttributeValue {
  const { rules } = definition
  switch (definition.type) {
    case 'text':
    case 'rich_text': {
      if (typeof value !== 'string') refuse(field, 'must be text')
      const most = rules.maxLength ?? TEXT_MAX
      if (value.length > most) refuse(field, `must be at most ${most} characters`)
      if (definition.type === 'text' && rules.pattern && !new RegExp(`^(?:${rules.pattern})$`, 'u').test(value)) {
        refuse(field, `must match the pattern ${rules.pattern}`)
      }
      return value
    }
    case 'integer':
    case 'decimal': {
      if (typeof value !== 'number' || !Number.isFinite(value)) refuse(field, 'must be a number')
      if (definition.type === 'integer' && !Number.isSafeInteger(value)) refuse(field, 'must be an integer')
      if (typeof rules.min === 'number' && value < rules.min) refuse(field, `must be at least ${rules.min}`)
      if (typeof rules.max === 'number' && value > rules.max) refuse(field, `must be at most ${rules.max}`)
      return value
    }
    case 'boolean':
      if (typeof value !== 'boolean') refuse(field, 'must be true or false')
      return value
    case 'date': {
      if (typeof value !== 'string' || !isCalendarDate(value)) refuse(field, 'must be a date, YYYY-MM-DD')
      if (typeof rules.min === 'string' && value < rules.min) refuse(field, `must be on or after ${rules.min}`)
      if (typeof rules.max === 'string' && value > rules.max) refuse(field, `must be on or before ${rules.max}`)
      return value
    }
    case 'select': {
      if (typeof value !== 'string' || !definition.choices.includes(value)) refuse(field, `must be one of ${definition.choices.join(', ')}`)
      return value
    }
    case 'multi_select': {
      if (!Array.isArray(value) || value.some((item) => typeof item !== 'string' || !definition.choices.includes(item))) {
        refuse(field, `must be a list of values among ${definition.choices.join(', ')}`)
      }
      // Each once, in the definition's order.
      return definition.choices.filter((choice) => (value as string[]).includes(choice))
    }
    case 'product_reference':
      if (typeof value !== 'string' || !UUID.test(value)) refuse(field, "must be a product's id")
      return value.toLowerCase()
  }
}

/**
 * A definition's own consistency, or a 400 naming the field: choices for the list types (and
 * only for them), bounds of the type's kind in order, a pattern that compiles.
 */
export function checkAttributeDefinition(definition: Pick<AttributeDefinitionRecord, 'type' | 'choices' | 'rules'>): void {
  const { type, choices, rules } = definition
  const listed = type === 'select' || type === 'multi_select'
  if (listed && choices.length === 0) refuse('choices', `is required for a ${type} attribute: the values allowed`)
  if (!listed && choices.length > 0) refuse('choices', `applies to select and multi_select attributes only, not ${type}`)
  if (new Set(choices).size !== choices.length) refuse('choices', 'names a value twice')
  const bounded = type === 'integer' || type === 'decimal' || type === 'date'
  for (const bound of ['min', 'max'] as const) {
    const value = rules[bound]
    if (value == null) continue
    if (!bounded) refuse(`validation.${bound}`, `applies to integer, decimal and date attributes only, not ${type}`)
    if (type === 'date' ? typeof value !== 'string' || !isCalendarDate(value) : typeof value !== 'number') {
      refuse(`validation.${bound}`, type === 'date' ? 'must be a date, YYYY-MM-DD' : 'must be a number')
    }
  }
  if (rules.min != null && rules.max != null && rules.min > rules.max) refuse('validation.max', 'must not be below validation.min')
  if (rules.pattern != null) {
    if (type !== 'text') refuse('validation.pattern', `applies to text attributes only, not ${type}`)
    try {
      new RegExp(rules.pattern, 'u')
    } catch {
      refuse('validation.pattern', 'is not a valid regular expression')
    }
  }
  if (rules.maxLength != null && type !== 'text' && type !== 'rich_text') refuse('validation.max_length', `applies to text attributes only, not ${type}`)
}
