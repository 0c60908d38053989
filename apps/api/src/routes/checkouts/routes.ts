import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Checkout, CompleteCheckout, CreateCheckout, IdParams, Order, SelectShipping } from '@commerce/domain'
import type { Executor } from '@commerce/db'
import { errorResponses } from '../../errors.js'
import { IdempotencyKeyRequired, idempotencyKeyOf } from '../../idempotency.js'
import { cartViewerOf } from '../carts/service.js'
import { createCheckoutCompletion, lockCheckout } from './complete.js'
import { createCheckoutService } from './service.js'


export const checkoutRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const checkoutService = createCheckoutService(app.db)
  const completeCheckout = createCheckoutCompletion(app.paymentProvider)

  app.post(
    '/',
    {
      schema: {
        tags: ['checkout'],
        summary: 'Start a checkout for a cart: sets its email and shipping address, answers totals and shipping rates',
        description:
          'The cart must be visible to the caller (its owner, or anyone for an anonymous cart) and not empty. ' +
          'billing_address defaults to the shipping address.',
        body: CreateCheckout,
        response: { 201: Checkout, ...errorResponses(400, 401, 404, 409, 429) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await checkoutService.create(request.body, await cartViewerOf(app, request, 'carts:write'))),
  )

  app.get(
    '/:id',
    {
      schema: {
        tags: ['checkout'],
        summary: 'A checkout with its items, totals and shipping rates',
        params: IdParams,
        response: { 200: Checkout, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => checkoutService.get(request.params.id, await cartViewerOf(app, request, 'carts:read')),
  )

  app.post(
    '/:id/shipping',
    {
      schema: {
        tags: ['checkout'],
        summary: 'Choose one of the shipping rates; the totals include it',
        params: IdParams,
        body: SelectShipping,
        response: { 200: Checkout, ...errorResponses(400, 401, 404, 409, 429) },
      },
    },
    async (request) =>
      checkoutService.selectShipping(request.params.id, request.body.rate_id, await cartViewerOf(app, request, 'carts:write')),
  )

  app.post(
    '/:id/complete',
    {
      schema: {
        tags: ['checkout'],
        summary: 'Pay and place the order (Idempotency-Key required)',
        description:
          'One transaction: re-price the cart (a line with a `problem`, such as a product no longer sold or one ' +
          'taking the total past the most an amount can be, is 409 conflict naming the line), take the stock ' +
          '(409 insufficient_inventory naming the line when ' +
          'short; stock never goes below zero), use up the coupons, create the order (order_number from a ' +
          'sequence), charge it and write order.created, payment.succeeded and order.paid. A declined payment ' +
          'is 402 payment_declined: only the failed payment record is kept and the checkout stays open. The ' +
          'test provider takes tok_visa (succeeds), tok_declined (declined) and tok_error (502, nothing ' +
          'charged). The same Idempotency-Key replays the stored answer with Idempotent-Replayed: true.',
        params: IdParams,
        headers: IdempotencyKeyRequired,
        body: CompleteCheckout,
        response: { 201: Order, ...errorResponses(400, 401, 402, 404, 409, 422, 429, 502) },
      },
    },
    async (request, reply) => {
      const viewer = await cartViewerOf(app, request, 'carts:write')
      const { id } = request.params
      const first = (tx: Executor, claim: readonly (string | null)[]) => lockCheckout(tx, id, claim)
      return app.idempotency.run(request, reply, { writesLast: true, first }, async (tx, remember, locked) => ({
        status: 201,
        body: await completeCheckout(tx, id, locked, request.body, viewer, String(request.id), idempotencyKeyOf(request), remember),
      }))
    },
  )
}
