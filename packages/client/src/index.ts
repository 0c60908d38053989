/** @commerce/client: the public surface (webhook verification is `@commerce/client/webhooks`). */
export { createClient, type Auth, type ClientOptions, type CommerceClient, type Pages } from './client.js'
export { CommerceError, type CommerceErrorCode, type ErrorDetail } from './errors.js'
export {
  EventStream,
  type EventStreamOptions,
  type StreamedEvent,
  type StreamStatus,
  type WebSocketConstructor,
  type WebSocketLike,
} from './event-stream.js'
export type {
  CallOptions,
  ErrorCode,
  EventKind,
  EventPattern,
  HttpOperationId,
  ListItem,
  ListOperationId,
  OAuthErrorCode,
  OperationArgs,
  OperationId,
  OperationResult,
  QueryParams,
  RequestBody,
  RequestOptions,
  RetryOptions,
  Schemas,
  WebhookEvent,
} from './operations.js'
export type { components, operations, webhooks } from './generated/contract.js'
