import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  AttributeDefinition,
  AttributeDefinitionList,
  CreateAttributeDefinition,
  IdParams,
  ListAttributeDefinitionsQuery,
  UpdateAttributeDefinition,
} from '@commerce/domain'
import { errorResponses } from '../../errors.js'
import { createAttributeService } from './service.js'

/** Custom attribute definitions of products and variants (docs/catalog.md, "Attributes"). */
export const attributeRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const attributes = createAttributeService(app.db)

  app.get(
    '/',
    {
      schema: {
        operationId: 'listAttributeDefinitions',
        tags: ['attributes'],
        summary: 'List attribute definitions by owner (products, then variants) and position',
        querystring: ListAttributeDefinitionsQuery,
        response: { 200: AttributeDefinitionList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => attributes.list(request.query),
  )

  app.get(
    '/:id',
    {
      schema: {
        operationId: 'getAttributeDefinition',
        tags: ['attributes'],
        summary: 'An attribute definition',
        params: IdParams,
        response: { 200: AttributeDefinition, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => attributes.get(request.params.id),
  )

  app.post(
    '/',
    {
      schema: {
        operationId: 'createAttributeDefinition',
        tags: ['attributes'],
        summary: 'Define an attribute of products or variants',
        description:
          '`key` is unique per owner (409). `choices` are required for select and multi_select and allowed only there; ' +
          '`validation.min`/`max` apply to integer, decimal (numbers) and date (YYYY-MM-DD), `pattern` and `max_length` to text. ' +
          'A `filterable` attribute can be filtered on (`attr[key]=`) and is counted in facets; rich_text cannot be.',
        body: CreateAttributeDefinition,
        response: { 201: AttributeDefinition, ...errorResponses(400, 401, 403, 409, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await attributes.create(request.body)),
  )

  app.patch(
    '/:id',
    {
      schema: {
        operationId: 'updateAttributeDefinition',
        tags: ['attributes'],
        summary: 'Change an attribute definition (its key, owner and type stay)',
        description: 'A change that values already written would break (a choice removed, a narrower range) is 409 naming how many hold one.',
        params: IdParams,
        body: UpdateAttributeDefinition,
        response: { 200: AttributeDefinition, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => attributes.update(request.params.id, request.body),
  )

  app.delete(
    '/:id',
    {
      schema: {
        operationId: 'deleteAttributeDefinition',
        tags: ['attributes'],
        summary: 'Delete an attribute definition and every value of it',
        params: IdParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await attributes.remove(request.params.id)
      return reply.code(204).send(null)
    },
  )
}
