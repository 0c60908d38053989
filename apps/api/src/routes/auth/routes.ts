import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AuthResponse, LoginBody, Me, RegisterBody } from '@commerce/domain'
import type { Config } from '../../config.js'
import { ApiError, errorResponses, forbidden } from '../../errors.js'
import { createAccountService } from './service.js'

/**
 * Sign-in attempts per account, on top of the per-IP limit: password guessing spread over many
 * addresses still meets a wall (OWASP API4). Counted in the rate limiter's store (Redis with
 * REDIS_URL) before the password is checked, every attempt alike: a locked account answers 429
 * whether the password is right or wrong, so the lock reveals nothing.
 */
export const LOGIN_ATTEMPTS = { max: 10, windowMs: 15 * 60_000 }

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

  // createRateLimit, not rateLimit: the per-IP limiter has already run on this request, and a
  // second rateLimit() hook would see that and step aside.
  const loginAttempts = app.createRateLimit({
    max: LOGIN_ATTEMPTS.max,
    timeWindow: LOGIN_ATTEMPTS.windowMs,
    keyGenerator: (request) => `login:${(request.body as { email: string }).email.trim().toLowerCase()}`,
  })
  // A preHandler: after validation, so the body's email is there and well-formed.
  const throttleLogin = async (request: FastifyRequest, reply: FastifyReply) => {
    const attempt = await loginAttempts(request)
    if (!attempt.isAllowed && attempt.isExceeded) {
      void reply.header('retry-after', String(attempt.ttlInSeconds))
      throw new ApiError('rate_limited', 'Too many sign-in attempts for this account; retry later')
    }
  }

  app.post(
    '/login',
    {
      preHandler: throttleLogin,
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
