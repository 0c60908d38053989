import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import {
  AddressList,
  AddressParams,
  CreateAddress,
  CreateCustomer,
  Customer,
  CustomerAddress,
  CustomerList,
  hasScope,
  IdParams,
  ListCustomersQuery,
  OwnAddressParams,
  PaginationQuery,
  UpdateAddress,
  UpdateCustomer,
} from '@commerce/domain'
import { errorResponses, notFound } from '../../errors.js'
import { createCustomerService } from './service.js'

const deleted = { type: 'null', description: 'Deleted' } as const
const FIRST_ADDRESS_RULE =
  "A customer's first address becomes its default shipping and billing address when the request sets " +
  'neither is_default_shipping nor is_default_billing. Setting a default takes it away from the ' +
  "customer's previous default address; a customer has at most one of each."

export const customerRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const customerService = createCustomerService(app.db)

  /**
   * The customer a caller may act on: any, with the customers scope; otherwise only its own.
   * A customer asking for someone else's id gets 404, as if it did not exist (the access table
   * lets no one else through without the scope).
   */
  async function customerIdFor(request: FastifyRequest, id: string, access: 'read' | 'write'): Promise<string> {
    if (hasScope(request.principal!.scopes, `customers:${access}`)) return id
    if (app.customerIdOf(request) === id) return id
    throw notFound('Customer')
  }

  /** The signed-in customer's own record; accounts without one (admins) get 404. */
  async function ownCustomerId(request: FastifyRequest): Promise<string> {
    const id = app.customerIdOf(request)
    if (!id) throw notFound('Customer')
    return id
  }

  // --- admin ---------------------------------------------------------------------------------

  app.get(
    '/',
    {
      schema: {
        operationId: 'listCustomers',
        tags: ['customers'],
        summary: 'List customers, newest first (deleted customers are not listed)',
        description: 'search matches a case-insensitive substring of the email, first name, last name or full name.',
        querystring: ListCustomersQuery,
        response: { 200: CustomerList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => customerService.list(request.query),
  )

  app.post(
    '/',
    {
      schema: {
        operationId: 'createCustomer',
        tags: ['customers'],
        summary: 'Create a guest customer (no login); emits customer.created',
        description: 'Email is unique among customers, case-insensitively (409). Registering later with this email claims the record.',
        body: CreateCustomer,
        response: { 201: Customer, ...errorResponses(400, 401, 403, 409, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await customerService.create(request.body, String(request.id))),
  )

  app.delete(
    '/:id',
    {
      schema: {
        operationId: 'deleteCustomer',
        tags: ['customers'],
        summary: 'Delete a customer: anonymise personal data, delete addresses and login, keep the record for orders',
        description:
          'The email becomes `deleted-<id>@anonymized.invalid`, names and phone are cleared, addresses and the ' +
          'user account are deleted. The customer then answers 404 and is not listed; the old email is free again.',
        params: IdParams,
        response: { 204: deleted, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => {
      await customerService.anonymise(request.params.id)
      return reply.code(204).send(null)
    },
  )

  // --- the signed-in customer --------------------------------------------------------------

  app.get(
    '/me',
    {
      schema: {
        operationId: 'getCurrentCustomer',
        tags: ['customers'],
        summary: "The signed-in customer's own record (404 for accounts without one)",
        response: { 200: Customer, ...errorResponses(401, 404, 429) },
      },
    },
    async (request) => customerService.get(await ownCustomerId(request)),
  )

  app.patch(
    '/me',
    {
      schema: {
        operationId: 'updateCurrentCustomer',
        tags: ['customers'],
        summary: "Update the signed-in customer's name, phone or email (a new email is also the new login)",
        body: UpdateCustomer,
        response: { 200: Customer, ...errorResponses(400, 401, 404, 409, 429) },
      },
    },
    async (request) => customerService.update(await ownCustomerId(request), request.body),
  )

  app.get(
    '/me/addresses',
    {
      schema: {
        operationId: 'listCurrentCustomerAddresses',
        tags: ['customers'],
        summary: "The signed-in customer's saved addresses, oldest first",
        querystring: PaginationQuery,
        response: { 200: AddressList, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => customerService.listAddresses(await ownCustomerId(request), request.query),
  )

  app.post(
    '/me/addresses',
    {
      schema: {
        operationId: 'createCurrentCustomerAddress',
        tags: ['customers'],
        summary: 'Save an address for the signed-in customer (the first one becomes the default shipping and billing address)',
        description: FIRST_ADDRESS_RULE,
        body: CreateAddress,
        response: { 201: CustomerAddress, ...errorResponses(400, 401, 404, 409, 429) },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await customerService.createAddress(await ownCustomerId(request), request.body)),
  )

  app.get(
    '/me/addresses/:address_id',
    {
      schema: {
        operationId: 'getCurrentCustomerAddress',
        tags: ['customers'],
        summary: "One of the signed-in customer's addresses",
        params: OwnAddressParams,
        response: { 200: CustomerAddress, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request) => customerService.getAddress(await ownCustomerId(request), request.params.address_id),
  )

  app.patch(
    '/me/addresses/:address_id',
    {
      schema: {
        operationId: 'updateCurrentCustomerAddress',
        tags: ['customers'],
        summary: "Update one of the signed-in customer's addresses (setting a default clears the previous one)",
        description: FIRST_ADDRESS_RULE,
        params: OwnAddressParams,
        body: UpdateAddress,
        response: { 200: CustomerAddress, ...errorResponses(400, 401, 404, 409, 429) },
      },
    },
    async (request) =>
      customerService.updateAddress(await ownCustomerId(request), request.params.address_id, request.body),
  )

  app.delete(
    '/me/addresses/:address_id',
    {
      schema: {
        operationId: 'deleteCurrentCustomerAddress',
        tags: ['customers'],
        summary: "Delete one of the signed-in customer's addresses (no other address becomes the default)",
        params: OwnAddressParams,
        response: { 204: deleted, ...errorResponses(400, 401, 404, 429) },
      },
    },
    async (request, reply) => {
      await customerService.deleteAddress(await ownCustomerId(request), request.params.address_id)
      return reply.code(204).send(null)
    },
  )

  // --- by id: admins (customers scope) or the customer itself -------------------------------

  app.get(
    '/:id',
    {
      schema: {
        operationId: 'getCustomer',
        tags: ['customers'],
        summary: 'A customer (admins, or the customer itself; anyone else gets 404)',
        params: IdParams,
        response: { 200: Customer, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => customerService.get(await customerIdFor(request, request.params.id, 'read')),
  )

  app.patch(
    '/:id',
    {
      schema: {
        operationId: 'updateCustomer',
        tags: ['customers'],
        summary: "Update a customer's name, phone or email (admins, or the customer itself)",
        description: 'A new email of a customer with a login also becomes the login email; a clash with another customer or account answers 409.',
        params: IdParams,
        body: UpdateCustomer,
        response: { 200: Customer, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => customerService.update(await customerIdFor(request, request.params.id, 'write'), request.body),
  )

  app.get(
    '/:id/addresses',
    {
      schema: {
        operationId: 'listCustomerAddresses',
        tags: ['customers'],
        summary: "A customer's saved addresses, oldest first (admins, or the customer itself)",
        params: IdParams,
        querystring: PaginationQuery,
        response: { 200: AddressList, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) =>
      customerService.listAddresses(await customerIdFor(request, request.params.id, 'read'), request.query),
  )

  app.post(
    '/:id/addresses',
    {
      schema: {
        operationId: 'createCustomerAddress',
        tags: ['customers'],
        summary: "Save an address for a customer (the first one becomes the default shipping and billing address)",
        description: FIRST_ADDRESS_RULE,
        params: IdParams,
        body: CreateAddress,
        response: { 201: CustomerAddress, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) =>
      reply
        .code(201)
        .send(await customerService.createAddress(await customerIdFor(request, request.params.id, 'write'), request.body)),
  )

  app.get(
    '/:id/addresses/:address_id',
    {
      schema: {
        operationId: 'getCustomerAddress',
        tags: ['customers'],
        summary: "One of a customer's addresses",
        params: AddressParams,
        response: { 200: CustomerAddress, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) =>
      customerService.getAddress(await customerIdFor(request, request.params.id, 'read'), request.params.address_id),
  )

  app.patch(
    '/:id/addresses/:address_id',
    {
      schema: {
        operationId: 'updateCustomerAddress',
        tags: ['customers'],
        summary: "Update one of a customer's addresses (setting a default clears the previous one)",
        description: FIRST_ADDRESS_RULE,
        params: AddressParams,
        body: UpdateAddress,
        response: { 200: CustomerAddress, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) =>
      customerService.updateAddress(
        await customerIdFor(request, request.params.id, 'write'),
        request.params.address_id,
        request.body,
      ),
  )

  app.delete(
    '/:id/addresses/:address_id',
    {
      schema: {
        operationId: 'deleteCustomerAddress',
        tags: ['customers'],
        summary: "Delete one of a customer's addresses (no other address becomes the default)",
        params: AddressParams,
        response: { 204: deleted, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await customerService.deleteAddress(
        await customerIdFor(request, request.params.id, 'write'),
        request.params.address_id,
      )
      return reply.code(204).send(null)
    },
  )
}
