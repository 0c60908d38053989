/**
 * The WebSocket clients of bench/websocket.js, in their own process (forked, IPC): opens
 * `count` connections, notes when each event reaches each client, and reports on request.
 */
import WebSocket from 'ws'

const now = () => performance.timeOrigin + performance.now()
const arrivals = [] // [event id, time]

process.on('message', async (message) => {
  if (message.type === 'connect') {
    let ready = 0
    await Promise.all(
      Array.from({ length: message.count }, () =>
        new Promise((resolve, reject) => {
          const socket = new WebSocket(message.url, { headers: { authorization: `Bearer ${message.token}` } })
          socket.on('message', (data) => {
            const parsed = JSON.parse(data.toString())
            if (parsed.type === 'ready') {
              ready++
              resolve()
            } else if (parsed.type === 'event') arrivals.push([parsed.id, now()])
          })
          socket.once('error', reject)
        }),
      ),
    )
    process.send({ type: 'connected', ready })
  } else if (message.type === 'report') {
    process.send({ type: 'arrivals', arrivals }, () => process.exit(0))
  }
})
