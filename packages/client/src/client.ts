/**
 * The client: a method per operation of the method table over one `call()` on fetch, with the
 * credential, an Idempotency-Key per call where the operation takes one, and retries.
 */
import { CommerceError, retryAfterSeconds } from './errors.js'
import { EventStream, type EventStreamOptions } from './event-stream.js'
import {
  OPERATIONS,
  type HttpOperationId,
  type ListItem,
  type ListOperationId,
  type OperationArgs,
  type OperationId,
  type OperationMethods,
  type OperationResult,
  type OperationSpec,
  type RequestBody,
  type RequestOptions,
  type RetryOptions,
} from './operations.js'

/** Both are sent as `Authorization: Bearer`; the names say which you hold. */
export type Auth = { token: string } | { apiKey: string }

export interface ClientOptions {
  /** The deployment's origin, such as `https://shop.example.com` (paths start with /api/v1). */
  baseUrl: string
  auth?: Auth
  /** Retries of idempotent calls (GET, or with an Idempotency-Key); false: none. */
  retry?: RetryOptions | false
  /**
   * How long one try may take, its answer's body included, before it fails with a TimeoutError
   * (and is retried like a network failure); 0: no limit. Default 60 s. Without one a call could
   * wait forever: Node 20's fetch never settles when a server drops the connection unanswered.
   */
  timeoutMs?: number
  /** Headers sent with every call. */
  headers?: Record<string, string>
  /** Another fetch (a test double, a proxy agent); default globalThis.fetch. */
  fetch?: typeof fetch
}

/** The pages of a list, one request each; `items()` the items of every page. */
export interface Pages<K extends ListOperationId> extends AsyncIterable<OperationResult<K>> {
  items(): AsyncIterable<ListItem<K>>
}

export interface CommerceClient extends OperationMethods {
  /** Switches the credential of the calls from now on (undefined: none). */
  setAuth(auth: Auth | undefined): void
  /** Logs in (`login`) and uses the token from then on. */
  signIn(credentials: RequestBody<'login'>): Promise<OperationResult<'login'>>
  /** Any operation by its operationId, as its method calls it. */
  request<K extends HttpOperationId>(operationId: K, ...args: OperationArgs<K>): Promise<OperationResult<K>>
  /** Every page of a list, walked with `after` (cursor mode) where the list takes it, else by `page`. */
  paginate<K extends ListOperationId>(operationId: K, ...args: OperationArgs<K>): Pages<K>
  /** The live events (GET /api/v1/ws), resumed after a drop: see EventStreamOptions. */
  streamEvents(options?: EventStreamOptions): EventStream
}

const DEFAULT_RETRY: Required<RetryOptions> = { maxRetries: 2, initialDelayMs: 500, maxDelayMs: 30_000 }
const DEFAULT_TIMEOUT_MS = 60_000

/** The caller's signal and a try's time limit, whichever comes first. */
function trySignal(signal: AbortSignal | undefined, timeoutMs: number): AbortSignal | undefined {
  if (timeoutMs <= 0) return signal
  const timeout = AbortSignal.timeout(timeoutMs)
  if (!signal) return timeout
  // AbortSignal.any: Node 20.3, and browsers since 2024; before it, the caller's signal alone.
  return typeof AbortSignal.any === 'function' ? AbortSignal.any([signal, timeout]) : signal
}

type QueryValue = string | number | boolean | readonly string[] | null | undefined

/**
 * The query string: undefined left out, an empty string kept (`after=`). The values of an array
 * parameter (`repeated`) each go under its name (OpenAPI's default form style, `tag=a&tag=b`); an
 * array given for a string parameter is comma-separated (`fields=title,price`).
 */
function appendQuery(url: URL, query: Record<string, QueryValue> | undefined, repeated: readonly string[] = []): void {
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined) continue
    if (Array.isArray(value) && repeated.includes(name)) for (const one of value) url.searchParams.append(name, one)
    else url.searchParams.set(name, Array.isArray(value) ? value.join(',') : String(value))
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Exponential backoff with jitter: half the step plus a random part of the other half. */
const backoff = (retry: Required<RetryOptions>, attempt: number) =>
  Math.min(retry.maxDelayMs, retry.initialDelayMs * 2 ** attempt) * (0.5 + Math.random() / 2)

export function createClient(options: ClientOptions): CommerceClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '')
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis)
  let bearer = bearerOf(options.auth)

  /** Whether an answer is worth asking again for: a rate limit, an outage, or our own earlier try still running. */
  async function worthRetrying(response: Response, idempotencyKey: string | undefined): Promise<boolean> {
    if (response.status === 429 || response.status === 503) return true
    if (response.status !== 409 || !idempotencyKey) return false
    const body = (await response.clone().json().catch(() => undefined)) as { error?: { code?: string } } | undefined
    return body?.error?.code === 'idempotency_conflict'
  }

  async function send(url: URL, init: RequestInit, timeoutMs: number, retry: Required<RetryOptions> | undefined, idempotencyKey?: string): Promise<Response> {
    for (let attempt = 0; ; attempt++) {
      const last = !retry || attempt >= retry.maxRetries
      let response: Response
      try {
        response = await fetchImpl(url, { ...init, signal: trySignal(init.signal ?? undefined, timeoutMs) })
      } catch (error) {
        if (last || init.signal?.aborted) throw error
        await sleep(backoff(retry, attempt))
        continue
      }
      if (last || !(await worthRetrying(response, idempotencyKey))) return response
      const retryAfter = retryAfterSeconds(response)
      const delay = retryAfter === undefined ? backoff(retry, attempt) : retryAfter * 1000
      if (delay > retry.maxDelayMs) return response
      await response.body?.cancel()
      await sleep(delay)
    }
  }

  async function call(operationId: OperationId, args: readonly unknown[]): Promise<unknown> {
    const spec: OperationSpec = OPERATIONS[operationId]
    let at = spec.pathParams.length
    const path = spec.pathParams.reduce((built, name, index) => built.replace(`{${name}}`, encodeURIComponent(String(args[index]))), spec.path)
    const body = spec.body ? args[at++] : undefined
    const query = spec.query ? (args[at++] as Record<string, QueryValue> | undefined) : undefined
    const callOptions = (args[at] ?? {}) as RequestOptions & { idempotencyKey?: string }

    const url = new URL(baseUrl + path)
    appendQuery(url, query, spec.repeated)
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers }
    if (bearer) headers.authorization = `Bearer ${bearer}`
    if (body !== undefined) headers['content-type'] = 'application/json'
    // One key per call, the same on each of its retries: the API answers a retry with the first try's answer.
    const idempotencyKey = spec.idempotencyKey ? (callOptions.idempotencyKey ?? crypto.randomUUID()) : undefined
    if (idempotencyKey) headers['idempotency-key'] = idempotencyKey
    Object.assign(headers, callOptions.headers)

    const retryOption = callOptions.retry ?? options.retry
    const retryable = retryOption !== false && (spec.method === 'GET' || idempotencyKey !== undefined)
    const response = await send(
      url,
      { method: spec.method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: callOptions.signal },
      callOptions.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      retryable ? { ...DEFAULT_RETRY, ...retryOption } : undefined,
      idempotencyKey,
    )
    if (!response.ok) throw await CommerceError.fromResponse(response)
    if (response.status === 204) return undefined
    return response.headers.get('content-type')?.includes('json') ? response.json() : response.text()
  }

  function paginate<K extends ListOperationId>(operationId: K, ...args: OperationArgs<K>): Pages<K> {
    const spec: OperationSpec = OPERATIONS[operationId]
    const { items: itemsKey, cursor } = spec.list!
    const at = spec.pathParams.length
    const given = args[at] as Record<string, QueryValue> | undefined
    // Cursor mode unless a page was asked for: rows added or removed meanwhile shift no page.
    const byCursor = cursor && given?.page === undefined
    // Each walk starts from the query given.
    async function* pages(): AsyncGenerator<OperationResult<K>> {
      const query = { ...given }
      if (byCursor) query.after ??= ''
      let page = Number(query.page ?? 1)
      for (;;) {
        const request = [...args.slice(0, at), byCursor ? query : { ...query, page }, ...args.slice(at + 1)]
        const answer = await call(operationId, request)
        yield answer as OperationResult<K>
        const { meta } = answer as { meta: { next_cursor?: string | null; total_pages?: number } }
        if (byCursor) {
          if (!meta.next_cursor) return
          query.after = meta.next_cursor
        } else {
          if (page >= (meta.total_pages ?? 0)) return
          page++
        }
      }
    }
    return {
      [Symbol.asyncIterator]: pages,
      async *items() {
        for await (const page of pages()) yield* (page as unknown as Record<string, ListItem<K>[]>)[itemsKey]!
      },
    }
  }

  const client = {
    setAuth(auth: Auth | undefined) {
      bearer = bearerOf(auth)
    },
    async signIn(credentials: RequestBody<'login'>) {
      const answer = (await call('login', [credentials])) as OperationResult<'login'>
      bearer = answer.token
      return answer
    },
    request: (operationId: HttpOperationId, ...args: unknown[]) => call(operationId, args),
    paginate,
    streamEvents: (streamOptions?: EventStreamOptions) =>
      new EventStream({
        url: baseUrl + OPERATIONS.streamEvents.path,
        bearer: () => bearer,
        // A refused handshake shows in a WebSocket only as a close: the same GET over HTTP says why.
        whyRefused: () => call('streamEvents', [{}, { retry: false }]).then(
          () => undefined,
          (error: unknown) => error,
        ),
        ...streamOptions,
      }),
  }
  const methods = Object.fromEntries(
    (Object.keys(OPERATIONS) as OperationId[])
      .filter((operationId) => !(OPERATIONS[operationId] as OperationSpec).upgrade)
      .map((operationId) => [operationId, (...args: unknown[]) => call(operationId, args)]),
  )
  return { ...methods, ...client } as unknown as CommerceClient
}

function bearerOf(auth: Auth | undefined): string | undefined {
  if (!auth) return undefined
  return 'token' in auth ? auth.token : auth.apiKey
}

