/**
 * The CSV export and import jobs (docs/csv.md). Each keeps a heartbeat on its row while it runs
 * (a job whose heartbeat stops belongs to a dead worker and is run again: worker-jobs.ts). What
 * the merchant must fix (a header, a broken quote) fails the export or import at once with a
 * message; anything else is retried by the queue, an import carrying on after its last batch,
 * and fails it only on the last attempt.
 */
import { CsvError } from 'csv-parse'
import type { Task } from 'graphile-worker'
import { TASKS, beatCsvJob, claimExport, claimImport, completeExport, failCsvJob, finishImport, productExportColumns, type CsvTask, type DatabaseHandle } from '@commerce/db'
import type { FileStorage } from '@commerce/storage'
import { customerImport } from '../csv/customers.js'
import { writeExport } from '../csv/export.js'
import { HeaderProblem, ImportTakenOver, runImport } from '../csv/import.js'
import { productImport } from '../csv/products.js'
import type { Logger } from '../logger.js'

export interface CsvSettings {
  storage: FileStorage
  /** Rows of an import per transaction. */
  batchRows: number
  /** Finished exports and imports are deleted, with their files, this long after (CSV_RETENTION). */
  retentionMs: number
}

export interface CsvTaskSettings extends CsvSettings {
  db: DatabaseHandle
  logger: Logger
  /** Aborted when the worker stops. */
  signal: AbortSignal
}

const HEARTBEAT_MS = 10_000

/** Runs `work` with a heartbeat; a failure on the job's last attempt fails the export or import with its message. */
async function withHeartbeat(settings: CsvTaskSettings, task: CsvTask, id: string, helpers: Parameters<Task>[1], work: () => Promise<void>): Promise<void> {
  const heartbeat = setInterval(() => void beatCsvJob(settings.db.sql, task, id).catch(() => {}), HEARTBEAT_MS)
  try {
    await work()
  } catch (error) {
    if (error instanceof HeaderProblem || error instanceof CsvError) {
      await failCsvJob(settings.db.sql, task, id, error instanceof CsvError ? `The file could not be read as CSV: ${error.message}` : error.message)
      return
    }
    if (error instanceof ImportTakenOver) {
      settings.logger.warn('csv import left to another run', { import_id: id })
      return
    }
    if (helpers.job.attempts >= helpers.job.max_attempts) {
      await failCsvJob(settings.db.sql, task, id, `Stopped after ${helpers.job.attempts} attempts: ${(error as Error).message}`)
      return
    }
    throw error
  } finally {
    clearInterval(heartbeat)
  }
}

export function createExportCsv(settings: CsvTaskSettings): Task {
  return async (payload, helpers) => {
    const { id } = payload as { id: string }
    const job = await claimExport(settings.db.sql, id)
    if (!job) return
    await withHeartbeat(settings, TASKS.exportCsv, id, helpers, async () => {
      const started = performance.now()
      const written = await writeExport(settings.db.sql, settings.storage, { id, ...job }, settings.signal)
      // Deleted while it was being written: its file goes too.
      if (!(await completeExport(settings.db.sql, { id, ...written }))) await settings.storage.delete([written.storageKey])
      settings.logger.info('csv export written', { export_id: id, resource: job.resource, rows: written.rowCount, bytes: written.sizeBytes, ms: Math.round(performance.now() - started) })
    })
  }
}

export function createImportCsv(settings: CsvTaskSettings): Task {
  return async (payload, helpers) => {
    const { id } = payload as { id: string }
    const claimed = await claimImport(settings.db.sql, id)
    if (!claimed) return
    await withHeartbeat(settings, TASKS.importCsv, id, helpers, async () => {
      const started = performance.now()
      await runImport({
        id,
        claimed,
        database: settings.db,
        storage: settings.storage,
        batchRows: settings.batchRows,
        signal: settings.signal,
        handler: async (header) =>
          claimed.resource === 'products'
            ? productImport(header, { importId: id, actor: claimed.createdBy, locations: (await productExportColumns(settings.db.sql)).locations })
            : customerImport(header, { actor: claimed.createdBy }),
      })
      await finishImport(settings.db.sql, id, claimed.dryRun ? 'validated' : 'completed')
      settings.logger.info('csv import done', { import_id: id, resource: claimed.resource, dry_run: claimed.dryRun, ms: Math.round(performance.now() - started) })
    })
  }
}
