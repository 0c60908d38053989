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
