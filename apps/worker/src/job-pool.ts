/**
 * The PostgreSQL pool Graphile Worker runs on (Graphile needs a `pg` pool; our own statements run
 * on @commerce/db's postgres.js pool: docs/internals.md). We own it, rather than passing a connection
 * string, because Graphile ends a pool it created without waiting (`pgPool.end()` is not
 * awaited) and drops its error handlers first: connections still closing when `stop()`
 * resolves could then crash the process if the server goes away (an embedded database being
 * stopped, a test database dropped). Owning it, `stop()` can await the end.
 */
import pg from 'pg'
import type { Logger } from './logger.js'

export function createJobPool(connectionString: string, max: number, connectTimeoutMs: number, logger: Logger): pg.Pool {
  // connectionTimeoutMillis bounds both a connection being made and the wait for a free one
  // (pg's default waits for ever: a database host that stops answering would hang every job).
  const pool = new pg.Pool({ connectionString, max, connectionTimeoutMillis: connectTimeoutMs, application_name: 'commerce-worker-jobs' })
  // Idle and checked-out clients both report server-side disconnects here; pg replaces them.
  pool.on('error', (error: Error) => logger.warn('database connection lost', { error: error.message }))
  pool.on('connect', (client) => {
    client.on('error', (error: Error) => logger.warn('database connection error', { error: error.message }))
  })
  return pool
}
