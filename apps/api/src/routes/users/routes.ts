import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { hasScope, IdParams, ListUsersQuery, UpdateUser, User, UserList } from '@commerce/domain'
import { errorResponses, forbidden } from '../../errors.js'
import { createUserService } from './service.js'

const TAKES_EFFECT =
  'A change counts from the account’s next request: its tokens are checked against the account on every ' +
  'request, so a disabled account’s tokens are refused (401) and a demoted admin’s get 403 on admin routes; ' +
  'its open WebSocket connections are closed at the next heartbeat (WS_HEARTBEAT_INTERVAL).'

export const userRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const userService = createUserService(app.db)

  app.get(
    '/',
    {
      schema: {
        operationId: 'listUsers',
        tags: ['users'],
        summary: 'List user accounts (admins and customers with a login), newest first',
        querystring: ListUsersQuery,
        response: { 200: UserList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => userService.list(request.query),
  )

  app.get(
    '/:id',
    {
      schema: {
        operationId: 'getUser',
        tags: ['users'],
        summary: 'A user account',
        params: IdParams,
        response: { 200: User, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => userService.get(request.params.id),
  )

  app.patch(
    '/:id',
    {
      schema: {
        operationId: 'updateUser',
        tags: ['users'],
        summary: 'Change a user’s role, or disable or enable the account',
        description:
          `${TAKES_EFFECT} Making an admin needs the scope \`*\` (an admin token), since an admin holds it: ` +
          '`users:write` alone may demote, disable and enable. The last enabled admin cannot be demoted or ' +
          'disabled (409). A disabled account cannot sign in: the right password answers 401 "This account is disabled".',
        params: IdParams,
        body: UpdateUser,
        response: { 200: User, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request) => {
      if (request.body.role === 'admin' && !hasScope(request.principal!.scopes, '*')) {
        throw forbidden('Making an admin needs the scope * (an admin token)')
      }
      return userService.update(request.params.id, request.body)
    },
  )
}
