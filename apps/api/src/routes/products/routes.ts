import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  CreateImage,
  CreateProduct,
  CreateVariant,
  IdParams,
  Image,
  ImageList,
  ImageParams,
  ListProductsQuery,
  PaginationQuery,
  Product,
  ProductList,
  UpdateProduct,
  UpdateVariant,
  Variant,
  VariantList,
  VariantParams,
} from '@commerce/domain'
import { errorResponses, forbidden, unauthorized } from '../../errors.js'
import { refusePageWithCursor } from '../../list-cursor.js'
import { pageMeta } from '../../list-totals.js'
import { isAdmin } from '../../plugins/auth.js'
import { createProductService } from './service.js'


/** A short list (a product's variants or images) as one page of the list envelope. */
function onePage<T>(items: T[], query: { page?: number; per_page?: number }) {
  const page = query.page ?? 1
  const perPage = query.per_page ?? 20
  return { items: items.slice((page - 1) * perPage, page * perPage), meta: pageMeta(page, perPage, items.length) }
}

export const productRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const productService = createProductService(app.db, app.catalogDb)

  app.get(
    '/',
    {
      schema: {
        operationId: 'listProducts',
        tags: ['products'],
        summary: 'List products (active only unless an admin asks include_inactive)',
        querystring: ListProductsQuery,
        response: { 200: ProductList, ...errorResponses(400, 401, 403, 429) },
      },
      preValidation: refusePageWithCursor,
    },
    async (request) => {
      const includeInactive = request.query.include_inactive === true
      if (includeInactive && !isAdmin(request)) {
        throw request.principal ? forbidden('Only admins may list inactive products') : unauthorized()
      }
      return productService.list(request.query, includeInactive)
    },
  )

  app.get(
    '/:id',
    {
      schema: {
        operationId: 'getProduct',
        tags: ['products'],
        summary: 'A product with its variants, images and categories',
        params: IdParams,
        response: { 200: Product, ...errorResponses(400, 404, 429) },
      },
    },
    async (request) => productService.get(request.params.id),
  )

  app.post(
    '/',
    {
      schema: {
        operationId: 'createProduct',
        tags: ['products'],
        summary: 'Create a product',
        body: CreateProduct,
        response: { 201: Product, ...errorResponses(400, 401, 403, 409, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await productService.create(request.body, String(request.id))),
  )

  app.patch(
    '/:id',
    {
      schema: {
        operationId: 'updateProduct',
        tags: ['products'],
        summary: 'Update a product (only the fields sent change)',
        params: IdParams,
        body: UpdateProduct,
        response: { 200: Product, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => productService.update(request.params.id, request.body, String(request.id)),
  )

  app.delete(
    '/:id',
    {
      schema: {
        operationId: 'deleteProduct',
        tags: ['products'],
        summary: 'Soft-delete a product: is_active becomes false and the record stays',
        params: IdParams,
        response: { 204: { type: 'null', description: 'Deactivated' }, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await productService.deactivate(request.params.id, String(request.id))
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/:id/variants',
    {
      schema: {
        operationId: 'listProductVariants',
        tags: ['variants'],
        summary: "A product's variants",
        params: IdParams,
        querystring: PaginationQuery,
        response: { 200: VariantList, ...errorResponses(400, 404, 429) },
      },
    },
    async (request) => {
      const { items, meta } = onePage(await productService.listVariants(request.params.id), request.query)
      return { variants: items, meta }
    },
  )

  app.post(
    '/:id/variants',
    {
      schema: {
        operationId: 'createProductVariant',
        tags: ['variants'],
        summary: 'Add a variant',
        params: IdParams,
        body: CreateVariant,
        response: { 201: Variant, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await productService.createVariant(request.params.id, request.body, String(request.id))),
  )

  app.patch(
    '/:id/variants/:variant_id',
    {
      schema: {
        operationId: 'updateProductVariant',
        tags: ['variants'],
        summary: 'Update a variant',
        params: VariantParams,
        body: UpdateVariant,
        response: { 200: Variant, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) =>
      productService.updateVariant(request.params.id, request.params.variant_id, request.body, String(request.id)),
  )

  app.delete(
    '/:id/variants/:variant_id',
    {
      schema: {
        operationId: 'deleteProductVariant',
        tags: ['variants'],
        summary: 'Delete a variant',
        params: VariantParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await productService.deleteVariant(request.params.id, request.params.variant_id, String(request.id))
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/:id/images',
    {
      schema: {
        operationId: 'listProductImages',
        tags: ['images'],
        summary: "A product's images in display order",
        params: IdParams,
        querystring: PaginationQuery,
        response: { 200: ImageList, ...errorResponses(400, 404, 429) },
      },
    },
    async (request) => {
      const { items, meta } = onePage(await productService.listImages(request.params.id), request.query)
      return { images: items, meta }
    },
  )

  app.post(
    '/:id/images',
    {
      schema: {
        operationId: 'createProductImage',
        tags: ['images'],
        summary: 'Add an image by URL',
        params: IdParams,
        body: CreateImage,
        response: { 201: Image, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await productService.createImage(request.params.id, request.body, String(request.id))),
  )

  app.delete(
    '/:id/images/:image_id',
    {
      schema: {
        operationId: 'deleteProductImage',
        tags: ['images'],
        summary: 'Delete an image',
        params: ImageParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await productService.deleteImage(request.params.id, request.params.image_id, String(request.id))
      return reply.code(204).send(null)
    },
  )
}
