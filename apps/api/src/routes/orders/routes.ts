import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import {
  CreateOrder,
  EditOrder,
  hasScope,
  IdParams,
  ListOrdersQuery,
  Order,
  OrderEditList,
  OrderEditResult,
  OrderAllocations,
  OrderHistory,
  OrderList,
  PaginationQuery,
  UpdateOrder,
} from '@commerce/domain'
import { originOf } from '../../origin.js'
import { errorResponses } from '../../errors.js'
import { IdempotencyKeyOptional, IdempotencyKeyRequired } from '../../idempotency.js'
import { createPaymentService } from '../payments/service.js'
import { createOrderEditService } from './edits.js'
import { allocationsOfOrder } from '../inventory/stock.js'
import { orderHistory } from './history.js'
import { createOrderService } from './service.js'
import type { OrderViewer } from './visibility.js'

const OWNERSHIP = 'Admins see every order; a customer sees only its own (another customer’s order is 404).'

export const orderRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const paymentService = createPaymentService(app.db, app.paymentProvider, app.log)
  const orderService = createOrderService(app.db, paymentService)
  const orderEditService = createOrderEditService(app.db, paymentService)

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
        body: await orderService.create(tx, request.body, originOf(request)),
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
      await orderService.archive(request.params.id, await viewerOf(request, 'orders:write'), originOf(request))
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
    async (request) => orderService.cancel(request.params.id, await viewerOf(request, 'orders:write'), originOf(request)),
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
    async (request) => orderService.complete(request.params.id, await viewerOf(request, 'orders:write'), originOf(request)),
  )

  const EDIT_RULES =
    'Units not shipped may be cancelled (`lines[].quantity`: the units the line keeps, never below those shipped) and ' +
    'lines added (`add`, at today’s price and the tax for the order’s shipping address, without the order’s coupons); ' +
    'shipped units are returned instead (POST /orders/{id}/returns). A cancelled unit takes its share of what was paid ' +
    'for its line off the totals (the rule of returns, so a line’s shares add up to its total); shipping does not change. ' +
    'Stock is taken for the lines added (409 insufficient_inventory naming `add[i]`) and given back for the units ' +
    'cancelled. What was paid beyond the new total is refunded through the payment provider; what the new total needs ' +
    'beyond what was paid is `amount_owed` (pay it with POST /orders/{id}/payments). Only a pending, paid or shipped order ' +
    'can be edited (else 409); an edit that changes nothing or cancels every unit is 400.'

  app.post(
    '/:id/edits/preview',
    {
      schema: {
        operationId: 'previewOrderEdit',
        tags: ['orders'],
        summary: 'What an order edit would do: the order after it and the money it would move (admin); nothing is kept',
        description: `${EDIT_RULES} The preview runs the edit and rolls it back, without calling the payment provider.`,
        params: IdParams,
        body: EditOrder,
        response: { 200: OrderEditResult, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => orderEditService.preview(request.params.id, request.body, originOf(request)),
  )

  app.post(
    '/:id/edits',
    {
      schema: {
        operationId: 'createOrderEdit',
        tags: ['orders'],
        summary: 'Edit an order’s lines before they ship: cancel units, add lines, settle the difference (admin)',
        description:
          `${EDIT_RULES} The edit is one transaction; it writes order.edited with the edit (after an order.refunded for each ` +
          'refund it made). The Idempotency-Key is required, as for every refund; each provider refund is keyed by the edit ' +
          'and the payment as well.',
        params: IdParams,
        headers: IdempotencyKeyRequired,
        body: EditOrder,
        response: { 201: OrderEditResult, ...errorResponses(400, 401, 403, 404, 409, 422, 429, 502) },
      },
    },
    async (request, reply) =>
      app.idempotency.run(request, reply, async (tx) => ({
        status: 201,
        body: await orderEditService.commit(tx, request.params.id, request.body, originOf(request)),
      })),
  )

  app.get(
    '/:id/edits',
    {
      schema: {
        operationId: 'listOrderEdits',
        tags: ['orders'],
        summary: 'The edits of an order, oldest first: what each cancelled and added, and the money it moved',
        description: OWNERSHIP,
        params: IdParams,
        querystring: PaginationQuery,
        response: { 200: OrderEditList, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) =>
      orderEditService.list(request.params.id, request.query, await viewerOf(request, 'orders:read')),
  )

  app.get(
    '/:id/history',
    {
      schema: {
        operationId: 'getOrderHistory',
        tags: ['orders'],
        summary: 'Every change of an order, oldest first: what, when, who, and the money it moved (admin)',
        description:
          'From the order’s events (its `sequence`): placing, payments, captures, refunds, fulfillments, status moves, ' +
          'edits and returns. `actor` is the account, API key or OAuth client whose request made the change, or the ' +
          'payment provider; null for a guest’s checkout and the worker. Events written before actors were recorded ' +
          'have none.',
        params: IdParams,
        querystring: PaginationQuery,
        response: { 200: OrderHistory, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => orderHistory(app.db, request.params.id, request.query),
  )

  app.get(
    '/:id/allocations',
    {
      schema: {
        operationId: 'getOrderAllocations',
        tags: ['orders'],
        summary: 'Where the order’s units not shipped yet are committed, by line and stock location (admin)',
        description:
          'Allocation chooses the locations when the order is placed (docs/inventory.md): one location that can ship ' +
          'everything, else the fewest locations, then by priority. A fulfillment from another location moves the ' +
          'commitment there; a cancellation or edit gives the units back.',
        params: IdParams,
        response: { 200: OrderAllocations, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => ({ allocations: await allocationsOfOrder(app.db, request.params.id) }),
  )
}
