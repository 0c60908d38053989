import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { CreateTaxRate, IdParams, ListTaxRatesQuery, TaxRate, TaxRateList, UpdateTaxRate } from '@commerce/domain'
import { errorResponses } from '../../errors.js'
import { createTaxRateService } from './service.js'

const adminOnly = [{ bearerAuth: [] }]

export const taxRateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const taxRateService = createTaxRateService(app.db)
  const read = app.requireScope('tax-rates:read')
  const write = app.requireScope('tax-rates:write')

  app.get(
    '/',
    {
      preHandler: read,
      schema: {
        tags: ['tax-rates'],
        summary: 'List tax rates by country, then region (the whole-country rate first)',
        security: adminOnly,
        querystring: ListTaxRatesQuery,
        response: { 200: TaxRateList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => taxRateService.list(request.query),
  )

  app.get(
    '/:id',
    {
      preHandler: read,
      schema: {
        tags: ['tax-rates'],
        summary: 'A tax rate',
        security: adminOnly,
        params: IdParams,
        response: { 200: TaxRate, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => taxRateService.get(request.params.id),
  )

  app.post(
    '/',
    {
      preHandler: write,
      schema: {
        tags: ['tax-rates'],
        summary: 'Create a tax rate',
        description:
          '`rate` is a percent (0 to 100, at most 4 decimals). One rate per country and region, the region ' +
          'compared case-insensitively (409); a null region is the whole country.',
        security: adminOnly,
        body: CreateTaxRate,
        response: { 201: TaxRate, ...errorResponses(400, 401, 403, 409, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await taxRateService.create(request.body)),
  )

  app.patch(
    '/:id',
    {
      preHandler: write,
      schema: {
        tags: ['tax-rates'],
        summary: 'Update a tax rate',
        security: adminOnly,
        params: IdParams,
        body: UpdateTaxRate,
        response: { 200: TaxRate, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => taxRateService.update(request.params.id, request.body),
  )

  app.delete(
    '/:id',
    {
      preHandler: write,
      schema: {
        tags: ['tax-rates'],
        summary: 'Delete a tax rate',
        security: adminOnly,
        params: IdParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await taxRateService.remove(request.params.id)
      return reply.code(204).send(null)
    },
  )
}
