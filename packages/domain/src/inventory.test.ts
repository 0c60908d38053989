import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { allocateLines, availableOf, crossedLowStock, sellableOf, type AllocationLine, type LocationStock } from './inventory.js'

const LOCATIONS = ['loc-a', 'loc-b', 'loc-c', 'loc-d']

/** Up to four locations with priorities, up to five items, stock anywhere (some negative), lines on those items. */
const scenario = fc
  .record({
    priorities: fc.tuple(...LOCATIONS.map(() => fc.integer({ min: 0, max: 3 }))),
    items: fc.integer({ min: 1, max: 5 }),
    stock: fc.array(fc.array(fc.integer({ min: -3, max: 12 }), { minLength: 4, maxLength: 4 }), { minLength: 5, maxLength: 5 }),
    lines: fc.array(fc.record({ item: fc.integer({ min: 0, max: 4 }), quantity: fc.integer({ min: 1, max: 15 }) }), { minLength: 1, maxLength: 6 }),
  })
  .map(({ priorities, items, stock, lines }) => {
    const levels = new Map<string, LocationStock[]>()
    for (let item = 0; item < items; item++) {
      levels.set(`item-${item}`, LOCATIONS.map((location, index) => ({ location, priority: priorities[index]!, available: stock[item]![index]! })))
    }
    const wanted: AllocationLine[] = lines.map((line, index) => ({ key: `line-${index}`, item: `item-${line.item % items}`, quantity: line.quantity }))
    return { levels, lines: wanted, priorities }
  })

const unitsAt = (levels: ReadonlyMap<string, readonly LocationStock[]>, item: string, location: string) =>
  Math.max(0, levels.get(item)?.find((level) => level.location === location)?.available ?? 0)

describe('allocateLines', () => {
  it('takes every line’s units from locations that have them, from the fewest locations, and refuses only when all together are short', () => {
    fc.assert(
      fc.property(scenario, ({ levels, lines }) => {
        const wanted = new Map<string, number>()
        for (const line of lines) wanted.set(line.item, (wanted.get(line.item) ?? 0) + line.quantity)
        const everywhere = (item: string) => LOCATIONS.reduce((sum, location) => sum + unitsAt(levels, item, location), 0)
        const result = allocateLines(lines, levels)
        if ('short' in result) {
          const line = lines[result.short]!
          expect(everywhere(line.item)).toBeLessThan(wanted.get(line.item)!)
          // The first such line.
          expect(lines.slice(0, result.short).every((earlier) => everywhere(earlier.item) >= wanted.get(earlier.item)!)).toBe(true)
          return
        }
        for (const [item, units] of wanted) expect(everywhere(item)).toBeGreaterThanOrEqual(units)
        // Each line gets exactly its units.
        for (const line of lines) {
          expect(result.allocations.filter((a) => a.key === line.key).reduce((sum, a) => sum + a.quantity, 0)).toBe(line.quantity)
        }
        // No location gives more than it has, and nothing comes from a location with none.
        const taken = new Map<string, number>()
        for (const a of result.allocations) {
          expect(a.quantity).toBeGreaterThan(0)
          taken.set(`${a.item}@${a.location}`, (taken.get(`${a.item}@${a.location}`) ?? 0) + a.quantity)
        }
        for (const [key, units] of taken) {
          const [item, location] = key.split('@') as [string, string]
          expect(units).toBeLessThanOrEqual(unitsAt(levels, item, location))
        }
        // No set of fewer locations could have shipped everything.
        const used = new Set(result.allocations.map((a) => a.location)).size
        for (let mask = 1; mask < 1 << LOCATIONS.length; mask++) {
          const subset = LOCATIONS.filter((_, index) => mask & (1 << index))
          if (subset.length >= used) continue
          const enough = [...wanted].every(([item, units]) => subset.reduce((sum, location) => sum + unitsAt(levels, item, location), 0) >= units)
          expect(enough).toBe(false)
        }
      }),
      { numRuns: 500 },
    )
  })

  it('ships from the first location by priority that has everything', () => {
    const levels = new Map<string, LocationStock[]>([
      ['mug', [{ location: 'store', priority: 2, available: 5 }, { location: 'warehouse', priority: 1, available: 5 }, { location: 'outlet', priority: 0, available: 1 }]],
      ['cap', [{ location: 'store', priority: 2, available: 5 }, { location: 'warehouse', priority: 1, available: 5 }]],
    ])
    const result = allocateLines(
      [
        { key: 'l1', item: 'mug', quantity: 2 },
        { key: 'l2', item: 'cap', quantity: 1 },
      ],
      levels,
    )
    expect(result).toEqual({
      allocations: [
        { key: 'l1', item: 'mug', location: 'warehouse', quantity: 2 },
        { key: 'l2', item: 'cap', location: 'warehouse', quantity: 1 },
      ],
    })
  })

  it('splits a line over locations by priority when no one location has it all', () => {
    const levels = new Map<string, LocationStock[]>([
      ['mug', [{ location: 'store', priority: 2, available: 3 }, { location: 'warehouse', priority: 1, available: 2 }, { location: 'outlet', priority: 3, available: 9 }]],
    ])
    expect(allocateLines([{ key: 'l1', item: 'mug', quantity: 5 }], levels)).toEqual({
      allocations: [{ key: 'l1', item: 'mug', location: 'outlet', quantity: 5 }],
    })
    // Two locations can: the store and the outlet (the warehouse and the outlet have 11).
    expect(allocateLines([{ key: 'l1', item: 'mug', quantity: 12 }], levels)).toEqual({
      allocations: [
        { key: 'l1', item: 'mug', location: 'store', quantity: 3 },
        { key: 'l1', item: 'mug', location: 'outlet', quantity: 9 },
      ],
    })
    expect(allocateLines([{ key: 'l1', item: 'mug', quantity: 14 }], levels)).toEqual({
      allocations: [
        { key: 'l1', item: 'mug', location: 'warehouse', quantity: 2 },
        { key: 'l1', item: 'mug', location: 'store', quantity: 3 },
        { key: 'l1', item: 'mug', location: 'outlet', quantity: 9 },
      ],
    })
    expect(allocateLines([{ key: 'l1', item: 'mug', quantity: 15 }], levels)).toEqual({ short: 0 })
  })

  it('covers many locations greedily past the exact search’s limit', () => {
    const many = Array.from({ length: 20 }, (_, index) => ({ location: `loc-${String(index).padStart(2, '0')}`, priority: index, available: index % 3 === 0 ? 4 : 1 }))
    const result = allocateLines([{ key: 'l1', item: 'mug', quantity: 10 }], new Map([['mug', many]]))
    if (!('allocations' in result)) throw new Error('expected an allocation')
    expect(result.allocations.reduce((sum, a) => sum + a.quantity, 0)).toBe(10)
    expect(result.allocations.every((a) => a.quantity <= many.find((level) => level.location === a.location)!.available)).toBe(true)
    expect(new Set(result.allocations.map((a) => a.location)).size).toBe(3)
  })
})

describe('levels', () => {
  it('sells what is on hand less what is reserved, committed and kept back; never less than none, nothing at an inactive location', () => {
    expect(availableOf({ onHand: 10, reserved: 2, committed: 3, safetyStock: 1 })).toBe(4)
    expect(availableOf({ onHand: 2, reserved: 0, committed: 5, safetyStock: 0 })).toBe(-3)
    expect(sellableOf(-3, true)).toBe(0)
    expect(sellableOf(4, true)).toBe(4)
    expect(sellableOf(4, false)).toBe(0)
  })

  it('is low once, when available goes from at or above the threshold to below it', () => {
    expect(crossedLowStock(5, 4, 5)).toBe(true)
    expect(crossedLowStock(4, 3, 5)).toBe(false)
    expect(crossedLowStock(9, 9, 5)).toBe(false)
    expect(crossedLowStock(9, 0, null)).toBe(false)
  })
})
