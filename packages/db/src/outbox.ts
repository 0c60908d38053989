import type { EventKind } from '@commerce/domain'
import { events } from './schema/events.js'
import type { Executor } from './client.js'

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
  const [row] = await tx
    .insert(events)
    .values({
      kind: event.kind,
      data: event.data,
      customerId: event.customerId ?? null,
      requestId: event.requestId ?? null,
    })
    .returning({ id: events.id })
  return row!.id
}
