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

// One statement text for any number of events, so PostgreSQL prepares it once per connection.
// One outbox row per statement, not per event: a checkout's three events become one fan-out job.
// The outbox row, not the job itself (graphile_worker.add_job, PL/pgSQL that upserts its task and
// writes an indexed job row and a NOTIFY of its own), is what the change's transaction pays for.
const INSERT_EVENTS = `with written as (
  insert into events (id, kind, data, customer_id, request_id)
  select * from unnest($1::uuid[], $2::text[], $3::jsonb[], $4::uuid[], $5::text[])
  returning id),
queued as (insert into event_outbox (event_ids) values ($1::uuid[]))
select count(pg_notify('${EVENTS_CHANNEL}', id::text)) as "notified" from written`

/** Several events of one change in one statement, in the given order (ids ascend with it). */
export async function writeEvents(tx: Executor, list: readonly NewEvent[]): Promise<string[]> {
  const ids = list.map(() => newId())
  await sqlOf(tx).unsafe(
    INSERT_EVENTS,
    [
      ids,
      list.map((event) => event.kind),
      list.map((event) => JSON.stringify(event.data)),
      list.map((event) => event.customerId ?? null),
      list.map((event) => event.requestId ?? null),
    ],
    { prepare: true },
  )
  return ids
}
