/**
 * `@commerce/client/webhooks`: checking a delivery on a receiver (docs/webhooks.md). The
 * functions are @commerce/domain's, the ones the worker signs with; they use node:crypto, so they
 * live apart from the main entry, which runs in browsers too.
 */
import { verifyStandardWebhook, type StandardWebhookVerdict } from '@commerce/domain'
import type { WebhookEvent } from './operations.js'

export {
  sign,
  signStandardWebhook,
  STANDARD_WEBHOOK_TOLERANCE_SECONDS,
  verify,
  verifyStandardWebhook,
  type StandardWebhookVerdict,
} from '@commerce/domain'
export type { WebhookEvent }

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError'
  constructor(readonly verdict: Exclude<StandardWebhookVerdict, { valid: true }> | { valid: false; reason: 'missing_headers' }) {
    super(`The webhook delivery is not verified: ${verdict.reason}`)
  }
}

/** Request headers as Node (lower-case names) or fetch (`Headers`) give them. */
type DeliveryHeaders = Headers | Record<string, string | string[] | undefined>

const header = (headers: DeliveryHeaders, name: string) => {
  const value = headers instanceof Headers ? headers.get(name) : headers[name]
  return Array.isArray(value) ? value[0] : (value ?? undefined)
}

/**
 * The event of a delivery, once its Standard Webhooks signature (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature`) is checked against `secret`; throws
 * WebhookVerificationError otherwise. `body` must be the exact bytes received, before any parsing.
 */
export function constructWebhookEvent(
  body: string | Uint8Array,
  headers: DeliveryHeaders,
  secret: string,
  options?: { toleranceSeconds?: number },
): WebhookEvent {
  const [id, timestamp, signature] = ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => header(headers, name))
  if (!id || !timestamp || !signature) throw new WebhookVerificationError({ valid: false, reason: 'missing_headers' })
  const verdict = verifyStandardWebhook(id, timestamp, body, secret, signature, options)
  if (!verdict.valid) throw new WebhookVerificationError(verdict)
  return JSON.parse(typeof body === 'string' ? body : new TextDecoder().decode(body)) as WebhookEvent
}
