/**
 * GET /health for orchestrators (liveness and readiness probes): 200 while the runner takes
 * jobs, 503 once it is stopping.
 */
import { createServer, type Server } from 'node:http'

export async function startHealthServer(port: number, isHealthy: () => boolean): Promise<Server> {
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/health') {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"status":"not_found"}')
      return
    }
    const healthy = isHealthy()
    response.writeHead(healthy ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify({ status: healthy ? 'ok' : 'stopping' }))
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, resolve)
  })
  return server
}
