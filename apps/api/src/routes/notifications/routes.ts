import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { IdParams, ListNotificationsQuery, Notification, NotificationList, NotificationSettings, UpdateNotificationSettings } from '@commerce/domain'
import { errorResponses } from '../../errors.js'
import { createNotificationService } from './service.js'

export const notificationRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const service = createNotificationService(app.db)

  app.get(
    '/',
    {
      schema: {
        operationId: 'listNotifications',
        tags: ['notifications'],
        summary: 'The emails made from events, newest first, with their attempts',
        description:
          'Each notification is one email of one template to one recipient, made from one event (docs/notifications.md). ' +
          '`event` takes a kind (`order.paid`) or a family (`order.*`) of the event it was made from; `recipient` an exact ' +
          'address, case-insensitive.',
        querystring: ListNotificationsQuery,
        response: { 200: NotificationList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => service.list(request.query),
  )

  app.get(
    '/settings',
    {
      schema: {
        operationId: 'getNotificationSettings',
        tags: ['notifications'],
        summary: 'Which emails are sent',
        response: { 200: NotificationSettings, ...errorResponses(401, 403, 429) },
      },
    },
    async () => service.settings(),
  )

  app.patch(
    '/settings',
    {
      schema: {
        operationId: 'updateNotificationSettings',
        tags: ['notifications'],
        summary: 'Turn emails on or off',
        description:
          'Each template named is turned on (true) or off (false); the others stay as they are. It counts for the events ' +
          'the worker fans out from then on, on every worker at once; notifications made already are sent. Turning off ' +
          'password_reset, email_verification or email_change leaves those links unsent: nothing else can send them, ' +
          'since their token exists only in the email.',
        body: UpdateNotificationSettings,
        response: { 200: NotificationSettings, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => service.updateSettings(request.body),
  )

  app.get(
    '/:id',
    {
      schema: {
        operationId: 'getNotification',
        tags: ['notifications'],
        summary: 'A notification with its attempts',
        params: IdParams,
        response: { 200: Notification, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => service.get(request.params.id),
  )

  app.post(
    '/:id/resend',
    {
      schema: {
        operationId: 'resendNotification',
        tags: ['notifications'],
        summary: 'Send a notification again, now',
        description:
          'Whatever its status, the notification becomes `pending` and its next attempt is queued to run now, with the usual ' +
          'retries after a failure. There is one job per attempt number: a second resend before that attempt runs, or one ' +
          'while a retry waits, moves that same attempt to now. An account link is sent with a new token (the one sent ' +
          'before stops working), unless it was used or has expired: then the attempt fails, saying so.',
        params: IdParams,
        response: { 202: Notification, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => reply.code(202).send(await service.resend(request.params.id)),
  )
}
