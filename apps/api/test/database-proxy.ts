/**
 * A TCP proxy in front of PostgreSQL, for fault tests. It forwards connections; or refuses new
 * ones; or accepts new ones and never answers them (a database host gone silent: dropped
 * packets, a hung server). `cut()` drops the connections it holds, as a server going away does.
 */
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net'

export type DatabaseProxy = Awaited<ReturnType<typeof startDatabaseProxy>>

export async function startDatabaseProxy(target: URL) {
  const upstreams = new Set<Socket>()
  const downstreams = new Set<Socket>()
  let refusing = false
  let silent = false
  const server: Server = createServer((downstream) => {
    if (refusing) return downstream.destroy()
    downstreams.add(downstream)
    downstream.on('close', () => downstreams.delete(downstream))
    if (silent) return void downstream.on('error', () => {})
    const upstream = createConnection(Number(target.port), target.hostname)
    upstreams.add(upstream)
    downstream.pipe(upstream).pipe(downstream)
    const drop = () => {
      upstreams.delete(upstream)
      upstream.destroy()
      downstream.destroy()
    }
    upstream.on('error', drop).on('close', drop)
    downstream.on('error', drop).on('close', drop)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const proxied = new URL(target)
  proxied.port = String((server.address() as AddressInfo).port)
  const cut = () => {
    for (const socket of downstreams) socket.destroy()
  }
  return {
    url: proxied.toString(),
    /** The local ports of the proxy's connections to PostgreSQL (pg_stat_activity.client_port). */
    ports: () => [...upstreams].map((socket) => socket.localPort!),
    refuse(value: boolean) {
      refusing = value
    },
    /** New connections are accepted and never answered (until silence(false)). */
    silence(value: boolean) {
      silent = value
    },
    cut,
    close: () => {
      cut()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
