/**
 * Payments of an order, their capture and cancellation, refunds of a payment (each with an
 * Idempotency-Key), and the payment provider's notifications.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { CapturePayment, CreatePayment, CreateRefund, hasScope, IdParams, PaginationQuery, Payment, PaymentList, Refund, WebhookSignatureError } from '@commerce/domain'
import type { Config } from '../../config.js'
import { deprecatedRoute } from '../../deprecation.js'
import { ApiError, errorResponses, notFound } from '../../errors.js'
import { originOf } from '../../origin.js'
import { IdempotencyKeyRequired, idempotencyKeyOf } from '../../idempotency.js'
import type { OrderViewer } from '../orders/visibility.js'
import { handleProviderWebhook } from './provider-webhooks.js'
import { createPaymentService } from './service.js'


const ProviderWebhookReceipt = Type.Object(
  { received: Type.Boolean(), duplicate: Type.Boolean({ description: 'The provider sent this notification before: nothing was done again' }) },
  { title: 'ProviderWebhookReceipt', description: 'The notification was handled' },
)

export const paymentRoutes: FastifyPluginAsyncTypebox<{ config: Config }> = async (app) => {
  const paymentService = createPaymentService(app.db, app.paymentProvider, app.log)

  /** The order's owner, or anyone with the payments scope; a signed-in caller without either gets 404. */
  async function viewerOf(request: FastifyRequest, scope: 'payments:read' | 'payments:write'): Promise<OrderViewer> {
    return { customerId: app.customerIdOf(request), canSeeAll: hasScope(request.principal!.scopes, scope) }
  }

  app.post(
    '/orders/:id/payments',
    {
      schema: {
        operationId: 'createPayment',
        tags: ['payments'],
        summary: 'Pay a pending order, or what an edit left owed on a paid or shipped one (Idempotency-Key required)',
        description:
          'The order’s owner or a caller with payments:write. `amount` defaults to what the order still owes and may ' +
          'not exceed it; part payments are allowed, and the payment that covers the total moves a pending order to paid ' +
          '(payment.succeeded, then order.paid). A paid or shipped order owes only what an order edit added (refunds of ' +
          'returns and by amount never make it owe); owing nothing is 409 conflict. A declined charge is 402 ' +
          'payment_declined and keeps only the failed payment (payment.failed); a provider failure is 502 and keeps ' +
          'nothing. Completed, cancelled and refunded orders are 409 invalid_state_transition.',
        params: IdParams,
        headers: IdempotencyKeyRequired,
        body: CreatePayment,
        response: { 201: Payment, ...errorResponses(400, 401, 402, 404, 409, 422, 429, 502) },
      },
    },
    async (request, reply) => {
      const viewer = await viewerOf(request, 'payments:write')
      return app.idempotency.run(request, reply, async (tx) => ({
        status: 201,
        body: await paymentService.pay(tx, request.params.id, request.body, viewer, originOf(request), idempotencyKeyOf(request)),
      }))
    },
  )

  app.get(
    '/orders/:id/payments',
    {
      schema: {
        operationId: 'listOrderPayments',
        tags: ['payments'],
        summary: 'The payments of an order, oldest first, each with its refunds (declined ones too)',
        description: 'The order’s owner or a caller with payments:read; another customer’s order is 404.',
        params: IdParams,
        querystring: PaginationQuery,
        response: { 200: PaymentList, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) =>
      paymentService.list(request.params.id, request.query, await viewerOf(request, 'payments:read')),
  )

  const refundSchema = {
    operationId: 'createRefund',
    tags: ['payments'],
    summary: 'Refund part or all of a payment (admin; Idempotency-Key required)',
    description:
      '`amount` defaults to what is left to refund on the payment and may never exceed it. Every refund writes ' +
      'order.refunded; the one that returns everything the order’s payments captured moves a paid, shipped or ' +
      'completed order to refunded (payment_status refunded); a partial one keeps the status and sets ' +
      'payment_status partially_refunded. Declined or refunded payments are 409; refunds of a cancelled or ' +
      'refunded order are 409 invalid_state_transition.',
    params: IdParams,
    headers: IdempotencyKeyRequired,
    body: CreateRefund,
    response: { 201: Refund, ...errorResponses(400, 401, 403, 404, 409, 422, 429, 502) },
  }
  // The singular form, as some payment APIs spell it (Stripe's old /charges/:id/refund): kept as
  // a deprecated alias, the example of how deprecation is announced (deprecation.ts).
  const alias = deprecatedRoute({ since: '2026-11-24', sunset: '2027-06-01', successor: '/api/v1/payments/:id/refunds' })
  const refundRoutes = [
    { url: '/payments/:id/refunds', schema: refundSchema },
    {
      url: '/payments/:id/refund',
      schema: {
        ...refundSchema,
        operationId: 'refundPayment',
        summary: 'Refund a payment (deprecated alias of POST /payments/{id}/refunds)',
        description: `${alias.description} ${refundSchema.description}`,
        deprecated: true,
      },
      onSend: alias.onSend,
    },
  ]
  for (const { url, schema, onSend } of refundRoutes) {
    app.post(url, { schema, ...(onSend ? { onSend } : {}) }, async (request, reply) =>
      app.idempotency.run(request, reply, async (tx) => ({
        status: 201,
        body: await paymentService.refund(tx, request.params.id, request.body, originOf(request), idempotencyKeyOf(request)),
      })),
    )
  }

  const captureSchema = {
    operationId: 'capturePayment',
    tags: ['payments'],
    summary: 'Capture an authorized payment, in full or in part (admin; Idempotency-Key required)',
    description:
      'With PAYMENT_CAPTURE=manual a checkout only authorizes its payment; it is captured at the order’s first ' +
      'fulfillment, or here. `amount` defaults to everything authorized; less captures that much and releases the ' +
      'rest. Writes payment.succeeded; a pending order with nothing held any more moves to paid (order.paid). A ' +
      'payment that is not authorized is 409.',
    params: IdParams,
    headers: IdempotencyKeyRequired,
    body: CapturePayment,
    response: { 200: Payment, ...errorResponses(400, 401, 403, 404, 409, 422, 429, 502) },
  }
  app.post('/payments/:id/capture', { schema: captureSchema }, async (request, reply) =>
    app.idempotency.run(request, reply, async (tx) => ({
      status: 200,
      body: await paymentService.capture(tx, request.params.id, request.body.amount, originOf(request), idempotencyKeyOf(request)),
    })),
  )

  app.post(
    '/payments/:id/cancel',
    {
      schema: {
        operationId: 'cancelPayment',
        tags: ['payments'],
        summary: 'Void an authorized payment (admin; Idempotency-Key required)',
        description: 'Releases the hold: nothing is taken (payment.canceled). A payment that is not authorized is 409; refund a captured one.',
        params: IdParams,
        headers: IdempotencyKeyRequired,
        response: { 200: Payment, ...errorResponses(400, 401, 403, 404, 409, 422, 429, 502) },
      },
    },
    async (request, reply) =>
      app.idempotency.run(request, reply, async (tx) => ({ status: 200, body: await paymentService.cancel(tx, request.params.id, originOf(request)) })),
  )

  // The provider signs the exact bytes it sent: this route reads its body as they are.
  await app.register(async (raw) => {
    raw.removeAllContentTypeParsers()
    raw.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body))
    raw.post(
      '/payments/webhooks/:provider',
      {
        schema: {
          operationId: 'receivePaymentProviderWebhook',
          tags: ['payments'],
          summary: 'Notifications of the payment provider (for the provider, not for clients)',
          description:
            'Point the provider’s webhook here (Stripe: /api/v1/payments/webhooks/stripe, events payment_intent.* and ' +
            'charge.refunded). The signature is checked on the raw body (Stripe-Signature with STRIPE_WEBHOOK_SECRET): a ' +
            'bad one is 400 and changes nothing. Each provider event is handled once (by its id), in any order: a ' +
            'succeeded payment places the checkout’s reserved order if no completion call did yet, a failed one ' +
            'releases its stock. Answers 200 once handled, so the provider stops retrying.',
          params: Type.Object({ provider: Type.String({ maxLength: 50 }) }),
          response: { 200: ProviderWebhookReceipt, ...errorResponses(400, 404, 429) },
        },
      },
      async (request) => {
        if ((request.params as { provider: string }).provider !== app.paymentProvider.name) throw notFound('Payment provider')
        try {
          return await handleProviderWebhook(app.db, app.paymentProvider, paymentService, request.body as Buffer, request.headers, String(request.id))
        } catch (error) {
          if (error instanceof WebhookSignatureError) throw new ApiError('validation_error', `The notification is refused: ${error.message}`)
          throw error
        }
      },
    )
  })
}
