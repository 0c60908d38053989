/**
 * A fake Stripe API for tests and benchmarks, on plain node:http. The official SDK, pointed at it
 * (`stripeOptions`), works unmodified: it reads form-encoded bodies as the SDK sends them, answers
 * JSON objects and errors in Stripe's documented shapes and statuses, replays idempotent requests,
 * and signs webhooks as Stripe does. It follows the pinned API version (STRIPE_API_VERSION): a
 * partial capture or a cancel creates no Refund and leaves amount_refunded alone.
 *
 * Test payment methods, named as in Stripe's docs: pm_card_visa succeeds; pm_card_chargeDeclined
 * and pm_card_chargeDeclinedInsufficientFunds decline (402); pm_card_threeDSecure2Required requires
 * 3-D Secure until completeAction.
 *
 * What happens without a request of ours, as it does at Stripe: the customer paying again on an
 * intent whose attempt failed (confirmAgain), a refund made in the dashboard (refundInDashboard).
 *
 * Unlike Stripe: one account, state in memory, search sees an intent at once, a webhook is sent
 * once (no retries) and events exist for the types listed in EventType only.
 */
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import Stripe from 'stripe'
import { STRIPE_API_VERSION } from './stripe.js'

export interface FakeStripeOptions {
  /** Added before every answer. */
  latencyMs?: number
  /** Where events are POSTed; none are sent without it. */
  webhookUrl?: string
  webhookSecret?: string
  /** 'auto' sends each event when it happens; 'manual' only records it for sendEvent. */
  webhooks?: 'auto' | 'manual'
}

type Params = { [key: string]: string | Params | Params[] | string[] }

export interface FakeRequest {
  method: string
  path: string
  idempotencyKey: string | null
  params: Params
}

interface PaymentError {
  type: 'card_error' | 'invalid_request_error'
  code: string
  decline_code?: string
  message: string
}

export interface FakePaymentIntent {
  id: string
  object: 'payment_intent'
  amount: number
  amount_capturable: number
  amount_received: number
  automatic_payment_methods: { enabled: boolean; allow_redirects?: string } | null
  canceled_at: number | null
  cancellation_reason: string | null
  capture_method: 'automatic' | 'manual'
  client_secret: string
  confirmation_method: 'automatic'
  created: number
  currency: string
  last_payment_error: PaymentError | null
  latest_charge: string | FakeCharge | null
  livemode: false
  metadata: Record<string, string>
  next_action: Record<string, unknown> | null
  payment_method: string | null
  payment_method_types: string[]
  return_url: string | null
  status: 'requires_payment_method' | 'requires_action' | 'requires_capture' | 'succeeded' | 'canceled'
}

export interface FakeCharge {
  id: string
  object: 'charge'
  amount: number
  amount_captured: number
  amount_refunded: number
  captured: boolean
  created: number
  currency: string
  failure_code: string | null
  failure_message: string | null
  livemode: false
  metadata: Record<string, string>
  paid: boolean
  payment_intent: string
  payment_method: string
  refunded: boolean
  status: 'succeeded' | 'failed'
}

export interface FakeRefund {
  id: string
  object: 'refund'
  amount: number
  charge: string
  created: number
  currency: string
  metadata: Record<string, string>
  payment_intent: string
  status: 'succeeded'
}

export type EventType =
  | 'payment_intent.succeeded'
  | 'payment_intent.amount_capturable_updated'
  | 'payment_intent.payment_failed'
  | 'payment_intent.requires_action'
  | 'payment_intent.canceled'
  | 'charge.refunded'

export interface FakeEvent {
  id: string
  object: 'event'
  api_version: string
  created: number
  data: { object: FakePaymentIntent | FakeCharge }
  livemode: false
  pending_webhooks: number
  request: { id: null; idempotency_key: string | null }
  type: EventType
}

/** One webhook delivery: the receiver's status, null when it did not answer. */
export interface FakeDelivery {
  event: FakeEvent
  status: number | null
}

interface Answer {
  status: number
  body: unknown
}

/** Stripe's error answer, thrown inside a handler. */
class StripeErrorAnswer extends Error {
  constructor(
    readonly status: number,
    readonly error: Record<string, unknown>,
  ) {
    super(String(error.message))
  }
}

type TestCard = { outcome: 'succeed' } | { outcome: 'authenticate' } | { outcome: 'decline'; decline_code: string; message: string }

const TEST_CARDS: Record<string, TestCard> = {
  pm_card_visa: { outcome: 'succeed' },
  pm_card_chargeDeclined: { outcome: 'decline', decline_code: 'generic_decline', message: 'Your card was declined.' },
  pm_card_chargeDeclinedInsufficientFunds: {
    outcome: 'decline',
    decline_code: 'insufficient_funds',
    message: 'Your card has insufficient funds.',
  },
  pm_card_threeDSecure2Required: { outcome: 'authenticate' },
}

const CANCELABLE = new Set(['requires_payment_method', 'requires_action', 'requires_capture'])

export class FakeStripe {
  readonly url: string
  readonly host = '127.0.0.1'
  readonly port: number
  readonly stripeOptions: { host: string; port: number; protocol: 'http' }
  /** Every request received, in order, failed and hung ones too. */
  readonly requests: FakeRequest[] = []
  readonly intents = new Map<string, FakePaymentIntent>()
  readonly charges = new Map<string, FakeCharge>()
  /** Every event that happened, in order, sent or not. */
  readonly events: FakeEvent[] = []
  /** Every webhook delivery, in the order they were answered. */
  readonly sent: FakeDelivery[] = []
  webhooks: 'auto' | 'manual'

  private latencyMs: number
  private readonly failures: number[] = []
  private hangs = 0
  private readonly hanging = new Set<ServerResponse>()
  private readonly idempotent = new Map<string, { fingerprint: string; answer: Answer }>()
  private holding = false
  private readonly held: FakeEvent[] = []
  private readonly deliveries = new Set<Promise<void>>()

  constructor(
    private readonly server: ReturnType<typeof createServer>,
    private readonly options: FakeStripeOptions,
  ) {
    this.port = (server.address() as AddressInfo).port
    this.url = `http://${this.host}:${this.port}`
    this.stripeOptions = { host: this.host, port: this.port, protocol: 'http' }
    this.latencyMs = options.latencyMs ?? 0
    this.webhooks = options.webhooks ?? 'auto'
  }

  setLatency(ms: number): void {
    this.latencyMs = ms
  }

  /** The next n requests answer `status` with an api_error, before doing anything. */
  failNext(n: number, status = 500): void {
    for (let i = 0; i < n; i++) this.failures.push(status)
  }

  /** The next n requests are never answered: the client's timeout has to fire. */
  hangNext(n: number): void {
    this.hangs += n
  }

  /** The customer finishing (or failing) 3-D Secure on an intent that requires action. */
  completeAction(id: string, { succeed = true }: { succeed?: boolean } = {}): FakePaymentIntent {
    const intent = this.intent(id)
    if (intent.status !== 'requires_action') throw new Error(`${id} is ${intent.status}, not requires_action`)
    intent.next_action = null
    if (succeed) {
      this.succeed(intent, null)
    } else {
      const message = 'We are unable to authenticate your payment method. Please choose a different payment method and try again.'
      this.fail(intent, { type: 'invalid_request_error', code: 'payment_intent_authentication_failure', message }, null)
    }
    return structuredClone(intent)
  }

  /**
   * The customer paying again on an intent whose attempt failed (Stripe.js confirming it with the
   * client secret it already has): no request of ours, only its events.
   */
  confirmAgain(id: string, paymentMethod = 'pm_card_visa'): FakePaymentIntent {
    const intent = this.intent(id)
    this.confirm(intent, testCard({ payment_method: paymentMethod }), {}, null)
    return structuredClone(intent)
  }

  /**
   * A refund made by the merchant in Stripe's dashboard (of what is left when `amount` is not
   * given): no request of ours, only its charge.refunded event.
   */
  refundInDashboard(id: string, amount?: number): FakeRefund {
    return this.createRefund(amount === undefined ? { payment_intent: id } : { payment_intent: id, amount: String(amount) }, null)
  }

  /**
   * Sends one event now (an event of `events`, or the latest of a type), whatever the mode:
   * `duplicate` sends it twice, `delayMs` waits first.
   */
  async sendEvent(eventOrType: FakeEvent | EventType, { duplicate = false, delayMs = 0 } = {}): Promise<void> {
    const event = typeof eventOrType === 'string' ? this.events.findLast((e) => e.type === eventOrType) : eventOrType
    if (!event) throw new Error(`No ${String(eventOrType)} event has happened`)
    if (delayMs > 0) await sleep(delayMs)
    await this.deliver(event)
    if (duplicate) await this.deliver(event)
  }

  /** Keeps automatic events back until releaseEvents. */
  holdEvents(): void {
    this.holding = true
  }

  /** Sends the events held back, in order or reversed, and stops holding. */
  async releaseEvents({ reverse = false } = {}): Promise<void> {
    this.holding = false
    const events = this.held.splice(0)
    if (reverse) events.reverse()
    for (const event of events) await this.deliver(event)
  }

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy()
    await Promise.all(this.deliveries)
    this.server.closeAllConnections()
    await new Promise<void>((resolve, reject) => this.server.close((error) => (error ? reject(error) : resolve())))
  }

  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.url)
    const method = request.method ?? 'GET'
    const body = await readBody(request)
    const params = parseForm(method === 'GET' ? url.search.slice(1) : body)
    const idempotencyKey = headerOf(request, 'idempotency-key')
    this.requests.push({ method, path: url.pathname, idempotencyKey, params })

    if (this.hangs > 0) {
      this.hangs--
      this.hanging.add(response)
      response.on('close', () => this.hanging.delete(response))
      return
    }
    if (this.latencyMs > 0) await sleep(this.latencyMs)
    const failure = this.failures.shift()
    if (failure !== undefined) return send(response, injectedFailure(failure))
    if (!headerOf(request, 'authorization')?.startsWith('Bearer ')) {
      const error = new StripeErrorAnswer(401, { type: 'invalid_request_error', message: 'You did not provide an API key.' })
      return send(response, errorAnswer(error))
    }
    if (method !== 'POST' || !idempotencyKey) return send(response, this.route(method, url.pathname, params, null))

    // Stripe keeps the answer of a request that ran (200, or a 402 decline), not of one refused
    // before it ran; the same key with other parameters is an error, never a second charge.
    const fingerprint = `${url.pathname} ${body}`
    const stored = this.idempotent.get(idempotencyKey)
    if (stored?.fingerprint === fingerprint) return send(response, stored.answer, { 'idempotent-replayed': 'true' })
    if (stored) {
      const message =
        'Keys for idempotent requests can only be used with the same parameters they were first used with. ' +
        `Try using a key other than '${idempotencyKey}' if you meant to execute a different request.`
      return send(response, errorAnswer(new StripeErrorAnswer(400, { type: 'idempotency_error', message })))
    }
    const answer = this.route(method, url.pathname, params, idempotencyKey)
    if (answer.status === 200 || answer.status === 402) this.idempotent.set(idempotencyKey, { fingerprint, answer })
    send(response, answer)
  }

  private route(method: string, path: string, params: Params, key: string | null): Answer {
    try {
      const [, id, action] = /^\/v1\/payment_intents\/([^/]+)(?:\/(\w+))?$/.exec(path) ?? []
      if (method === 'POST' && path === '/v1/payment_intents') return ok(this.createIntent(params, key))
      if (method === 'GET' && path === '/v1/payment_intents/search') return ok(this.search(params))
      if (method === 'POST' && path === '/v1/refunds') return ok(this.createRefund(params, key))
      if (id && method === 'GET' && !action) return ok(this.render(this.intent(id), params))
      if (id && method === 'POST' && action === 'confirm') return ok(this.confirm(this.intent(id), testCard(params), params, key))
      if (id && method === 'POST' && action === 'capture') return ok(this.capture(this.intent(id), params, key))
      if (id && method === 'POST' && action === 'cancel') return ok(this.cancel(this.intent(id), params, key))
      throw new StripeErrorAnswer(404, { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path}).` })
    } catch (error) {
      if (error instanceof StripeErrorAnswer) return errorAnswer(error)
      throw error
    }
  }

  private createIntent(params: Params, key: string | null): unknown {
    const id = newId('pi')
    const captureMethod = params.capture_method === 'manual' ? 'manual' : 'automatic'
    const automatic = params.automatic_payment_methods
    // An unknown payment method is refused before any intent exists, as Stripe validates first.
    const card = params.confirm === 'true' ? testCard(params) : null
    const intent: FakePaymentIntent = {
      id,
      object: 'payment_intent',
      amount: positiveInteger(params.amount, 'amount'),
      amount_capturable: 0,
      amount_received: 0,
      automatic_payment_methods: isParams(automatic)
        ? { enabled: automatic.enabled === 'true', allow_redirects: String(automatic.allow_redirects ?? 'always') }
        : null,
      canceled_at: null,
      cancellation_reason: null,
      capture_method: captureMethod,
      client_secret: `${id}_secret_${randomToken()}`,
      confirmation_method: 'automatic',
      created: now(),
      currency: required(params.currency, 'currency').toLowerCase(),
      last_payment_error: null,
      latest_charge: null,
      livemode: false,
      metadata: isParams(params.metadata) ? (params.metadata as Record<string, string>) : {},
      next_action: null,
      payment_method: null,
      payment_method_types: ['card'],
      return_url: null,
      status: 'requires_payment_method',
    }
    this.intents.set(id, intent)
    return card ? this.confirm(intent, card, params, key) : this.render(intent, params)
  }

  private confirm(intent: FakePaymentIntent, { id, card }: ReturnType<typeof testCard>, params: Params, key: string | null): unknown {
    if (intent.status !== 'requires_payment_method') throw unexpectedState(intent, 'confirm')
    intent.payment_method = id
    intent.return_url = typeof params.return_url === 'string' ? params.return_url : null
    intent.last_payment_error = null
    if (card.outcome === 'succeed') this.succeed(intent, key)
    if (card.outcome === 'authenticate') {
      intent.status = 'requires_action'
      // With a return_url Stripe sends the customer to the issuer's page; without, the client library runs 3-D Secure.
      intent.next_action = intent.return_url
        ? { type: 'redirect_to_url', redirect_to_url: { url: `${this.url}/3ds/${intent.id}`, return_url: intent.return_url } }
        : { type: 'use_stripe_sdk', use_stripe_sdk: { type: 'three_d_secure_redirect', stripe_js: `${this.url}/3ds/${intent.id}` } }
      this.emit('payment_intent.requires_action', intent, key)
    }
    if (card.outcome === 'decline') {
      const error = { type: 'card_error' as const, code: 'card_declined', decline_code: card.decline_code, message: card.message }
      const charge = this.fail(intent, error, key)
      throw new StripeErrorAnswer(402, { ...error, charge: charge?.id, payment_intent: this.render(intent, {}) })
    }
    return this.render(intent, params)
  }

  /** Authorized: captured at once, or held for a manual capture. */
  private succeed(intent: FakePaymentIntent, key: string | null): void {
    const automatic = intent.capture_method === 'automatic'
    const charge = this.newCharge(intent, 'succeeded')
    charge.captured = automatic
    charge.amount_captured = automatic ? intent.amount : 0
    intent.status = automatic ? 'succeeded' : 'requires_capture'
    intent.amount_received = charge.amount_captured
    intent.amount_capturable = automatic ? 0 : intent.amount
    this.emit(automatic ? 'payment_intent.succeeded' : 'payment_intent.amount_capturable_updated', intent, key)
  }

  /** A declined attempt: the intent waits for another payment method. */
  private fail(intent: FakePaymentIntent, error: PaymentError, key: string | null): FakeCharge | null {
    const charge = error.type === 'card_error' ? this.newCharge(intent, 'failed') : null
    if (charge) {
      charge.failure_code = error.code
      charge.failure_message = error.message
    }
    intent.status = 'requires_payment_method'
    intent.last_payment_error = error
    this.emit('payment_intent.payment_failed', intent, key)
    return charge
  }

  private capture(intent: FakePaymentIntent, params: Params, key: string | null): unknown {
    if (intent.status !== 'requires_capture') throw unexpectedState(intent, 'capture')
    const capturable = intent.amount_capturable
    const amount = params.amount_to_capture === undefined ? capturable : positiveInteger(params.amount_to_capture, 'amount_to_capture')
    if (amount > capturable) {
      const message = `The amount to capture (${amount}) is greater than the amount capturable (${capturable}).`
      throw invalidRequest('amount_too_large', message, { param: 'amount_to_capture' })
    }
    const charge = this.latestCharge(intent)
    charge.captured = true
    charge.amount_captured = amount
    intent.status = 'succeeded'
    intent.amount_received = amount
    intent.amount_capturable = 0
    this.emit('payment_intent.succeeded', intent, key)
    return this.render(intent, params)
  }

  private cancel(intent: FakePaymentIntent, params: Params, key: string | null): unknown {
    if (!CANCELABLE.has(intent.status)) throw unexpectedState(intent, 'cancel')
    intent.status = 'canceled'
    intent.amount_capturable = 0
    intent.next_action = null
    intent.canceled_at = now()
    intent.cancellation_reason = typeof params.cancellation_reason === 'string' ? params.cancellation_reason : null
    this.emit('payment_intent.canceled', intent, key)
    return this.render(intent, params)
  }

  private createRefund(params: Params, key: string | null): FakeRefund {
    const intent = this.intent(required(params.payment_intent, 'payment_intent'))
    if (intent.status !== 'succeeded') {
      throw invalidRequest('payment_intent_unexpected_state', `This PaymentIntent (${intent.id}) does not have a successful charge to refund.`)
    }
    const charge = this.latestCharge(intent)
    const refundable = charge.amount_captured - charge.amount_refunded
    const amount = params.amount === undefined ? refundable : positiveInteger(params.amount, 'amount')
    if (refundable === 0) {
      throw invalidRequest('charge_already_refunded', `Charge ${charge.id} has already been refunded.`)
    }
    if (amount > refundable) {
      const message = `Refund amount (${amount}) is greater than unrefunded amount on charge (${refundable})`
      throw invalidRequest('amount_too_large', message, { param: 'amount' })
    }
    charge.amount_refunded += amount
    charge.refunded = charge.amount_refunded === charge.amount_captured
    this.emit('charge.refunded', charge, key)
    return {
      id: newId('re'),
      object: 'refund',
      amount,
      charge: charge.id,
      created: now(),
      currency: charge.currency,
      metadata: {},
      payment_intent: intent.id,
      status: 'succeeded',
    }
  }

  private search(params: Params): unknown {
    const query = required(params.query, 'query')
    const match = /^metadata\['([^']+)'\]:'((?:[^'\\]|\\.)*)'$/.exec(query.trim())
    if (!match) {
      throw invalidRequest('parameter_invalid', `The fake Stripe searches only metadata['key']:'value', not: ${query}`, { param: 'query' })
    }
    const [, field = '', value = ''] = match
    const wanted = value.replace(/\\(.)/g, '$1')
    const hits = [...this.intents.values()].filter((intent) => intent.metadata[field] === wanted).reverse()
    const expandCharge = expansions(params).includes('data.latest_charge')
    return {
      object: 'search_result',
      data: hits.map((intent) => this.render(intent, expandCharge ? { expand: ['latest_charge'] } : {})),
      has_more: false,
      next_page: null,
      url: '/v1/payment_intents/search',
    }
  }

  private intent(id: string): FakePaymentIntent {
    const intent = this.intents.get(id)
    if (!intent) {
      throw invalidRequest('resource_missing', `No such payment_intent: '${id}'`, { param: 'intent' }, 404)
    }
    return intent
  }

  private latestCharge(intent: FakePaymentIntent): FakeCharge {
    const charge = typeof intent.latest_charge === 'string' ? this.charges.get(intent.latest_charge) : undefined
    if (!charge) throw new Error(`${intent.id} has no charge`)
    return charge
  }

  private newCharge(intent: FakePaymentIntent, status: FakeCharge['status']): FakeCharge {
    const charge: FakeCharge = {
      id: newId('ch'),
      object: 'charge',
      amount: intent.amount,
      amount_captured: 0,
      amount_refunded: 0,
      captured: false,
      created: now(),
      currency: intent.currency,
      failure_code: null,
      failure_message: null,
      livemode: false,
      metadata: { ...intent.metadata },
      paid: status === 'succeeded',
      payment_intent: intent.id,
      payment_method: intent.payment_method ?? '',
      refunded: false,
      status,
    }
    this.charges.set(charge.id, charge)
    intent.latest_charge = charge.id
    return charge
  }

  /** A snapshot of the intent as the API answers it, its latest charge expanded when asked. */
  private render(intent: FakePaymentIntent, params: Params): FakePaymentIntent {
    const snapshot = structuredClone(intent)
    if (expansions(params).includes('latest_charge') && typeof intent.latest_charge === 'string') {
      snapshot.latest_charge = structuredClone(this.charges.get(intent.latest_charge) ?? null)
    }
    return snapshot
  }

  private emit(type: EventType, object: FakePaymentIntent | FakeCharge, key: string | null): void {
    const event: FakeEvent = {
      id: newId('evt'),
      object: 'event',
      api_version: STRIPE_API_VERSION,
      created: now(),
      data: { object: structuredClone(object) },
      livemode: false,
      pending_webhooks: this.options.webhookUrl ? 1 : 0,
      request: { id: null, idempotency_key: key },
      type,
    }
    this.events.push(event)
    if (!this.options.webhookUrl || this.webhooks === 'manual') return
    if (this.holding) {
      this.held.push(event)
      return
    }
    const delivery = this.deliver(event).finally(() => this.deliveries.delete(delivery))
    this.deliveries.add(delivery)
  }

  private async deliver(event: FakeEvent): Promise<void> {
    const { webhookUrl, webhookSecret = 'whsec_fake' } = this.options
    if (!webhookUrl) throw new Error('The fake Stripe has no webhookUrl')
    const payload = JSON.stringify(event, null, 2)
    const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: webhookSecret })
    let status: number | null = null
    try {
      const response = await fetch(webhookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature },
        body: payload,
      })
      await response.arrayBuffer()
      status = response.status
    } catch {
      // Recorded as unanswered; Stripe would retry, the fake does not.
    }
    this.sent.push({ event, status })
  }
}

export async function startFakeStripe(options: FakeStripeOptions = {}): Promise<FakeStripe> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const fake = new FakeStripe(server, options)
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    fake.handle(request, response).catch((error: unknown) => {
      send(response, { status: 500, body: { error: { type: 'api_error', message: String(error) } } })
    })
  })
  return fake
}

/** Stripe's form encoding (`metadata[payment_id]=x`, `expand[0]=y`) back into objects and arrays. */
export function parseForm(text: string): Params {
  const root: Params = {}
  for (const [key, value] of new URLSearchParams(text)) {
    const path = key.split(/\]?\[|\]$/).filter((part) => part !== '')
    let node: Record<string, unknown> = root
    path.forEach((part, index) => {
      if (index === path.length - 1) {
        node[part] = value
      } else {
        node[part] ??= /^\d+$/.test(path[index + 1] ?? '') ? [] : {}
        node = node[part] as Record<string, unknown>
      }
    })
  }
  return root
}

function testCard(params: Params): { id: string; card: TestCard } {
  const id = required(params.payment_method, 'payment_method')
  const card = TEST_CARDS[id]
  if (!card) throw invalidRequest('resource_missing', `No such PaymentMethod: '${id}'`, { param: 'payment_method' })
  return { id, card }
}

function expansions(params: Params): string[] {
  return Array.isArray(params.expand) ? params.expand.filter((item): item is string => typeof item === 'string') : []
}

function isParams(value: Params[string] | undefined): value is Params {
  return typeof value === 'object' && !Array.isArray(value)
}

function required(value: Params[string] | undefined, param: string): string {
  if (typeof value === 'string' && value !== '') return value
  throw invalidRequest('parameter_missing', `Missing required param: ${param}.`, { param })
}

function positiveInteger(value: Params[string] | undefined, param: string): number {
  const text = required(value, param)
  if (/^[1-9]\d*$/.test(text)) return Number(text)
  throw invalidRequest('parameter_invalid_integer', `Invalid positive integer: ${param}`, { param })
}

function invalidRequest(code: string, message: string, details: Record<string, unknown> = {}, status = 400): StripeErrorAnswer {
  return new StripeErrorAnswer(status, { type: 'invalid_request_error', code, message, ...details })
}

function unexpectedState(intent: FakePaymentIntent, action: string): StripeErrorAnswer {
  const message = `You cannot ${action} this PaymentIntent because it has a status of ${intent.status}.`
  return invalidRequest('payment_intent_unexpected_state', message, { payment_intent: structuredClone(intent) })
}

function injectedFailure(status: number): Answer {
  return status === 429
    ? { status, body: { error: { type: 'invalid_request_error', code: 'rate_limit', message: 'Too many requests hit the API too quickly.' } } }
    : { status, body: { error: { type: 'api_error', message: 'An unknown error occurred (injected by the fake Stripe).' } } }
}

function errorAnswer(error: StripeErrorAnswer): Answer {
  return { status: error.status, body: { error: error.error } }
}

function ok(body: unknown): Answer {
  return { status: 200, body }
}

function send(response: ServerResponse, answer: Answer, headers: Record<string, string> = {}): void {
  if (response.headersSent || response.destroyed) return
  response.writeHead(answer.status, { 'content-type': 'application/json', 'request-id': newId('req'), ...headers })
  response.end(JSON.stringify(answer.body))
}

function headerOf(request: IncomingMessage, name: string): string | null {
  const value = request.headers[name]
  return (Array.isArray(value) ? value[0] : value) ?? null
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

function newId(prefix: string): string {
  return `${prefix}_${randomToken()}`
}

function randomToken(): string {
  return randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')
}

function now(): number {
  return Math.floor(Date.now() / 1000)
}
