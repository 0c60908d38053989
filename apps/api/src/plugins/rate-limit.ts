/**
 * Requests per window per caller with X-RateLimit-* headers and a 429 `rate_limited` carrying
 * Retry-After: per API key when a valid one was presented (its own figure, else `apiKeyMax`), per
 * OAuth client for a valid access token (`apiKeyMax`), otherwise per IP (`max`).
 * X-RateLimit-Reset is seconds until the window resets. The same figures go out as the IETF
 * fields of draft-ietf-httpapi-ratelimit-headers-10 too: `RateLimit-Policy: "ip";q=60;w=60` (the
 * policy: named by what is counted, its quota and window in seconds) and
 * `RateLimit: "ip";r=59;t=42` (requests remaining, seconds until the window resets); the
 * X-RateLimit-* ones stay for the clients that read them. Health, readiness and metrics are never
 * counted. With `redisUrl` the counts live in Redis, shared by every API instance (the sign-in
 * throttle's and the account request limits' too: `app.redis`); otherwise each instance counts in
 * its own memory.
 *
 * Redis is never waited for beyond REDIS_TIMEOUTS: while it is unreachable every command fails at
 * once, and every use of it fails open: the request is served uncounted (with no rate-limit
 * headers here), and the client reconnects by itself.
 */
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify'
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
    /**
     * The shared store of counts (REDIS_URL), for the sign-in throttle and the account request limits
     * too; null: each instance counts in memory. Its commands fail rather than wait (REDIS_TIMEOUTS),
     * so each use must let the request through when one fails.
     */
    redis: Redis | null
  }
}

/**
 * How long a request may wait for Redis, and how soon the client tries it again (docs/operations.md#redis).
 * Counting is worth less than answering: past these the request goes on uncounted.
 */
export const REDIS_TIMEOUTS = {
  /** A connection not made within this is abandoned, and tried again. */
  connectMs: 500,
  /** A command not answered within this fails. */
  commandMs: 100,
  /** A connection that answers nothing for this long while commands wait is dropped, so that the next ones fail at once. */
  socketMs: 1_000,
  /** Reconnection: 50 ms after a failure, 50 ms more after each further one, up to this, for as long as it takes. */
  reconnectMaxMs: 500,
}

function connectRedis(url: string, log: FastifyBaseLogger): Redis {
  const redis = new Redis(url, {
    connectTimeout: REDIS_TIMEOUTS.connectMs,
    commandTimeout: REDIS_TIMEOUTS.commandMs,
    socketTimeout: REDIS_TIMEOUTS.socketMs,
    // While the connection is down a command fails at once instead of waiting in a queue for the
    // reconnect back-off, and one cut off in flight fails rather than being sent again.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(attempt * 50, REDIS_TIMEOUTS.reconnectMaxMs),
    enableAutoPipelining: true,
  })
  let reported = false
  redis.on('error', (error: Error) => {
    if (!reported) log.warn({ err: error }, 'Redis unavailable: rate limits and sign-in throttling are not applied until it is back')
    reported = true
  })
  redis.on('ready', () => {
    if (reported) log.info('Redis back: rate limits and sign-in throttling applied again')
    reported = false
  })
  return redis
}

/** Resolves when the client is ready or its first attempt failed, so that an instance started beside a running Redis counts from its first request. */
function firstAttempt(redis: Redis): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      redis.off('ready', done).off('error', done)
      resolve()
    }
    const timer = setTimeout(done, REDIS_TIMEOUTS.connectMs + REDIS_TIMEOUTS.commandMs)
    redis.once('ready', done).once('error', done)
  })
}

export default fp<RateLimitOptions>(
  async function rateLimitPlugin(app: FastifyInstance, options) {
    const redis = options.redisUrl ? connectRedis(options.redisUrl, app.log) : null
    if (redis) {
      app.addHook('onClose', async () => {
        await redis.quit().catch(() => redis.disconnect())
      })
      await firstAttempt(redis)
    }
    app.decorate('redis', redis)
    await app.register(rateLimit, {
      ...(redis ? { redis, nameSpace: 'commerce:rate-limit:' } : {}),
      // A store error reaches the hook below, which serves the request uncounted.
      skipOnError: false,
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
    })
    const count = app.createRateLimit()
    const windowSeconds = Math.ceil(options.windowMs / 1000)
    app.addHook('onRequest', async (request, reply) => {
      let limit: Awaited<ReturnType<typeof count>>
      try {
        limit = await count(request)
      } catch {
        // Redis is unreachable (logged once, above) or answered late: the request is served
        // uncounted, and without rate-limit headers, which would claim an allowance nobody counted.
        return
      }
      if (limit.isAllowed) return
      const policy = `"${request.principal?.kind ?? 'ip'}"`
      void reply
        .header('x-ratelimit-limit', limit.max)
        .header('x-ratelimit-remaining', limit.remaining)
        .header('x-ratelimit-reset', limit.ttlInSeconds)
        .header('ratelimit-policy', `${policy};q=${limit.max};w=${windowSeconds}`)
        .header('ratelimit', `${policy};r=${limit.remaining};t=${limit.ttlInSeconds}`)
      if (limit.isExceeded) {
        void reply.header('retry-after', limit.ttlInSeconds)
        throw new ApiError('rate_limited', `Rate limit of ${limit.max} requests per ${windowSeconds} s exceeded; retry in ${limit.ttlInSeconds} s`)
      }
    })
  },
  { name: 'rate-limit', dependencies: ['auth'] },
)
