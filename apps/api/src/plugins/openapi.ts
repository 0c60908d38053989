/** OpenAPI 3.1 generated from the routes' TypeBox schemas, and the reference page at /docs. */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { ErrorBody } from '@commerce/domain'

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

/** The areas of the API, in the reference page's order (every operation has one of these tags). */
const TAGS: { name: string; description: string }[] = [
  { name: 'auth', description: 'Registration, sign-in and the signed-in user' },
  { name: 'users', description: 'User accounts: roles, disabling (admin)' },
  { name: 'products', description: 'The catalogue: products (public reads, admin writes)' },
  { name: 'variants', description: 'Variants of a product' },
  { name: 'images', description: 'Images of a product' },
  { name: 'categories', description: 'Product categories' },
  { name: 'carts', description: 'Carts, their lines, coupons and shipping address' },
  { name: 'checkout', description: 'From a cart to an order' },
  { name: 'orders', description: 'Orders and their state moves' },
  { name: 'payments', description: 'Payments of orders and refunds' },
  { name: 'fulfillments', description: 'Shipments of orders and their tracking' },
  { name: 'shipping', description: 'Shipping rates and methods' },
  { name: 'coupons', description: 'Discount coupons (admin)' },
  { name: 'tax-rates', description: 'Tax rates by country and region (admin)' },
  { name: 'customers', description: 'Customers and their addresses' },
  { name: 'webhooks', description: 'Webhook subscriptions and their deliveries (admin)' },
  { name: 'events', description: 'The event log and the live WebSocket feed' },
  { name: 'system', description: 'Liveness, readiness and metrics, outside /api/v1' },
]

/** Paths the rate limiter never counts (plugins/rate-limit.ts): no rate-limit headers, no 429. */
const UNCOUNTED_PATHS = new Set(['/health', '/ready', '/metrics'])
const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])

const count = (description: string) => ({ description, schema: { type: 'integer', format: 'int32', minimum: 0, maximum: 2_147_483_647 } })
/** Response headers, defined once in components.headers. */
const HEADERS = {
  'X-RateLimit-Limit': count('Requests allowed in the current window for this caller (API key, OAuth client or IP)'),
  'X-RateLimit-Remaining': count('Requests left in the current window'),
  'X-RateLimit-Reset': count('Seconds until the window resets'),
  RateLimit: {
    description:
      'The caller’s policy, requests remaining (r) and seconds until the window resets (t), as a Structured Field ' +
      '(draft-ietf-httpapi-ratelimit-headers-10): `"ip";r=59;t=42`. The policy is "ip", "api_key" or "oauth_client"',
    schema: { type: 'string', maxLength: 64, pattern: '^"[a-z_]+";r=\\d+;t=\\d+$' },
  },
  'RateLimit-Policy': {
    description: 'The caller’s policy: its name, quota (q) and window in seconds (w): `"ip";q=60;w=60`',
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
    description: 'Only when CORS_ORIGINS is set and allows the request’s Origin: that origin, or * (see the README)',
    schema: { type: 'string', maxLength: 2048 },
  },
}
const headerRef = (name: keyof typeof HEADERS) => ({ [name]: { $ref: `#/components/headers/${name}` } })
const ANSWER_HEADERS = {
  ...headerRef('X-RateLimit-Limit'),
  ...headerRef('X-RateLimit-Remaining'),
  ...headerRef('X-RateLimit-Reset'),
  ...headerRef('RateLimit'),
  ...headerRef('RateLimit-Policy'),
  ...headerRef('Access-Control-Allow-Origin'),
}
// Access-Control-Allow-Origin too: on a 5xx these are the only headers declared, and CORS goes on every answer.
const DEPRECATION_HEADERS = { ...headerRef('Deprecation'), ...headerRef('Sunset'), ...headerRef('Link'), ...headerRef('Access-Control-Allow-Origin') }
const ERROR_CONTENT = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } }

interface ResponseObject {
  description?: string
  headers?: Record<string, unknown>
  content?: unknown
}

/**
 * What every operation has in common and the routes do not repeat, written into the document:
 * a 500 (any operation may answer internal_error), the Deprecation, Sunset and Link headers of
 * every answer of a deprecated operation, and on every rate-limited operation the 429
 * with Retry-After and the X-RateLimit-*, RateLimit and RateLimit-Policy (and, when CORS is on,
 * Access-Control-Allow-Origin) headers of its 2xx and 4xx answers; an operationId
 * (method and path, for code generators) where a route has none; the servers marked public
 * (`x-internal: false`: an operator's API for its storefronts, not an internal one).
 */
export function withCommonResponses(document: Record<string, unknown>): Record<string, unknown> {
  for (const server of (document.servers ?? []) as Record<string, unknown>[]) server['x-internal'] ??= false
  const components = (document.components ??= {}) as Record<string, unknown>
  components.headers = { ...HEADERS, ...(components.headers as object | undefined) }
  const paths = (document.paths ?? {}) as Record<
    string,
    Record<string, { operationId?: string; deprecated?: boolean; responses?: Record<string, ResponseObject> }>
  >
  for (const [path, item] of Object.entries(paths)) {
    const counted = !UNCOUNTED_PATHS.has(path)
    for (const [method, operation] of Object.entries(item)) {
      if (!HTTP_METHODS.has(method)) continue
      operation.operationId ??= operationIdOf(method, path)
      const responses = (operation.responses ??= {})
      responses['500'] ??= { description: 'internal_error: an unexpected failure (never with internals)', content: ERROR_CONTENT }
      // A deprecated operation says so on every answer (deprecation.ts).
      if (operation.deprecated) {
        for (const response of Object.values(responses)) response.headers = { ...DEPRECATION_HEADERS, ...response.headers }
      }
      if (!counted) continue
      responses['429'] ??= { description: 'rate_limited: too many requests in the window', content: ERROR_CONTENT }
      for (const [status, response] of Object.entries(responses)) {
        if (!/^[24]/.test(status)) continue
        response.headers = { ...ANSWER_HEADERS, ...(status === '429' ? headerRef('Retry-After') : {}), ...response.headers }
      }
    }
  }
  return document
}

/** `get /api/v1/products/{id}/variants` -> `getProductsIdVariants`. */
function operationIdOf(method: string, path: string): string {
  const words = path
    .replace(/^\/api\/v1(?=\/)/, '')
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
  return method + words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('')
}

export default fp(
  async function openapiPlugin(app: FastifyInstance) {
    app.addSchema({ ...ErrorBody, $id: 'Error' })
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Commerce Service API',
          version: '1.0.0',
          description:
            'Online-store back end. Money is sent and returned as decimal numbers in major units (19.99) and ' +
            'kept exactly as integer minor units. Lists answer { <items>, meta: { page, per_page, total, total_pages } }. ' +
            'Errors answer { error: { code, message, details?, request_id } }.',
        },
        servers: [{ url: '/', description: 'The deployment serving this document (production, staging or local)' }],
        tags: TAGS,
        components: {
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
        'openapiObject' in documentObject ? withCommonResponses(documentObject.openapiObject as Record<string, unknown>) : documentObject.swaggerObject,
      refResolver: {
        buildLocalReference: (json, _baseUri, _fragment, index) => (json.$id as string | undefined) ?? `def-${index}`,
      },
    })
    await app.register(swaggerUi, {
      routePrefix: '/docs',
      // Otherwise the page sends the document's URL to validator.swagger.io for a badge.
      uiConfig: { validatorUrl: null },
      staticCSP: true,
      transformStaticCSP: referencePagePolicy,
    })
    app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  },
  { name: 'openapi' },
)
