/**
 * POST /oauth/token: the OAuth 2.0 client credentials grant (RFC 6749 §4.4). Errors answer in
 * RFC 6749 §5.2 form, `{error, error_description}`, because OAuth client libraries expect it: the
 * one exception to our error body, so they are sent here and never thrown to the error handler.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { clientSecretMatchesHash, hasScope, isClientId, isScope } from '@commerce/domain'
import { findOAuthClientByClientId, touchOAuthClient } from '@commerce/db'
import { errorResponses } from '../../errors.js'

/** Short, because a token is not checked against the database: a revoked client's tokens live this long at most. */
export const TOKEN_LIFETIME_SECONDS = 3600

type OAuthErrorCode = 'invalid_request' | 'invalid_client' | 'unsupported_grant_type' | 'invalid_scope'

class OAuthError {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
  ) {}
}

/** No parameter of ours comes near it (scopes are the longest); checked by parameters(). */
const MAX_PARAMETER_LENGTH = 2048

const TokenRequest = Type.Object(
  {
    grant_type: Type.Optional(Type.String({ maxLength: MAX_PARAMETER_LENGTH, description: 'Must be client_credentials' })),
    scope: Type.Optional(Type.String({ maxLength: MAX_PARAMETER_LENGTH, description: 'Space-separated scopes, a subset of the client’s; all of them when omitted' })),
    client_id: Type.Optional(Type.String({ maxLength: MAX_PARAMETER_LENGTH, description: 'When the client does not use HTTP Basic' })),
    client_secret: Type.Optional(Type.String({ maxLength: MAX_PARAMETER_LENGTH, description: 'When the client does not use HTTP Basic' })),
  },
  { additionalProperties: true, title: 'OAuthTokenRequest' },
)

const TokenResponse = Type.Object(
  {
    access_token: Type.String(),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer({ description: 'Seconds' }),
    scope: Type.String({ description: 'The scopes granted, space-separated' }),
  },
  { title: 'OAuthToken', description: 'An access token for the client (RFC 6749 §5.1)' },
)

const OAuthErrorBody = Type.Object(
  {
    error: Type.Union(
      ['invalid_request', 'invalid_client', 'unsupported_grant_type', 'invalid_scope'].map((code) => Type.Literal(code)),
    ),
    error_description: Type.String(),
  },
  { title: 'OAuthError', description: 'Why no token was issued, in the form of RFC 6749 §5.2' },
)

const BAD_CLIENT = 'Client authentication failed: unknown or revoked client, or wrong secret'

/** The request's parameters, each given at most once (RFC 6749 §3.2). */
function parameters(body: unknown): Record<string, string> {
  if (body === undefined || body === null) return {}
  if (typeof body !== 'object' || Array.isArray(body)) throw new OAuthError('invalid_request', 'The body must be an object of parameters')
  const result: Record<string, string> = {}
  for (const [name, value] of Object.entries(body)) {
    if (typeof value !== 'string') throw new OAuthError('invalid_request', `The parameter '${name}' must be given once, as text`)
    if (value.length > MAX_PARAMETER_LENGTH) throw new OAuthError('invalid_request', `The parameter '${name}' is longer than ${MAX_PARAMETER_LENGTH} characters`)
    result[name] = value
  }
  return result
}

/** `client_id:client_secret` from `Authorization: Basic`, each form-URL-decoded (RFC 6749 §2.3.1). */
function basicCredentials(header: string): { id: string; secret: string } {
  const match = /^Basic[ ]+([A-Za-z0-9+/]+=*)$/i.exec(header)
  const decoded = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : ''
  const colon = decoded.indexOf(':')
  if (colon < 0) throw new OAuthError('invalid_client', 'The Authorization header must be "Basic base64(client_id:client_secret)"')
  const formDecode = (text: string) => decodeURIComponent(text.replace(/\+/g, ' '))
  try {
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) }
  } catch {
    throw new OAuthError('invalid_client', 'The client credentials in the Authorization header are not URL-encoded correctly')
  }
}

export const oauthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Form bodies for this route only; a repeated parameter becomes an array, refused above.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    const result: Record<string, string | string[]> = {}
    for (const [name, value] of new URLSearchParams(body as string)) {
      const seen = result[name]
      result[name] = seen === undefined ? value : [seen, value].flat()
    }
    done(null, result)
  })

  async function issue(request: FastifyRequest) {
    const params = parameters(request.body)
    if (params.grant_type === undefined) throw new OAuthError('invalid_request', "The parameter 'grant_type' is required")
    if (params.grant_type !== 'client_credentials') {
      throw new OAuthError('unsupported_grant_type', 'Only grant_type=client_credentials is supported')
    }

    const header = request.headers.authorization
    const inBody = params.client_id !== undefined || params.client_secret !== undefined
    if (header !== undefined && inBody) {
      throw new OAuthError('invalid_request', 'Authenticate the client one way: HTTP Basic or client_id and client_secret in the body')
    }
    if (header === undefined && !inBody) throw new OAuthError('invalid_client', 'Client authentication is required')
    const credentials = header !== undefined ? basicCredentials(header) : { id: params.client_id, secret: params.client_secret }
    if (credentials.id === undefined || credentials.secret === undefined) {
      throw new OAuthError('invalid_request', "Send both 'client_id' and 'client_secret'")
    }

    const client = isClientId(credentials.id) ? await findOAuthClientByClientId(app.db, credentials.id) : undefined
    if (!client || client.revokedAt !== null || !clientSecretMatchesHash(credentials.secret, client.secretHash)) {
      throw new OAuthError('invalid_client', BAD_CLIENT)
    }

    const asked = [...new Set((params.scope ?? '').split(' ').filter((scope) => scope !== ''))]
    // `isScope` first: hasScope reads any text as `<resource>:<action>`.
    const refused = asked.find((scope) => !isScope(scope) || !hasScope(client.scopes, scope))
    if (refused !== undefined) throw new OAuthError('invalid_scope', `The scope '${refused}' is unknown or beyond this client’s scopes`)
    const scopes = asked.length > 0 ? asked : client.scopes

    await touchOAuthClient(app.db, client.id)
    return {
      access_token: app.issueClientToken({ id: client.id, scopes }, TOKEN_LIFETIME_SECONDS),
      token_type: 'Bearer' as const,
      expires_in: TOKEN_LIFETIME_SECONDS,
      scope: scopes.join(' '),
    }
  }

  function sendOAuthError(request: FastifyRequest, reply: FastifyReply, error: OAuthError) {
    if (error.error === 'invalid_client') {
      reply.code(401)
      if (request.headers.authorization !== undefined) reply.header('www-authenticate', 'Basic realm="commerce"')
    } else reply.code(400)
    return reply.send({ error: error.error, error_description: error.description })
  }

  app.post(
    '/token',
    {
      config: { ownAuthorization: true },
      // The schema documents the body; parameters() checks it, so that errors keep the RFC's form.
      attachValidation: true,
      schema: {
        operationId: 'createOAuthToken',
        tags: ['auth'],
        summary: 'Get an access token for an OAuth client (client credentials grant)',
        description:
          'RFC 6749 §4.4. Send `grant_type=client_credentials` and optionally `scope` as ' +
          '`application/x-www-form-urlencoded` or JSON; authenticate the client with HTTP Basic ' +
          '(`client_id:client_secret`) or with `client_id` and `client_secret` in the body, not both. ' +
          `The token is a JWT valid for ${TOKEN_LIFETIME_SECONDS} s; use it as \`Authorization: Bearer\`. ` +
          'Errors answer `{error, error_description}` (RFC 6749 §5.2).',
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        security: [{ clientBasic: [] }, {}],
        body: TokenRequest,
        // A body that is not JSON (or is JSON with a `__proto__` key) is refused before the handler,
        // in the API's own error body: 400 must allow both, or its serialization fails with a 500.
        response: {
          200: TokenResponse,
          400: {
            description: 'Bad Request: an OAuth error (`invalid_request`, `unsupported_grant_type`, `invalid_scope`), or our error body for a body that is not JSON or form data',
            anyOf: [OAuthErrorBody, { $ref: 'Error#' }],
          },
          401: OAuthErrorBody,
          ...errorResponses(429),
        },
      },
    },
    async (request, reply) => {
      // RFC 6749 §5.1: token responses must not be cached.
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
      try {
        return await issue(request)
      } catch (error) {
        if (error instanceof OAuthError) return sendOAuthError(request, reply, error)
        throw error
      }
    },
  )
}
