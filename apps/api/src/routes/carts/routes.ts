import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import {
  AddCartItem,
  AddressInput,
  ApplyCoupon,
  Cart,
  CartCouponParams,
  CartItemParams,
  CreateCart,
  IdParams,
  SetCartEmail,
  UpdateCartItem,
} from '@commerce/domain'
import { errorResponses } from '../../errors.js'
import { cartViewerOf, createCartService } from './service.js'

const deleted = { type: 'null', description: 'Removed' } as const

const CART_ACCESS =
  'A cart created with a customer token belongs to that customer (anyone else gets 404); a cart created ' +
  'without one is reachable by whoever holds its id. Totals are recalculated from the current prices on every read.'

export const cartRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const cartService = createCartService(app.db, app.pricingRules)

  const reader = (request: FastifyRequest) => cartViewerOf(app, request, 'carts:read')
  const writer = (request: FastifyRequest) => cartViewerOf(app, request, 'carts:write')

  app.post(
    '/',
    {
      schema: {
        operationId: 'createCart',
        tags: ['carts'],
        summary: 'Create a cart',
        description: CART_ACCESS,
        body: CreateCart,
        response: { 201: Cart, ...errorResponses(400, 401, 429) },
      },
    },
    async (request, reply) => {
      const cart = await cartService.create(request.body, app.customerIdOf(request))
      return reply.code(201).send(cart)
    },
  )

  app.get(
    '/:id',
    {
      schema: {
        operationId: 'getCart',
        tags: ['carts'],
        summary: 'A cart with its items, coupons and totals',
        description: CART_ACCESS,
        params: IdParams,
        response: { 200: Cart, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => cartService.get(request.params.id, await reader(request)),
  )

  app.post(
    '/:id/items',
    {
      schema: {
        operationId: 'addCartItem',
        tags: ['carts'],
        summary: 'Add a product (or one of its variants); the same product and variant again raises that line',
        params: IdParams,
        body: AddCartItem,
        response: { 201: Cart, ...errorResponses(400, 401, 404, 409, 429) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await cartService.addItem(request.params.id, request.body, await writer(request))),
  )

  app.patch(
    '/:id/items/:item_id',
    {
      schema: {
        operationId: 'updateCartItem',
        tags: ['carts'],
        summary: "Set a line's quantity",
        params: CartItemParams,
        body: UpdateCartItem,
        response: { 200: Cart, ...errorResponses(400, 401, 404, 409, 429) },
      },
    },
    async (request) =>
      cartService.updateItem(request.params.id, request.params.item_id, request.body.quantity, await writer(request)),
  )

  app.delete(
    '/:id/items/:item_id',
    {
      schema: {
        operationId: 'deleteCartItem',
        tags: ['carts'],
        summary: 'Remove a line',
        params: CartItemParams,
        response: { 204: deleted, ...errorResponses(400, 401, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      await cartService.removeItem(request.params.id, request.params.item_id, await writer(request))
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/:id/coupons',
    {
      schema: {
        operationId: 'applyCartCoupon',
        tags: ['carts'],
        summary: 'Apply a coupon by its code (case-insensitive)',
        description:
          'Up to 5 coupons: percentages apply first, then fixed amounts, each on what is left, so the discount ' +
          'never exceeds the subtotal. A coupon that stops qualifying later stays on the cart with applicable: false.',
        params: IdParams,
        body: ApplyCoupon,
        response: { 201: Cart, ...errorResponses(400, 401, 404, 409, 429) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await cartService.applyCoupon(request.params.id, request.body.code, await writer(request))),
  )

  app.delete(
    '/:id/coupons/:coupon_id',
    {
      schema: {
        operationId: 'removeCartCoupon',
        tags: ['carts'],
        summary: 'Remove a coupon from the cart',
        params: CartCouponParams,
        response: { 204: deleted, ...errorResponses(400, 401, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      await cartService.removeCoupon(request.params.id, request.params.coupon_id, await writer(request))
      return reply.code(204).send(null)
    },
  )

  app.put(
    '/:id/shipping-address',
    {
      schema: {
        operationId: 'setCartShippingAddress',
        tags: ['carts'],
        summary: 'Set the shipping address (tax follows it)',
        params: IdParams,
        body: AddressInput,
        response: { 200: Cart, ...errorResponses(400, 401, 404, 409, 429) },
      },
    },
    async (request) => cartService.setShippingAddress(request.params.id, request.body, await writer(request)),
  )

  app.put(
    '/:id/email',
    {
      schema: {
        operationId: 'setCartEmail',
        tags: ['carts'],
        summary: "Set the buyer's email",
        params: IdParams,
        body: SetCartEmail,
        response: { 200: Cart, ...errorResponses(400, 401, 404, 409, 429) },
      },
    },
    async (request) => cartService.setEmail(request.params.id, request.body.email, await writer(request)),
  )
}
