import { setTimeout } from 'node:timers/promises'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AuthResponse, LoginBody, Me, RegisterBody } from '@commerce/domain'
import type { Config } from '../../config.js'
import { ApiError, errorResponses, forbidden } from '../../errors.js'
import { createAccountService, type Session } from './service.js'
import { createLoginThrottle } from './throttle.js'

export const authRoutes: FastifyPluginAsyncTypebox<{ config: Config }> = async (app, { config }) => {
  const accounts = createAccountService(app.db, { scryptCost: config.scryptCost })
  const throttle = createLoginThrottle(
    {
      maxFailures: config.loginMaxFailures,
      windowMs: config.loginFailureWindowMs,
      slowdownAfter: config.loginSlowdownAfter,
      slowdownDelayMs: config.loginSlowdownDelayMs,
    },
    app.redis,
    app.log,
  )
  const tokenResponse = (session: Session) => ({
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
        operationId: 'register',
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
        operationId: 'login',
        tags: ['auth'],
        summary: 'Exchange email and password for a token',
        description:
          'Failed sign-ins are counted per account and client address (LOGIN_MAX_FAILURES, default 10, per ' +
          'LOGIN_FAILURE_WINDOW, default 15 minutes); past that, that address is refused for that account with 429 and Retry-After until the ' +
          'window ends, whatever the password, while other addresses are not. A successful sign-in clears its address’s ' +
          'count. When an account has LOGIN_SLOWDOWN_AFTER failures from all addresses in the window, every attempt on it ' +
          'is answered LOGIN_SLOWDOWN_DELAY later, but not refused. A disabled account answers 401 "This account is ' +
          'disabled" to the right password only.',
        body: LoginBody,
        response: { 200: AuthResponse, ...errorResponses(400, 401, 429) },
      },
    },
    async (request, reply) => {
      const { email } = request.body
      const verdict = await throttle.attempt(email, request.ip)
      if (verdict.refused) {
        void reply.header('retry-after', String(Math.max(1, Math.ceil(verdict.retryAfterMs / 1000))))
        throw new ApiError('rate_limited', 'Too many failed sign-ins to this account from this address; retry later')
      }
      if (verdict.delayMs > 0) await setTimeout(verdict.delayMs)
      let session: Session
      try {
        session = await accounts.login(request.body)
      } catch (error) {
        if (error instanceof ApiError && error.code === 'unauthorized') await throttle.failed(email)
        throw error
      }
      await throttle.succeeded(email, request.ip)
      return tokenResponse(session)
    },
  )

  app.get(
    '/me',
    {
      schema: {
        operationId: 'getCurrentUser',
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
