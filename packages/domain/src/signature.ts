/**
 * Webhook signatures, both schemes a delivery carries: lowercase hex HMAC-SHA256 of the exact raw
 * body, keyed with the UTF-8 bytes of the subscription secret (the X-Webhook-Signature header),
 * and Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`).
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

export function sign(body: string | Uint8Array, secret: string): string {
  return createHmac('sha256', secret).update(body).digest('hex')
}

/** Compares in constant time; a malformed signature is simply not valid. */
export function verify(body: string | Uint8Array, secret: string, signature: string): boolean {
  const expected = Buffer.from(sign(body, secret), 'hex')
  const wellFormed = /^[0-9a-f]{64}$/i.test(signature)
  const given = wellFormed ? Buffer.from(signature, 'hex') : Buffer.alloc(expected.length)
  return timingSafeEqual(expected, given) && wellFormed
}

const WHSEC = /^whsec_([A-Za-z0-9+/]+={0,2})$/

/**
 * The Standard Webhooks `webhook-signature` value: `v1,` + base64 HMAC-SHA256 of
 * `<webhook-id>.<webhook-timestamp>.<body>`. A generated `whsec_…` secret keys it with its
 * base64-decoded bytes (the spec's form); any other secret with its UTF-8 bytes, as the
 * `standardwebhooks` verifier does with `format: "raw"`.
 */
export function signStandardWebhook(id: string, timestampSeconds: number, body: string, secret: string): string {
  return `v1,${standardDigest(id, String(timestampSeconds), body, secret).toString('base64')}`
}

/** The HMAC key of a Standard Webhooks signature: a `whsec_…` secret's decoded bytes, else its UTF-8 bytes. */
function standardKey(secret: string): Buffer {
  const whsec = WHSEC.exec(secret)
  return whsec ? Buffer.from(whsec[1]!, 'base64') : Buffer.from(secret, 'utf8')
}

function standardDigest(id: string, timestamp: string, body: string | Uint8Array, secret: string): Buffer {
  return createHmac('sha256', standardKey(secret)).update(`${id}.${timestamp}.`).update(body).digest()
}

/** How far `webhook-timestamp` may be from now, either way, as in the Standard Webhooks libraries. */
export const STANDARD_WEBHOOK_TOLERANCE_SECONDS = 300

/** A `v1,` signature: base64 of a 32-byte HMAC-SHA256. */
const V1_SIGNATURE = /^v1,([A-Za-z0-9+/]{43}=)$/

/**
 * What verifying a Standard Webhooks delivery found: the signature that matched (its position
 * among the space-separated signatures of `webhook-signature`, from 0), or why none did.
 */
export type StandardWebhookVerdict =
  | { valid: true; matched: number; signatures: number }
  | { valid: false; reason: 'malformed_timestamp' }
  | { valid: false; reason: 'timestamp_too_old' | 'timestamp_too_new'; ageSeconds: number }
  | { valid: false; reason: 'no_matching_signature'; signatures: number }

/**
 * Verifies the `webhook-signature` header of a Standard Webhooks delivery: the timestamp must be
 * whole seconds within `toleranceSeconds` of `nowSeconds` (either way; `Infinity` skips the check,
 * which only suits re-checking a stored delivery), and one of its space-separated `v1,<base64>`
 * signatures must be the HMAC of `<id>.<timestamp>.<body>` keyed as `signStandardWebhook` keys
 * (a `whsec_…` secret's decoded bytes, else the secret's UTF-8 bytes). Other versions (`v1a,…`)
 * are skipped. Each signature is compared in constant time. `body` must be the exact bytes
 * received, before any parsing.
 */
export function verifyStandardWebhook(
  id: string,
  timestamp: string | number,
  body: string | Uint8Array,
  secret: string,
  signatureHeader: string,
  options: { toleranceSeconds?: number; nowSeconds?: number } = {},
): StandardWebhookVerdict {
  const stamp = String(timestamp)
  if (!/^[0-9]{1,15}$/.test(stamp)) return { valid: false, reason: 'malformed_timestamp' }
  const tolerance = options.toleranceSeconds ?? STANDARD_WEBHOOK_TOLERANCE_SECONDS
  const ageSeconds = (options.nowSeconds ?? Math.floor(Date.now() / 1000)) - Number(stamp)
  if (ageSeconds > tolerance) return { valid: false, reason: 'timestamp_too_old', ageSeconds }
  if (-ageSeconds > tolerance) return { valid: false, reason: 'timestamp_too_new', ageSeconds }

  const expected = standardDigest(id, stamp, body, secret)
  const signatures = signatureHeader.split(' ').filter((entry) => entry !== '')
  let matched = -1
  // Every signature is compared, a match or not, so the time taken says nothing about which matched.
  signatures.forEach((entry, index) => {
    const wellFormed = V1_SIGNATURE.exec(entry)
    const given = wellFormed ? Buffer.from(wellFormed[1]!, 'base64') : Buffer.alloc(expected.length)
    if (timingSafeEqual(expected, given) && wellFormed && matched === -1) matched = index
  })
  return matched === -1
    ? { valid: false, reason: 'no_matching_signature', signatures: signatures.length }
    : { valid: true, matched, signatures: signatures.length }
}

/** What a delivery of an event is: its envelope (the body) and the headers that sign it. */
export interface SignedDelivery {
  body: string
  headers: Record<string, string>
}

/**
 * The body and headers of one delivery, as the worker sends it and `commerce webhooks listen`
 * forwards it. `secrets` lists the current secret first, then any previous one still in its
 * grace period after a rotation: `webhook-signature` carries one `v1,` signature per secret,
 * space-separated (Standard Webhooks), so a receiver holding either verifies;
 * `X-Webhook-Signature` has room for one and carries the current secret's.
 */
export function signedDelivery(
  event: { id: string; kind: string; createdAt: Date; resourceId: string; sequence: number; data: unknown },
  secrets: readonly [string, ...string[]],
  timestampSeconds: number,
): SignedDelivery {
  const body = JSON.stringify({
    id: event.id,
    event: event.kind,
    timestamp: event.createdAt.toISOString(),
    resource_id: event.resourceId,
    sequence: event.sequence,
    data: event.data,
  })
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'commerce-webhooks/1',
      'x-webhook-id': event.id,
      'x-webhook-event': event.kind,
      'x-webhook-signature': sign(body, secrets[0]),
      'webhook-id': event.id,
      'webhook-timestamp': String(timestampSeconds),
      'webhook-signature': secrets.map((secret) => signStandardWebhook(event.id, timestampSeconds, body, secret)).join(' '),
    },
  }
}

/**
 * What each header of a delivery but its content-type says, for receivers (the API's OpenAPI
 * document lists them on every webhook); signedDelivery sends exactly these.
 */
export const DELIVERY_HEADERS: Readonly<Record<string, string>> = {
  'webhook-id': 'Standard Webhooks: the event’s id, the same on every attempt and replay; dedupe on it',
  'webhook-timestamp':
    'Standard Webhooks: when this attempt was signed, in seconds since the epoch (new on each attempt); refuse one more ' +
    `than ${STANDARD_WEBHOOK_TOLERANCE_SECONDS} seconds away from now`,
  'webhook-signature':
    'Standard Webhooks: `v1,` and the base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the ' +
    'base64-decoded bytes of a generated `whsec_…` secret, else with the secret’s UTF-8 bytes; space-separated, one ' +
    'per secret while a rotated secret is in its grace period',
  'x-webhook-id': 'The event’s id (as `webhook-id`)',
  'x-webhook-event': 'The event kind (as the body’s `event`)',
  'x-webhook-signature': 'Lowercase hex HMAC-SHA256 of the exact body, keyed with the UTF-8 bytes of the current secret',
  'user-agent': '`commerce-webhooks/1`',
}
