/** Fulfillments of an order, their tracking events, and tracking by number. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  CreateFulfillment,
  CreateTrackingEvent,
  Fulfillment,
  FulfillmentList,
  hasScope,
  IdParams,
  PaginationQuery,
  Tracking,
  TrackingParams,
} from '@commerce/domain'
import { originOf } from '../../origin.js'
import { errorResponses } from '../../errors.js'
import { IdempotencyKeyOptional } from '../../idempotency.js'
import { createPaymentService } from '../payments/service.js'
import { createFulfillmentService } from './service.js'


export const fulfillmentRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const fulfillmentService = createFulfillmentService(app.db, createPaymentService(app.db, app.paymentProvider, app.log))

  app.post(
    '/orders/:id/fulfillments',
    {
      schema: {
        operationId: 'createFulfillment',
        tags: ['fulfillments'],
        summary: 'Send units of a paid or shipped order (admin)',
        description:
          'Without `items`, everything not yet fulfilled is sent; with them, the given quantities (never more than ' +
          'is left on a line). Every fulfillment writes order.shipped with the fulfillment in its data; the first ' +
          'moves a paid order to shipped. fulfillment_status becomes partial or fulfilled. Other statuses are 409 ' +
          'invalid_state_transition; an order with nothing left to send is 409. An Idempotency-Key is honoured when sent.',
        params: IdParams,
        headers: IdempotencyKeyOptional,
        body: CreateFulfillment,
        response: { 201: Fulfillment, ...errorResponses(400, 401, 403, 404, 409, 422, 429) },
      },
    },
    async (request, reply) =>
      app.idempotency.run(request, reply, async (tx) => ({
        status: 201,
        body: await fulfillmentService.create(tx, request.params.id, request.body, originOf(request)),
      })),
  )

  app.get(
    '/orders/:id/fulfillments',
    {
      schema: {
        operationId: 'listOrderFulfillments',
        tags: ['fulfillments'],
        summary: 'The fulfillments of an order, oldest first',
        description: 'The order’s owner or a caller with orders:read; another customer’s order is 404.',
        params: IdParams,
        querystring: PaginationQuery,
        response: { 200: FulfillmentList, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) =>
      fulfillmentService.list(request.params.id, request.query, {
        customerId: app.customerIdOf(request),
        canSeeAll: hasScope(request.principal!.scopes, 'orders:read'),
      }),
  )

  app.post(
    '/fulfillments/:id/tracking-events',
    {
      schema: {
        operationId: 'createTrackingEvent',
        tags: ['fulfillments'],
        summary: 'Add a carrier tracking event to a fulfillment (admin); answers its tracking',
        description:
          '`occurred_at` defaults to now. The fulfillment’s status becomes the status of its latest event by ' +
          '`occurred_at` (an event reported late does not overwrite a newer one).',
        params: IdParams,
        body: CreateTrackingEvent,
        response: { 201: Tracking, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await fulfillmentService.addTrackingEvent(request.params.id, request.body)),
  )

  app.get(
    '/shipping/tracking/:tracking_number',
    {
      schema: {
        operationId: 'getTracking',
        tags: ['shipping'],
        summary: 'Tracking of a parcel by its number: carrier, status and events, newest first',
        description:
          'Public, like a carrier’s tracking page: whoever holds the number may look, and the answer holds no order ' +
          'or customer data. When several fulfillments share a number, the latest is answered.',
        params: TrackingParams,
        response: { 200: Tracking, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => fulfillmentService.tracking(request.params.tracking_number),
  )
}
