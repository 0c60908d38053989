/**
 * Jobs of a worker that died (SIGKILL, lost machine) stay locked for about four hours in
 * Graphile Worker. No task of ours runs longer than a delivery's time limit, so a job locked for
 * well beyond it belongs to a dead worker: every worker unlocks such jobs when it starts and
 * then periodically, and they run again (deliveries are at least once).
 */
import type pg from 'pg'

const UNLOCK_STALE = `with stale as (
  select array_agg(distinct locked_by) as workers from graphile_worker.jobs
  where locked_by is not null and locked_at < now() - make_interval(secs => $1::float8 / 1000))
select workers, graphile_worker.force_unlock_workers(workers) from stale where workers is not null`

/** Unlocks the jobs held longer than `staleAfterMs`; answers the worker ids it unlocked. */
export async function unlockStaleJobs(pool: pg.Pool, staleAfterMs: number): Promise<string[]> {
  const { rows } = await pool.query<{ workers: string[] }>(UNLOCK_STALE, [staleAfterMs])
  return rows[0]?.workers ?? []
}
