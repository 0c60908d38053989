import { setTimeout } from 'node:timers/promises'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  AccountLinkConfirm,
  AccountRequestAccepted,
  AuthResponse,
  EmailChangeRequest,
  EmailVerificationResend,
  LoginBody,
  Me,
  PasswordChange,
  PasswordResetConfirm,
  PasswordResetRequest,
  RegisterBody,
  RegistrationPending,
} from '@commerce/domain'
import type { Config } from '../../config.js'
import type { UserPrincipal } from '../../plugins/auth.js'
import { ApiError, errorResponses } from '../../errors.js'
import { createAccountService, type Session } from './service.js'
import { createAccountLimits, createLoginThrottle } from './throttle.js'

export const authRoutes: FastifyPluginAsyncTypebox<{ config: Config }> = async (app, { config }) => {
  const accounts = createAccountService(app.db, {
    scryptCost: config.scryptCost,
    passwordResetTtlMs: config.passwordResetTtlMs,
    requireEmailVerification: config.requireEmailVerification,
    emailVerificationTtlMs: config.emailVerificationTtlMs,
  })
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
  /** The account of a route whose access is USER: the guard let only a user's token through. */
  const signedInUser = (request: FastifyRequest): string => (request.principal as UserPrincipal).userId
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
        description:
          'Answers 201 with a token, and the worker emails a welcome (`account.activated`). With REQUIRE_EMAIL_VERIFICATION on ' +
          '(default off) the account can be signed in to only once its email address is verified, as Auth0’s and ' +
          'Shopify’s sign-ups: the answer is 202 with the account but no token, and the worker emails a link to ' +
          '/account/verify-email valid for EMAIL_VERIFICATION_TTL (default 24 hours; `account.verification_requested`); ' +
          'following it (POST /auth/verify-email) activates the account and sends the welcome.',
        body: RegisterBody,
        response: { 201: AuthResponse, 202: RegistrationPending, ...errorResponses(400, 409, 429) },
      },
    },
    async (request, reply) => {
      const session = await accounts.register(request.body, String(request.id))
      if (!config.requireEmailVerification) return reply.code(201).send(tokenResponse(session))
      return reply.code(202).send({
        user: session.user,
        customer: session.customer,
        message: 'The account is made: follow the link emailed to its address to verify it, then sign in',
      })
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
          'disabled" to the right password only. With REQUIRE_EMAIL_VERIFICATION on, a customer whose email address ' +
          'is not verified yet answers 403 `email_not_verified` to the right password only (a wrong one is the usual 401).',
        body: LoginBody,
        response: { 200: AuthResponse, ...errorResponses(400, 401, 403, 429) },
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
        // The password was right: not a failure to count.
        if (error instanceof ApiError && error.code === 'email_not_verified') await throttle.succeeded(email, request.ip)
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
          'round trip either way, which does not wait for the disk), so nobody learns which addresses have accounts. When one does, and is not disabled, ' +
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

  app.post(
    '/verify-email',
    {
      schema: {
        operationId: 'verifyEmail',
        tags: ['auth'],
        summary: 'Verify the account’s email address with the emailed link',
        description:
          "The link's token works once: the account's address is verified (`email_verified_at`, " +
          '`account.email_verified`), its other verification links are void, and an account that signed up while ' +
          'REQUIRE_EMAIL_VERIFICATION was on is activated: it can sign in from then on, and the worker emails a welcome ' +
          '(`account.activated`). An unknown, used or expired token, or a link sent to an address the account no ' +
          'longer has, is 400 on `token`. ' +
          limited(PER_ADDRESS),
        body: AccountLinkConfirm,
        response: { 204: { type: 'null', description: 'The address is verified' }, ...errorResponses(400, 429) },
      },
    },
    async (request, reply) => {
      await limit(reply, 'email_verification_confirm', null, request.ip)
      await accounts.verifyEmail(request.body.token, String(request.id))
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/verify-email/resend',
    {
      schema: {
        operationId: 'resendEmailVerification',
        tags: ['auth'],
        summary: 'Email a new link to verify the account’s address',
        description:
          'Answers 202 with the same body whether or not a customer account with an unverified address has this ' +
          'address (in the same time either way). When one does, and is not disabled, the worker emails it a new ' +
          'single-use link valid for EMAIL_VERIFICATION_TTL (default 24 hours); the links sent before still work until ' +
          'one of them is followed. ' +
          limited(PER_ACCOUNT, PER_ADDRESS),
        body: EmailVerificationResend,
        response: { 202: AccountRequestAccepted, ...errorResponses(400, 429) },
      },
    },
    async (request, reply) => {
      await limit(reply, 'email_verification', request.body.email, request.ip)
      await accounts.resendVerification(request.body.email, String(request.id))
      return reply.code(202).send({ message: 'If an account with this address awaits verification, a new link is on its way to it' })
    },
  )

  app.post(
    '/email-change',
    {
      schema: {
        operationId: 'requestEmailChange',
        tags: ['auth'],
        summary: 'Change the signed-in account’s email address: email a link to the new one',
        description:
          'Needs the current `password` (400 on `password` when wrong). Nothing changes yet: the worker emails a ' +
          'single-use link to /account/confirm-email to the NEW address, valid for EMAIL_VERIFICATION_TTL (default 24 ' +
          'hours; `account.email_change_requested`), and the address changes when it is followed (POST ' +
          '/auth/email-change/confirm), which proves the new address receives mail. 409 when another account or ' +
          'customer has the new address; 400 on `email` when it is the account’s already. ' +
          limited(PER_ACCOUNT, PER_ADDRESS),
        body: EmailChangeRequest,
        response: { 202: AccountRequestAccepted, ...errorResponses(400, 401, 403, 409, 429) },
      },
    },
    async (request, reply) => {
      const userId = signedInUser(request)
      await limit(reply, 'email_change', userId, request.ip)
      await accounts.requestEmailChange(userId, request.body, String(request.id))
      return reply.code(202).send({ message: 'A link to confirm the change is on its way to the new address' })
    },
  )

  app.post(
    '/email-change/confirm',
    {
      schema: {
        operationId: 'confirmEmailChange',
        tags: ['auth'],
        summary: 'Confirm an email change with the link emailed to the new address',
        description:
          "The link's token works once: the account signs in with the new address from then on (the old one no " +
          'longer does), its customer record has it too, it counts as verified, every other unused link of the ' +
          'account (sent to the old address) is void, and `account.email_changed` carries both addresses. Tokens ' +
          'issued before stay valid. 409 when another account or customer took the address meanwhile (the link then ' +
          'stays usable); an unknown, used or expired token is 400 on `token`. ' +
          limited(PER_ADDRESS),
        body: AccountLinkConfirm,
        response: { 204: { type: 'null', description: 'The account’s address is the new one' }, ...errorResponses(400, 409, 429) },
      },
    },
    async (request, reply) => {
      await limit(reply, 'email_change_confirm', null, request.ip)
      await accounts.confirmEmailChange(request.body.token, String(request.id))
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/password-change',
    {
      schema: {
        operationId: 'changePassword',
        tags: ['auth'],
        summary: 'Change the signed-in account’s password',
        description:
          'Needs the current password (400 on `current_password` when wrong). The new one is set, unused password ' +
          'reset links are void, and, as after a reset, every token issued for the account before (this one included) ' +
          'is refused from then on (401; `account.password_changed`): the answer carries a new token, so the caller ' +
          'stays signed in and everyone else is signed out. ' +
          limited(PER_ACCOUNT, PER_ADDRESS),
        body: PasswordChange,
        response: { 200: AuthResponse, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      const userId = signedInUser(request)
      await limit(reply, 'password_change', userId, request.ip)
      return tokenResponse(await accounts.changePassword(userId, request.body, String(request.id)))
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
    async (request) => accounts.me(signedInUser(request)),
  )
}
