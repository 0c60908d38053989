import { fileURLToPath } from 'node:url'
import { drizzle } from 'drizzle-orm/postgres-js'
import { migrate as drizzleMigrate } from 'drizzle-orm/postgres-js/migrator'
import { Logger, runMigrations } from 'graphile-worker'
import pg from 'pg'
import postgres from 'postgres'

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../migrations', import.meta.url))
// Any fixed number: it names the lock all of our processes take while migrating.
const MIGRATION_LOCK = 4_242_001
const QUIET = new Logger(() => () => {})

/**
 * Applies the committed migrations and installs (or upgrades) Graphile Worker's schema, which
 * the API's transactions add jobs to. Safe to call from many processes at once: an advisory
 * lock lets one migrate while the others wait and then find nothing left to do.
 */
export async function migrate(url: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  try {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`
    try {
      await drizzleMigrate(drizzle(sql), { migrationsFolder: MIGRATIONS_FOLDER })
      // Our own pool, ended and awaited here: Graphile does not await the end of one it makes.
      const pgPool = new pg.Pool({ connectionString: url, max: 1 })
      // A connection lost mid-migration fails the migration itself; these only keep an idle
      // client's error from crashing the process (and Graphile from warning on stderr).
      pgPool.on('error', () => {})
      pgPool.on('connect', (client) => client.on('error', () => {}))
      try {
        await runMigrations({ pgPool, logger: QUIET })
      } finally {
        await pgPool.end()
      }
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`
    }
  } finally {
    await sql.end({ timeout: 5 })
  }
}
