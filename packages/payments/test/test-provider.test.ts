import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { ProviderUnavailableError, WebhookSignatureError, type AuthorizeRequest } from '@commerce/domain'
import { createTestProvider, testProvider } from '../src/index.js'
import { authorizeRequestFor, capturedInFull } from './authorize-request.js'

const authorizeRequest = (overrides: Partial<AuthorizeRequest> = {}) => authorizeRequestFor('tok_visa', overrides)

describe('the test provider', () => {
  it('tok_visa with automatic capture answers captured with the whole amount, under a pay_test_ reference', async () => {
    const request = authorizeRequest()
    const payment = await testProvider.authorize(request)
    expect(payment).toEqual({ ...capturedInFull, reference: expect.stringMatching(/^pay_test_/) })
    expect(payment.reference.startsWith(`pay_test_${request.paymentId}`)).toBe(true)
    expect(testProvider.name).toBe('test')
  })

  it('tok_visa with manual capture answers authorized, and capture answers the amount asked as captured', async () => {
    const payment = await testProvider.authorize(authorizeRequest({ capture: 'manual' }))
    expect(payment).toMatchObject({ status: 'authorized', amountMinor: 2500, capturedMinor: 0 })
    const captured = await testProvider.capture({ reference: payment.reference, amountMinor: 1500, currency: 'USD', idempotencyKey: 'c1' })
    expect(captured).toMatchObject({ reference: payment.reference, status: 'captured', amountMinor: 2500, capturedMinor: 1500 })
  })

  it('tok_declined answers failed with card_declined, and such a payment cannot be captured', async () => {
    const payment = await testProvider.authorize(authorizeRequest({ token: 'tok_declined', capture: 'manual' }))
    expect(payment).toMatchObject({ status: 'failed', failure: { code: 'card_declined', message: 'The card was declined' } })
    await expect(
      testProvider.capture({ reference: payment.reference, amountMinor: 2500, currency: 'USD', idempotencyKey: 'c2' }),
    ).rejects.toThrow('cannot capture a failed payment')
  })

  it('tok_error throws ProviderUnavailableError', async () => {
    await expect(testProvider.authorize(authorizeRequest({ token: 'tok_error' }))).rejects.toBeInstanceOf(ProviderUnavailableError)
  })

  it('tok_3ds requires a redirect to /3ds/<reference>, and retrieve keeps answering requires_action', async () => {
    const request = authorizeRequest({ token: 'tok_3ds' })
    const payment = await testProvider.authorize(request)
    expect(payment.status).toBe('requires_action')
    expect(payment.nextAction).toEqual({ type: 'redirect', client_secret: null, redirect_url: `https://example.com/3ds/${payment.reference}` })
    expect(await testProvider.retrieve({ paymentId: request.paymentId, reference: payment.reference })).toEqual(payment)
  })

  it('any other token fails with invalid_token naming the token', async () => {
    const payment = await testProvider.authorize(authorizeRequest({ token: 'tok_nope.v2' }))
    expect(payment).toMatchObject({ status: 'failed', failure: { code: 'invalid_token', message: "Unknown test token 'tok_nope.v2'" } })
  })

  it('retrieve answers the truth its reference encodes, and null without a reference or for another payment', async () => {
    const request = authorizeRequest({ token: 'tok_visa', capture: 'manual', amountMinor: 700, currency: 'JPY' })
    const payment = await testProvider.authorize(request)
    expect(await testProvider.retrieve({ paymentId: request.paymentId, reference: payment.reference })).toEqual(payment)
    expect(await testProvider.retrieve({ paymentId: request.paymentId, reference: null })).toBeNull()
    expect(await testProvider.retrieve({ paymentId: randomUUID(), reference: payment.reference })).toBeNull()
    expect(await testProvider.retrieve({ paymentId: request.paymentId, reference: 'pi_someone_else' })).toBeNull()
  })

  it('cancel answers canceled, for an authorized payment and one waiting for 3-D Secure', async () => {
    const payment = await testProvider.authorize(authorizeRequest({ capture: 'manual' }))
    const canceled = await testProvider.cancel({ reference: payment.reference, idempotencyKey: 'x1' })
    expect(canceled).toMatchObject({ reference: payment.reference, status: 'canceled', capturedMinor: 0 })

    const waiting = await testProvider.authorize(authorizeRequest({ token: 'tok_3ds' }))
    expect(await testProvider.cancel({ reference: waiting.reference, idempotencyKey: 'x2' })).toMatchObject({ status: 'canceled', nextAction: null })
  })

  it('refund answers a re_test_ reference and the payment captured with only this refund as refunded', async () => {
    const payment = await testProvider.authorize(authorizeRequest())
    const first = await testProvider.refund({ reference: payment.reference, amountMinor: 500, currency: 'USD', idempotencyKey: 'r1' })
    const second = await testProvider.refund({ reference: payment.reference, amountMinor: 300, currency: 'USD', idempotencyKey: 'r2' })
    expect(first.reference).toMatch(/^re_test_[0-9a-f-]{36}$/)
    expect(second.reference).not.toBe(first.reference)
    expect(first.payment).toMatchObject({ status: 'captured', capturedMinor: 2500, refundedMinor: 500 })
    // It does not remember the first refund: the service keeps the sums.
    expect(second.payment).toMatchObject({ status: 'captured', capturedMinor: 2500, refundedMinor: 300 })
  })

  it('has no webhooks: parseWebhook throws WebhookSignatureError', async () => {
    await expect(testProvider.parseWebhook({ rawBody: Buffer.from('{}'), headers: {} })).rejects.toBeInstanceOf(WebhookSignatureError)
  })

  it('latencyMs delays every call', async () => {
    const slow = createTestProvider({ latencyMs: 80 })
    const started = performance.now()
    await slow.authorize(authorizeRequest())
    expect(performance.now() - started).toBeGreaterThanOrEqual(75)
  })
})
