/**
 * What each operation takes and answers, derived from the generated contract (types) and method
 * table (the order of the path parameters, which slots an operation has): no per-operation code.
 */
import type { components, operations } from './generated/contract.js'
import { OPERATIONS } from './generated/operations.js'

export { OPERATIONS }
type Table = typeof OPERATIONS

export type OperationId = keyof Table & keyof operations

/** Every operation but the WebSocket upgrade, which `streamEvents()` opens. */
export type HttpOperationId = { [K in OperationId]: Table[K] extends { upgrade: true } ? never : K }[OperationId]

/** The list operations `paginate()` walks: page mode, and cursor mode where the list takes `after`. */
export type ListOperationId = { [K in OperationId]: Table[K] extends { list: object } ? K : never }[OperationId]

/** A row of the method table, as the runtime reads it. */
export interface OperationSpec {
  method: string
  path: string
  pathParams: readonly string[]
  body?: 'required' | 'optional'
  query?: 'required' | 'optional'
  /** Array query parameters: each value sent under the name (`tag=a&tag=b`). */
  repeated?: readonly string[]
  idempotencyKey?: 'required' | 'optional'
  list?: { items: string; cursor: boolean }
  upgrade?: true
}

type JsonContent<T> = T extends { content: { 'application/json': infer Body } } ? Body : never

export type RequestBody<K extends OperationId> = JsonContent<NonNullable<operations[K]['requestBody']>>

/**
 * The query parameters the document declares. A string parameter also takes an array of strings,
 * sent comma-separated (the form of the API's list parameters, such as `fields`).
 */
export type QueryParams<K extends OperationId> = {
  [P in keyof NonNullable<operations[K]['parameters']['query']>]: string extends NonNullable<operations[K]['parameters']['query']>[P]
    ? NonNullable<operations[K]['parameters']['query']>[P] | readonly string[]
    : NonNullable<operations[K]['parameters']['query']>[P]
}

/** Whatever a successful answer holds: the JSON body (or text), undefined for 204. */
type ContentOf<T> = T extends { content: infer Content } ? Content[keyof Content] : undefined
export type OperationResult<K extends OperationId> = {
  [Status in keyof operations[K]['responses']]: ContentOf<operations[K]['responses'][Status]>
}[keyof operations[K]['responses']]

export interface RetryOptions {
  /** Tries after the first; 0 turns retrying off. Default 2. */
  maxRetries?: number
  /** The first backoff; it doubles each try (with jitter). Default 500 ms. */
  initialDelayMs?: number
  /** The longest wait, backoff or Retry-After: an answer asking for more is not retried. Default 30 s. */
  maxDelayMs?: number
}

export interface RequestOptions {
  headers?: Record<string, string>
  signal?: AbortSignal
  /** This call's time limit per try, over the client's; 0: none. */
  timeoutMs?: number
  /** This call's retries, over the client's; false: none. */
  retry?: RetryOptions | false
}

/** An operation that takes an Idempotency-Key also takes your own (else one is made per call). */
export type CallOptions<K extends OperationId> = Table[K] extends { idempotencyKey: string }
  ? RequestOptions & { idempotencyKey?: string }
  : RequestOptions

type Slot<Presence, T> = [Presence] extends [never] ? [] : [Presence] extends ['required'] ? [T] : [T?]
type Strings<Names extends readonly string[]> = { -readonly [I in keyof Names]: string }

/** A method's arguments: the path parameters in path order, the body, the query, the options. */
export type OperationArgs<K extends OperationId> = [
  ...Strings<Table[K]['pathParams']>,
  ...Slot<Table[K] extends { body: infer P } ? P : never, RequestBody<K>>,
  ...Slot<Table[K] extends { query: infer P } ? P : never, QueryParams<K>>,
  options?: CallOptions<K>,
]

/** One method per HTTP operation, named by its operationId. */
export type OperationMethods = { [K in HttpOperationId]: (...args: OperationArgs<K>) => Promise<OperationResult<K>> }

/** An item of a list operation's page. */
export type ListItem<K extends ListOperationId> = OperationResult<K>[Table[K]['list']['items'] & keyof OperationResult<K>] extends
  | readonly (infer Item)[]
  | undefined
  ? Item
  : never

export type Schemas = components['schemas']
/** The error codes the document lists (`Error.error.code`). */
export type ErrorCode = Schemas['Error']['error']['code']
/** The OAuth token endpoint's RFC 6749 codes (`OAuthError.error`). */
export type OAuthErrorCode = Schemas['OAuthError']['error']
/** An event as webhooks and the stream carry it, narrowed by `event`. */
export type WebhookEvent = Schemas['WebhookEvent']
export type EventKind = WebhookEvent['event']
/** What a subscription names: a kind, a family (`order.*`) or `*`. */
export type EventPattern = EventKind | `${EventKind extends `${infer Family}.${string}` ? Family : never}.*` | '*'
