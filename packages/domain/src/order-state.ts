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
 * An order's money, in minor units: `paidMinor` sums what was captured, `refundedMinor` what was
 * given back of it, and `authorizedMinor` what providers hold for the order and have not
 * captured (0 when omitted: an order paid only by immediate charges).
 */
export interface OrderMoney {
  totalMinor: number
  authorizedMinor?: number
  paidMinor: number
  refundedMinor: number
}

/**
 * What an order's money says. The shop keeps `paidMinor - refundedMinor` (kept) and the
 * providers hold `authorizedMinor` more:
 * - `paid`: what the shop keeps covers the total (an order of 0 owes nothing);
 * - `partially_captured`: some of the total is kept, less than all of it, and the holds cover
 *   the rest;
 * - `authorized`: nothing is kept and the holds cover the total;
 * - `refunded`: something was refunded, nothing is kept, and no hold covers the total;
 * - `partially_refunded`: something was refunded, something is kept, and the total is not covered;
 * - `unpaid`: nothing refunded and the total not covered (nothing paid, or a part: a partial
 *   capture whose rest was released owes that rest, as a part payment does).
 * A covered total says so even after a refund (a refunded part payment followed by a payment of
 * the whole is `paid`). Without holds these are the statuses as they were before holds existed.
 */
export function paymentStatusOf(money: OrderMoney): PaymentStatus {
  const { totalMinor, paidMinor, refundedMinor } = money
  const authorizedMinor = money.authorizedMinor ?? 0
  const kept = paidMinor - refundedMinor
  const covered = kept + authorizedMinor >= totalMinor
  // `authorizedMinor === 0`: a fully refunded order of 0 is refunded, not paid, as before holds.
  if (refundedMinor > 0 && kept <= 0 && (!covered || authorizedMinor === 0)) return 'refunded'
  if (kept >= totalMinor) return 'paid'
  if (covered) return kept > 0 ? 'partially_captured' : 'authorized'
  return refundedMinor > 0 ? 'partially_refunded' : 'unpaid'
}

/** What an order still owes: its total less what the shop keeps and what providers hold for it (never negative). */
export function amountOwed(money: OrderMoney): number {
  return Math.max(0, money.totalMinor - (money.paidMinor - money.refundedMinor) - (money.authorizedMinor ?? 0))
}

/** What an order's lines say about shipping: none, some or every unit fulfilled. */
export function fulfillmentStatusOf(lines: readonly { quantity: number; fulfilledQuantity: number }[]): FulfillmentStatus {
  const fulfilled = lines.reduce((sum, line) => sum + line.fulfilledQuantity, 0)
  if (fulfilled === 0) return 'unfulfilled'
  return lines.every((line) => line.fulfilledQuantity >= line.quantity) ? 'fulfilled' : 'partial'
}
