import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ProviderUnavailableError, type AuthorizeRequest } from '@commerce/domain'
import { createStripeProvider, type StripeProviderOptions } from '../src/index.js'
import { startFakeStripe, type FakeStripe } from '../src/fake-stripe.js'
import { authorizeRequestFor, capturedInFull } from './authorize-request.js'

const authorizeRequest = (overrides: Partial<AuthorizeRequest> = {}) => authorizeRequestFor('pm_card_visa', overrides)

let fake: FakeStripe

beforeAll(async () => {
  fake = await startFakeStripe()
})

afterAll(async () => {
  await fake.close()
})

function stripeProvider(options: Partial<StripeProviderOptions> = {}) {
  return createStripeProvider({ secretKey: 'sk_test_fake', webhookSecret: 'whsec_test', maxNetworkRetries: 0, ...fake.stripeOptions, ...options })
}

function requestsWithKey(key: string) {
  return fake.requests.filter((request) => request.idempotencyKey === key)
}

function intentsOf(paymentId: string) {
  return [...fake.intents.values()].filter((intent) => intent.metadata.payment_id === paymentId)
}

describe('the Stripe adapter against the fake Stripe', () => {
  it('authorize with automatic capture creates one confirmed intent and answers captured', async () => {
    const provider = stripeProvider()
    const request = authorizeRequest()
    const payment = await provider.authorize(request)

    expect(provider.name).toBe('stripe')
    expect(payment).toEqual({ ...capturedInFull, reference: expect.stringMatching(/^pi_/) })
    const [sent] = requestsWithKey(request.idempotencyKey)
    expect(sent).toMatchObject({
      method: 'POST',
      path: '/v1/payment_intents',
      params: {
        amount: '2500',
        currency: 'usd',
        payment_method: 'pm_card_visa',
        confirm: 'true',
        capture_method: 'automatic',
        metadata: { payment_id: request.paymentId },
        automatic_payment_methods: { enabled: 'true', allow_redirects: 'never' },
        expand: ['latest_charge'],
      },
    })
    expect(sent?.params.return_url).toBeUndefined()
  })

  it('manual capture answers authorized, then a partial capture answers captured with capturedMinor', async () => {
    const provider = stripeProvider()
    const authorized = await provider.authorize(authorizeRequest({ capture: 'manual' }))
    expect(authorized).toMatchObject({ status: 'authorized', amountMinor: 2500, capturedMinor: 0 })

    const captured = await provider.capture({ reference: authorized.reference, amountMinor: 1800, currency: 'USD', idempotencyKey: randomUUID() })
    expect(captured).toMatchObject({ reference: authorized.reference, status: 'captured', amountMinor: 2500, capturedMinor: 1800, refundedMinor: 0 })
    expect(fake.intents.get(authorized.reference)).toMatchObject({ status: 'succeeded', amount_received: 1800, amount_capturable: 0 })
  })

  it('capturing more than is held is a refused request, not an unavailable provider', async () => {
    const provider = stripeProvider()
    const authorized = await provider.authorize(authorizeRequest({ capture: 'manual' }))
    const capture = provider.capture({ reference: authorized.reference, amountMinor: 2501, currency: 'USD', idempotencyKey: randomUUID() })
    await expect(capture).rejects.toThrow('Stripe refused the request: The amount to capture (2501) is greater than the amount capturable (2500).')
    await expect(capture).rejects.not.toBeInstanceOf(ProviderUnavailableError)
    expect(fake.intents.get(authorized.reference)?.status).toBe('requires_capture')
  })

  it('a declined card (402) answers failed with the decline code and message, under the intent id', async () => {
    const provider = stripeProvider()
    const declined = await provider.authorize(authorizeRequest({ token: 'pm_card_chargeDeclined' }))
    expect(declined).toMatchObject({
      reference: expect.stringMatching(/^pi_/),
      status: 'failed',
      capturedMinor: 0,
      failure: { code: 'generic_decline', message: 'Your card was declined.' },
    })
    expect(fake.intents.get(declined.reference)?.status).toBe('requires_payment_method')

    const poor = await provider.authorize(authorizeRequest({ token: 'pm_card_chargeDeclinedInsufficientFunds' }))
    expect(poor).toMatchObject({ status: 'failed', failure: { code: 'insufficient_funds', message: 'Your card has insufficient funds.' } })
  })

  it('3-D Secure answers requires_action with the client secret; once completed, retrieve answers captured', async () => {
    const provider = stripeProvider()
    const request = authorizeRequest({ token: 'pm_card_threeDSecure2Required' })
    const payment = await provider.authorize(request)
    const intent = fake.intents.get(payment.reference)
    expect(payment).toMatchObject({ status: 'requires_action', capturedMinor: 0 })
    expect(payment.nextAction).toEqual({ type: 'use_sdk', client_secret: intent?.client_secret, redirect_url: null })
    expect(payment.nextAction?.client_secret).toMatch(new RegExp(`^${payment.reference}_secret_`))

    fake.completeAction(payment.reference)
    expect(await provider.retrieve({ paymentId: request.paymentId, reference: payment.reference })).toMatchObject({
      status: 'captured',
      capturedMinor: 2500,
      nextAction: null,
    })
  })

  it('3-D Secure with a return_url answers a redirect; a failed authentication answers failed on retrieve', async () => {
    const provider = stripeProvider()
    const request = authorizeRequest({ token: 'pm_card_threeDSecure2Required', returnUrl: 'https://shop.example/return' })
    const payment = await provider.authorize(request)
    expect(payment.nextAction).toEqual({
      type: 'redirect',
      client_secret: fake.intents.get(payment.reference)?.client_secret,
      redirect_url: `${fake.url}/3ds/${payment.reference}`,
    })
    expect(requestsWithKey(request.idempotencyKey)[0]?.params).toMatchObject({
      return_url: 'https://shop.example/return',
      automatic_payment_methods: { allow_redirects: 'always' },
    })

    fake.completeAction(payment.reference, { succeed: false })
    expect(await provider.retrieve({ paymentId: request.paymentId, reference: payment.reference })).toMatchObject({
      status: 'failed',
      failure: { code: 'payment_intent_authentication_failure' },
    })
  })

  it('cancel of an authorized payment answers canceled', async () => {
    const provider = stripeProvider()
    const authorized = await provider.authorize(authorizeRequest({ capture: 'manual' }))
    const canceled = await provider.cancel({ reference: authorized.reference, idempotencyKey: randomUUID() })
    expect(canceled).toMatchObject({ reference: authorized.reference, status: 'canceled', capturedMinor: 0, refundedMinor: 0 })
    expect(fake.intents.get(authorized.reference)?.status).toBe('canceled')
  })

  it('cancel of a payment Stripe canceled already (an expired authorization) answers canceled; one already captured is refused', async () => {
    const provider = stripeProvider()
    const authorized = await provider.authorize(authorizeRequest({ capture: 'manual' }))
    await provider.cancel({ reference: authorized.reference, idempotencyKey: randomUUID() })
    const again = await provider.cancel({ reference: authorized.reference, idempotencyKey: randomUUID() })
    expect(again).toMatchObject({ reference: authorized.reference, status: 'canceled', capturedMinor: 0 })

    const captured = await provider.authorize(authorizeRequest())
    await expect(provider.cancel({ reference: captured.reference, idempotencyKey: randomUUID() })).rejects.toThrow(
      'Stripe refused the request: You cannot cancel this PaymentIntent because it has a status of succeeded.',
    )
  })

  it('partial refunds add up, and a refund over what is left is refused', async () => {
    const provider = stripeProvider()
    const request = authorizeRequest()
    const payment = await provider.authorize(request)
    const refund = (amountMinor: number) => provider.refund({ reference: payment.reference, amountMinor, currency: 'USD', idempotencyKey: randomUUID() })

    const first = await refund(1000)
    expect(first.reference).toMatch(/^re_/)
    expect(first.payment).toMatchObject({ status: 'captured', capturedMinor: 2500, refundedMinor: 1000 })
    const second = await refund(500)
    expect(second.reference).not.toBe(first.reference)
    expect(second.payment).toMatchObject({ capturedMinor: 2500, refundedMinor: 1500 })

    await expect(refund(1001)).rejects.toThrow('Refund amount (1001) is greater than unrefunded amount on charge (1000)')
    expect(await provider.retrieve({ paymentId: request.paymentId, reference: payment.reference })).toMatchObject({ refundedMinor: 1500 })
  })

  it('retrieve without a reference finds the intent by payment id, and answers null when there is none', async () => {
    const provider = stripeProvider()
    const request = authorizeRequest({ capture: 'manual' })
    const payment = await provider.authorize(request)

    expect(await provider.retrieve({ paymentId: request.paymentId, reference: null })).toEqual(payment)
    expect(fake.requests.at(-1)).toMatchObject({
      method: 'GET',
      path: '/v1/payment_intents/search',
      params: { query: `metadata['payment_id']:'${request.paymentId}'` },
    })
    expect(await provider.retrieve({ paymentId: randomUUID(), reference: null })).toBeNull()
    expect(await provider.retrieve({ paymentId: request.paymentId, reference: 'pi_unknown' })).toBeNull()
  })

  it('the same idempotency key twice makes one intent; with other parameters it is refused', async () => {
    const provider = stripeProvider()
    const request = authorizeRequest()
    const first = await provider.authorize(request)
    const again = await provider.authorize(request)

    expect(again).toEqual(first)
    expect(requestsWithKey(request.idempotencyKey)).toHaveLength(2)
    expect(intentsOf(request.paymentId)).toHaveLength(1)

    await expect(provider.authorize({ ...request, amountMinor: 9900 })).rejects.toThrow(/can only be used with the same parameters/)
    expect(intentsOf(request.paymentId)).toHaveLength(1)
  })

  it('a 500 with retries off throws ProviderUnavailableError and charges nothing', async () => {
    const provider = stripeProvider({ maxNetworkRetries: 0 })
    const request = authorizeRequest()
    fake.failNext(1, 500)
    await expect(provider.authorize(request)).rejects.toBeInstanceOf(ProviderUnavailableError)
    expect(requestsWithKey(request.idempotencyKey)).toHaveLength(1)
    expect(intentsOf(request.paymentId)).toHaveLength(0)
  })

  it('a 429 throws ProviderUnavailableError', async () => {
    const provider = stripeProvider({ maxNetworkRetries: 0 })
    fake.failNext(1, 429)
    await expect(provider.authorize(authorizeRequest())).rejects.toBeInstanceOf(ProviderUnavailableError)
  })

  it("the SDK's own retry (maxNetworkRetries 1) succeeds after one 500, with the same idempotency key", async () => {
    const provider = stripeProvider({ maxNetworkRetries: 1 })
    const request = authorizeRequest()
    fake.failNext(1, 500)
    expect(await provider.authorize(request)).toMatchObject({ status: 'captured' })
    expect(requestsWithKey(request.idempotencyKey)).toHaveLength(2)
    expect(intentsOf(request.paymentId)).toHaveLength(1)
  })

  it('no answer within timeoutMs throws ProviderUnavailableError', async () => {
    const provider = stripeProvider({ timeoutMs: 300, maxNetworkRetries: 0 })
    fake.hangNext(1)
    const started = performance.now()
    await expect(provider.authorize(authorizeRequest())).rejects.toBeInstanceOf(ProviderUnavailableError)
    const elapsed = performance.now() - started
    expect(elapsed).toBeGreaterThanOrEqual(250)
    expect(elapsed).toBeLessThan(5000)
  })

  it('setLatency delays every answer of the fake', async () => {
    fake.setLatency(150)
    try {
      const started = performance.now()
      await stripeProvider().retrieve({ paymentId: randomUUID(), reference: null })
      expect(performance.now() - started).toBeGreaterThanOrEqual(140)
    } finally {
      fake.setLatency(0)
    }
  })

  it('an unknown payment method is a refused request carrying Stripe\'s message', async () => {
    const provider = stripeProvider()
    const request = authorizeRequest({ token: 'pm_nope' })
    const authorize = provider.authorize(request)
    await expect(authorize).rejects.toThrow("Stripe refused the request: No such PaymentMethod: 'pm_nope'")
    await expect(authorize).rejects.not.toBeInstanceOf(ProviderUnavailableError)
    expect(intentsOf(request.paymentId)).toHaveLength(0)
  })

  it('refuses ISK and UGX, whose Stripe amounts are not ISO 4217 minor units, before calling Stripe', async () => {
    const provider = stripeProvider()
    const before = fake.requests.length
    await expect(provider.authorize(authorizeRequest({ currency: 'ISK' }))).rejects.toThrow(/ISK amounts with another exponent/)
    await expect(provider.authorize(authorizeRequest({ currency: 'ugx' }))).rejects.toThrow(/UGX/)
    expect(fake.requests.length).toBe(before)
    expect(await provider.authorize(authorizeRequest({ currency: 'HUF' }))).toMatchObject({ status: 'captured', currency: 'HUF' })
  })
})
