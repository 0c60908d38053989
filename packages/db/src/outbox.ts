import type { EventKind } from '@commerce/domain'
import { sqlOf, type Executor } from './client.js'
import { EVENTS_CHANNEL, TASKS } from './queue.js'
import { newId } from './schema/columns.js'

export interface NewEvent {
  kind: EventKind
  data: Record<string, unknown>
  customerId?: string | null
  requestId?: string | null
}

/**
 * Writes an event row inside the caller's transaction, so an event exists exactly when the
 * change it describes was committed, together with its fan-out job (the worker's webhook
 * deliveries) and a NOTIFY of its id (the API instances' WebSocket clients, sent at commit).
 */
export async function writeEvent(tx: Executor, event: NewEvent): Promise<string> {
  const [id] = await writeEvents(tx, [event])
  return id!
}

// One statement text for any number of events, so PostgreSQL prepares it once per connection.
// One fan-out job per statement, not per event: a checkout's three events are one job.
const INSERT_EVENTS = `with written as (
  insert into events (id, kind, data, customer_id, request_id)
  select * from unnest($1::uuid[], $2::text[], $3::jsonb[], $4::uuid[], $5::text[])
  returning id)
select
  (select graphile_worker.add_job('${TASKS.fanOutEvent}', json_build_object('event_ids', array(select id from written order by id)))) is not null as "queued",
  (select count(pg_notify('${EVENTS_CHANNEL}', id::text)) from written) as "notified"`

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
