/** Customer groups and their members (admin; docs/pricing.md). */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  AddCustomerGroupCustomers,
  CreateCustomerGroup,
  CustomerGroup,
  CustomerGroupCustomerParams,
  CustomerGroupList,
  CustomerList,
  IdParams,
  ListCustomerGroupsQuery,
  PaginationQuery,
  UpdateCustomerGroup,
} from '@commerce/domain'
import { errorResponses } from '../../errors.js'
import { createCustomerGroupService } from './service.js'
import { refreshPricingOnWrite } from '../../plugins/pricing-rules.js'

const deleted = { type: 'null', description: 'Deleted' } as const

export const customerGroupRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Carts are priced with the rules each instance keeps: this one's answers show its own change.
  app.addHook('onSend', refreshPricingOnWrite(app))
  const groups = createCustomerGroupService(app.db)

  app.get(
    '/',
    {
      schema: {
        operationId: 'listCustomerGroups',
        tags: ['customer-groups'],
        summary: 'List customer groups by name',
        description: '`q` matches a case-insensitive substring of the name.',
        querystring: ListCustomerGroupsQuery,
        response: { 200: CustomerGroupList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => groups.list(request.query),
  )

  app.post(
    '/',
    {
      schema: {
        operationId: 'createCustomerGroup',
        tags: ['customer-groups'],
        summary: 'Create a customer group',
        description: 'The name is unique, compared case-insensitively (409).',
        body: CreateCustomerGroup,
        response: { 201: CustomerGroup, ...errorResponses(400, 401, 403, 409, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await groups.create(request.body)),
  )

  app.get(
    '/:id',
    {
      schema: {
        operationId: 'getCustomerGroup',
        tags: ['customer-groups'],
        summary: 'A customer group',
        params: IdParams,
        response: { 200: CustomerGroup, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => groups.get(request.params.id),
  )

  app.patch(
    '/:id',
    {
      schema: {
        operationId: 'updateCustomerGroup',
        tags: ['customer-groups'],
        summary: 'Rename a customer group or change its description',
        description: 'A name another group has, in any letter case, is 409.',
        params: IdParams,
        body: UpdateCustomerGroup,
        response: { 200: CustomerGroup, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => groups.update(request.params.id, request.body),
  )

  app.delete(
    '/:id',
    {
      schema: {
        operationId: 'deleteCustomerGroup',
        tags: ['customer-groups'],
        summary: 'Delete a customer group',
        description:
          'Its customers stay; they leave the group. Price lists and promotions limited to it lose it from their ' +
          '`customer_group_ids` in the same transaction (a list left with none applies to every customer).',
        params: IdParams,
        response: { 204: deleted, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await groups.remove(request.params.id)
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/:id/customers',
    {
      schema: {
        operationId: 'listCustomerGroupCustomers',
        tags: ['customer-groups'],
        summary: 'List the customers of a group, newest first',
        params: IdParams,
        querystring: PaginationQuery,
        response: { 200: CustomerList, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => groups.listCustomers(request.params.id, request.query),
  )

  app.post(
    '/:id/customers',
    {
      schema: {
        operationId: 'addCustomerGroupCustomers',
        tags: ['customer-groups'],
        summary: 'Add customers to a group',
        description:
          'Idempotent: customers already in the group stay, once. Every id must be a customer (deleted ones are not): ' +
          'otherwise 400 naming each `customer_ids[i]` at fault, and none is added. Answers the group.',
        params: IdParams,
        body: AddCustomerGroupCustomers,
        response: { 200: CustomerGroup, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => groups.addCustomers(request.params.id, request.body),
  )

  app.delete(
    '/:id/customers/:customer_id',
    {
      schema: {
        operationId: 'removeCustomerGroupCustomer',
        tags: ['customer-groups'],
        summary: 'Remove a customer from a group',
        description: '404 when the group does not exist or the customer is not in it.',
        params: CustomerGroupCustomerParams,
        response: { 204: { type: 'null', description: 'Removed' }, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await groups.removeCustomer(request.params.id, request.params.customer_id)
      return reply.code(204).send(null)
    },
  )
}
