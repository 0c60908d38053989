/**
 * Webhook signatures: lowercase hex HMAC-SHA256 of the exact raw body, keyed with the UTF-8
 * bytes of the subscription secret (the X-Webhook-Signature header).
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
  const whsec = WHSEC.exec(secret)
  const key = whsec ? Buffer.from(whsec[1]!, 'base64') : Buffer.from(secret, 'utf8')
  const digest = createHmac('sha256', key).update(`${id}.${timestampSeconds}.`).update(body).digest('base64')
  return `v1,${digest}`
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
