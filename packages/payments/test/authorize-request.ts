import { randomUUID } from 'node:crypto'
import type { AuthorizeRequest } from '@commerce/domain'

/** A fresh payment of 25.00 USD, captured at once, keyed by its own id. */
export function authorizeRequestFor(token: string, overrides: Partial<AuthorizeRequest> = {}): AuthorizeRequest {
  const paymentId = randomUUID()
  return {
    paymentId,
    amountMinor: 2500,
    currency: 'USD',
    method: 'card',
    token,
    capture: 'automatic',
    idempotencyKey: `authorize-${paymentId}`,
    returnUrl: null,
    ...overrides,
  }
}

/** What a provider answers for that payment once it is captured in full, but its reference. */
export const capturedInFull = {
  status: 'captured',
  amountMinor: 2500,
  capturedMinor: 2500,
  refundedMinor: 0,
  currency: 'USD',
  nextAction: null,
  failure: null,
} as const
