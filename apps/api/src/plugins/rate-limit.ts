/**
 * Requests per window per caller with X-RateLimit-* headers and a 429 `rate_limited` carrying
 * Retry-After: per API key when a valid one was presented (its own figure, else `apiKeyMax`), per
 * OAuth client for a valid access token (`apiKeyMax`), otherwise per IP (`max`).
 * X-RateLimit-Reset is seconds until the window resets. Health, readiness and metrics are never
 * counted.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import { ApiError } from '../errors.js'

export interface RateLimitOptions {
  max: number
  apiKeyMax: number
  windowMs: number
}

const UNCOUNTED = new Set(['/health', '/ready', '/metrics'])

export default fp<RateLimitOptions>(
  async function rateLimitPlugin(app: FastifyInstance, options) {
    await app.register(rateLimit, {
      // One global hook (below) instead of one per route: it then runs before every route's access
      // guard (plugins/access.ts), so refused requests count too, and it covers unknown routes.
      global: false,
      // The auth plugin identified the caller in an earlier onRequest hook without rejecting: a bad
      // or forged key has no principal, so it counts against the IP at the IP's limit.
      max: (request: FastifyRequest) => {
        const principal = request.principal
        if (principal?.kind === 'api_key') return principal.rateLimitPerMinute ?? options.apiKeyMax
        return principal?.kind === 'oauth_client' ? options.apiKeyMax : options.max
      },
      timeWindow: options.windowMs,
      keyGenerator: (request: FastifyRequest) => {
        const principal = request.principal
        if (principal?.kind === 'api_key') return `api_key:${principal.keyId}`
        return principal?.kind === 'oauth_client' ? `oauth_client:${principal.clientId}` : `ip:${request.ip}`
      },
      allowList: (request: FastifyRequest) => UNCOUNTED.has(request.routeOptions.url ?? ''),
      errorResponseBuilder: (_request, context) =>
        new ApiError('rate_limited', `Rate limit of ${context.max} requests per ${context.after} exceeded; retry later`),
    })
    app.addHook('onRequest', app.rateLimit())
  },
  { name: 'rate-limit', dependencies: ['auth'] },
)
