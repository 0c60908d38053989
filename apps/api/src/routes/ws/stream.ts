/**
 * What one WebSocket connection is sent: the live events its viewer may see and its filter
 * wants, and after a resume first the events it missed; each event at most once (docs/realtime.md,
 * "Resuming").
 *
 * Why a resume has no gap and no duplicate: `replayEnd` is the feed's newest id when the
 * connection joined (feed.ts, newestId), so an event committed before then has an id up to it or
 * comes live, and one committed later comes live. The replay reads (after, replayEnd] from the
 * table after the connection joined, so it sees every event committed before; the live events
 * that arrive meanwhile are held back and sent after it. Both sources can carry the same event
 * (one committed while the replay runs, or announced late): the ids sent live before the resume
 * (`liveBeforeEnd`) are skipped by the replay, and the ids replayed (`replayed`) are skipped when
 * the feed delivers them.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { WebSocket } from 'ws'
import type { FeedEvent } from '@commerce/db'
import { REPLAY_WINDOW_MS, type EventFeed } from './feed.js'
import { Subscription, mayView, type ServerMessage, type Viewer } from './protocol.js'
import type { EventLog } from './replay.js'

/** A client that still has this much unsent when the next events come cannot keep up with the feed and is dropped. */
export const MAX_BUFFERED_BYTES = 4 * 1024 * 1024
/**
 * What a client may have unsent while one batch of events is written to it: a burst up to this
 * size is taken in stride, a larger one drops the client (which resumes with `?since=`, paced), so
 * that a burst never costs the process more than this for each client.
 */
const MAX_BURST_BYTES = 16 * 1024 * 1024
/** A replay, and the live events held back during it, wait for the socket to take each MiB (about: UTF-16 units) before writing more. */
const WRITE_AHEAD = 1024 * 1024

/** An event's message: the webhook body's envelope with `type: 'event'`. */
export const eventMessage = (event: FeedEvent) =>
  JSON.stringify({
    type: 'event',
    id: event.id,
    event: event.kind,
    timestamp: event.timestamp,
    resource_id: event.resourceId,
    sequence: event.sequence,
    data: event.data,
  })

export interface StreamOptions {
  socket: WebSocket
  viewer: Viewer
  feed: EventFeed
  log: EventLog
  logger: FastifyBaseLogger
  /** The most events a resume may have to read (WS_REPLAY_MAX_EVENTS). */
  replayLimit: number
  /** Called for each event message sent. */
  onSent: () => void
}

export class ClientStream {
  readonly subscription = new Subscription()
  /** The feed's newest id when the connection joined: a replay ends there, later ids come live. */
  private readonly replayEnd: string | null
  /** One resume per connection: after it, the ids sent are no longer tracked for another. */
  private resumeState: 'none' | 'running' | 'done' = 'none'
  /** Ids up to replayEnd sent live before a resume, which its replay skips; undefined once a resume began, or when too many to keep. */
  private liveBeforeEnd: Set<string> | undefined = new Set()
  /** Set by a resume: ids up to it are not sent any more, the client has them or chose to skip them. */
  private cursor: string | undefined
  /** The live events held back while a resume runs, sent after the replay. */
  private held: { event: FeedEvent; message: string }[] | undefined
  private heldBytes = 0
  /** Ids the replay sent, skipped when the feed delivers them, kept while it still may (forgetReplayed). */
  private replayed: Set<string> | undefined
  private replayedAt = 0
  private unflushed = 0
  private readonly closed: Promise<void>

  constructor(private readonly options: StreamOptions) {
    // Read when the connection joins the broadcast, in the same turn (routes.ts).
    this.replayEnd = options.feed.newestId()
    this.closed = new Promise((resolve) => options.socket.once('close', () => resolve()))
  }

  send(message: ServerMessage): void {
    this.options.socket.send(JSON.stringify(message))
  }

  /**
   * Live events from the feed, one load of them (written in one turn); `messages[n]` serializes
   * `events[n]` (once for every client that sends it). The client is dropped when what it was sent
   * before is still unsent (MAX_BUFFERED_BYTES): measured here, before the batch is written, since
   * within it a large batch (a replay after the LISTEN connection came back, a transaction of
   * thousands of events) would count against every healthy client at once; within the batch only
   * past MAX_BURST_BYTES.
   */
  offer(events: readonly FeedEvent[], messages: readonly (() => string)[]): void {
    const { socket, viewer } = this.options
    if (this.heldBytes + socket.bufferedAmount > MAX_BUFFERED_BYTES) return socket.terminate()
    for (const [n, event] of events.entries()) {
      if (this.held) {
        if (!this.subscription.wants(event.kind) || !mayView(viewer, event)) continue
        const text = messages[n]!()
        this.held.push({ event, message: text })
        this.heldBytes += text.length
      } else {
        if (!this.wanted(event)) continue
        this.noteLive(event.id)
        this.options.onSent()
        socket.send(messages[n]!())
      }
      if (this.heldBytes + socket.bufferedAmount > MAX_BURST_BYTES) return socket.terminate()
    }
  }

  /** Replays the events after `after` the viewer may see and the filter wants, then `resumed`, then goes on live. */
  async resume(after: string): Promise<void> {
    const { socket, log, viewer, replayLimit } = this.options
    if (this.resumeState !== 'none') {
      return this.send({ type: 'error', message: 'This connection has resumed already: a connection resumes once (?since= counts)' })
    }
    if (!this.liveBeforeEnd) {
      return this.send({ type: 'error', message: 'This connection has sent too many events to resume; reconnect with ?since= the largest event id received' })
    }
    this.resumeState = 'running'
    this.held = []
    const end = this.replayEnd
    const replaying = end !== null && after < end
    try {
      // A replay from a position the event retention swept past would leave out what it deleted.
      if (await log.sweptPast(after)) {
        return await this.refuseResume(
          'replay_expired',
          `Events after ${after} are past the event log's retention (EVENT_RETENTION) and some were deleted: nothing was replayed. ` +
            'This connection goes on with live events; read the current state from the resources instead',
        )
      }
      // The events of every customer count: the limit bounds what the replay reads.
      if (replaying && (await log.countBetween(after, end, replayLimit + 1)) > replayLimit) {
        return await this.refuseResume(
          'replay_limit_exceeded',
          `More than ${replayLimit} events were written after ${after}: too many to replay. This connection goes on ` +
            'with live events; catch up on the others through the REST API (GET /api/v1/events, with events:read), ' +
            'then resume after the newest event read',
        )
      }
      this.cursor = after
      const sentLive = this.liveBeforeEnd
      this.liveBeforeEnd = undefined
      this.replayed = new Set()
      let count = 0
      if (replaying) {
        for await (const page of log.pagesBetween(after, end, viewer)) {
          for (const event of page) {
            if (socket.readyState !== socket.OPEN) return
            if (sentLive.has(event.id) || !this.subscription.wants(event.kind) || !mayView(viewer, event)) continue
            this.replayed.add(event.id)
            count++
            this.options.onSent()
            await this.write(eventMessage(event))
          }
        }
      }
      this.send({ type: 'resumed', after, count })
      this.replayedAt = Date.now()
      await this.release()
      this.resumeState = 'done'
    } catch (error) {
      this.options.logger.error({ err: error }, 'could not replay events to a WebSocket client')
      if (socket.readyState !== socket.OPEN) return
      // Going on live would leave a gap: the client reconnects from what it has.
      this.send({ type: 'error', code: 'replay_failed', message: 'The replay failed; reconnect with ?since= the largest event id received' })
      socket.close(1011, 'Replay failed')
    }
  }

  /** Answers a resume that replays nothing with why, and goes on live; the connection may resume again. */
  private async refuseResume(code: 'replay_limit_exceeded' | 'replay_expired', message: string): Promise<void> {
    this.send({ type: 'error', code, message })
    await this.release()
    this.resumeState = 'none'
  }

  /**
   * Forgets the replayed ids the feed will not deliver any more: those older than its window,
   * once that window has also passed since the replay (an event announced late).
   */
  forgetReplayed(): void {
    if (!this.replayed || this.resumeState !== 'done' || Date.now() - this.replayedAt < REPLAY_WINDOW_MS) return
    for (const id of this.replayed) if (!this.options.feed.remembers(id)) this.replayed.delete(id)
    if (this.replayed.size === 0) this.replayed = undefined
  }

  private wanted(event: FeedEvent): boolean {
    if (this.cursor !== undefined && event.id <= this.cursor) return false
    // The feed delivers an event once: skipped once, its id is not needed any more.
    if (this.replayed?.delete(event.id)) return false
    return this.subscription.wants(event.kind) && mayView(this.options.viewer, event)
  }

  /** Until a resume, keeps the ids sent live that its replay would cover, up to the limit of what a replay reads. */
  private noteLive(id: string): void {
    if (!this.liveBeforeEnd || this.replayEnd === null || id > this.replayEnd) return
    this.liveBeforeEnd.add(id)
    if (this.liveBeforeEnd.size > this.options.replayLimit) this.liveBeforeEnd = undefined
  }

  /** Sends the events held back, paced, then goes live; what arrives meanwhile is held and sent in turn. */
  private async release(): Promise<void> {
    const { socket } = this.options
    while (this.held!.length > 0 && socket.readyState === socket.OPEN) {
      const batch = this.held!
      this.held = []
      this.heldBytes = 0
      for (const { event, message } of batch) {
        if (!this.wanted(event)) continue
        this.noteLive(event.id)
        this.options.onSent()
        await this.write(message)
      }
    }
    this.held = undefined
  }

  /** Sends a message; after each WRITE_AHEAD written, waits until the socket has taken it (backpressure). */
  private async write(message: string): Promise<void> {
    const { socket } = this.options
    this.unflushed += message.length
    if (this.unflushed < WRITE_AHEAD) return socket.send(message)
    this.unflushed = 0
    await Promise.race([new Promise<void>((resolve) => socket.send(message, () => resolve())), this.closed])
  }
}
