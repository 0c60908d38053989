/**
 * The database: `app.db` (Drizzle) and `app.sql` (postgres.js) for everything, `app.catalogDb`,
 * a second pool with generic plans for the hot public catalog reads, and `app.listenSql`, whose
 * LISTEN connection carries the events to the WebSocket feed (the main pool's own, unless
 * DATABASE_DIRECT_URL names another). All close with the app.
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
    listenSql: postgres.Sql
  }
}

export default fp<{ main: DatabaseHandle; catalog: DatabaseHandle; listen: DatabaseHandle }>(
  async function databasePlugin(app: FastifyInstance, { main, catalog, listen }) {
    app.decorate('db', main.db)
    app.decorate('sql', main.sql)
    app.decorate('catalogDb', catalog.db)
    app.decorate('listenSql', listen.sql)
    app.addHook('onClose', async () => {
      await Promise.all([...new Set([main, catalog, listen])].map((handle) => handle.close()))
    })
  },
  { name: 'database' },
)
