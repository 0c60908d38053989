/**
 * `expire-files` (hourly, on the worker's schedule): deletes presigned uploads whose address
 * expired unused, and exports and imports finished longer than CSV_RETENTION ago; their rows
 * first and then their files (a file left behind by a failed deletion is only space; a row without
 * its file would be a broken download).
 */
import type { Task } from 'graphile-worker'
import { EXPIRED_CSV_BATCH, EXPIRED_UPLOADS_BATCH, deleteExpiredCsvJobs, deleteExpiredUploads, type SqlClient } from '@commerce/db'
import type { FileStorage } from '@commerce/storage'

export function createExpireFiles(sql: SqlClient, storage: FileStorage, csvRetentionMs: number): Task {
  return async (_payload, helpers) => {
    let uploads = 0
    for (;;) {
      const keys = await deleteExpiredUploads(sql)
      await storage.delete(keys)
      uploads += keys.length
      if (keys.length < EXPIRED_UPLOADS_BATCH) break
    }
    let csv = 0
    for (;;) {
      const gone = await deleteExpiredCsvJobs(sql, csvRetentionMs)
      await storage.delete([...gone.exports, ...gone.imports])
      csv += gone.exports.length + gone.imports.length
      if (gone.exports.length < EXPIRED_CSV_BATCH && gone.imports.length < EXPIRED_CSV_BATCH) break
    }
    if (uploads + csv > 0) helpers.logger.info(`deleted ${uploads} expired uploads and ${csv} expired CSV files`)
  }
}
