/**
 * A shop paid through Stripe, over real HTTP: the app listening on a port, the Stripe adapter (the
 * official SDK) pointed at the fake Stripe, and the fake's webhooks POSTed to the app's webhook
 * route. For the payment tests of issue 20 (stripe-payments.test.ts, payment-races.test.ts).
 */
import { createHmac, randomUUID } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import { expect } from 'vitest'
import type { Checkout, PaymentProvider, Product } from '@commerce/domain'
import { createStripeProvider, type StripeProviderOptions } from '@commerce/payments'
import { startFakeStripe, type EventType, type FakeEvent, type FakePaymentIntent, type FakeRequest, type FakeStripe } from '@commerce/payments/fake-stripe'
import type { Config } from '../src/config.js'
import { createTestContext, type TestContext } from './helpers.js'

export const WEBHOOK_SECRET = 'whsec_issue20_test_secret'
export const WEBHOOK_PATH = '/api/v1/payments/webhooks/stripe'
const ADDRESS = { first_name: 'Ada', last_name: 'Lovelace', line1: '12 St James Sq', city: 'London', postal_code: 'SW1Y 4JH', country: 'GB' }

/** Stripe's test payment methods, as the fake Stripe knows them. */
export const CARD = {
  visa: 'pm_card_visa',
  threeDSecure: 'pm_card_threeDSecure2Required',
  declined: 'pm_card_chargeDeclined',
} as const

export const key = () => `test-key-${randomUUID()}`

/** An HTTP answer, its body parsed when it is JSON. */
export interface Answer<T> {
  status: number
  headers: Headers
  body: T
}

export interface ErrorBody {
  error: { code: string; message: string; details?: { field: string; message: string }[] }
}

export interface CallOptions {
  /** Sent as JSON. */
  body?: unknown
  /** Sent as it is (a webhook's exact bytes). */
  raw?: string
  token?: string
  /** The Idempotency-Key header. */
  key?: string
  headers?: Record<string, string>
}

/** A payment row as the database keeps it (the reference is not in the API's view). */
export interface PaymentRow {
  id: string
  status: string
  provider: string
  reference: string | null
  orderId: string | null
  failureCode: string | null
  amount: number
  captured: number
  refunded: number
}

export interface StripeShop {
  ctx: TestContext
  fake: FakeStripe
  /** http://127.0.0.1:port of the app. */
  base: string
  admin: string
  /** A Stripe adapter on the official SDK at the fake Stripe (maxNetworkRetries 0 unless given). */
  adapter(options?: Partial<StripeProviderOptions>): PaymentProvider
  /** The provider the app calls from now on (an adapter with other options, or one wrapped by a test), until reset. */
  use(provider: PaymentProvider): void
  /** Back to the default adapter, webhooks recorded only (sent by sendEvent), no latency. */
  reset(): void
  call<T>(method: string, path: string, options?: CallOptions): Promise<Answer<T>>
  createProduct(payload: Record<string, unknown>): Promise<Product>
  /** A cart with `quantity` of the product and a checkout on it, its cheapest shipping rate chosen. */
  startCheckout(product: Product, quantity?: number): Promise<Checkout>
  /** POST /checkouts/:id/complete with a Stripe test payment method. */
  complete<T>(checkoutId: string, paymentMethod: string, idempotencyKey?: string): Promise<Answer<T>>
  stockOf(productId: string): Promise<number>
  /** Every order placed from the checkout's cart (more than one would be a double sale). */
  ordersOf(checkoutId: string): Promise<{ id: string; status: string; paymentStatus: string }[]>
  paymentsOf(checkoutId: string): Promise<PaymentRow[]>
  /** The PaymentIntents the fake Stripe holds for our payment id (its metadata.payment_id). */
  intentsOf(paymentId: string): FakePaymentIntent[]
  /** The PaymentIntent creations the fake Stripe received for our payment id, answered or not. */
  createsOf(paymentId: string): FakeRequest[]
  /** The latest event of this type about this PaymentIntent. */
  eventOf(type: EventType, intentId: string): FakeEvent
  /** The kinds of the events about this order (order.*, and payment.* of its payments), oldest first. */
  orderEvents(orderId: string): Promise<string[]>
  /** POSTs a body to the webhook route as Stripe would, signed with `secret` (the endpoint's by default). */
  postWebhook<T>(payload: string, secret?: string): Promise<Answer<T>>
  close(): Promise<void>
}

/** Stripe's Stripe-Signature header (t=<unix time>,v1=<hex HMAC-SHA256 of "t.payload">), as the official SDK checks it. */
export function stripeSignature(payload: string, secret: string): string {
  const timestamp = Math.floor(Date.now() / 1000)
  return `t=${timestamp},v1=${createHmac('sha256', secret).update(`${timestamp}.${payload}`).digest('hex')}`
}

/**
 * The app listens first (the fake Stripe needs its webhook URL), on a provider that forwards to
 * the adapter made once the fake Stripe listens.
 */
export async function startStripeShop(overrides: Partial<Config> = {}): Promise<StripeShop> {
  let current: PaymentProvider | undefined
  const now = () => {
    if (!current) throw new Error('The fake Stripe is not started yet')
    return current
  }
  const forwarder: PaymentProvider = {
    name: 'stripe',
    authorize: (request) => now().authorize(request),
    capture: (request) => now().capture(request),
    cancel: (request) => now().cancel(request),
    refund: (request) => now().refund(request),
    retrieve: (request) => now().retrieve(request),
    parseWebhook: (request) => now().parseWebhook(request),
  }
  const ctx = await createTestContext(overrides, { paymentProvider: forwarder })
  await ctx.app.listen({ host: '127.0.0.1', port: 0 })
  const base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`
  const fake = await startFakeStripe({ webhookUrl: `${base}${WEBHOOK_PATH}`, webhookSecret: WEBHOOK_SECRET, webhooks: 'manual' })
  const adapter = (options: Partial<StripeProviderOptions> = {}) =>
    createStripeProvider({ secretKey: 'sk_test_issue20', webhookSecret: WEBHOOK_SECRET, maxNetworkRetries: 0, ...fake.stripeOptions, ...options })
  const standard = adapter()
  current = standard
  const admin = (await ctx.signIn('admin')).token

  async function call<T>(method: string, path: string, options: CallOptions = {}): Promise<Answer<T>> {
    const headers: Record<string, string> = { ...options.headers }
    if (options.token) headers.authorization = `Bearer ${options.token}`
    if (options.key) headers['idempotency-key'] = options.key
    if (options.body !== undefined) headers['content-type'] = 'application/json'
    const body = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body))
    const response = await fetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body }) })
    const text = await response.text()
    const json = response.headers.get('content-type')?.includes('json') && text !== '' ? JSON.parse(text) : text
    return { status: response.status, headers: response.headers, body: json as T }
  }

  /** The JSON body of a call expected to answer `status` (the body shows when it does not). */
  async function expectCall<T>(status: number, method: string, path: string, options: CallOptions = {}): Promise<T> {
    const answer = await call<T>(method, path, options)
    expect(answer.status, JSON.stringify(answer.body)).toBe(status)
    return answer.body
  }

  return {
    ctx,
    fake,
    base,
    admin,
    adapter,
    use(provider) {
      current = provider
    },
    reset() {
      current = standard
      fake.webhooks = 'manual'
      fake.setLatency(0)
    },
    call,
    createProduct: (payload) => expectCall(201, 'POST', '/api/v1/products', { body: { currency: 'GBP', ...payload }, token: admin }),
    async startCheckout(product, quantity = 1) {
      const cart = await expectCall<{ id: string }>(201, 'POST', '/api/v1/carts', { body: { currency: 'GBP' } })
      await expectCall(201, 'POST', `/api/v1/carts/${cart.id}/items`, { body: { product_id: product.id, quantity } })
      const checkout = await expectCall<Checkout>(201, 'POST', '/api/v1/checkouts', {
        body: { cart_id: cart.id, email: 'ada@example.com', shipping_address: ADDRESS },
      })
      const [cheapest] = checkout.shipping_rates
      if (!cheapest) return checkout
      return expectCall(200, 'POST', `/api/v1/checkouts/${checkout.id}/shipping`, { body: { rate_id: cheapest.id } })
    },
    complete: (checkoutId, paymentMethod, idempotencyKey = key()) =>
      call('POST', `/api/v1/checkouts/${checkoutId}/complete`, { body: { payment: { method: 'card', token: paymentMethod } }, key: idempotencyKey }),
    async stockOf(productId) {
      const [row] = await ctx.handle.sql<{ n: number }[]>`select inventory_quantity as n from products where id = ${productId}`
      return row!.n
    },
    ordersOf(checkoutId) {
      return ctx.handle.sql<{ id: string; status: string; paymentStatus: string }[]>`
        select o.id, o.status, o.payment_status as "paymentStatus" from orders o
        where o.cart_id = (select cart_id from checkouts where id = ${checkoutId}) order by o.id`
    },
    paymentsOf(checkoutId) {
      return ctx.handle.sql<PaymentRow[]>`
        select id, status, provider, provider_reference as reference, order_id as "orderId", failure_code as "failureCode",
          amount_minor::int as amount, captured_minor::int as captured, refunded_minor::int as refunded
        from payments where checkout_id = ${checkoutId} order by id`
    },
    intentsOf: (paymentId) => [...fake.intents.values()].filter((intent) => intent.metadata.payment_id === paymentId),
    createsOf: (paymentId) =>
      fake.requests.filter(
        (request) =>
          request.method === 'POST' &&
          request.path === '/v1/payment_intents' &&
          (request.params.metadata as Record<string, string> | undefined)?.payment_id === paymentId,
      ),
    eventOf(type, intentId) {
      const event = fake.events.findLast((candidate) => candidate.type === type && candidate.data.object.id === intentId)
      if (!event) throw new Error(`No ${type} event for ${intentId}`)
      return event
    },
    orderEvents: (orderId) => ctx.orderEvents(orderId),
    postWebhook: (payload, secret = WEBHOOK_SECRET) =>
      call('POST', WEBHOOK_PATH, { raw: payload, headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': stripeSignature(payload, secret) } }),
    async close() {
      await fake.close()
      await ctx.close()
    },
  }
}
