/**
 * WebSocket support (@fastify/websocket on `ws`), registered at the root so that an upgrade
 * request to any route goes through the same hooks as HTTP. The channel itself: routes/ws.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import websocket from '@fastify/websocket'

/** `ws` accepts 100 MiB messages unless told; clients only send small control messages. */
export const MAX_MESSAGE_BYTES = 64 * 1024

/**
 * Browsers cannot set headers on a WebSocket, so a token may come as the subprotocol pair
 * `access_token, <token>`; the handshake answers with `access_token`, which browsers require
 * to be one of the protocols they offered.
 */
export const ACCESS_TOKEN_PROTOCOL = 'access_token'

/** How long clients have to answer the close handshake at shutdown before they are cut off. */
const CLOSE_GRACE_MS = 2000

export default fp(
  async function websocketPlugin(app: FastifyInstance) {
    await app.register(websocket, {
      options: {
        maxPayload: MAX_MESSAGE_BYTES,
        handleProtocols: (protocols) => (protocols.has(ACCESS_TOKEN_PROTOCOL) ? ACCESS_TOKEN_PROTOCOL : false),
      },
      errorHandler: (error, socket, request) => {
        // `ws` closes the socket itself (1009 for an oversized message) before it reports a
        // protocol or network error; terminating here would drop that close frame.
        if (socket.readyState !== socket.OPEN) return request.log.info({ err: error }, 'WebSocket closed on an error')
        request.log.error({ err: error }, 'WebSocket handler failed')
        socket.close(1011, 'Internal error')
      },
      // The HTTP server's close waits for every socket, and `ws` waits 30 s for a close frame to
      // be answered: a silent client would hold the shutdown that long.
      preClose: async function closeClients(this: FastifyInstance) {
        const sockets = [...this.websocketServer.clients]
        const closed = Promise.all(sockets.map((socket) => new Promise((resolve) => socket.once('close', resolve))))
        for (const socket of sockets) socket.close(1001, 'Server shutting down')
        const cutOff = setTimeout(() => sockets.forEach((socket) => socket.terminate()), CLOSE_GRACE_MS)
        await closed
        clearTimeout(cutOff)
      },
    })
  },
  { name: 'websocket' },
)
