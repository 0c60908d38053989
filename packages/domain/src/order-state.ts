/**
 * The order state machine as data: the statuses, the moves allowed from each, and the event each
 * move emits. `moveOrder` is the only way an order's status changes.
 */
import type { EventKind, FulfillmentStatus, OrderStatus, PaymentStatus } from './constants.js'
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

/**
 * What an order's money says. `paidMinor` sums the succeeded payments and `refundedMinor` the
 * refunds, so what the shop holds is their difference: nothing held after a refund is
 * `refunded`; holding the total is `paid` (an order of 0 owes nothing); anything less is
 * `partially_refunded` after a refund and `unpaid` before one. Amounts in minor units.
 */
export function paymentStatusOf(amounts: { totalMinor: number; paidMinor: number; refundedMinor: number }): PaymentStatus {
  const { totalMinor, paidMinor, refundedMinor } = amounts
  const held = paidMinor - refundedMinor
  if (refundedMinor > 0 && held <= 0) return 'refunded'
  if (held >= totalMinor) return 'paid'
  return refundedMinor > 0 ? 'partially_refunded' : 'unpaid'
}

/** What an order still owes: its total less what the shop holds (never negative). */
export function amountOwed(amounts: { totalMinor: number; paidMinor: number; refundedMinor: number }): number {
  return Math.max(0, amounts.totalMinor - (amounts.paidMinor - amounts.refundedMinor))
}

/** What an order's lines say about shipping: none, some or every unit fulfilled. */
export function fulfillmentStatusOf(lines: readonly { quantity: number; fulfilledQuantity: number }[]): FulfillmentStatus {
  const fulfilled = lines.reduce((sum, line) => sum + line.fulfilledQuantity, 0)
  if (fulfilled === 0) return 'unfulfilled'
  return lines.every((line) => line.fulfilledQuantity >= line.quantity) ? 'fulfilled' : 'partial'
}
