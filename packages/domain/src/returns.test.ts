import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { couponRule } from './coupon-rules.fixture.js'
import { RETURN_MOVES, computeReturnRefund, moveReturn, type ReturnableLine, type ReturnItem, type ReturnRefund } from './returns.js'
import { RETURN_STATUSES } from './constants.js'
import { computeCartTotals } from './totals.js'

const line = (id: string, quantity: number, figures: { subtotal: number; discount?: number; tax?: number }, fulfilled = quantity): ReturnableLine => {
  const discount = figures.discount ?? 0
  const tax = figures.tax ?? 0
  return {
    id,
    quantity,
    fulfilledQuantity: fulfilled,
    returnedQuantity: 0,
    subtotalMinor: figures.subtotal,
    discountMinor: discount,
    taxMinor: tax,
    totalMinor: figures.subtotal - discount + tax,
  }
}
const refuse = (field: string) => expect.objectContaining({ code: 'validation_error', details: expect.arrayContaining([expect.objectContaining({ field })]) })

describe('computeReturnRefund', () => {
  it('gives back the returned units’ share of subtotal, discount and tax, and the shipping with the last units', () => {
    // 3 × 1000, 10 % off (300), 8 % tax on 2700 (216): 2916 paid for the line.
    const lamp = line('lamp', 3, { subtotal: 3000, discount: 300, tax: 216 })
    const input = { lines: [lamp], shippingMinor: 500, shippingRefundedMinor: 0 }
    const one = computeReturnRefund({ ...input, items: [{ lineId: 'lamp', quantity: 1 }] })
    expect(one).toEqual({ lines: [{ lineId: 'lamp', quantity: 1, subtotal: 1000, discount: 100, tax: 72, total: 972 }], merchandise: 972, shipping: 0, fee: 0, total: 972 })
    const rest = computeReturnRefund({ ...input, lines: [{ ...lamp, returnedQuantity: 1 }], items: [{ lineId: 'lamp', quantity: 2 }] })
    expect(rest).toMatchObject({ merchandise: 1944, shipping: 500, total: 2444 })
    expect(one.total + rest.total).toBe(lamp.totalMinor + 500)
  })

  it('hands out the odd minor units so that one unit at a time adds up to the line’s total', () => {
    // 7 paid for 3 units: 2, 3, 2 (round(7/3) = 2, round(14/3) = 5, 7).
    const odd = line('odd', 3, { subtotal: 6, tax: 1 })
    const refunds = [0, 1, 2].map((returned) => computeReturnRefund({ lines: [{ ...odd, returnedQuantity: returned }], items: [{ lineId: 'odd', quantity: 1 }], shippingMinor: 0, shippingRefundedMinor: 0 }).total)
    expect(refunds).toEqual([2, 3, 2])
  })

  it('takes a restocking fee off the merchandise, never the shipping, and takes the merchant’s shipping figure', () => {
    const lines = [line('a', 1, { subtotal: 1999 }), line('b', 1, { subtotal: 500 })]
    const refund = computeReturnRefund({ lines, items: [{ lineId: 'a', quantity: 1 }], shippingMinor: 700, shippingRefundedMinor: 200, shippingRefundMinor: 300, restockingFeePpm: 150_000 })
    expect(refund).toMatchObject({ merchandise: 1999, shipping: 300, fee: 300, total: 1999 })
  })

  it('refuses unknown, repeated, empty and over-large items, naming each field', () => {
    const lines = [line('a', 2, { subtotal: 200 }, 1), { ...line('b', 3, { subtotal: 300 }), returnedQuantity: 3 }]
    const base = { lines, shippingMinor: 0, shippingRefundedMinor: 0 }
    const attempt = (items: ReturnItem[], extra = {}) => () => computeReturnRefund({ ...base, items, ...extra })
    expect(attempt([])).toThrow(refuse('items'))
    expect(attempt([{ lineId: 'x', quantity: 1 }])).toThrow(refuse('items[0].line_id'))
    expect(attempt([{ lineId: 'a', quantity: 1 }, { lineId: 'a', quantity: 1 }])).toThrow(refuse('items[1].line_id'))
    expect(attempt([{ lineId: 'a', quantity: 0 }])).toThrow(refuse('items[0].quantity'))
    expect(attempt([{ lineId: 'a', quantity: 1.5 }])).toThrow(refuse('items[0].quantity'))
    // One of two units shipped; all three of b returned already.
    expect(attempt([{ lineId: 'a', quantity: 2 }])).toThrow(refuse('items[0].quantity'))
    expect(attempt([{ lineId: 'a', quantity: 1 }, { lineId: 'b', quantity: 1 }])).toThrow(refuse('items[1].quantity'))
    expect(attempt([{ lineId: 'a', quantity: 1 }], { shippingRefundMinor: 1 })).toThrow(refuse('shipping_refund'))
    expect(attempt([{ lineId: 'a', quantity: 1 }], { restockingFeePpm: 1_000_001 })).toThrow(refuse('restocking_fee'))
  })
})

/** An order priced by computeCartTotals (coupons, tax, shipping), every unit shipped. */
const paidOrder = fc
  .record({
    lines: fc.array(fc.record({ unitPriceMinor: fc.integer({ min: 0, max: 1_000_000 }), quantity: fc.integer({ min: 1, max: 12 }) }), { minLength: 1, maxLength: 6 }),
    percentOffPpm: fc.option(fc.integer({ min: 1, max: 1_000_000 }), { nil: null }),
    amountOffMinor: fc.option(fc.integer({ min: 1, max: 5_000_000 }), { nil: null }),
    taxRatePpm: fc.integer({ min: 0, max: 300_000 }),
    taxRounding: fc.constantFrom('line' as const, 'order' as const),
    shippingMinor: fc.integer({ min: 0, max: 10_000 }),
  })
  .map(({ lines, percentOffPpm, amountOffMinor, taxRatePpm, taxRounding, shippingMinor }) => {

    const coupons = [
      ...(percentOffPpm === null ? [] : [couponRule({ id: 'pct', code: 'PCT', percentOffPpm })]),
      ...(amountOffMinor === null ? [] : [couponRule({ id: 'fixed', code: 'FIXED', type: 'fixed_amount', percentOffPpm: null, amountOffMinor, currency: 'USD' })]),
    ]
    const priced = lines.map((entry, index) => ({ id: `line-${index}`, ...entry }))
    const totals = computeCartTotals({ currency: 'USD', lines: priced, coupons, taxRatePpm, taxRounding, shippingMinor })
    const returnable = totals.lines.map(
      (figures, index): ReturnableLine => ({
        id: figures.id,
        quantity: priced[index]!.quantity,
        fulfilledQuantity: priced[index]!.quantity,
        returnedQuantity: 0,
        subtotalMinor: figures.subtotal,
        discountMinor: figures.discount,
        taxMinor: figures.tax,
        totalMinor: figures.total,
      }),
    )
    return { lines: returnable, shippingMinor: totals.shipping, charged: totals.total }
  })

/** A sequence of returns, each of some units of some lines, as fractions of what is left to return. */
const returnSteps = fc.array(fc.array(fc.record({ line: fc.nat(), share: fc.double({ min: 0, max: 1, noNaN: true }) }), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 })

interface Returned {
  lines: ReturnableLine[]
  refunds: ReturnRefund[]
}

/** Applies the steps in turn (skipping items that would be empty), as a shop would record them. */
function applyReturns(order: { lines: ReturnableLine[]; shippingMinor: number }, steps: { line: number; share: number }[][]): Returned {
  let lines = order.lines.map((entry) => ({ ...entry }))
  let shippingRefunded = 0
  const refunds: ReturnRefund[] = []
  for (const step of steps) {
    const items = new Map<string, number>()
    for (const { line: pick, share } of step) {
      const target = lines[pick % lines.length]!
      if (items.has(target.id)) continue
      const quantity = Math.floor((target.fulfilledQuantity - target.returnedQuantity) * share)
      if (quantity > 0) items.set(target.id, quantity)
    }
    if (items.size === 0) continue
    const refund = computeReturnRefund({
      lines,
      items: [...items].map(([lineId, quantity]) => ({ lineId, quantity })),
      shippingMinor: order.shippingMinor,
      shippingRefundedMinor: shippingRefunded,
    })
    refunds.push(refund)
    shippingRefunded += refund.shipping
    lines = lines.map((entry) => ({ ...entry, returnedQuantity: entry.returnedQuantity + (items.get(entry.id) ?? 0) }))
  }
  return { lines, refunds }
}

const refundedOf = (refunds: ReturnRefund[], lineId: string) =>
  refunds
    .flatMap((refund) => refund.lines)
    .filter((entry) => entry.lineId === lineId)
    .reduce((sum, entry) => ({ subtotal: sum.subtotal + entry.subtotal, discount: sum.discount + entry.discount, tax: sum.tax + entry.tax, total: sum.total + entry.total }), { subtotal: 0, discount: 0, tax: 0, total: 0 })

describe('returns over any order and any sequence of returns', () => {
  it('never give back more of a line, or of any of its figures, than was paid, nor a negative amount', () => {
    fc.assert(
      fc.property(paidOrder, returnSteps, (order, steps) => {
        const { refunds } = applyReturns(order, steps)
        for (const refund of refunds) {
          expect(refund.total).toBeGreaterThanOrEqual(0)
          for (const entry of refund.lines) for (const figure of [entry.subtotal, entry.discount, entry.tax, entry.total]) expect(figure).toBeGreaterThanOrEqual(0)
        }
        for (const paid of order.lines) {
          const back = refundedOf(refunds, paid.id)
          expect(back.subtotal).toBeLessThanOrEqual(paid.subtotalMinor)
          expect(back.discount).toBeLessThanOrEqual(paid.discountMinor)
          expect(back.tax).toBeLessThanOrEqual(paid.taxMinor)
          expect(back.total).toBeLessThanOrEqual(paid.totalMinor)
        }
      }),
    )
  })

  it('give back what the units are worth however they came back: the same as one return of them all', () => {
    fc.assert(
      fc.property(paidOrder, returnSteps, (order, steps) => {
        const { lines, refunds } = applyReturns(order, steps)
        const returned = lines.filter((entry) => entry.returnedQuantity > 0)
        fc.pre(returned.length > 0)
        const atOnce = computeReturnRefund({
          lines: order.lines,
          items: returned.map((entry) => ({ lineId: entry.id, quantity: entry.returnedQuantity })),
          shippingMinor: order.shippingMinor,
          shippingRefundedMinor: 0,
        })
        for (const entry of atOnce.lines) expect(refundedOf(refunds, entry.lineId)).toEqual({ subtotal: entry.subtotal, discount: entry.discount, tax: entry.tax, total: entry.total })
      }),
    )
  })

  it('keep money whole: what was given back plus what returning the rest would give back is exactly what was charged', () => {
    fc.assert(
      fc.property(paidOrder, returnSteps, (order, steps) => {
        const { lines, refunds } = applyReturns(order, steps)
        const given = refunds.reduce((sum, refund) => sum + refund.total, 0)
        const shippingGiven = refunds.reduce((sum, refund) => sum + refund.shipping, 0)
        const left = lines.filter((entry) => entry.returnedQuantity < entry.quantity)
        const rest =
          left.length === 0
            ? 0
            : computeReturnRefund({
                lines,
                items: left.map((entry) => ({ lineId: entry.id, quantity: entry.quantity - entry.returnedQuantity })),
                shippingMinor: order.shippingMinor,
                shippingRefundedMinor: shippingGiven,
              }).total
        expect(given + rest).toBe(order.charged)
        // The shipping comes back once, with the last units, and never before.
        expect(shippingGiven).toBe(left.length === 0 ? order.shippingMinor : 0)
      }),
    )
  })

  it('take a fee of at most the merchandise refunded, and never touch the shipping with it', () => {
    fc.assert(
      fc.property(paidOrder, fc.integer({ min: 0, max: 1_000_000 }), (order, restockingFeePpm) => {
        const items = order.lines.map((entry) => ({ lineId: entry.id, quantity: entry.quantity }))
        const refund = computeReturnRefund({ lines: order.lines, items, shippingMinor: order.shippingMinor, shippingRefundedMinor: 0, restockingFeePpm })
        expect(refund.fee).toBeGreaterThanOrEqual(0)
        expect(refund.fee).toBeLessThanOrEqual(refund.merchandise)
        expect(refund.total).toBe(refund.merchandise + refund.shipping - refund.fee)
        expect(refund.shipping).toBe(order.shippingMinor)
      }),
    )
  })
})

describe('moveReturn', () => {
  it('allows exactly the moves of RETURN_MOVES and names the allowed ones when refusing', () => {
    for (const from of RETURN_STATUSES) {
      for (const to of RETURN_STATUSES) {
        const event = RETURN_MOVES[from][to]
        if (event) expect(moveReturn(from, to)).toBe(`return.${to}`)
        else expect(() => moveReturn(from, to)).toThrow(expect.objectContaining({ code: 'invalid_state_transition' }))
      }
    }
    expect(() => moveReturn('approved', 'declined')).toThrow('allowed from approved: received, canceled')
    expect(() => moveReturn('received', 'canceled')).toThrow('allowed from received: none')
  })
})
