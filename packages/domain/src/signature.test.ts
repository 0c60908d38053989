import { createHmac } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { sign, signedDelivery, signStandardWebhook, verify, verifyStandardWebhook } from './signature.js'

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

describe('verifyStandardWebhook', () => {
  const id = '0190a6f1-7c3a-7000-8000-00000000beef'
  const payload = '{"id":"0190a6f1-7c3a-7000-8000-00000000beef","event":"order.paid","timestamp":"2026-11-23T00:00:00.000Z","data":{"total":19.99}}'
  const whsec = `whsec_${Buffer.from('a key of thirty-two bytes exact!').toString('base64')}`
  const now = 1_800_000_000

  it('accepts what the standardwebhooks library signs with a whsec_ secret, and says which signature matched', () => {
    const header = new Webhook(whsec).sign(id, new Date(now * 1000), payload)
    expect(verifyStandardWebhook(id, String(now), payload, whsec, header, { nowSeconds: now })).toEqual({ valid: true, matched: 0, signatures: 1 })
    // The timestamp as a number, the body as bytes: the same verdict.
    expect(verifyStandardWebhook(id, now, Buffer.from(payload), whsec, header, { nowSeconds: now })).toEqual({ valid: true, matched: 0, signatures: 1 })
  })

  it('accepts what the library signs with the raw UTF-8 bytes of a secret that is not whsec_', () => {
    const secret = 'a plain shared secret, ünïcode'
    const header = new Webhook(Buffer.from(secret, 'utf8'), { format: 'raw' }).sign(id, new Date(now * 1000), payload)
    expect(verifyStandardWebhook(id, now, payload, secret, header, { nowSeconds: now })).toMatchObject({ valid: true })
    expect(verifyStandardWebhook(id, now, payload, `${secret}!`, header, { nowSeconds: now })).toMatchObject({ valid: false })
  })

  it('finds the matching one among several space-separated signatures (a rotation’s grace) and skips other versions', () => {
    const { body, headers } = signedDelivery(
      { id, kind: 'order.paid', createdAt: new Date('2026-11-23T00:00:00Z'), resourceId: id, sequence: 1, data: { total: 19.99 } },
      ['whsec_bmV3IHNlY3JldCBuZXcgc2VjcmV0IG5ldyBzZWNyZXQhIQ==', whsec],
      now,
    )
    const header = headers['webhook-signature']!
    expect(header.split(' ')).toHaveLength(2)
    expect(verifyStandardWebhook(id, now, body, whsec, header, { nowSeconds: now })).toEqual({ valid: true, matched: 1, signatures: 2 })
    expect(verifyStandardWebhook(id, now, body, 'whsec_bmV3IHNlY3JldCBuZXcgc2VjcmV0IG5ldyBzZWNyZXQhIQ==', header, { nowSeconds: now })).toEqual({
      valid: true,
      matched: 0,
      signatures: 2,
    })
    const mine = signStandardWebhook(id, now, body, whsec)
    const withOthers = `v1a,${mine.slice(3)}  v2,${mine.slice(3)} ${mine}`
    expect(verifyStandardWebhook(id, now, body, whsec, withOthers, { nowSeconds: now })).toEqual({ valid: true, matched: 2, signatures: 3 })
    expect(verifyStandardWebhook(id, now, body, 'whsec_c29tZW9uZSBlbHNlJ3Mgc2VjcmV0', header, { nowSeconds: now })).toEqual({
      valid: false,
      reason: 'no_matching_signature',
      signatures: 2,
    })
  })

  it('rejects a tampered body, another id, another timestamp or another secret', () => {
    const header = signStandardWebhook(id, now, payload, whsec)
    const rejected = { valid: false, reason: 'no_matching_signature', signatures: 1 }
    expect(verifyStandardWebhook(id, now, payload.replace('19.99', '1.99'), whsec, header, { nowSeconds: now })).toEqual(rejected)
    expect(verifyStandardWebhook(id, now, `${payload}\n`, whsec, header, { nowSeconds: now })).toEqual(rejected)
    expect(verifyStandardWebhook(`${id}0`, now, payload, whsec, header, { nowSeconds: now })).toEqual(rejected)
    expect(verifyStandardWebhook(id, now + 1, payload, whsec, header, { nowSeconds: now })).toEqual(rejected)
    expect(verifyStandardWebhook(id, now, payload, 'whsec_b3RoZXI=', header, { nowSeconds: now })).toEqual(rejected)
  })

  it('refuses a timestamp more than the tolerance (300 s by default) away from now, either way; Infinity skips the check', () => {
    const at = (stamp: number) => signStandardWebhook(id, stamp, payload, whsec)
    expect(verifyStandardWebhook(id, now - 300, payload, whsec, at(now - 300), { nowSeconds: now })).toMatchObject({ valid: true })
    expect(verifyStandardWebhook(id, now - 301, payload, whsec, at(now - 301), { nowSeconds: now })).toEqual({
      valid: false,
      reason: 'timestamp_too_old',
      ageSeconds: 301,
    })
    expect(verifyStandardWebhook(id, now + 300, payload, whsec, at(now + 300), { nowSeconds: now })).toMatchObject({ valid: true })
    expect(verifyStandardWebhook(id, now + 301, payload, whsec, at(now + 301), { nowSeconds: now })).toEqual({
      valid: false,
      reason: 'timestamp_too_new',
      ageSeconds: -301,
    })
    expect(verifyStandardWebhook(id, now - 60, payload, whsec, at(now - 60), { nowSeconds: now, toleranceSeconds: 30 })).toMatchObject({
      reason: 'timestamp_too_old',
    })
    expect(verifyStandardWebhook(id, 1_000, payload, whsec, at(1_000), { nowSeconds: now, toleranceSeconds: Infinity })).toMatchObject({ valid: true })
    // Without nowSeconds, the clock: a signature of a day ago is too old.
    const dayAgo = Math.floor(Date.now() / 1000) - 86_400
    expect(verifyStandardWebhook(id, dayAgo, payload, whsec, at(dayAgo))).toMatchObject({ reason: 'timestamp_too_old' })
  })

  it.each([[''], ['12a'], ['-5'], ['1.5'], [' 1800000000'], ['1e9'], ['0x6b49d200']])('refuses a malformed timestamp %j before any signature', (stamp) => {
    expect(verifyStandardWebhook(id, stamp, payload, whsec, signStandardWebhook(id, now, payload, whsec), { nowSeconds: now, toleranceSeconds: Infinity })).toEqual({
      valid: false,
      reason: 'malformed_timestamp',
    })
  })

  it.each([
    ['empty', () => ''],
    ['no version', (good: string) => good.slice(3)],
    ['another version', (good: string) => `v2,${good.slice(3)}`],
    ['no padding', (good: string) => good.slice(0, -1)],
    ['hex of the same digest', (good: string) => `v1,${Buffer.from(good.slice(3), 'base64').toString('hex')}`],
    ['a space after the comma', (good: string) => `v1, ${good.slice(3)}`],
    ['upper-case version', (good: string) => `V1,${good.slice(3)}`],
    ['half the digest', (good: string) => `v1,${Buffer.from(good.slice(3), 'base64').subarray(0, 16).toString('base64')}`],
    ['comma-separated, not space-separated', (good: string) => `${good},${good}`],
  ])('rejects a malformed signature: %s', (_, malformed) => {
    const good = signStandardWebhook(id, now, payload, whsec)
    const verdict = verifyStandardWebhook(id, now, payload, whsec, malformed(good), { nowSeconds: now })
    expect(verdict).toMatchObject({ valid: false, reason: 'no_matching_signature' })
  })

  it('agrees with the standardwebhooks library on any body, id and secret, and on a flipped byte', () => {
    fc.assert(
      fc.property(anyText, fc.string({ minLength: 1, maxLength: 40 }).filter((text) => !text.includes(' ')), fc.uint8Array({ minLength: 1, maxLength: 64 }), (text, msgId, key) => {
        const secret = `whsec_${Buffer.from(key).toString('base64')}`
        const stamp = Math.floor(Date.now() / 1000)
        const header = new Webhook(secret).sign(msgId, new Date(stamp * 1000), text)
        // The library signs the UTF-8 of the text, lone surrogates as U+FFFD: verify those bytes.
        const bytes = new TextEncoder().encode(text)
        expect(verifyStandardWebhook(msgId, stamp, bytes, secret, header)).toEqual({ valid: true, matched: 0, signatures: 1 })
        const ours = signStandardWebhook(msgId, stamp, text, secret)
        expect(() => new Webhook(secret).verify(Buffer.from(bytes), { 'webhook-id': msgId, 'webhook-timestamp': String(stamp), 'webhook-signature': ours }, { jsonParse: false })).not.toThrow()
        const tampered = Buffer.concat([Buffer.from(bytes), Buffer.from('x')])
        expect(verifyStandardWebhook(msgId, stamp, tampered, secret, header)).toMatchObject({ valid: false })
      }),
      { numRuns: 100 },
    )
  })
})
