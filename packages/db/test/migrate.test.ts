import { readMigrationFiles } from 'drizzle-orm/migrator'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { MIGRATIONS_FOLDER, migrate } from '../src/migrate.js'
import { openTestDatabase, type OpenTestDatabase } from './test-database.js'

const expectedMigrations = readMigrationFiles({ migrationsFolder: MIGRATIONS_FOLDER }).map((migration) => ({
  hash: migration.hash,
  createdAt: String(migration.folderMillis),
}))

let database: OpenTestDatabase | undefined
afterEach(async () => {
  await database?.dispose()
  database = undefined
})

async function appliedMigrations(target: OpenTestDatabase) {
  const rows = await target.sql<{ id: number; hash: string; created_at: string }[]>`
    select id, hash, created_at::text from drizzle.__drizzle_migrations order by id`
  return rows.map((row) => ({ id: row.id, hash: row.hash, createdAt: row.created_at }))
}

/** What the migrations create, by name, and the seeded catalog revision. */
async function schemaFingerprint(target: OpenTestDatabase) {
  const [row] = await target.sql<{ tables: string[]; triggers: string[]; functions: string[]; revisions: string[] }[]>`
    select
      array(select tablename::text from pg_tables where schemaname = 'public' order by 1) as tables,
      array(select tgname::text from pg_trigger where not tgisinternal order by 1) as triggers,
      array(select p.proname::text from pg_proc p join pg_namespace n on n.oid = p.pronamespace
        where n.nspname = 'public' order by 1) as functions,
      array(select revision::text from catalog_revision) as revisions`
  return row!
}

/** The schema of the template, which globalSetup migrated with a single call. */
let freshSchema: Awaited<ReturnType<typeof schemaFingerprint>>
beforeAll(async () => {
  const reference = await openTestDatabase()
  try {
    freshSchema = await schemaFingerprint(reference)
  } finally {
    await reference.dispose()
  }
  expect(freshSchema.tables).toEqual(expect.arrayContaining(['products', 'users', 'catalog_revision']))
  expect(freshSchema.triggers).toContain('products_bump_catalog_revision')
  expect(freshSchema.revisions).toEqual(['0'])
})

describe('migrate', () => {
  it('applies every migration to an empty database, in journal order', async () => {
    database = await openTestDatabase({ empty: true })
    await migrate(database.url)
    const applied = await appliedMigrations(database)
    expect(applied.map(({ hash, createdAt }) => ({ hash, createdAt }))).toEqual(expectedMigrations)
    expect(await schemaFingerprint(database)).toEqual(freshSchema)
  })

  it('changes nothing when run again on a migrated database', async () => {
    database = await openTestDatabase()
    const before = { migrations: await appliedMigrations(database), schema: await schemaFingerprint(database) }
    await migrate(database.url)
    await migrate(database.url)
    expect({ migrations: await appliedMigrations(database), schema: await schemaFingerprint(database) }).toEqual(before)
    expect(before.migrations).toHaveLength(expectedMigrations.length)
  })

  it('lets three concurrent calls on an empty database apply each migration exactly once', async () => {
    database = await openTestDatabase({ empty: true })
    const url = database.url
    const results = await Promise.allSettled([migrate(url), migrate(url), migrate(url)])
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled'])
    const applied = await appliedMigrations(database)
    expect(applied.map(({ hash, createdAt }) => ({ hash, createdAt }))).toEqual(expectedMigrations)
    expect(await schemaFingerprint(database)).toEqual(freshSchema)
  })

  it('lets three concurrent calls on a migrated database all succeed without changes', async () => {
    database = await openTestDatabase()
    const before = await appliedMigrations(database)
    await Promise.all([migrate(database.url), migrate(database.url), migrate(database.url)])
    expect(await appliedMigrations(database)).toEqual(before)
  })

  it('releases its advisory lock and closes its connection when done', async () => {
    database = await openTestDatabase()
    const target = database
    await migrate(target.url)
    const leftovers = async () => {
      const [row] = await target.sql<{ locks: number; sessions: number }[]>`
        select
          (select count(*)::int from pg_locks l join pg_database d on d.oid = l.database
            where l.locktype = 'advisory' and d.datname = current_database()) as locks,
          (select count(*)::int from pg_stat_activity
            where datname = current_database() and application_name <> 'commerce-db-test') as sessions`
      return row
    }
    await expect.poll(leftovers, { timeout: 5_000 }).toEqual({ locks: 0, sessions: 0 })
  })
})
