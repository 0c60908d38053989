/**
 * Calls to the Commerce Service API over HTTP, with the API's errors as ApiRequestError. Node's own
 * fetch (undici inside Node) rather than the undici package: the package is a megabyte of
 * JavaScript to compile at every command's start, Node's copy comes compiled.
 */

/** How long a call waits for the answer's headers; its body may then take longer (a large export). */
const HEADERS_TIMEOUT_MS = 60_000

/** fetch, given up when the headers take longer than HEADERS_TIMEOUT_MS. */
async function fetchInTime(url: URL, init: RequestInit = {}): Promise<Response> {
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), HEADERS_TIMEOUT_MS)
  try {
    return await fetch(url, { ...init, signal: controller.signal })
  } finally {
    clearTimeout(timer)
  }
}

/** Why a call failed, in a word where there is one: ECONNREFUSED, ENOTFOUND, a timeout. */
function failureReason(error: unknown): string {
  if (error instanceof Error && error.name === 'AbortError') return `no answer within ${HEADERS_TIMEOUT_MS / 1000} s`
  const cause = error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined
  return (error as { code?: string }).code ?? cause?.code ?? cause?.message ?? (error as Error).message
}

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
  if (call.body !== undefined) headers['content-type'] = 'application/json'
  let response: Response
  try {
    response = await fetchInTime(url, {
      method: call.method,
      headers,
      body: call.form ?? (call.body === undefined ? undefined : JSON.stringify(call.body)),
      redirect: 'manual',
    })
  } catch (error) {
    throw new ApiUnreachableError(`Could not reach the API at ${url.origin} (${failureReason(error)})`)
  }
  // A file kept elsewhere (an export in S3): fetched from there, without our credentials.
  const location = response.headers.get('location')
  if (response.status >= 300 && response.status < 400 && location !== null) {
    await response.body?.cancel()
    const fileUrl = new URL(location, url)
    try {
      const file = await fetchInTime(fileUrl)
      if (file.status !== 200) throw new ApiUnreachableError(`The file at ${fileUrl.origin} answered HTTP ${file.status}`)
      return { status: 200, body: Buffer.from(await file.arrayBuffer()) }
    } catch (error) {
      if (error instanceof ApiUnreachableError) throw error
      throw new ApiUnreachableError(`Could not fetch the file at ${fileUrl.origin} (${failureReason(error)})`)
    }
  }
  let bytes: Buffer
  try {
    // Bytes, not text: a file's byte order mark is kept (text decoding drops it).
    bytes = Buffer.from(await response.arrayBuffer())
  } catch (error) {
    throw new ApiUnreachableError(`The API at ${url.origin} broke off its answer (${failureReason(error)})`)
  }
  if (response.status === 204) return { status: 204, body: undefined }
  // A file (an export's CSV): its bytes as they are.
  if (response.status < 300 && (response.headers.get('content-type') ?? '').startsWith('text/csv')) return { status: response.status, body: bytes }
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
