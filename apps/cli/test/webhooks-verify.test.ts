/** `commerce webhooks verify`, the real binary, on bodies and headers signed as the worker signs them. */
import { execFile } from 'node:child_process'
import { createHmac, randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { signedDelivery } from '@commerce/domain'
import { BIN, userEnvironment } from './binary.js'


interface Run {
  code: number
  stdout: string
  stderr: string
}

/** `commerce webhooks verify …` with `stdin` as its standard input, byte for byte. */
function verifyCommand(args: string[], stdin: string | Buffer, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, 'webhooks', 'verify', ...args],
      { env: { ...userEnvironment('COMMERCE_WEBHOOK_SECRET'), ...env }, timeout: 30_000 },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    )
    child.stdin!.end(stdin)
  })
}

/** oclif prints errors as ` ›   Error: …`, wrapped to the terminal width: back to one line. */
const errorText = (stderr: string) => stderr.replace(/\s*›\s*/g, ' ').replace(/\s+/g, ' ').trim()

const current = `whsec_${randomBytes(32).toString('base64')}`
/** A previous secret in its grace period after a rotation: a given one, not whsec_. */
const previous = 'a-secret-the-owner-chose-0123456789'
const now = () => Math.floor(Date.now() / 1000)

function delivery(timestamp = now()) {
  return signedDelivery(
    { id: '0190a6f1-7c3a-7000-8000-00000000beef', kind: 'order.paid', createdAt: new Date('2026-11-24T10:00:00.123Z'), resourceId: '0190a6f1-7c3a-7000-8000-00000000f00d', sequence: 3, data: { total: 19.99, note: 'crème' } },
    [current, previous],
    timestamp,
  )
}

/** The Standard Webhooks flags of a delivery's headers. */
const standardFlags = (headers: Record<string, string>) => [
  '--id', headers['webhook-id']!,
  '--timestamp', headers['webhook-timestamp']!,
  '--standard-signature', headers['webhook-signature']!,
]

describe('commerce webhooks verify', () => {
  it('accepts X-Webhook-Signature for the body and secret, and says so', async () => {
    const { body, headers } = delivery()
    const run = await verifyCommand(['--secret', current, '--signature', headers['x-webhook-signature']!], body)
    expect(run).toEqual({ code: 0, stdout: 'valid: X-Webhook-Signature (hex HMAC-SHA256 of the body)\n', stderr: '' })
  })

  it('accepts a Standard Webhooks header holding several signatures, naming the one that matched', async () => {
    const { body, headers } = delivery()
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2)
    const withCurrent = await verifyCommand(['--secret', current, ...standardFlags(headers)], body)
    expect(withCurrent).toEqual({ code: 0, stdout: 'valid: webhook-signature (Standard Webhooks), signature 1 of 2\n', stderr: '' })
    const withPrevious = await verifyCommand([...standardFlags(headers)], body, { COMMERCE_WEBHOOK_SECRET: previous })
    expect(withPrevious).toEqual({ code: 0, stdout: 'valid: webhook-signature (Standard Webhooks), signature 2 of 2\n', stderr: '' })
  })

  it('checks both schemes when both are given', async () => {
    const { body, headers } = delivery()
    const run = await verifyCommand(['--secret', current, '--signature', headers['x-webhook-signature']!, ...standardFlags(headers)], body)
    expect(run.code).toBe(0)
    expect(run.stdout).toBe(
      'valid: X-Webhook-Signature (hex HMAC-SHA256 of the body)\nvalid: webhook-signature (Standard Webhooks), signature 1 of 2\n',
    )
    // The hex signature carries the current secret's only: with the previous one, that scheme fails and the run exits 1.
    const mixed = await verifyCommand(['--secret', previous, '--signature', headers['x-webhook-signature']!, ...standardFlags(headers)], body)
    expect(mixed.code).toBe(1)
    expect(mixed.stdout).toBe('valid: webhook-signature (Standard Webhooks), signature 2 of 2\n')
    expect(mixed.stderr).toBe('invalid: X-Webhook-Signature does not match this body and secret.\n')
  })

  it('accepts what the standardwebhooks library signs', async () => {
    const body = '{"id":"msg_1","event":"product.created"}'
    const timestamp = now()
    const signature = new Webhook(current).sign('msg_1', new Date(timestamp * 1000), body)
    const run = await verifyCommand(['--secret', current, '--id', 'msg_1', '--timestamp', String(timestamp), '--standard-signature', signature], body)
    expect(run).toMatchObject({ code: 0, stdout: 'valid: webhook-signature (Standard Webhooks), signature 1 of 1\n' })
  })

  it('refuses a tampered body, another secret, another id', async () => {
    const { body, headers } = delivery()
    const tampered = body.replace('19.99', '1.99')
    const hex = await verifyCommand(['--secret', current, '--signature', headers['x-webhook-signature']!], tampered)
    expect(hex).toEqual({ code: 1, stdout: '', stderr: 'invalid: X-Webhook-Signature does not match this body and secret.\n' })
    const standard = await verifyCommand(['--secret', current, ...standardFlags(headers)], tampered)
    expect(standard).toEqual({
      code: 1,
      stdout: '',
      stderr: 'invalid: none of the 2 signatures in webhook-signature matches this body, id, timestamp and secret.\n',
    })
    const otherSecret = await verifyCommand(['--secret', `whsec_${randomBytes(32).toString('base64')}`, ...standardFlags(headers)], body)
    expect(otherSecret.code).toBe(1)
    const otherId = await verifyCommand(['--secret', current, ...standardFlags({ ...headers, 'webhook-id': 'another-id' })], body)
    expect(otherId.code).toBe(1)
    expect(otherId.stderr).toContain('invalid: none of the 2 signatures')
    const malformed = await verifyCommand(['--secret', current, '--signature', `sha256=${headers['x-webhook-signature']}`], body)
    expect(malformed).toMatchObject({ code: 1, stderr: 'invalid: X-Webhook-Signature must be 64 hex digits (got 71 characters).\n' })
  })

  it('refuses a timestamp beyond --tolerance (300 s by default), either way; --tolerance 0 skips the check', async () => {
    const old = delivery(now() - 3600)
    const expired = await verifyCommand(['--secret', current, ...standardFlags(old.headers)], old.body)
    expect(expired.code).toBe(1)
    expect(expired.stderr).toMatch(/^invalid: webhook-timestamp is 36\d\d s old, beyond the tolerance of 300 s \(--tolerance 0 skips this check\)\.\n$/)
    const future = delivery(now() + 3600)
    const early = await verifyCommand(['--secret', current, ...standardFlags(future.headers)], future.body)
    expect(early.code).toBe(1)
    expect(early.stderr).toMatch(/^invalid: webhook-timestamp is 3\d\d\d s in the future, beyond the tolerance of 300 s/)
    expect((await verifyCommand(['--secret', current, '--tolerance', '7200', ...standardFlags(old.headers)], old.body)).code).toBe(0)
    const skipped = await verifyCommand(['--secret', current, '--tolerance', '0', ...standardFlags(delivery(1_000_000_000).headers)], delivery(1_000_000_000).body)
    expect(skipped).toMatchObject({ code: 0, stdout: 'valid: webhook-signature (Standard Webhooks), signature 1 of 2\n' })
    const garbled = await verifyCommand(['--secret', current, ...standardFlags({ ...old.headers, 'webhook-timestamp': 'yesterday' })], old.body)
    expect(garbled).toMatchObject({ code: 1, stderr: "invalid: webhook-timestamp must be whole seconds since the epoch (got 'yesterday').\n" })
  })

  it('reads the body as exact bytes: a newline echo added fails, with a hint; one that was signed passes', async () => {
    const { body, headers } = delivery()
    const echoed = await verifyCommand(['--secret', current, '--signature', headers['x-webhook-signature']!, ...standardFlags(headers)], `${body}\n`)
    expect(echoed.code).toBe(1)
    expect(echoed.stderr).toBe(
      "invalid: X-Webhook-Signature does not match this body and secret. It would match without the newline the body ends with: give the body from a file or with printf '%s', not echo.\n" +
        "invalid: none of the 2 signatures in webhook-signature matches this body, id, timestamp and secret. It would match without the newline the body ends with: give the body from a file or with printf '%s', not echo.\n",
    )
    // A body that really ends with a newline, and bytes that are not UTF-8, are verified as they are.
    const raw = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xff, 0xfe, 0x00]), Buffer.from('"}\r\n')])
    const signature = createHmac('sha256', current).update(raw).digest('hex')
    expect(await verifyCommand(['--secret', current, '--signature', signature], raw)).toMatchObject({ code: 0, stderr: '' })
    expect((await verifyCommand(['--secret', current, '--signature', signature], raw.subarray(0, -2))).code).toBe(1)
  })

  it('asks for a scheme and a secret with exit 2', async () => {
    const none = await verifyCommand(['--secret', current], '{}')
    expect(none.code).toBe(2)
    expect(errorText(none.stderr)).toContain(
      'Error: Give --signature (X-Webhook-Signature), or --id, --timestamp and --standard-signature (Standard Webhooks), or both USAGE $ commerce webhooks verify ',
    )
    const partial = await verifyCommand(['--secret', current, '--id', 'msg_1'], '{}')
    expect(partial.code).toBe(2)
    expect(errorText(partial.stderr)).toContain('All of the following must be provided when using --id: --timestamp, --standard-signature')
    const noSecret = await verifyCommand(['--signature', '00'], '{}')
    expect(noSecret.code).toBe(2)
    expect(errorText(noSecret.stderr)).toContain('Missing required flag secret')
  })
})
