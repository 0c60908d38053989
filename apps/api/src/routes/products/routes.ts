import multipart from '@fastify/multipart'
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import {
  CreateImage,
  CreateProduct,
  CreateUpload,
  IMAGE_CONTENT_TYPES,
  ImageFileForm,
  Upload,
  CreateVariant,
  GeneratedVariants,
  GenerateVariants,
  SlugParams,
  IdParams,
  Image,
  ImageList,
  ImageParams,
  ListProductsQuery,
  LocaleQuery,
  LocalizedPaginationQuery,
  PaginationQuery,
  Product,
  ProductList,
  UpdateImage,
  UpdateProduct,
  UpdateVariant,
  Variant,
  VariantList,
  VariantParams,
} from '@commerce/domain'
import type { Config } from '../../config.js'
import { ApiError, errorResponses, forbidden, invalidField, notFound, unauthorized } from '../../errors.js'
import { describeLanguage, requestedLocales } from '../../locale.js'
import { isAdmin } from '../../plugins/auth.js'
import { createImageUploads, receiveUpload, THUMBNAIL_WIDTHS, tooLarge } from './images.js'
import { pageObjects, storedPageText } from './page.js'
import { createProductService, type ProductCaches } from './service.js'


/** What a read kept in memory shows (routes/products/catalog-cache.ts). */
const FROM_MEMORY =
  'for up to `PRODUCT_CACHE_TTL` (5 s) after reading it. What the instance itself writes shows at once: a catalog write ' +
  '(products, variants, images, translations, categories), and any stock it moves (a checkout, its payment provider’s ' +
  'webhook, an order, an edit, a cancellation, a fulfillment, a return, the inventory). A change made otherwise (another ' +
  'instance, the worker: a CSV import, an expired checkout) shows within that time. Carts and checkouts always read the current stock.'

/** Whether a read asks for a selection (`fields`, plugins/field-selection.ts), which cuts the answer's objects. */
const selecting = (request: FastifyRequest) => (request.query as { fields?: string }).fields !== undefined

/**
 * The answer's text, made once per answer object: a detail or page kept in memory
 * (catalog-cache.ts) is the same object on every read while it is kept, so it is serialized once.
 */
const answerTexts = new WeakMap<object, string>()

function sendText(reply: FastifyReply, answer: object, text: () => string) {
  let found = answerTexts.get(answer)
  if (found === undefined) answerTexts.set(answer, (found = text()))
  // A string is sent as it is; the route's type provider knows only the schema's objects.
  return reply.type('application/json; charset=utf-8').send(found as never)
}

export const productRoutes: FastifyPluginAsyncTypebox<{ config: Config; caches: ProductCaches }> = async (app, { config, caches }) => {
  const productService = createProductService(app.db, app.catalogDb, caches)

  /** A product's detail: the public's in the shop's own language as its stored JSON, any other (the staff's, in a locale) from its rows. */
  async function sendDetail(request: FastifyRequest, reply: FastifyReply, id: string) {
    const locales = requestedLocales(request)
    const staff = isAdmin(request)
    if (!staff && locales.length === 0) {
      const found = await productService.publicDetail(id)
      if (found.hidden) throw notFound('Product')
      describeLanguage(reply, [null])
      // A selection cuts the same answer's objects.
      return selecting(request) ? (JSON.parse(found.text) as Product) : sendText(reply, found, () => found.text)
    }
    const { product, shownLocale } = await productService.get(id, locales, staff)
    describeLanguage(reply, [shownLocale])
    return selecting(request) ? product : sendText(reply, product, () => reply.serializeInput(product, '200') as string)
  }

  app.get(
    '/',
    {
      schema: {
        operationId: 'listProducts',
        tags: ['products'],
        summary: 'List products, newest first (active only unless an admin asks include_inactive)',
        description: `Each API instance answers a page by number to anyone but an admin (not a walk by \`after\`) from memory ${FROM_MEMORY}`,
        querystring: ListProductsQuery,
        response: { 200: ProductList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => {
      const includeInactive = request.query.include_inactive === true || request.query.status !== undefined
      const admin = isAdmin(request)
      if (includeInactive && !admin) {
        throw request.principal ? forbidden('Only admins may list inactive products or filter by status') : unauthorized()
      }
      const customerId = request.principal?.kind === 'user' ? request.principal.customerId : null
      const page = await productService.list(request.query, includeInactive, requestedLocales(request), !admin, { staff: admin, customerId })
      describeLanguage(reply, page.shownLocales)
      if (selecting(request)) return pageObjects(page)
      return sendText(reply, page, () => ('json' in page ? storedPageText(page) : reply.serializeInput(page, '200') as string))
    },
  )

  app.get(
    '/:id',
    {
      schema: {
        operationId: 'getProduct',
        tags: ['products'],
        summary: 'A product with its options, variants, images and categories (drafts and scheduled products: admins only)',
        description: `Each API instance answers a detail from memory ${FROM_MEMORY}`,
        params: IdParams,
        querystring: LocaleQuery,
        response: { 200: Product, ...errorResponses(400, 404, 429) },
      },
    },
    async (request, reply) => {
      return sendDetail(request, reply, request.params.id)
    },
  )

  app.get(
    '/by-slug/:slug',
    {
      schema: {
        operationId: 'getProductBySlug',
        tags: ['products'],
        summary: 'A product by its slug, or by a slug it had before a rename',
        description:
          'A product renamed to a new slug keeps answering at its old ones (as Shopify\'s URL redirects do): the answer is the ' +
          'product, whose `slug` is its canonical one; a storefront that asked by an old slug redirects to it. ' +
          `Drafts and scheduled products answer 404 but to admins. Answered from memory like the detail, ${FROM_MEMORY}`,
        params: SlugParams,
        querystring: LocaleQuery,
        response: { 200: Product, ...errorResponses(400, 404, 429) },
      },
    },
    async (request, reply) => {
      const id = await productService.idBySlug(request.params.slug)
      return sendDetail(request, reply, id)
    },
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
        summary: "A product's variants, in the order they were added",
        params: IdParams,
        querystring: LocalizedPaginationQuery,
        response: { 200: VariantList, ...errorResponses(400, 404, 429) },
      },
    },
    async (request, reply) => {
      const list = await productService.listVariants(request.params.id, request.query, requestedLocales(request), isAdmin(request))
      describeLanguage(reply, [])
      return list
    },
  )

  app.post(
    '/:id/variants',
    {
      schema: {
        operationId: 'createProductVariant',
        tags: ['variants'],
        summary: 'Add a variant',
        description: "On a product with options, `options` names one value of each (400 otherwise); values another variant has already are 409 naming it.",
        params: IdParams,
        body: CreateVariant,
        response: { 201: Variant, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await productService.createVariant(request.params.id, request.body, String(request.id))),
  )

  app.post(
    '/:id/variants/generate',
    {
      schema: {
        operationId: 'generateProductVariants',
        tags: ['variants'],
        summary: 'Make a variant for every combination of the option values that none has yet',
        description:
          'Titles are the values joined ("M / Blue"), in the order of the options and their values. `price`, `compare_at_price` and ' +
          '`inventory_quantity` apply to every variant made unless an entry of `variants` names its combination. At most 1000 ' +
          'combinations in all; the product needs options (400 otherwise).',
        params: IdParams,
        body: GenerateVariants,
        response: { 201: GeneratedVariants, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) =>
      reply.code(201).send({ variants: await productService.generateVariants(request.params.id, request.body, String(request.id)) }),
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
        response: { 200: Variant, ...errorResponses(400, 401, 403, 404, 409, 429) },
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
    async (request) => productService.listImages(request.params.id, request.query, isAdmin(request)),
  )

  const images = createImageUploads({
    db: app.db,
    storage: config.storage,
    products: productService,
    publicUrl: config.publicUrl,
    maxBytes: config.uploadMaxBytes,
    log: app.log,
  })

  // The one route that takes a file: multipart bodies are parsed here only.
  await app.register(async (plugin) => {
    const files = plugin.withTypeProvider<TypeBoxTypeProvider>()
    await files.register(multipart, { limits: { fileSize: config.uploadMaxBytes, files: 1, fields: 4, fieldSize: 1000, parts: 6 } })
    files.post(
      '/:id/images',
      {
        schema: {
          operationId: 'createProductImage',
          tags: ['images'],
          summary: 'Add an image: a file (multipart/form-data), a presigned upload (upload_id) or a URL',
          description:
            'A file sent as multipart/form-data (field `file`, with optional `alt` and `position`) or named by `upload_id` ' +
            'is checked by its content (JPEG, PNG, WebP, GIF or AVIF; at most UPLOAD_MAX_BYTES), stored with WebP thumbnails ' +
            `${THUMBNAIL_WIDTHS.join(', ')} pixels wide, and deleted with the image. An image by \`url\` is only linked.`,
          params: IdParams,
          body: CreateImage,
          'x-multipart-body': ImageFileForm,
          response: { 201: Image, ...errorResponses(400, 401, 403, 404, 409, 413, 415, 429) },
        },
        // A multipart body is read by the handler: what the JSON schema sees is empty.
        preValidation: (request, _reply, done) => {
          if (request.isMultipart()) request.body = {}
          done()
        },
      },
      async (request, reply) => {
        const { id } = request.params
        const requestId = String(request.id)
        if (request.isMultipart()) {
          const { data, alt, position } = await readImageForm(request, config.uploadMaxBytes)
          return reply.code(201).send(await images.addFile(id, data, { alt, position }, requestId))
        }
        const { url, upload_id: uploadId, alt, position } = request.body
        if ((url === undefined) === (uploadId === undefined)) {
          throw new ApiError('validation_error', 'Send exactly one of url and upload_id (or the file itself as multipart/form-data)', [
            { field: url === undefined ? 'url' : 'upload_id', message: 'exactly one of url and upload_id' },
          ])
        }
        const image = uploadId
          ? await images.addUpload(id, uploadId, { alt, position }, requestId)
          : await productService.createImage(id, { url: url!, alt, position }, requestId)
        return reply.code(201).send(image)
      },
    )
  })

  app.post(
    '/:id/images/uploads',
    {
      schema: {
        operationId: 'createProductImageUpload',
        tags: ['images'],
        summary: 'An address to send an image file to from a browser (presigned), then to add with upload_id',
        description:
          'With S3 storage the address is a presigned PUT to the bucket; with disk storage it is PUT /uploads/{id} on this API. ' +
          'Send the file there with the headers given, within 15 minutes, then POST /products/{id}/images {upload_id}.',
        params: IdParams,
        body: CreateUpload,
        response: { 201: Upload, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await images.createUpload(request.params.id, request.body.content_type)),
  )

  app.patch(
    '/:id/images/:image_id',
    {
      schema: {
        operationId: 'updateProductImage',
        tags: ['images'],
        summary: "Change an image's alt text or position",
        params: ImageParams,
        body: UpdateImage,
        response: { 200: Image, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => productService.updateImage(request.params.id, request.params.image_id, request.body, String(request.id)),
  )

  app.delete(
    '/:id/images/:image_id',
    {
      schema: {
        operationId: 'deleteProductImage',
        tags: ['images'],
        summary: 'Delete an image (and its stored files)',
        params: ImageParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await images.deleteImage(request.params.id, request.params.image_id, String(request.id))
      return reply.code(204).send(null)
    },
  )
}

/** PUT /uploads/:id: the file of a presigned upload, sent to the API when the storage is a disk. */
export const uploadRoutes: FastifyPluginAsyncTypebox<{ config: Config }> = async (app, { config }) => {
  app.addContentTypeParser([...IMAGE_CONTENT_TYPES], { parseAs: 'buffer', bodyLimit: config.uploadMaxBytes }, (_request, body, done) => done(null, body))
  app.put(
    '/:id',
    {
      bodyLimit: config.uploadMaxBytes,
      schema: {
        operationId: 'sendUpload',
        tags: ['images'],
        summary: "Send a presigned upload's file to the API (disk storage)",
        description: 'The body is the file itself, with the Content-Type and Upload-Token headers that POST /products/{id}/images/uploads gave.',
        params: IdParams,
        headers: Type.Object({ 'upload-token': Type.Optional(Type.String({ maxLength: 100, description: 'The secret from the upload' })) }),
        'x-raw-body': { contentTypes: IMAGE_CONTENT_TYPES, description: 'The file' },
        response: { 204: { type: 'null', description: 'Received' }, ...errorResponses(400, 404, 409, 413, 415, 429) },
      },
    },
    async (request, reply) => {
      await receiveUpload(app.db, config.storage, request.params.id, request.headers['upload-token'], request.headers['content-type'], request.body as Buffer)
      return reply.code(204).send(null)
    },
  )
}

/** The form of a file sent directly: `file`, and optional `alt` and `position`, checked as the JSON fields are. */
async function readImageForm(request: FastifyRequest, maxBytes: number): Promise<{ data: Buffer; alt?: string; position?: number }> {
  let data: Buffer | undefined
  const fields: Record<string, string> = {}
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') throw invalidField(part.fieldname, `Field '${part.fieldname}' is not allowed; send the file as 'file'`)
        data = await part.toBuffer()
      } else {
        if (!['alt', 'position'].includes(part.fieldname)) throw invalidField(part.fieldname, `Field '${part.fieldname}' is not allowed`)
        fields[part.fieldname] = String(part.value)
      }
    }
  } catch (error) {
    if (error instanceof ApiError) throw error
    const code = (error as { code?: string }).code
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge(maxBytes)
    // Anything else thrown while reading the parts is the body's fault (busboy's "Unexpected end of multipart data" has no code).
    throw new ApiError('validation_error', `The multipart body could not be read: ${(error as Error).message}`)
  }
  if (!data) throw invalidField('file', "Field 'file' is required: the image file")
  if (fields.alt !== undefined && fields.alt.length > 500) throw invalidField('alt', "Field 'alt' must be at most 500 characters")
  let position: number | undefined
  if (fields.position !== undefined) {
    position = /^\d{1,5}$/.test(fields.position) ? Number(fields.position) : Number.NaN
    if (!(position >= 0 && position <= 10_000)) throw invalidField('position', "Field 'position' must be an integer from 0 to 10000")
  }
  return { data, alt: fields.alt, position }
}
