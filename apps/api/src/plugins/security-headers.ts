/**
 * Security headers on every response (helmet), set in the first onRequest hook so that
 * refusals (401, 404, 429) carry them too. Helmet's middleware is built once: @fastify/helmet
 * built it anew on every request (with two promise hooks), a few percent of a checkout's CPU. The policy is a JSON API's: nothing it answers may load
 * a resource, run in a frame or be sniffed as another type. The reference page (/docs) replaces the
 * Content-Security-Policy with its own (plugins/openapi.ts); the other headers stay.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import helmet from 'helmet'

/** One year, in seconds. */
const HSTS_MAX_AGE = 365 * 24 * 60 * 60

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

/** What each header is for, as the OpenAPI document says it (a header sent must be described here). */
export const SECURITY_HEADER_PURPOSES: Record<string, string> = {
  'Content-Security-Policy': 'Nothing an answer holds may load a resource, run in a frame or send a form (the reference page at /docs has its own policy)',
  'Cross-Origin-Opener-Policy': 'A page of another origin opened from an answer gets no handle on it',
  'Cross-Origin-Resource-Policy': 'Only pages of the same origin may embed an answer (CORS requests are not subject to it)',
  'Origin-Agent-Cluster': 'Browsers keep the origin in an agent cluster of its own',
  'Referrer-Policy': 'A link followed from an answer sends no Referer',
  'Strict-Transport-Security': 'Browsers reach this host and its subdomains over HTTPS only, for a year (ignored over plain HTTP)',
  'X-Content-Type-Options': 'Browsers take the Content-Type as sent and never sniff another',
  'X-DNS-Prefetch-Control': 'Browsers do not resolve the names of links in an answer ahead of time',
  'X-Download-Options': 'Internet Explorer does not open a download in the site’s context',
  'X-Frame-Options': 'No answer is shown in a frame (for browsers older than the policy’s frame-ancestors)',
  'X-Permitted-Cross-Domain-Policies': 'Adobe clients (Flash, Acrobat) load no cross-domain policy file from this host',
  'X-XSS-Protection': 'Turns off the XSS filter of old browsers, which could itself be abused',
}

/** The headers the plugin sends and their values, the same on every answer: what helmet sets on a response. */
export function securityHeaders(): Record<string, string> {
  const sent: Record<string, string> = {}
  const response = { setHeader: (name: string, value: unknown) => void (sent[name] = String(value)), removeHeader: () => {} }
  applyHeaders({} as IncomingMessage, response as unknown as ServerResponse, () => {})
  return sent
}

export default fp(
  async function securityHeadersPlugin(app: FastifyInstance) {
    app.addHook('onRequest', (request, reply, done) => {
      applyHeaders(request.raw, reply.raw, (error?: unknown) => done(error as Error | undefined))
    })
  },
  { name: 'security-headers' },
)
