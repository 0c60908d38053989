/**
 * What the API's WebSocket feed reads from the event log (apps/api routes/ws): the events a
 * NOTIFY announced, those since an id (a replay after the LISTEN connection came back, the look
 * for events committed but never announced), and a resume's range, a page at a time.
 */
import type { events } from '../schema/index.js'
import type { SqlClient } from '../transaction.js'
import type { JsonOf } from './json-rows.js'

/** An event as the feed sends it. */
export type FeedEvent = JsonOf<typeof events, 'id' | 'kind' | 'data' | 'customerId' | 'resourceId' | 'sequence'> & {
  /** created_at as ISO 8601 UTC. */
  timestamp: string
}

const EVENT_COLUMNS = `id, kind, data, customer_id as "customerId", resource_id as "resourceId", sequence,
    to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as timestamp`

// $1 the ids, in the order notified (commit order).
const NOTIFIED = `select ${EVENT_COLUMNS} from unnest($1::uuid[]) with ordinality as notified (id, position)
    join events using (id) order by position`
const SINCE = `select ${EVENT_COLUMNS} from events where id >= $1::uuid order by id`
// Only the ids (the primary key's index alone): the events are loaded only when some are new.
const IDS_SINCE = 'select id from events where id >= $1::uuid'
const NEWEST = 'select id from events order by id desc limit 1'
// $1 after, $2 up to, $3 the most counted.
const COUNT_BETWEEN = `select count(*)::int as count from (select 1 from events where id > $1::uuid and id <= $2::uuid limit $3) as range`
// $1 after, $2 up to, $3 the viewer sees every event, $4 the viewer's customer, $5 the page's size.
const PAGE_BETWEEN = `select ${EVENT_COLUMNS} from events
    where id > $1::uuid and id <= $2::uuid
      and ($3::boolean or kind like 'product.%' or customer_id = $4::uuid)
    order by id limit $5`

/** The events of these ids, in this order; ids of no event are left out. */
export function notifiedEvents(sql: SqlClient, ids: readonly string[]): Promise<FeedEvent[]> {
  return sql.unsafe<FeedEvent[]>(NOTIFIED, [ids as string[]], { prepare: true })
}

/** The events with an id from `id` on, in id order. */
export function eventsSince(sql: SqlClient, id: string): Promise<FeedEvent[]> {
  return sql.unsafe<FeedEvent[]>(SINCE, [id], { prepare: true })
}

/** The ids of the events from `id` on. */
export async function eventIdsSince(sql: SqlClient, id: string): Promise<string[]> {
  const rows = await sql.unsafe<{ id: string }[]>(IDS_SINCE, [id], { prepare: true })
  return rows.map((row) => row.id)
}

/** The largest event id there is; undefined when there are none. */
export async function newestEventId(sql: SqlClient): Promise<string | undefined> {
  const [row] = await sql.unsafe<{ id: string }[]>(NEWEST, [], { prepare: true })
  return row?.id
}

/** How many events have an id in (after, upTo], counted up to `atMost` (the primary key's index alone). */
export async function countEventsBetween(sql: SqlClient, range: { after: string; upTo: string; atMost: number }): Promise<number> {
  const [row] = await sql.unsafe<{ count: number }[]>(COUNT_BETWEEN, [range.after, range.upTo, range.atMost], { prepare: true })
  return row!.count
}

/**
 * The first `limit` events with an id in (after, upTo], in id order, narrowed to what a viewer
 * may see (every event, or product events and its own customer's).
 */
export function eventPageBetween(
  sql: SqlClient,
  page: { after: string; upTo: string; seesAll: boolean; customerId: string | null; limit: number },
): Promise<FeedEvent[]> {
  return sql.unsafe<FeedEvent[]>(PAGE_BETWEEN, [page.after, page.upTo, page.seesAll, page.customerId, page.limit], { prepare: true })
}
