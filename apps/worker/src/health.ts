/**
 * The worker's HTTP port (WORKER_HEALTH_PORT): GET /health for orchestrators (liveness and
 * readiness probes) — 200 while the runner takes jobs, 503 once it is stopping — and
 * GET /metrics, the Prometheus text of the given registry (metrics.ts). It listens on `host`
 * (WORKER_HEALTH_HOST or HOST), as the API does: 127.0.0.1 keeps it off the network.
 */
import { createServer, type Server } from 'node:http'
import type { Registry } from 'prom-client'

export async function startHealthServer(port: number, host: string, isHealthy: () => boolean, metrics: Registry): Promise<Server> {
  const server = createServer((request, response) => {
    const path = request.url?.split('?')[0]
    if (request.method === 'GET' && path === '/health') {
      const healthy = isHealthy()
      response.writeHead(healthy ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ status: healthy ? 'ok' : 'stopping' }))
      return
    }
    if (request.method === 'GET' && path === '/metrics') {
      metrics.metrics().then(
        (text) => response.writeHead(200, { 'content-type': metrics.contentType }).end(text),
        () => response.writeHead(500, { 'content-type': 'application/json' }).end('{"status":"error"}'),
      )
      return
    }
    response.writeHead(404, { 'content-type': 'application/json' }).end('{"status":"not_found"}')
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, resolve)
  })
  return server
}
