/**
 * The worker's statements on Graphile Worker's queue: the outbox relay (committed events to
 * fan-out jobs), a wide fan-out split into jobs, and the jobs of dead workers unlocked.
 */
import { TASKS } from '../queue.js'
import { CSV_HEARTBEAT_STALE_SECONDS } from './csv-jobs.js'
import type { SqlClient } from '../transaction.js'

// $1 the most outbox rows moved. Each row is deleted in the statement that adds its job, so a
// row becomes exactly one job whatever crashes; rows another relay has locked are skipped.
const RELAY = `with moved as (
  delete from event_outbox where id in (select id from event_outbox order by id limit $1 for update skip locked)
  returning id, event_ids)
select count(*)::int as "moved", case when count(*) > 0 then (
  select count(*) from graphile_worker.add_jobs(array(
    select row('${TASKS.fanOutEvent}', json_build_object('event_ids', event_ids), null, null, null, null, null, null)::graphile_worker.job_spec
    from moved order by id))) end as "queued"
from moved`

/** Turns up to `limit` outbox rows (one committed transaction's events each) into fan-out jobs; answers how many. */
export async function relayOutboxRows(sql: SqlClient, limit: number): Promise<number> {
  const [row] = await sql.unsafe<{ moved: number }[]>(RELAY, [limit], { prepare: true })
  return row?.moved ?? 0
}

// $1 the shares, as JSON: [{event_ids, webhook_ids}].
const SPLIT = `select count(*) from graphile_worker.add_jobs(array(
  select row('${TASKS.fanOutEvent}', json_build_object('event_ids', c.event_ids, 'webhook_ids', c.webhook_ids),
    null, null, null, null, null, null)::graphile_worker.job_spec
  from jsonb_to_recordset($1::jsonb) as c(event_ids uuid[], webhook_ids uuid[])))`

/** Adds a fan-out job for each share of a fan-out: the pairs (event_ids[i], webhook_ids[i]). */
export async function splitFanOut(sql: SqlClient, shares: readonly { event_ids: string[]; webhook_ids: string[] }[]): Promise<void> {
  await sql.unsafe(SPLIT, [JSON.stringify(shares)], { prepare: true })
}

// $1 the stale age of an email's job (send-notification), $2 that of every other job, in ms. A CSV
// export or import may run for minutes: its job is stale when its heartbeat (csv-jobs.ts) is.
const UNLOCK_STALE = `with stale as (
  select array_agg(distinct locked_by) as workers from graphile_worker.jobs j
  where locked_by is not null and case
    when task_identifier in ('${TASKS.exportCsv}', '${TASKS.importCsv}') then
      locked_at < now() - make_interval(secs => ${CSV_HEARTBEAT_STALE_SECONDS})
      and not exists (select from exports e where e.id = split_part(j.key, ':', 2)::uuid and e.heartbeat_at > now() - make_interval(secs => ${CSV_HEARTBEAT_STALE_SECONDS}))
      and not exists (select from imports i where i.id = split_part(j.key, ':', 2)::uuid and i.heartbeat_at > now() - make_interval(secs => ${CSV_HEARTBEAT_STALE_SECONDS}))
    else locked_at < now() - make_interval(secs => (case when task_identifier = '${TASKS.sendNotification}' then $1 else $2 end)::float8 / 1000) end)
select workers, graphile_worker.force_unlock_workers(workers) from stale where workers is not null`

/**
 * Unlocks every job of the workers holding a job longer than its task can run (dead workers);
 * answers the worker ids it unlocked. An email's SMTP exchange may take longer than a delivery,
 * so its jobs have their own age: a dead worker's deliveries are not held back by it.
 */
export async function unlockStaleJobs(sql: SqlClient, staleAfter: { emailMs: number; otherMs: number }): Promise<string[]> {
  const [row] = await sql.unsafe<{ workers: string[] }[]>(UNLOCK_STALE, [staleAfter.emailMs, staleAfter.otherMs], { prepare: true })
  return row?.workers ?? []
}
