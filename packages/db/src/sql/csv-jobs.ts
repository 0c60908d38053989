/**
 * The jobs of CSV exports and imports (docs/csv.md): added in the transaction that makes the
 * export or import row, run by the worker, which keeps the row's status, heartbeat and progress.
 * A running job writes a heartbeat every few seconds; a job whose heartbeat stopped belongs to a
 * dead worker (worker-jobs.ts unlocks it, and it carries on from the last committed batch).
 */
import type { ExportResource, ImportResource, ImportRowAction, ImportStatus } from '@commerce/domain'
import { sqlOf, type Executor } from '../client.js'
import { TASKS } from '../queue.js'
import type { SqlClient } from '../transaction.js'

export type CsvTask = typeof TASKS.exportCsv | typeof TASKS.importCsv

/** A heartbeat older than this means the job's worker is gone. */
export const CSV_HEARTBEAT_STALE_SECONDS = 60

// $1 task, $2 the export's or import's id. Keyed by both, so asking twice makes one job; five
// attempts (a crash, a lost connection), each carrying on where the last one stopped.
const ADD_JOB = `select count(*) as "added" from graphile_worker.add_jobs(array[
  row($1::text, json_build_object('id', $2::uuid), null, null, 5, $1::text || ':' || $2::uuid, 2, null)::graphile_worker.job_spec])`

/** Adds the job of an export or import in the caller's transaction. */
export async function addCsvJob(tx: Executor, task: CsvTask, id: string): Promise<void> {
  await sqlOf(tx).unsafe(ADD_JOB, [task, id], { prepare: true })
}

/** Which table a task's rows are in: the only two names these statements are built with. */
const TABLE = { [TASKS.exportCsv]: 'exports', [TASKS.importCsv]: 'imports' } as const

const claim = (table: string, columns: string) => `update ${table} set status = 'running', started_at = coalesce(started_at, now()),
  heartbeat_at = now(), error = null, updated_at = now() where id = $1 and status in ('pending', 'running') returning ${columns}`
const CLAIM_EXPORT = claim('exports', 'resource, filters')
const CLAIM_IMPORT = claim('imports', `resource, dry_run as "dryRun", storage_key as "storageKey", processed_rows as "processedRows", created_by as "createdBy"`)
const beat = (table: string) => `update ${table} set heartbeat_at = now() where id = $1 and status = 'running'`
const BEAT = { exports: beat('exports'), imports: beat('imports') }

/** Marks an export running and answers what it exports; undefined when it is not waiting or running (done, deleted). */
export async function claimExport(sql: SqlClient, id: string): Promise<{ resource: ExportResource; filters: Record<string, unknown> } | undefined> {
  const [row] = await sql.unsafe<{ resource: ExportResource; filters: Record<string, unknown> }[]>(CLAIM_EXPORT, [id], { prepare: true })
  return row
}

export interface ClaimedImport {
  resource: ImportResource
  dryRun: boolean
  storageKey: string
  /** Where a run that stopped left off (0 for a new one). */
  processedRows: number
  /** Who asked (the events' actor). */
  createdBy: string | null
}

/** Marks an import running and answers what to import from where; undefined when it is not waiting or running. */
export async function claimImport(sql: SqlClient, id: string): Promise<ClaimedImport | undefined> {
  const [row] = await sql.unsafe<ClaimedImport[]>(CLAIM_IMPORT, [id], { prepare: true })
  return row
}

/** The running job is alive. */
export async function beatCsvJob(sql: SqlClient, task: CsvTask, id: string): Promise<void> {
  await sql.unsafe(BEAT[TABLE[task]], [id], { prepare: true })
}

// $1 id, $2 key, $3 size, $4 rows.
const EXPORT_DONE = `update exports set status = 'completed', storage_key = $2, size_bytes = $3, row_count = $4, completed_at = now(),
  heartbeat_at = null, updated_at = now() where id = $1 and status = 'running' returning id`

/** The export's file is written; false when the export was deleted meanwhile (the caller deletes the file). */
export async function completeExport(sql: SqlClient, done: { id: string; storageKey: string; sizeBytes: number; rowCount: number }): Promise<boolean> {
  const rows = await sql.unsafe(EXPORT_DONE, [done.id, done.storageKey, done.sizeBytes, done.rowCount], { prepare: true })
  return rows.length > 0
}

const fail = (table: string) => `update ${table} set status = 'failed', error = $2, completed_at = now(), heartbeat_at = null, updated_at = now()
  where id = $1 and status in ('pending', 'running')`
const FAIL = { exports: fail('exports'), imports: fail('imports') }

/** The export or import cannot be done (the reason is for the merchant). */
export async function failCsvJob(sql: SqlClient, task: CsvTask, id: string, reason: string): Promise<void> {
  await sql.unsafe(FAIL[TABLE[task]], [id, reason], { prepare: true })
}

export interface ImportReportRow {
  row: number
  action: ImportRowAction
  resourceId: string | null
  key: string | null
  reason: string | null
}

// $1 id, $2 the rows handled before this batch, $3 after it, $4 the report rows as JSON.
const RECORD_BATCH = `with report as (
  select * from json_to_recordset($4::json) as r(row int, action text, "resourceId" uuid, key text, reason text)),
progressed as (
  update imports set processed_rows = $3, heartbeat_at = now(), updated_at = now(),
    created = created + (select count(*) filter (where action = 'create') from report),
    updated = updated + (select count(*) filter (where action = 'update') from report),
    refused = refused + (select count(*) filter (where action = 'refuse') from report)
  where id = $1 and status = 'running' and processed_rows = $2 returning id),
written as (
  insert into import_rows (import_id, row, action, resource_id, key, reason)
  select $1, r.row, r.action, r."resourceId", r.key, r.reason from report r where exists (select from progressed))
select count(*)::int as "progressed" from progressed`

/**
 * Records a batch's report and moves the import's progress on, in the batch's transaction. False
 * (and nothing recorded) when the import is not where this run thinks it is: another run moved it
 * on, or it was deleted. The caller then rolls its batch back and stops.
 */
export async function recordImportBatch(sql: SqlClient, batch: { id: string; from: number; to: number; rows: readonly ImportReportRow[] }): Promise<boolean> {
  const [row] = await sql.unsafe<{ progressed: number }[]>(RECORD_BATCH, [batch.id, batch.from, batch.to, JSON.stringify(batch.rows)], { prepare: true })
  return row!.progressed > 0
}

// $1 id, $2 the final status.
const IMPORT_DONE = `update imports set status = $2, completed_at = now(), heartbeat_at = null, updated_at = now() where id = $1 and status = 'running'`

/** The whole file was handled: `validated` after a dry run, `completed` after a real one. */
export async function finishImport(sql: SqlClient, id: string, status: Extract<ImportStatus, 'validated' | 'completed'>): Promise<void> {
  await sql.unsafe(IMPORT_DONE, [id, status], { prepare: true })
}

// $1 id. A validated dry run becomes a real run of the same file, its report started again.
const APPLY = `with started as (
  update imports set dry_run = false, status = 'pending', processed_rows = 0, created = 0, updated = 0, refused = 0, started_at = null,
    completed_at = null, updated_at = now() where id = $1 and status = 'validated' returning id),
cleared as (delete from import_rows where import_id in (select id from started))
select count(*)::int as "started" from started`

/** Turns a validated dry run into a real run (the caller adds its job); false when it is not a validated dry run. */
export async function applyValidatedImport(tx: Executor, id: string): Promise<boolean> {
  const [row] = await sqlOf(tx).unsafe<{ started: number }[]>(APPLY, [id], { prepare: true })
  return row!.started > 0
}

/** Finished exports and imports deleted per statement by the retention sweep. */
export const EXPIRED_CSV_BATCH = 500

// $1 the retention in ms. Finished ones only: a job under way is never swept from under it.
const DELETE_EXPIRED = `with gone_exports as (
  delete from exports where id in (select id from exports where status in ('completed', 'failed')
    and completed_at < now() - make_interval(secs => $1::float8 / 1000) order by id limit ${EXPIRED_CSV_BATCH})
  returning storage_key),
gone_imports as (
  delete from imports where id in (select id from imports where status in ('validated', 'completed', 'failed')
    and completed_at < now() - make_interval(secs => $1::float8 / 1000) order by id limit ${EXPIRED_CSV_BATCH})
  returning storage_key)
select coalesce((select array_agg(storage_key) from gone_exports where storage_key is not null), '{}') as exports,
  coalesce((select array_agg(storage_key) from gone_imports), '{}') as imports`

/**
 * Deletes up to EXPIRED_CSV_BATCH exports and as many imports (their reports with them) finished
 * longer than `retentionMs` ago; answers their files' keys, for the caller to delete once this has
 * committed.
 */
export async function deleteExpiredCsvJobs(sql: SqlClient, retentionMs: number): Promise<{ exports: string[]; imports: string[] }> {
  const [row] = await sql.unsafe<{ exports: string[]; imports: string[] }[]>(DELETE_EXPIRED, [retentionMs], { prepare: true })
  return row!
}
