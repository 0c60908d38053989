/**
 * Requests per window per caller with X-RateLimit-* headers and a 429 `rate_limited` carrying
 * Retry-After: per API key when a valid one was presented (its own figure, else `apiKeyMax`), per
 * OAuth client for a valid access token (`apiKeyMax`), otherwise per IP (`max`).
 * X-RateLimit-Reset is seconds until the window resets. The same figures go out as the IETF
 * fields of draft-ietf-httpapi-ratelimit-headers-10 too: `RateLimit-Policy: "ip";q=60;w=60` (the
 * policy: named by what is counted, its quota and window in seconds) and
 * `RateLimit: "ip";r=59;t=42` (requests remaining, seconds until the window resets); the
 * X-RateLimit-* ones stay for the clients that read them. Health, readiness and metrics are never
 * counted. With `redisUrl` the counts live in Redis, shared by every API instance; otherwise each
 * instance counts in its own memory.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import { Redis } from 'ioredis'
import { ApiError } from '../errors.js'
import { SYSTEM_PATHS } from '../routes/system/routes.js'

export interface RateLimitOptions {
  max: number
  apiKeyMax: number
  windowMs: number
  /** redis:// or rediss:// URL of the shared store; unset: in-memory. */
  redisUrl?: string
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The shared store of counts (REDIS_URL), for the sign-in throttle too; null: each instance counts in memory. */
    redis: Redis | null
  }
}

export default fp<RateLimitOptions>(
  async function rateLimitPlugin(app: FastifyInstance, options) {
    let redis: Redis | undefined
    if (options.redisUrl) {
      // Short timeouts and one retry: a slow Redis must not hold requests up (see skipOnError).
      redis = new Redis(options.redisUrl, { connectTimeout: 500, maxRetriesPerRequest: 1, enableAutoPipelining: true })
      let reported = false
      redis.on('error', (error: Error) => {
        if (!reported) app.log.warn({ err: error }, 'rate-limit store (Redis) unavailable: requests are not limited until it is back')
        reported = true
      })
      redis.on('ready', () => {
        if (reported) app.log.info('rate-limit store (Redis) back')
        reported = false
      })
      app.addHook('onClose', async () => {
        await redis!.quit().catch(() => redis!.disconnect())
      })
    }
    app.decorate('redis', redis ?? null)
    await app.register(rateLimit, {
      ...(redis ? { redis, nameSpace: 'commerce:rate-limit:' } : {}),
      // Fail open: when the shared store is unreachable the API keeps serving, unlimited, rather
      // than failing every request (logged above).
      skipOnError: true,
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
      allowList: (request: FastifyRequest) => SYSTEM_PATHS.has(request.routeOptions.url ?? ''),
      errorResponseBuilder: (_request, context) =>
        new ApiError('rate_limited', `Rate limit of ${context.max} requests per ${context.after} exceeded; retry later`),
    })
    app.addHook('onRequest', app.rateLimit())
    const windowSeconds = Math.ceil(options.windowMs / 1000)
    // Callback-style: an async hook costs a promise per request.
    app.addHook('onSend', (request, reply, payload, done) => {
      const limit = reply.getHeader('x-ratelimit-limit')
      if (limit !== undefined) {
        const policy = `"${request.principal?.kind ?? 'ip'}"`
        reply.header('ratelimit-policy', `${policy};q=${limit};w=${windowSeconds}`)
        reply.header('ratelimit', `${policy};r=${reply.getHeader('x-ratelimit-remaining')};t=${reply.getHeader('x-ratelimit-reset')}`)
      }
      done(null, payload)
    })
  },
  { name: 'rate-limit', dependencies: ['auth'] },
)
