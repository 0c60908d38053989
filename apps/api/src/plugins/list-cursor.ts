/**
 * `page` and `after` exclusive on every list (../list-cursor.ts), added as each route whose
 * querystring takes both is registered, so that a new list needs nothing more.
 */
import type { FastifyInstance, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { refusePageWithCursor } from '../list-cursor.js'

export default fp(
  async function listCursorPlugin(app: FastifyInstance) {
    app.addHook('onRoute', (route: RouteOptions) => {
      const properties = (route.schema?.querystring as { properties?: Record<string, unknown> } | undefined)?.properties
      if (properties?.page === undefined || properties.after === undefined) return
      route.preValidation = [refusePageWithCursor, ...[route.preValidation ?? []].flat()]
    })
  },
  { name: 'list-cursor' },
)
