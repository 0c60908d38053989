/** The route table: every area and the prefix it lives under. */
import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.js'
import { authRoutes } from './auth/routes.js'
import { categoryRoutes } from './categories/routes.js'
import { productRoutes } from './products/routes.js'
import { systemRoutes } from './system/routes.js'

export async function registerRoutes(app: FastifyInstance, config: Config): Promise<void> {
  await app.register(systemRoutes)
  await app.register(authRoutes, { prefix: '/api/v1/auth', config })
  await app.register(productRoutes, { prefix: '/api/v1/products' })
  await app.register(categoryRoutes, { prefix: '/api/v1/categories' })
}
