import { fileURLToPath } from 'node:url'
import { drizzle } from 'drizzle-orm/postgres-js'
import { migrate as drizzleMigrate } from 'drizzle-orm/postgres-js/migrator'
import postgres from 'postgres'

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../migrations', import.meta.url))
// Any fixed number: it names the lock all of our processes take while migrating.
const MIGRATION_LOCK = 4_242_001

/**
 * Applies the committed migrations. Safe to call from many processes at once: an advisory
 * lock lets one migrate while the others wait and then find nothing left to do.
 */
export async function migrate(url: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} })
  try {
    await sql`select pg_advisory_lock(${MIGRATION_LOCK})`
    try {
      await drizzleMigrate(drizzle(sql), { migrationsFolder: MIGRATIONS_FOLDER })
    } finally {
      await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`
    }
  } finally {
    await sql.end({ timeout: 5 })
  }
}
