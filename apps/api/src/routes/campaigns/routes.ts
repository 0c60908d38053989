import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Campaign, CampaignList, CreateCampaign, IdParams, ListCampaignsQuery, UpdateCampaign } from '@commerce/domain'
import { errorResponses } from '../../errors.js'
import { createCampaignService } from './service.js'
import { refreshPricingOnWrite } from '../../plugins/pricing-rules.js'

export const campaignRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Carts are priced with the rules each instance keeps: this one's answers show its own change.
  app.addHook('onSend', refreshPricingOnWrite(app))
  const campaignService = createCampaignService(app.db)

  app.get(
    '/',
    {
      schema: {
        operationId: 'listCampaigns',
        tags: ['campaigns'],
        summary: 'List campaigns, newest first',
        querystring: ListCampaignsQuery,
        response: { 200: CampaignList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => campaignService.list(request.query),
  )

  app.get(
    '/:id',
    {
      schema: {
        operationId: 'getCampaign',
        tags: ['campaigns'],
        summary: 'A campaign',
        params: IdParams,
        response: { 200: Campaign, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => campaignService.get(request.params.id),
  )

  app.post(
    '/',
    {
      schema: {
        operationId: 'createCampaign',
        tags: ['campaigns'],
        summary: 'Create a campaign',
        description:
          'A `budget` caps what the campaign’s promotions may give together: `spend` an amount in `currency` ' +
          '(required, a known ISO 4217 code), `usage` a whole number of orders (no currency). `limit` must be ' +
          'greater than 0; `ends_at` must be after `starts_at`. Promotions join it with their `campaign_id`.',
        body: CreateCampaign,
        response: { 201: Campaign, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await campaignService.create(request.body)),
  )

  app.patch(
    '/:id',
    {
      schema: {
        operationId: 'updateCampaign',
        tags: ['campaigns'],
        summary: 'Update a campaign',
        description:
          'The campaign is re-validated as a whole after the change. The `budget` fields sent replace the current ' +
          'ones; a new budget type needs its `limit`; `budget: null` removes the budget. `limit` cannot go below ' +
          '`used`; once some of the budget is used, its type and currency stay and it cannot be removed. A spend ' +
          'budget’s currency must be that of every promotion of the campaign that has one.',
        params: IdParams,
        body: UpdateCampaign,
        response: { 200: Campaign, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => campaignService.update(request.params.id, request.body),
  )

  app.delete(
    '/:id',
    {
      schema: {
        operationId: 'deleteCampaign',
        tags: ['campaigns'],
        summary: 'Delete a campaign; its promotions stay, in no campaign',
        params: IdParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await campaignService.remove(request.params.id)
      return reply.code(204).send(null)
    },
  )
}
