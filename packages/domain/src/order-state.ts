/**
 * The order state machine as data: the statuses, the moves allowed from each, and the event each
 * move emits. `moveOrder` is the only way an order's status changes.
 */
import type { EventKind, OrderStatus } from './constants.js'
import { DomainError } from './errors.js'

export const ORDER_MOVES: Readonly<Record<OrderStatus, Readonly<Partial<Record<OrderStatus, EventKind>>>>> = {
  // pending → paid when payments cover the total; cancelling restocks.
  pending: { paid: 'order.paid', cancelled: 'order.cancelled' },
  // The first fulfillment ships it; cancelling a paid order refunds and restocks it.
  paid: { shipped: 'order.shipped', cancelled: 'order.cancelled', refunded: 'order.refunded' },
  shipped: { completed: 'order.completed', refunded: 'order.refunded' },
  completed: { refunded: 'order.refunded' },
  cancelled: {},
  refunded: {},
}

/** The statuses an order in `from` may move to. */
export function allowedMoves(from: OrderStatus): OrderStatus[] {
  return Object.keys(ORDER_MOVES[from]) as OrderStatus[]
}

/**
 * The event of the move `from` → `to`, or an `invalid_state_transition` error that lists the
 * moves allowed from `from`.
 */
export function moveOrder(from: OrderStatus, to: OrderStatus): EventKind {
  const event = ORDER_MOVES[from][to]
  if (event) return event
  const allowed = allowedMoves(from)
  throw new DomainError(
    'invalid_state_transition',
    `An order cannot move from ${from} to ${to}; allowed from ${from}: ${allowed.length > 0 ? allowed.join(', ') : 'none'}`,
    [{ field: 'status', message: `allowed: ${allowed.join(', ')}` }],
  )
}
