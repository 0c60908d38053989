/**
 * Requests per window per caller (60/min per IP by default) with X-RateLimit-* headers and a
 * 429 `rate_limited` carrying Retry-After. X-RateLimit-Reset is seconds until the window resets.
 * Health, readiness and metrics are never counted.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import { ApiError } from '../errors.js'

export interface RateLimitOptions {
  max: number
  windowMs: number
}

const UNCOUNTED = new Set(['/health', '/ready', '/metrics'])

export default fp<RateLimitOptions>(
  async function rateLimitPlugin(app: FastifyInstance, options) {
    await app.register(rateLimit, {
      global: true,
      max: options.max,
      timeWindow: options.windowMs,
      keyGenerator: (request: FastifyRequest) => `ip:${request.ip}`,
      allowList: (request: FastifyRequest) => UNCOUNTED.has(request.routeOptions.url ?? ''),
      errorResponseBuilder: (_request, context) =>
        new ApiError('rate_limited', `Rate limit of ${context.max} requests per ${context.after} exceeded; retry later`),
    })
  },
  { name: 'rate-limit', dependencies: ['auth'] },
)
