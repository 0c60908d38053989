import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ProviderUnavailableError } from '@commerce/domain'
import { paymentProviderFromEnv, testProvider } from '../src/index.js'
import { startFakeStripe, type FakeStripe } from '../src/fake-stripe.js'
import { authorizeRequestFor } from './authorize-request.js'

const SECRET_KEY = 'sk_test_never_shown_0123456789'
const WEBHOOK_SECRET = 'whsec_never_shown_0123456789'

let fake: FakeStripe

beforeAll(async () => {
  fake = await startFakeStripe()
})

afterAll(async () => {
  await fake.close()
})

describe('paymentProviderFromEnv', () => {
  it('answers the built-in test provider when nothing is set, or PAYMENT_PROVIDER=test even beside Stripe keys', () => {
    expect(paymentProviderFromEnv({})).toEqual({ provider: testProvider, problems: [] })
    expect(paymentProviderFromEnv({ PAYMENT_PROVIDER: ' ', STRIPE_SECRET_KEY: '' })).toEqual({ provider: testProvider, problems: [] })
    const chosen = paymentProviderFromEnv({ PAYMENT_PROVIDER: 'test', STRIPE_SECRET_KEY: SECRET_KEY, STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET })
    expect(chosen).toEqual({ provider: testProvider, problems: [] })
  })

  it('selects Stripe with both keys set, whether PAYMENT_PROVIDER says stripe or is unset', () => {
    const keys = { STRIPE_SECRET_KEY: SECRET_KEY, STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET }
    for (const env of [keys, { ...keys, PAYMENT_PROVIDER: 'stripe' }]) {
      const { provider, problems } = paymentProviderFromEnv(env)
      expect(problems).toEqual([])
      expect(provider.name).toBe('stripe')
    }
  })

  it('refuses PAYMENT_PROVIDER=stripe without its keys, naming each', () => {
    expect(paymentProviderFromEnv({ PAYMENT_PROVIDER: 'stripe' }).problems).toEqual([
      'STRIPE_SECRET_KEY is required when PAYMENT_PROVIDER=stripe',
      'STRIPE_WEBHOOK_SECRET is required when PAYMENT_PROVIDER=stripe',
    ])
  })

  it('refuses half of the Stripe keys, naming the missing one and never showing the other', () => {
    const onlyKey = paymentProviderFromEnv({ STRIPE_SECRET_KEY: SECRET_KEY })
    expect(onlyKey).toEqual({ provider: testProvider, problems: ['STRIPE_WEBHOOK_SECRET is required with STRIPE_SECRET_KEY (Stripe needs both)'] })
    const onlySecret = paymentProviderFromEnv({ STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET })
    expect(onlySecret.problems).toEqual(['STRIPE_SECRET_KEY is required with STRIPE_WEBHOOK_SECRET (Stripe needs both)'])
    expect(JSON.stringify([onlyKey, onlySecret])).not.toMatch(/never_shown/)
  })

  it('names an unknown provider, a bad timeout and an API base that is not a plain http(s) URL', () => {
    expect(paymentProviderFromEnv({ PAYMENT_PROVIDER: 'paypal' }).problems).toEqual(["PAYMENT_PROVIDER must be one of test, stripe (got 'paypal')"])
    for (const timeout of ['soon', '0s']) {
      expect(paymentProviderFromEnv({ PAYMENT_PROVIDER_TIMEOUT: timeout }).problems).toEqual([
        `PAYMENT_PROVIDER_TIMEOUT must be a duration such as 30s or 1500ms, more than zero (got '${timeout}')`,
      ])
    }
    for (const base of ['ftp://stripe.internal', 'https://stripe.internal/v1', 'stripe.internal:8443']) {
      expect(paymentProviderFromEnv({ STRIPE_API_BASE: base }).problems).toEqual([
        'STRIPE_API_BASE must be an http:// or https:// URL with no path, such as https://stripe-proxy.internal:8443',
      ])
    }
  })

  it('points the Stripe SDK at STRIPE_API_BASE, gives up after PAYMENT_PROVIDER_TIMEOUT and retries once', async () => {
    const { provider } = paymentProviderFromEnv({
      STRIPE_SECRET_KEY: SECRET_KEY,
      STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
      STRIPE_API_BASE: `${fake.url}/`,
      PAYMENT_PROVIDER_TIMEOUT: '300ms',
    })
    const request = authorizeRequestFor('pm_card_visa')
    const paid = await provider.authorize(request)
    expect(await provider.retrieve({ paymentId: request.paymentId, reference: null })).toMatchObject({ reference: paid.reference, status: 'captured' })

    const before = fake.requests.length
    fake.hangNext(2)
    await expect(provider.retrieve({ paymentId: request.paymentId, reference: paid.reference })).rejects.toBeInstanceOf(ProviderUnavailableError)
    expect(fake.requests.slice(before).map((sent) => sent.path)).toEqual([`/v1/payment_intents/${paid.reference}`, `/v1/payment_intents/${paid.reference}`])
  })
})
