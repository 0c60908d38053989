import fc from 'fast-check'
import { describe, expect, test } from 'vitest'
import { ORDER_STATUSES, type OrderStatus } from './constants.js'
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
})

describe('amountOwed', () => {
  test('the total less what is held, never below zero', () => {
    expect(amountOwed({ totalMinor: 1000, paidMinor: 0, refundedMinor: 0 })).toBe(1000)
    expect(amountOwed({ totalMinor: 1000, paidMinor: 400, refundedMinor: 0 })).toBe(600)
    expect(amountOwed({ totalMinor: 1000, paidMinor: 400, refundedMinor: 400 })).toBe(1000)
    expect(amountOwed({ totalMinor: 1000, paidMinor: 1000, refundedMinor: 0 })).toBe(0)
    expect(amountOwed({ totalMinor: 0, paidMinor: 0, refundedMinor: 0 })).toBe(0)
  })

  test('agrees with paymentStatusOf: paid exactly when nothing is owed on an order that holds money', () => {
    const amounts = fc
      .record({ totalMinor: fc.nat(1_000_000), paidMinor: fc.nat(2_000_000), refundedShare: fc.double({ min: 0, max: 1, noNaN: true }) })
      .map(({ totalMinor, paidMinor, refundedShare }) => ({ totalMinor, paidMinor, refundedMinor: Math.floor(paidMinor * refundedShare) }))
    fc.assert(
      fc.property(amounts, (order) => {
        const status = paymentStatusOf(order)
        const owed = amountOwed(order)
        expect(owed).toBeGreaterThanOrEqual(0)
        if (status === 'paid') expect(owed).toBe(0)
        if (owed === 0 && order.paidMinor > order.refundedMinor) expect(status).toBe('paid')
        if (status === 'refunded') expect(order.refundedMinor).toBe(order.paidMinor)
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
