/**
 * `?fields=` (docs/api-conventions.md, Field selection): the names an answer's schema offers, a
 * request's list of names checked against them, and the answer cut down to them. A list applies
 * the selection to each item and keeps its envelope (meta) whole.
 */
import { invalidField } from './errors.js'

type Schema = Record<string, unknown>

/** The longest `fields` taken: every name of the largest resource (an order) is about 1,950 characters. */
export const FIELDS_MAX_LENGTH = 4096

/** An object of the answer that names can select in: whether it has an `id`, and which of its properties are objects themselves. */
interface Shape {
  hasId: boolean
  children: Map<string, Shape | null>
}

/** What a request chose: each name whole (true) or some of its own names. */
export type Selection = Map<string, Selection | true>

export interface Selectable {
  /** Every name `fields` takes (`variants.sku` for nested ones), in the schema's order. */
  names: string[]
  /** A list's array (`products`), whose items are selected in; undefined for a single resource. */
  list: string | undefined
  /** The answer's schema with nothing required in the objects a selection cuts, to serialize a selected answer. */
  schema: Schema
  /** The request's `fields`, or a 400 naming `fields` and each unknown name. */
  parse(text: string): Selection
  /** The answer with only the chosen names (and `id`) of the resource, or of each item of a list. */
  select(answer: unknown, selection: Selection): unknown
}

const isObject = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * The shape of the object a property holds — directly, as its array's items, or as the non-null
 * side of a nullable — and the property's schema with `required` left out of that object and of
 * the ones below it; undefined for anything else (a scalar, a map, a union of several objects),
 * which is selected whole.
 */
function partial(schema: Schema): { shape: Shape; schema: Schema } | undefined {
  if (isObject(schema.properties)) {
    const children = new Map<string, Shape | null>()
    const properties: Schema = {}
    for (const [name, property] of Object.entries(schema.properties)) {
      const inner = partial(property as Schema)
      children.set(name, inner?.shape ?? null)
      properties[name] = inner?.schema ?? property
    }
    const { required: _required, ...rest } = schema
    return { shape: { hasId: 'id' in schema.properties, children }, schema: { ...rest, properties } }
  }
  if (schema.type === 'array' && isObject(schema.items)) {
    const inner = partial(schema.items)
    return inner && { shape: inner.shape, schema: { ...schema, items: inner.schema } }
  }
  const branches = schema.anyOf
  if (Array.isArray(branches)) {
    const others = (branches as Schema[]).filter((branch) => branch.type !== 'null')
    const inner = others.length === 1 ? partial(others[0]!) : undefined
    return inner && { shape: inner.shape, schema: { ...schema, anyOf: branches.map((branch) => (branch === others[0] ? inner.schema : branch)) } }
  }
  return undefined
}

function namesOf(shape: Shape, prefix = ''): string[] {
  return [...shape.children].flatMap(([name, child]) => [`${prefix}${name}`, ...(child ? namesOf(child, `${prefix}${name}.`) : [])])
}

/** A selection that starts with the object's `id` when it has one: `id` always comes along. */
const startOf = (shape: Shape): Selection => new Map(shape.hasId ? [['id', true]] : [])

/** Adds a known name, split at its dots, to a selection. */
function add(selection: Selection, shape: Shape, [name, ...rest]: string[]): void {
  if (rest.length === 0) {
    selection.set(name!, true)
    return
  }
  let inner = selection.get(name!)
  // Chosen whole already: its parts add nothing.
  if (inner === true) return
  const innerShape = shape.children.get(name!)!
  if (!inner) selection.set(name!, (inner = startOf(innerShape)))
  add(inner, innerShape, rest)
}

function pick(value: unknown, selection: Selection): unknown {
  if (Array.isArray(value)) return value.map((item) => pick(item, selection))
  if (!isObject(value)) return value
  const picked: Schema = {}
  for (const [name, chosen] of selection) picked[name] = chosen === true ? value[name] : pick(value[name], chosen)
  return picked
}

/** What a list answers beside its items, kept whole by a selection. */
const ENVELOPE = new Set(['meta', 'facets'])

/**
 * What `fields` can do on an answer of this schema: a resource (an object with properties) or a
 * list (one array of objects beside its `meta`, and the product list's `facets`), whose items are
 * selected in; undefined when the answer is neither.
 */
export function selectableOf(answer: Schema): Selectable | undefined {
  if (!isObject(answer.properties)) return undefined
  const properties = answer.properties as Record<string, Schema>
  const [listKey, ...others] = Object.keys(properties).filter((name) => !ENVELOPE.has(name))
  const list = others.length === 0 && listKey !== undefined && properties[listKey]!.type === 'array' ? listKey : undefined
  const resource = partial(list === undefined ? answer : properties[list]!)
  if (!resource) return undefined
  const { shape } = resource
  const names = namesOf(shape)
  const known = new Set(names)

  return {
    names,
    list,
    schema: list === undefined ? resource.schema : { ...answer, properties: { ...properties, [list]: resource.schema } },
    parse(text) {
      const asked = text.split(',')
      const unknown = asked.filter((name) => !known.has(name))
      if (unknown.length > 0) {
        const quoted = unknown.map((name) => `'${name}'`).join(', ')
        throw invalidField('fields', `Field 'fields' names unknown fields: ${quoted}. Known: ${names.join(', ')}`)
      }
      const selection = startOf(shape)
      for (const name of asked) add(selection, shape, name.split('.'))
      return selection
    },
    select(answer, selection) {
      if (list === undefined) return pick(answer, selection)
      const envelope = answer as Record<string, unknown>
      return { ...envelope, [list]: pick(envelope[list], selection) }
    },
  }
}
