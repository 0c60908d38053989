/** The one error type of the API, the code -> status table, and the factories routes use. */
import { STATUS_CODES } from 'node:http'
import { DomainError, type DomainErrorCode, type ErrorDetail } from '@commerce/domain'

export const ERROR_STATUS = {
  validation_error: 400,
  coupon_invalid: 400,
  currency_mismatch: 400,
  unauthorized: 401,
  payment_declined: 402,
  forbidden: 403,
  // The right password of a customer whose address REQUIRE_EMAIL_VERIFICATION wants verified first.
  email_not_verified: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  conflict: 409,
  insufficient_inventory: 409,
  invalid_state_transition: 409,
  idempotency_conflict: 409,
  payment_in_progress: 409,
  payment_provider_refused: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  expectation_failed: 417,
  idempotency_key_mismatch: 422,
  upgrade_required: 426,
  rate_limited: 429,
  request_header_fields_too_large: 431,
  internal_error: 500,
  payment_provider_error: 502,
  service_unavailable: 503,
} as const
// Every domain error code has a status: this line fails to compile when one is missing.
const domainCodesCovered: Record<DomainErrorCode, number> = ERROR_STATUS
void domainCodesCovered

export type ErrorCode = keyof typeof ERROR_STATUS

export class ApiError extends Error {
  override readonly name = 'ApiError'
  readonly statusCode: number
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message)
    this.statusCode = ERROR_STATUS[code]
  }

  static fromDomain(error: DomainError): ApiError {
    return new ApiError(error.code, error.message, error.details)
  }
}

export const notFound = (resource: string) => new ApiError('not_found', `${resource} not found`)
export const unauthorized = (message = 'Authentication required') => new ApiError('unauthorized', message)
export const forbidden = (message = 'You do not have permission to do this') => new ApiError('forbidden', message)
export const conflict = (message: string) => new ApiError('conflict', message)
export const invalidField = (field: string, message: string) =>
  new ApiError('validation_error', message, [{ field, message }])

/** The error body every error answers with (also what an idempotent replay of an error returns). */
export function errorBody(error: ApiError, requestId: string) {
  return {
    error: {
      code: error.code,
      message: error.message,
      ...(error.details ? { details: error.details } : {}),
      request_id: requestId,
    },
  }
}

/** An error answer's description in the OpenAPI document: its status and the codes it may carry. */
export function errorDescription(status: number): string {
  const codes = (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => ERROR_STATUS[code] === status).map((code) => `\`${code}\``)
  const list = codes.length > 1 ? `${codes.slice(0, -1).join(', ')} or ${codes.at(-1)}` : codes[0]
  return `${STATUS_CODES[status] ?? status}: the error's \`code\` is ${list}`
}

/** OpenAPI/serializer entries for the error statuses a route can answer. */
export function errorResponses(...statuses: number[]): Record<number, { $ref: string; description: string }> {
  return Object.fromEntries(statuses.map((status) => [status, { $ref: 'Error#', description: errorDescription(status) }]))
}
