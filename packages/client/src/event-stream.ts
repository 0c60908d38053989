/**
 * The live events of GET /api/v1/ws (docs/realtime.md) as an async iterable: authenticates with
 * the subprotocol pair (the one way a browser can), narrows to the patterns asked for, and after a
 * drop reconnects with backoff and resumes after the largest event id received, so no event is
 * lost or handed on twice across connections.
 */
import { CommerceError } from './errors.js'
import type { EventPattern, WebhookEvent } from './operations.js'

/** An event as the stream sends it: the webhook body's envelope, with `type: 'event'`. */
export type StreamedEvent = WebhookEvent & { type: 'event' }

/** An event handler property, declared through a method so that the DOM's and `ws`'s own event types both fit. */
type Handler<Event> = { handle(event: Event): void }['handle']

/** What the standard WebSocket and the `ws` package both have, and all the stream uses. */
export interface WebSocketLike {
  send(data: string): void
  close(code?: number, reason?: string): void
  onopen: Handler<unknown> | null
  onmessage: Handler<{ data: unknown }> | null
  onclose: Handler<{ code: number; reason: string }> | null
  onerror: Handler<unknown> | null
}
export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocketLike

/** What happens to the connection, for logs and for catching up on what a replay could not send. */
export type StreamStatus =
  | { type: 'open'; resumedAfter: string | undefined }
  | { type: 'dropped'; reason: string; retryInMs: number }
  | { type: 'resumed'; after: string; count: number }
  /** More events were missed than the server replays: fetch them with listEvents, then go on. */
  | { type: 'replay_limit_exceeded'; after: string; message: string }
  /** Events after `after` are past the event log's retention and some were deleted: read the resources' state again, then go on. */
  | { type: 'replay_expired'; after: string; message: string }

export interface EventStreamOptions {
  /** Kinds, families (`order.*`) or `*`; default every event the credential may see. */
  events?: readonly EventPattern[]
  /** Start with the events after this event id (a UUIDv7), as a reconnection does. */
  since?: string
  /** Reconnect after a drop (default) with backoff from `initialDelayMs` (1 s) doubling to `maxDelayMs` (30 s); false: end instead. */
  reconnect?: { initialDelayMs?: number; maxDelayMs?: number } | false
  /** How often to ping, and so how soon a dead connection is noticed (twice this without a message). Default 30 s. */
  heartbeatMs?: number
  /** Default globalThis.WebSocket (browsers, Node 22+); on Node 20 pass `WebSocket` of the `ws` package. */
  WebSocket?: WebSocketConstructor
  onStatus?(status: StreamStatus): void
}

interface Connection {
  url: string
  bearer(): string | undefined
  /** Why the handshake was refused, asked over HTTP: a CommerceError, or undefined/another error when nothing says it is final. */
  whyRefused(): Promise<unknown>
}

type ServerMessage =
  | StreamedEvent
  | { type: 'ready' | 'pong' }
  | { type: 'subscribed'; events: string[] }
  | { type: 'resumed'; after: string; count: number }
  | { type: 'error'; code?: string; message: string }

/** Close codes the server uses for a credential no reconnection can fix (docs/realtime.md, Closing). */
const CREDENTIAL_CLOSES: Record<number, [status: number, message: string]> = {
  4001: [401, 'The token expired: sign in again'],
  4003: [403, 'The credential was revoked, or its account deleted, disabled or given another role'],
}

/** The smallest UUIDv7 of this moment: where to resume when the first connection dropped before any event. */
function idOfNow(): string {
  const hex = Date.now().toString(16).padStart(12, '0')
  return `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-000000000000`
}

const matches = (patterns: readonly string[], kind: string) =>
  patterns.some((pattern) => pattern === '*' || pattern === kind || (pattern.endsWith('.*') && kind.startsWith(pattern.slice(0, -1))))

export class EventStream implements AsyncIterable<StreamedEvent> {
  /** The largest event id received (or `since`): where a reconnection resumes. */
  lastEventId: string | undefined
  /** Where to resume when no event has come yet: when the first connection was ready. */
  private listeningSince: string | undefined
  private readonly options: EventStreamOptions & Connection
  private readonly WebSocket: WebSocketConstructor
  private socket: WebSocketLike | undefined
  private readonly queue: StreamedEvent[] = []
  private waiting: { resolve(result: IteratorResult<StreamedEvent>): void; reject(error: unknown): void } | undefined
  private ended: { error?: unknown } | undefined
  private failures = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private heartbeat: ReturnType<typeof setInterval> | undefined

  constructor(options: EventStreamOptions & Connection) {
    this.options = options
    this.lastEventId = options.since?.toLowerCase()
    const WebSocket = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket
    if (!WebSocket) throw new TypeError('No WebSocket here (Node 20): pass the `ws` package, streamEvents({ WebSocket })')
    this.WebSocket = WebSocket
    this.open()
  }

  /** Ends the stream: the iteration finishes after the events already received. */
  close(): void {
    this.end({})
  }

  [Symbol.asyncIterator](): AsyncIterator<StreamedEvent> {
    return {
      next: () => {
        const event = this.queue.shift()
        if (event) return Promise.resolve({ done: false, value: event })
        if (this.ended) return this.ended.error ? Promise.reject(this.ended.error) : Promise.resolve({ done: true, value: undefined })
        return new Promise((resolve, reject) => (this.waiting = { resolve, reject }))
      },
      return: () => {
        this.close()
        return Promise.resolve({ done: true, value: undefined })
      },
    }
  }

  private open(): void {
    const resumeAfter = this.lastEventId ?? this.listeningSince
    const bearer = this.options.bearer()
    const socket = new this.WebSocket(this.options.url.replace(/^http/, 'ws'), bearer ? ['access_token', bearer] : undefined)
    this.socket = socket
    let opened = false
    let lastMessageAt = Date.now()
    // Messages of a socket given up on are ignored: a reconnection has taken over from its last id.
    const current = () => this.socket === socket && !this.ended
    socket.onopen = () => {
      opened = true
      const every = this.options.heartbeatMs ?? 30_000
      clearInterval(this.heartbeat)
      this.heartbeat = setInterval(() => {
        if (Date.now() - lastMessageAt > 2 * every) return this.dropped(socket, 'no answer to pings')
        socket.send(JSON.stringify({ type: 'ping' }))
      }, every)
    }
    socket.onmessage = (message) => {
      if (!current()) return
      lastMessageAt = Date.now()
      this.receive(JSON.parse(String(message.data)) as ServerMessage, socket, resumeAfter)
    }
    socket.onerror = () => {}
    socket.onclose = (event) => {
      if (!current()) return
      const credential = CREDENTIAL_CLOSES[event.code]
      if (credential) {
        return this.end({ error: new CommerceError({ status: credential[0], code: credential[0] === 401 ? 'unauthorized' : 'forbidden', message: credential[1] }) })
      }
      if (opened) return this.dropped(socket, `closed (${event.code}${event.reason ? `: ${event.reason}` : ''})`)
      void this.options.whyRefused().then((refusal) => {
        if (!current()) return
        // A credential or a `since` the API refuses stays refused; 426 (the credential is good), 429 or an outage may pass.
        if (refusal instanceof CommerceError && [400, 401, 403].includes(refusal.status)) return this.end({ error: refusal })
        this.dropped(socket, refusal instanceof Error ? refusal.message : 'the handshake was refused')
      })
    }
  }

  private receive(message: ServerMessage, socket: WebSocketLike, resumeAfter: string | undefined): void {
    const { events } = this.options
    switch (message.type) {
      case 'ready':
        this.failures = 0
        this.options.onStatus?.({ type: 'open', resumedAfter: resumeAfter })
        this.listeningSince ??= idOfNow()
        // The resume follows the subscription, so that the replay holds only the kinds asked for
        // (the server skips in it the events it already sent live on this connection).
        if (events) socket.send(JSON.stringify({ type: 'subscribe', events }))
        else if (resumeAfter) socket.send(JSON.stringify({ type: 'resume', after: resumeAfter }))
        return
      case 'subscribed':
        if (resumeAfter) socket.send(JSON.stringify({ type: 'resume', after: resumeAfter }))
        return
      case 'event':
        if (this.lastEventId === undefined || message.id > this.lastEventId) this.lastEventId = message.id
        // Until the server confirms the subscription it sends every kind.
        if (!events || matches(events, message.event)) this.push(message)
        return
      case 'resumed':
        return this.options.onStatus?.({ type: 'resumed', after: message.after, count: message.count })
      case 'error':
        if (message.code === 'replay_limit_exceeded' || message.code === 'replay_expired') {
          return this.options.onStatus?.({ type: message.code, after: resumeAfter!, message: message.message })
        }
        // replay_failed comes with a close (1011): the reconnection resumes.
        if (message.code === 'replay_failed') return
        return this.end({ error: new Error(`The event stream refused a message: ${message.message}`) })
    }
  }

  private push(event: StreamedEvent): void {
    if (this.waiting) {
      this.waiting.resolve({ done: false, value: event })
      this.waiting = undefined
    } else {
      this.queue.push(event)
    }
  }

  private dropped(socket: WebSocketLike, reason: string): void {
    if (this.socket !== socket || this.ended) return
    this.socket = undefined
    clearInterval(this.heartbeat)
    socket.close()
    const { reconnect } = this.options
    if (reconnect === false) return this.end({ error: new Error(`The event stream ${reason}`) })
    const retryInMs = Math.min(reconnect?.maxDelayMs ?? 30_000, (reconnect?.initialDelayMs ?? 1_000) * 2 ** this.failures++)
    this.options.onStatus?.({ type: 'dropped', reason, retryInMs })
    this.timer = setTimeout(() => this.open(), retryInMs)
  }

  private end(how: { error?: unknown }): void {
    if (this.ended) return
    this.ended = how
    clearTimeout(this.timer)
    clearInterval(this.heartbeat)
    this.socket?.close(1000)
    this.socket = undefined
    if (this.waiting && this.queue.length === 0) {
      if (how.error) this.waiting.reject(how.error)
      else this.waiting.resolve({ done: true, value: undefined })
      this.waiting = undefined
    }
  }
}
