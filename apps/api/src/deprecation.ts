/**
 * Operations kept for a while after they were replaced (docs/api-conventions.md, Versions and deprecation): marked
 * `deprecated` in the OpenAPI document (the CLI makes no command of them) and answering, errors
 * included, with the fields clients and gateways watch for:
 * - `Deprecation: @<seconds>` (RFC 9745): since when it is deprecated;
 * - `Sunset: <HTTP date>` (RFC 8594): from when it may stop answering;
 * - `Link: <successor>; rel="successor-version"`: the operation to use instead, for this request.
 */
import type { FastifyRequest, onSendHookHandler } from 'fastify'

export interface Deprecation {
  /** The day it was deprecated (YYYY-MM-DD, UTC). */
  since: string
  /** The day it may go, at least six months later (YYYY-MM-DD, UTC). */
  sunset: string
  /** The path to use instead, with the route's `:params` (filled in from the request). */
  successor: string
}

const day = (date: string) => new Date(`${date}T00:00:00Z`)

/** The three fields for one request to a deprecated operation. */
export function deprecationHeaders(deprecation: Deprecation, params: Record<string, string>): Record<string, string> {
  const successor = deprecation.successor.replace(/:([a-z_]+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''))
  return {
    deprecation: `@${day(deprecation.since).getTime() / 1000}`,
    sunset: day(deprecation.sunset).toUTCString(),
    link: `<${successor}>; rel="successor-version"`,
  }
}

/** What a deprecated route adds to its options: the document's mark and the answer's fields. */
export function deprecatedRoute(deprecation: Deprecation): { description: string; onSend: onSendHookHandler } {
  return {
    description:
      `Deprecated since ${deprecation.since}; use ${deprecation.successor.replace(/:([a-z_]+)/g, '{$1}')} instead. ` +
      `It answers until at least ${deprecation.sunset} (the Sunset header).`,
    onSend: (request: FastifyRequest, reply, payload, done) => {
      reply.headers(deprecationHeaders(deprecation, request.params as Record<string, string>))
      done(null, payload)
    },
  }
}
