import { createHmac } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { sign, signStandardWebhook, verify } from './signature.js'

/** Any UTF-16 string, lone surrogates included (the 'binary' unit takes a second to build under vitest). */
const anyText = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: fc.nat(0xffff).map((code) => String.fromCharCode(code)) }),
)
const body = '{"id":"evt_1","kind":"order.paid"}'
const secret = 'whsec_test'

describe('sign', () => {
  it('matches the RFC 4231 HMAC-SHA256 test vector', () => {
    expect(sign('what do ya want for nothing?', 'Jefe')).toBe(
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    )
  })

  it('writes 64 lowercase hex digits', () => {
    expect(sign(body, secret)).toMatch(/^[0-9a-f]{64}$/)
    expect(sign('', '')).toBe('b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad')
  })

  it('is the lowercase hex HMAC-SHA256 node:crypto computes, for strings and bytes alike', () => {
    fc.assert(
      fc.property(anyText, anyText, (text, key) => {
        const expected = createHmac('sha256', Buffer.from(key, 'utf8')).update(Buffer.from(text, 'utf8')).digest('hex')
        expect(sign(text, key)).toBe(expected)
        expect(sign(new TextEncoder().encode(text), key)).toBe(expected)
      }),
    )
  })

  it('signs the exact bytes: a changed byte or an extra newline changes the signature', () => {
    expect(sign(body, secret)).not.toBe(sign(`${body}\n`, secret))
    expect(sign(body, secret)).not.toBe(sign(body.replace('paid', 'Paid'), secret))
  })
})

describe('verify', () => {
  const signature = sign(body, secret)

  it('accepts the signature of the body under the same secret', () => {
    expect(verify(body, secret, signature)).toBe(true)
    expect(verify(Buffer.from(body), secret, signature)).toBe(true)
  })

  it('accepts the signature written in upper-case hex', () => {
    expect(verify(body, secret, signature.toUpperCase())).toBe(true)
  })

  it('rejects a signature made with another secret', () => {
    expect(verify(body, 'whsec_other', signature)).toBe(false)
    expect(verify(body, secret, sign(body, `${secret} `))).toBe(false)
  })

  it('rejects a tampered body', () => {
    expect(verify(body.replace('evt_1', 'evt_2'), secret, signature)).toBe(false)
    expect(verify(` ${body}`, secret, signature)).toBe(false)
  })

  it.each([
    ['empty', ''],
    ['one hex digit short', signature.slice(0, -1)],
    ['one hex digit long', `${signature}0`],
    ['half the length', signature.slice(0, 32)],
    ['twice the length', signature + signature],
    ['non-hex characters', `${signature.slice(0, -1)}g`],
    ['a sha256= prefix', `sha256=${signature}`],
    ['surrounding whitespace', ` ${signature} `],
    ['a trailing newline', `${signature}\n`],
    ['base64 of the same digest', Buffer.from(signature, 'hex').toString('base64')],
  ])('rejects a malformed signature: %s', (_, given) => {
    expect(verify(body, secret, given)).toBe(false)
  })

  it('round-trips sign and verify for any body and secret, and rejects a flipped digit', () => {
    const anyBody = fc.oneof(anyText, fc.uint8Array({ maxLength: 512 }))
    fc.assert(
      fc.property(anyBody, fc.string(), fc.nat(63), (payload, key, position) => {
        const good = sign(payload, key)
        expect(verify(payload, key, good)).toBe(true)
        const flipped = good.slice(0, position) + (good[position] === '0' ? '1' : '0') + good.slice(position + 1)
        expect(verify(payload, key, flipped)).toBe(false)
      }),
    )
  })

  it('rejects a body signed under a different secret for any pair of distinct secrets', () => {
    fc.assert(
      fc.property(fc.uint8Array(), fc.string(), fc.string(), (payload, key, otherKey) => {
        fc.pre(key !== otherKey)
        expect(verify(payload, otherKey, sign(payload, key))).toBe(false)
      }),
    )
  })
})

describe('signStandardWebhook', () => {
  const id = 'msg_2KWPBgLlAfxdpx2AI54pPJ85f4W'
  const payload = '{"id":"evt_1","event":"order.paid","timestamp":"2026-11-23T00:00:00.000Z","data":{}}'

  it('is accepted by the standardwebhooks verifier for a generated whsec_ secret (base64 key)', () => {
    const secret = `whsec_${Buffer.from('a key of thirty-two bytes exact!').toString('base64')}`
    const timestamp = Math.floor(Date.now() / 1000)
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signStandardWebhook(id, timestamp, payload, secret) }
    expect(new Webhook(secret).verify(payload, headers)).toEqual(JSON.parse(payload))
    expect(() => new Webhook(secret).verify(payload.replace('paid', 'refunded'), headers)).toThrow()
  })

  it('keys with the raw UTF-8 bytes of any other secret (the verifier\'s format "raw")', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 64 }).filter((key) => !key.startsWith('whsec_')), (secret) => {
        const timestamp = Math.floor(Date.now() / 1000)
        const headers = { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signStandardWebhook(id, timestamp, payload, secret) }
        expect(new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }).verify(payload, headers)).toEqual(JSON.parse(payload))
      }),
      { numRuns: 50 },
    )
  })
})
