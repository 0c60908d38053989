import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { LineTotals } from './cart-ledger.js'
import { couponRule } from './coupon-rules.fixture.js'
import { balanceDue, computeOrderEdit, settleReturnRefund, type EditableLine, type OrderEditInput } from './order-edits.js'
import { computeReturnRefund } from './returns.js'
import { computeCartTotals } from './totals.js'

const line = (id: string, quantity: number, figures: { subtotal: number; discount?: number; tax?: number }, extra: Partial<EditableLine> = {}): EditableLine => {
  const discount = figures.discount ?? 0
  const tax = figures.tax ?? 0
  return {
    id,
    quantity,
    fulfilledQuantity: 0,
    canceledQuantity: 0,
    receivedReturnQuantity: 0,
    subtotalMinor: figures.subtotal,
    discountMinor: discount,
    taxMinor: tax,
    totalMinor: figures.subtotal - discount + tax,
    ...extra,
  }
}
const orderOf = (lines: EditableLine[], shippingMinor: number, paid: boolean): OrderEditInput['order'] => {
  const sum = (key: 'subtotalMinor' | 'discountMinor' | 'taxMinor' | 'totalMinor') => lines.reduce((total, entry) => total + entry[key], 0)
  const totalMinor = sum('totalMinor') + shippingMinor
  return {
    subtotalMinor: sum('subtotalMinor'),
    discountMinor: sum('discountMinor'),
    taxMinor: sum('taxMinor'),
    shippingMinor,
    totalMinor,
    paidMinor: paid ? totalMinor : 0,
    refundedMinor: 0,
    editRefundedMinor: 0,
    authorizedMinor: 0,
    creditedMinor: 0,
    pendingCreditMinor: 0,
  }
}
const refuse = (field: string) => expect.objectContaining({ code: 'validation_error', details: expect.arrayContaining([expect.objectContaining({ field })]) })

describe('computeOrderEdit', () => {
  it('cancelling units takes their share off the order and refunds what the shop keeps beyond the new total', () => {
    // 3 lamps at 1000, 300 off, 216 tax: 2916; shipping 500.
    const lamps = line('lamp', 3, { subtotal: 3000, discount: 300, tax: 216 })
    const edit = computeOrderEdit({ lines: [lamps], quantities: [{ lineId: 'lamp', quantity: 2 }], added: [], order: orderOf([lamps], 500, true) })
    expect(edit).toEqual({
      canceled: [{ lineId: 'lamp', quantity: 1, subtotal: 1000, discount: 100, tax: 72, total: 972 }],
      added: [],
      totals: { subtotal: 2000, discount: 200, tax: 144, shipping: 500, total: 2444 },
      difference: -972,
      refund: 972,
      owed: 0,
    })
  })

  it('an unpaid order owes the new total; an added line raises what is owed; nothing is refunded', () => {
    const lamps = line('lamp', 2, { subtotal: 2000 })
    const added: LineTotals = { id: 'new', subtotal: 700, discount: 0, tax: 140, total: 840 }
    const edit = computeOrderEdit({ lines: [lamps], quantities: [{ lineId: 'lamp', quantity: 1 }], added: [added], order: orderOf([lamps], 0, false) })
    expect(edit).toMatchObject({ totals: { total: 1840 }, difference: -160, refund: 0, owed: 1840 })
    const paid = computeOrderEdit({ lines: [lamps], quantities: [], added: [added], order: orderOf([lamps], 0, true) })
    expect(paid).toMatchObject({ totals: { total: 2840 }, difference: 840, refund: 0, owed: 840 })
  })

  it('refuses shipped units, more units than the line has, unknown and repeated lines, an edit of nothing and one that empties the order', () => {
    const shipped = line('a', 3, { subtotal: 300 }, { fulfilledQuantity: 2 })
    const other = line('b', 2, { subtotal: 200 }, { canceledQuantity: 1 })
    const order = orderOf([shipped, other], 0, true)
    const attempt = (quantities: OrderEditInput['quantities'], added: LineTotals[] = []) => () => computeOrderEdit({ lines: [shipped, other], quantities, added, order })
    expect(attempt([{ lineId: 'a', quantity: 1 }])).toThrow(refuse('lines[0].quantity'))
    expect(attempt([{ lineId: 'b', quantity: 2 }])).toThrow(refuse('lines[0].quantity'))
    expect(attempt([{ lineId: 'x', quantity: 0 }])).toThrow(refuse('lines[0].line_id'))
    expect(attempt([{ lineId: 'b', quantity: 0 }, { lineId: 'b', quantity: 0 }])).toThrow(refuse('lines[1].line_id'))
    expect(attempt([{ lineId: 'b', quantity: -1 }])).toThrow(refuse('lines[0].quantity'))
    expect(attempt([{ lineId: 'b', quantity: 1 }])).toThrow('The edit changes nothing')
    const alone = line('c', 2, { subtotal: 200 })
    expect(() => computeOrderEdit({ lines: [alone], quantities: [{ lineId: 'c', quantity: 0 }], added: [], order: orderOf([alone], 0, true) })).toThrow(refuse('lines'))
  })
})

/** An order priced by computeCartTotals (coupons, tax, shipping), paid in full, nothing shipped. */
const paidOrder = fc
  .record({
    lines: fc.array(fc.record({ unitPriceMinor: fc.integer({ min: 0, max: 1_000_000 }), quantity: fc.integer({ min: 1, max: 12 }) }), { minLength: 1, maxLength: 5 }),
    percentOffPpm: fc.option(fc.integer({ min: 1, max: 1_000_000 }), { nil: null }),
    amountOffMinor: fc.option(fc.integer({ min: 1, max: 5_000_000 }), { nil: null }),
    taxRatePpm: fc.integer({ min: 0, max: 300_000 }),
    shippingMinor: fc.integer({ min: 0, max: 10_000 }),
  })
  .map(({ lines, percentOffPpm, amountOffMinor, taxRatePpm, shippingMinor }) => {
    const coupons = [
      ...(percentOffPpm === null ? [] : [couponRule({ id: 'pct', code: 'PCT', percentOffPpm })]),
      ...(amountOffMinor === null ? [] : [couponRule({ id: 'fixed', code: 'FIXED', type: 'fixed_amount', percentOffPpm: null, amountOffMinor, currency: 'USD' })]),
    ]
    const priced = lines.map((entry, index) => ({ id: `line-${index}`, ...entry }))
    const totals = computeCartTotals({ currency: 'USD', lines: priced, coupons, taxRatePpm, shippingMinor })
    const editable = totals.lines.map((figures, index) =>
      line(figures.id, priced[index]!.quantity, { subtotal: figures.subtotal, discount: figures.discount, tax: figures.tax }),
    )
    return { lines: editable, order: orderOf(editable, totals.shipping, true) }
  })

type Step = { kind: 'cancel' | 'ship' | 'return' | 'exchange' | 'receive'; line: number; share: number; add: number | null }
const steps = fc.array(
  fc.record({
    kind: fc.constantFrom('cancel' as const, 'ship' as const, 'return' as const, 'exchange' as const, 'receive' as const),
    line: fc.nat(),
    share: fc.double({ min: 0, max: 1, noNaN: true }),
    add: fc.option(fc.integer({ min: 0, max: 50_000 }), { nil: null }),
  }),
  { maxLength: 12 },
)

describe('edits, shipments, returns and exchanges in any order', () => {
  it('money never appears or vanishes: the shop keeps the order’s total less what returns gave back, and nothing once every unit is back', () => {
    fc.assert(
      fc.property(paidOrder, steps, ({ lines: start, order: startOrder }, plan: Step[]) => {
        let lines = start.map((entry) => ({ ...entry }))
        let order = { ...startOrder }
        let kept = order.totalMinor
        let paid = order.totalMinor
        let editRefunded = 0
        let credited = 0
        let returnedMoney = 0
        let shippingRefunded = 0
        // Exchanges asked for and not received yet: their units and their refund as estimated.
        let open: { items: { lineId: string; quantity: number }[]; estimate: number }[] = []
        const takenBack = new Map<string, number>()
        const take = (lineId: string, amount: number) => takenBack.set(lineId, (takenBack.get(lineId) ?? 0) + amount)
        const pick = (index: number) => lines[index % lines.length]!
        const inOpenExchanges = (lineId: string) => open.reduce((sum, exchange) => sum + (exchange.items.find((item) => item.lineId === lineId)?.quantity ?? 0), 0)
        const pending = () => open.reduce((sum, exchange) => sum + exchange.estimate, 0)
        const balance = (pendingCreditMinor = pending()) =>
          balanceDue({ totalMinor: order.totalMinor, paidMinor: paid, authorizedMinor: 0, editRefundedMinor: editRefunded, creditedMinor: credited, pendingCreditMinor })
        // The customer pays what is owed at once.
        const payBalance = () => {
          const owed = balance()
          paid += owed
          kept += owed
        }
        const refundOf = (items: { lineId: string; quantity: number }[], returned: (entry: EditableLine) => number) =>
          computeReturnRefund({
            lines: lines.map((entry) => ({ ...entry, returnedQuantity: returned(entry), takenBackQuantity: entry.receivedReturnQuantity + entry.canceledQuantity })),
            items,
            shippingMinor: order.shippingMinor,
            shippingRefundedMinor: shippingRefunded,
          })

        const edit = (quantities: OrderEditInput['quantities'], added: LineTotals[], extraPendingMinor = 0) => {
          const money = { paidMinor: paid, refundedMinor: paid - kept, editRefundedMinor: editRefunded, authorizedMinor: 0, creditedMinor: credited, pendingCreditMinor: pending() + extraPendingMinor }
          const result = computeOrderEdit({ lines, quantities, added, order: { ...order, ...money } })
          for (const share of result.canceled) take(share.lineId, share.total)
          kept -= result.refund
          editRefunded += result.refund
          const canceled = new Map(result.canceled.map((share) => [share.lineId, share.quantity]))
          lines = lines.map((entry) => ({ ...entry, canceledQuantity: entry.canceledQuantity + (canceled.get(entry.id) ?? 0) }))
          lines.push(...result.added.map((figures) => line(figures.id, 1, { subtotal: figures.subtotal, discount: figures.discount, tax: figures.tax })))
          const { subtotal, discount, tax, shipping, total } = result.totals
          order = { ...order, subtotalMinor: subtotal, discountMinor: discount, taxMinor: tax, shippingMinor: shipping, totalMinor: total }
          expect(result.owed).toBe(balance(pending() + extraPendingMinor))
        }
        /** Units come back: their refund first pays what the order owes without them, the rest goes back. */
        const receive = (items: { lineId: string; quantity: number }[]) => {
          const refund = refundOf(items, (entry) => entry.receivedReturnQuantity)
          const settled = settleReturnRefund(refund.total, balance(), kept)
          for (const share of refund.lines) take(share.lineId, share.total)
          shippingRefunded += refund.shipping
          returnedMoney += refund.total
          credited += settled.credit
          kept -= settled.refund
          expect(settled.credit + settled.refund).toBe(refund.total)
          const returned = new Map(items.map((item) => [item.lineId, item.quantity]))
          lines = lines.map((entry) => ({ ...entry, receivedReturnQuantity: entry.receivedReturnQuantity + (returned.get(entry.id) ?? 0) }))
          // Never money back to a customer who owes: the difference is all that moves.
          if (settled.refund > 0) expect(balance()).toBe(0)
        }
        const returnable = (entry: EditableLine) => entry.fulfilledQuantity - entry.receivedReturnQuantity - inOpenExchanges(entry.id)

        for (const [index, step] of plan.entries()) {
          const target = pick(step.line)
          // Returns and exchanges take a line that has units to give back, when one has.
          const shipped = lines.filter((entry) => returnable(entry) > 0)
          const back = shipped.length > 0 ? shipped[step.line % shipped.length]! : target
          if (step.kind === 'ship') {
            const units = Math.ceil((target.quantity - target.canceledQuantity - target.fulfilledQuantity) * step.share)
            lines = lines.map((entry) => (entry.id === target.id ? { ...entry, fulfilledQuantity: entry.fulfilledQuantity + units } : entry))
          } else if (step.kind === 'return') {
            const units = Math.ceil(returnable(back) * step.share)
            if (units > 0) receive([{ lineId: back.id, quantity: units }])
          } else if (step.kind === 'exchange') {
            // Units go back and a new line comes: the return's estimate pays for it first.
            const units = Math.ceil(returnable(back) * step.share)
            if (units > 0 && step.add !== null) {
              const items = [{ lineId: back.id, quantity: units }]
              const estimate = refundOf(items, (entry) => entry.receivedReturnQuantity + inOpenExchanges(entry.id)).merchandise
              const added = { id: `exchange-${index}`, subtotal: step.add, discount: 0, tax: Math.floor(step.add / 5), total: step.add + Math.floor(step.add / 5) }
              const firstOut = open.length === 0
              edit([], [added], estimate)
              open.push({ items, estimate })
              // The customer pays only the difference.
              if (firstOut) expect(balance()).toBe(Math.max(0, added.total - estimate))
            }
          } else if (step.kind === 'receive') {
            const [first, ...rest] = open
            if (first) {
              open = rest
              receive(first.items)
            }
          } else {
            const keep = target.quantity - target.canceledQuantity - Math.floor((target.quantity - target.canceledQuantity - target.fulfilledQuantity) * step.share)
            const added = step.add === null ? [] : [{ id: `added-${index}`, subtotal: step.add, discount: 0, tax: Math.floor(step.add / 5), total: step.add + Math.floor(step.add / 5) }]
            const changes = keep === target.quantity - target.canceledQuantity ? [] : [{ lineId: target.id, quantity: keep }]
            const unitsLeft = lines.reduce((sum, entry) => sum + entry.quantity - entry.canceledQuantity, 0) - (target.quantity - target.canceledQuantity - keep)
            if ((changes.length > 0 || added.length > 0) && (unitsLeft > 0 || added.length > 0)) edit(changes, added)
          }
          payBalance()
          // With no exchange on its way back, what the shop keeps is the total less what went back.
          if (open.length === 0) expect(kept).toBe(order.totalMinor - returnedMoney)
          for (const entry of lines) {
            expect(takenBack.get(entry.id) ?? 0).toBeLessThanOrEqual(entry.totalMinor)
          }
        }

        // The exchanges come back, what is left ships, then everything comes back.
        for (const exchange of open.splice(0)) receive(exchange.items)
        payBalance()
        expect(kept).toBe(order.totalMinor - returnedMoney)
        lines = lines.map((entry) => ({ ...entry, fulfilledQuantity: entry.quantity - entry.canceledQuantity }))
        const rest = lines.flatMap((entry) => {
          const units = entry.fulfilledQuantity - entry.receivedReturnQuantity
          return units > 0 ? [{ lineId: entry.id, quantity: units }] : []
        })
        if (rest.length > 0) receive(rest)
        for (const entry of lines) expect(takenBack.get(entry.id) ?? 0).toBe(entry.totalMinor)
        expect(kept).toBe(0)
      }),
      { numRuns: 300 },
    )
  })
})

describe('edits after a return', () => {
  it('a return’s refund does not shrink what cancelling other units refunds, nor make the customer owe', () => {
    const lamps = line('lamp', 2, { subtotal: 2000 }, { fulfilledQuantity: 1, receivedReturnQuantity: 1 })
    const order = { ...orderOf([lamps], 0, true), refundedMinor: 1000 }
    const edit = computeOrderEdit({ lines: [lamps], quantities: [{ lineId: 'lamp', quantity: 1 }], added: [], order })
    expect(edit).toMatchObject({ canceled: [{ quantity: 1, total: 1000 }], refund: 1000, owed: 0 })
  })
})
