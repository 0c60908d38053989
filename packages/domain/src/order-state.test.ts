import { describe, expect, test } from 'vitest'
import { ORDER_STATUSES, type OrderStatus } from './constants.js'
import { DomainError } from './errors.js'
import { ORDER_MOVES, allowedMoves, moveOrder } from './order-state.js'

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
