import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Event, EventList, IdParams, ListEventsQuery } from '@commerce/domain'
import { errorResponses } from '../../errors.js'
import { createEventService } from './service.js'


export const eventRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const eventService = createEventService(app.db)

  app.get(
    '/',
    {
      schema: {
        operationId: 'listEvents',
        tags: ['events'],
        summary: 'The event log, newest first',
        description:
          'Every change that emits an event, as webhooks receive it (`{id, event, timestamp, data}`) plus the ' +
          '`customer_id` it concerns. `event` takes a kind (`order.paid`) or a family (`order.*`); `from` is ' +
          'inclusive and `to` exclusive.',
        querystring: ListEventsQuery,
        response: { 200: EventList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => eventService.list(request.query),
  )

  app.get(
    '/:id',
    {
      schema: {
        operationId: 'getEvent',
        tags: ['events'],
        summary: 'An event',
        params: IdParams,
        response: { 200: Event, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => eventService.get(request.params.id),
  )
}
