import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Coupon, CouponList, CreateCoupon, IdParams, ListCouponsQuery, UpdateCoupon } from '@commerce/domain'
import { errorResponses } from '../../errors.js'
import { createCouponService } from './service.js'
import { refreshPricingOnWrite } from '../../plugins/pricing-rules.js'


export const couponRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Carts are priced with the rules each instance keeps: this one's answers show its own change.
  app.addHook('onSend', refreshPricingOnWrite(app))
  const couponService = createCouponService(app.db)

  app.get(
    '/',
    {
      schema: {
        operationId: 'listCoupons',
        tags: ['coupons'],
        summary: 'List coupons, newest first',
        description: '`code` matches the exact code, case-insensitively.',
        querystring: ListCouponsQuery,
        response: { 200: CouponList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => couponService.list(request.query),
  )

  app.get(
    '/:id',
    {
      schema: {
        operationId: 'getCoupon',
        tags: ['coupons'],
        summary: 'A coupon',
        params: IdParams,
        response: { 200: Coupon, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => couponService.get(request.params.id),
  )

  app.post(
    '/',
    {
      schema: {
        operationId: 'createCoupon',
        tags: ['coupons'],
        summary: 'Create a coupon',
        description:
          'percentage: `value` is the percent off (0 < value <= 100, at most 4 decimals); fixed_amount: `value` is ' +
          'the amount off in `currency` (required); free_shipping: no `value`. `min_subtotal` needs a `currency`; ' +
          '`ends_at` must be after `starts_at`. The code is stored upper-case and is unique case-insensitively (409).',
        body: CreateCoupon,
        response: { 201: Coupon, ...errorResponses(400, 401, 403, 409, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await couponService.create(request.body)),
  )

  app.patch(
    '/:id',
    {
      schema: {
        operationId: 'updateCoupon',
        tags: ['coupons'],
        summary: 'Update a coupon',
        description:
          'The coupon is re-validated as a whole after the change. A new `type` needs a new `value` ' +
          '(free_shipping drops it); a new `currency` keeps the amounts shown, refused if they do not fit it.',
        params: IdParams,
        body: UpdateCoupon,
        response: { 200: Coupon, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => couponService.update(request.params.id, request.body),
  )

  app.delete(
    '/:id',
    {
      schema: {
        operationId: 'deleteCoupon',
        tags: ['coupons'],
        summary: 'Delete a coupon; carts holding it lose it',
        params: IdParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await couponService.remove(request.params.id)
      return reply.code(204).send(null)
    },
  )
}
