/** Price lists and their prices (admin; docs/pricing.md). A product's base prices are in product-prices.ts. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  CreatePriceList,
  IdParams,
  ListPriceListPricesQuery,
  ListPriceListsQuery,
  PriceList,
  PriceListList,
  PricePage,
  PriceParams,
  UpdatePriceList,
  UpsertPriceListPrices,
  WrittenPrices,
} from '@commerce/domain'
import { errorResponses } from '../../errors.js'
import { createPriceListService } from './service.js'
import { refreshPricingOnWrite } from '../../plugins/pricing-rules.js'

/** What the price batches check, said once for both operations that write them. */
export const PRICE_BATCH_RULES =
  'All or nothing, in one transaction: every entry is checked first and a 400 names each field at fault ' +
  '(`prices[i].amount` with more decimals than its currency has, `prices[i].currency` unknown, `prices[i].variant_id` ' +
  'not a variant of the product, `prices[i]` repeating an earlier entry’s key). An entry with the variant, currency and ' +
  'min_quantity of an existing price replaces its amount. Answers the prices written, in the order sent.'

export const priceListRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Carts are priced with the rules each instance keeps: this one's answers show its own change.
  app.addHook('onSend', refreshPricingOnWrite(app))
  const priceLists = createPriceListService(app.db)

  app.get(
    '/',
    {
      schema: {
        operationId: 'listPriceLists',
        tags: ['price-lists'],
        summary: 'List price lists, newest first',
        querystring: ListPriceListsQuery,
        response: { 200: PriceListList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => priceLists.list(request.query),
  )

  app.post(
    '/',
    {
      schema: {
        operationId: 'createPriceList',
        tags: ['price-lists'],
        summary: 'Create a price list',
        description:
          '`ends_at` must be after `starts_at`; every id in `customer_group_ids` must be a customer group (400 naming ' +
          '`customer_group_ids[i]`). A new list has no prices: add them with upsertPriceListPrices.',
        body: CreatePriceList,
        response: { 201: PriceList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await priceLists.create(request.body)),
  )

  app.get(
    '/:id',
    {
      schema: {
        operationId: 'getPriceList',
        tags: ['price-lists'],
        summary: 'A price list',
        params: IdParams,
        response: { 200: PriceList, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => priceLists.get(request.params.id),
  )

  app.patch(
    '/:id',
    {
      schema: {
        operationId: 'updatePriceList',
        tags: ['price-lists'],
        summary: 'Update a price list',
        description:
          'The window is checked as it will be: a new `ends_at` against the kept `starts_at` and the other way round. ' +
          '`customer_group_ids` replaces the list’s groups (`[]`: every customer).',
        params: IdParams,
        body: UpdatePriceList,
        response: { 200: PriceList, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => priceLists.update(request.params.id, request.body),
  )

  app.delete(
    '/:id',
    {
      schema: {
        operationId: 'deletePriceList',
        tags: ['price-lists'],
        summary: 'Delete a price list and its prices',
        params: IdParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await priceLists.remove(request.params.id)
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/:id/prices',
    {
      schema: {
        operationId: 'listPriceListPrices',
        tags: ['price-lists'],
        summary: 'List the prices of a price list',
        description: 'By product, variant (the product-wide prices first), currency and min_quantity.',
        params: IdParams,
        querystring: ListPriceListPricesQuery,
        response: { 200: PricePage, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => priceLists.listPrices(request.params.id, request.query),
  )

  app.post(
    '/:id/prices',
    {
      schema: {
        operationId: 'upsertPriceListPrices',
        tags: ['price-lists'],
        summary: 'Add or change prices of a price list (1 to 1000 at once)',
        description: `Each entry names its product (400 naming \`prices[i].product_id\` when there is no such product). ${PRICE_BATCH_RULES}`,
        params: IdParams,
        body: UpsertPriceListPrices,
        response: { 200: WrittenPrices, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => priceLists.upsertPrices(request.params.id, request.body),
  )

  app.delete(
    '/:id/prices/:price_id',
    {
      schema: {
        operationId: 'deletePriceListPrice',
        tags: ['price-lists'],
        summary: 'Delete a price of a price list',
        params: PriceParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await priceLists.deletePrice(request.params.id, request.params.price_id)
      return reply.code(204).send(null)
    },
  )
}
