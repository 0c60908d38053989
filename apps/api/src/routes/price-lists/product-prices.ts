/**
 * A product's base prices (admin; docs/pricing.md): its prices in other currencies than its own,
 * and its quantity tiers, under /products/:id/prices. The product's own `price` stays its price in
 * its own currency from one unit, and is set through the product API.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParams, ListProductPricesQuery, PricePage, PriceParams, UpsertProductPrices, WrittenPrices } from '@commerce/domain'
import { errorResponses } from '../../errors.js'
import { createProductPriceService } from './prices.js'
import { PRICE_BATCH_RULES } from './routes.js'

export const productPriceRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const productPrices = createProductPriceService(app.db)

  app.get(
    '/:id/prices',
    {
      schema: {
        operationId: 'listProductPrices',
        tags: ['price-lists'],
        summary: 'List the base prices of a product (not those of price lists)',
        description:
          'Its prices in other currencies and its quantity tiers, by variant (the product-wide ones first), currency and ' +
          'min_quantity. The product’s own `price` is not among them.',
        params: IdParams,
        querystring: ListProductPricesQuery,
        response: { 200: PricePage, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => productPrices.list(request.params.id, request.query),
  )

  app.post(
    '/:id/prices',
    {
      schema: {
        operationId: 'upsertProductPrices',
        tags: ['price-lists'],
        summary: 'Add or change base prices of a product (1 to 1000 at once)',
        description:
          'A base price in the product’s own currency from 1 unit would be the product’s `price` (no variant) or the ' +
          'variant’s `price`: it is refused (400 naming `prices[i].currency`); set that price on the product or the ' +
          `variant instead. Quantity tiers (min_quantity above 1) in its own currency are fine. ${PRICE_BATCH_RULES}`,
        params: IdParams,
        body: UpsertProductPrices,
        response: { 200: WrittenPrices, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => productPrices.upsert(request.params.id, request.body),
  )

  app.delete(
    '/:id/prices/:price_id',
    {
      schema: {
        operationId: 'deleteProductPrice',
        tags: ['price-lists'],
        summary: 'Delete a base price of a product',
        params: PriceParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await productPrices.remove(request.params.id, request.params.price_id)
      return reply.code(204).send(null)
    },
  )
}
