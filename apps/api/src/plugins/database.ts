/** The database handle as `app.db` (Drizzle) and `app.sql` (postgres.js), closed with the app. */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Database, DatabaseHandle } from '@commerce/db'
import type postgres from 'postgres'

declare module 'fastify' {
  interface FastifyInstance {
    db: Database
    sql: postgres.Sql
  }
}

export default fp<{ handle: DatabaseHandle }>(
  async function databasePlugin(app: FastifyInstance, { handle }) {
    app.decorate('db', handle.db)
    app.decorate('sql', handle.sql)
    app.addHook('onClose', async () => handle.close())
  },
  { name: 'database' },
)
