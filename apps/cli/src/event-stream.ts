/**
 * The live events of GET /api/v1/ws, for `events tail` and `webhooks listen`: opens the WebSocket
 * with the caller's token, narrows it to the kinds asked for, hands on each event, ends on
 * close() or Ctrl-C, and (for listen) opens it again with backoff when it drops.
 */
import { Errors } from '@oclif/core'
import type { WebSocket } from 'undici'
import { ApiRequestError, apiUrl, callApi, type Connection } from './api-client.js'

/** An event as the channel sends it: the webhook body's envelope with `type: "event"`. */
export interface StreamedEvent {
  type: 'event'
  id: string
  event: string
  /** created_at, ISO 8601 UTC with milliseconds. */
  timestamp: string
  resource_id: string
  sequence: number
  data: Record<string, unknown>
}

type ServerMessage =
  | StreamedEvent
  | { type: 'ready' | 'pong' }
  | { type: 'subscribed'; events: string[] }
  | { type: 'resumed'; count: number }
  | { type: 'error'; message?: string; code?: string }

/** The smallest UUIDv7 of this moment: a resume position before any event was received. */
function idOfNow(): string {
  const hex = Date.now().toString(16).padStart(12, '0')
  return `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-000000000000`
}

export interface EventStreamOptions {
  /** Kinds (`order.paid`), families (`order.*`) or `*`; undefined: every kind the caller may see. */
  events?: readonly string[]
  /** Open the stream again when it drops, waiting longer after each failed try. */
  reconnect?: boolean
  /**
   * The stream is in place: after the server's `ready`, or with `events` after it confirmed the
   * filter (`kinds`, the kinds it will send). Again after each reconnection (`reconnected`).
   */
  onListening(state: { kinds: string[] | undefined; reconnected: boolean }): void
  onEvent(event: StreamedEvent): void
  /** With `reconnect`: the stream dropped or could not be opened again (`reason`, a sentence); the next try is in `delayMs`. */
  onDrop?(drop: { reason: string; delayMs: number }): void
  /**
   * After a reconnection the stream resumes after the newest event it had (or the moment it
   * first listened): the server replayed `count` missed events, or (`refused`) would not because
   * too many were missed, or some were past the event log's retention and deleted.
   */
  onResumed?(resume: { after: string; count: number } | { after: string; refused: string }): void
}

/** The waits before reconnecting: 1 s, doubling after each failed try, at most 30 s. */
const FIRST_RETRY_MS = 1_000
const LAST_RETRY_MS = 30_000

/** Close codes the server uses for a credential that no reconnection can fix (docs/realtime.md, Closing). */
const CREDENTIAL_CLOSES: Record<number, string> = {
  4001: 'the token expired: sign in again',
  4003: 'the API key was revoked',
}

/**
 * Why the handshake failed: the WebSocket API shows a refused upgrade only as an error event, so
 * the same URL is asked again over plain HTTP, where the API answers 401/403 with its message
 * (the credential: retrying cannot help), and 426 when the credential is good.
 */
async function handshakeRefusal(connection: Connection): Promise<{ permanent: boolean; reason: string }> {
  try {
    await callApi(connection, { method: 'GET', path: '/api/v1/ws' })
  } catch (error) {
    if (error instanceof ApiRequestError) {
      if (error.status === 426) return { permanent: false, reason: 'the API refused the upgrade (too many connections open with this token?)' }
      return { permanent: error.status === 401 || error.status === 403, reason: `${error.message} (${error.body.error.code}, HTTP ${error.status})` }
    }
    return { permanent: false, reason: (error as Error).message }
  }
  return { permanent: false, reason: 'the API refused the upgrade' }
}

export class EventStream {
  /** The WebSocket's URL (ws: or wss:). */
  readonly url: URL
  private socket: WebSocket | undefined
  private retry: NodeJS.Timeout | undefined
  private stopped = false
  private finish: (() => void) | undefined

  constructor(
    private readonly connection: Connection,
    private readonly options: EventStreamOptions,
  ) {
    this.url = apiUrl(connection.baseUrl, '/api/v1/ws')
    this.url.protocol = this.url.protocol === 'https:' ? 'wss:' : 'ws:'
  }

  /**
   * Streams until close(), SIGINT or SIGTERM, or — without `reconnect` — until the server closes
   * normally. Rejects with a CLIError when the stream cannot be opened (the first time), the
   * server refuses a message, or the credential is refused, expired or revoked.
   */
  async run(): Promise<void> {
    // Loaded here, not at start-up: every other command runs without them.
    // undici is CommonJS: its exports come as the default export, bundled or not.
    const [{ eventKindsOf }, { default: { WebSocket } }] = await Promise.all([import('@commerce/domain'), import('undici')])
    return new Promise<void>((resolve, reject) => {
      const stop = () => this.close()
      process.once('SIGINT', stop)
      process.once('SIGTERM', stop)
      const done = (error?: Error) => {
        process.off('SIGINT', stop)
        process.off('SIGTERM', stop)
        this.finish = undefined
        if (error) reject(error)
        else resolve()
      }
      this.finish = done
      /** Set once the stream was in place: later failures are drops, retried with `reconnect`. */
      let listened = false
      /**
       * Where a reconnection resumes: the largest event id received (events come in commit
       * order, not id order), or the moment the stream first listened.
       */
      let after: string | undefined
      let failures = 0
      // Until the server confirms a subscription the channel sends every kind, and an event sent
      // then is not replayed by a resume: the kinds asked for are handed on from the first message.
      const wanted = this.options.events && new Set<string>(this.options.events.flatMap(eventKindsOf))

      const retryAfter = (reason: string) => {
        const delayMs = Math.min(LAST_RETRY_MS, FIRST_RETRY_MS * 2 ** failures++)
        this.options.onDrop?.({ reason, delayMs })
        this.retry = setTimeout(open, delayMs)
      }

      const open = () => {
        const { token } = this.connection
        const socket = new WebSocket(this.url, { headers: token ? { authorization: `Bearer ${token}` } : {} })
        this.socket = socket
        let opened = false
        let refused: Error | undefined
        const listening = (confirmed: string[] | undefined) => {
          failures = 0
          this.options.onListening({ kinds: confirmed, reconnected: listened })
          // After the filter, so the replay is filtered too (docs/realtime.md, Resuming).
          if (listened && after) socket.send(JSON.stringify({ type: 'resume', after }))
          after ??= idOfNow()
          listened = true
        }

        socket.addEventListener('open', () => {
          opened = true
        })
        socket.addEventListener('message', (message) => {
          if (this.stopped) return
          const parsed = JSON.parse(String(message.data)) as ServerMessage
          if (parsed.type === 'ready') {
            if (this.options.events) socket.send(JSON.stringify({ type: 'subscribe', events: this.options.events }))
            else listening(undefined)
          } else if (parsed.type === 'subscribed') {
            listening(parsed.events)
          } else if (parsed.type === 'resumed') {
            this.options.onResumed?.({ after: after!, count: parsed.count })
          } else if (parsed.type === 'error' && (parsed.code === 'replay_limit_exceeded' || parsed.code === 'replay_expired')) {
            // Live events go on; the missed ones are for the event log (or gone from it).
            this.options.onResumed?.({ after: after!, refused: parsed.message ?? 'too many events were missed' })
          } else if (parsed.type === 'error') {
            refused = new Errors.CLIError(parsed.message ?? 'The channel refused a message', { exit: 1 })
            socket.close(1000)
          } else if (parsed.type === 'event') {
            if (!after || parsed.id > after) after = parsed.id
            if (!wanted || wanted.has(parsed.event)) this.options.onEvent(parsed)
          }
        })
        socket.addEventListener('close', (event) => {
          this.socket = undefined
          if (this.stopped) return done()
          if (refused) return done(refused)
          if (!opened) {
            void handshakeRefusal(this.connection).then(({ permanent, reason }) => {
              if (this.stopped) return done()
              if (permanent || !listened || !this.options.reconnect) {
                return done(new Errors.CLIError(`Could not open the event stream at ${this.url.origin}: ${reason}`, { exit: 1 }))
              }
              retryAfter(`Could not reconnect to ${this.url.origin}: ${reason}`)
            })
            return
          }
          const credential = CREDENTIAL_CLOSES[event.code]
          if (credential) return done(new Errors.CLIError(`The event stream closed (${event.code}): ${credential}`, { exit: 1 }))
          if (this.options.reconnect) return retryAfter(`The event stream closed (${event.reason ? `${event.reason}, ` : ''}code ${event.code})`)
          if (event.code === 1000 || event.code === 1005) return done()
          done(new Errors.CLIError(`The event stream closed: ${event.reason || `code ${event.code}`}`, { exit: 1 }))
        })
      }
      open()
    })
  }

  /** Ends the stream: run() resolves once the socket has closed. Events still arriving are dropped. */
  close(): void {
    if (this.stopped) return
    this.stopped = true
    clearTimeout(this.retry)
    if (this.socket) this.socket.close(1000)
    else this.finish?.()
  }
}
