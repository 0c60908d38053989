/**
 * Draft orders (admin, the orders scopes) and the public payment link behind them (`/invoices/…`:
 * the link's token is the credential, sent in the body so that no URL, log or proxy holds it).
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  CompleteDraftOrder,
  CreateDraftOrder,
  DraftOrder,
  DraftOrderInvoice,
  DraftOrderList,
  IdParams,
  Invoice,
  LookUpInvoice,
  PayInvoice,
  ListDraftOrdersQuery,
  Order,
  Payment,
  UpdateDraftOrder,
} from '@commerce/domain'
import type { Config } from '../../config.js'
import { errorResponses } from '../../errors.js'
import { IdempotencyKeyRequired, idempotencyKeyOf } from '../../idempotency.js'
import { originOf } from '../../origin.js'
import { createPaymentService } from '../payments/service.js'
import { createDraftOrderService } from './service.js'

const PRICING =
  'Lines are priced when they are added: a line of a product (and variant) the draft has already keeps its price, ' +
  'title and sku; a new one takes the catalog’s price now. The discount (`percentage` or `fixed_amount`, never more ' +
  'than the lines) is shared over the lines before tax, as a coupon’s; tax is that of the shipping address; shipping ' +
  'is the method’s rate. No stock is taken until the draft is completed.'

export const draftOrderRoutes: FastifyPluginAsyncTypebox<{ config: Config }> = async (app, { config }) => {
  const paymentService = createPaymentService(app.db, app.paymentProvider, app.log)
  const draftOrderService = createDraftOrderService(app.db, paymentService, config.shopUrl)

  app.get(
    '/draft-orders',
    {
      schema: {
        operationId: 'listDraftOrders',
        tags: ['draft-orders'],
        summary: 'List draft orders, newest first (admin)',
        querystring: ListDraftOrdersQuery,
        response: { 200: DraftOrderList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => draftOrderService.list(request.query),
  )

  app.post(
    '/draft-orders',
    {
      schema: {
        operationId: 'createDraftOrder',
        tags: ['draft-orders'],
        summary: 'Prepare an order for a customer: lines, discount, addresses, shipping (admin)',
        description: `${PRICING} \`email\` defaults to the customer’s; \`customer_id\` must name a customer (400).`,
        body: CreateDraftOrder,
        response: { 201: DraftOrder, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await draftOrderService.create(request.body)),
  )

  app.get(
    '/draft-orders/:id',
    {
      schema: {
        operationId: 'getDraftOrder',
        tags: ['draft-orders'],
        summary: 'A draft order with its lines and totals (admin)',
        params: IdParams,
        response: { 200: DraftOrder, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => draftOrderService.get(request.params.id),
  )

  app.patch(
    '/draft-orders/:id',
    {
      schema: {
        operationId: 'updateDraftOrder',
        tags: ['draft-orders'],
        summary: 'Change a draft order: lines (replaced), discount, customer, email, addresses, shipping, notes (admin)',
        description: `${PRICING} The totals are computed again. A completed draft is 409.`,
        params: IdParams,
        body: UpdateDraftOrder,
        response: { 200: DraftOrder, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => draftOrderService.update(request.params.id, request.body),
  )

  app.delete(
    '/draft-orders/:id',
    {
      schema: {
        operationId: 'deleteDraftOrder',
        tags: ['draft-orders'],
        summary: 'Delete a draft order not completed (admin); its payment link stops working',
        params: IdParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      await draftOrderService.delete(request.params.id)
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/draft-orders/:id/complete',
    {
      schema: {
        operationId: 'completeDraftOrder',
        tags: ['draft-orders'],
        summary: 'Make the draft into a pending order, or a paid one with mark_paid (admin; Idempotency-Key required)',
        description:
          'One transaction: the order is placed at the draft’s prices and totals, the stock taken (409 ' +
          'insufficient_inventory naming `lines[i]`, and nothing kept), order.created written, and the draft completed ' +
          'with `order_id`. With `mark_paid` the customer paid outside the payment provider: a captured payment with ' +
          'provider `manual` records the total and the order moves to paid (payment.succeeded, order.paid); its refunds ' +
          'are recorded, never sent to a provider. The draft needs an `email` (409). A completed draft is 409.',
        params: IdParams,
        headers: IdempotencyKeyRequired,
        body: CompleteDraftOrder,
        response: { 201: Order, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (request, reply) =>
      app.idempotency.run(request, reply, async (tx) => ({
        status: 201,
        body: await draftOrderService.complete(tx, request.params.id, request.body, originOf(request)),
      })),
  )

  app.post(
    '/draft-orders/:id/send-invoice',
    {
      schema: {
        operationId: 'sendDraftOrderInvoice',
        tags: ['draft-orders'],
        summary: 'Make the draft’s payment link for the customer (admin); a link made before stops working',
        description:
          'Answers the draft with `invoice_url` (`<SHOP_URL>/invoices/<token>`), moves an open draft to invoice_sent and ' +
          'writes draft_order.invoice_sent (with the link, for whatever sends it to the customer). The token is kept only ' +
          'as its hash: a later read of the draft does not show the link; sending again makes a new one. A completed ' +
          'draft gets a link only while its order is pending (409 otherwise).',
        params: IdParams,
        response: { 200: DraftOrderInvoice, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => draftOrderService.sendInvoice(request.params.id, originOf(request)),
  )

  app.post(
    '/invoices/lookup',
    {
      schema: {
        operationId: 'lookUpInvoice',
        tags: ['invoices'],
        summary: 'What a draft order’s payment link asks to pay: its lines, totals and the amount due (public)',
        description:
          'Anyone with the link; no address or customer data. A replaced or unknown link is 404. A POST, so the token ' +
          'travels in the body: a URL would leave it in request logs, proxies and browser history.',
        body: LookUpInvoice,
        response: { 200: Invoice, ...errorResponses(400, 404, 429) },
      },
    },
    async (request) => draftOrderService.invoice(request.body.invoice_token),
  )

  app.post(
    '/invoices/payments',
    {
      schema: {
        operationId: 'payInvoice',
        tags: ['invoices'],
        summary: 'Pay a draft order through its payment link (public; Idempotency-Key required)',
        description:
          'The draft becomes a pending order first, in a transaction of its own, if it is not one yet (stock taken: 409 ' +
          'insufficient_inventory when short); then the order is paid as POST /orders/{id}/payments pays it. A declined ' +
          'card is 402 and leaves the pending order, to be paid again through the same link. Once the order owes ' +
          'nothing (or was cancelled), 409.',
        headers: IdempotencyKeyRequired,
        body: PayInvoice,
        response: { 201: Payment, ...errorResponses(400, 402, 404, 409, 422, 429, 502) },
      },
    },
    async (request, reply) => {
      const origin = originOf(request)
      const { invoice_token: token, ...payment } = request.body
      const orderId = await draftOrderService.orderOfInvoice(token, origin)
      // The link is the payer's credential for this one order.
      const viewer = { customerId: null, canSeeAll: true }
      return app.idempotency.run(request, reply, async (tx) => ({
        status: 201,
        body: await paymentService.pay(tx, orderId, payment, viewer, origin, idempotencyKeyOf(request)),
      }))
    },
  )
}
