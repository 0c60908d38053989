import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { ORDER_STATUSES, type OrderStatus, type PaymentStatus } from './constants.js'
import { DomainError } from './errors.js'
import { ORDER_MOVES, allowedMoves, amountOwed, fulfillmentStatusOf, moveOrder, paymentStatusOf } from './order-state.js'

const EXPECTED: [OrderStatus, OrderStatus, string][] = [
  ['pending', 'paid', 'order.paid'],
  ['pending', 'cancelled', 'order.cancelled'],
  ['paid', 'shipped', 'order.shipped'],
  ['paid', 'cancelled', 'order.cancelled'],
  ['paid', 'refunded', 'order.refunded'],
  ['shipped', 'completed', 'order.completed'],
  ['shipped', 'refunded', 'order.refunded'],
  ['completed', 'refunded', 'order.refunded'],
]

describe('the order state machine', () => {
  test('allows exactly the moves of the design, each with its event', () => {
    const all = ORDER_STATUSES.flatMap((from) => allowedMoves(from).map((to) => [from, to, ORDER_MOVES[from][to]]))
    expect(all).toEqual(EXPECTED)
    for (const [from, to, event] of EXPECTED) expect(moveOrder(from, to)).toBe(event)
  })

  test('refuses every other pair with invalid_state_transition naming the allowed moves', () => {
    const allowed = new Set(EXPECTED.map(([from, to]) => `${from}>${to}`))
    let refused = 0
    for (const from of ORDER_STATUSES) {
      for (const to of ORDER_STATUSES) {
        if (allowed.has(`${from}>${to}`)) continue
        refused++
        let error: unknown
        try {
          moveOrder(from, to)
        } catch (caught) {
          error = caught
        }
        expect(error).toBeInstanceOf(DomainError)
        expect(error).toMatchObject({ code: 'invalid_state_transition' })
        const moves = allowedMoves(from)
        expect((error as Error).message).toBe(
          `An order cannot move from ${from} to ${to}; allowed from ${from}: ${moves.length > 0 ? moves.join(', ') : 'none'}`,
        )
      }
    }
    expect(refused).toBe(36 - EXPECTED.length)
  })

  test('cancelled and refunded are final', () => {
    expect(allowedMoves('cancelled')).toEqual([])
    expect(allowedMoves('refunded')).toEqual([])
  })
})

describe('paymentStatusOf', () => {
  test('unpaid until the payments cover the total; an order of 0 owes nothing', () => {
    expect(paymentStatusOf({ totalMinor: 1000, paidMinor: 0, refundedMinor: 0 })).toBe('unpaid')
    expect(paymentStatusOf({ totalMinor: 1000, paidMinor: 999, refundedMinor: 0 })).toBe('unpaid')
    expect(paymentStatusOf({ totalMinor: 1000, paidMinor: 1000, refundedMinor: 0 })).toBe('paid')
    expect(paymentStatusOf({ totalMinor: 0, paidMinor: 0, refundedMinor: 0 })).toBe('paid')
  })

  test('any refund is partially_refunded until everything captured is returned', () => {
    expect(paymentStatusOf({ totalMinor: 1000, paidMinor: 1000, refundedMinor: 1 })).toBe('partially_refunded')
    expect(paymentStatusOf({ totalMinor: 1000, paidMinor: 1000, refundedMinor: 999 })).toBe('partially_refunded')
    expect(paymentStatusOf({ totalMinor: 1000, paidMinor: 1000, refundedMinor: 1000 })).toBe('refunded')
    // A part payment refunded in full: nothing is held any more.
    expect(paymentStatusOf({ totalMinor: 1000, paidMinor: 400, refundedMinor: 400 })).toBe('refunded')
    expect(paymentStatusOf({ totalMinor: 1000, paidMinor: 400, refundedMinor: 100 })).toBe('partially_refunded')
  })

  test('a refunded part payment followed by a payment of the whole total is paid', () => {
    expect(paymentStatusOf({ totalMinor: 1000, paidMinor: 1400, refundedMinor: 400 })).toBe('paid')
  })

  // [total, authorized, paid, refunded] -> status, with why where it is not plain.
  const withHolds: [number, number, number, number, PaymentStatus, string][] = [
    [1000, 1000, 0, 0, 'authorized', 'the hold covers the total, nothing captured'],
    [1000, 1200, 0, 0, 'authorized', 'a hold larger than the total'],
    [1000, 999, 0, 0, 'unpaid', 'a hold short of the total: the rest is still owed'],
    [1000, 1000, 400, 400, 'authorized', 'a part payment refunded in full, then the whole total held'],
    [1000, 400, 600, 0, 'partially_captured', 'part captured, the rest held'],
    [1000, 999, 1, 0, 'partially_captured', 'the least captured'],
    [1000, 500, 600, 100, 'partially_captured', 'part refunded, what is kept and held covers the total'],
    [1000, 0, 600, 0, 'unpaid', 'a partial capture whose rest was released owes the rest, as a part payment does'],
    [1000, 300, 600, 0, 'unpaid', 'captured and held short of the total'],
    [1000, 400, 1000, 0, 'paid', 'everything captured, whatever is still held'],
    [1000, 300, 600, 100, 'partially_refunded', 'after a refund, a hold short of the total leaves the refund statuses'],
    [1000, 300, 600, 600, 'refunded', 'everything captured refunded, a hold short of the total'],
    [0, 0, 600, 600, 'refunded', 'an order of 0 refunded, as before holds'],
  ]
  test.each(withHolds)('total %i, held %i, captured %i, refunded %i: %s (%s)', (totalMinor, authorizedMinor, paidMinor, refundedMinor, status) => {
    expect(paymentStatusOf({ totalMinor, authorizedMinor, paidMinor, refundedMinor })).toBe(status)
  })
})

/** paymentStatusOf as it was before holds, to check that orders without holds keep their statuses. */
function statusBeforeHolds({ totalMinor, paidMinor, refundedMinor }: { totalMinor: number; paidMinor: number; refundedMinor: number }) {
  const held = paidMinor - refundedMinor
  if (refundedMinor > 0 && held <= 0) return 'refunded'
  if (held >= totalMinor) return 'paid'
  return refundedMinor > 0 ? 'partially_refunded' : 'unpaid'
}

/** Orders whose refunds never pass what was captured, with or without holds. */
const orderMoney = fc
  .record({
    totalMinor: fc.oneof(fc.nat(1_000_000), fc.constantFrom(0, 1000)),
    authorizedMinor: fc.oneof(fc.constant(0), fc.nat(2_000_000), fc.constantFrom(400, 1000)),
    paidMinor: fc.oneof(fc.nat(2_000_000), fc.constantFrom(0, 600, 1000)),
    refundedShare: fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constantFrom(0, 1)),
  })
  .map(({ refundedShare, ...money }) => ({ ...money, refundedMinor: Math.floor(money.paidMinor * refundedShare) }))

describe('amountOwed', () => {
  test('the total less what is held, never below zero', () => {
    expect(amountOwed({ totalMinor: 1000, paidMinor: 0, refundedMinor: 0 })).toBe(1000)
    expect(amountOwed({ totalMinor: 1000, paidMinor: 400, refundedMinor: 0 })).toBe(600)
    expect(amountOwed({ totalMinor: 1000, paidMinor: 400, refundedMinor: 400 })).toBe(1000)
    expect(amountOwed({ totalMinor: 1000, paidMinor: 1000, refundedMinor: 0 })).toBe(0)
    expect(amountOwed({ totalMinor: 0, paidMinor: 0, refundedMinor: 0 })).toBe(0)
  })

  test('an amount a provider holds is not owed any more', () => {
    expect(amountOwed({ totalMinor: 1000, authorizedMinor: 1000, paidMinor: 0, refundedMinor: 0 })).toBe(0)
    expect(amountOwed({ totalMinor: 1000, authorizedMinor: 300, paidMinor: 600, refundedMinor: 0 })).toBe(100)
    expect(amountOwed({ totalMinor: 1000, authorizedMinor: 400, paidMinor: 600, refundedMinor: 100 })).toBe(100)
    expect(amountOwed({ totalMinor: 1000, authorizedMinor: 5000, paidMinor: 0, refundedMinor: 0 })).toBe(0)
  })

  test('agrees with paymentStatusOf: covered (paid, authorized, partially_captured) exactly when nothing is owed on an order that holds money', () => {
    const covered = new Set(['paid', 'authorized', 'partially_captured'])
    fc.assert(
      fc.property(orderMoney, (order) => {
        const status = paymentStatusOf(order)
        const owed = amountOwed(order)
        const kept = order.paidMinor - order.refundedMinor
        expect(owed).toBeGreaterThanOrEqual(0)
        if (covered.has(status)) expect(owed).toBe(0)
        if (owed === 0 && kept + order.authorizedMinor > 0) expect(covered.has(status)).toBe(true)
        if (status === 'paid') expect(kept).toBeGreaterThanOrEqual(order.totalMinor)
        if (status === 'authorized') expect(kept).toBe(0)
        if (status === 'partially_captured') expect(kept > 0 && kept < order.totalMinor).toBe(true)
        if (status === 'refunded') expect(order.refundedMinor).toBe(order.paidMinor)
        if (status === 'partially_refunded') expect(order.refundedMinor > 0 && kept > 0).toBe(true)
        if (status === 'unpaid') expect(order.refundedMinor).toBe(0)
      }),
    )
  })

  test('without holds, statuses and amounts owed are what they were before holds existed', () => {
    fc.assert(
      fc.property(orderMoney, ({ authorizedMinor: _held, ...order }) => {
        const before = statusBeforeHolds(order)
        expect(paymentStatusOf(order)).toBe(before)
        expect(paymentStatusOf({ ...order, authorizedMinor: 0 })).toBe(before)
        expect(amountOwed(order)).toBe(Math.max(0, order.totalMinor - (order.paidMinor - order.refundedMinor)))
      }),
    )
  })
})

describe('fulfillmentStatusOf', () => {
  test('unfulfilled, partial or fulfilled by the units shipped on every line', () => {
    const line = (quantity: number, fulfilledQuantity: number) => ({ quantity, fulfilledQuantity })
    expect(fulfillmentStatusOf([line(2, 0), line(1, 0)])).toBe('unfulfilled')
    expect(fulfillmentStatusOf([line(2, 1), line(1, 0)])).toBe('partial')
    expect(fulfillmentStatusOf([line(2, 2), line(1, 0)])).toBe('partial')
    expect(fulfillmentStatusOf([line(2, 2), line(1, 1)])).toBe('fulfilled')
  })
})
