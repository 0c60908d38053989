import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import {
  Collection,
  CollectionList,
  CollectionPreview,
  CollectionTranslation,
  CreateCollection,
  IdParams,
  ListCollectionsQuery,
  LocaleQuery,
  PreviewCollection,
  PutCollectionTranslation,
  SlugParams,
  UpdateCollection,
} from '@commerce/domain'
import { errorResponses } from '../../errors.js'
import { describeLanguage, requestedLocales, requireLocale } from '../../locale.js'
import { isAdmin } from '../../plugins/auth.js'
import { createCollectionService } from './service.js'

const LocaleParams = Type.Object({ id: IdParams.properties.id, locale: Type.String({ minLength: 1, maxLength: 35 }) })

/** Collections (docs/catalog.md, "Collections"); their products are `GET /products?collection=<slug>`. */
export const collectionRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const service = createCollectionService(app.db)

  app.get(
    '/',
    {
      schema: {
        operationId: 'listCollections',
        tags: ['collections'],
        summary: 'List collections, newest first (the public sees published ones)',
        querystring: ListCollectionsQuery,
        response: { 200: CollectionList, ...errorResponses(400, 429) },
      },
    },
    async (request) => service.list(request.query, isAdmin(request)),
  )

  app.get(
    '/:id',
    {
      schema: {
        operationId: 'getCollection',
        tags: ['collections'],
        summary: 'A collection (unpublished ones: admins only)',
        params: IdParams,
        querystring: LocaleQuery,
        response: { 200: Collection, ...errorResponses(400, 404, 429) },
      },
    },
    async (request, reply) => {
      const locales = requestedLocales(request)
      describeLanguage(reply, [])
      return service.get({ id: request.params.id }, isAdmin(request), locales)
    },
  )

  app.get(
    '/by-slug/:slug',
    {
      schema: {
        operationId: 'getCollectionBySlug',
        tags: ['collections'],
        summary: 'A collection by its slug, as a storefront page reads it; its products: `GET /products?collection=<slug>`',
        params: SlugParams,
        querystring: LocaleQuery,
        response: { 200: Collection, ...errorResponses(400, 404, 429) },
      },
    },
    async (request, reply) => {
      const locales = requestedLocales(request)
      describeLanguage(reply, [])
      return service.get({ slug: request.params.slug }, isAdmin(request), locales)
    },
  )

  app.post(
    '/',
    {
      schema: {
        operationId: 'createCollection',
        tags: ['collections'],
        summary: 'Create a collection: manual (product_ids, in order) or automatic (rules)',
        description:
          'An automatic collection holds the products its rules match (`match`: all or any), kept current in the transaction of every ' +
          'product, variant, price, stock or attribute change; no rules: empty. Sort defaults to manual (manual) or best_selling (automatic).',
        body: CreateCollection,
        response: { 201: Collection, ...errorResponses(400, 401, 403, 409, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await service.create(request.body, String(request.id))),
  )

  app.post(
    '/preview',
    {
      schema: {
        operationId: 'previewCollection',
        tags: ['collections'],
        summary: 'What an automatic collection with these rules would hold now (nothing is saved)',
        body: PreviewCollection,
        response: { 200: CollectionPreview, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => service.preview(request.body),
  )

  app.patch(
    '/:id',
    {
      schema: {
        operationId: 'updateCollection',
        tags: ['collections'],
        summary: 'Update a collection: its fields, its rules (automatic) or its products in order (manual)',
        params: IdParams,
        body: UpdateCollection,
        response: { 200: Collection, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => service.update(request.params.id, request.body, String(request.id)),
  )

  app.delete(
    '/:id',
    {
      schema: {
        operationId: 'deleteCollection',
        tags: ['collections'],
        summary: 'Delete a collection (its products stay)',
        params: IdParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await service.remove(request.params.id, String(request.id))
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/:id/translations',
    {
      schema: {
        operationId: 'listCollectionTranslations',
        tags: ['collections'],
        summary: "A collection's translations by locale",
        params: IdParams,
        response: { 200: Type.Object({ translations: Type.Array(CollectionTranslation) }, { title: 'CollectionTranslationList', description: "A collection's translations" }), ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => service.listTranslations(request.params.id),
  )

  app.put(
    '/:id/translations/:locale',
    {
      schema: {
        operationId: 'putCollectionTranslation',
        tags: ['collections'],
        summary: "Set a collection's title and description in a locale (the whole translation)",
        params: LocaleParams,
        body: PutCollectionTranslation,
        response: { 200: CollectionTranslation, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => {
      const locale = requireLocale(request.params.locale)
      const translation = await service.putTranslation(request.params.id, locale, request.body, String(request.id))
      app.translatedLocales.add(locale)
      return translation
    },
  )

  app.delete(
    '/:id/translations/:locale',
    {
      schema: {
        operationId: 'deleteCollectionTranslation',
        tags: ['collections'],
        summary: "Delete a collection's translation in a locale",
        params: LocaleParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await service.deleteTranslation(request.params.id, requireLocale(request.params.locale))
      return reply.code(204).send(null)
    },
  )
}
