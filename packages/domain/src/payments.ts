/**
 * Payments: the states a payment moves through, and what a payment provider must do for the
 * service (the interface a shop implements to add its own provider; docs/payments.md). Amounts
 * are integer minor units of the payment's currency.
 *
 * The provider is asked about one payment at a time and answers its current truth
 * (ProviderPayment): the service moves the payment with applyProviderPayment, which never moves
 * it backwards, so repeated, late or out-of-order answers and webhooks change nothing wrong.
 * The moves the service asks for itself are checked by capturePayment, refundPayment and
 * cancelPayment before the provider is called.
 */
import { DomainError } from './errors.js'

/**
 * The `provider` of a payment taken outside any provider (cash, a bank transfer: a draft order
 * marked paid). No provider is ever called for it: its refunds are recorded only (the shop gives
 * the money back itself).
 */
export const MANUAL_PAYMENT_PROVIDER = 'manual'


/**
 * A payment's states. pending: created, the provider not answered yet; requires_action: the
 * customer must confirm (3-D Secure); authorized: the amount is held, nothing captured;
 * captured / partially_captured: taken in full or in part (a partial capture releases the rest);
 * partially_refunded / refunded: some or all of what was captured given back; failed: declined
 * or errored (the provider may still report it authorized or captured later: PAYMENT_MOVES);
 * canceled: the authorization voided (nothing taken).
 */
export const PAYMENT_STATES = [
  'pending',
  'requires_action',
  'authorized',
  'captured',
  'partially_captured',
  'partially_refunded',
  'refunded',
  'failed',
  'canceled',
] as const
export type PaymentState = (typeof PAYMENT_STATES)[number]

/**
 * A refund's states, as Stripe's: pending once recorded (its amount already counts as refunded,
 * so nothing can refund it twice) until the provider has made it; succeeded; failed when the
 * provider refused it (its amount then counts again as kept). A refund made at the provider
 * itself (its dashboard) is recorded succeeded.
 */
export const REFUND_STATUSES = ['pending', 'succeeded', 'failed'] as const
export type RefundStatus = (typeof REFUND_STATUSES)[number]

/** A captured payment's state once `refundedMinor` of it counts as refunded (pending refunds included). */
export function refundedState(payment: Pick<PaymentFacts, 'amountMinor' | 'capturedMinor' | 'refundedMinor'>): PaymentState {
  if (payment.refundedMinor <= 0) return payment.capturedMinor < payment.amountMinor ? 'partially_captured' : 'captured'
  return payment.refundedMinor >= payment.capturedMinor ? 'refunded' : 'partially_refunded'
}

/** A payment as the state machine sees it. */
export interface PaymentFacts {
  state: PaymentState
  /** What was asked for and, once authorized, what is held. */
  amountMinor: number
  capturedMinor: number
  refundedMinor: number
}

/** What the client needs to let the customer confirm a payment (3-D Secure and the like). */
export interface NextAction {
  /** 'use_sdk': confirm with the provider's client library and `client_secret`; 'redirect': send the customer to `redirect_url`. */
  type: 'use_sdk' | 'redirect'
  client_secret: string | null
  redirect_url: string | null
}

/** The provider's truth about one payment. Amounts are cumulative, not deltas. */
export interface ProviderPayment {
  /** The provider's id of the payment (a Stripe PaymentIntent id). */
  reference: string
  status: 'pending' | 'requires_action' | 'authorized' | 'captured' | 'failed' | 'canceled'
  /** Held or taken: what the payment is for. */
  amountMinor: number
  capturedMinor: number
  refundedMinor: number
  currency: string
  nextAction: NextAction | null
  failure: { code: string; message: string } | null
}

/**
 * The payment state machine as data: the states a payment in each state may move to.
 * partially_refunded moves to itself (another partial refund). refunded and canceled are final.
 *
 * failed is not final: a declined attempt leaves the provider's payment open to another attempt
 * (Stripe's requires_payment_method, confirmed again by the customer's browser with the client
 * secret it already has), which can succeed without the service asking. Money held or taken must
 * never be ignored, so the provider's word moves a failed payment on to authorized or captured
 * (the service never asks for those moves itself); cancelling it (voiding the provider's payment)
 * is how the service makes sure an abandoned payment is never taken later.
 */
export const PAYMENT_MOVES: Readonly<Record<PaymentState, readonly PaymentState[]>> = {
  pending: ['requires_action', 'authorized', 'captured', 'failed', 'canceled'],
  requires_action: ['authorized', 'captured', 'failed', 'canceled'],
  authorized: ['captured', 'partially_captured', 'canceled'],
  captured: ['partially_refunded', 'refunded'],
  partially_captured: ['partially_refunded', 'refunded'],
  partially_refunded: ['partially_refunded', 'refunded'],
  failed: ['authorized', 'captured', 'canceled'],
  canceled: [],
  refunded: [],
}

/**
 * The states from which the service itself may ask for each move (the provider's truth may take
 * the others of PAYMENT_MOVES): capture a hold, refund captured money, void what is not taken.
 */
export const PAYMENT_ACTIONS = {
  capture: ['authorized'],
  refund: ['captured', 'partially_captured', 'partially_refunded'],
  cancel: ['pending', 'requires_action', 'authorized', 'failed'],
} as const satisfies Record<string, readonly PaymentState[]>
export type PaymentAction = keyof typeof PAYMENT_ACTIONS

/**
 * Merges the provider's truth into what the service knows of the payment, monotonically: a state
 * the payment is already past changes nothing (a late requires_action after captured), amounts
 * only grow (the larger of the two is kept), so applying the same truth twice, or a history of
 * truths in any order, ends in the same facts as applying them as they happened. A truth may skip
 * states the service never saw (a lost webhook): the move is then a path of PAYMENT_MOVES.
 *
 * Once money is captured the state follows the amounts: partially_captured when less than the
 * amount was captured (the rest released), partially_refunded / refunded once some / all of it
 * is given back. The states before that are ordered pending < requires_action < failed <
 * authorized < canceled (or captured); a payment therefore stays failed when a retry asks for
 * action, until the provider reports it authorized or captured.
 *
 * Refused: an impossible truth (refunded more than captured, captured more than the amount,
 * captured money on a payment not captured) and one that contradicts the facts (a second,
 * different capture; an amount grown after the capture) with validation_error; a canceled
 * payment reported captured, or a captured one reported canceled, with invalid_state_transition.
 */
export function applyProviderPayment(current: PaymentFacts, truth: ProviderPayment): PaymentFacts {
  const seen = factsOfTruth(truth)
  if (current.capturedMinor > 0 && seen.capturedMinor > 0 && seen.capturedMinor !== current.capturedMinor) {
    throw new DomainError(
      'validation_error',
      `The provider reports ${seen.capturedMinor} captured on payment ${truth.reference}, captured at ${current.capturedMinor} before: a payment is captured once`,
    )
  }
  const amountMinor = Math.max(current.amountMinor, seen.amountMinor)
  for (const side of [current, seen]) {
    if (side.capturedMinor > 0 && amountMinor > side.amountMinor) {
      throw new DomainError(
        'validation_error',
        `The provider reports an amount of ${amountMinor} on payment ${truth.reference}, captured with an amount of ${side.amountMinor}: the amount cannot change after the capture`,
      )
    }
  }
  const later = laterState(current.state, seen.state, truth.reference)
  const capturedMinor = Math.max(current.capturedMinor, seen.capturedMinor)
  const refundedMinor = Math.max(current.refundedMinor, seen.refundedMinor)
  const state = later !== 'canceled' && STAGE[later] === LAST_STAGE ? stateOfMoney(amountMinor, capturedMinor, refundedMinor) : later
  // What the rules above leave cannot move backwards; this keeps it so if they ever change.
  if (state !== current.state && !reachable(current.state, state)) refuseTransition(current.state, state, truth.reference)
  return { state, amountMinor, capturedMinor, refundedMinor }
}

/**
 * Captures `amountMinor` of an authorized payment: all of it (captured) or a part
 * (partially_captured: the provider releases the rest). Throws invalid_state_transition from any
 * other state and validation_error for an amount that is not a positive whole number of minor
 * units up to the amount authorized.
 */
export function capturePayment(facts: PaymentFacts, amountMinor: number): PaymentFacts {
  checkAction(facts, 'capture')
  checkAmount(amountMinor, 'capture')
  if (amountMinor > facts.amountMinor) {
    throw amountError(`Cannot capture ${amountMinor} minor units: ${facts.amountMinor} are authorized`)
  }
  return { ...facts, state: stateOfMoney(facts.amountMinor, amountMinor, 0), capturedMinor: amountMinor }
}

/**
 * Refunds `amountMinor` of what was captured: partially_refunded, or refunded once everything
 * captured is given back. Throws invalid_state_transition unless some money was captured and
 * not all refunded, and validation_error for an amount past what is left to refund.
 */
export function refundPayment(facts: PaymentFacts, amountMinor: number): PaymentFacts {
  checkAction(facts, 'refund')
  checkAmount(amountMinor, 'refund')
  const left = facts.capturedMinor - facts.refundedMinor
  if (amountMinor > left) {
    throw amountError(`Cannot refund ${amountMinor} minor units: ${left} of the ${facts.capturedMinor} captured are left to refund`)
  }
  const refundedMinor = facts.refundedMinor + amountMinor
  return { ...facts, state: stateOfMoney(facts.amountMinor, facts.capturedMinor, refundedMinor), refundedMinor }
}

/** Voids a payment nothing was taken of (pending, requires_action, authorized or failed); throws invalid_state_transition otherwise. */
export function cancelPayment(facts: PaymentFacts): PaymentFacts {
  checkAction(facts, 'cancel')
  return { ...facts, state: 'canceled' }
}

const VERB: Record<PaymentAction, string> = { capture: 'captured', refund: 'refunded', cancel: 'canceled' }

function checkAction(facts: PaymentFacts, action: PaymentAction): void {
  const from: readonly PaymentState[] = PAYMENT_ACTIONS[action]
  if (from.includes(facts.state)) return
  throw new DomainError(
    'invalid_state_transition',
    `A ${facts.state} payment cannot be ${VERB[action]}; only a payment that is ${listOf(from)} can be`,
    [{ field: 'state', message: `allowed: ${from.join(', ')}` }],
  )
}

function checkAmount(amountMinor: number, action: PaymentAction): void {
  if (!Number.isSafeInteger(amountMinor) || amountMinor <= 0) {
    throw amountError(`The amount to ${action} must be a positive whole number of minor units, not ${amountMinor}`)
  }
}

function amountError(message: string): DomainError {
  return new DomainError('validation_error', message, [{ field: 'amount', message }])
}

function listOf(states: readonly string[]): string {
  return states.length > 1 ? `${states.slice(0, -1).join(', ')} or ${states.at(-1)}` : (states[0] ?? 'none')
}

/** The facts the provider's truth says on its own, refused when they cannot be true. */
function factsOfTruth(truth: ProviderPayment): PaymentFacts {
  const { amountMinor, capturedMinor, refundedMinor, status, reference } = truth
  for (const [what, value] of [['amount', amountMinor], ['captured amount', capturedMinor], ['refunded amount', refundedMinor]] as const) {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new DomainError('validation_error', `The provider's ${what} of payment ${reference} must be a whole number of minor units, not ${value}`)
    }
  }
  const impossible = (message: string) => new DomainError('validation_error', `The provider reports payment ${reference} ${message}`)
  if (capturedMinor > amountMinor) throw impossible(`with ${capturedMinor} captured of an amount of ${amountMinor}`)
  if (refundedMinor > capturedMinor) throw impossible(`with ${refundedMinor} refunded of ${capturedMinor} captured`)
  if (status !== 'captured' && capturedMinor > 0) throw impossible(`${status} with ${capturedMinor} captured`)
  if (status === 'captured' && capturedMinor === 0 && amountMinor > 0) throw impossible('captured with nothing captured')
  const state = status === 'captured' ? stateOfMoney(amountMinor, capturedMinor, refundedMinor) : status
  return { state, amountMinor, capturedMinor, refundedMinor }
}

/** A captured payment's state, from its amounts. */
function stateOfMoney(amountMinor: number, capturedMinor: number, refundedMinor: number): PaymentState {
  if (refundedMinor > 0) return refundedMinor >= capturedMinor ? 'refunded' : 'partially_refunded'
  return capturedMinor < amountMinor ? 'partially_captured' : 'captured'
}

/**
 * How far along each state is. The last stage is canceled, or money taken: the states of money
 * taken are told apart by the amounts (stateOfMoney), and canceled excludes them all.
 */
const LAST_STAGE = 4
const STAGE: Readonly<Record<PaymentState, number>> = {
  pending: 0,
  requires_action: 1,
  failed: 2,
  authorized: 3,
  canceled: LAST_STAGE,
  captured: LAST_STAGE,
  partially_captured: LAST_STAGE,
  partially_refunded: LAST_STAGE,
  refunded: LAST_STAGE,
}

/** The later of two states; canceled and money taken exclude each other. */
function laterState(current: PaymentState, seen: PaymentState, reference: string): PaymentState {
  if (STAGE[seen] !== STAGE[current]) return STAGE[seen] > STAGE[current] ? seen : current
  if ((current === 'canceled') !== (seen === 'canceled')) refuseTransition(current, seen, reference)
  return current
}

function refuseTransition(from: PaymentState, to: PaymentState, reference: string): never {
  const allowed = PAYMENT_MOVES[from]
  throw new DomainError(
    'invalid_state_transition',
    `The provider reports payment ${reference} ${to}, which a ${from} payment cannot become; allowed from ${from}: ${allowed.length > 0 ? allowed.join(', ') : 'none'}`,
    [{ field: 'state', message: `allowed: ${allowed.join(', ')}` }],
  )
}

/** Whether a payment in `from` can come to `to` through one or more moves. */
function reachable(from: PaymentState, to: PaymentState): boolean {
  const seen = new Set<PaymentState>()
  const next: PaymentState[] = [from]
  for (let state = next.pop(); state !== undefined; state = next.pop()) {
    for (const move of PAYMENT_MOVES[state]) {
      if (move === to) return true
      if (!seen.has(move)) next.push(move)
      seen.add(move)
    }
  }
  return false
}

export type CaptureMode = 'automatic' | 'manual'

export interface AuthorizeRequest {
  /** Our payment id; the provider keeps it (Stripe: metadata.payment_id) so retrieve can find the payment without its reference. */
  paymentId: string
  amountMinor: number
  currency: string
  method: string
  /** What the client got from the provider's client library (a payment method id, a test token). */
  token: string
  capture: CaptureMode
  /** Derived from our own ids: a retried call never charges twice. */
  idempotencyKey: string
  /** Where a redirect-based confirmation comes back to, when the storefront gave one. */
  returnUrl: string | null
}

export interface CaptureRequest {
  reference: string
  /** Up to what is held; a partial capture releases the rest. */
  amountMinor: number
  currency: string
  idempotencyKey: string
}

export interface CancelRequest {
  reference: string
  idempotencyKey: string
}

export interface RefundRequest {
  reference: string
  amountMinor: number
  currency: string
  idempotencyKey: string
}

export interface RetrieveRequest {
  paymentId: string
  /** Null when the provider's answer to authorize was never recorded (the process died): the provider finds the payment by our id. */
  reference: string | null
}

/** A provider's notification, verified and read. */
export interface ProviderWebhook {
  /** The provider's event id: each is handled once. */
  eventId: string
  /** Our payment id, when the provider carried it (metadata). */
  paymentId: string | null
  /** The payment's truth as of the event; null for an event the service has nothing to do with. */
  payment: ProviderPayment | null
}

export interface PaymentProvider {
  readonly name: string
  /**
   * authorize decides in-process, without any I/O (a test or manual provider): the checkout asks
   * it inside its first transaction and places a successful payment's order there, with no
   * reservation in between. Leave it unset for a provider reached over the network.
   */
  readonly decidesInProcess?: boolean
  /**
   * Starts a payment: authorizes (and, with capture 'automatic', captures) it, or answers that
   * the customer must act first. A decline answers status 'failed'; a provider that cannot
   * answer throws ProviderUnavailableError (nothing known to be charged; retrieve tells later).
   */
  authorize(request: AuthorizeRequest): Promise<ProviderPayment>
  capture(request: CaptureRequest): Promise<ProviderPayment>
  cancel(request: CancelRequest): Promise<ProviderPayment>
  /** Answers the refund's own reference and the payment after it. */
  refund(request: RefundRequest): Promise<{ reference: string; payment: ProviderPayment }>
  /** The provider's current truth; null when the provider has no such payment. */
  retrieve(request: RetrieveRequest): Promise<ProviderPayment | null>
  /**
   * Verifies a notification's signature on its raw body and reads it; throws
   * WebhookSignatureError when the signature does not verify.
   */
  parseWebhook(request: { rawBody: Buffer; headers: Record<string, string | string[] | undefined> }): Promise<ProviderWebhook>
}

/**
 * The failure code kept on a payment whose provider call got no answer (ProviderUnavailableError):
 * the checkout's next completion and the worker's reconciliation sweep ask the provider again.
 */
export const PROVIDER_UNANSWERED = 'provider_unanswered'

/** The provider could not be reached or failed; what happened to the payment is not known yet. */
export class ProviderUnavailableError extends Error {
  constructor(message = 'The payment provider did not answer') {
    super(message)
    this.name = 'ProviderUnavailableError'
  }
}

/**
 * The provider refused the request itself (Stripe's 4xx invalid_request_error: an unknown payment
 * method, a refund of more than is left): nothing happened there, and asking again will not help.
 * The client's error, never a 500: the API answers it in its own format.
 */
export class ProviderRefusedError extends Error {
  constructor(
    /** The provider's code for the refusal (Stripe's error code, e.g. resource_missing). */
    readonly code: string,
    message: string,
  ) {
    super(message)
    this.name = 'ProviderRefusedError'
  }
}

/** A provider notification whose signature does not verify. */
export class WebhookSignatureError extends Error {
  constructor(message = 'The notification signature does not verify') {
    super(message)
    this.name = 'WebhookSignatureError'
  }
}
