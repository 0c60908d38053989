/** The WebSocket channel's protocol: which events a connection may see, its filter, its messages. */
import { EVENT_KINDS, type EventKind } from '@commerce/domain'

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

export type ServerMessage =
  | { type: 'ready' }
  | { type: 'pong' }
  | { type: 'subscribed'; events: EventKind[] }
  | { type: 'error'; message: string }

const PATTERN_HELP = "an event kind such as 'order.paid', a group such as 'order.*', or '*'"

/** The kinds a pattern names (a kind, `<group>.*` or `*`); none when it names nothing known. */
function kindsOf(pattern: string): readonly EventKind[] {
  if (pattern === '*') return EVENT_KINDS
  if (pattern.endsWith('.*')) return EVENT_KINDS.filter((kind) => kind.startsWith(pattern.slice(0, -1)))
  return EVENT_KINDS.filter((kind) => kind === pattern)
}

/** The kinds a subscribe or unsubscribe message names, or why it names none. */
function kindsOfList(events: unknown): EventKind[] | string {
  if (!Array.isArray(events) || events.length === 0) return `Field 'events' must be a non-empty array of ${PATTERN_HELP}`
  const kinds: EventKind[] = []
  for (const pattern of events) {
    const named = typeof pattern === 'string' ? kindsOf(pattern) : []
    if (named.length === 0) return `Unknown event ${JSON.stringify(pattern)} in 'events'; expected ${PATTERN_HELP}`
    kinds.push(...named)
  }
  return kinds
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

  /** The answer to one client message; a bad message changes nothing. */
  answer(text: string): ServerMessage {
    let message: unknown
    try {
      message = JSON.parse(text)
    } catch {
      return { type: 'error', message: 'Messages must be JSON objects' }
    }
    const { type, events } = (typeof message === 'object' && message !== null ? message : {}) as Record<string, unknown>
    if (type === 'ping') return { type: 'pong' }
    if (type !== 'subscribe' && type !== 'unsubscribe') {
      const problem = type === undefined ? "Field 'type' is required" : `Unknown message type ${JSON.stringify(type)}`
      return { type: 'error', message: `${problem}; expected subscribe, unsubscribe or ping` }
    }
    const kinds = kindsOfList(events)
    if (typeof kinds === 'string') return { type: 'error', message: kinds }
    if (type === 'subscribe' && !this.narrowed) this.kinds.clear()
    this.narrowed = true
    for (const kind of kinds) {
      if (type === 'subscribe') this.kinds.add(kind)
      else this.kinds.delete(kind)
    }
    return { type: 'subscribed', events: EVENT_KINDS.filter((kind) => this.kinds.has(kind)) }
  }
}
