/**
 * What a return gives back: for the units returned of each line, their share of what the customer
 * paid for the line (subtotal, less its share of the discounts, plus its share of the tax), the
 * shipping when nothing of the order stays with the customer, less a restocking fee.
 *
 * Shares are cumulative: the units returned so far on a line are worth
 * round(component × returned / quantity) of each of its components, and a return gets what that
 * figure grows by. So the refunds of a line never add up to more than was paid for it, and once
 * every unit has come back, however many returns it took and in whatever order, they add up to
 * exactly the line's total: no minor unit appears or vanishes.
 */
import type { EventKind, ReturnStatus } from './constants.js'
import { DomainError, type ErrorDetail } from './errors.js'
import { MAX_PPM } from './percent.js'
import { divideRounded } from './rounding.js'

/** A line of the order, as it was paid for, with the units earlier returns already cover. */
export interface ReturnableLine {
  id: string
  quantity: number
  /** Units shipped: only these can be returned. */
  fulfilledQuantity: number
  /**
   * Units earlier returns count already: when a return is asked for, those of every return not
   * declined or canceled (so no unit is asked for twice); when it is received and refunded, those
   * of the returns received before it (so the refunds of a line add up, see above).
   */
  returnedQuantity: number
  /**
   * Units whose share was given back already, the base of the cumulative shares: the units
   * returned and those an order edit cancelled (computeOrderEdit). `returnedQuantity` by default.
   */
  takenBackQuantity?: number
  subtotalMinor: number
  discountMinor: number
  taxMinor: number
  /** subtotal − discount + tax */
  totalMinor: number
}

export interface ReturnItem {
  lineId: string
  quantity: number
}

export interface ReturnRefundInput {
  lines: readonly ReturnableLine[]
  items: readonly ReturnItem[]
  /** What the order charged for shipping, and how much of it was refunded already. */
  shippingMinor: number
  shippingRefundedMinor: number
  /**
   * The shipping to give back, chosen by the merchant (at most what is left of it); by default
   * all that is left when the return brings back the last units of the order, else none.
   */
  shippingRefundMinor?: number
  /** A restocking fee as a share of the merchandise refunded (parts per million); none by default. */
  restockingFeePpm?: number
}

/** What one line's returned units give back; total = subtotal − discount + tax. */
export interface ReturnLineRefund {
  lineId: string
  quantity: number
  subtotal: number
  discount: number
  tax: number
  total: number
}

/** total = merchandise + shipping − fee, never below zero. */
export interface ReturnRefund {
  lines: ReturnLineRefund[]
  /** The lines' totals added up. */
  merchandise: number
  shipping: number
  fee: number
  total: number
}

/** The share of `amount` that `units` of `quantity` units are worth. */
const shareOf = (amount: number, units: number, quantity: number) => divideRounded(BigInt(amount) * BigInt(units), BigInt(quantity))

/** The amounts of a line as it was paid for. */
export interface PaidLine {
  id: string
  quantity: number
  subtotalMinor: number
  discountMinor: number
  taxMinor: number
}

/** What units `base`..`base + quantity` of a line are worth: each amount's cumulative share grows by this much. */
export function unitsShare(line: PaidLine, base: number, quantity: number): ReturnLineRefund {
  const grown = (amount: number) => shareOf(amount, base + quantity, line.quantity) - shareOf(amount, base, line.quantity)
  const subtotal = grown(line.subtotalMinor)
  const discount = grown(line.discountMinor)
  const tax = grown(line.taxMinor)
  return { lineId: line.id, quantity, subtotal: Number(subtotal), discount: Number(discount), tax: Number(tax), total: Number(subtotal - discount + tax) }
}

/**
 * Refuses an item of an unknown line, a line named twice, a quantity that is not a positive whole
 * number, or more units than were shipped and not returned yet; every refusal is listed, by field.
 */
function checkItems(lines: ReadonlyMap<string, ReturnableLine>, items: readonly ReturnItem[]): void {
  const details: ErrorDetail[] = []
  const seen = new Set<string>()
  if (items.length === 0) details.push({ field: 'items', message: 'A return needs at least one item' })
  items.forEach((item, index) => {
    const line = lines.get(item.lineId)
    if (!line) return details.push({ field: `items[${index}].line_id`, message: 'No line of this order has this id' })
    if (seen.has(item.lineId)) return details.push({ field: `items[${index}].line_id`, message: 'This line is named twice' })
    seen.add(item.lineId)
    if (!Number.isSafeInteger(item.quantity) || item.quantity < 1) {
      return details.push({ field: `items[${index}].quantity`, message: 'The quantity must be a whole number of at least 1' })
    }
    const returnable = line.fulfilledQuantity - line.returnedQuantity
    if (item.quantity > returnable) {
      details.push({
        field: `items[${index}].quantity`,
        message: `Only ${returnable} of this line's units can be returned (${line.fulfilledQuantity} shipped, ${line.returnedQuantity} in earlier returns)`,
      })
    }
  })
  if (details.length > 0) throw new DomainError('validation_error', 'The return cannot be made as asked', details)
}

export function computeReturnRefund(input: ReturnRefundInput): ReturnRefund {
  const lines = new Map(input.lines.map((line) => [line.id, line]))
  checkItems(lines, input.items)
  const refunds = input.items.map((item) => {
    const line = lines.get(item.lineId)!
    return unitsShare(line, line.takenBackQuantity ?? line.returnedQuantity, item.quantity)
  })
  const merchandise = refunds.reduce((sum, refund) => sum + refund.total, 0)

  const shippingLeft = input.shippingMinor - input.shippingRefundedMinor
  const returning = new Map(input.items.map((item) => [item.lineId, item.quantity]))
  const nothingKept = input.lines.every((line) => (line.takenBackQuantity ?? line.returnedQuantity) + (returning.get(line.id) ?? 0) === line.quantity)
  const shipping = input.shippingRefundMinor ?? (nothingKept ? shippingLeft : 0)
  if (!Number.isSafeInteger(shipping) || shipping < 0 || shipping > shippingLeft) {
    throw new DomainError('validation_error', `The shipping refund must be between 0 and ${shippingLeft}, what is left of the shipping charged`, [
      { field: 'shipping_refund', message: `At most ${shippingLeft}` },
    ])
  }

  const feePpm = input.restockingFeePpm ?? 0
  if (!Number.isSafeInteger(feePpm) || feePpm < 0 || feePpm > MAX_PPM) {
    throw new DomainError('validation_error', 'The restocking fee must be between 0 and 100 percent', [{ field: 'restocking_fee', message: 'Between 0 and 100 percent' }])
  }
  const fee = Number(divideRounded(BigInt(merchandise) * BigInt(feePpm), BigInt(MAX_PPM)))
  return { lines: refunds, merchandise, shipping, fee, total: merchandise + shipping - fee }
}

/**
 * The moves of a return and the event each writes. A return may be received without being
 * approved first (the parcel came back before anyone looked at the request); received, declined
 * and canceled are final.
 */
export const RETURN_MOVES: Readonly<Record<ReturnStatus, Readonly<Partial<Record<ReturnStatus, EventKind>>>>> = {
  requested: { approved: 'return.approved', declined: 'return.declined', received: 'return.received', canceled: 'return.canceled' },
  approved: { received: 'return.received', canceled: 'return.canceled' },
  declined: {},
  received: {},
  canceled: {},
}

/** The event of the move `from` → `to`, or an `invalid_state_transition` error listing the moves allowed from `from`. */
export function moveReturn(from: ReturnStatus, to: ReturnStatus): EventKind {
  const event = RETURN_MOVES[from][to]
  if (event) return event
  const allowed = Object.keys(RETURN_MOVES[from])
  throw new DomainError(
    'invalid_state_transition',
    `A return cannot move from ${from} to ${to}; allowed from ${from}: ${allowed.length > 0 ? allowed.join(', ') : 'none'}`,
    [{ field: 'status', message: `allowed: ${allowed.join(', ')}` }],
  )
}
