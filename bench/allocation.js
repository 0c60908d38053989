/**
 * What allocation costs for a 20-line order (@commerce/domain allocateLines, the pure function a
 * checkout and an admin's order run with their items locked): microseconds per order with stock
 * at 1, 3, 8 (the largest exact search), 9 and 20 (greedy) locations, in three shapes: one
 * location has everything (the common case), the order must be split, and the worst case for the
 * exact search (every location has a little of every item, so every set up to the answer's size
 * is tried). Run: `pnpm build && node bench/allocation.js`.
 */
import { performance } from 'node:perf_hooks'
import { allocateLines } from '@commerce/domain'

const LINES = 20
const lines = Array.from({ length: LINES }, (_, index) => ({ key: `line-${index}`, item: `item-${index}`, quantity: 1 + (index % 3) }))

/** Stock per item and location, for `locations` locations, as `units(location, item)`. */
function stockOf(locations, units) {
  const stock = new Map()
  for (let item = 0; item < LINES; item++) {
    stock.set(`item-${item}`, Array.from({ length: locations }, (_, location) => ({ location: `loc-${String(location).padStart(2, '0')}`, priority: location, available: units(location, item) })))
  }
  return stock
}

const shapes = {
  // The last location by priority has everything; the others have none of some item.
  'one has all': (locations) => stockOf(locations, (location, item) => (location === locations - 1 ? 100 : item % 2 === 0 ? 100 : 0)),
  // Each location has its share of the items only: every location is needed.
  'split over all': (locations) => stockOf(locations, (location, item) => (item % locations === location ? 100 : 0)),
  // One unit of everything everywhere: 3 units of some lines need 3 locations, after every smaller set was tried.
  'exact worst case': (locations) => stockOf(locations, () => 1),
}

function measure(stock) {
  const result = allocateLines(lines, stock)
  if (!('allocations' in result)) return null
  const rounds = 2_000
  for (let index = 0; index < 200; index++) allocateLines(lines, stock)
  const started = performance.now()
  for (let index = 0; index < rounds; index++) allocateLines(lines, stock)
  const used = new Set(result.allocations.map((allocation) => allocation.location)).size
  return { microseconds: ((performance.now() - started) * 1000) / rounds, used }
}

console.log(`allocation of a ${LINES}-line order (Node ${process.version})`)
console.log('shape              locations  used  µs/order')
for (const [name, make] of Object.entries(shapes)) {
  for (const locations of [1, 3, 8, 9, 20]) {
    const measured = measure(make(locations))
    if (!measured) continue
    console.log(`${name.padEnd(18)} ${String(locations).padStart(9)} ${String(measured.used).padStart(5)} ${measured.microseconds.toFixed(1).padStart(9)}`)
  }
}
