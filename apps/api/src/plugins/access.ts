/**
 * Applies the access table (../access.ts) to every route as it is registered: the route's first
 * onRequest hook becomes its guard, so 401 and 403 come before the body is read or validated, and
 * its OpenAPI operation says what it needs (`security`, `x-required-scope`, a line of description).
 * The caller was identified before, by the auth plugin's global onRequest hook (which waits for an
 * API key's lookup), then counted by the rate limiter's.
 */
import type { FastifyInstance, onRequestHookHandler, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { hasScope } from '@commerce/domain'
import type { Access } from '../access.js'
import { errorResponses, forbidden, unauthorized } from '../errors.js'

export interface AccessOptions {
  table: Readonly<Record<string, Access>>
}

// Callback-style and synchronous: a guard runs on every request, and an async hook costs a promise.
// Truthiness, not `=== null`: routes of plugins registered before the auth plugin (the reference
// page's) get requests without its decorators, so unset reads `undefined` there.
export function guardOf(access: Access): onRequestHookHandler {
  switch (access.kind) {
    case 'public':
      // A credential that was sent but is bad is refused even here, so that a client learns at once
      // that its token expired instead of silently browsing as anonymous.
      return (request, _reply, done) => done(request.credentialError ? unauthorized(request.credentialError) : undefined)
    case 'signed_in':
    case 'resource_scope':
      return (request, _reply, done) => done(request.principal ? undefined : unauthorized(request.credentialError ?? undefined))
    case 'user':
      return (request, _reply, done) => {
        const principal = request.principal
        if (!principal) return done(unauthorized(request.credentialError ?? undefined))
        if (principal.kind === 'user') return done()
        const who = principal.kind === 'api_key' ? 'An API key' : 'An OAuth client'
        done(forbidden(`${who} has no user account; ${request.routeOptions.url!.replace(/^\/api\/v1/, '')} needs a user token`))
      }
    case 'scope':
    case 'scope_or_owner': {
      const { scope } = access
      const customersPass = access.kind === 'scope_or_owner'
      return (request, _reply, done) => {
        const principal = request.principal
        if (!principal) return done(unauthorized(request.credentialError ?? undefined))
        const allowed =
          hasScope(principal.scopes, scope) || (customersPass && principal.kind === 'user' && principal.role === 'customer')
        done(allowed ? undefined : forbidden())
      }
    }
  }
}

function describeAccess(access: Access): string {
  switch (access.kind) {
    case 'public':
      return 'Access: public.'
    case 'signed_in':
      return 'Access: any valid credential (a user token, an API key or an OAuth client token).'
    case 'user':
      return 'Access: a user token (an API key or an OAuth client token, which has no user account, is 403).'
    case 'scope':
      return `Access: the scope \`${access.scope}\` (an admin token holds \`*\`).`
    case 'scope_or_owner':
      return `Access: the scope \`${access.scope}\` for every record; a signed-in customer for its own.`
    case 'resource_scope':
      return `Access: the scope \`<resource>:${access.action}\` of the resource it is about (\`products:${access.action}\`, \`customers:${access.action}\`, \`orders:${access.action}\`; an admin token holds \`*\`).`
  }
}

/** The route's schema with its access in the OpenAPI terms; the route's own `security` wins (the token endpoint's Basic). */
function documented(schema: NonNullable<RouteOptions['schema']>, access: Access): RouteOptions['schema'] {
  const guarded = access.kind !== 'public'
  const scope = access.kind === 'scope' || access.kind === 'scope_or_owner' ? access.scope : undefined
  return {
    ...schema,
    description: [schema.description, describeAccess(access)].filter(Boolean).join('\n\n'),
    security: schema.security ?? (guarded ? [{ bearerAuth: [] }] : [{}, { bearerAuth: [] }]),
    ...(scope ? { 'x-required-scope': scope } : {}),
    response: { ...errorResponses(...(scope || access.kind === 'user' || access.kind === 'resource_scope' ? [401, 403] : [401])), ...(schema.response as object | undefined) },
  }
}

export default fp<AccessOptions>(
  async function accessPlugin(app: FastifyInstance, { table }) {
    const used = new Set<string>()
    const problems = new Set<string>()

    /** The table's key for a route: a HEAD route without an entry of its own shares its GET's. */
    const keyOf = (method: string, url: string) => {
      const key = `${method} ${url}`
      return method === 'HEAD' && !(key in table) ? `GET ${url}` : key
    }

    app.addHook('onRoute', (route) => {
      const keys = [route.method].flat().map((method) => keyOf(method, route.url))
      const missing = keys.filter((key) => !(key in table))
      if (missing.length > 0) {
        for (const key of missing) problems.add(`the route ${key} has no entry`)
        return
      }
      keys.forEach((key) => used.add(key))
      const access = table[keys[0]!]!
      if (keys.some((key) => describeAccess(table[key]!) !== describeAccess(access))) {
        problems.add(`the route ${keys.join(', ')} is one route with entries that differ`)
      }
      route.onRequest = [guardOf(access), ...[route.onRequest ?? []].flat()]
      // A new schema object: Fastify's HEAD copy of a GET route shares the GET's.
      if (route.schema && !route.schema.hide) route.schema = documented(route.schema, access)
    })

    app.addHook('onReady', (done) => {
      for (const key of Object.keys(table)) {
        if (!used.has(key)) problems.add(`the entry ${key} matches no route`)
      }
      done(problems.size > 0 ? new Error(`Access table (src/access.ts): ${[...problems].join('; ')}`) : undefined)
    })
  },
  { name: 'access' },
)
