/** The WebSocket channel's protocol: which events a connection may see, its filter, its messages. */
import { EVENT_KINDS, eventKindsOf, type EventKind } from '@commerce/domain'

/** Who is connected: one who sees every event, or a caller who sees product events and its own. */
export interface Viewer {
  seesAll: boolean
  customerId: string | null
}

export function mayView(viewer: Viewer, event: { kind: string; customerId: string | null }): boolean {
  return (
    viewer.seesAll ||
    event.kind.startsWith('product.') ||
    (viewer.customerId !== null && event.customerId === viewer.customerId)
  )
}

/**
 * An event id as `?since=` and the resume message take it: a UUIDv7, whose first 48 bits are the
 * time it was made, so any such id is a position in the event log, found or not.
 */
export const EVENT_ID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-7[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$'
const eventIdPattern = new RegExp(EVENT_ID_PATTERN)

export type ServerMessage =
  | { type: 'ready' }
  | { type: 'pong' }
  | { type: 'subscribed'; events: EventKind[] }
  /** The replay after `after` is over: `count` events came from it, what follows is live. */
  | { type: 'resumed'; after: string; count: number }
  | { type: 'error'; message: string; code?: 'replay_limit_exceeded' | 'replay_expired' | 'replay_failed' }

export type ClientMessage =
  | { type: 'ping' }
  | { type: 'subscribe' | 'unsubscribe'; kinds: EventKind[] }
  /** `after` lowercased, as PostgreSQL writes ids, so that ids compare as strings. */
  | { type: 'resume'; after: string }

const PATTERN_HELP = "an event kind such as 'order.paid', a group such as 'order.*', or '*'"
const MESSAGE_TYPES = 'subscribe, unsubscribe, resume or ping'

/** The kinds a subscribe or unsubscribe message names, or why it names none. */
function kindsOfList(events: unknown): EventKind[] | string {
  if (!Array.isArray(events) || events.length === 0) return `Field 'events' must be a non-empty array of ${PATTERN_HELP}`
  const kinds: EventKind[] = []
  for (const pattern of events) {
    const named = typeof pattern === 'string' ? eventKindsOf(pattern) : []
    if (named.length === 0) return `Unknown event ${JSON.stringify(pattern)} in 'events'; expected ${PATTERN_HELP}`
    kinds.push(...named)
  }
  return kinds
}

/** A client's text message, or the error that answers it. */
export function readClientMessage(text: string): ClientMessage | { type: 'error'; message: string } {
  let message: unknown
  try {
    message = JSON.parse(text)
  } catch {
    return { type: 'error', message: 'Messages must be JSON objects' }
  }
  const { type, events, after } = (typeof message === 'object' && message !== null ? message : {}) as Record<string, unknown>
  if (type === 'ping') return { type: 'ping' }
  if (type === 'resume') {
    if (after === undefined) return { type: 'error', message: "Field 'after' is required: the id of the last event received" }
    if (typeof after !== 'string' || !eventIdPattern.test(after)) {
      return { type: 'error', message: `Field 'after' must be an event id (a UUIDv7), not ${JSON.stringify(after)}` }
    }
    return { type: 'resume', after: after.toLowerCase() }
  }
  if (type !== 'subscribe' && type !== 'unsubscribe') {
    const problem = type === undefined ? "Field 'type' is required" : `Unknown message type ${JSON.stringify(type)}`
    return { type: 'error', message: `${problem}; expected ${MESSAGE_TYPES}` }
  }
  const kinds = kindsOfList(events)
  return typeof kinds === 'string' ? { type: 'error', message: kinds } : { type, kinds }
}

/**
 * The kinds one connection asked for. Until its first subscribe it gets every kind; the first
 * subscribe narrows that to the kinds named and later ones add to them; unsubscribe removes.
 */
export class Subscription {
  private readonly kinds = new Set<string>(EVENT_KINDS)
  private narrowed = false

  wants(kind: string): boolean {
    return this.kinds.has(kind)
  }

  /** Applies a subscribe or unsubscribe and answers with the kinds now sent. */
  change(type: 'subscribe' | 'unsubscribe', kinds: readonly EventKind[]): ServerMessage {
    if (type === 'subscribe' && !this.narrowed) this.kinds.clear()
    this.narrowed = true
    for (const kind of kinds) {
      if (type === 'subscribe') this.kinds.add(kind)
      else this.kinds.delete(kind)
    }
    return { type: 'subscribed', events: EVENT_KINDS.filter((kind) => this.kinds.has(kind)) }
  }
}
