import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Category, CategoryList, CreateCategory, IdParams, LocaleQuery, LocalizedPaginationQuery, UpdateCategory } from '@commerce/domain'
import { errorResponses } from '../../errors.js'
import { describeLanguage, requestedLocales } from '../../locale.js'
import { createCategoryService } from './service.js'


export const categoryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const categoryService = createCategoryService(app.db)

  app.get(
    '/',
    {
      schema: {
        operationId: 'listCategories',
        tags: ['categories'],
        summary: 'List categories by name',
        querystring: LocalizedPaginationQuery,
        response: { 200: CategoryList, ...errorResponses(400, 429) },
      },
    },
    async (request, reply) => {
      const { list, shownLocales } = await categoryService.list(request.query, requestedLocales(request))
      describeLanguage(reply, shownLocales)
      return list
    },
  )

  app.get(
    '/:id',
    {
      schema: {
        operationId: 'getCategory',
        tags: ['categories'],
        summary: 'A category',
        params: IdParams,
        querystring: LocaleQuery,
        response: { 200: Category, ...errorResponses(400, 404, 429) },
      },
    },
    async (request, reply) => {
      const { category, shownLocale } = await categoryService.get(request.params.id, requestedLocales(request))
      describeLanguage(reply, [shownLocale])
      return category
    },
  )

  app.post(
    '/',
    {
      schema: {
        operationId: 'createCategory',
        tags: ['categories'],
        summary: 'Create a category (slug generated from the name when omitted)',
        body: CreateCategory,
        response: { 201: Category, ...errorResponses(400, 401, 403, 409, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await categoryService.create(request.body)),
  )

  app.patch(
    '/:id',
    {
      schema: {
        operationId: 'updateCategory',
        tags: ['categories'],
        summary: 'Update a category',
        params: IdParams,
        body: UpdateCategory,
        response: { 200: Category, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => categoryService.update(request.params.id, request.body),
  )

  app.delete(
    '/:id',
    {
      schema: {
        operationId: 'deleteCategory',
        tags: ['categories'],
        summary: 'Delete a category; its products stay and lose the link',
        params: IdParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await categoryService.remove(request.params.id)
      return reply.code(204).send(null)
    },
  )
}
