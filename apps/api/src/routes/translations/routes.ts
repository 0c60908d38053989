/**
 * Admin CRUD of translations (docs/translations.md) under their resources:
 * /products/:id/translations, /products/:id/variants/:variant_id/translations and
 * /categories/:id/translations, each with /:locale to read, replace (PUT) or delete one.
 */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { TSchema } from 'typebox'
import {
  CategoryTranslation,
  CategoryTranslationList,
  CategoryTranslationParams,
  IdParams,
  ProductTranslation,
  ProductTranslationList,
  ProductTranslationParams,
  PutCategoryTranslation,
  PutProductTranslation,
  PutVariantTranslation,
  VariantParams,
  VariantTranslation,
  VariantTranslationList,
  VariantTranslationParams,
} from '@commerce/domain'
import { errorResponses } from '../../errors.js'
import { requireLocale } from '../../locale.js'
import { createTranslationService, type OwnerIds } from './service.js'

interface Resource {
  /** The resource's path under /api/v1, up to `/translations`. */
  path: string
  /** For the operation ids: listProductTranslations, putVariantTranslation… */
  name: 'Product' | 'Variant' | 'Category'
  /** What the summaries call it. */
  noun: string
  tag: string
  ownerParams: TSchema
  params: TSchema
  body: TSchema
  translation: TSchema
  list: TSchema
  fields: string
}

export const translationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const translations = createTranslationService(app.db)

  const resources: [Resource, ReturnType<typeof createTranslationService>['product' | 'variant' | 'category']][] = [
    [
      { path: '/products/:id', name: 'Product', noun: 'product', tag: 'products', ownerParams: IdParams, params: ProductTranslationParams, body: PutProductTranslation, translation: ProductTranslation, list: ProductTranslationList, fields: 'title and description' },
      translations.product,
    ],
    [
      { path: '/products/:id/variants/:variant_id', name: 'Variant', noun: 'variant', tag: 'variants', ownerParams: VariantParams, params: VariantTranslationParams, body: PutVariantTranslation, translation: VariantTranslation, list: VariantTranslationList, fields: 'title' },
      translations.variant,
    ],
    [
      { path: '/categories/:id', name: 'Category', noun: 'category', tag: 'categories', ownerParams: IdParams, params: CategoryTranslationParams, body: PutCategoryTranslation, translation: CategoryTranslation, list: CategoryTranslationList, fields: 'name and description' },
      translations.category,
    ],
  ]

  for (const [resource, service] of resources) {
    const { path, name, noun, tag } = resource
    const changes = name === 'Category' ? '' : " The product is touched and product.updated recorded, as it shows other text in that locale."

    app.get(
      `${path}/translations`,
      {
        schema: {
          operationId: `list${name}Translations`,
          tags: [tag],
          summary: `The ${noun}'s translations, by locale`,
          params: resource.ownerParams,
          response: { 200: resource.list, ...errorResponses(400, 401, 403, 404, 429) },
        },
      },
      async (request) => ({ translations: await service.list(request.params as OwnerIds) }),
    )

    app.get(
      `${path}/translations/:locale`,
      {
        schema: {
          operationId: `get${name}Translation`,
          tags: [tag],
          summary: `The ${noun}'s translation in one locale`,
          params: resource.params,
          response: { 200: resource.translation, ...errorResponses(400, 401, 403, 404, 429) },
        },
      },
      async (request) => {
        const params = request.params as OwnerIds & { locale: string }
        return service.get(params, requireLocale(params.locale))
      },
    )

    app.put(
      `${path}/translations/:locale`,
      {
        schema: {
          operationId: `put${name}Translation`,
          tags: [tag],
          summary: `Create or replace the ${noun}'s translation in one locale`,
          description:
            `The ${resource.fields} in the locale (a BCP 47 tag, stored in canonical form: fr-ca becomes fr-CA). ` +
            `The body is the whole translation: a field left out or null shows the original text. 201 when created, 200 when replaced.${changes}`,
          params: resource.params,
          body: resource.body,
          response: { 200: resource.translation, 201: resource.translation, ...errorResponses(400, 401, 403, 404, 429) },
        },
      },
      async (request, reply) => {
        const params = request.params as OwnerIds & { locale: string }
        // The body was checked against this resource's own schema (`resource.body`).
        const locale = requireLocale(params.locale)
        const written = await service.put(params, locale, request.body as never, String(request.id))
        app.translatedLocales.add(locale)
        return reply.code(written.created ? 201 : 200).send(written.translation)
      },
    )

    app.delete(
      `${path}/translations/:locale`,
      {
        schema: {
          operationId: `delete${name}Translation`,
          tags: [tag],
          summary: `Delete the ${noun}'s translation in one locale`,
          description: `Its reads in that locale show the original text again.${changes}`,
          params: resource.params,
          response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 429) },
        },
      },
      async (request, reply) => {
        const params = request.params as OwnerIds & { locale: string }
        await service.remove(params, requireLocale(params.locale), String(request.id))
        return reply.code(204).send(null)
      },
    )
  }
}
