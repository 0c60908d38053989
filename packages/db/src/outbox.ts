import type { EventKind } from '@commerce/domain'
import { sqlOf, type Executor } from './client.js'
import { newId } from './schema/columns.js'

export interface NewEvent {
  kind: EventKind
  data: Record<string, unknown>
  customerId?: string | null
  requestId?: string | null
}

/**
 * Writes an event row inside the caller's transaction, so an event exists exactly when the
 * change it describes was committed. Delivery (webhooks, WebSocket) reads from here.
 */
export async function writeEvent(tx: Executor, event: NewEvent): Promise<string> {
  const [id] = await writeEvents(tx, [event])
  return id!
}

// One statement text for any number of events, so PostgreSQL prepares it once per connection.
const INSERT_EVENTS = `insert into events (id, kind, data, customer_id, request_id)
  select * from unnest($1::uuid[], $2::text[], $3::jsonb[], $4::uuid[], $5::text[])`

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
