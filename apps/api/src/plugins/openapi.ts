/** OpenAPI 3.1 generated from the routes' TypeBox schemas, and the reference page at /docs. */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { Type } from 'typebox'
import { ErrorBody } from '@commerce/domain'
import { SYSTEM_PATHS } from '../routes/system/routes.js'
import { ERROR_STATUS, type ErrorCode } from '../errors.js'
import { isStoredStatus } from '../idempotency.js'
import { canonicalOrder, hoistNamedSchemas, operationsOf } from '../openapi/components.js'
import { addWebhooks, WEBHOOK_SCHEMAS } from '../openapi/webhooks.js'
import { shareFieldsParameter } from './field-selection.js'
import { SECURITY_HEADER_PURPOSES, securityHeaders } from './security-headers.js'

/**
 * The reference page's Content-Security-Policy: swagger-ui's own (`staticCSP: true`, which carries
 * the hashes of any inline script or style its version needs), tightened. Every other response
 * has the API's policy (plugins/security-headers.ts); this one replaces it on /docs only.
 */
export function referencePagePolicy(swaggerUiPolicy: string): string {
  const directives = new Map(
    swaggerUiPolicy
      .split(';')
      .map((directive) => directive.trim().split(/\s+/))
      .filter(([name]) => name)
      .map(([name, ...values]) => [name!, values]),
  )
  // Served over plain HTTP in development: upgrading its assets to https would break the page
  // there (Safari upgrades even on localhost). HSTS upgrades the whole origin in production.
  directives.delete('upgrade-insecure-requests')
  // Its CSS uses only data: URLs and ships no web fonts: no stylesheet or font from any https: host.
  for (const name of ['style-src', 'font-src']) {
    directives.set(name, (directives.get(name) ?? ["'self'"]).filter((source) => source !== 'https:'))
  }
  // No validator badge (validatorUrl: null), so no image from validator.swagger.io.
  directives.set('img-src', ["'self'", 'data:'])
  // The page fetches the document and "Try it out" calls from its own origin only.
  directives.set('connect-src', ["'self'"])
  directives.set('form-action', ["'self'"])
  directives.set('frame-ancestors', ["'none'"])
  return [...directives].map(([name, values]) => [name, ...values].join(' ')).join('; ')
}

/** The little of swagger-ui's plugin interface the reference page's plugin uses (Immutable.js values). */
interface SecurityRequirements {
  some(test: (requirement: { isEmpty(): boolean }) => boolean): boolean
}
interface OperationProps {
  get(key: 'security'): SecurityRequirements | undefined
  set(key: 'isAuthorized', value: boolean): OperationProps
}
interface SwaggerUiSystem {
  React: { createElement(type: unknown, props: object | null, ...children: unknown[]): unknown }
  layoutActions: { parseDeepLinkHash(hash: string): void }
}
/** Immutable.js values: the tagged operations (tag -> { operations }) and an operation's entry (method, path, operation). */
interface ImmutableMap {
  get(key: string): unknown
  getIn(path: string[]): unknown
  set(key: string, value: unknown): ImmutableMap
}
interface ImmutableCollection<V> {
  map<W>(change: (value: V, key: string) => W): ImmutableCollection<W>
  filter(keep: (value: V) => boolean): ImmutableCollection<V>
  readonly size: number
}
/** The browser's window, as much of it as the plugin uses (the API's own code has no DOM types). */
interface BrowserWindow {
  location: { hash: string }
  addEventListener(type: 'hashchange', listener: () => void): void
}

/**
 * The reference page's swagger-ui plugin. It runs in the browser: @fastify/swagger-ui sends it as
 * its source text (the function's toString), so it may use only its argument.
 * - The padlock of an operation says who may call it: closed when a credential is required, open
 *   when anyone may (`security` lists `{}`; a credential, when sent, may show more). swagger-ui's
 *   own padlock shows whether the request would carry a credential, and counts an operation open
 *   to anyone as authorized: the public ones showed a closed lock, the others an open one.
 * - The top bar names the API instead of showing swagger-ui's logo, an SVG with an inline
 *   `<style>` that the page's Content-Security-Policy (no 'unsafe-inline') refuses.
 * - The filter box keeps the operations whose tag, method, path, operation id or summary hold
 *   every word typed (swagger-ui's own matches a tag or a path only): past 150 operations the
 *   page renders only what is scrolled into view, so the browser's find does not reach the rest.
 * - A link to an operation (`#/checkout/completeCheckout`) opens it when followed on the open
 *   page too: swagger-ui reads the fragment once, when the page loads.
 */
export function referencePagePlugin(system: SwaggerUiSystem) {
  const { createElement } = system.React
  return {
    afterLoad() {
      const browser = globalThis as unknown as BrowserWindow
      browser.addEventListener('hashchange', () => system.layoutActions.parseDeepLinkHash(decodeURIComponent(browser.location.hash)))
    },
    fn: {
      opsFilter(taggedOperations: ImmutableCollection<ImmutableMap>, phrase: string) {
        const words = phrase.toLowerCase().split(/\s+/).filter(Boolean)
        const matches = (tag: string, entry: ImmutableMap) => {
          const text = [tag, entry.get('method'), entry.get('path'), entry.getIn(['operation', 'operationId']), entry.getIn(['operation', 'summary'])].join(' ').toLowerCase()
          return words.every((word) => text.includes(word))
        }
        return taggedOperations
          .map((tagged, tag) => {
            const operations = (tagged.get('operations') as ImmutableCollection<ImmutableMap>).filter((entry) => matches(tag, entry))
            return operations.size ? tagged.set('operations', operations) : null
          })
          .filter((tagged) => tagged !== null)
      },
    },
    components: {
      Logo: () => createElement('span', { className: 'commerce-reference-title' }, 'Commerce Service API'),
    },
    wrapComponents: {
      OperationSummary:
        (Original: unknown) =>
        (props: { operationProps: OperationProps }) => {
          const security = props.operationProps.get('security')
          const open = !security || security.some((requirement) => requirement.isEmpty())
          return createElement(Original, { ...props, operationProps: props.operationProps.set('isAuthorized', !open) })
        },
    },
  }
}

/** swagger-ui's DownloadUrl plugin, the page's default (loads the document); in the browser, as referencePagePlugin. */
function downloadUrlPlugin(system: SwaggerUiSystem) {
  return (globalThis as unknown as { SwaggerUIBundle: { plugins: { DownloadUrl(system: SwaggerUiSystem): object } } }).SwaggerUIBundle.plugins.DownloadUrl(system)
}

/** The areas of the API, in the reference page's order (every operation has one of these tags). */
const TAGS: { name: string; description: string }[] = [
  { name: 'auth', description: 'Registration, sign-in and the signed-in user' },
  { name: 'users', description: 'User accounts: roles, disabling (admin)' },
  { name: 'products', description: 'The catalogue: products (public reads, admin writes)' },
  { name: 'variants', description: 'Variants of a product' },
  { name: 'images', description: 'Images of a product' },
  { name: 'categories', description: 'Product categories' },
  { name: 'collections', description: 'Collections of products: by hand, or by rules kept current as the catalog changes' },
  { name: 'attributes', description: 'Custom attributes of products and variants: their definitions (values live on the products)' },
  { name: 'carts', description: 'Carts, their lines, coupons and shipping address' },
  { name: 'checkout', description: 'From a cart to an order' },
  { name: 'orders', description: 'Orders and their state moves' },
  { name: 'payments', description: 'Payments of orders and refunds' },
  { name: 'fulfillments', description: 'Shipments of orders and their tracking' },
  { name: 'returns', description: 'Returns of shipped units: request, approval, receipt, restock and refund' },
  { name: 'draft-orders', description: 'Orders an admin builds for a customer, completed or paid through a link (admin)' },
  { name: 'invoices', description: 'A draft order’s payment link, as its public page reads and pays it' },
  { name: 'shipping', description: 'Shipping rates and methods' },
  { name: 'stock-locations', description: 'Places that hold stock: warehouses, stores (admin)' },
  { name: 'inventory', description: 'Stock levels per location, adjustments, transfers and the movement log (admin)' },
  { name: 'coupons', description: 'Discount coupons (admin)' },
  { name: 'price-lists', description: 'Prices beyond a product’s own: price lists, and products’ base prices per currency and quantity (admin)' },
  { name: 'promotions', description: 'Promotions, automatic or by code (coupons included), and their uses (admin)' },
  { name: 'campaigns', description: 'Campaigns: promotions grouped under a period and a budget (admin)' },
  { name: 'tax-rates', description: 'Tax rates by country and region (admin)' },
  { name: 'customers', description: 'Customers and their addresses' },
  { name: 'customer-groups', description: 'Groups of customers that price lists and promotions can be limited to (admin)' },
  { name: 'exports', description: 'CSV files of products, customers and orders, written in the background (docs/csv.md)' },
  { name: 'imports', description: 'Products and customers from CSV files: a dry run, then batches with a report per row (docs/csv.md)' },
  { name: 'webhooks', description: 'Webhook subscriptions and their deliveries (admin)' },
  { name: 'notifications', description: 'Emails to customers: the log, resending, which kinds are sent (admin)' },
  { name: 'events', description: 'The event log and the live WebSocket feed' },
  { name: 'system', description: 'Liveness, readiness and metrics, outside /api/v1' },
]

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])

const count = (description: string) => ({ description, schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 2_147_483_647 } })
/** Said of each rate-limit header: a request the limit could not count (plugins/rate-limit.ts) has none. */
const UNCOUNTED =
  '. Absent when the request was not counted: with REDIS_URL, while Redis cannot be reached the limit fails open and the ' +
  'request is served without a limit (see docs/api-conventions.md in the repository)'
/** Response headers, defined once in components.headers. */
const HEADERS = {
  'X-RateLimit-Limit': count('Requests allowed in the current window for this caller (API key, OAuth client or IP)' + UNCOUNTED),
  'X-RateLimit-Remaining': count('Requests left in the current window' + UNCOUNTED),
  'X-RateLimit-Reset': count('Seconds until the window resets' + UNCOUNTED),
  RateLimit: {
    description:
      'The caller’s policy, requests remaining (r) and seconds until the window resets (t), as a Structured Field ' +
      '(draft-ietf-httpapi-ratelimit-headers-10): `"ip";r=59;t=42`. The policy is "ip", "api_key" or "oauth_client"' +
      UNCOUNTED,
    schema: { type: 'string', maxLength: 64, pattern: '^"[a-z_]+";r=\\d+;t=\\d+$' },
  },
  'RateLimit-Policy': {
    description: 'The caller’s policy: its name, quota (q) and window in seconds (w): `"ip";q=60;w=60`' + UNCOUNTED,
    schema: { type: 'string', maxLength: 64, pattern: '^"[a-z_]+";q=\\d+;w=\\d+$' },
  },
  'Retry-After': count('Seconds to wait before retrying'),
  Deprecation: {
    description: 'On a deprecated operation: since when, as `@` and seconds since the epoch (RFC 9745)',
    schema: { type: 'string', maxLength: 24, pattern: '^@\\d+$' },
  },
  Sunset: {
    description: 'On a deprecated operation: the HTTP date from which it may stop answering (RFC 8594)',
    schema: { type: 'string', maxLength: 40 },
  },
  Link: {
    description: 'On a deprecated operation: the operation to use instead, `<path>; rel="successor-version"`',
    schema: { type: 'string', maxLength: 2048 },
  },
  'Access-Control-Allow-Origin': {
    description: 'Only when CORS_ORIGINS is set and allows the request’s Origin: that origin, or * (see docs/api-conventions.md in the repository)',
    schema: { type: 'string', maxLength: 2048 },
  },
  'X-Request-Id': {
    description:
      'The request’s id, as in the logs and in an error’s `request_id`: the X-Request-Id the request sent when it is 1–128 ' +
      'letters, digits, `_`, `.`, `:` or `-`, else a new UUID',
    schema: { type: 'string', maxLength: 128 },
  },
  'Idempotent-Replayed': {
    description:
      'On an operation that takes an Idempotency-Key: `true` when this answer is the stored answer of an earlier request ' +
      'with the same key (replayed, nothing done again); absent otherwise',
    schema: { type: 'string', const: 'true' },
  },
}
/** The security headers (plugins/security-headers.ts), each with the one value it is sent with. */
const SECURITY_HEADERS = Object.fromEntries(
  Object.entries(securityHeaders()).map(([name, value]) => [name, { description: SECURITY_HEADER_PURPOSES[name], schema: { type: 'string', const: value } }]),
)
const headerRef = (name: keyof typeof HEADERS | keyof typeof SECURITY_HEADERS) => ({ [name]: { $ref: `#/components/headers/${name}` } })
/** On every answer: set by the first onRequest hooks (app.ts, plugins/cors.ts, plugins/security-headers.ts), so refusals and 5xx carry them too. */
const EVERY_ANSWER_HEADERS = Object.assign({ ...headerRef('X-Request-Id'), ...headerRef('Access-Control-Allow-Origin') }, ...Object.keys(SECURITY_HEADERS).map(headerRef))
const RATE_LIMIT_HEADERS = {
  ...headerRef('X-RateLimit-Limit'),
  ...headerRef('X-RateLimit-Remaining'),
  ...headerRef('X-RateLimit-Reset'),
  ...headerRef('RateLimit'),
  ...headerRef('RateLimit-Policy'),
}
const DEPRECATION_HEADERS = { ...headerRef('Deprecation'), ...headerRef('Sunset'), ...headerRef('Link') }
const ERROR_CONTENT = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } }
/** What any operation that takes a body may answer before its route runs (plugins/errors.ts, app.ts bodyLimit). */
const BODY_REFUSALS: Record<string, ResponseObject> = {
  '413': { description: 'payload_too_large: the body is larger than 1 MiB', content: ERROR_CONTENT },
  '415': { description: 'unsupported_media_type: the body is not application/json', content: ERROR_CONTENT },
}

interface ResponseObject {
  description?: string
  headers?: Record<string, unknown>
  content?: unknown
}
interface ParameterObject {
  in: string
  name: string
  required?: boolean
  schema?: { examples?: unknown[] }
  example?: unknown
  examples?: Record<string, { value?: unknown }>
}
interface OperationObject {
  operationId?: string
  deprecated?: boolean
  parameters?: ParameterObject[]
  requestBody?: unknown
  responses?: Record<string, ResponseObject>
  'x-idempotency-not-stored'?: number[]
  'x-multipart-body'?: unknown
  'x-raw-body'?: { contentTypes: string[]; description: string }
}

/**
 * What every operation has in common and the routes do not repeat, written into the document:
 * a 500 (any operation may answer internal_error) and a 431 (nor is any safe from a URL over
 * 16 KiB); 413 and 415 on every operation that takes a
 * body; X-Request-Id, the security headers (and, when CORS is on, Access-Control-Allow-Origin)
 * on every answer but a WebSocket's 101;
 * Idempotent-Replayed on the answers an Idempotency-Key stores (idempotency.ts); the
 * Deprecation, Sunset and Link headers of every answer of a deprecated operation, and on every
 * rate-limited operation the 429 with Retry-After and the X-RateLimit-*, RateLimit and
 * RateLimit-Policy headers of its 2xx and 4xx answers; the servers marked public
 * (`x-internal: false`: an operator's API for its storefronts, not an internal one).
 */
export function withCommonResponses(document: Record<string, unknown>): Record<string, unknown> {
  for (const server of (document.servers ?? []) as Record<string, unknown>[]) server['x-internal'] ??= false
  const components = (document.components ??= {}) as Record<string, unknown>
  components.headers = { ...HEADERS, ...SECURITY_HEADERS, ...(components.headers as object | undefined) }
  const paths = (document.paths ?? {}) as Record<string, Record<string, OperationObject>>
  for (const [path, item] of Object.entries(paths)) {
    // The rate limiter never counts the system paths: no rate-limit headers, no 429.
    const counted = !SYSTEM_PATHS.has(path)
    for (const [method, operation] of Object.entries(item)) {
      if (!HTTP_METHODS.has(method)) continue
      const responses = (operation.responses ??= {})
      // The route's own answers that an Idempotency-Key stores may be replays (idempotency.ts).
      if ((operation.parameters ?? []).some((parameter) => parameter.in === 'header' && parameter.name === 'idempotency-key')) {
        // A route names the answers it never stores (`x-idempotency-not-stored`: the checkout completion's 200 and 202).
        const notStored = new Set(operation['x-idempotency-not-stored']?.map(String))
        for (const [status, response] of Object.entries(responses)) {
          if (isStoredStatus(Number(status)) && !notStored.has(status)) response.headers = { ...headerRef('Idempotent-Replayed'), ...response.headers }
        }
      }
      responses['500'] ??= { description: 'internal_error: an unexpected failure (never with internals)', content: ERROR_CONTENT }
      responses['431'] ??= { description: 'request_header_fields_too_large: the URL and headers exceed 16 KiB', content: ERROR_CONTENT }
      if (operation.requestBody) for (const [status, response] of Object.entries(BODY_REFUSALS)) responses[status] ??= { ...response }
      // A deprecated operation says so on every answer (deprecation.ts).
      if (operation.deprecated) {
        for (const response of Object.values(responses)) response.headers = { ...DEPRECATION_HEADERS, ...response.headers }
      }
      if (counted) {
        responses['429'] ??= { description: 'rate_limited: too many requests in the window', content: ERROR_CONTENT }
        for (const [status, response] of Object.entries(responses)) {
          // A 431 is answered before the rate limit counts the request.
          if (!/^[24]/.test(status) || status === '431') continue
          response.headers = { ...RATE_LIMIT_HEADERS, ...(status === '429' ? headerRef('Retry-After') : {}), ...response.headers }
        }
      }
      // A WebSocket handshake's 101 is written by the ws library, with the upgrade's headers only.
      for (const [status, response] of Object.entries(responses)) {
        if (status !== '101') response.headers = { ...EVERY_ANSWER_HEADERS, ...response.headers }
      }
    }
  }
  return document
}

/**
 * The bodies the routes read themselves, which Fastify's JSON schema does not describe: a file sent
 * as multipart/form-data beside the JSON body (`x-multipart-body`), or a file as the whole body
 * (`x-raw-body`).
 */
function withFileBodies(document: Record<string, unknown>): Record<string, unknown> {
  for (const item of Object.values((document.paths ?? {}) as Record<string, Record<string, OperationObject>>)) {
    for (const operation of Object.values(item)) {
      const form = operation['x-multipart-body']
      if (form) {
        const body = (operation.requestBody ??= { content: {} }) as { content: Record<string, unknown> }
        body.content['multipart/form-data'] = { schema: form }
        delete operation['x-multipart-body']
      }
      const raw = operation['x-raw-body']
      if (raw) {
        const file = { schema: { type: 'string', format: 'binary' } }
        // Beside a multipart form when the route takes both.
        const content = form ? (operation.requestBody as { content: Record<string, unknown> }).content : {}
        operation.requestBody = { required: true, description: raw.description, content: { ...content, ...Object.fromEntries(raw.contentTypes.map((type) => [type, file])) } }
        delete operation['x-raw-body']
      }
    }
  }
  return document
}

/**
 * An optional parameter's examples move into its schema (JSON Schema's `examples`). "Try it out" on
 * the reference page fills a parameter with its `example`, or with the first of its `examples`,
 * and sends it: a newcomer's first GET /products asked for French (locale=fr-CA). A schema's
 * `examples` it does not fill. A required parameter keeps its example: the request needs a value.
 */
function withOptionalParametersUnfilled(document: Record<string, unknown>): void {
  const components = (document.components ?? {}) as { parameters?: Record<string, ParameterObject> }
  const parameters = [...operationsOf(document).flatMap((operation) => (operation.parameters ?? []) as ParameterObject[]), ...Object.values(components.parameters ?? {})]
  for (const parameter of parameters) {
    if (parameter.required || !parameter.schema) continue
    const examples = [
      ...(parameter.example === undefined ? [] : [parameter.example]),
      ...Object.values(parameter.examples ?? {}).map((example) => example.value),
    ].filter((value) => value !== undefined)
    if (examples.length) parameter.schema.examples = [...new Set([...(parameter.schema.examples ?? []), ...examples])]
    delete parameter.example
    delete parameter.examples
  }
}

/** The Error schema, its `code` one of errors.ts's table, each with its status in the description. */
function errorSchema() {
  const error = ErrorBody.properties.error
  const statuses = Object.entries(ERROR_STATUS).map(([code, status]) => `${code} (${status})`)
  const code = Type.Enum(Object.keys(ERROR_STATUS) as ErrorCode[], { description: `What went wrong, with its HTTP status: ${statuses.join(', ')}.` })
  return {
    ...ErrorBody,
    $id: 'Error',
    title: 'Error',
    description: 'The body of every error answer',
    properties: { error: { ...error, properties: { ...error.properties, code } } },
  }
}

/** The document as served and committed (openapi.json): common answers, webhooks, the shared `fields`, examples the page does not fill in, named schemas, a stable order. */
function finishDocument(built: Record<string, unknown>): Record<string, unknown> {
  // A copy: @fastify/swagger's document shares objects with the routes' schemas.
  const document = withCommonResponses(withFileBodies(JSON.parse(JSON.stringify(built)) as Record<string, unknown>))
  shareFieldsParameter(document)
  addWebhooks(document)
  withOptionalParametersUnfilled(document)
  hoistNamedSchemas(document)
  return canonicalOrder(document)
}

export default fp(
  async function openapiPlugin(app: FastifyInstance) {
    app.addSchema(errorSchema())
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Commerce Service API',
          version: '1.0.0',
          description:
            'Online-store back end. Money is sent and returned as decimal numbers in major units (19.99) and ' +
            'kept exactly as integer minor units. Lists answer `{ <items>: [...], meta: { page, per_page, total, total_pages } }`. ' +
            'Errors answer `{ error: { code, message, details?, request_id } }`. On the reference page (/docs) a closed ' +
            'padlock marks an operation that needs a credential, an open one an operation anyone may call; the filter box ' +
            'keeps the operations whose tag, method, path, operation id or summary hold every word typed, and ' +
            '`/docs#/<tag>/<operationId>` links to an operation.',
        },
        servers: [
          {
            url: '{origin}',
            description: 'A deployment of the service: every path starts with its origin (production, staging or local)',
            variables: {
              origin: {
                default: 'http://localhost:3000',
                description: 'The deployment’s scheme, host and port, without a trailing slash (https:// outside development)',
              },
            },
          },
        ],
        tags: TAGS,
        components: {
          schemas: WEBHOOK_SCHEMAS,
          securitySchemes: {
            bearerAuth: {
              type: 'http',
              scheme: 'bearer',
              description: 'A JWT from /api/v1/auth/login or /api/v1/oauth/token, or an API key',
            },
            clientBasic: { type: 'http', scheme: 'basic', description: 'An OAuth client: client_id and client_secret' },
          },
        },
      },
      transformObject: (documentObject) =>
        'openapiObject' in documentObject ? finishDocument(documentObject.openapiObject as Record<string, unknown>) : documentObject.swaggerObject,
      refResolver: {
        buildLocalReference: (json, _baseUri, _fragment, index) => (json.$id as string | undefined) ?? `def-${index}`,
      },
    })
    await app.register(swaggerUi, {
      routePrefix: '/docs',
      // No validator: otherwise the page sends the document's URL to validator.swagger.io for a badge.
      // A filter box, and a link per operation (`/docs#/<tag>/<operationId>`) that opens it.
      // Our plugin, and the page's default one (DownloadUrl) that a list of plugins replaces.
      uiConfig: { validatorUrl: null, filter: true, deepLinking: true, plugins: [downloadUrlPlugin, referencePagePlugin] },
      // No logo put over the top bar's (Fastify's by default), which then shows our plugin's title.
      // Its types allow only a logo object; the plugin itself takes null for none.
      logo: null as unknown as undefined,
      staticCSP: true,
      transformStaticCSP: referencePagePolicy,
      // "Try it out" calls the deployment serving the page, not the document's default origin.
      transformSpecification: (document) => ({ ...document, servers: [{ url: '/', description: 'This deployment' }] }),
      transformSpecificationClone: false,
    })
    app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  },
  { name: 'openapi' },
)
