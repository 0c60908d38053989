/**
 * The document's `webhooks` (OpenAPI 3.1): one entry per event kind, describing the POST the
 * worker sends each subscription that wants it — the signed headers (DELIVERY_HEADERS) and the
 * body (WEBHOOK_EVENTS: the event with its typed data) — and the `WebhookEvent` union of every
 * body, for a receiver that takes all kinds at one URL.
 */
import { DELIVERY_HEADERS, EVENT_CATALOG, EVENT_KINDS, WEBHOOK_EVENTS, webhookEventName, type EventKind } from '@commerce/domain'

type Json = Record<string, unknown>

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const headerParameter = (name: string) => `delivery.${name}`

/**
 * The delivery bodies and their union, for the document's components.schemas: given to
 * @fastify/swagger with its options, so that they are converted as the routes' schemas are.
 */
export const WEBHOOK_SCHEMAS: Record<string, object> = {
  ...Object.fromEntries(EVENT_KINDS.map((kind) => [webhookEventName(kind), WEBHOOK_EVENTS[kind]])),
  WebhookEvent: {
    title: 'WebhookEvent',
    description: 'The body of any webhook delivery, one of the `<Kind>Event` bodies: tell them apart by `event`',
    oneOf: EVENT_KINDS.map((kind) => WEBHOOK_EVENTS[kind]),
    discriminator: {
      propertyName: 'event',
      mapping: Object.fromEntries(EVENT_KINDS.map((kind) => [kind, schemaRef(webhookEventName(kind)).$ref])),
    },
  },
}

const RESPONSES = {
  '2XX': { description: 'Received: the delivery succeeded. The first 1 KiB of the answer is kept in the attempt log' },
  '410': { description: 'Gone: the attempt fails and the delivery is not retried' },
  default: {
    description:
      'Any other answer (3xx included), or none within WEBHOOK_TIMEOUT_MS (10 s by default): the attempt fails, and the ' +
      'delivery is retried after each wait of WEBHOOK_RETRY_SCHEDULE (1, 5 and 30 minutes by default)',
  },
}

function webhookOf(kind: EventKind): Json {
  const name = webhookEventName(kind)
  return {
    post: {
      operationId: `${name[0]!.toLowerCase()}${name.slice(1, -'Event'.length)}Webhook`,
      summary: kind,
      description:
        `${EVENT_CATALOG[kind].description}. Sent to every active subscription whose \`events\` take \`${kind}\` (or \`*\`), ` +
        'at least once and in no particular order: dedupe on `webhook-id`, and order the events of one resource by `sequence`. ' +
        'Verify the signature on the exact bytes received, before parsing them.',
      tags: ['webhooks'],
      parameters: Object.keys(DELIVERY_HEADERS).map((header) => ({ $ref: `#/components/parameters/${headerParameter(header)}` })),
      requestBody: { required: true, content: { 'application/json': { schema: schemaRef(name) } } },
      responses: RESPONSES,
    },
  }
}

/** Adds `webhooks` and the delivery headers (components.parameters) to the document. */
export function addWebhooks(document: Json): void {
  document.webhooks = Object.fromEntries(EVENT_KINDS.map((kind) => [kind, webhookOf(kind)]))
  const components = (document.components ??= {}) as Json
  components.parameters = {
    ...(components.parameters as Json | undefined),
    ...Object.fromEntries(
      Object.entries(DELIVERY_HEADERS).map(([header, description]) => [
        headerParameter(header),
        { in: 'header', name: header, required: true, description, schema: { type: 'string' } },
      ]),
    ),
  }
}
