/**
 * The database: `app.db` (Drizzle) and `app.sql` (postgres.js) for everything, and `app.catalogDb`,
 * a second pool with generic plans for the hot public catalog reads. Both close with the app.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Database, DatabaseHandle } from '@commerce/db'
import type postgres from 'postgres'

declare module 'fastify' {
  interface FastifyInstance {
    db: Database
    sql: postgres.Sql
    catalogDb: Database
  }
}

export default fp<{ main: DatabaseHandle; catalog: DatabaseHandle }>(
  async function databasePlugin(app: FastifyInstance, { main, catalog }) {
    app.decorate('db', main.db)
    app.decorate('sql', main.sql)
    app.decorate('catalogDb', catalog.db)
    app.addHook('onClose', async () => {
      await Promise.all([main.close(), catalog.close()])
    })
  },
  { name: 'database' },
)
