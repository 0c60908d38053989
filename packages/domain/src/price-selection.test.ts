import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { PriceListType } from './constants.js'
import { type PriceCandidate, type PriceContext, type PriceListRule, priceListApplies, selectLinePrice } from './price-selection.js'

const now = new Date('2026-03-01T12:00:00.000Z')
const later = (ms: number) => new Date(now.getTime() + ms)
const list = (id: string, type: PriceListType, rule: Partial<PriceListRule> = {}): PriceListRule => ({
  id,
  type,
  priority: 0,
  isActive: true,
  startsAt: null,
  endsAt: null,
  customerGroupIds: [],
  ...rule,
})
const price = (amountMinor: number, rule: Partial<PriceCandidate> = {}): PriceCandidate => ({
  amountMinor,
  minQuantity: 1,
  variantSpecific: false,
  priceListId: null,
  ...rule,
})
const listsOf = (...rules: PriceListRule[]) => new Map(rules.map((rule) => [rule.id, rule]))
const context = (rule: Partial<PriceContext> = {}): PriceContext => ({ quantity: 1, customerGroupIds: [], now, ...rule })
const domainError = (code: string) => expect.objectContaining({ code })

describe('selectLinePrice by hand', () => {
  it('pays the base price when no list applies, and null without a base price', () => {
    expect(selectLinePrice([price(1999)], listsOf(), context())).toEqual({ unitPriceMinor: 1999, originalUnitPriceMinor: 1999, priceListId: null })
    const sale = listsOf(list('sale', 'sale'))
    expect(selectLinePrice([price(999, { priceListId: 'sale' })], sale, context())).toBeNull()
    expect(selectLinePrice([], sale, context())).toBeNull()
  })

  it('pays a lower sale price and shows the base price as the original', () => {
    const lists = listsOf(list('spring', 'sale'), list('vip', 'sale', { customerGroupIds: ['vip'] }))
    const candidates = [price(2000), price(1500, { priceListId: 'spring' }), price(1200, { priceListId: 'vip' })]
    expect(selectLinePrice(candidates, lists, context())).toEqual({ unitPriceMinor: 1500, originalUnitPriceMinor: 2000, priceListId: 'spring' })
    expect(selectLinePrice(candidates, lists, context({ customerGroupIds: ['vip'] }))).toEqual({
      unitPriceMinor: 1200,
      originalUnitPriceMinor: 2000,
      priceListId: 'vip',
    })
  })

  it('never lets a sale list raise the price: a dearer sale price loses to the base, an equal one too', () => {
    const lists = listsOf(list('a', 'sale'), list('b', 'sale'))
    expect(selectLinePrice([price(1000), price(1200, { priceListId: 'a' })], lists, context())?.priceListId).toBeNull()
    expect(selectLinePrice([price(1000), price(1000, { priceListId: 'a' })], lists, context())?.priceListId).toBeNull()
    // two sale lists at one price: the lower id
    expect(selectLinePrice([price(1000), price(900, { priceListId: 'b' }), price(900, { priceListId: 'a' })], lists, context())?.priceListId).toBe('a')
  })

  it('replaces the base price with the override of highest priority, which a cheaper sale still beats', () => {
    const lists = listsOf(
      list('wholesale', 'override', { priority: 1 }),
      list('contract', 'override', { priority: 5, customerGroupIds: ['acme'] }),
      list('clearance', 'sale'),
    )
    const candidates = [
      price(2000),
      price(2500, { priceListId: 'wholesale' }),
      price(1700, { priceListId: 'contract' }),
      price(1800, { priceListId: 'clearance' }),
    ]
    // An override may raise the price: it replaces the reference; the cheaper sale price wins over it.
    expect(selectLinePrice(candidates, lists, context())).toEqual({ unitPriceMinor: 1800, originalUnitPriceMinor: 2000, priceListId: 'clearance' })
    expect(selectLinePrice(candidates.slice(0, 2), lists, context())).toEqual({
      unitPriceMinor: 2500,
      originalUnitPriceMinor: 2000,
      priceListId: 'wholesale',
    })
    expect(selectLinePrice(candidates, lists, context({ customerGroupIds: ['acme'] }))).toEqual({
      unitPriceMinor: 1700,
      originalUnitPriceMinor: 2000,
      priceListId: 'contract',
    })
  })

  it('breaks a priority tie between overrides by the lower price, then the lower list id', () => {
    const lists = listsOf(list('b', 'override', { priority: 2 }), list('a', 'override', { priority: 2 }), list('c', 'override', { priority: 2 }))
    const candidates = [price(2000), price(2100, { priceListId: 'a' }), price(2050, { priceListId: 'b' }), price(2050, { priceListId: 'c' })]
    expect(selectLinePrice(candidates, lists, context())?.priceListId).toBe('b')
  })

  it("takes the highest quantity tier reached, the variant's own price beating the product's at the same tier", () => {
    const tiers = [price(1000), price(900, { minQuantity: 10 }), price(800, { minQuantity: 50 })]
    expect([1, 9, 10, 49, 50, 500].map((quantity) => selectLinePrice(tiers, listsOf(), context({ quantity }))?.unitPriceMinor)).toEqual([
      1000, 1000, 900, 900, 800, 800,
    ])
    // The variant's own price counts even when dearer than the product's, at its tier; the product's
    // higher tiers still apply to the variant from their quantity on.
    const variant = [...tiers, price(1100, { variantSpecific: true })]
    expect([1, 10, 60].map((quantity) => selectLinePrice(variant, listsOf(), context({ quantity }))?.unitPriceMinor)).toEqual([1100, 900, 800])
    // A variant tier the quantity does not reach leaves the product's price below it.
    const variantTier = [price(1000), price(900, { variantSpecific: true, minQuantity: 5 })]
    expect([1, 5].map((quantity) => selectLinePrice(variantTier, listsOf(), context({ quantity }))?.unitPriceMinor)).toEqual([1000, 900])
  })

  it('applies a list from its start (inclusive) until its end (exclusive), and only when active', () => {
    const candidates = (id: string) => [price(1000), price(500, { priceListId: id })]
    const paid = (rule: Partial<PriceListRule>) => selectLinePrice(candidates('x'), listsOf(list('x', 'sale', rule)), context())?.unitPriceMinor
    expect(paid({ startsAt: now })).toBe(500)
    expect(paid({ startsAt: later(1) })).toBe(1000)
    expect(paid({ endsAt: now })).toBe(1000)
    expect(paid({ endsAt: later(1) })).toBe(500)
    expect(paid({ isActive: false })).toBe(1000)
    // A list the caller did not pass is ignored, not an error.
    expect(selectLinePrice(candidates('unknown'), listsOf(), context())?.unitPriceMinor).toBe(1000)
  })

  it('refuses malformed input', () => {
    const lists = listsOf(list('x', 'override', { priority: 1.5 }))
    expect(() => selectLinePrice([price(-1)], listsOf(), context())).toThrow(domainError('validation_error'))
    expect(() => selectLinePrice([price(1.5)], listsOf(), context())).toThrow(domainError('validation_error'))
    expect(() => selectLinePrice([price(100, { minQuantity: 0 })], listsOf(), context())).toThrow(domainError('validation_error'))
    expect(() => selectLinePrice([price(100)], listsOf(), context({ quantity: 0 }))).toThrow(domainError('validation_error'))
    expect(() => selectLinePrice([price(100)], listsOf(), context({ quantity: 2.5 }))).toThrow(domainError('validation_error'))
    expect(() => selectLinePrice([price(100), price(90, { priceListId: 'x' })], lists, context())).toThrow(domainError('validation_error'))
  })
})

const LIST_IDS = ['a', 'b', 'c', 'd', 'e'] as const
const GROUPS = ['retail', 'vip', 'staff'] as const
const HOUR = 3_600_000
const windowEdge = fc.option(fc.constantFrom(-HOUR, 0, 1, HOUR).map(later), { nil: null, freq: 3 })
const priceLists = fc
  .tuple(
    ...LIST_IDS.map((id) =>
      fc.record({
        id: fc.constant(id),
        type: fc.constantFrom<PriceListType>('sale', 'override'),
        priority: fc.integer({ min: -2, max: 3 }),
        isActive: fc.boolean(),
        startsAt: windowEdge,
        endsAt: windowEdge,
        customerGroupIds: fc.subarray([...GROUPS], { maxLength: 2 }),
      }),
    ),
  )
  // one list id in five is left out of the map: its candidates must be ignored
  .chain((rules) => fc.subarray(rules, { minLength: 3 }).map((kept) => listsOf(...kept)))
const amount = fc.oneof(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 100_000 }))
const candidateOf = (sources: readonly (string | null)[]) =>
  fc.record({
    amountMinor: amount,
    minQuantity: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 12 })),
    variantSpecific: fc.boolean(),
    priceListId: fc.constantFrom(...sources),
  })
const candidates = fc.array(candidateOf([null, null, ...LIST_IDS]), { maxLength: 14 })
const contexts = fc.record({
  quantity: fc.oneof(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 3 })),
  customerGroupIds: fc.subarray([...GROUPS]),
  now: fc.constant(now),
})

/** The rule restated from the tiers up: each source's offer, the reference, the sale offers. */
function expectedOffers(all: readonly PriceCandidate[], lists: ReadonlyMap<string, PriceListRule>, at: PriceContext) {
  const offerOf = (source: string | null) => {
    const reached = all.filter((candidate) => candidate.priceListId === source && candidate.minQuantity <= at.quantity)
    const top = Math.max(...reached.map((candidate) => candidate.minQuantity))
    const atTop = reached.filter((candidate) => candidate.minQuantity === top)
    const pool = atTop.some((candidate) => candidate.variantSpecific) ? atTop.filter((candidate) => candidate.variantSpecific) : atTop
    const prices = pool.map((candidate) => candidate.amountMinor)
    return prices.length === 0 ? null : Math.min(...prices)
  }
  const applying = [...lists.values()].filter((rule) => priceListApplies(rule, at))
  const offered = applying.map((rule) => ({ rule, amount: offerOf(rule.id) })).filter((offer) => offer.amount !== null) as {
    rule: PriceListRule
    amount: number
  }[]
  const overrides = offered.filter((offer) => offer.rule.type === 'override')
  const topPriority = Math.max(...overrides.map((offer) => offer.rule.priority))
  const override = overrides
    .filter((offer) => offer.rule.priority === topPriority)
    .sort((a, b) => a.amount - b.amount || (a.rule.id < b.rule.id ? -1 : 1))[0]
  const base = offerOf(null)
  return { base, override, reference: override?.amount ?? base, sales: offered.filter((offer) => offer.rule.type === 'sale') }
}

describe('selectLinePrice over generated prices and lists', () => {
  it('pays the minimum of the reference price and the applicable sale prices, never more than the reference', () => {
    fc.assert(
      fc.property(candidates, priceLists, contexts, (all, lists, at) => {
        const selected = selectLinePrice(all, lists, at)
        const { base, override, reference, sales } = expectedOffers(all, lists, at)
        if (base === null || reference === null) {
          expect(selected).toBeNull()
          return
        }
        expect(selected).not.toBeNull()
        if (!selected) return
        expect(selected.unitPriceMinor).toBe(Math.min(reference, ...sales.map((offer) => offer.amount)))
        expect(selected.unitPriceMinor).toBeLessThanOrEqual(reference)
        if (override === undefined) expect(selected.unitPriceMinor).toBeLessThanOrEqual(base)
        expect(selected.originalUnitPriceMinor).toBe(base)
        // The named list is one that applies and offers exactly that price; null only when the base gave it.
        if (selected.priceListId === null) {
          expect(override).toBeUndefined()
          expect(selected.unitPriceMinor).toBe(base)
        } else {
          const named = [...sales, ...(override ? [override] : [])].find((offer) => offer.rule.id === selected.priceListId)
          expect(named?.amount).toBe(selected.unitPriceMinor)
        }
      }),
    )
  })

  it('gives the same answer for any order of the candidates', () => {
    fc.assert(
      fc.property(
        candidates.chain((all) => fc.tuple(fc.constant(all), fc.shuffledSubarray(all, { minLength: all.length }))),
        priceLists,
        contexts,
        ([all, shuffled], lists, at) => {
          expect(selectLinePrice(shuffled, lists, at)).toEqual(selectLinePrice(all, lists, at))
        },
      ),
    )
  })

  it('never changes its answer for a candidate of a list that does not apply', () => {
    const closed = listsOf(
      list('inactive', 'sale', { isActive: false }),
      list('ended', 'override', { priority: 99, endsAt: now }),
      list('future', 'sale', { startsAt: later(1) }),
      list('staff-only', 'sale', { customerGroupIds: ['staff'] }),
    )
    const extra = fc.array(candidateOf(['inactive', 'ended', 'future', 'staff-only', 'not-in-the-map']), { minLength: 1, maxLength: 4 })
    fc.assert(
      fc.property(candidates, priceLists, contexts, extra, (all, lists, at, ignored) => {
        const customer = { ...at, customerGroupIds: at.customerGroupIds.filter((group) => group !== 'staff') }
        const withClosed = new Map([...lists, ...closed])
        expect(selectLinePrice([...all, ...ignored], withClosed, customer)).toEqual(selectLinePrice(all, lists, customer))
      }),
    )
  })

  it('never raises the unit price as the quantity rises, when a source’s tiers get cheaper with quantity', () => {
    const monotoneTiers = fc
      .uniqueArray(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 5 })
      .chain((minimums) =>
        fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: minimums.length, maxLength: minimums.length }).map((amounts) => {
          // the smallest tier starts at 1 so every quantity has a price; dearer amounts go to smaller tiers
          const sortedMinimums = [...minimums].sort((a, b) => a - b).map((minimum, index) => (index === 0 ? 1 : minimum))
          const sortedAmounts = [...amounts].sort((a, b) => b - a)
          return sortedMinimums.map((minQuantity, index) => price(sortedAmounts[index] ?? 0, { minQuantity }))
        }),
      )
    fc.assert(
      fc.property(
        monotoneTiers,
        fc.constantFrom<string | null>(null, 'sale', 'override'),
        fc.integer({ min: 1, max: 25 }),
        fc.integer({ min: 0, max: 25 }),
        (tiers, source, quantity, more) => {
          // Base price far above every tier, so a list's tiers decide the price whenever they apply.
          const lists = listsOf(list('sale', 'sale'), list('override', 'override'))
          const all = source === null ? tiers : [price(10_000), ...tiers.map((tier) => ({ ...tier, priceListId: source }))]
          const at = (units: number) => selectLinePrice(all, lists, context({ quantity: units }))?.unitPriceMinor ?? -1
          expect(at(quantity + more)).toBeLessThanOrEqual(at(quantity))
        },
      ),
    )
  })
})
