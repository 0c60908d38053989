/** Business-rule failures, free of HTTP: the API maps each code to a status in one table. */
export const DOMAIN_ERROR_CODES = [
  'validation_error',
  'conflict',
  'not_found',
  'coupon_invalid',
  'currency_mismatch',
  'insufficient_inventory',
  'invalid_state_transition',
] as const
export type DomainErrorCode = (typeof DOMAIN_ERROR_CODES)[number]

export interface ErrorDetail {
  field: string
  message: string
}

export class DomainError extends Error {
  override readonly name = 'DomainError'
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message)
  }
}

/**
 * A figure past MAX_MINOR_UNITS (a cart total, a shipping price): beyond it a JSON number no
 * longer holds every digit. Its own class so that pricing can tell it from malformed input.
 */
export class AmountTooLargeError extends DomainError {
  constructor(message: string) {
    super('validation_error', message)
  }
}
