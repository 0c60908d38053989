import type { EventKind } from '@commerce/domain'
import { sqlOf, type Executor } from './client.js'
import { EVENTS_CHANNEL } from './queue.js'
import { newId } from './schema/columns.js'

export interface NewEvent {
  kind: EventKind
  data: Record<string, unknown>
  customerId?: string | null
  requestId?: string | null
}

/**
 * Writes an event row inside the caller's transaction, so an event exists exactly when the
 * change it describes was committed, together with its outbox row (the worker's relay turns it
 * into the fan-out job of webhook deliveries) and a NOTIFY of its id (the API instances'
 * WebSocket clients and the relay, sent at commit).
 */
export async function writeEvent(tx: Executor, event: NewEvent): Promise<string> {
  const [id] = await writeEvents(tx, [event])
  return id!
}

// One statement text for any number of events, so PostgreSQL prepares it once per connection;
// the events travel as one JSON array (parsed once, where an array of JSON texts would be
// unescaped and then parsed again element by element).
// One outbox row per statement, not per event: a checkout's three events become one fan-out job.
// The outbox row, not the job itself (graphile_worker.add_job, PL/pgSQL that upserts its task and
// writes an indexed job row and a NOTIFY of its own), is what the change's transaction pays for.
const INSERT_EVENTS = `with written as (
  insert into events (id, kind, data, customer_id, request_id)
  select id, kind, data, customer_id, request_id
  from jsonb_to_recordset($1::jsonb) as e(id uuid, kind text, data jsonb, customer_id uuid, request_id text)
  returning id),
queued as (insert into event_outbox (event_ids) select array_agg(id order by id) from written)
select count(pg_notify('${EVENTS_CHANNEL}', id::text)) as "notified" from written`

/** Several events of one change in one statement, in the given order (ids ascend with it). */
export async function writeEvents(tx: Executor, list: readonly NewEvent[]): Promise<string[]> {
  const ids = list.map(() => newId())
  const rows = list.map((event, index) => ({
    id: ids[index],
    kind: event.kind,
    data: event.data,
    customer_id: event.customerId ?? null,
    request_id: event.requestId ?? null,
  }))
  await sqlOf(tx).unsafe(INSERT_EVENTS, [JSON.stringify(rows)], { prepare: true })
  return ids
}
