/**
 * CSV export and import of the 100,000-product bench catalog (docs/csv.md), each by a real worker
 * process as a queued job: rows per second (from the job's own started_at and completed_at) and
 * the worker's peak resident memory during the job (VmHWM, reset before the job through
 * /proc/<pid>/clear_refs), beside its resident memory when idle. The import goes into an empty
 * database of its own (categories, stock locations and attribute definitions copied first, as a shop would make them),
 * as a dry run and then applied; the imported catalog is checked against the source.
 *
 *   DATABASE_URL=postgres://…/bench_catalog node bench/seed.js
 *   DATABASE_URL=postgres://…/bench_catalog node bench/csv.js
 *
 * BENCH_IMPORT_BATCH_ROWS sets the worker's IMPORT_BATCH_ROWS (500).
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import postgres from 'postgres'
import { TASKS, addCsvJob, applyValidatedImport, createDb, newId, sqlOf } from '@commerce/db'
import { openScratchDatabase } from './scratch-database.js'
import { ROOT, sleep } from './worker-runs.js'

const WORKER_MAIN = join(ROOT, 'apps/worker/dist/main.js')
const BATCH_ROWS = process.env.BENCH_IMPORT_BATCH_ROWS ?? '500'

if (!process.env.DATABASE_URL) throw new Error('DATABASE_URL: the seeded bench catalog (node bench/seed.js)')
const sourceUrl = process.env.DATABASE_URL
const files = await mkdtemp(join(tmpdir(), 'bench-csv-'))

function startWorker(databaseUrl) {
  const { DATABASE_URL: _unset, ...env } = process.env
  const child = spawn(process.execPath, [WORKER_MAIN], {
    env: { ...env, DATABASE_URL: databaseUrl, UPLOADS_DIR: files, NOTIFICATIONS_ENABLED: 'false', LOG_LEVEL: 'warn', IMPORT_BATCH_ROWS: BATCH_ROWS },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  return child
}

async function memoryOf(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kib = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)[1])
  return { rssMiB: kib('VmRSS') / 1024, peakMiB: kib('VmHWM') / 1024 }
}

/** Runs one job in a fresh worker on `databaseUrl`: `queue(db)` adds it and answers its row's reader. */
async function measured(databaseUrl, queue) {
  const worker = startWorker(databaseUrl)
  const handle = createDb({ url: databaseUrl, poolMax: 2 })
  try {
    // Settled: migrated, idle, and its start-up peak forgotten.
    await sleep(3000)
    const idle = await memoryOf(worker.pid)
    await writeFile(`/proc/${worker.pid}/clear_refs`, '5')
    const read = await queue(handle)
    let row
    for (;;) {
      row = await read()
      if (['completed', 'validated', 'failed'].includes(row.status)) break
      await sleep(100)
    }
    if (row.status === 'failed') throw new Error(`the job failed: ${row.error}`)
    const peak = await memoryOf(worker.pid)
    return { row, seconds: Number(row.seconds), idleRssMiB: idle.rssMiB, peakRssMiB: peak.peakMiB }
  } finally {
    worker.kill('SIGTERM')
    await new Promise((resolve) => worker.once('exit', resolve))
    await handle.close()
  }
}

const source = postgres(sourceUrl, { max: 1, onnotice: () => {} })
const target = await openScratchDatabase('bench_csv_target')
const targetSql = postgres(target.url, { max: 1, onnotice: () => {} })
try {
  const [{ products }] = await source`select count(*)::int as products from products`
  console.log(`source: ${products} products`)

  const exportId = newId()
  const exported = await measured(sourceUrl, async ({ db, sql }) => {
    await db.transaction(async (tx) => {
      await sqlOf(tx).unsafe(`insert into exports (id, resource) values ($1, 'products')`, [exportId])
      await addCsvJob(tx, TASKS.exportCsv, exportId)
    })
    return async () => (await sql`select status, error, row_count, size_bytes, storage_key, extract(epoch from completed_at - started_at) as seconds from exports where id = ${exportId}`)[0]
  })
  const file = join(files, exported.row.storage_key)
  const exportResult = {
    rows: exported.row.row_count,
    megabytes: (await stat(file)).size / 1024 / 1024,
    seconds: exported.seconds,
    rowsPerSec: exported.row.row_count / exported.seconds,
    idleRssMiB: exported.idleRssMiB,
    peakRssMiB: exported.peakRssMiB,
  }
  console.log('export', exportResult)

  // What an empty shop makes before importing a catalog: its categories, stock locations and attribute definitions.
  const categories = await source`select id, name, slug, description from categories order by id`
  await targetSql`insert into categories ${targetSql(categories, 'id', 'name', 'slug', 'description')}`
  const definitions = await source`select id, key, owner, name, description, type, unit, choices, rules, filterable, public, position from attribute_definitions`
  if (definitions.length > 0) {
    await targetSql`insert into attribute_definitions ${targetSql(definitions, 'id', 'key', 'owner', 'name', 'description', 'type', 'unit', 'choices', 'rules', 'filterable', 'public', 'position')}`
  }
  const locations = await source`select name, priority from stock_locations where not is_default`
  if (locations.length > 0) await targetSql`insert into stock_locations ${targetSql(locations.map((location) => ({ id: newId(), ...location })), 'id', 'name', 'priority')}`

  const importRun = async (dryRun, existingId) => {
    const id = existingId ?? newId()
    return measured(target.url, async ({ db, sql }) => {
      await db.transaction(async (tx) => {
        // A dry run, then the same import applied (as POST /imports/{id}/apply does).
        if (existingId) await applyValidatedImport(tx, id)
        else {
          await sqlOf(tx).unsafe(`insert into imports (id, resource, dry_run, storage_key, size_bytes) values ($1, 'products', $2, $3, $4)`, [
            id,
            dryRun,
            exported.row.storage_key,
            exported.row.size_bytes,
          ])
        }
        await addCsvJob(tx, TASKS.importCsv, id)
      })
      return async () => ({ id, ...(await sql`select status, error, processed_rows, created, updated, refused, extract(epoch from completed_at - started_at) as seconds from imports where id = ${id}`)[0] })
    })
  }
  const summary = (run) => ({
    rows: run.row.processed_rows,
    created: run.row.created,
    refused: run.row.refused,
    seconds: run.seconds,
    rowsPerSec: run.row.processed_rows / run.seconds,
    idleRssMiB: run.idleRssMiB,
    peakRssMiB: run.peakRssMiB,
  })
  const dry = await importRun(true)
  console.log('import (dry run)', summary(dry))
  const applied = await importRun(false, dry.row.id)
  console.log('import (applied)', summary(applied))

  const compare = (sql) => sql`select md5(string_agg(concat_ws('|', id, title, slug, description, sku, price_minor, currency, inventory_quantity, weight, weight_unit, is_active, categories::text), ',' order by id)) as digest, count(*)::int as n from products`
  const [[a], [b]] = await Promise.all([compare(source), compare(targetSql)])
  console.log(`catalog after import: ${b.n} products, ${a.digest === b.digest ? 'identical to' : 'DIFFERENT from'} the source`)
  if (a.digest !== b.digest) process.exitCode = 1
} finally {
  await source.end()
  await targetSql.end()
  await target.drop()
  await rm(files, { recursive: true, force: true })
}
