/** `/shipping/methods`: admin CRUD of shipping methods (the rates at `/shipping/rates` are computed from them). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  CreateShippingMethod,
  IdParams,
  ListShippingMethodsQuery,
  ShippingMethod,
  ShippingMethodList,
  UpdateShippingMethod,
} from '@commerce/domain'
import { errorResponses } from '../../errors.js'
import { createShippingMethodService } from './methods-service.js'


export const shippingMethodRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const shippingMethodService = createShippingMethodService(app.db)

  app.get(
    '/methods',
    {
      schema: {
        operationId: 'listShippingMethods',
        tags: ['shipping'],
        summary: 'List shipping methods by name',
        querystring: ListShippingMethodsQuery,
        response: { 200: ShippingMethodList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => shippingMethodService.list(request.query),
  )

  app.get(
    '/methods/:id',
    {
      schema: {
        operationId: 'getShippingMethod',
        tags: ['shipping'],
        summary: 'A shipping method',
        params: IdParams,
        response: { 200: ShippingMethod, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => shippingMethodService.get(request.params.id),
  )

  app.post(
    '/methods',
    {
      schema: {
        operationId: 'createShippingMethod',
        tags: ['shipping'],
        summary: 'Create a shipping method',
        description:
          'Amounts are in `currency`. An empty `countries` ships everywhere; `free_over` null is never free; ' +
          'weights are kilograms with at most 4 decimals, null = unbounded, `min_weight` <= `max_weight`.',
        body: CreateShippingMethod,
        response: { 201: ShippingMethod, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await shippingMethodService.create(request.body)),
  )

  app.patch(
    '/methods/:id',
    {
      schema: {
        operationId: 'updateShippingMethod',
        tags: ['shipping'],
        summary: 'Update a shipping method',
        description: 'Re-validated as a whole after the change; a new `currency` keeps the amounts shown, refused if they do not fit it.',
        params: IdParams,
        body: UpdateShippingMethod,
        response: { 200: ShippingMethod, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => shippingMethodService.update(request.params.id, request.body),
  )

  app.delete(
    '/methods/:id',
    {
      schema: {
        operationId: 'deleteShippingMethod',
        tags: ['shipping'],
        summary: 'Delete a shipping method; carts that chose it lose the choice',
        params: IdParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await shippingMethodService.remove(request.params.id)
      return reply.code(204).send(null)
    },
  )
}
