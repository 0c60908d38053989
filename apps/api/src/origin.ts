/** Where a request's changes come from, as their events record it. */
import type { FastifyRequest } from 'fastify'
import type { EventOrigin } from '@commerce/db'

/** A request's origin: it always has an id. */
export type RequestOrigin = EventOrigin & { requestId: string }

/** The request's id and who sent it: the account, key or OAuth client of its credential; null for a guest. */
export function originOf(request: FastifyRequest): RequestOrigin {
  const principal = request.principal
  const actor =
    principal === null
      ? null
      : principal.kind === 'user'
        ? `user:${principal.userId}`
        : principal.kind === 'api_key'
          ? `api_key:${principal.keyId}`
          : `oauth_client:${principal.clientId}`
  return { requestId: String(request.id), actor }
}
