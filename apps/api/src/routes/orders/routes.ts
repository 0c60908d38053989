import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import { CreateOrder, hasScope, IdParams, ListOrdersQuery, Order, OrderList, UpdateOrder } from '@commerce/domain'
import { errorResponses } from '../../errors.js'
import { IdempotencyKeyOptional } from '../../idempotency.js'
import { refusePageWithCursor } from '../../list-cursor.js'
import { createPaymentService } from '../payments/service.js'
import { createOrderService, type OrderViewer } from './service.js'

const OWNERSHIP = 'Admins see every order; a customer sees only its own (another customer’s order is 404).'

export const orderRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const orderService = createOrderService(app.db, createPaymentService(app.db, app.paymentProvider))

  async function viewerOf(request: FastifyRequest, scope: 'orders:read' | 'orders:write'): Promise<OrderViewer> {
    return {
      customerId: app.customerIdOf(request),
      canSeeAll: hasScope(request.principal!.scopes, scope),
    }
  }

  app.get(
    '/',
    {
      schema: {
        operationId: 'listOrders',
        tags: ['orders'],
        summary: 'List orders, newest first',
        description: `${OWNERSHIP} Admins may filter by status, customer_id and a created_at range.`,
        querystring: ListOrdersQuery,
        response: { 200: OrderList, ...errorResponses(400, 401, 429) },
      },
      preValidation: refusePageWithCursor,
    },
    async (request) => orderService.list(request.query, await viewerOf(request, 'orders:read')),
  )

  app.get(
    '/:id',
    {
      schema: {
        operationId: 'getOrder',
        tags: ['orders'],
        summary: 'An order with its items, addresses, totals, payments, refunds and fulfillments',
        description: OWNERSHIP,
        params: IdParams,
        response: { 200: Order, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => orderService.get(request.params.id, await viewerOf(request, 'orders:read')),
  )

  app.post(
    '/',
    {
      schema: {
        operationId: 'createOrder',
        tags: ['orders'],
        summary: 'Create a pending order from lines and addresses (admin)',
        description:
          'Current prices, tax from the shipping address, the shipping method’s rate; the stock is taken now ' +
          '(409 insufficient_inventory when short) and put back if the order is cancelled. Emits order.created. ' +
          'An Idempotency-Key is honoured when sent.',
        headers: IdempotencyKeyOptional,
        body: CreateOrder,
        response: { 201: Order, ...errorResponses(400, 401, 403, 409, 422, 429) },
      },
    },
    async (request, reply) =>
      app.idempotency.run(request, reply, async (tx) => ({
        status: 201,
        body: await orderService.create(tx, request.body, String(request.id)),
      })),
  )

  app.patch(
    '/:id',
    {
      schema: {
        operationId: 'updateOrder',
        tags: ['orders'],
        summary: 'Change notes, email or addresses (addresses only while nothing has shipped)',
        params: IdParams,
        body: UpdateOrder,
        response: { 200: Order, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => orderService.update(request.params.id, request.body, await viewerOf(request, 'orders:write')),
  )

  app.delete(
    '/:id',
    {
      schema: {
        operationId: 'archiveOrder',
        tags: ['orders'],
        summary: 'Archive a pending or cancelled order (a pending one is cancelled and restocked first)',
        description: 'The order is kept but no longer listed or found. Other statuses are 409 invalid_state_transition.',
        params: IdParams,
        response: { 204: { type: 'null', description: 'Archived' }, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      await orderService.archive(request.params.id, await viewerOf(request, 'orders:write'), String(request.id))
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/:id/cancel',
    {
      schema: {
        operationId: 'cancelOrder',
        tags: ['orders'],
        summary: 'Cancel: restocks; a paid order is refunded in full first',
        description: 'Allowed from pending and paid; anything else is 409 invalid_state_transition listing the allowed moves.',
        params: IdParams,
        response: { 200: Order, ...errorResponses(400, 401, 403, 404, 409, 429, 502) },
      },
    },
    async (request) => orderService.cancel(request.params.id, await viewerOf(request, 'orders:write'), String(request.id)),
  )

  app.post(
    '/:id/complete',
    {
      schema: {
        operationId: 'completeOrder',
        tags: ['orders'],
        summary: 'Mark a shipped order completed',
        description: 'Allowed from shipped only; anything else is 409 invalid_state_transition listing the allowed moves.',
        params: IdParams,
        response: { 200: Order, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => orderService.complete(request.params.id, await viewerOf(request, 'orders:write'), String(request.id)),
  )
}
