/**
 * Payment providers: what the API needs from one (charge, refund), and the built-in `test`
 * provider. A real provider (a Stripe-style adapter over undici) implements the same interface.
 */
import { randomUUID } from 'node:crypto'
import { ApiError } from '../errors.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** Charges and refunds go through this provider (the built-in `test` one unless buildApp is given another). */
    paymentProvider: PaymentProvider
  }
}

export interface ChargeRequest {
  amountMinor: number
  currency: string
  method: string
  token: string
  /** Sent to the provider so a retried call never charges twice. */
  idempotencyKey: string
}

export type ChargeResult =
  | { status: 'succeeded'; reference: string }
  | { status: 'failed'; code: string; message: string }

export interface RefundRequest {
  reference: string
  amountMinor: number
  currency: string
  idempotencyKey: string
}

export interface PaymentProvider {
  readonly name: string
  /** A decline is a result; a provider that cannot answer throws ProviderUnavailable. */
  charge(request: ChargeRequest): Promise<ChargeResult>
  refund(request: RefundRequest): Promise<{ reference: string }>
}

/** The provider could not be reached or failed: nothing was charged; the client may retry. */
export class ProviderUnavailable extends ApiError {
  constructor(message = 'The payment provider failed; nothing was charged. Retry later') {
    super('payment_provider_error', message)
  }
}

/**
 * The `test` provider: token `tok_visa` succeeds, `tok_declined` is declined, `tok_error` fails
 * as an unreachable provider would; any other token is declined as invalid.
 */
export const testProvider: PaymentProvider = {
  name: 'test',
  async charge({ token }) {
    if (token === 'tok_visa') return { status: 'succeeded', reference: `ch_test_${randomUUID()}` }
    if (token === 'tok_error') throw new ProviderUnavailable()
    if (token === 'tok_declined') return { status: 'failed', code: 'card_declined', message: 'The card was declined' }
    return { status: 'failed', code: 'invalid_token', message: `Unknown test token '${token}'` }
  },
  async refund() {
    return { reference: `re_test_${randomUUID()}` }
  },
}
