/**
 * The OpenAPI document's named schemas and its canonical form. A TypeBox schema with a `title`
 * (Product, CreateProductRequest, …) is defined once, in @commerce/domain or beside its route,
 * and the routes validate with it inline; here every occurrence of it in the document becomes a
 * `$ref` to `components.schemas.<title>`. The document is then put in a stable key order, so the
 * committed openapi.json changes only when the contract does.
 */

type Schema = Record<string, unknown>
type Json = Record<string, unknown>

const HTTP_METHODS = ['get', 'put', 'post', 'patch', 'delete', 'options', 'head', 'trace']

/** Keywords whose value is a schema, a list of schemas, or a map of name -> schema. */
const SCHEMA_VALUES = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties']
const SCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems']
const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'dependentSchemas']

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The schema with each direct subschema replaced by `replace(subschema)` (in place). */
function mapSubschemas(schema: Schema, replace: (schema: Schema) => Schema): Schema {
  for (const key of SCHEMA_VALUES) if (isObject(schema[key])) schema[key] = replace(schema[key])
  for (const key of SCHEMA_LISTS) if (Array.isArray(schema[key])) schema[key] = (schema[key] as Schema[]).map(replace)
  for (const key of SCHEMA_MAPS) {
    const map = schema[key]
    if (isObject(map)) for (const name of Object.keys(map)) map[name] = replace(map[name] as Schema)
  }
  return schema
}

/** Every operation of the document: under `paths` and under `webhooks`. */
export function operationsOf(document: Json): Json[] {
  const items = [...Object.values((document.paths ?? {}) as Json), ...Object.values((document.webhooks ?? {}) as Json)] as Json[]
  return items.flatMap((item) => HTTP_METHODS.filter((method) => isObject(item[method])).map((method) => item[method] as Json))
}

/** Calls `replace` on every top-level schema of the document outside components.schemas and stores its result. */
function replaceTopSchemas(document: Json, replace: (schema: Schema) => Schema): void {
  const withSchema = (holder: unknown) => {
    if (isObject(holder) && isObject(holder.schema)) holder.schema = replace(holder.schema)
  }
  const contents = (holder: unknown) => {
    if (isObject(holder) && isObject(holder.content)) Object.values(holder.content).forEach(withSchema)
  }
  for (const operation of operationsOf(document)) {
    ;((operation.parameters ?? []) as unknown[]).forEach(withSchema)
    contents(operation.requestBody)
    for (const response of Object.values((operation.responses ?? {}) as Json)) {
      contents(response)
      if (isObject(response) && isObject(response.headers)) Object.values(response.headers).forEach(withSchema)
    }
  }
  const components = (document.components ?? {}) as Json
  for (const kind of ['headers', 'parameters']) Object.values((components[kind] ?? {}) as Json).forEach(withSchema)
}

/** Key order that does not depend on how it was built: keys sorted, the first ones given in `first` kept first. */
function sortedKeys(object: Json, first: readonly string[] = []): Json {
  const keys = Object.keys(object)
  const leading = first.filter((key) => keys.includes(key))
  const rest = keys.filter((key) => !leading.includes(key)).sort()
  return Object.fromEntries([...leading, ...rest].map((key) => [key, object[key]]))
}

/**
 * Moves every titled schema into components.schemas under its title and refers to it there,
 * innermost first (a Product's Variant becomes a `$ref` inside the Product component). Two
 * different schemas with one title are a mistake in the schemas: it throws, naming the title.
 */
export function hoistNamedSchemas(document: Json): void {
  const components = (document.components ??= {}) as Json
  const schemas = (components.schemas ??= {}) as Json
  const written = new Map<string, string>()

  const hoist = (schema: Schema): Schema => {
    mapSubschemas(schema, hoist)
    const name = schema.title
    if (typeof name !== 'string') return schema
    const text = JSON.stringify(schema)
    const known = written.get(name)
    if (known === undefined) {
      written.set(name, text)
      schemas[name] = schema
    } else if (known !== text) {
      throw new Error(`Two different schemas are titled '${name}' in the OpenAPI document: give one of them another title`)
    }
    return { $ref: `#/components/schemas/${name}` }
  }

  // Components given whole (the Error schema, the webhook bodies) are named schemas too.
  for (const [name, schema] of Object.entries(schemas)) {
    if ((schema as Schema).title === name) hoist(schema as Schema)
    else mapSubschemas(schema as Schema, hoist)
  }
  replaceTopSchemas(document, hoist)
}

const OPERATION_KEYS = ['operationId', 'summary', 'description', 'tags', 'deprecated', 'security', 'parameters', 'requestBody', 'responses']
const RESPONSE_KEYS = ['description', 'headers', 'content']

/**
 * The document in a stable order: its sections in the usual order; paths, webhooks, methods,
 * status codes and every component map sorted; an operation's and a response's fields in the
 * usual order. Schemas keep their own order (a schema's properties are shown as written).
 */
export function canonicalOrder(document: Json): Json {
  const operation = (value: Json) => {
    const ordered = sortedKeys(value, OPERATION_KEYS)
    const responses = sortedKeys((ordered.responses ?? {}) as Json)
    for (const [status, response] of Object.entries(responses)) {
      if (!isObject(response)) continue
      const sorted = sortedKeys(response, RESPONSE_KEYS)
      if (isObject(sorted.headers)) sorted.headers = sortedKeys(sorted.headers)
      responses[status] = sorted
    }
    return { ...ordered, responses }
  }
  const paths = (map: unknown) =>
    Object.fromEntries(
      Object.entries(sortedKeys((map ?? {}) as Json)).map(([path, item]) => [
        path,
        Object.fromEntries(
          Object.entries(sortedKeys(item as Json, HTTP_METHODS)).map(([key, value]) => [key, HTTP_METHODS.includes(key) ? operation(value as Json) : value]),
        ),
      ]),
    )
  const components = sortedKeys((document.components ?? {}) as Json)
  for (const [kind, map] of Object.entries(components)) components[kind] = sortedKeys(map as Json)
  return sortedKeys(
    { ...document, paths: paths(document.paths), ...(document.webhooks ? { webhooks: paths(document.webhooks) } : {}), components },
    ['openapi', 'info', 'servers', 'tags', 'paths', 'webhooks', 'components'],
  )
}
