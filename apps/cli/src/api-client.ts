/**
 * Calls to the Commerce Service API over HTTP, with the API's errors as ApiRequestError. Node's
 * own http module rather than the undici package, which is a megabyte of JavaScript to compile at
 * every command's start, or Node 20's fetch, which never settles when a server drops the
 * connection before answering.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { request as httpsRequest } from 'node:https'

/** How long a call waits without receiving a byte before it gives up. */
const IDLE_TIMEOUT_MS = 60_000

interface Answer {
  status: number
  headers: IncomingHttpHeaders
  body: Buffer
}

/** One HTTP exchange, the whole answer read. Rejects with Node's error (its code: ECONNREFUSED, …). */
function exchange(url: URL, method: string, headers: Record<string, string>, body?: Buffer | string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest
    const request = send(url, { method, headers, timeout: IDLE_TIMEOUT_MS }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }))
      response.on('error', reject)
    })
    request.on('timeout', () => request.destroy(Object.assign(new Error(`nothing received for ${IDLE_TIMEOUT_MS / 1000} s`), { code: 'ETIMEDOUT' })))
    request.on('error', reject)
    request.end(body)
  })
}

/** Why a call failed, in a word where there is one: ECONNREFUSED, ENOTFOUND, ETIMEDOUT. */
const failureReason = (error: unknown) => (error as { code?: string }).code ?? (error as Error).message

/** The API answered with an error: its `{error: {code, message, details?}}` body, kept for --json. */
export class ApiRequestError extends Error {
  override readonly name = 'ApiRequestError'
  constructor(
    readonly status: number,
    readonly body: { error: { code: string; message: string; details?: unknown } },
  ) {
    super(body.error.message)
  }
}

/** The API could not be reached, or answered something that is not our API. */
export class ApiUnreachableError extends Error {
  override readonly name = 'ApiUnreachableError'
}

export interface Connection {
  baseUrl: string
  token: string | undefined
}

export interface ApiRequest {
  method: string
  path: string
  query?: Record<string, string | string[]>
  body?: unknown
  /** Sent as multipart/form-data instead of a JSON body. */
  form?: FormData
  headers?: Record<string, string>
}

export interface ApiResponse {
  status: number
  /** Parsed JSON; undefined for 204; a Buffer for a file (text/csv). */
  body: unknown
}

/** The URL of an API path under the base URL (which may itself carry a path prefix). */
export function apiUrl(baseUrl: string, path: string, query: Record<string, string | string[]> = {}): URL {
  const url = new URL(baseUrl.replace(/\/+$/, '') + path)
  for (const [name, value] of Object.entries(query)) {
    for (const one of Array.isArray(value) ? value : [value]) url.searchParams.append(name, one)
  }
  return url
}

export async function callApi(connection: Connection, call: ApiRequest): Promise<ApiResponse> {
  let url: URL
  try {
    url = apiUrl(connection.baseUrl, call.path, call.query)
  } catch {
    throw new ApiUnreachableError(`The base URL '${connection.baseUrl}' is not a URL (set --base-url or COMMERCE_BASE_URL)`)
  }
  const headers: Record<string, string> = { accept: 'application/json', 'user-agent': 'commerce-cli', ...call.headers }
  if (connection.token) headers.authorization = `Bearer ${connection.token}`
  let payload: Buffer | string | undefined
  if (call.form) {
    // The multipart encoding of a FormData, boundary and all, as fetch would send it.
    const encoded = new Response(call.form)
    headers['content-type'] = encoded.headers.get('content-type')!
    payload = Buffer.from(await encoded.arrayBuffer())
  } else if (call.body !== undefined) {
    headers['content-type'] = 'application/json'
    payload = JSON.stringify(call.body)
  }
  let response: Answer
  try {
    response = await exchange(url, call.method, headers, payload)
  } catch (error) {
    throw new ApiUnreachableError(`Could not reach the API at ${url.origin} (${failureReason(error)})`)
  }
  // A file kept elsewhere (an export in S3): fetched from there, without our credentials.
  const location = response.headers.location
  if (response.status >= 300 && response.status < 400 && location !== undefined) {
    const fileUrl = new URL(location, url)
    let file: Answer
    try {
      file = await exchange(fileUrl, 'GET', { 'user-agent': 'commerce-cli' })
    } catch (error) {
      throw new ApiUnreachableError(`Could not fetch the file at ${fileUrl.origin} (${failureReason(error)})`)
    }
    if (file.status !== 200) throw new ApiUnreachableError(`The file at ${fileUrl.origin} answered HTTP ${file.status}`)
    return { status: 200, body: file.body }
  }
  // Bytes, not text: a file's byte order mark is kept (text decoding drops it).
  const bytes = response.body
  if (response.status === 204) return { status: 204, body: undefined }
  // A file (an export's CSV): its bytes as they are.
  if (response.status < 300 && String(response.headers['content-type'] ?? '').startsWith('text/csv')) return { status: response.status, body: bytes }
  const text = bytes.toString('utf8')
  let body: unknown
  try {
    body = text === '' ? undefined : JSON.parse(text)
  } catch {
    throw new ApiUnreachableError(`${url.origin} answered HTTP ${response.status} with a body that is not JSON: is it the Commerce API?`)
  }
  if (response.status >= 400) {
    const answer = body as { error?: { code?: unknown; message?: unknown } | string; error_description?: unknown } | undefined
    // The OAuth token endpoint answers RFC 6749 errors: {error: "invalid_client", error_description}.
    if (typeof answer?.error === 'string') {
      const message = typeof answer.error_description === 'string' ? answer.error_description : answer.error
      throw new ApiRequestError(response.status, { error: { code: answer.error, message } })
    }
    const error = answer?.error
    if (typeof error?.code !== 'string' || typeof error.message !== 'string') {
      throw new ApiUnreachableError(`${url.origin} answered HTTP ${response.status} without an error body: is it the Commerce API?`)
    }
    throw new ApiRequestError(response.status, body as ApiRequestError['body'])
  }
  return { status: response.status, body }
}
