/**
 * Runs one CSV import (docs/csv.md): the file read from the storage as a stream by csv-parse, its
 * rows grouped into units (a product's consecutive rows, a customer's row), the units decided and
 * written a batch at a time, each batch with its report rows and the import's progress in one
 * transaction. A run that stops (a crash, a restart, a lost connection) carries on after the last
 * committed batch: the rows before it are read again only to know which keys were seen.
 */
import { parse } from 'csv-parse'
import { sqlOf, recordImportBatch, type ClaimedImport, type DatabaseHandle, type Executor, type ImportReportRow } from '@commerce/db'
import type { FileStorage } from '@commerce/storage'

/** What one resource's import does with its rows. */
export interface RowHandler<Unit> {
  /**
   * Reads what checking the header needs from the database before the first row (throws a
   * HeaderProblem); may ask for every row of the file first (`scan`), when a row's check depends
   * on rows after it.
   */
  prepare?(database: DatabaseHandle): Promise<{ scan?: ((cells: string[]) => void) | undefined }>
  /**
   * Takes the next row; answers the units it completed (a product's rows end where another's
   * begin). `misaligned` says why the row cannot be read as the header says (refused, the rest of
   * the file still goes in).
   */
  take(row: number, cells: string[], misaligned?: string): Unit[]
  /** The unit still open at the end of the file (or where a resumed run starts). */
  finish(): Unit[]
  rowCount(unit: Unit): number
  /** Decides a batch of units and, unless a dry run, writes them in `tx`; answers a report row per file row. */
  apply(tx: Executor, units: Unit[], dryRun: boolean): Promise<ImportReportRow[]>
}

/** A file whose header the import cannot use: the import fails with this message. */
export class HeaderProblem extends Error {}

/** The import was moved on by another run, or deleted: this run stops and leaves it. */
export class ImportTakenOver extends Error {}

/** The worker is stopping: the job fails now and its next attempt carries on from the last batch. */
export class ImportInterrupted extends Error {}

export interface ImportRun {
  id: string
  claimed: ClaimedImport
  database: DatabaseHandle
  storage: FileStorage
  /** Rows per batch (a unit is never split). */
  batchRows: number
  /** Aborted when the worker stops. */
  signal?: AbortSignal | undefined
  handler(header: string[]): Promise<RowHandler<unknown>>
}

/** Reads and applies the whole file (or what is left of it); throws HeaderProblem or a CsvError for the import to fail with. */
export async function runImport(run: ImportRun): Promise<void> {
  const file = await run.storage.readStream(run.claimed.storageKey)
  if (!file) throw new HeaderProblem('The uploaded file is no longer in the storage')
  const parser = file.pipe(parse({ bom: true, relax_column_count: true, skip_empty_lines: true }))
  file.on('error', (error) => parser.destroy(error))
  let handler: RowHandler<unknown> | undefined
  let header: string[] = []
  let consumed = 0
  let done = run.claimed.processedRows
  let batch: unknown[] = []
  let batchRows = 0

  const commit = async () => {
    if (batch.length === 0) return
    if (run.signal?.aborted) throw new ImportInterrupted('The worker is stopping')
    const units = batch
    const from = done
    const to = done + batchRows
    await run.database.db.transaction(async (tx) => {
      const report = await handler!.apply(tx, units, run.claimed.dryRun)
      if (!(await recordImportBatch(sqlOf(tx), { id: run.id, from, to, rows: report }))) throw new ImportTakenOver('The import was moved on or deleted meanwhile')
    })
    done = to
    batch = []
    batchRows = 0
  }

  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (!handler) {
        header = record.map((name) => name.trim())
        handler = await run.handler(header)
        const prepared = await handler.prepare?.(run.database)
        if (prepared?.scan) await scanFile(run, prepared.scan)
        continue
      }
      consumed++
      const row = consumed + 1
      const misaligned =
        record.length === header.length ? undefined : `row ${row} has ${record.length} cells where the header has ${header.length}: its columns do not line up`
      const units = handler.take(row, record, misaligned)
      if (consumed <= run.claimed.processedRows) {
        // Done by an earlier run: read again only for the keys it saw.
        if (consumed === run.claimed.processedRows) handler.finish()
        continue
      }
      for (const unit of units) {
        batch.push(unit)
        batchRows += handler.rowCount(unit)
      }
      if (batchRows >= run.batchRows) await commit()
    }
    if (!handler) throw new HeaderProblem('The file is empty: it needs a header row')
    for (const unit of handler.finish()) {
      batch.push(unit)
      batchRows += handler.rowCount(unit)
    }
    await commit()
  } finally {
    parser.destroy()
  }
}

/**
 * Reads every row of the file once (after its header) for a handler that needs to know them all
 * first. A file that cannot be read as CSV is left to the import's own reading, which fails there.
 */
async function scanFile(run: ImportRun, scan: (cells: string[]) => void): Promise<void> {
  const file = await run.storage.readStream(run.claimed.storageKey)
  if (!file) return
  const parser = file.pipe(parse({ bom: true, relax_column_count: true, skip_empty_lines: true }))
  file.on('error', (error) => parser.destroy(error))
  let first = true
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (!first) scan(record)
      first = false
    }
  } catch {
    // The import's own reading reports it where it is.
  } finally {
    parser.destroy()
  }
}
