import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { CreateTaxRate, IdParams, ListTaxRatesQuery, TaxRate, TaxRateList, UpdateTaxRate } from '@commerce/domain'
import { errorResponses } from '../../errors.js'
import { createTaxRateService } from './service.js'


export const taxRateRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const taxRateService = createTaxRateService(app.db)

  app.get(
    '/',
    {
      schema: {
        operationId: 'listTaxRates',
        tags: ['tax-rates'],
        summary: 'List tax rates by country, then region (the whole-country rate first)',
        querystring: ListTaxRatesQuery,
        response: { 200: TaxRateList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => taxRateService.list(request.query),
  )

  app.get(
    '/:id',
    {
      schema: {
        operationId: 'getTaxRate',
        tags: ['tax-rates'],
        summary: 'A tax rate',
        params: IdParams,
        response: { 200: TaxRate, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => taxRateService.get(request.params.id),
  )

  app.post(
    '/',
    {
      schema: {
        operationId: 'createTaxRate',
        tags: ['tax-rates'],
        summary: 'Create a tax rate',
        description:
          '`rate` is a percent (0 to 100, at most 4 decimals). One rate per country and region, the region ' +
          'compared case-insensitively (409); a null region is the whole country.',
        body: CreateTaxRate,
        response: { 201: TaxRate, ...errorResponses(400, 401, 403, 409, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await taxRateService.create(request.body)),
  )

  app.patch(
    '/:id',
    {
      schema: {
        operationId: 'updateTaxRate',
        tags: ['tax-rates'],
        summary: 'Update a tax rate',
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
      schema: {
        operationId: 'deleteTaxRate',
        tags: ['tax-rates'],
        summary: 'Delete a tax rate',
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
