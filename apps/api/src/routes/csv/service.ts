/** CSV exports and imports (docs/csv.md): their rows and jobs; the worker writes and reads the files. */
import type { Readable } from 'node:stream'
import { and, eq, inArray, type SQL } from 'drizzle-orm'
import type { CreateExport, Export, ExportList, ExportResource, Import, ImportList, ImportResource, ImportRowList, ImportRowsQuery } from '@commerce/domain'
import { addCsvJob, applyValidatedImport, exports, importRows, imports, newId, TASKS, type Database } from '@commerce/db'
import { byteCounter, FileTooLargeError, type FileStorage } from '@commerce/storage'
import { ApiError, conflict, notFound } from '../../errors.js'
import { key, keyset, listTable, type PageQuery } from '../../list-cursor.js'

type ExportRow = typeof exports.$inferSelect
type ImportRow = typeof imports.$inferSelect

const iso = (date: Date | null) => date?.toISOString() ?? null

/** Newest first (UUIDv7 ids): the primary keys. */
const EXPORTS_KEYSET = keyset('exports', 'desc', [key.uuid(exports.id)])
const IMPORTS_KEYSET = keyset('imports', 'desc', [key.uuid(imports.id)])
/** An import's report by row number: the primary key (import_id, row). */
const IMPORT_ROWS_KEYSET = keyset('import_rows', 'asc', [key.integer(importRows.row)])

export function createCsvService(db: Database, storage: FileStorage, publicUrl: string) {
  function toExport(row: ExportRow): Export {
    return {
      id: row.id,
      resource: row.resource,
      filters: row.filters,
      status: row.status,
      row_count: row.rowCount,
      size: row.sizeBytes,
      download_url: row.status === 'completed' ? `${publicUrl}/api/v1/exports/${row.id}/file` : null,
      error: row.error,
      created_at: row.createdAt.toISOString(),
      started_at: iso(row.startedAt),
      completed_at: iso(row.completedAt),
    }
  }

  function toImport(row: ImportRow): Import {
    return {
      id: row.id,
      resource: row.resource,
      dry_run: row.dryRun,
      status: row.status,
      file_name: row.fileName,
      size: row.sizeBytes,
      processed_rows: row.processedRows,
      created: row.created,
      updated: row.updated,
      refused: row.refused,
      error: row.error,
      created_at: row.createdAt.toISOString(),
      started_at: iso(row.startedAt),
      completed_at: iso(row.completedAt),
    }
  }

  /** The export, if it exists and is of a resource the caller may read (else 404, as if it did not exist). */
  async function findExport(id: string, readable: readonly ExportResource[]): Promise<ExportRow> {
    const [row] = await db.select().from(exports).where(and(eq(exports.id, id), inArray(exports.resource, [...readable])))
    if (!row) throw notFound('Export')
    return row
  }

  async function findImport(id: string, writable: readonly ImportResource[]): Promise<ImportRow> {
    const [row] = await db.select().from(imports).where(and(eq(imports.id, id), inArray(imports.resource, [...writable])))
    if (!row) throw notFound('Import')
    return row
  }

  return {
    /** A new export and its job, in one transaction. */
    async createExport(body: CreateExport, actor: string | null): Promise<Export> {
      return db.transaction(async (tx) => {
        const [row] = await tx.insert(exports).values({ resource: body.resource, filters: body.filters ?? {}, createdBy: actor }).returning()
        await addCsvJob(tx, TASKS.exportCsv, row!.id)
        return toExport(row!)
      })
    },

    async listExports(readable: readonly ExportResource[], query: PageQuery): Promise<ExportList> {
      const { rows, meta } = await listTable(db, EXPORTS_KEYSET, exports, inArray(exports.resource, [...readable]), query)
      return { exports: rows.map(toExport), meta }
    },

    getExport: async (id: string, readable: readonly ExportResource[]) => toExport(await findExport(id, readable)),

    /** Where to get a completed export's file: an address to send the client to, or the file itself. */
    async exportFile(id: string, readable: readonly ExportResource[]): Promise<{ fileName: string } & ({ redirect: string } | { stream: Readable })> {
      const row = await findExport(id, readable)
      if (row.status !== 'completed' || !row.storageKey) throw conflict(`The export is ${row.status}: its file can be downloaded once it is completed`)
      const fileName = `${row.resource}-${row.createdAt.toISOString().slice(0, 10)}-${row.id.slice(-8)}.csv`
      const redirect = await storage.presignGet(row.storageKey, fileName, 300)
      if (redirect) return { fileName, redirect }
      const stream = await storage.readStream(row.storageKey)
      if (!stream) throw notFound('Export file')
      return { fileName, stream }
    },

    /** Deletes the export and its file (a job still writing it deletes what it wrote). */
    async deleteExport(id: string, readable: readonly ExportResource[]): Promise<void> {
      const row = await findExport(id, readable)
      await db.delete(exports).where(eq(exports.id, row.id))
      if (row.storageKey) await storage.delete([row.storageKey])
    },

    /**
     * Stores the uploaded file (streamed, at most `maxBytes`), then makes the import and its job
     * in one transaction; the file is removed again when that fails.
     */
    async createImport(file: Readable, options: { resource: ImportResource; dryRun: boolean; fileName: string | null; maxBytes: number; actor: string | null }): Promise<Import> {
      const id = newId()
      const storageKey = `private/imports/${id}.csv`
      const limited = byteCounter(options.maxBytes)
      // The body's own failure (a multipart body cut short): the client's fault, a 400.
      let bodyError: Error | undefined
      const failBody = (error: Error) => {
        bodyError = error
        limited.destroy(error)
      }
      // Too large before the storage starts reading: the storage's pipeline reports it, not the process.
      limited.on('error', () => {})
      // A multipart part whose body ended early may be destroyed before it reaches here, with no event left to hear.
      if (file.destroyed) failBody(file.errored ?? new Error('the body ended before the file did'))
      else {
        file.on('error', failBody)
        file.pipe(limited)
      }
      let size: number
      try {
        size = await storage.putStream(storageKey, limited, 'text/csv')
      } catch (error) {
        await storage.delete([storageKey])
        if (error instanceof FileTooLargeError || (error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') {
          throw new ApiError('payload_too_large', `The file is larger than IMPORT_MAX_BYTES (${options.maxBytes} bytes)`)
        }
        if (bodyError) throw new ApiError('validation_error', `The file could not be read: ${bodyError.message}`)
        throw error
      }
      try {
        return await db.transaction(async (tx) => {
          const [row] = await tx
            .insert(imports)
            .values({ id, resource: options.resource, dryRun: options.dryRun, storageKey, fileName: options.fileName, sizeBytes: size, createdBy: options.actor })
            .returning()
          await addCsvJob(tx, TASKS.importCsv, id)
          return toImport(row!)
        })
      } catch (error) {
        await storage.delete([storageKey])
        throw error
      }
    },

    async listImports(writable: readonly ImportResource[], query: PageQuery): Promise<ImportList> {
      const { rows, meta } = await listTable(db, IMPORTS_KEYSET, imports, inArray(imports.resource, [...writable]), query)
      return { imports: rows.map(toImport), meta }
    },

    getImport: async (id: string, writable: readonly ImportResource[]) => toImport(await findImport(id, writable)),

    /** The import's report, by row; `action` keeps one kind of row (refuse: the refused rows and why). */
    async listImportRows(id: string, writable: readonly ImportResource[], query: ImportRowsQuery): Promise<ImportRowList> {
      await findImport(id, writable)
      const conditions: SQL[] = [eq(importRows.importId, id)]
      if (query.action) conditions.push(eq(importRows.action, query.action))
      const { rows, meta } = await listTable(db, IMPORT_ROWS_KEYSET, importRows, and(...conditions), query)
      return {
        rows: rows.map((row) => ({ row: row.row, action: row.action, resource_id: row.resourceId, key: row.key, reason: row.reason })),
        meta,
      }
    },

    /** Runs a validated dry run for real: the same file, validated again as it is applied. */
    async applyImport(id: string, writable: readonly ImportResource[]): Promise<Import> {
      const row = await findImport(id, writable)
      return db.transaction(async (tx) => {
        if (!(await applyValidatedImport(tx, id))) {
          throw conflict(`Only a validated dry run can be applied; this import is ${row.dryRun ? '' : 'not a dry run and is '}${row.status}`)
        }
        await addCsvJob(tx, TASKS.importCsv, id)
        const [fresh] = await tx.select().from(imports).where(eq(imports.id, id))
        return toImport(fresh!)
      })
    },

    /** Deletes the import, its report and its file; a run under way stops at its next batch. */
    async deleteImport(id: string, writable: readonly ImportResource[]): Promise<void> {
      const row = await findImport(id, writable)
      await db.delete(imports).where(eq(imports.id, row.id))
      await storage.delete([row.storageKey])
    },
  }
}
