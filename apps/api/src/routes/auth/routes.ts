import { setTimeout } from 'node:timers/promises'
import type { FastifyReply } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { AccountRequestAccepted, AuthResponse, LoginBody, Me, PasswordResetConfirm, PasswordResetRequest, RegisterBody } from '@commerce/domain'
import type { Config } from '../../config.js'
import { ApiError, errorResponses, forbidden } from '../../errors.js'
import { createAccountService, type Session } from './service.js'
import { createAccountLimits, createLoginThrottle } from './throttle.js'

export const authRoutes: FastifyPluginAsyncTypebox<{ config: Config }> = async (app, { config }) => {
  const accounts = createAccountService(app.db, { scryptCost: config.scryptCost, passwordResetTtlMs: config.passwordResetTtlMs })
  const limits = createAccountLimits(
    { perAccount: config.accountRateLimitMax, perAddress: config.accountRateLimitIpMax, windowMs: config.accountRateLimitWindowMs },
    app.redis,
    app.log,
  )
  /** 429 with Retry-After once a kind of account request passes its limit for this account or this client address. */
  const limit = async (reply: FastifyReply, kind: string, account: string | null, address: string) => {
    const refused = await limits.refused(kind, account, address)
    if (!refused) return
    void reply.header('retry-after', String(Math.max(1, Math.ceil(refused.retryAfterMs / 1000))))
    throw new ApiError('rate_limited', 'Too many of these requests for this account or from this address; retry later')
  }
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
    token: app.issueUserToken({ ...session.user, credentialVersion: session.credentialVersion }),
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

  const PER_ACCOUNT = 'per account (ACCOUNT_RATE_LIMIT_MAX, default 5)'
  const PER_ADDRESS = 'per client address (ACCOUNT_RATE_LIMIT_IP_MAX, default 20)'
  const limited = (...per: string[]) => `Limited ${per.join(' and ')} per ACCOUNT_RATE_LIMIT_WINDOW (default 15 minutes): 429 with Retry-After beyond.`

  app.post(
    '/password-reset',
    {
      schema: {
        operationId: 'requestPasswordReset',
        tags: ['auth'],
        summary: 'Email a link to set a new password',
        description:
          'Answers 202 with the same body whether or not an account has this address (and in the same time: one ' +
          'statement either way), so nobody learns which addresses have accounts. When one does, and is not disabled, ' +
          'the worker emails it a single-use link valid for PASSWORD_RESET_TTL (default 30 minutes). ' +
          limited(PER_ACCOUNT, PER_ADDRESS),
        body: PasswordResetRequest,
        response: { 202: AccountRequestAccepted, ...errorResponses(400, 429) },
      },
    },
    async (request, reply) => {
      await limit(reply, 'password_reset', request.body.email, request.ip)
      await accounts.requestPasswordReset(request.body.email, String(request.id))
      return reply.code(202).send({ message: 'If an account has this address, a link to set a new password is on its way to it' })
    },
  )

  app.post(
    '/password-reset/confirm',
    {
      schema: {
        operationId: 'confirmPasswordReset',
        tags: ['auth'],
        summary: 'Set a new password with the emailed link',
        description:
          "The link's token works once: the password is set, the token and every other reset link of the account are " +
          'void, and every token issued for the account before is refused from then on (401): a reset signs out ' +
          'everyone, a thief included. An unknown, used or expired token is 400 on `token`. ' +
          limited(PER_ADDRESS),
        body: PasswordResetConfirm,
        response: { 204: { type: 'null', description: 'The password is set' }, ...errorResponses(400, 429) },
      },
    },
    async (request, reply) => {
      await limit(reply, 'password_reset_confirm', null, request.ip)
      await accounts.confirmPasswordReset(request.body.token, request.body.password, String(request.id))
      return reply.code(204).send(null)
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
