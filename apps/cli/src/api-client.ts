/** Calls to the Commerce Service API over HTTP (undici), with the API's errors as ApiRequestError. */
import { request, type FormData } from 'undici'

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
  let response: Awaited<ReturnType<typeof request>>
  try {
    response = await request(url, {
      method: call.method as 'GET',
      headers,
      body: call.form ?? (call.body === undefined ? undefined : JSON.stringify(call.body)),
      headersTimeout: 60_000,
      bodyTimeout: 60_000,
    })
  } catch (error) {
    const reason = (error as { code?: string }).code ?? (error as Error).message
    throw new ApiUnreachableError(`Could not reach the API at ${url.origin} (${reason})`)
  }
  // A file kept elsewhere (an export in S3): fetched from there, without our credentials.
  const location = response.headers.location
  if (response.statusCode >= 300 && response.statusCode < 400 && typeof location === 'string') {
    await response.body.dump()
    const file = await request(new URL(location, url), { headersTimeout: 60_000, bodyTimeout: 60_000 })
    if (file.statusCode !== 200) throw new ApiUnreachableError(`The file at ${new URL(location, url).origin} answered HTTP ${file.statusCode}`)
    return { status: 200, body: Buffer.from(await file.body.arrayBuffer()) }
  }
  // Bytes, not text: a file's byte order mark is kept (text decoding drops it).
  const bytes = Buffer.from(await response.body.arrayBuffer())
  if (response.statusCode === 204) return { status: 204, body: undefined }
  // A file (an export's CSV): its bytes as they are.
  if (response.statusCode < 300 && String(response.headers['content-type'] ?? '').startsWith('text/csv')) return { status: response.statusCode, body: bytes }
  const text = bytes.toString('utf8')
  let body: unknown
  try {
    body = text === '' ? undefined : JSON.parse(text)
  } catch {
    throw new ApiUnreachableError(`${url.origin} answered HTTP ${response.statusCode} with a body that is not JSON: is it the Commerce API?`)
  }
  if (response.statusCode >= 400) {
    const answer = body as { error?: { code?: unknown; message?: unknown } | string; error_description?: unknown } | undefined
    // The OAuth token endpoint answers RFC 6749 errors: {error: "invalid_client", error_description}.
    if (typeof answer?.error === 'string') {
      const message = typeof answer.error_description === 'string' ? answer.error_description : answer.error
      throw new ApiRequestError(response.statusCode, { error: { code: answer.error, message } })
    }
    const error = answer?.error
    if (typeof error?.code !== 'string' || typeof error.message !== 'string') {
      throw new ApiUnreachableError(`${url.origin} answered HTTP ${response.statusCode} without an error body: is it the Commerce API?`)
    }
    throw new ApiRequestError(response.statusCode, body as ApiRequestError['body'])
  }
  return { status: response.statusCode, body }
}
