import type { EventKind } from '@commerce/domain'
import { sqlOf, type Executor } from './client.js'
import { announceWhenCommitted } from './transaction.js'
import { newId } from './schema/columns.js'

export interface NewEvent {
  kind: EventKind
  /**
   * The resource whose sequence the event takes a number of: the order for order.* events and
   * the payments of an order, else the product, customer or subscription the data is.
   */
  resourceId: string
  data: Record<string, unknown>
  /** `data` serialized already (JSON.stringify(data)), when the caller has it: written as is. */
  dataJson?: string
  customerId?: string | null
  requestId?: string | null
  /** Who made the change (EventOrigin). */
  actor?: string | null
}

/**
 * Where a change comes from, as its events record it: the request, and who made it
 * (`user:<id>`, `api_key:<id>`, `oauth_client:<id>`, `provider:<name>` for a payment provider's
 * notification; null for a guest or the worker).
 */
export interface EventOrigin {
  requestId: string | null
  actor: string | null
}

/**
 * Writes an event row inside the caller's transaction, so an event exists exactly when the
 * change it describes was committed, together with its outbox row (the worker's relay turns it
 * into the fan-out job of webhook deliveries); its id is announced once committed (announce.ts:
 * the API instances' WebSocket clients and the relays).
 */
export async function writeEvent(tx: Executor, event: NewEvent): Promise<string> {
  const [id] = await writeEvents(tx, [event])
  return id!
}

/**
 * Writing events as CTEs (`incoming`, `numbered`, `written`, `queued`) of a statement, over the
 * JSON array eventRows makes: the parameter numbered `source`, or an SQL expression (events kept
 * in a row, such as a checkout reservation's). The events travel as one JSON array (parsed once, where an array of
 * JSON texts would be unescaped and then parsed again element by element); their data is stored
 * as `json`, the text as written, only checked: building `jsonb` (a tree, sorted keys, numerics)
 * cost about a twentieth of a checkout's database time, and nothing queries inside it. One outbox row per
 * statement, not per event: a checkout's three events become one fan-out job. The outbox row,
 * not the job itself (graphile_worker.add_job, PL/pgSQL that upserts its task and writes an
 * indexed job row and a NOTIFY of its own), is what the change's transaction pays for. Each
 * event takes the next number of its resource's sequence (eventSequences).
 */
export function eventsCte(source: number | string): string {
  const events = typeof source === 'number' ? `$${source}::json` : source
  return `incoming as (
  select * from json_to_recordset(${events})
    as e(id uuid, kind text, data json, customer_id uuid, request_id text, actor text, resource_id uuid)),
numbered as (
  insert into event_sequences as s (resource_id, last_sequence)
  -- In resource order, so statements numbering the same resources lock them in one order.
  select resource_id, count(*) from incoming group by resource_id order by resource_id
  on conflict (resource_id) do update set last_sequence = s.last_sequence + excluded.last_sequence
  returning resource_id, last_sequence),
written as (
  insert into events (id, kind, data, customer_id, request_id, actor, resource_id, sequence)
  select e.id, e.kind, e.data, e.customer_id, e.request_id, e.actor, e.resource_id,
    n.last_sequence - count(*) over (partition by e.resource_id) + row_number() over (partition by e.resource_id order by e.id)
  from incoming e join numbered n using (resource_id)
  returning id),
queued as (insert into event_outbox (event_ids) select array_agg(id order by id) from written having count(*) > 0)`
}

// One statement text for any number of events, so PostgreSQL prepares it once per connection.
const INSERT_EVENTS = `with ${eventsCte(1)} select count(*) as "written" from written`

/**
 * Events for eventsCte: their ids (made now, ascending in the given order) and the parameter.
 * Events that share one data object (an order's created and paid events) have it serialized once.
 */
export function eventRows(list: readonly NewEvent[]): { ids: string[]; json: string } {
  const ids = list.map(() => newId())
  const texts = new Map<object, string>()
  const dataText = (data: object) => {
    let text = texts.get(data)
    if (text === undefined) texts.set(data, (text = JSON.stringify(data)))
    return text
  }
  const rows = list.map(
    (event, index) =>
      `{"id":"${ids[index]}","kind":${JSON.stringify(event.kind)},"data":${event.dataJson ?? dataText(event.data)},` +
      `"customer_id":${JSON.stringify(event.customerId ?? null)},"request_id":${JSON.stringify(event.requestId ?? null)},"actor":${JSON.stringify(event.actor ?? null)},` +
      `"resource_id":${JSON.stringify(event.resourceId)}}`,
  )
  return { ids, json: `[${rows.join(',')}]` }
}

/** Several events of one change in one statement, in the given order (ids ascend with it). */
export async function writeEvents(tx: Executor, list: readonly NewEvent[]): Promise<string[]> {
  const { ids, json } = eventRows(list)
  const sql = sqlOf(tx)
  await sql.unsafe(INSERT_EVENTS, [json], { prepare: true })
  announceWhenCommitted(sql, ids)
  return ids
}
