/** Payments of an order and refunds of a payment; both need an Idempotency-Key. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { CreatePayment, CreateRefund, hasScope, IdParams, PaginationQuery, Payment, PaymentList, Refund } from '@commerce/domain'
import { deprecatedRoute } from '../../deprecation.js'
import { errorResponses } from '../../errors.js'
import { IdempotencyKeyRequired, idempotencyKeyOf } from '../../idempotency.js'
import type { OrderViewer } from '../orders/service.js'
import { createPaymentService } from './service.js'


export const paymentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const paymentService = createPaymentService(app.db, app.paymentProvider)

  /** The order's owner, or anyone with the payments scope; a signed-in caller without either gets 404. */
  async function viewerOf(request: FastifyRequest, scope: 'payments:read' | 'payments:write'): Promise<OrderViewer> {
    return { customerId: app.customerIdOf(request), canSeeAll: hasScope(request.principal!.scopes, scope) }
  }

  app.post(
    '/orders/:id/payments',
    {
      schema: {
        tags: ['payments'],
        summary: 'Pay a pending order (Idempotency-Key required)',
        description:
          'The order’s owner or a caller with payments:write. `amount` defaults to what the order still owes and may ' +
          'not exceed it; part payments are allowed, and the payment that covers the total moves the order to paid ' +
          '(payment.succeeded, then order.paid). A declined charge is 402 payment_declined and keeps only the failed ' +
          'payment (payment.failed); a provider failure is 502 and keeps nothing. Orders past pending are 409 ' +
          'invalid_state_transition.',
        params: IdParams,
        headers: IdempotencyKeyRequired,
        body: CreatePayment,
        response: { 201: Payment, ...errorResponses(400, 401, 402, 404, 409, 422, 429, 502) },
      },
    },
    async (request, reply) => {
      const viewer = await viewerOf(request, 'payments:write')
      return app.idempotency.run(request, reply, {}, async (tx) => ({
        status: 201,
        body: await paymentService.pay(tx, request.params.id, request.body, viewer, String(request.id), idempotencyKeyOf(request)),
      }))
    },
  )

  app.get(
    '/orders/:id/payments',
    {
      schema: {
        tags: ['payments'],
        summary: 'The payments of an order, oldest first, each with its refunds (declined ones too)',
        description: 'The order’s owner or a caller with payments:read; another customer’s order is 404.',
        params: IdParams,
        querystring: PaginationQuery,
        response: { 200: PaymentList, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) =>
      paymentService.list(
        request.params.id,
        request.query.page ?? 1,
        request.query.per_page ?? 20,
        await viewerOf(request, 'payments:read'),
      ),
  )

  const refundSchema = {
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
        summary: 'Refund a payment (deprecated alias of POST /payments/{id}/refunds)',
        description: `${alias.description} ${refundSchema.description}`,
        deprecated: true,
      },
      onSend: alias.onSend,
    },
  ]
  for (const { url, schema, onSend } of refundRoutes) {
    app.post(url, { schema, ...(onSend ? { onSend } : {}) }, async (request, reply) =>
      app.idempotency.run(request, reply, {}, async (tx) => ({
        status: 201,
        body: await paymentService.refund(tx, request.params.id, request.body, String(request.id), idempotencyKeyOf(request)),
      })),
    )
  }
}
