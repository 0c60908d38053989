import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import {
  CreateWebhook,
  IdParams,
  ListWebhookDeliveriesQuery,
  PaginationQuery,
  ReplayWebhook,
  RotatedWebhook,
  RotateWebhookSecret,
  UpdatedWebhook,
  UpdateWebhook,
  Webhook,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookDeliveryParams,
  WebhookList,
  WebhookReplay,
  WebhookWithSecret,
  MAX_REPLAY_DELIVERIES,
} from '@commerce/domain'
import type { Config } from '../../config.js'
import { errorResponses } from '../../errors.js'
import { createWebhookService } from './service.js'


export const webhookRoutes: FastifyPluginAsyncTypebox<{ config: Config }> = async (app, { config }) => {
  const webhookService = createWebhookService(app.db, { allowPrivateTargets: config.webhookAllowPrivateTargets })

  app.get(
    '/',
    {
      schema: {
        operationId: 'listWebhooks',
        tags: ['webhooks'],
        summary: 'List webhook subscriptions, newest first',
        description: 'The secret is never shown here.',
        querystring: PaginationQuery,
        response: { 200: WebhookList, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request) => webhookService.list(request.query),
  )

  app.get(
    '/:id',
    {
      schema: {
        operationId: 'getWebhook',
        tags: ['webhooks'],
        summary: 'A webhook subscription',
        params: IdParams,
        response: { 200: Webhook, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => webhookService.get(request.params.id),
  )

  app.post(
    '/',
    {
      schema: {
        operationId: 'createWebhook',
        tags: ['webhooks'],
        summary: 'Subscribe a URL to event kinds',
        description:
          'The answer is the only one that shows the secret; without `secret` one is generated (`whsec_` + base64 of ' +
          '32 random bytes, the Standard Webhooks form). Each delivery is a POST of `{id, event, timestamp, data}` signed ' +
          'with `X-Webhook-Signature` (hex HMAC-SHA256 of the body) and the Standard Webhooks headers.',
        body: CreateWebhook,
        response: { 201: WebhookWithSecret, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await webhookService.create(request.body)),
  )

  app.patch(
    '/:id',
    {
      schema: {
        operationId: 'updateWebhook',
        tags: ['webhooks'],
        summary: 'Update a webhook subscription',
        description:
          'A new `secret` replaces the current one at once and is shown in this answer only (reads never show it); ' +
          'to change it without downtime use `POST /webhooks/{id}/rotate-secret`. ' +
          'A new `url` is checked as on create. `is_active: false` stops new deliveries; `is_active: true` on an ' +
          'inactive subscription is the same as `POST /webhooks/{id}/enable`.',
        params: IdParams,
        body: UpdateWebhook,
        response: { 200: UpdatedWebhook, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => webhookService.update(request.params.id, request.body),
  )

  app.post(
    '/:id/rotate-secret',
    {
      schema: {
        operationId: 'rotateWebhookSecret',
        tags: ['webhooks'],
        summary: 'Rotate the signing secret without downtime',
        description:
          'Sets a new secret (given, or generated as on create), shown in this answer only. For `grace_period_seconds` ' +
          '(default 24 hours) every delivery is signed with both: `webhook-signature` carries one `v1,` signature per ' +
          'secret, space-separated as Standard Webhooks allows, the new one first; `X-Webhook-Signature` carries the new ' +
          "one's. `previous_secret_expires_at` says when the old one stops. Rotating again during a grace period ends the " +
          'older secret at once: only the secret just replaced keeps signing.',
        params: IdParams,
        body: RotateWebhookSecret,
        response: { 200: RotatedWebhook, ...errorResponses(400, 401, 403, 404, 429) },
      },
      // Every field is optional: a POST without a body rotates with the defaults.
      preValidation: async (request) => {
        request.body ??= {}
      },
    },
    async (request) => webhookService.rotateSecret(request.params.id, request.body),
  )

  app.post(
    '/:id/enable',
    {
      schema: {
        operationId: 'enableWebhook',
        tags: ['webhooks'],
        summary: 'Enable a subscription again',
        description:
          'Makes the subscription active and clears `disabled_at` and `failing_since` (the worker disables a ' +
          'subscription whose attempts have failed, without a success, for longer than its configured period, and ' +
          'emits `webhook.disabled`). Events of the time it was inactive are not sent by this: replay them with ' +
          '`POST /webhooks/{id}/replay` and `status: ["missing", "failed"]`.',
        params: IdParams,
        response: { 200: Webhook, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => webhookService.enable(request.params.id),
  )

  app.post(
    '/:id/replay',
    {
      schema: {
        operationId: 'replayWebhookEvents',
        tags: ['webhooks'],
        summary: 'Replay the deliveries of a time window',
        description:
          'Queues again, to be sent now, every delivery of this subscription whose event was created in [`from`, `to`) ' +
          'and matches `events` and `status`; each goes out with its original event id, so `webhook-id` is unchanged and ' +
          'receivers deduplicate as usual. With `status` including `missing`, events of the window the subscription ' +
          'wants but has no delivery of (sent while it was inactive) get one. The usual retries follow a failure. ' +
          `At most ${MAX_REPLAY_DELIVERIES.toLocaleString('en')} at once: a wider selection is refused whole (400) — ` +
          '`dry_run: true` counts it without queueing. An inactive subscription answers 409 unless it is a dry run.',
        params: IdParams,
        body: ReplayWebhook,
        response: { 202: WebhookReplay, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) => reply.code(202).send(await webhookService.replay(request.params.id, request.body)),
  )

  app.delete(
    '/:id',
    {
      schema: {
        operationId: 'deleteWebhook',
        tags: ['webhooks'],
        summary: 'Delete a webhook subscription with its deliveries',
        params: IdParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request, reply) => {
      await webhookService.remove(request.params.id)
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/:id/deliveries',
    {
      schema: {
        operationId: 'listWebhookDeliveries',
        tags: ['webhooks'],
        summary: "A subscription's deliveries with their attempts, newest first",
        params: IdParams,
        querystring: ListWebhookDeliveriesQuery,
        response: { 200: WebhookDeliveryList, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => webhookService.listDeliveries(request.params.id, request.query),
  )

  app.get(
    '/:id/deliveries/:delivery_id',
    {
      schema: {
        operationId: 'getWebhookDelivery',
        tags: ['webhooks'],
        summary: 'A delivery with its attempts',
        params: WebhookDeliveryParams,
        response: { 200: WebhookDelivery, ...errorResponses(400, 401, 403, 404, 429) },
      },
    },
    async (request) => webhookService.getDelivery(request.params.id, request.params.delivery_id),
  )

  app.post(
    '/:id/deliveries/:delivery_id/redeliver',
    {
      schema: {
        operationId: 'redeliverWebhookDelivery',
        tags: ['webhooks'],
        summary: 'Send a delivery again, now',
        description:
          'Whatever its status, the delivery becomes `pending` and its next attempt is queued to run now, with the ' +
          'usual retries after a failure. There is one job per attempt number: a second redeliver before that ' +
          'attempt runs, or one while a retry waits, moves that same attempt to now instead of adding another. ' +
          'An inactive subscription answers 409.',
        params: WebhookDeliveryParams,
        response: { 202: WebhookDelivery, ...errorResponses(400, 401, 403, 404, 409, 429) },
      },
    },
    async (request, reply) =>
      reply.code(202).send(await webhookService.redeliver(request.params.id, request.params.delivery_id)),
  )
}
