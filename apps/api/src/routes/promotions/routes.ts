import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  CreatePromotion,
  IdParams,
  ListPromotionsQuery,
  PaginationQuery,
  Promotion,
  PromotionList,
  PromotionUsageList,
  UpdatePromotion,
} from '@commerce/domain'
import { errorResponses } from '../../errors.js'
import { createPromotionService } from './service.js'
import { refreshPricingOnWrite } from '../../plugins/pricing-rules.js'

export const promotionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Carts are priced with the rules each instance keeps: this one's answers show its own change.
  app.addHook('onSend', refreshPricingOnWrite(app))
  const promotionService = createPromotionService(app.db)

  app.get(
    '/',
    {
      schema: {
        operationId: 'listPromotions',
        tags: ['promotions'],
        summary: 'List promotions, newest first',
        description:
          'Every promotion: automatic ones (`code` null) and those applied by code, coupons included. `code` matches the ' +
          'exact code, case-insensitively; `automatic=true` lists only those without a code, `false` only those with one.',
        querystring: ListPromotionsQuery,
        response: { 200: PromotionList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => promotionService.list(request.query),
  )

  app.get(
    '/:id',
    {
      schema: {
        operationId: 'getPromotion',
        tags: ['promotions'],
        summary: 'A promotion',
        params: IdParams,
        response: { 200: Promotion, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => promotionService.get(request.params.id),
  )

  app.post(
    '/',
    {
      schema: {
        operationId: 'createPromotion',
        tags: ['promotions'],
        summary: 'Create a promotion',
        description:
          'Without a `code` the promotion is automatic and needs a `name`; with one, `name` defaults to the code, which is ' +
          'stored upper-case and unique case-insensitively (409). `value`: the percent off for percentage and ' +
          'buy_x_get_y (0 < value <= 100; buy_x_get_y: 100 = free), the amount off in `currency` (required) for ' +
          'fixed_amount, null for free_shipping. buy_x_get_y needs `buy_x_get_y`, the other types refuse it; ' +
          'free_shipping takes no `target`. `min_subtotal` needs a `currency`; `ends_at` must be after `starts_at`. ' +
          'Every product, category, customer group and campaign id must exist; a campaign with a spend budget ' +
          'takes promotions in its currency (or with none). Any promotion with a code can be applied to a cart by ' +
          'its code (`POST /carts/{id}/coupons`); the coupons API shows only those of the coupon types.',
        body: CreatePromotion,
        response: { 201: Promotion, ...errorResponses(400, 401, 403, 409, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await promotionService.create(request.body)),
  )

  app.patch(
    '/:id',
    {
      schema: {
        operationId: 'updatePromotion',
        tags: ['promotions'],
        summary: 'Update a promotion',
        description:
          'The promotion is re-validated as a whole after the change. A new `type` needs a new `value` (free_shipping ' +
          'drops it; leaving buy_x_get_y drops `buy_x_get_y`); a new `currency` keeps the amounts shown, refused if they ' +
          'do not fit it. The lists of `conditions` and `target` and the fields of `buy_x_get_y` that are sent replace ' +
          'the current ones. A name that was the code follows a new code. `usage_limit` cannot go below `times_used`.',
        params: IdParams,
        body: UpdatePromotion,
        response: { 200: Promotion, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => promotionService.update(request.params.id, request.body),
  )

  app.delete(
    '/:id',
    {
      schema: {
        operationId: 'deletePromotion',
        tags: ['promotions'],
        summary: 'Delete a promotion; carts holding it lose it',
        description: 'Its usage rows go with it; orders keep what it took off in their own record.',
        params: IdParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await promotionService.remove(request.params.id)
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/:id/usages',
    {
      schema: {
        operationId: 'listPromotionUsages',
        tags: ['promotions'],
        summary: 'List the uses of a promotion, newest first',
        description:
          'One row per checkout payment that used it, taken when the checkout reserves its order; `released`: the ' +
          'use was given back (its checkout reservation was released).',
        params: IdParams,
        querystring: PaginationQuery,
        response: { 200: PromotionUsageList, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => promotionService.usages(request.params.id, request.query),
  )
}
