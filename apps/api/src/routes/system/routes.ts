/** Liveness, readiness and metrics: outside /api/v1, never rate limited. */
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { pingDatabase } from '@commerce/db'
import { ApiError, errorResponses } from '../../errors.js'

const Status = Type.Object({ status: Type.String() }, { title: 'HealthStatus', description: 'The process answers (`ok`), or is ready for traffic (`ready`)' })

/** What the platform calls (probes, the metrics scrape): never rate limited, logged at debug. */
export const SYSTEM_PATHS: ReadonlySet<string> = new Set(['/health', '/ready', '/metrics'])

export const systemRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/health', { schema: { operationId: 'getHealth', tags: ['system'], response: { 200: Status } } }, async () => ({ status: 'ok' }))

  app.get(
    '/ready',
    { schema: { operationId: 'getReadiness', tags: ['system'], response: { 200: Status, ...errorResponses(503) } } },
    async () => {
      try {
        await pingDatabase(app.sql)
      } catch {
        throw new ApiError('service_unavailable', 'The database is not reachable')
      }
      return { status: 'ready' }
    },
  )

  app.get(
    '/metrics',
    {
      schema: {
        operationId: 'getMetrics',
        tags: ['system'],
        produces: ['text/plain'],
        response: { 200: Type.String({ description: 'The metrics, in Prometheus text format' }) },
      },
    },
    async (_request, reply) =>
      reply.type(app.metrics.contentType).send(await app.metrics.metrics()),
  )
}
