/**
 * Replaying a subscription's deliveries (POST /webhooks/:id/replay, apps/api): what a replay
 * selects, counted; the events it would make a delivery for; and the replay itself. Run in one
 * transaction that holds the subscription's row lock, so two replays of one subscription run one
 * after the other.
 */
import type { SqlClient } from '../transaction.js'
import { deliveryJobSpec } from './delivery-jobs.js'

/** The deliveries and events a replay selects. */
export interface ReplaySelection {
  webhookId: string
  /** [from, to): the events' created_at, ISO 8601. */
  from: string
  to: string
  /** Event kinds; null: any. */
  kinds: string[] | null
  /** The statuses of the existing deliveries to replay. */
  statuses: string[]
  /** Whether events the subscription wants but has no delivery of count (they get one). */
  missing: boolean
}

const selectionValues = (s: ReplaySelection) => [s.webhookId, s.from, s.to, s.kinds, s.statuses, s.missing]

/**
 * What a replay selects, over the parameters of selectionValues ($1 webhook, $2 from, $3 to, $4
 * kinds, $5 delivery statuses, $6 whether missing events count): `existing` deliveries, and
 * `missing` events the subscription wants but has no delivery of. A delivery is made after its
 * event, so its own created_at bound lets the (webhook_id, created_at) index narrow the scan.
 */
const REPLAY_SELECTION = `existing as (
  select d.id, d.attempts, d.event_id from webhook_deliveries d join events e on e.id = d.event_id
  where d.webhook_id = $1 and d.created_at >= $2::timestamptz and e.created_at >= $2::timestamptz and e.created_at < $3::timestamptz
    and ($4::text[] is null or e.kind = any($4::text[])) and d.status = any($5::text[])),
missing as (
  select e.id as event_id from events e join webhooks w on w.id = $1 and (e.kind = any(w.events) or '*' = any(w.events))
  where $6::bool and e.created_at >= $2::timestamptz and e.created_at < $3::timestamptz and ($4::text[] is null or e.kind = any($4::text[]))
    and not exists (select from webhook_deliveries d where d.webhook_id = $1 and d.event_id = e.id))`

const COUNT_REPLAY = `with ${REPLAY_SELECTION}
select (select count(*) from existing)::int as "existing", (select count(*) from missing)::int as "missing"`

// $7 the most events read.
const MISSING_EVENTS = `with ${REPLAY_SELECTION} select event_id as "eventId" from missing order by event_id limit $7`

// Existing deliveries become pending with their next attempt queued now (the job key of that
// attempt number moves a waiting retry instead of adding one); missing events get a delivery
// ($7 ids, $8 events) and its first attempt; at most $9 existing ones. Jobs are added in event order.
const REPLAY = `with ${REPLAY_SELECTION},
picked as (select id, attempts, event_id from existing order by event_id limit $9),
updated as (
  update webhook_deliveries d set status = 'pending', next_attempt_at = now(), updated_at = now()
  from picked p where d.id = p.id returning d.id, p.attempts + 1 as attempt, d.event_id),
made as (
  insert into webhook_deliveries (id, webhook_id, event_id, status, attempts, next_attempt_at)
  select m.id, $1, m.event_id, 'pending', 0, now() from unnest($7::uuid[], $8::uuid[]) as m(id, event_id)
  on conflict (webhook_id, event_id) do nothing
  returning id, 1 as attempt, event_id),
queued as (select * from updated union all select * from made)
select (select count(*) from made)::int as "created", (select count(*) from graphile_worker.add_jobs(array(
  select ${deliveryJobSpec({ deliveryId: 'q.id', attempt: 'q.attempt', retry: '0', runAt: 'null' })}
  from queued q order by q.event_id)))::int as "replayed"`

/** How many existing deliveries and missing events the selection holds. */
export async function countReplay(sql: SqlClient, selection: ReplaySelection): Promise<{ existing: number; missing: number }> {
  const [counted] = await sql.unsafe<{ existing: number; missing: number }[]>(COUNT_REPLAY, selectionValues(selection))
  return counted!
}

/** The ids of the missing events, in id order, at most `limit`. */
export async function missingEvents(sql: SqlClient, selection: ReplaySelection, limit: number): Promise<string[]> {
  const rows = await sql.unsafe<{ eventId: string }[]>(MISSING_EVENTS, [...selectionValues(selection), limit])
  return rows.map((row) => row.eventId)
}

/**
 * Replays at most `limit` existing deliveries, and makes the deliveries `made` (of missing
 * events, ids made by the caller); every one gets its attempt's job, now.
 */
export async function replayDeliveries(
  sql: SqlClient,
  selection: ReplaySelection,
  replay: { made: { id: string; eventId: string }[]; limit: number },
): Promise<{ created: number; replayed: number }> {
  const { made, limit } = replay
  const [queued] = await sql.unsafe<{ created: number; replayed: number }[]>(REPLAY, [
    ...selectionValues(selection),
    made.map((delivery) => delivery.id),
    made.map((delivery) => delivery.eventId),
    limit,
  ])
  return queued!
}
