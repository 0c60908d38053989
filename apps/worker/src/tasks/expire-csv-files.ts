/**
 * `expire-csv-files` (hourly, on the worker's schedule): deletes exports and imports finished
 * longer than CSV_RETENTION ago, their rows first and then their files (a file left behind by a
 * failed deletion is only space; a row without its file would be a broken download).
 */
import type { Task } from 'graphile-worker'
import { EXPIRED_CSV_BATCH, deleteExpiredCsvJobs, type SqlClient } from '@commerce/db'
import type { FileStorage } from '@commerce/storage'

export function createExpireCsvFiles(sql: SqlClient, storage: FileStorage, retentionMs: number): Task {
  return async (_payload, helpers) => {
    let deleted = 0
    for (;;) {
      const gone = await deleteExpiredCsvJobs(sql, retentionMs)
      await storage.delete([...gone.exports, ...gone.imports])
      deleted += gone.exports.length + gone.imports.length
      if (gone.exports.length < EXPIRED_CSV_BATCH && gone.imports.length < EXPIRED_CSV_BATCH) break
    }
    if (deleted > 0) helpers.logger.info(`deleted ${deleted} expired CSV files`)
  }
}
