/** Returns of an order's shipped units: asking, listing, and the admin's approve, decline and receive. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { CreateReturn, DeclineReturn, hasScope, IdParams, ListReturnsQuery, PaginationQuery, ReceiveReturn, Return, ReturnList } from '@commerce/domain'
import { originOf } from '../../origin.js'
import { errorResponses } from '../../errors.js'
import { IdempotencyKeyOptional, IdempotencyKeyRequired } from '../../idempotency.js'
import type { OrderViewer } from '../orders/visibility.js'
import { createPaymentService } from '../payments/service.js'
import { createReturnService } from './service.js'

const OWNERSHIP = 'The order’s customer or a caller with the orders scope; another customer’s order or return is 404.'

export const returnRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const returnService = createReturnService(app.db, createPaymentService(app.db, app.paymentProvider, app.log))

  const viewerOf = (request: FastifyRequest, scope: 'orders:read' | 'orders:write'): OrderViewer => ({
    customerId: app.customerIdOf(request),
    canSeeAll: hasScope(request.principal!.scopes, scope),
  })

  app.post(
    '/orders/:id/returns',
    {
      schema: {
        operationId: 'createReturn',
        tags: ['returns'],
        summary: 'Ask for a return of shipped units of an order',
        description:
          `${OWNERSHIP} The order must be shipped or completed (else 409); each line may send back at most the units ` +
          'shipped and not in another return that is not declined or canceled (else 400 naming `items[i]`). The return ' +
          'starts requested and writes return.requested; its `refund` is an estimate (the units’ share of what was paid, ' +
          'without shipping or fee) until it is received. With `exchange` (a shipped order only), the items sent instead ' +
          'are added to the order by an edit (order.edited; their stock taken, 409 insufficient_inventory naming ' +
          '`exchange[i]`): `POST /orders/{id}/payments` then takes only what they cost beyond the return’s refund, and ' +
          'receiving the return refunds only what the refund exceeds it by; declining or canceling the return cancels the ' +
          'new items not shipped yet. An Idempotency-Key is honoured when sent.',
        params: IdParams,
        headers: IdempotencyKeyOptional,
        body: CreateReturn,
        response: { 201: Return, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (request, reply) =>
      app.idempotency.run(request, reply, async (tx) => ({
        status: 201,
        body: await returnService.create(tx, request.params.id, request.body, viewerOf(request, 'orders:write'), originOf(request)),
      })),
  )

  app.get(
    '/orders/:id/returns',
    {
      schema: {
        operationId: 'listOrderReturns',
        tags: ['returns'],
        summary: 'The returns of an order, oldest first',
        description: OWNERSHIP,
        params: IdParams,
        querystring: PaginationQuery,
        response: { 200: ReturnList, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => returnService.list(request.params.id, request.query, viewerOf(request, 'orders:read')),
  )

  app.get(
    '/returns',
    {
      schema: {
        operationId: 'listReturns',
        tags: ['returns'],
        summary: 'Returns of every order, oldest first: the shop’s queue, by status',
        description: 'Callers with orders:read see every return; a customer sees the returns of its own orders.',
        querystring: ListReturnsQuery,
        response: { 200: ReturnList, ...errorResponses(400, 401, 429) },
      },
    },
    async (request) => returnService.listAll(request.query, viewerOf(request, 'orders:read')),
  )

  app.get(
    '/returns/:id',
    {
      schema: {
        operationId: 'getReturn',
        tags: ['returns'],
        summary: 'A return with its lines and refund',
        description: OWNERSHIP,
        params: IdParams,
        response: { 200: Return, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => returnService.get(request.params.id, viewerOf(request, 'orders:read')),
  )

  app.post(
    '/returns/:id/approve',
    {
      schema: {
        operationId: 'approveReturn',
        tags: ['returns'],
        summary: 'Approve a requested return: the shop expects the units back (admin)',
        description: 'Writes return.approved. A return that is not requested is 409 invalid_state_transition.',
        params: IdParams,
        response: { 200: Return, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => returnService.approve(request.params.id, originOf(request)),
  )

  app.post(
    '/returns/:id/decline',
    {
      schema: {
        operationId: 'declineReturn',
        tags: ['returns'],
        summary: 'Decline a requested return (admin)',
        description: 'Its units may be asked for again. Writes return.declined. A return that is not requested is 409 invalid_state_transition.',
        params: IdParams,
        body: DeclineReturn,
        response: { 200: Return, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => returnService.decline(request.params.id, request.body ?? {}, originOf(request)),
  )

  app.post(
    '/returns/:id/cancel',
    {
      schema: {
        operationId: 'cancelReturn',
        tags: ['returns'],
        summary: 'Withdraw a return that was not received yet',
        description: `${OWNERSHIP} Its units may be asked for again. Writes return.canceled. A received, declined or canceled return is 409 invalid_state_transition.`,
        params: IdParams,
        response: { 200: Return, ...errorResponses(400, 401, 404, 409, 429) },
      },
    },
    async (request) => returnService.cancel(request.params.id, viewerOf(request, 'orders:write'), originOf(request)),
  )

  app.post(
    '/returns/:id/receive',
    {
      schema: {
        operationId: 'receiveReturn',
        tags: ['returns'],
        summary: 'Record that a return’s units came back: restock them and refund them (admin)',
        description:
          'Units not named in `damaged` go back into the stock of their product or variant. The refund is what the ' +
          'customer paid for the units (their share of each line’s subtotal, less its discount, plus its tax; the shares ' +
          'of every return of a line add up to exactly its total), plus `shipping_refund` (by default the shipping left ' +
          'when nothing of the order stays with the customer), less `restocking_fee` percent of the merchandise. It goes ' +
          'back through the payment provider on the order’s captured payments, oldest first (an order.refunded each; the ' +
          'one that leaves nothing kept moves the order to refunded), never more than is left of them: `amount_refunded` ' +
          'says what went back. Writes return.received. A return that is declined, canceled or received is 409 ' +
          'invalid_state_transition. The Idempotency-Key is required, as for every refund; each provider refund is keyed by the return and the payment as well, so nothing is refunded twice.',
        params: IdParams,
        headers: IdempotencyKeyRequired,
        body: ReceiveReturn,
        response: { 200: Return, ...errorResponses(400, 401, 403, 404, 409, 422, 429, 502) },
      },
    },
    async (request, reply) =>
      app.idempotency.run(request, reply, async (tx) => ({
        status: 200,
        body: await returnService.receive(tx, request.params.id, request.body ?? {}, originOf(request)),
      })),
  )
}
