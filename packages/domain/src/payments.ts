/**
 * Payments: the states a payment moves through, and what a payment provider must do for the
 * service (the interface a shop implements to add its own provider; docs/payments.md). Amounts
 * are integer minor units of the payment's currency.
 *
 * The provider is asked about one payment at a time and answers its current truth
 * (ProviderPayment): the service moves the payment with applyProviderPayment, which never moves
 * it backwards, so repeated, late or out-of-order answers and webhooks change nothing wrong.
 */

/**
 * A payment's states. pending: created, the provider not answered yet; requires_action: the
 * customer must confirm (3-D Secure); authorized: the amount is held, nothing captured;
 * captured / partially_captured: taken in full or in part (a partial capture releases the rest);
 * partially_refunded / refunded: some or all of what was captured given back; failed: declined
 * or errored; canceled: the authorization voided (nothing taken).
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

/** The provider could not be reached or failed; what happened to the payment is not known yet. */
export class ProviderUnavailableError extends Error {
  constructor(message = 'The payment provider did not answer') {
    super(message)
    this.name = 'ProviderUnavailableError'
  }
}

/** A provider notification whose signature does not verify. */
export class WebhookSignatureError extends Error {
  constructor(message = 'The notification signature does not verify') {
    super(message)
    this.name = 'WebhookSignatureError'
  }
}
