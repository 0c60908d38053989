/**
 * CORS for browser clients on other origins (@fastify/cors), from CORS_ORIGINS: exact origins or
 * `*`. Unset, the plugin adds nothing: no CORS header on any response and preflights are 404s.
 * Credentials are bearer tokens in `Authorization`, never cookies, so no
 * Access-Control-Allow-Credentials. The same allowlist guards the WebSocket handshake
 * (routes/ws), which CORS does not cover.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import cors from '@fastify/cors'
import type { Config } from '../config.js'

export interface CorsOptions {
  origins: Config['corsOrigins']
}

/** What a browser may send beyond the CORS-safelisted headers. */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id']
/** What a browser script may read beyond the CORS-safelisted response headers. */
export const CORS_EXPOSED_HEADERS = [
  'X-Request-Id',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'Idempotent-Replayed',
  'Deprecation',
  'Sunset',
  'Link',
]
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']
/** How long a browser may reuse a preflight's answer, in seconds (Chromium caps it at 2 hours). */
const PREFLIGHT_MAX_AGE = 600

/**
 * Whether a browser page on `origin` may use the API: listed, or `*`, or the API's own origin
 * (`host` is the request's Host header). Without an allowlist every origin is.
 */
export function isOriginAllowed(origins: Config['corsOrigins'], origin: string, host: string | undefined): boolean {
  if (origins === undefined || origins === '*' || origins.includes(origin)) return true
  try {
    return host !== undefined && new URL(origin).host === host
  } catch {
    return false
  }
}

export default fp<CorsOptions>(
  async function corsPlugin(app: FastifyInstance, { origins }) {
    if (origins === undefined) return
    await app.register(cors, {
      // An origin that is not listed gets no CORS header at all (a list here would still send the
      // other headers and answer its preflights): the browser keeps the answer from its script,
      // and its preflight reaches the not-found handler.
      origin: origins === '*' ? '*' : (origin: string | undefined, done: (error: Error | null, allow: string | false) => void) =>
        done(null, origin !== undefined && origins.includes(origin) ? origin : false),
      methods: METHODS,
      allowedHeaders: CORS_ALLOWED_HEADERS,
      exposedHeaders: CORS_EXPOSED_HEADERS,
      credentials: false,
      maxAge: PREFLIGHT_MAX_AGE,
      // A preflight is answered before the rate limiter and the access guards count or refuse it.
      hook: 'onRequest',
    })
  },
  { name: 'cors' },
)
