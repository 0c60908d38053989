/**
 * Whether a checkout may complete: the refusals checkout completion gives before it charges
 * anything, from plain data read with the cart's locks held.
 */
import type { CartLineProblem } from './constants.js'
import { couponUsedUp, type CouponRule } from './coupons.js'
import { DomainError } from './errors.js'

export interface CheckoutLine {
  id: string
  title: string
  quantity: number
  /** The stock row the line takes its units from: its variant's id, or its product's for a line without a variant. */
  stockKey: string
  /** Why the line cannot be bought now, as the cart's pricing shows it (the cart item's `problem`); null when it can. */
  problem: { code: CartLineProblem; message: string } | null
}

export interface CheckoutRefusalInput {
  /** The cart's lines, in the cart's order. */
  lines: readonly CheckoutLine[]
  /** Every coupon the cart carries, with its use count as read with its lock held. */
  coupons: readonly Pick<CouponRule, 'code' | 'usageLimit' | 'timesUsed'>[]
  /** Units in stock per stock key; a key not there has none. */
  stock: Readonly<Record<string, number>>
  /** The shipping rates that can carry the cart; none when no method can (then none has to be chosen). */
  shippingRates: readonly { id: string }[]
  /** The rate the customer chose, or null. */
  shippingRateId: string | null
}

/**
 * The first reason the checkout cannot complete, or null when it can. In this order: the cart is
 * empty; a line cannot be bought now; a coupon has been used up since it was applied (refused
 * rather than dropped from the price, so the customer is never charged other than the checkout
 * showed); no shipping rate is chosen while some are available; a line wants more units than
 * are in stock. The answer is not thrown: the caller throws it (the API with ApiError.fromDomain).
 */
export function checkoutRefusal(input: CheckoutRefusalInput): DomainError | null {
  const { lines } = input
  if (lines.length === 0) return new DomainError('conflict', 'The cart is empty')

  const unavailable = lines.find((line) => line.problem !== null)
  if (unavailable?.problem) {
    return new DomainError('conflict', `'${unavailable.title}': ${unavailable.problem.message}`, [
      { field: 'items', message: unavailable.id },
    ])
  }

  const usedUp = input.coupons.find(couponUsedUp)
  if (usedUp) {
    return new DomainError('coupon_invalid', `Coupon '${usedUp.code}' has reached its usage limit; remove it from the cart`)
  }

  const chosen = input.shippingRates.some((rate) => rate.id === input.shippingRateId)
  if (!chosen && input.shippingRates.length > 0) {
    const message = 'Choose a shipping rate first (POST /checkouts/:id/shipping)'
    return new DomainError('validation_error', message, [{ field: 'rate_id', message }])
  }

  // Units wanted per stock key so far: two lines on one stock row (which a cart does not hold
  // today: one line per product and variant) cannot each take the same units.
  const wanted = new Map<string, number>()
  const short = lines.findIndex((line) => {
    const units = (wanted.get(line.stockKey) ?? 0) + line.quantity
    wanted.set(line.stockKey, units)
    return unitsInStock(input.stock, line.stockKey) < units
  })
  const line = lines[short]
  if (line) {
    return new DomainError('insufficient_inventory', `Not enough stock for '${line.title}': ${line.quantity} requested`, [
      { field: `items[${short}]`, message: `${line.title}: ${line.quantity} requested` },
    ])
  }
  return null
}

function unitsInStock(stock: Readonly<Record<string, number>>, key: string): number {
  return Object.hasOwn(stock, key) ? (stock[key] ?? 0) : 0
}
