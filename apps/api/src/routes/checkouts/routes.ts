import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Checkout, CheckoutPaymentPending, CompleteCheckout, CreateCheckout, IdParams, Order, SelectShipping } from '@commerce/domain'
import type { Config } from '../../config.js'
import { originOf } from '../../origin.js'
import { errorResponses } from '../../errors.js'
import { IdempotencyKeyRequired } from '../../idempotency.js'
import { cartViewerOf } from '../carts/service.js'
import { createCheckoutCompletion } from './complete.js'
import { createCheckoutService } from './service.js'


export const checkoutRoutes: FastifyPluginAsyncTypebox<{ config: Config }> = async (app, { config }) => {
  const checkoutService = createCheckoutService(app.db, app.pricingRules)
  const completion = createCheckoutCompletion({
    db: app.db,
    provider: app.paymentProvider,
    idempotency: app.idempotency,
    capture: config.paymentCapture,
    reservationTtlMs: config.checkoutReservationTtlMs,
    rules: app.pricingRules,
  })

  app.post(
    '/',
    {
      schema: {
        operationId: 'createCheckout',
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
        operationId: 'getCheckout',
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
        operationId: 'selectCheckoutShippingRate',
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
        operationId: 'completeCheckout',
        tags: ['checkout'],
        summary: 'Pay and place the order (Idempotency-Key required)',
        description:
          'Re-prices the cart (a line with a `problem`, such as a product no longer sold, is 409 conflict naming ' +
          'the line), refuses a short stock (409 insufficient_inventory naming the line; stock never goes below ' +
          'zero) or a used-up coupon, then reserves the stock and the coupon uses, closes the cart to changes and ' +
          'asks the payment provider — no lock is held while it decides. Then: **201** with the order (order.created, ' +
          'payment.succeeded and order.paid; with PAYMENT_CAPTURE=manual the order is pending with payment_status ' +
          'authorized and payment.authorized); **202** with `next_action` when the customer must confirm the payment ' +
          '(3-D Secure: confirm with the provider’s client library, then call this again — or let the provider’s ' +
          'webhook place the order); **402** payment_declined, the stock and coupons given back and the cart open ' +
          'again (payment.failed); **502** when the provider did not answer (the stock stays held; call again to ' +
          'learn the outcome). Calling it again while a payment is in progress asks the provider about that payment ' +
          '(409 payment_in_progress while another request is still waiting for it); on a checkout whose order was ' +
          'placed it answers **200** with that order. A reservation not settled within CHECKOUT_RESERVATION_TTL is ' +
          'released by the worker. The test provider takes tok_visa (succeeds), tok_declined (declined), tok_3ds ' +
          '(requires action), tok_error (502) and tok_refund_refused (succeeds; its refunds refused). The same Idempotency-Key replays a stored 201/402/404/409 answer ' +
          'with Idempotent-Replayed: true; a 202 is not stored (calling again asks anew).',
        params: IdParams,
        headers: IdempotencyKeyRequired,
        body: CompleteCheckout,
        response: { 200: Order, 201: Order, 202: CheckoutPaymentPending, ...errorResponses(400, 401, 402, 404, 409, 422, 429, 502) },
        'x-idempotency-not-stored': [200, 202],
      },
    },
    async (request, reply) => {
      const viewer = await cartViewerOf(app, request, 'carts:write')
      return completion.complete(reply, request.params.id, request.body, viewer, originOf(request), app.idempotency.steps.keyOf(request))
    },
  )
}
