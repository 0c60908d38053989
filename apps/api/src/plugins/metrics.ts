/** Prometheus metrics: process defaults plus HTTP requests by method, route and status. */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client'

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Registry
  }
}

export default fp(
  async function metricsPlugin(app: FastifyInstance) {
    const registry = new Registry()
    collectDefaultMetrics({ register: registry })
    const requestDuration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request duration by method, route pattern and status code',
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    })
    app.decorate('metrics', registry)
    // One labelled child per method, route and status, kept: observing through it skips the
    // label hashing prom-client would otherwise do on every request.
    const children = new Map<string, ReturnType<typeof requestDuration.labels>>()
    app.addHook('onResponse', (request, reply, done) => {
      const route = request.routeOptions.url ?? 'unmatched'
      const key = `${request.method} ${route} ${reply.statusCode}`
      let child = children.get(key)
      if (!child) {
        child = requestDuration.labels({ method: request.method, route, status_code: reply.statusCode })
        children.set(key, child)
      }
      child.observe(reply.elapsedTime / 1000)
      done()
    })
  },
  { name: 'metrics' },
)
