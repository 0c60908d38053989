/**
 * The only writer of error bodies: ApiError, DomainError, schema validation, bad JSON, body
 * limits, media types, JWT failures, database outages and anything unexpected all leave as
 * { error: { code, message, details?, request_id } }. 5xx never carry internals.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { randomUUID } from 'node:crypto'
import { maxHeaderSize, STATUS_CODES as HTTP_REASONS, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import fp from 'fastify-plugin'
import { DomainError, type ErrorDetail } from '@commerce/domain'
import { pgErrorCode } from '@commerce/db'
import { ApiError, ERROR_STATUS, errorBody, type ErrorCode } from '../errors.js'

interface AjvError {
  keyword: string
  instancePath: string
  params: Record<string, unknown>
  message?: string
}

function fieldName(instancePath: string, child?: unknown): string {
  const parts = instancePath.split('/').filter(Boolean)
  if (typeof child === 'string') parts.push(child)
  return parts.join('.')
}

/** `idempotency-key` -> `Idempotency-Key`: Fastify's header schemas are lower-case, the names people read are not. */
const headerName = (name: string) => name.replace(/(^|-)([a-z])/g, (_, dash: string, letter: string) => dash + letter.toUpperCase())

/**
 * Turns Ajv's errors into our details; a missing field reads exactly "Field 'x' is required", a
 * missing header "Header 'X-Y' is required".
 */
export function validationDetails(errors: AjvError[], context: string): ErrorDetail[] {
  const headers = context === 'headers'
  const detail = (field: string, says: string): ErrorDetail => {
    const name = headers ? headerName(field) : field
    return { field: name, message: `${headers ? 'Header' : 'Field'} '${name}' ${says}` }
  }
  const details: ErrorDetail[] = []
  for (const error of errors) {
    // anyOf/oneOf repeat their branches' errors; the branch errors already say what is wrong.
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf') continue
    if (error.keyword === 'required') {
      details.push(detail(fieldName(error.instancePath, error.params.missingProperty), 'is required'))
    } else if (error.keyword === 'additionalProperties') {
      details.push(detail(fieldName(error.instancePath, error.params.additionalProperty), 'is not allowed'))
    } else {
      details.push(detail(fieldName(error.instancePath) || context, error.message ?? 'is invalid'))
    }
  }
  const unique = new Map(details.map((detail) => [`${detail.field}\u0000${detail.message}`, detail]))
  return [...unique.values()]
}

const FASTIFY_CODES: Record<string, [ErrorCode, string]> = {
  FST_ERR_CTP_INVALID_JSON_BODY: ['validation_error', 'The request body is not valid JSON'],
  FST_ERR_CTP_EMPTY_JSON_BODY: ['validation_error', 'The request body is empty but its content type is JSON'],
  FST_ERR_CTP_BODY_TOO_LARGE: ['payload_too_large', 'The request body is larger than the limit of 1 MiB'],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: ['unsupported_media_type', 'Unsupported content type; send application/json'],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['validation_error', 'Content-Length does not match the body'],
  FST_ERR_BAD_URL: ['validation_error', 'The URL is not valid (malformed percent-encoding)'],
  FST_ERR_MAX_PARAM_LENGTH: ['validation_error', 'A path parameter of the URL is longer than 100 characters'],
}

const DATABASE_UNAVAILABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '57014', // query_canceled (statement timeout)
])

// A transaction PostgreSQL rolled back to break a deadlock or a serialization conflict (possible
// only when an admin changes a promotion's limits while checkouts use it): nothing was written,
// and the same request succeeds when sent again.
const DATABASE_ROLLED_BACK = new Set(['40P01', '40001'])

// Input PostgreSQL cannot store that the schemas let through (a NUL in text, a number too big).
const DATABASE_REJECTED_INPUT = new Set(['22021', '22P05', '22P02', '22003', '22001', '54000'])

const STATUS_CODES: Record<number, ErrorCode> = Object.fromEntries(
  Object.entries(ERROR_STATUS).map(([code, status]) => [status, code as ErrorCode]).reverse(),
)

export function toApiError(error: FastifyError & { validationContext?: string }): ApiError | undefined {
  if (error instanceof ApiError) return error
  if (error instanceof DomainError) return ApiError.fromDomain(error)
  if (error.validation) {
    const details = validationDetails(error.validation as AjvError[], error.validationContext ?? 'body')
    return new ApiError('validation_error', details[0]?.message ?? 'The request is invalid', details)
  }
  const known = FASTIFY_CODES[error.code]
  if (known) return new ApiError(known[0], known[1])
  if (error.code?.startsWith('FST_JWT_') || error.code === 'FAST_JWT_INVALID_SIGNATURE') {
    return new ApiError('unauthorized', 'The access token is missing, malformed, expired or invalid')
  }
  if (DATABASE_UNAVAILABLE.has(error.code) || DATABASE_UNAVAILABLE.has(pgErrorCode(error) ?? '')) {
    return new ApiError('service_unavailable', 'The service is temporarily unavailable; retry shortly')
  }
  if (DATABASE_ROLLED_BACK.has(pgErrorCode(error) ?? '')) {
    return new ApiError('service_unavailable', 'The request met a concurrent change and was rolled back; send it again')
  }
  if (DATABASE_REJECTED_INPUT.has(pgErrorCode(error) ?? '')) {
    return new ApiError('validation_error', 'The request contains a value that cannot be stored (for example a NUL character)')
  }
  const status = error.statusCode
  if (status && status >= 400 && status < 500) {
    if (error instanceof SyntaxError) return new ApiError('validation_error', 'The request body is not valid JSON')
    const code = STATUS_CODES[status] ?? 'validation_error'
    return new ApiError(code, error.message)
  }
  return undefined
}

export function sendError(reply: FastifyReply, request: FastifyRequest, error: ApiError) {
  return reply.code(error.statusCode).send(errorBody(error, String(request.id)))
}

/**
 * The router refuses some URLs before any hook or the error handler runs (malformed
 * percent-encoding, a path parameter over 100 characters); buildApp's `frameworkErrors` sends them
 * here, so that they too answer our error body and carry X-Request-Id.
 */
export function sendFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  reply.header('x-request-id', request.id)
  return sendError(reply, request, toApiError(error) ?? new ApiError('internal_error', 'Internal server error'))
}

/** Node's HTTP parser errors by code; any other is a request that is not valid HTTP. */
const CLIENT_ERRORS: Record<string, [ErrorCode, string]> = {
  HPE_HEADER_OVERFLOW: [
    'request_header_fields_too_large',
    `The request line and headers are larger than the limit of ${maxHeaderSize / 1024} KiB (a URL that long: send fewer or shorter query parameters)`,
  ],
  ERR_HTTP_REQUEST_TIMEOUT: ['request_timeout', 'The request was not received in time'],
}

/** An error answer written without Fastify (no request object): its status, headers and body. */
function rawErrorAnswer(code: ErrorCode, message: string) {
  const error = new ApiError(code, message)
  const requestId = randomUUID()
  const body = JSON.stringify(errorBody(error, requestId))
  const headers = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    'x-request-id': requestId,
    'x-content-type-options': 'nosniff',
    connection: 'close',
  }
  return { status: error.statusCode, headers, body, requestId }
}

/**
 * Node's HTTP parser refuses some requests before Fastify sees them (a URL or headers over 16 KiB,
 * malformed syntax, a request sent too slowly); buildApp's `clientErrorHandler` answers them here
 * in our error body with a request id (Fastify's default wrote its own body without either),
 * then closes the connection, whose stream can no longer be read.
 */
export function sendClientError(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Duplex) {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const [code, message] = CLIENT_ERRORS[error.code ?? ''] ?? ['validation_error', 'The request is not valid HTTP']
  const answer = rawErrorAnswer(code, message)
  // Not the error itself: its rawPacket holds the request's bytes, credentials included.
  this.log.debug({ request_id: answer.requestId, code: error.code }, message)
  if (socket.writable) {
    const head = Object.entries(answer.headers).map(([name, value]) => `${name}: ${value}\r\n`)
    socket.write(`HTTP/1.1 ${answer.status} ${HTTP_REASONS[answer.status]}\r\n${head.join('')}\r\n${answer.body}`)
  }
  socket.destroy(error)
}

/**
 * An `Expect` other than 100-continue, which Node answers itself (417, no body) before Fastify
 * sees the request unless the server has a `checkExpectation` listener: this one.
 */
export function sendExpectationFailed(request: IncomingMessage, response: ServerResponse) {
  const answer = rawErrorAnswer('expectation_failed', `The expectation '${String(request.headers.expect)}' is not supported; only 100-continue is`)
  response.writeHead(answer.status, answer.headers).end(answer.body)
}

export default fp(
  async function errorsPlugin(app: FastifyInstance) {
    app.setErrorHandler((error: FastifyError, request, reply) => {
      const apiError = toApiError(error)
      if (apiError) {
        if (apiError.statusCode >= 500) request.log.warn({ err: error }, apiError.message)
        return sendError(reply, request, apiError)
      }
      request.log.error({ err: error }, 'unhandled error')
      return sendError(reply, request, new ApiError('internal_error', 'Internal server error'))
    })
  },
  { name: 'errors' },
)
