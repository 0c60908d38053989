/**
 * What an order edit does to an order's money. Units not shipped may be cancelled (a line keeps
 * fewer units) and lines added; shipped units cannot change (they are returned instead).
 *
 * A cancelled unit takes its share of the line's amounts off the order by the same cumulative
 * rule as a return (returns.ts unitsShare), counted together with the units returned before, so
 * whatever mix of edits and returns takes a line's units back, their shares add up to exactly the
 * line's total. Added lines come priced by the caller (today's price and tax, no coupon: the
 * order's coupons were for what was bought then, as Shopify's order edits do). Shipping does not
 * change.
 *
 * The money: returns and refunds by amount give back value and leave the total alone, so they
 * never make the customer owe anything. What counts as paid towards the total is what was
 * captured less what earlier edits refunded, plus what received returns credited to it instead of
 * refunding (an exchange's new items are paid that way); an edit refunds what that exceeds the
 * new total by (never more than the shop still keeps), and the customer owes what the new total
 * exceeds it, the holds and the value of the exchanges still on their way back by (balanceDue).
 */
import type { LineTotals } from './cart-ledger.js'
import type { OrderStatus } from './constants.js'
import { DomainError, type ErrorDetail } from './errors.js'
import { amountOwed } from './order-state.js'
import { unitsShare, type ReturnLineRefund } from './returns.js'

export interface EditableLine {
  id: string
  /** As ordered. */
  quantity: number
  fulfilledQuantity: number
  /** Cancelled by earlier edits. */
  canceledQuantity: number
  /** Units of returns received: with the cancelled ones, the base of the cumulative shares. */
  receivedReturnQuantity: number
  subtotalMinor: number
  discountMinor: number
  taxMinor: number
  totalMinor: number
}

export interface OrderTotalsMinor {
  subtotalMinor: number
  discountMinor: number
  taxMinor: number
  shippingMinor: number
  totalMinor: number
}

export interface OrderEditInput {
  lines: readonly EditableLine[]
  /** The units each named line is to keep (as ordered less cancelled): fewer cancels units not shipped. */
  quantities: readonly { lineId: string; quantity: number }[]
  /** Lines added, priced. */
  added: readonly LineTotals[]
  order: OrderTotalsMinor & OrderBalance & {
    /** Every refund of the order: of edits, returns and by amount. */
    refundedMinor: number
  }
}

/** What an order's money is after the sale, in minor units. */
export interface OrderBalance {
  totalMinor: number
  /** Captured. */
  paidMinor: number
  /** Held by the provider, not captured. */
  authorizedMinor: number
  /** What edits refunded: they settle the total (returns and refunds by amount give value back instead). */
  editRefundedMinor: number
  /** What received returns credited towards the total instead of refunding it. */
  creditedMinor: number
  /** The refunds, as estimated, of exchanges not received yet: they will pay for the exchange's new items. */
  pendingCreditMinor: number
}

/** Captured, less what edits refunded, plus what returns credited. */
const paidTowardsTotal = (money: OrderBalance) => money.paidMinor - money.editRefundedMinor + money.creditedMinor

/** What the customer owes now: what the total exceeds what was paid towards it, the holds and the exchanges on their way back by. */
export function balanceDue(money: OrderBalance): number {
  return Math.max(0, money.totalMinor - paidTowardsTotal(money) - money.authorizedMinor - money.pendingCreditMinor)
}

/**
 * What an order owes, by its status: a pending order its total less what the shop keeps and holds
 * (amountOwed: a refund of a part payment is owed again); a paid or shipped order what edits and
 * exchanges left to pay (balanceDue); any other nothing (completed, cancelled, refunded).
 */
export function owedBy(status: OrderStatus, money: OrderBalance & { refundedMinor: number }): number {
  if (status === 'pending') return amountOwed(money)
  return status === 'paid' || status === 'shipped' ? balanceDue(money) : 0
}

/**
 * A received return's refund, settled: first it pays what the order owes (`balanceDue` without
 * this return's own pending credit): that part is credited, not refunded; the rest goes back,
 * never more than the shop keeps (`refundableMinor`).
 */
export function settleReturnRefund(refundMinor: number, balanceDueMinor: number, refundableMinor: number): { credit: number; refund: number } {
  const credit = Math.min(refundMinor, balanceDueMinor)
  return { credit, refund: Math.max(0, Math.min(refundMinor - credit, refundableMinor)) }
}

export interface OrderEditMoney {
  /** The units each line gives up and the share of its amounts they take off the order. */
  canceled: ReturnLineRefund[]
  added: LineTotals[]
  /** The order's totals after the edit; shipping unchanged. */
  totals: { subtotal: number; discount: number; tax: number; shipping: number; total: number }
  /** The new total less the old. */
  difference: number
  /** What the shop gives back: what it keeps beyond the new total. */
  refund: number
  /** What the order owes after the edit and the refund. */
  owed: number
}

/** Refuses an unknown or repeated line, a quantity above what the line keeps now or below what was shipped; every refusal listed. */
function checkQuantities(lines: ReadonlyMap<string, EditableLine>, quantities: OrderEditInput['quantities']): void {
  const details: ErrorDetail[] = []
  const seen = new Set<string>()
  quantities.forEach((change, index) => {
    const field = `lines[${index}]`
    const line = lines.get(change.lineId)
    if (!line) return details.push({ field: `${field}.line_id`, message: 'No line of this order has this id' })
    if (seen.has(change.lineId)) return details.push({ field: `${field}.line_id`, message: 'This line is named twice' })
    seen.add(change.lineId)
    const kept = line.quantity - line.canceledQuantity
    if (!Number.isSafeInteger(change.quantity) || change.quantity < 0) {
      return details.push({ field: `${field}.quantity`, message: 'The quantity must be a whole number of at least 0' })
    }
    if (change.quantity > kept) {
      details.push({ field: `${field}.quantity`, message: `This line has ${kept} units; to sell more, add a line` })
    } else if (change.quantity < line.fulfilledQuantity) {
      details.push({ field: `${field}.quantity`, message: `${line.fulfilledQuantity} of this line's units were shipped; shipped units are returned, not cancelled` })
    }
  })
  if (details.length > 0) throw new DomainError('validation_error', 'The order cannot be edited as asked', details)
}

export function computeOrderEdit(input: OrderEditInput): OrderEditMoney {
  const lines = new Map(input.lines.map((line) => [line.id, line]))
  checkQuantities(lines, input.quantities)
  const canceled = input.quantities.flatMap((change) => {
    const line = lines.get(change.lineId)!
    const units = line.quantity - line.canceledQuantity - change.quantity
    return units === 0 ? [] : [unitsShare(line, line.canceledQuantity + line.receivedReturnQuantity, units)]
  })
  if (canceled.length === 0 && input.added.length === 0) throw new DomainError('validation_error', 'The edit changes nothing')
  const kept = new Map(input.quantities.map((change) => [change.lineId, change.quantity]))
  const unitsLeft = input.lines.reduce((sum, line) => sum + (kept.get(line.id) ?? line.quantity - line.canceledQuantity), 0)
  if (unitsLeft === 0 && input.added.length === 0) {
    throw new DomainError('validation_error', 'An edit cannot leave the order without units; cancel the order instead', [
      { field: 'lines', message: 'Every unit would be cancelled' },
    ])
  }

  const sum = (values: readonly { subtotal: number; discount: number; tax: number; total: number }[], key: 'subtotal' | 'discount' | 'tax' | 'total') =>
    values.reduce((total, value) => total + value[key], 0)
  const { order } = input
  const totals = {
    subtotal: order.subtotalMinor - sum(canceled, 'subtotal') + sum(input.added, 'subtotal'),
    discount: order.discountMinor - sum(canceled, 'discount') + sum(input.added, 'discount'),
    tax: order.taxMinor - sum(canceled, 'tax') + sum(input.added, 'tax'),
    shipping: order.shippingMinor,
    total: order.totalMinor - sum(canceled, 'total') + sum(input.added, 'total'),
  }
  const refund = Math.min(Math.max(0, paidTowardsTotal(order) - totals.total), order.paidMinor - order.refundedMinor)
  const owed = balanceDue({ ...order, totalMinor: totals.total, editRefundedMinor: order.editRefundedMinor + refund })
  return { canceled, added: [...input.added], totals, difference: totals.total - order.totalMinor, refund, owed }
}
