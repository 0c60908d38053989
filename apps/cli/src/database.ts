/**
 * The database of a direct-to-database command: DATABASE_URL, else the embedded one in `.data/`
 * (found running, or started for this command and stopped again afterwards).
 */
import { EmbeddedPostgresMissingError, createDb, openDatabase, type Database } from '@commerce/db'
import { ConfigError, type Config } from './config.js'

export interface CommandDatabase {
  url: string
  db: Database
}

/** Runs `work` with the database open, and always closes the connections (and the cluster it started). */
export async function withDatabase<T>(config: Config, work: (database: CommandDatabase) => Promise<T>): Promise<T> {
  const opened = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir }).catch((error: unknown) => {
    // The published CLI comes without the embedded PostgreSQL: a setting to fix, said in one line.
    throw error instanceof EmbeddedPostgresMissingError ? new ConfigError(error.message) : error
  })
  try {
    // postgres.js connects on the first query, so a command that only migrates opens nothing here.
    const handle = createDb({ url: opened.url, poolMax: 1, applicationName: 'commerce-cli' })
    try {
      return await work({ url: opened.url, db: handle.db })
    } finally {
      await handle.close()
    }
  } finally {
    await opened.stop()
  }
}
