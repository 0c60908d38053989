/** An order's history: its events in sequence, each with who made the change and the money it moved. */
import { and, eq, isNull, sql } from 'drizzle-orm'
import { ACTOR_TYPES, type OrderHistory, type OrderHistoryEntry } from '@commerce/domain'
import { events, orders, type Database } from '@commerce/db'
import { notFound } from '../../errors.js'
import { key, keyset, selectList, type PageQuery } from '../../list-cursor.js'

type ActorType = (typeof ACTOR_TYPES)[number]

/** `user:<id>` → { type: 'user', id }; null for none. */
function actorOf(actor: string | null): OrderHistoryEntry['actor'] {
  if (actor === null) return null
  const at = actor.indexOf(':')
  return { type: actor.slice(0, at) as ActorType, id: actor.slice(at + 1) }
}

// The money of the events that move it: a payment taken, a refund, a late payment given back.
const captured = sql<string | null>`case when ${events.kind} = 'payment.succeeded' then ${events.data}->>'amount_captured' end`
const refunded = sql<string | null>`case ${events.kind}
  when 'order.refunded' then ${events.data}->'refund'->>'amount'
  when 'payment.refunded' then ${events.data}->>'amount_refunded' end`

/** In sequence (one per event of the order; the id only makes the order total): events_resource_idx (resource_id, sequence). */
const HISTORY_KEYSET = keyset('order_history', 'asc', [key.integer(events.sequence), key.uuid(events.id)])

export async function orderHistory(db: Database, orderId: string, query: PageQuery): Promise<OrderHistory> {
  const [order] = await db
    .select({ id: orders.id })
    .from(orders)
    .where(and(eq(orders.id, orderId), isNull(orders.archivedAt)))
  if (!order) throw notFound('Order')
  const ofOrder = eq(events.resourceId, orderId)
  const select = db
    .select({
      id: events.id,
      kind: events.kind,
      sequence: events.sequence,
      createdAt: events.createdAt,
      actor: events.actor,
      requestId: events.requestId,
      captured,
      refunded,
      cursorKey: HISTORY_KEYSET.cursorKey,
    })
    .from(events)
    .$dynamic()
  const { rows, meta } = await selectList(HISTORY_KEYSET, query, select, ofOrder, () => db.$count(events, ofOrder))
  // The amounts as the events' data showed them: major units.
  const amount = (text: string | null) => (text === null ? 0 : Number(text))
  return {
    history: rows.map((row) => ({
      event_id: row.id,
      event: row.kind,
      sequence: row.sequence,
      timestamp: row.createdAt.toISOString(),
      actor: actorOf(row.actor),
      request_id: row.requestId,
      amount_captured: amount(row.captured),
      amount_refunded: amount(row.refunded),
    })),
    meta,
  }
}
