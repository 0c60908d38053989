/**
 * What the platform asks the database (apps/api routes/system, plugins/metrics): whether it
 * answers (GET /ready), and the figures a metrics scrape reads.
 */
import type { SqlClient } from '../transaction.js'

/** Resolves once the database answered a trivial query. */
export async function pingDatabase(sql: SqlClient): Promise<void> {
  await sql.unsafe('select 1')
}

/**
 * One round trip, as one simple-protocol query (so the statement timeout applies to each
 * statement and nothing is prepared): the connections to this database named `commerce…` by name
 * and state, Graphile Worker's jobs by task and state, and the event outbox's rows waiting for a
 * worker's relay (counted up to a million, so a huge backlog stays cheap to read). `set local`
 * ends with the implicit transaction, which also keeps it PgBouncer-safe.
 */
const SAMPLE = `set local statement_timeout = 1000;
select application_name as "name", coalesce(state, 'unknown') as "state", count(*)::int as "count"
  from pg_stat_activity where datname = current_database() and application_name like 'commerce%' group by 1, 2;
select task_identifier as "task", case
    when locked_at is not null then 'locked'
    when attempts >= max_attempts then 'failed'
    when run_at > now() then 'scheduled'
    else 'ready' end as "state", count(*)::int as "count"
  from graphile_worker.jobs group by 1, 2;
select count(*)::int as "count" from (select from event_outbox limit 1000000) as waiting`

/** The job states a sample counts jobs by (the case of SAMPLE's second statement). */
export const JOB_STATES = ['ready', 'scheduled', 'locked', 'failed'] as const

interface Counted {
  count: number
}

export interface DatabaseSample {
  connections: (Counted & { name: string; state: string })[]
  jobs: (Counted & { task: string; state: (typeof JOB_STATES)[number] })[]
  outboxRows: number
}

/** Reads the sample, or fails after `timeoutMs` (the query canceled). */
export async function sampleDatabase(sql: SqlClient, timeoutMs: number): Promise<DatabaseSample> {
  let timer: NodeJS.Timeout | undefined
  const query = sql.unsafe(SAMPLE)
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      query.cancel()
      reject(new Error(`no answer within ${timeoutMs} ms`))
    }, timeoutMs)
  })
  try {
    const results = (await Promise.race([query, timeout])) as unknown as [unknown, DatabaseSample['connections'], DatabaseSample['jobs'], [Counted]]
    return { connections: [...results[1]], jobs: [...results[2]], outboxRows: results[3][0].count }
  } finally {
    clearTimeout(timer)
  }
}
