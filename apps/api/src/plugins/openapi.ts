/** OpenAPI 3.1 generated from the routes' TypeBox schemas, and the reference page at /docs. */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { ErrorBody } from '@commerce/domain'

export default fp(
  async function openapiPlugin(app: FastifyInstance) {
    app.addSchema({ ...ErrorBody, $id: 'Error' })
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Commerce Service API',
          version: '1.0.0',
          description:
            'Online-store back end. Money is sent and returned as decimal numbers in major units (19.99) and ' +
            'kept exactly as integer minor units. Lists answer { <items>, meta: { page, per_page, total, total_pages } }. ' +
            'Errors answer { error: { code, message, details?, request_id } }.',
        },
        servers: [{ url: '/' }],
        components: {
          securitySchemes: {
            bearerAuth: {
              type: 'http',
              scheme: 'bearer',
              description: 'A JWT from /api/v1/auth/login or /api/v1/oauth/token, or an API key',
            },
            clientBasic: { type: 'http', scheme: 'basic', description: 'An OAuth client: client_id and client_secret' },
          },
        },
      },
      refResolver: {
        buildLocalReference: (json, _baseUri, _fragment, index) => (json.$id as string | undefined) ?? `def-${index}`,
      },
    })
    await app.register(swaggerUi, { routePrefix: '/docs' })
    app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  },
  { name: 'openapi' },
)
