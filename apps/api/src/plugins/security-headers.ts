/**
 * Security headers on every response (helmet), set in the first onRequest hook so that
 * refusals (401, 404, 429) carry them too. Helmet's middleware is built once: @fastify/helmet
 * built it anew on every request (with two promise hooks), a few percent of a checkout's CPU. The policy is a JSON API's: nothing it answers may load
 * a resource, run in a frame or be sniffed as another type. The reference page (/docs) replaces the
 * Content-Security-Policy with its own (plugins/openapi.ts); the other headers stay.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import helmet from 'helmet'

/** One year, in seconds. */
const HSTS_MAX_AGE = 365 * 24 * 60 * 60

export default fp(
  async function securityHeadersPlugin(app: FastifyInstance) {
    const applyHeaders = helmet({
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          defaultSrc: ["'none'"],
          baseUri: ["'none'"],
          formAction: ["'none'"],
          frameAncestors: ["'none'"],
        },
      },
      xFrameOptions: { action: 'deny' },
      // Sent on every response: browsers ignore it over plain HTTP (RFC 6797 §8.1), and behind a
      // TLS-terminating proxy the API cannot tell HTTPS from HTTP. No `preload`: that is the
      // domain owner's commitment to make, at the proxy.
      strictTransportSecurity: { maxAge: HSTS_MAX_AGE, includeSubDomains: true, preload: false },
      referrerPolicy: { policy: 'no-referrer' },
      // Helmet's defaults for the rest: X-Content-Type-Options nosniff, Cross-Origin-Opener-Policy
      // and Cross-Origin-Resource-Policy same-origin (CORS requests are not subject to it),
      // Origin-Agent-Cluster, X-DNS-Prefetch-Control off, X-Download-Options noopen,
      // X-Permitted-Cross-Domain-Policies none, X-XSS-Protection 0; no X-Powered-By.
    })
    app.addHook('onRequest', (request, reply, done) => {
      applyHeaders(request.raw, reply.raw, (error?: unknown) => done(error as Error | undefined))
    })
  },
  { name: 'security-headers' },
)
