/**
 * GET /api/v1/ws: committed events, live, over a WebSocket (the protocol: docs/realtime.md). The
 * credential is checked before the upgrade, so a bad one is an HTTP 401.
 */
import type { FastifyPluginAsync, FastifyRequest, onRequestAsyncHookHandler } from 'fastify'
import { Type } from 'typebox'
import { Counter, Gauge } from 'prom-client'
import type { WebSocket } from 'ws'
import { hasScope, type Role } from '@commerce/domain'
import { enabledUsers, revokedApiKeys, type FeedEvent } from '@commerce/db'
import type { Config } from '../../config.js'
import { ApiError, errorResponses, forbidden } from '../../errors.js'
import { isOriginAllowed } from '../../plugins/cors.js'
import type { Principal } from '../../plugins/auth.js'
import { sendError } from '../../plugins/errors.js'
import { METRIC_PREFIX } from '../../plugins/metrics.js'
import { ACCESS_TOKEN_PROTOCOL, MAX_MESSAGE_BYTES } from '../../plugins/websocket.js'
import { createEventFeed } from './feed.js'
import { EVENT_ID_PATTERN, readClientMessage, type ServerMessage, type Viewer } from './protocol.js'
import { createEventLog } from './replay.js'
import { ClientStream, eventMessage } from './stream.js'
import { logWebSocketClosed } from '../../request-log.js'

/** One key per caller: a user, an API key or an OAuth client. */
function callerOf(principal: Principal): string {
  if (principal.kind === 'user') return `user:${principal.userId}`
  return principal.kind === 'api_key' ? `api_key:${principal.keyId}` : `oauth_client:${principal.clientId}`
}

interface Client {
  socket: WebSocket
  /** What the connection is sent: its filter, the live events, a resume's replay. */
  stream: ClientStream
  /** Answered the last heartbeat ping. */
  alive: boolean
  /**
   * The API key or user account the client connected with, checked at each heartbeat: a revoked
   * key, or an account deleted, disabled or given another role since, ends the connection.
   */
  checked: { kind: 'api_key'; id: string } | { kind: 'user'; id: string; role: Role; credentialVersion: number } | undefined
  /** Who holds the connection, for the per-caller limit. */
  caller: string
  expiry: NodeJS.Timeout | undefined
}

const TOKEN_EXPIRED = 4001
const CREDENTIAL_REVOKED = 4003
/** setTimeout's longest delay (about 24.8 days); later expiries wait in several steps. */
const MAX_TIMER_MS = 2 ** 31 - 1

/** The handshake's token when there is no Authorization header: `?access_token=`, else the subprotocol pair. */
function handshakeToken(request: FastifyRequest): string | undefined {
  const fromQuery = (request.query as { access_token?: unknown }).access_token
  if (typeof fromQuery === 'string') return fromQuery
  const protocols = request.headers['sec-websocket-protocol']?.split(',').map((protocol) => protocol.trim()) ?? []
  const at = protocols.indexOf(ACCESS_TOKEN_PROTOCOL)
  return at === -1 ? undefined : protocols[at + 1]
}

const send = (socket: WebSocket, message: ServerMessage) => socket.send(JSON.stringify(message))

export const wsRoutes: FastifyPluginAsync<{ config: Config }> = async (app, { config }) => {
  const clients = new Set<Client>()
  const viewers = new WeakMap<FastifyRequest, Viewer>()

  const feed = createEventFeed(app.sql, app.listenSql, app.log, broadcast)
  const eventLog = createEventLog(app.sql)

  new Gauge({
    name: `${METRIC_PREFIX}websocket_connections`,
    help: 'Open WebSocket connections to this instance',
    registers: [app.metrics],
    collect() {
      this.set(clients.size)
    },
  })
  const eventsSent = new Counter({
    name: `${METRIC_PREFIX}websocket_events_sent_total`,
    help: 'Event messages sent to WebSocket clients of this instance (one per event and client)',
    registers: [app.metrics],
  })

  function broadcast(events: FeedEvent[]) {
    // Each serialized once, for every client that gets it.
    const messages = events.map((event) => {
      let message: string | undefined
      return () => (message ??= eventMessage(event))
    })
    for (const { stream } of clients) stream.offer(events, messages)
  }

  // An API key has no expiry, and a user token outlives a change of its account: a connection whose
  // credential no longer holds ends at the next heartbeat (new handshakes are refused at once).
  async function closeRevokedCredentials() {
    const idsOf = (kind: 'api_key' | 'user') => [...new Set([...clients].flatMap(({ checked }) => (checked?.kind === kind ? [checked.id] : [])))]
    const keyIds = idsOf('api_key')
    const userIds = idsOf('user')
    const [revokedKeys, users] = await Promise.all([
      keyIds.length === 0 ? [] : revokedApiKeys(app.sql, keyIds),
      userIds.length === 0 ? new Map() : enabledUsers(app.sql, userIds),
    ])
    const revoked = new Set(revokedKeys)
    for (const { checked, socket } of clients) {
      if (!checked) continue
      const user = checked.kind === 'user' ? users.get(checked.id) : undefined
      const gone = checked.kind === 'api_key' ? revoked.has(checked.id) : user?.role !== checked.role || user.credentialVersion !== checked.credentialVersion
      if (gone) socket.close(CREDENTIAL_REVOKED, 'Credential revoked')
    }
  }

  const openByCaller = new Map<string, number>()
  const heartbeat = setInterval(() => {
    for (const client of clients) {
      if (!client.alive) {
        client.socket.terminate()
        continue
      }
      client.alive = false
      client.socket.ping()
      client.stream.forgetReplayed()
    }
    closeRevokedCredentials().catch((error: unknown) => app.log.warn({ err: error }, 'could not check the credentials of WebSocket clients'))
  }, config.wsHeartbeatIntervalMs).unref()

  app.addHook('onClose', async () => {
    clearInterval(heartbeat)
    feed.stop()
  })

  // Browsers send Origin on every WebSocket handshake and CORS does not apply to WebSockets, so a
  // page on any site could open one: with CORS_ORIGINS set, a handshake from an origin outside it
  // is refused. Non-browser clients send no Origin. A hook of this plugin, so it runs before the
  // route's access guard: the origin is refused whatever the credential.
  const corsOrigins = config.corsOrigins
  if (corsOrigins !== undefined) {
    app.addHook('onRequest', (request, _reply, done) => {
      const origin = request.headers.origin
      const allowed = origin === undefined || isOriginAllowed(corsOrigins, origin, request.headers.host)
      done(allowed ? undefined : forbidden('This origin may not open the WebSocket (CORS_ORIGINS)'))
    })
  }

  // Runs before the upgrade, after the access guard (src/access.ts: signed in) refused anyone else
  // with an HTTP response the client can read.
  const prepareViewer: onRequestAsyncHookHandler = async (request) => {
    if (!request.ws) return
    const principal = request.principal!
    // OWASP API4: one caller cannot hold an instance's sockets (and its fan-out) hostage.
    if ((openByCaller.get(callerOf(principal)) ?? 0) >= config.wsMaxConnectionsPerCaller) {
      throw new ApiError('rate_limited', `At most ${config.wsMaxConnectionsPerCaller} open WebSocket connections per caller; close one first`)
    }
    viewers.set(request, { seesAll: hasScope(principal.scopes, 'events:read'), customerId: app.customerIdOf(request) })
    // Listening before the socket opens: a client gets every event committed after `ready`.
    await feed.start()
  }

  app.route({
    method: 'GET',
    url: '/',
    schema: {
      operationId: 'streamEvents',
      tags: ['events'],
      summary: 'Live events over a WebSocket',
      description:
        'Upgrade with a JWT or an API key in `Authorization: Bearer`, in `?access_token=`, or as the subprotocol pair ' +
        '`access_token, <token>` (the server answers with the subprotocol `access_token`). A missing, bad or ' +
        'expired token is refused with 401 before the upgrade. The server sends `{"type":"ready"}`, then ' +
        '`{"type":"event","id","event","timestamp","data"}` for each committed event the caller may see (admins and ' +
        'keys with events:read: all; customers: product events and their own orders, payments and account; other ' +
        'keys: product events). Client messages: ' +
        '`{"type":"subscribe"|"unsubscribe","events":["order.paid","order.*","*"]}` (answered with ' +
        '`{"type":"subscribed","events":[...]}`), `{"type":"ping"}` (answered `{"type":"pong"}`) and ' +
        '`{"type":"resume","after":"<event id>"}` (as `?since=`; once per connection); a bad message is answered ' +
        '`{"type":"error","message"}`. Resuming with `?since=` (the largest event id received; a malformed one is a 400) ' +
        'or the resume message sends the events with a larger id that the caller may see and its filter wants, in id ' +
        'order, then `{"type":"resumed","after","count"}`, then live events with a larger id, each event once. When more ' +
        'than WS_REPLAY_MAX_EVENTS (10000) events follow it, nothing is replayed: ' +
        '`{"type":"error","code":"replay_limit_exceeded"}`, and live events go on; the same with `"code":"replay_expired"` ' +
        'when the resume point is older than the event retention (EVENT_RETENTION, 90 days) and events after it were deleted. ' +
        `Messages up to ${MAX_MESSAGE_BYTES / 1024} KiB (else close 1009); ` +
        'ping frames every 30 s (WS_HEARTBEAT_INTERVAL); close 4001 when the token expires, 4003 at the heartbeat after ' +
        'the API key it connected with is revoked, or its user account is deleted, disabled or given another role. A plain GET answers 426. One caller may hold WS_MAX_CONNECTIONS_PER_CALLER (20) ' +
        'connections per instance; the next handshake is refused with 429. When the server has an origin allowlist ' +
        '(CORS_ORIGINS), a browser handshake from another origin is refused with 403.',
      querystring: Type.Object({
        access_token: Type.Optional(Type.String({ maxLength: 4096, description: 'A JWT, for clients that cannot set headers' })),
        since: Type.Optional(
          Type.String({
            pattern: EVENT_ID_PATTERN,
            maxLength: 36,
            description:
              'Resume: the largest event id received (a UUIDv7; one not found counts as a position). The events after it ' +
              'come first, then `{"type":"resumed","after","count"}`, then live events.',
          }),
        ),
      }),
      response: {
        101: { description: 'Switching Protocols: the WebSocket is open', type: 'null' },
        ...errorResponses(400, 401, 403, 426, 429, 503),
      },
    },
    // The auth plugin identifies the caller by this token when there is no Authorization header.
    config: { tokenWithoutHeader: handshakeToken },
    onRequest: prepareViewer,
    handler: (request, reply) => {
      reply.header('upgrade', 'websocket')
      return sendError(reply, request, new ApiError('upgrade_required', 'This endpoint speaks WebSocket only; connect with a WebSocket client'))
    },
    wsHandler: (socket, request) => {
      const principal = request.principal!
      const client: Client = {
        socket,
        stream: new ClientStream({
          socket,
          viewer: viewers.get(request)!,
          feed,
          log: eventLog,
          logger: request.log,
          replayLimit: config.wsReplayMaxEvents,
          onSent: () => eventsSent.inc(),
        }),
        alive: true,
        checked:
          principal.kind === 'api_key'
            ? { kind: 'api_key', id: principal.keyId }
            : principal.kind === 'user'
              ? { kind: 'user', id: principal.userId, role: principal.role, credentialVersion: principal.credentialVersion }
              : undefined,
        caller: callerOf(principal),
        expiry: undefined,
      }
      openByCaller.set(client.caller, (openByCaller.get(client.caller) ?? 0) + 1)
      const expiresAt = principal.expiresAt
      const closeAtExpiry = () => {
        const left = expiresAt - Date.now()
        if (left > 0) client.expiry = setTimeout(closeAtExpiry, Math.min(left, MAX_TIMER_MS))
        else socket.close(TOKEN_EXPIRED, 'Token expired')
      }
      closeAtExpiry()
      socket.on('pong', () => {
        client.alive = true
      })
      socket.on('message', (data) => {
        const message = readClientMessage(data.toString())
        if (message.type === 'ping') send(socket, { type: 'pong' })
        else if (message.type === 'resume') void client.stream.resume(message.after)
        else if (message.type === 'error') send(socket, message)
        else send(socket, client.stream.subscription.change(message.type, message.kinds))
      })
      const openedAt = performance.now()
      socket.on('close', (code) => {
        logWebSocketClosed(request, openedAt, code)
        clients.delete(client)
        clearTimeout(client.expiry)
        const left = openByCaller.get(client.caller)! - 1
        if (left > 0) openByCaller.set(client.caller, left)
        else openByCaller.delete(client.caller)
      })
      // In the same turn as the stream read the feed's newest id (what a resume replays up to).
      clients.add(client)
      send(socket, { type: 'ready' })
      const since = (request.query as { since?: string }).since
      // Lowercased as PostgreSQL writes ids, so that they compare as strings.
      if (since !== undefined) void client.stream.resume(since.toLowerCase())
    },
  })
}
