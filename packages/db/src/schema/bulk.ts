/** CSV exports and imports (docs/csv.md): each a job of the worker, its file in the file storage. */
import { sql } from 'drizzle-orm'
import { bigint, boolean, index, integer, jsonb, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core'
import type { ExportResource, ExportStatus, ImportResource, ImportRowAction, ImportStatus } from '@commerce/domain'
import { createdAt, id, updatedAt } from './columns.js'

const at = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

/** What every CSV job records of its run, besides its status (csv-jobs.ts keeps them). */
const run = () => ({
  /** Who asked: `user:<id>`, `api_key:<id>`, … (the events' actor). */
  createdBy: text('created_by'),
  /** Written by the running job every few seconds: a job whose heartbeat stopped belongs to a dead worker. */
  heartbeatAt: at('heartbeat_at'),
  startedAt: at('started_at'),
  completedAt: at('completed_at'),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
})

export const exports = pgTable(
  'exports',
  {
    id: id(),
    resource: text('resource').$type<ExportResource>().notNull(),
    filters: jsonb('filters').$type<Record<string, unknown>>().notNull().default({}),
    status: text('status').$type<ExportStatus>().notNull().default('pending'),
    rowCount: integer('row_count').notNull().default(0),
    /** The finished file (private/exports/…), never served publicly. */
    storageKey: text('storage_key'),
    sizeBytes: bigint('size_bytes', { mode: 'number' }),
    error: text('error'),
    ...run(),
  },
)

export const imports = pgTable(
  'imports',
  {
    id: id(),
    resource: text('resource').$type<ImportResource>().notNull(),
    /** A dry run reports what each row would do and writes nothing. */
    dryRun: boolean('dry_run').notNull(),
    status: text('status').$type<ImportStatus>().notNull().default('pending'),
    /** The uploaded file (private/imports/…). */
    storageKey: text('storage_key').notNull(),
    fileName: text('file_name'),
    sizeBytes: bigint('size_bytes', { mode: 'number' }).notNull(),
    /**
     * Data rows (after the header) handled so far: each batch advances it in its own transaction,
     * so a run that stops carries on after the last committed batch.
     */
    processedRows: integer('processed_rows').notNull().default(0),
    created: integer('created').notNull().default(0),
    updated: integer('updated').notNull().default(0),
    refused: integer('refused').notNull().default(0),
    /** Why the whole file could not be read (a missing column, a broken quote); rows' reasons are in import_rows. */
    error: text('error'),
    ...run(),
  },
)

/** The report of an import: what each row of the file did (or would do, in a dry run), and why a refused one was refused. */
export const importRows = pgTable(
  'import_rows',
  {
    importId: uuid('import_id')
      .notNull()
      .references(() => imports.id, { onDelete: 'cascade' }),
    /** The row's number in the file, the header being row 1 (as a spreadsheet numbers it). */
    row: integer('row').notNull(),
    action: text('action').$type<ImportRowAction>().notNull(),
    /** The product or customer the row wrote (or would write); null when refused or not yet made. */
    resourceId: uuid('resource_id'),
    /** What names the row in the file: the product's slug, the customer's email. */
    key: text('key'),
    reason: text('reason'),
  },
  (t) => [primaryKey({ name: 'import_rows_pkey', columns: [t.importId, t.row] }), index('import_rows_refused_idx').on(t.importId, t.row).where(sql`${t.action} = 'refuse'`)],
)
