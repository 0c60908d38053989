/**
 * The database of a direct-to-database command: DATABASE_URL, else the embedded one in `.data/`
 * (found running, or started for this command and stopped again afterwards).
 */
import { createDb, openDatabase, type Database } from '@commerce/db'
import type { Config } from './config.js'

export interface CommandDatabase {
  url: string
  db: Database
}

/** Runs `work` with the database open, and always closes the connections (and the cluster it started). */
export async function withDatabase<T>(config: Config, work: (database: CommandDatabase) => Promise<T>): Promise<T> {
  // The published CLI comes without the embedded PostgreSQL: EmbeddedPostgresMissingError says what to
  // set or install, in one line (base-command.ts reports it as a config_error).
  const opened = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir })
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
