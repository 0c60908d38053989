import { randomUUID } from 'node:crypto'
import Stripe from 'stripe'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { WebhookSignatureError, type AuthorizeRequest } from '@commerce/domain'
import { createStripeProvider } from '../src/index.js'
import { startFakeStripe, type FakeStripe } from '../src/fake-stripe.js'
import { authorizeRequestFor } from './authorize-request.js'
import { startWebhookReceiver } from './webhook-receiver.js'

const authorizeRequest = (overrides: Partial<AuthorizeRequest> = {}) => authorizeRequestFor('pm_card_visa', overrides)
const webhookSecret = 'whsec_test_endpoint'

let fake: FakeStripe
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>

beforeAll(async () => {
  receiver = await startWebhookReceiver()
  fake = await startFakeStripe({ webhookUrl: receiver.url, webhookSecret })
})

afterAll(async () => {
  await fake.close()
  await receiver.close()
})

beforeEach(() => {
  fake.webhooks = 'auto'
  receiver.received.length = 0
})

const provider = () => createStripeProvider({ secretKey: 'sk_test_fake', webhookSecret, maxNetworkRetries: 0, ...fake.stripeOptions })

function signed(event: object, secret = webhookSecret) {
  const payload = JSON.stringify(event)
  return { rawBody: Buffer.from(payload), headers: { 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret }) } }
}

describe('Stripe webhooks', () => {
  it('parseWebhook reads a correctly signed payment_intent event into the payment and our payment id', async () => {
    fake.webhooks = 'manual'
    const request = authorizeRequest()
    const payment = await provider().authorize(request)
    const event = fake.events.findLast((e) => e.type === 'payment_intent.succeeded')!

    expect(await provider().parseWebhook(signed(event))).toEqual({
      eventId: event.id,
      paymentId: request.paymentId,
      payment,
    })
  })

  it('parseWebhook throws WebhookSignatureError for a wrong secret, a modified body or no signature', async () => {
    fake.webhooks = 'manual'
    await provider().authorize(authorizeRequest())
    const event = fake.events.at(-1)!
    const genuine = signed(event)

    await expect(provider().parseWebhook(signed(event, 'whsec_someone_else'))).rejects.toBeInstanceOf(WebhookSignatureError)
    const tampered = Buffer.from(genuine.rawBody.toString('utf8').replace('"amount":2500', '"amount":1'))
    expect(tampered.equals(genuine.rawBody)).toBe(false)
    await expect(provider().parseWebhook({ rawBody: tampered, headers: genuine.headers })).rejects.toBeInstanceOf(WebhookSignatureError)
    await expect(provider().parseWebhook({ rawBody: genuine.rawBody, headers: {} })).rejects.toBeInstanceOf(WebhookSignatureError)
  })

  it('events are sent as they happen and reach a receiver with a valid signature', async () => {
    const request = authorizeRequest({ capture: 'manual' })
    const payment = await provider().authorize(request)
    await provider().capture({ reference: payment.reference, amountMinor: 2000, currency: 'USD', idempotencyKey: randomUUID() })
    await provider().refund({ reference: payment.reference, amountMinor: 1500, currency: 'USD', idempotencyKey: randomUUID() })

    await vi.waitFor(() => expect(receiver.received).toHaveLength(3))
    expect(receiver.types()).toEqual(['payment_intent.amount_capturable_updated', 'payment_intent.succeeded', 'charge.refunded'])
    const parsed = await Promise.all(receiver.received.map((webhook) => provider().parseWebhook(webhook)))
    expect(parsed.map((webhook) => [webhook.paymentId, webhook.payment?.status, webhook.payment?.capturedMinor, webhook.payment?.refundedMinor])).toEqual([
      [request.paymentId, 'authorized', 0, 0],
      [request.paymentId, 'captured', 2000, 0],
      [request.paymentId, 'captured', 2000, 1500],
    ])
    expect(parsed[2]?.payment?.reference).toBe(payment.reference)
    expect(fake.sent.filter((delivery) => delivery.event.data.object.id === payment.reference).every((d) => d.status === 200)).toBe(true)
  })

  it('held events are released in reverse order', async () => {
    fake.holdEvents()
    const payment = await provider().authorize(authorizeRequest({ capture: 'manual' }))
    await provider().capture({ reference: payment.reference, amountMinor: 2500, currency: 'USD', idempotencyKey: randomUUID() })
    expect(receiver.received).toHaveLength(0)

    await fake.releaseEvents({ reverse: true })
    expect(receiver.types()).toEqual(['payment_intent.succeeded', 'payment_intent.amount_capturable_updated'])
  })

  it('manual mode sends only what sendEvent sends: a duplicate twice, with the same event id, after its delay', async () => {
    fake.webhooks = 'manual'
    await provider().authorize(authorizeRequest())
    const event = fake.events.at(-1)!
    const started = performance.now()
    await fake.sendEvent('payment_intent.succeeded', { duplicate: true, delayMs: 100 })

    expect(performance.now() - started).toBeGreaterThanOrEqual(95)
    expect(receiver.received).toHaveLength(2)
    const [first, second] = await Promise.all(receiver.received.map((webhook) => provider().parseWebhook(webhook)))
    expect(first?.eventId).toBe(event.id)
    expect(second?.eventId).toBe(event.id)
  })

  it('charge.refund.updated carries a Refund: the payment comes from the intent it names', async () => {
    fake.webhooks = 'manual'
    const request = authorizeRequest()
    const payment = await provider().authorize(request)
    const { reference } = await provider().refund({ reference: payment.reference, amountMinor: 200, currency: 'USD', idempotencyKey: randomUUID() })
    const event = { id: 'evt_refund_updated', object: 'event', type: 'charge.refund.updated', data: { object: { id: reference, object: 'refund', payment_intent: payment.reference } } }

    expect(await provider().parseWebhook(signed(event))).toEqual({
      eventId: 'evt_refund_updated',
      paymentId: request.paymentId,
      payment: { ...payment, refundedMinor: 200 },
    })
  })

  it('an event about something else answers no payment', async () => {
    const event = { id: 'evt_customer', object: 'event', type: 'customer.created', data: { object: { id: 'cus_1', object: 'customer' } } }
    expect(await provider().parseWebhook(signed(event))).toEqual({ eventId: 'evt_customer', paymentId: null, payment: null })
  })
})
