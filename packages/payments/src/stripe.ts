/**
 * The Stripe adapter, on the official SDK. A payment is one PaymentIntent, created and confirmed in
 * one call; its metadata.payment_id holds our id, so retrieve can find it without its reference.
 *
 * PaymentIntent status -> ProviderPayment status:
 *   requires_payment_method after an attempt (last_payment_error set) -> failed, code = the
 *     error's decline_code, else its code
 *   requires_payment_method before any attempt, requires_confirmation, processing -> pending
 *   requires_action -> requires_action; next_action use_stripe_sdk -> use_sdk with the client
 *     secret, redirect_to_url -> redirect (Stripe answers that when a return_url was given)
 *   requires_capture -> authorized, amountMinor = amount_capturable (what is held)
 *   succeeded -> captured, capturedMinor = amount_received; canceled -> canceled
 * refundedMinor is the latest charge's amount_refunded. Every call here expands that charge; a
 * webhook's payment_intent.* snapshot does not, so it says 0 there, which the service takes as
 * older news (it never moves a payment backwards). Refunds arrive as charge.refunded.
 *
 * Errors: a card decline (HTTP 402 carrying the intent) is an answer: status failed. No answer,
 * a timeout, 409 (the same key in flight), 429 and 5xx throw ProviderUnavailableError: what
 * happened is unknown until retrieve tells. A request refused as asked (400, 402 or 404: an
 * unknown payment method, a refund of more than is left) throws ProviderRefusedError with
 * Stripe's code: nothing happened there. Any other refusal (401, 403: our keys) throws.
 */
import Stripe from 'stripe'
import {
  ProviderRefusedError,
  ProviderUnavailableError,
  WebhookSignatureError,
  type NextAction,
  type PaymentProvider,
  type ProviderPayment,
  type ProviderWebhook,
} from '@commerce/domain'

/**
 * The API version stripe@23.1.0 ships with. The SDK's types describe this version only: upgrade
 * the SDK and this constant together, and the fake Stripe's objects with them.
 */
export const STRIPE_API_VERSION = '2026-10-28.endive'

/**
 * Stripe takes amounts in minor units, as we keep them, except where its documentation
 * (docs.stripe.com/currencies#special-cases) departs from ISO 4217: ISK has no minor unit in
 * ISO 4217, but Stripe reads ISK amounts with two decimals (500 = 5 krónur), so our amount would
 * charge a hundredth. UGX, zero-decimal in ISO 4217, is a special case there too and is read with
 * two decimals in places; it is refused as well rather than risk the same. HUF and TWD are special
 * for payouts only: their charges use the ISO 4217 exponent and go through as they are.
 */
const REFUSED_CURRENCIES: ReadonlySet<string> = new Set(['ISK', 'UGX'])

const EXPAND = ['latest_charge']

export interface StripeProviderOptions {
  secretKey: string
  /** The endpoint's signing secret (whsec_...), for parseWebhook. */
  webhookSecret: string
  /** Where the API is; Stripe's own unless set (the fake Stripe in tests and benchmarks). */
  host?: string
  port?: number
  protocol?: 'http' | 'https'
  /** Per request; the SDK's default is 80 s. */
  timeoutMs?: number
  /** The SDK's own retries after no answer, 409 or 5xx, with the same idempotency key (its default: 2). */
  maxNetworkRetries?: number
}

export function createStripeProvider(options: StripeProviderOptions): PaymentProvider {
  const stripe = new Stripe(options.secretKey, {
    apiVersion: STRIPE_API_VERSION,
    host: options.host,
    port: options.port,
    protocol: options.protocol,
    timeout: options.timeoutMs,
    maxNetworkRetries: options.maxNetworkRetries,
  })

  const retrieveIntent = (id: string) => call(() => stripe.paymentIntents.retrieve(id, { expand: EXPAND }))

  return {
    name: 'stripe',

    async authorize(request) {
      const currency = request.currency.toUpperCase()
      if (REFUSED_CURRENCIES.has(currency)) {
        throw new Error(`Stripe reads ${currency} amounts with another exponent than ISO 4217; refusing to charge it`)
      }
      try {
        const intent = await stripe.paymentIntents.create(
          {
            amount: request.amountMinor,
            currency: currency.toLowerCase(),
            payment_method: request.token,
            confirm: true,
            capture_method: request.capture,
            metadata: { payment_id: request.paymentId },
            // Confirming on the server without a return_url requires refusing redirect-based methods.
            automatic_payment_methods: { enabled: true, allow_redirects: request.returnUrl ? 'always' : 'never' },
            ...(request.returnUrl ? { return_url: request.returnUrl } : {}),
            expand: EXPAND,
          },
          { idempotencyKey: request.idempotencyKey },
        )
        return paymentOf(intent)
      } catch (error) {
        if (error instanceof Stripe.errors.StripeCardError && error.payment_intent) return paymentOf(error.payment_intent)
        throw providerError(error)
      }
    },

    async capture({ reference, amountMinor, idempotencyKey }) {
      try {
        return paymentOf(await stripe.paymentIntents.capture(reference, { amount_to_capture: amountMinor, expand: EXPAND }, { idempotencyKey }))
      } catch (error) {
        // An authorization Stripe canceled (held past 7 days) cannot be captured: answered as the
        // truth it is, for the service to refuse the capture and record the void.
        if (error instanceof Stripe.errors.StripeInvalidRequestError && error.payment_intent?.status === 'canceled') return paymentOf(error.payment_intent)
        throw providerError(error)
      }
    },

    async cancel({ reference, idempotencyKey }) {
      try {
        return paymentOf(await stripe.paymentIntents.cancel(reference, { expand: EXPAND }, { idempotencyKey }))
      } catch (error) {
        // Canceled already (Stripe cancels an authorization it has held for 7 days): voided, as
        // asked. Refusing it would leave an order that can never be cancelled (500 every time).
        if (error instanceof Stripe.errors.StripeInvalidRequestError && error.payment_intent?.status === 'canceled') return paymentOf(error.payment_intent)
        throw providerError(error)
      }
    },

    async refund({ reference, amountMinor, idempotencyKey }) {
      const refund = await call(() =>
        stripe.refunds.create({ payment_intent: reference, amount: amountMinor }, { idempotencyKey }),
      )
      return { reference: refund.id, payment: paymentOf(await retrieveIntent(reference)) }
    },

    async retrieve({ paymentId, reference }) {
      if (reference === null) {
        // Search finds an intent whose create answer was lost, without creating another. Stripe
        // indexes for search within about a minute: a miss right after a crash is not proof.
        const found = await call(() =>
          stripe.paymentIntents.search({
            query: `metadata['payment_id']:'${paymentId.replaceAll("'", "\\'")}'`,
            expand: ['data.latest_charge'],
          }),
        )
        return found.data[0] ? paymentOf(found.data[0]) : null
      }
      try {
        return paymentOf(await stripe.paymentIntents.retrieve(reference, { expand: EXPAND }))
      } catch (error) {
        if (error instanceof Stripe.errors.StripeInvalidRequestError && error.code === 'resource_missing') return null
        throw providerError(error)
      }
    },

    async parseWebhook({ rawBody, headers }) {
      let event: Stripe.Event
      try {
        const header = headers['stripe-signature']
        const signature = (Array.isArray(header) ? header[0] : header) ?? ''
        event = stripe.webhooks.constructEvent(rawBody, signature, options.webhookSecret)
      } catch (error) {
        throw new WebhookSignatureError(error instanceof Error ? error.message : undefined)
      }
      return webhookOf(event, retrieveIntent)
    },
  }
}

async function webhookOf(
  event: Stripe.Event,
  retrieveIntent: (id: string) => Promise<Stripe.PaymentIntent>,
): Promise<ProviderWebhook> {
  switch (event.type) {
    case 'payment_intent.amount_capturable_updated':
    case 'payment_intent.canceled':
    case 'payment_intent.created':
    case 'payment_intent.partially_funded':
    case 'payment_intent.payment_failed':
    case 'payment_intent.processing':
    case 'payment_intent.requires_action':
    case 'payment_intent.succeeded': {
      const intent = event.data.object
      return { eventId: event.id, paymentId: intent.metadata.payment_id ?? null, payment: paymentOf(intent) }
    }
    case 'charge.refunded': {
      const charge = event.data.object
      const reference = idOf(charge.payment_intent)
      return {
        eventId: event.id,
        paymentId: charge.metadata.payment_id ?? null,
        payment: reference ? paymentOfCharge(reference, charge) : null,
      }
    }
    case 'charge.refund.updated': {
      // Its object is the Refund, which carries no sums: the intent tells the truth after it.
      const reference = idOf(event.data.object.payment_intent)
      const intent = reference ? await retrieveIntent(reference) : null
      return { eventId: event.id, paymentId: intent?.metadata.payment_id ?? null, payment: intent ? paymentOf(intent) : null }
    }
    default:
      return { eventId: event.id, paymentId: null, payment: null }
  }
}

function paymentOf(intent: Stripe.PaymentIntent): ProviderPayment {
  const charge = typeof intent.latest_charge === 'object' ? intent.latest_charge : null
  const payment: ProviderPayment = {
    reference: intent.id,
    status: 'pending',
    amountMinor: intent.amount,
    capturedMinor: intent.amount_received,
    refundedMinor: charge?.amount_refunded ?? 0,
    currency: intent.currency.toUpperCase(),
    nextAction: null,
    failure: null,
  }
  switch (intent.status) {
    case 'requires_payment_method': {
      const error = intent.last_payment_error
      if (!error) return payment
      const failure = { code: error.decline_code ?? error.code ?? 'payment_failed', message: error.message ?? 'The payment failed' }
      return { ...payment, status: 'failed', failure }
    }
    case 'requires_action':
      return { ...payment, status: 'requires_action', nextAction: nextActionOf(intent) }
    case 'requires_capture':
      return { ...payment, status: 'authorized', amountMinor: intent.amount_capturable || intent.amount }
    case 'succeeded':
      return { ...payment, status: 'captured' }
    case 'canceled':
      return { ...payment, status: 'canceled' }
    default: // requires_confirmation, processing
      return payment
  }
}

function paymentOfCharge(reference: string, charge: Stripe.Charge): ProviderPayment {
  return {
    reference,
    status: 'captured',
    amountMinor: charge.amount,
    capturedMinor: charge.amount_captured,
    refundedMinor: charge.amount_refunded,
    currency: charge.currency.toUpperCase(),
    nextAction: null,
    failure: null,
  }
}

function nextActionOf(intent: Stripe.PaymentIntent): NextAction {
  const url = intent.next_action?.type === 'redirect_to_url' ? intent.next_action.redirect_to_url?.url : null
  // Any other action (use_stripe_sdk among them) is the client library's to handle.
  return url
    ? { type: 'redirect', client_secret: intent.client_secret, redirect_url: url }
    : { type: 'use_sdk', client_secret: intent.client_secret, redirect_url: null }
}

function idOf(object: string | { id: string } | null): string | null {
  return typeof object === 'string' ? object : (object?.id ?? null)
}

function call<T>(request: () => Promise<T>): Promise<T> {
  return request().catch((error: unknown) => {
    throw providerError(error)
  })
}

function providerError(error: unknown): Error {
  if (!(error instanceof Stripe.errors.StripeError)) return error instanceof Error ? error : new Error(String(error))
  const status = error.statusCode
  if (error instanceof Stripe.errors.StripeRateLimitError || status === undefined || status === 409 || status >= 500) {
    return new ProviderUnavailableError(`Stripe did not answer: ${error.message}`)
  }
  // Refused as asked (an unknown payment method, more refunded than is left): the caller's to answer, not a failure of ours.
  if (status === 400 || status === 402 || status === 404) return new ProviderRefusedError(error.code ?? error.type, `Stripe refused the request: ${error.message}`)
  return new Error(`Stripe refused the request: ${error.message}`, { cause: error })
}
