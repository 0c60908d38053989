/**
 * Authentication: every request's credential is identified up front without rejecting (so the
 * rate limit can count by credential); what each route needs is the access table's business
 * (src/access.ts, applied by plugins/access.ts).
 *
 * A user token is checked against its account on every request (one primary-key read, which also
 * finds a customer's customer record): a deleted or disabled account is refused, a changed role
 * counts from the next request, and a token issued before the password last changed (its `ver`
 * claim below the account's credential version) is refused, on every API instance at once, with
 * no cache to invalidate. The token's `role` claim is informative only.
 */
import { randomUUID } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import jwt from '@fastify/jwt'
import { apiKeyLookupPrefix, apiKeyMatchesHash, hasScope, isScope, isUuid, isWellFormedApiKey, ROLES, type Role } from '@commerce/domain'
import { findAccountState, findApiKeyByPrefix, touchApiKey } from '@commerce/db'

interface Credential {
  scopes: readonly string[]
  /** When the credential stops being valid, in milliseconds since the epoch; Infinity for API keys. */
  expiresAt: number
}

export interface UserPrincipal extends Credential {
  kind: 'user'
  userId: string
  /** The account's role now, not the one the token was issued with. */
  role: Role
  /** A customer account's customer record; null for admins. */
  customerId: string | null
  /** The account's credential version the token was issued under (equal to the account's: checked). */
  credentialVersion: number
}

/** An API key: never a customer, and allowed only what its scopes say. */
export interface ApiKeyPrincipal extends Credential {
  kind: 'api_key'
  keyId: string
  /** Null: the configured default for keys. */
  rateLimitPerMinute: number | null
}

/** An OAuth client with an access token from POST /oauth/token: like a key, scopes only. */
export interface OAuthClientPrincipal extends Credential {
  kind: 'oauth_client'
  clientId: string
}

export type Principal = UserPrincipal | ApiKeyPrincipal | OAuthClientPrincipal

interface UserClaims {
  sub: string
  role: Role
  typ: 'user'
  /** The account's credential version when issued; absent in tokens older than it, which count as 0. */
  ver?: number
}

/** An OAuth access token: `sub` is the client's row id, `scope` space-separated. */
interface ClientClaims {
  sub: string
  typ: 'client'
  scope: string
}

const ISSUER = 'commerce'
const AUDIENCE = 'commerce-api'
const SCOPES_BY_ROLE: Record<Role, readonly string[]> = { admin: ['*'], customer: [] }

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route authenticates callers itself (the OAuth token endpoint): its Authorization header is not a bearer token. */
    ownAuthorization?: boolean
    /**
     * Where the route also takes a bearer token when no Authorization header is sent (the
     * WebSocket handshake: browsers cannot set headers there).
     */
    tokenWithoutHeader?: (request: FastifyRequest) => string | undefined
  }
  interface FastifyRequest {
    /** Who is calling, or null for anonymous callers and bad credentials. */
    principal: Principal | null
    /** Why the presented credential was refused, answered as 401 by every route's guard. */
    credentialError: string | null
  }
  interface FastifyInstance {
    issueUserToken(user: { id: string; role: Role; credentialVersion: number }): string
    issueClientToken(client: { id: string; scopes: readonly string[] }, expiresInSeconds: number): string
    /**
     * The customer record of a signed-in customer (read with its account when the request came
     * in); null for anonymous callers and for accounts without one (admins, API keys).
     */
    customerIdOf(request: FastifyRequest): string | null
  }
}

declare module '@fastify/jwt' {
  interface FastifyJWT {
    payload: UserClaims | ClientClaims
  }
}

function isUserClaims(claims: unknown): claims is UserClaims & { exp: number } {
  const value = claims as Partial<UserClaims & { exp: number }> | null
  return (
    typeof value?.sub === 'string' &&
    isUuid(value.sub) &&
    value.typ === 'user' &&
    ROLES.includes(value.role as Role) &&
    (value.ver === undefined || Number.isSafeInteger(value.ver)) &&
    typeof value.exp === 'number'
  )
}

function isClientClaims(claims: unknown): claims is ClientClaims & { exp: number } {
  const value = claims as Partial<ClientClaims & { exp: number }> | null
  return typeof value?.sub === 'string' && value.typ === 'client' && typeof value.scope === 'string' && typeof value.exp === 'number'
}

export interface AuthOptions {
  jwtSecret: string
  jwtExpiresInSeconds: number
}

export default fp<AuthOptions>(
  async function authPlugin(app: FastifyInstance, options) {
    await app.register(jwt, {
      secret: options.jwtSecret,
      sign: { algorithm: 'HS256', iss: ISSUER, aud: AUDIENCE, expiresIn: options.jwtExpiresInSeconds },
      // @fastify/jwt accepts any algorithm unless told; `alg: none` and RS/ES tokens must fail.
      verify: { algorithms: ['HS256'], allowedIss: ISSUER, allowedAud: AUDIENCE },
    })

    app.decorateRequest('principal', null)
    app.decorateRequest('credentialError', null)

    /** Records who is calling, or why the credential is bad; rejecting is left to later hooks. */
    function identify(request: FastifyRequest, header: string) {
      const match = /^Bearer[ ]+([^\s]+)$/i.exec(header)
      if (!match) {
        request.credentialError = 'The Authorization header must be "Bearer <token>"'
        return
      }
      return identifyToken(request, match[1]!)
    }

    function identifyToken(request: FastifyRequest, token: string) {
      if (token.startsWith('ck_')) return identifyApiKey(request, token)
      try {
        const claims: unknown = app.jwt.verify(token)
        // `typ` decides the kind: a client token's other claims (a `role`, say) are never read.
        if (isUserClaims(claims)) return identifyUser(request, claims.sub, claims.ver ?? 0, claims.exp * 1000)
        if (isClientClaims(claims)) {
          // Not checked against the database: a revoked client's tokens live out their short lifetime.
          request.principal = {
            kind: 'oauth_client',
            clientId: claims.sub,
            scopes: claims.scope.split(' ').filter(isScope),
            expiresAt: claims.exp * 1000,
          }
        } else throw new Error('unexpected claims')
      } catch {
        request.credentialError = 'The access token is malformed, expired or invalid'
      }
    }

    async function identifyUser(request: FastifyRequest, userId: string, credentialVersion: number, expiresAt: number) {
      const account = await findAccountState(app.db, userId)
      if (!account) {
        request.credentialError = 'The account of this token no longer exists'
        return
      }
      if (account.disabled) {
        request.credentialError = 'The account of this token is disabled'
        return
      }
      // A password reset (or change) since the token was issued: a thief's token ends with it.
      if (account.credentialVersion !== credentialVersion) {
        request.credentialError = 'The password of this account changed after this token was issued; sign in again'
        return
      }
      const { role, customerId } = account
      request.principal = { kind: 'user', userId, role, customerId, credentialVersion, scopes: SCOPES_BY_ROLE[role], expiresAt }
    }

    // No cache: a key revoked by another process is refused on its next request.
    async function identifyApiKey(request: FastifyRequest, key: string) {
      const refused = 'The API key is malformed, unknown or revoked'
      // The checksum turns away typos and made-up keys without a query.
      if (!isWellFormedApiKey(key)) {
        request.credentialError = refused
        return
      }
      const row = await findApiKeyByPrefix(app.db, apiKeyLookupPrefix(key))
      if (!row || row.revokedAt !== null || !apiKeyMatchesHash(key, row.keyHash)) {
        request.credentialError = refused
        return
      }
      const expiresAt = row.expiresAt?.getTime() ?? Infinity
      if (expiresAt <= Date.now()) {
        request.credentialError = `The API key expired at ${row.expiresAt!.toISOString()}`
        return
      }
      request.principal = { kind: 'api_key', keyId: row.id, scopes: row.scopes, rateLimitPerMinute: row.rateLimitPerMinute, expiresAt }
      // Off the request path; touchApiKey itself writes at most once a minute.
      if (row.lastUsedAt === null || Date.now() - row.lastUsedAt.getTime() >= 60_000) {
        touchApiKey(app.db, row.id).catch((error: unknown) => request.log.warn({ err: error }, 'could not record API key use'))
      }
    }

    /** A promise when the credential is looked up in the database (a user token, an API key); `done` waits for it. */
    function identifyCaller(request: FastifyRequest) {
      const header = request.headers.authorization
      const { config } = request.routeOptions
      if (header !== undefined) return config.ownAuthorization ? undefined : identify(request, header)
      const token = config.tokenWithoutHeader?.(request)
      return token === undefined ? undefined : identifyToken(request, token)
    }

    app.addHook('onRequest', (request, _reply, done) => {
      const identifying = identifyCaller(request)
      if (identifying) identifying.then(() => done(), done)
      else done()
    })
    app.decorate('issueUserToken', (user: { id: string; role: Role; credentialVersion: number }) =>
      app.jwt.sign({ sub: user.id, role: user.role, typ: 'user', ver: user.credentialVersion }, { jti: randomUUID() }),
    )
    app.decorate('issueClientToken', (client: { id: string; scopes: readonly string[] }, expiresInSeconds: number) =>
      app.jwt.sign(
        { sub: client.id, typ: 'client', scope: client.scopes.join(' ') },
        { jti: randomUUID(), expiresIn: expiresInSeconds },
      ),
    )

    app.decorate('customerIdOf', (request: FastifyRequest) =>
      request.principal?.kind === 'user' ? request.principal.customerId : null,
    )
  },
  { name: 'auth', dependencies: ['database'] },
)

/** True when the caller may see soft-deleted and other admin-only data. */
export function isAdmin(request: FastifyRequest): boolean {
  return request.principal !== null && hasScope(request.principal.scopes, 'products:write')
}
