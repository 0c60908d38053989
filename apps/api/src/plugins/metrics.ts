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
    app.addHook('onResponse', async (request, reply) => {
      requestDuration.observe(
        { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: reply.statusCode },
        reply.elapsedTime / 1000,
      )
    })
  },
  { name: 'metrics' },
)
