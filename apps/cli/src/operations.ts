/**
 * The API's operations as CLI commands, derived from the API contract (openapi.json at the
 * repository root) at build time (scripts/generate-operations.js writes dist/operations.json): a
 * route added to the API gets its command once the contract is regenerated, named by the rules below.
 */

/** How a request field is read from the command line. */
export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'list' | 'json'

export interface Field {
  /** The flag, without dashes (`shipping-address-city`). */
  flag: string
  /** Where the value goes in the request: the query parameter's name or the body path. */
  path: string[]
  kind: FieldKind
  description: string
  required: boolean
  /** A property its object requires: needed whenever the object is sent, even if the object is optional. */
  requiredInObject?: boolean
  /** The field also takes `null` (sent for the flag value `null`). */
  nullable: boolean
  options?: string[]
}

export interface Operation {
  /** oclif command id: topics and verb joined by `:` (`products:variants:create`). */
  id: string
  method: string
  /** OpenAPI path with `{param}` placeholders. */
  path: string
  summary: string
  description: string
  /** Path parameters in order, with the argument name shown in help. */
  args: Array<{ name: string; param: string; description: string }>
  query: Field[]
  /** Null: the operation takes no body. */
  body: Field[] | null
  /** The operation also takes a file as multipart/form-data (`--file`), its body fields then sent as form fields. */
  file: boolean
  /** The operation takes an Idempotency-Key header. */
  idempotent: boolean
  /** False for the OAuth token endpoint: the client authenticates itself, a bearer token is refused. */
  sendsToken: boolean
}

const API_PREFIX = '/api/v1'
/** Flags every API command has; a request field with one of these names would be ambiguous. */
export const RESERVED_FLAGS = ['json', 'base-url', 'token', 'data', 'idempotency-key', 'help']
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const

/**
 * Routes that are not a client's operations: the WebSocket (it has `events tail`), and the
 * payment provider's notifications (only the provider calls them, signed).
 */
// PUT /uploads/{id} takes a browser's file for a presigned upload; the CLI sends files with --file.
const SKIPPED = new Set(['GET /ws', 'POST /payments/webhooks/{provider}', 'PUT /uploads/{id}'])
/** Where the rules' name reads worse than the one DESIGN.md §7 gives. */
const NAMES: Record<string, string> = {
  'GET /auth/me': 'auth:me',
  'GET /orders/{id}/payments': 'payments:list',
  'POST /orders/{id}/payments': 'payments:create',
  'POST /payments/{id}/refunds': 'refunds:create',
  'POST /payments/{id}/capture': 'payments:capture',
  'POST /payments/{id}/cancel': 'payments:cancel',
  'GET /orders/{id}/fulfillments': 'fulfillments:list',
  'POST /orders/{id}/fulfillments': 'fulfillments:create',
  'GET /orders/{id}/returns': 'orders:returns',
  'POST /orders/{id}/returns': 'returns:create',
  'GET /orders/{id}/history': 'orders:history',
  'POST /invoices/lookup': 'invoices:get',
  'POST /invoices/payments': 'invoices:pay',
  'GET /shipping/rates': 'shipping:rates',
  'GET /shipping/tracking/{tracking_number}': 'shipping:tracking',
  'GET /webhooks/{id}/deliveries': 'webhooks:deliveries',
  'GET /exports/{id}/file': 'exports:download',
  'POST /inventory/adjustments': 'inventory:adjust',
  'POST /inventory/transfers': 'inventory:transfer',
  // Members are added to and removed from a group, not created or deleted.
  'POST /customer-groups/{id}/customers': 'customer-groups:customers:add',
  'DELETE /customer-groups/{id}/customers/{customer_id}': 'customer-groups:customers:remove',
  // A batch of prices replaces the amounts of those it already has.
  'POST /price-lists/{id}/prices': 'price-lists:prices:upsert',
  'POST /products/{id}/prices': 'products:prices:upsert',
  'GET /notifications/settings': 'notifications:settings:get',
  'PATCH /notifications/settings': 'notifications:settings:update',
  // `users …` are the database commands (no token needed); the same over the API is `accounts …`.
  'GET /users': 'accounts:list',
  'GET /users/{id}': 'accounts:get',
  'PATCH /users/{id}': 'accounts:update',
}
const TOPIC_NAMES: Record<string, string> = { checkouts: 'checkout' }

const VERBS_ON_ITEM: Record<string, string> = { get: 'get', patch: 'update', put: 'set', delete: 'delete' }
const VERBS_ON_COLLECTION: Record<string, string> = { get: 'list', post: 'create', put: 'set', delete: 'delete' }

type Schema = Record<string, unknown>
interface Parameter {
  in: string
  name: string
  required?: boolean
  description?: string
  schema?: Schema
}
/** A parameter defined once in components.parameters; its own description, if any, wins (OpenAPI 3.1). */
interface ParameterReference {
  $ref: string
  description?: string
}
interface OpenApiOperation {
  /** Deprecated operations (aliases kept until their sunset) get no command. */
  deprecated?: boolean
  summary?: string
  description?: string
  security?: Array<Record<string, unknown>>
  parameters?: Array<Parameter | ParameterReference>
  requestBody?: { content?: Record<string, { schema?: Schema }> }
}
export interface OpenApiDocument {
  paths: Record<string, Partial<Record<(typeof METHODS)[number], OpenApiOperation>>>
  components?: { schemas?: Record<string, Schema>; parameters?: Record<string, Parameter> }
}

const isParam = (segment: string) => segment.startsWith('{')
const singular = (word: string) => word.replace(/ies$/, 'y').replace(/(ss|sh|ch|x)es$/, '$1').replace(/s$/, '')
const kebab = (name: string) => name.replace(/_/g, '-')

/** The command id of one route, by the naming rules (see the README's command reference). */
function commandId(method: string, path: string, paths: readonly string[], hasGet: boolean): string {
  const named = NAMES[`${method.toUpperCase()} ${path}`]
  if (named) return named
  const segments = path.split('/').filter(Boolean)
  const last = segments.at(-1)!
  const nouns = segments.filter((segment) => !isParam(segment)).map((noun, index) => (index === 0 ? (TOPIC_NAMES[noun] ?? noun) : noun))
  let verb: string | undefined
  // `me` stands for the caller's own record: an item, like `{id}`.
  if (isParam(last) || last === 'me') verb = VERBS_ON_ITEM[method]
  else if (hasGet || paths.some((other) => other.startsWith(`${path}/{`))) verb = VERBS_ON_COLLECTION[method]
  else if (method === 'put') verb = 'set'
  else {
    // An action: POST /orders/{id}/cancel is `orders cancel`.
    nouns.pop()
    verb = last
  }
  if (!verb) throw new Error(`No command name for ${method.toUpperCase()} ${path}: add it to NAMES`)
  return [...nouns, verb].join(':')
}

function resolve(document: OpenApiDocument, schema: Schema | undefined): Schema {
  let current = schema ?? {}
  while (typeof current.$ref === 'string') {
    const name = current.$ref.replace('#/components/schemas/', '')
    current = document.components?.schemas?.[name] ?? {}
  }
  return current
}

function parameterOf(document: OpenApiDocument, parameter: Parameter | ParameterReference): Parameter {
  if (!('$ref' in parameter)) return parameter
  const shared = document.components?.parameters?.[parameter.$ref.replace('#/components/parameters/', '')]
  if (!shared) throw new Error(`The parameter ${parameter.$ref} is not in the document`)
  return { ...shared, description: parameter.description ?? shared.description }
}

/** A schema without its `null` alternative, and whether it had one. */
function withoutNull(document: OpenApiDocument, schema: Schema): { schema: Schema; nullable: boolean } {
  const resolved = resolve(document, schema)
  const anyOf = resolved.anyOf as Schema[] | undefined
  if (!anyOf) return { schema: resolved, nullable: false }
  const others = anyOf.filter((option) => resolve(document, option).type !== 'null')
  return { schema: others.length === 1 ? resolve(document, others[0]) : resolved, nullable: others.length < anyOf.length }
}

function scalarKind(schema: Schema): FieldKind | undefined {
  if (Array.isArray(schema.enum)) return 'string'
  if (schema.type === 'string' || schema.type === 'number' || schema.type === 'integer' || schema.type === 'boolean') return schema.type
  return undefined
}

function describe(schema: Schema, fallback?: string): string {
  const text = (schema.description as string | undefined) ?? fallback ?? ''
  const examples = schema.examples as unknown[] | undefined
  return examples?.length ? `${text}${text ? ' ' : ''}(e.g. ${String(examples[0])})`.trim() : text
}

/**
 * One field as flags: scalars and lists of scalars as they are; an object of scalars (an address,
 * a payment) as one flag per property (`--shipping-address-city`); anything deeper as JSON.
 */
function fieldsOf(document: OpenApiDocument, name: string, schema: Schema, required: boolean, prefix: string[] = []): Field[] {
  const { schema: inner, nullable } = withoutNull(document, schema)
  const path = [...prefix, name]
  const base = { flag: kebab(path.join('-')), path, required, nullable, description: describe(inner, describe(resolve(document, schema))) }
  const kind = scalarKind(inner)
  if (kind) return [{ ...base, kind, ...(Array.isArray(inner.enum) ? { options: inner.enum.map(String) } : {}) }]
  if (inner.type === 'array' && scalarKind(resolve(document, inner.items as Schema))) return [{ ...base, kind: 'list' }]
  const properties = inner.properties as Record<string, Schema> | undefined
  if (inner.type === 'object' && properties && prefix.length === 0) {
    const flat = Object.values(properties).every((property) => scalarKind(withoutNull(document, property).schema))
    if (flat) {
      const requiredProperties = new Set((inner.required as string[] | undefined) ?? [])
      return Object.entries(properties).flatMap(([property, propertySchema]) =>
        fieldsOf(document, property, propertySchema, required && requiredProperties.has(property), path).map((field) =>
          requiredProperties.has(property) ? { ...field, requiredInObject: true } : field,
        ),
      )
    }
  }
  return [{ ...base, kind: 'json', description: `${base.description}${base.description ? ' ' : ''}(JSON)` }]
}

function argName(segments: string[], index: number): string {
  const param = segments[index]!.slice(1, -1)
  return param === 'id' ? `${singular(segments[index - 1]!).replace(/-/g, '_')}_id` : param
}

/** Every operation under /api/v1 as a command (deprecated ones left out); throws on names that collide. */
export function deriveOperations(document: OpenApiDocument): Operation[] {
  const routes = Object.keys(document.paths)
    .filter((path) => path.startsWith(`${API_PREFIX}/`))
    .map((path) => path.slice(API_PREFIX.length))
  const operations: Operation[] = []
  for (const path of routes) {
    const item = document.paths[`${API_PREFIX}${path}`]!
    for (const method of METHODS) {
      const operation = item[method]
      if (!operation || operation.deprecated || SKIPPED.has(`${method.toUpperCase()} ${path}`)) continue
      const segments = path.split('/').filter(Boolean)
      const parameters = (operation.parameters ?? []).map((parameter) => parameterOf(document, parameter))
      const query = parameters
        .filter((parameter) => parameter.in === 'query')
        .flatMap((parameter) => fieldsOf(document, parameter.name, { description: parameter.description, ...parameter.schema }, parameter.required ?? false))
      const bodySchema = operation.requestBody?.content?.['application/json']?.schema
      let body: Field[] | null = null
      if (bodySchema) {
        const resolved = resolve(document, bodySchema)
        const required = new Set((resolved.required as string[] | undefined) ?? [])
        // A field named like a common flag takes the resource's name: POST /orders/{id}/payments {token} is --payment-token.
        const resource = singular(segments.filter((segment) => !isParam(segment)).at(-1)!)
        body = Object.entries((resolved.properties as Record<string, Schema> | undefined) ?? {})
          .flatMap(([name, schema]) => fieldsOf(document, name, schema, required.has(name)))
          .map((field) => (RESERVED_FLAGS.includes(field.flag) ? { ...field, flag: `${resource}-${field.flag}` } : field))
      }
      const flags = [...query, ...(body ?? [])].map((field) => field.flag)
      const clash = flags.find((flag, index) => RESERVED_FLAGS.includes(flag) || flags.indexOf(flag) !== index)
      if (clash) throw new Error(`${method.toUpperCase()} ${path}: the flag --${clash} is taken twice`)
      operations.push({
        id: commandId(method, path, routes, Boolean(item.get)),
        method: method.toUpperCase(),
        path: `${API_PREFIX}${path}`,
        summary: operation.summary ?? '',
        description: operation.description ?? '',
        args: segments.flatMap((segment, index) =>
          isParam(segment)
            ? [{ name: argName(segments, index), param: segment.slice(1, -1), description: parameters.find((p) => p.in === 'path' && `{${p.name}}` === segment)?.description ?? '' }]
            : [],
        ),
        query,
        body,
        file: Boolean(operation.requestBody?.content?.['multipart/form-data']),
        idempotent: parameters.some((parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === 'idempotency-key'),
        sendsToken: !(operation.security ?? []).some((requirement) => 'clientBasic' in requirement),
      })
    }
  }
  const ids = operations.map((operation) => operation.id)
  const duplicate = ids.find((id, index) => ids.indexOf(id) !== index)
  if (duplicate) throw new Error(`Two operations are both \`${duplicate.replace(/:/g, ' ')}\`: add one to NAMES`)
  return operations
}
