/** The one error an answer other than 2xx becomes. */
import type { ErrorCode, OAuthErrorCode, Schemas } from './operations.js'

export type ErrorDetail = NonNullable<Schemas['Error']['error']['details']>[number]

/**
 * `code`: one of the document's error codes; for `createOAuthToken`, its RFC 6749 code; and
 * `unexpected_response` for a body in neither form (a proxy's HTML page, say): go by `status`.
 */
export type CommerceErrorCode = ErrorCode | OAuthErrorCode | 'unexpected_response'

export class CommerceError extends Error {
  override readonly name = 'CommerceError'
  readonly status: number
  readonly code: CommerceErrorCode
  /** The fields at fault (`validation_error`), each with its message. */
  readonly details: ErrorDetail[]
  /** The request's id (X-Request-Id), to quote in a support request or find in the logs. */
  readonly requestId: string | undefined
  /** Seconds the server asked to wait (Retry-After), on 429 and 503. */
  readonly retryAfter: number | undefined

  constructor(fields: { status: number; code: CommerceErrorCode; message: string; details?: ErrorDetail[]; requestId?: string; retryAfter?: number }) {
    super(fields.message)
    this.status = fields.status
    this.code = fields.code
    this.details = fields.details ?? []
    this.requestId = fields.requestId
    this.retryAfter = fields.retryAfter
  }

  /** Reads an error answer: our error body, the OAuth form, or anything else. */
  static async fromResponse(response: Response): Promise<CommerceError> {
    const text = await response.text()
    const common = { status: response.status, requestId: response.headers.get('x-request-id') ?? undefined, retryAfter: retryAfterSeconds(response) }
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    const error = (body as { error?: unknown } | undefined)?.error
    if (typeof error === 'object' && error !== null && 'code' in error) {
      const { code, message, details, request_id } = error as Schemas['Error']['error']
      return new CommerceError({ ...common, code, message, details, requestId: request_id })
    }
    if (typeof error === 'string') {
      const oauth = body as Schemas['OAuthError']
      return new CommerceError({ ...common, code: oauth.error, message: oauth.error_description })
    }
    return new CommerceError({ ...common, code: 'unexpected_response', message: `HTTP ${response.status}: ${text.slice(0, 200)}` })
  }
}

/** Retry-After in seconds: a number of seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterSeconds(response: Response): number | undefined {
  const value = response.headers.get('retry-after')
  if (value === null) return undefined
  const seconds = /^\d+$/.test(value.trim()) ? Number(value) : (Date.parse(value) - Date.now()) / 1000
  return Number.isNaN(seconds) ? undefined : Math.max(0, seconds)
}
