/**
 * Stock in several locations: what a level can sell, which locations an order's lines are taken
 * from (allocation), and when a level crosses its low-stock threshold. Pure functions; the API
 * reads the levels with their items locked and writes what these decide.
 */

/** A level's quantities (Shopify's states): on hand, held by checkouts, promised to orders, kept back. */
export interface LevelQuantities {
  onHand: number
  reserved: number
  committed: number
  safetyStock: number
}

/** The one figure that can be sold: on hand less what is reserved, committed and kept back (negative when a count found fewer units than were promised). */
export function availableOf(level: LevelQuantities): number {
  return level.onHand - level.reserved - level.committed - level.safetyStock
}

/**
 * What a level adds to its item's `inventory_quantity` (the sellable total): its available units
 * when its location is active and they are positive, else none. A location short of its promises
 * takes nothing from the others.
 */
export function sellableOf(available: number, active: boolean): number {
  return active ? Math.max(0, available) : 0
}

/** True when a change of available units takes a level from at or above its threshold to below it (the moment `inventory.low` is written). */
export function crossedLowStock(before: number, after: number, threshold: number | null): boolean {
  return threshold !== null && before >= threshold && after < threshold
}

/** What allocation knows of one location's stock of one item. */
export interface LocationStock {
  location: string
  /** Lower is tried first; ties go by location id. */
  priority: number
  available: number
}

/** A line to allocate: its key (an order line's id, or its position), its stock item (variant or product id) and units. */
export interface AllocationLine {
  key: string
  item: string
  quantity: number
}

export interface Allocation {
  key: string
  item: string
  location: string
  quantity: number
}

/** Above this many candidate locations the search for the fewest is greedy rather than exhaustive. */
export const EXACT_ALLOCATION_LOCATIONS = 8

/**
 * Which locations the lines' units come from: one location that has every line's units (the
 * first by priority), else the fewest locations that together have them (exact up to
 * EXACT_ALLOCATION_LOCATIONS candidates, greedy beyond: the location that covers the most units
 * still wanted, by priority on a tie), and within the chosen locations each item's units from
 * the first by priority onwards. Answers the allocations, or the index of the first line whose
 * item does not have enough units in all locations together. `stock` has each item's active
 * locations; units below zero count as none.
 */
export function allocateLines(
  lines: readonly AllocationLine[],
  stock: ReadonlyMap<string, readonly LocationStock[]>,
): { allocations: Allocation[] } | { short: number } {
  const wanted = new Map<string, number>()
  for (const line of lines) wanted.set(line.item, (wanted.get(line.item) ?? 0) + line.quantity)

  const available = new Map<string, Map<string, number>>()
  const priority = new Map<string, number>()
  for (const [item, levels] of stock) {
    if (!wanted.has(item)) continue
    const byLocation = new Map<string, number>()
    for (const level of levels) {
      if (level.available <= 0) continue
      byLocation.set(level.location, level.available)
      priority.set(level.location, level.priority)
    }
    available.set(item, byLocation)
  }
  const short = lines.findIndex((line) => total(available.get(line.item)) < wanted.get(line.item)!)
  if (short !== -1) return { short }

  const candidates = [...priority.keys()].sort((a, b) => priority.get(a)! - priority.get(b)! || (a < b ? -1 : a > b ? 1 : 0))
  const covers = (chosen: readonly string[]) =>
    [...wanted].every(([item, units]) => chosen.reduce((sum, location) => sum + (available.get(item)!.get(location) ?? 0), 0) >= units)
  const chosen = candidates.length <= EXACT_ALLOCATION_LOCATIONS ? fewestCovering(candidates, covers) : greedyCovering(candidates, wanted, available)

  // Each item's units from the chosen locations in priority order; lines of one item take them in turn.
  const left = new Map([...wanted].map(([item]) => [item, new Map(chosen.map((location) => [location, available.get(item)!.get(location) ?? 0]))]))
  const allocations: Allocation[] = []
  for (const line of lines) {
    let units = line.quantity
    for (const location of chosen) {
      if (units === 0) break
      const there = left.get(line.item)!
      const take = Math.min(units, there.get(location)!)
      if (take === 0) continue
      there.set(location, there.get(location)! - take)
      units -= take
      allocations.push({ key: line.key, item: line.item, location, quantity: take })
    }
  }
  return { allocations }
}

function total(byLocation: ReadonlyMap<string, number> | undefined): number {
  let sum = 0
  for (const units of byLocation?.values() ?? []) sum += units
  return sum
}

/** The first set of the fewest candidates that covers everything, sets of one size tried in priority order. */
function fewestCovering(candidates: readonly string[], covers: (chosen: readonly string[]) => boolean): string[] {
  for (let size = 1; size <= candidates.length; size++) {
    const found = firstSubset(candidates, size, 0, [], covers)
    if (found) return found
  }
  return [...candidates]
}

function firstSubset(candidates: readonly string[], size: number, from: number, chosen: string[], covers: (chosen: readonly string[]) => boolean): string[] | null {
  if (chosen.length === size) return covers(chosen) ? [...chosen] : null
  for (let index = from; index <= candidates.length - (size - chosen.length); index++) {
    chosen.push(candidates[index]!)
    const found = firstSubset(candidates, size, index + 1, chosen, covers)
    chosen.pop()
    if (found) return found
  }
  return null
}

function greedyCovering(candidates: readonly string[], wanted: ReadonlyMap<string, number>, available: ReadonlyMap<string, ReadonlyMap<string, number>>): string[] {
  const still = new Map(wanted)
  const chosen: string[] = []
  while ([...still.values()].some((units) => units > 0)) {
    let best: string | null = null
    let bestUnits = 0
    for (const location of candidates) {
      if (chosen.includes(location)) continue
      let units = 0
      for (const [item, need] of still) units += Math.min(need, available.get(item)!.get(location) ?? 0)
      if (units > bestUnits) [best, bestUnits] = [location, units]
    }
    chosen.push(best!)
    for (const [item, need] of still) still.set(item, need - Math.min(need, available.get(item)!.get(best!) ?? 0))
  }
  return candidates.filter((location) => chosen.includes(location))
}
