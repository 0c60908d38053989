import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AuthResponse, LoginBody, Me, RegisterBody } from '@commerce/domain'
import type { Config } from '../../config.js'
import { errorResponses, forbidden } from '../../errors.js'
import { createAccountService } from './service.js'

export const authRoutes: FastifyPluginAsyncTypebox<{ config: Config }> = async (app, { config }) => {
  const accounts = createAccountService(app.db, { scryptCost: config.scryptCost })
  const tokenResponse = (session: Awaited<ReturnType<typeof accounts.login>>) => ({
    user: session.user,
    customer: session.customer,
    token: app.issueUserToken(session.user),
    token_type: 'Bearer' as const,
    expires_in: config.jwtExpiresInSeconds,
  })

  app.post(
    '/register',
    {
      schema: {
        tags: ['auth'],
        summary: 'Create a customer account',
        body: RegisterBody,
        response: { 201: AuthResponse, ...errorResponses(400, 409, 429) },
      },
    },
    async (request, reply) => {
      const session = await accounts.register(request.body, String(request.id))
      return reply.code(201).send(tokenResponse(session))
    },
  )

  app.post(
    '/login',
    {
      schema: {
        tags: ['auth'],
        summary: 'Exchange email and password for a token',
        body: LoginBody,
        response: { 200: AuthResponse, ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => tokenResponse(await accounts.login(request.body)),
  )

  app.get(
    '/me',
    {
      schema: {
        tags: ['auth'],
        summary: 'The signed-in user and their customer record',
        response: { 200: Me, ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const principal = request.principal!
      if (principal.kind !== 'user') {
        const who = principal.kind === 'api_key' ? 'An API key' : 'An OAuth client'
        throw forbidden(`${who} has no user account; /auth/me needs a user token`)
      }
      return accounts.me(principal.userId)
    },
  )
}
