/**
 * What orders do to stock at its locations: a checkout holds units, an admin's order or an edit
 * commits them, a fulfillment ships them from a location, a cancellation gives them back, a
 * return puts them on hand again. Each decides its moves from levels read with their items
 * locked (@commerce/db stock-moves.ts) and the rules of @commerce/domain inventory.ts.
 */
import { and, asc, desc, eq, gt, inArray, isNotNull, isNull, sql } from 'drizzle-orm'
import {
  allocateLines,
  availableOf,
  crossedLowStock,
  type InventoryLevel,
  type LevelQuantities,
  type LocationStock,
  type MovementReason,
  type OrderAllocations,
} from '@commerce/domain'
import {
  applyStockMoves,
  ensureLevels,
  fulfillments,
  orderItems,
  orders,
  lockStockItems,
  orderItemAllocations,
  sqlOf,
  stockLocations,
  writeEvents,
  type EventOrigin,
  type Executor,
  type CheckoutLevel,
  type LockedLevel,
  type ReservedStock,
  type NewEvent,
  type StockMove,
} from '@commerce/db'
import { ApiError, conflict, invalidField, notFound } from '../../errors.js'

/** A level as the API shows it. */
export function toInventoryLevel(level: {
  id: string
  locationId: string
  locationName: string
  productId: string
  variantId: string | null
  onHand: number
  reserved: number
  committed: number
  safetyStock: number
  lowStockThreshold: number | null
  updatedAt: string | Date
}): InventoryLevel {
  return {
    id: level.id,
    location_id: level.locationId,
    location_name: level.locationName,
    product_id: level.productId,
    variant_id: level.variantId,
    on_hand: level.onHand,
    reserved: level.reserved,
    committed: level.committed,
    safety_stock: level.safetyStock,
    available: availableOf(level),
    low_stock_threshold: level.lowStockThreshold,
    updated_at: new Date(level.updatedAt).toISOString(),
  }
}

/** The `inventory.low` events of levels that the moves take below their threshold. */
export function lowStockEvents(
  levels: readonly (Parameters<typeof toInventoryLevel>[0] & { itemId: string; active: boolean })[],
  moves: readonly StockMove[],
  origin: EventOrigin | null,
): NewEvent[] {
  const events: NewEvent[] = []
  for (const level of levels) {
    if (level.lowStockThreshold === null || !level.active) continue
    const mine = moves.filter((move) => move.item === level.itemId && move.location === level.locationId)
    if (mine.length === 0) continue
    const after: LevelQuantities & typeof level = { ...level, updatedAt: new Date() }
    for (const move of mine) {
      after.onHand += move.on_hand ?? 0
      after.reserved += move.reserved ?? 0
      after.committed += move.committed ?? 0
      after.safetyStock += move.safety ?? 0
    }
    if (crossedLowStock(availableOf(level), availableOf(after), level.lowStockThreshold)) {
      events.push({ kind: 'inventory.low', resourceId: level.id, data: toInventoryLevel(after), requestId: origin?.requestId ?? null, actor: origin?.actor ?? null })
    }
  }
  return events
}

/** What allocation reads of levels: each item's active locations. */
export function locationStockOf(levels: readonly { itemId: string; locationId: string; priority: number; active: boolean; available: number }[]): Map<string, LocationStock[]> {
  const stock = new Map<string, LocationStock[]>()
  for (const level of levels) {
    if (!level.active) continue
    const list = stock.get(level.itemId) ?? []
    list.push({ location: level.locationId, priority: level.priority, available: level.available })
    stock.set(level.itemId, list)
  }
  return stock
}

/**
 * What a checkout holds (with its items locked by lockCheckout): each line's units at the
 * locations allocation chooses, as the reservation keeps them, their moves (`reserved` while the
 * payment is with the provider; `committed` for an order placed at once) and the inventory.low
 * events of the levels they take below their threshold; or the index of the first line short.
 */
export function checkoutHold(
  levels: readonly CheckoutLevel[],
  lines: readonly StockedLine[],
  ids: { orderId: string; paymentId: string },
  origin: EventOrigin,
  take: 'reserved' | 'committed',
): { stock: ReservedStock[]; moves: StockMove[]; events: NewEvent[] } | { short: number } {
  const readable = levels.map((level) => {
    const quantities = { onHand: level.on_hand, reserved: level.reserved, committed: level.committed, safetyStock: level.safety_stock }
    return {
      ...quantities,
      id: level.id,
      itemId: level.item,
      locationId: level.location,
      locationName: level.location_name,
      productId: level.product_id,
      variantId: level.variant_id,
      lowStockThreshold: level.threshold,
      updatedAt: level.updated_at,
      priority: level.priority,
      active: true,
      available: availableOf(quantities),
    }
  })
  const result = allocateLines(
    lines.map((line) => ({ key: line.id, item: itemOf(line)!, quantity: line.quantity })),
    locationStockOf(readable),
  )
  if ('short' in result) return result
  const variants = new Set(lines.flatMap((line) => (line.variantId ? [line.variantId] : [])))
  const stock = result.allocations.map((a) => ({ id: a.item, variant: variants.has(a.item), location: a.location, line: a.key, quantity: a.quantity }))
  const moves: StockMove[] = result.allocations.map((a) => ({
    item: a.item,
    location: a.location,
    ...(take === 'reserved' ? { reserved: a.quantity } : { committed: a.quantity }),
    reason: take,
    order_id: ids.orderId,
    reference_id: ids.paymentId,
  }))
  return { stock, moves, events: lowStockEvents(readable, moves, origin) }
}

/** An order line that takes units: its id, its stock item and the units. */
export interface StockedLine {
  id: string
  productId: string | null
  variantId: string | null
  quantity: number
}

const itemOf = (line: { productId: string | null; variantId: string | null }) => line.variantId ?? line.productId

function lockedItems(lines: readonly { productId: string | null; variantId: string | null }[]) {
  const products = new Set<string>()
  const variants = new Set<string>()
  for (const line of lines) {
    if (line.variantId) variants.add(line.variantId)
    else if (line.productId) products.add(line.productId)
  }
  return { products: [...products], variants: [...variants] }
}

/**
 * Locks the stock items of lines (in the caller's transaction), in the one order every writer of
 * stock takes them (lockStockItems): a change that moves several items in steps (an order edit
 * committing some and giving others back) takes them all at once first, so two such changes
 * crossing the same items never deadlock.
 */
export async function lockLines(tx: Executor, lines: readonly { productId: string | null; variantId: string | null }[]): Promise<void> {
  if (lines.length > 0) await lockStockItems(sqlOf(tx), lockedItems(lines))
}

const withAvailable = (levels: readonly LockedLevel[]) => levels.map((level) => ({ ...level, available: availableOf(level) }))

/**
 * Commits the units of new order lines (an admin's order, an edit's added lines) at the
 * locations allocation chooses, in the caller's transaction: 409 insufficient_inventory naming
 * `<field>[i]` (i: the line's position in `lines`) when the locations together have too few.
 */
export async function commitLines(
  tx: Executor,
  orderId: string,
  lines: readonly (StockedLine & { title: string })[],
  field: string,
  origin: EventOrigin,
): Promise<void> {
  const stocked = lines.filter((line) => itemOf(line) !== null)
  if (stocked.length === 0) return
  const client = sqlOf(tx)
  const { levels } = await lockStockItems(client, lockedItems(stocked))
  const readable = withAvailable(levels)
  const result = allocateLines(
    stocked.map((line) => ({ key: line.id, item: itemOf(line)!, quantity: line.quantity })),
    locationStockOf(readable),
  )
  if ('short' in result) {
    const line = stocked[result.short]!
    const index = lines.indexOf(line)
    throw new ApiError('insufficient_inventory', `Not enough stock for '${line.title}': ${line.quantity} requested`, [
      { field: `${field}[${index}]`, message: `${line.title}: ${line.quantity} requested` },
    ])
  }
  const moves = result.allocations.map((a) => ({ item: a.item, location: a.location, committed: a.quantity, reason: 'committed' as const, order_id: orderId, actor: origin.actor }))
  await applyStockMoves(client, moves)
  await tx.insert(orderItemAllocations).values(result.allocations.map((a) => ({ orderItemId: a.key, locationId: a.location, quantity: a.quantity })))
  const events = lowStockEvents(readable, moves, origin)
  if (events.length > 0) await writeEvents(tx, events)
}

/** The allocations of lines, by line, each list in the order units are given back from (the last location by priority first). */
async function allocationsOf(tx: Executor, lineIds: readonly string[]) {
  const rows = await tx
    .select({ orderItemId: orderItemAllocations.orderItemId, locationId: orderItemAllocations.locationId, quantity: orderItemAllocations.quantity })
    .from(orderItemAllocations)
    .innerJoin(stockLocations, eq(stockLocations.id, orderItemAllocations.locationId))
    .where(and(inArray(orderItemAllocations.orderItemId, [...lineIds]), gt(orderItemAllocations.quantity, 0)))
    .orderBy(desc(stockLocations.priority), desc(stockLocations.id))
  const byLine = new Map<string, { locationId: string; quantity: number }[]>()
  for (const row of rows) byLine.set(row.orderItemId, [...(byLine.get(row.orderItemId) ?? []), { locationId: row.locationId, quantity: row.quantity }])
  return byLine
}

async function lowerAllocation(tx: Executor, lineId: string, locationId: string, quantity: number) {
  await tx
    .update(orderItemAllocations)
    .set({ quantity: sql`${orderItemAllocations.quantity} - ${quantity}` })
    .where(and(eq(orderItemAllocations.orderItemId, lineId), eq(orderItemAllocations.locationId, locationId)))
}

/**
 * Gives back committed units of order lines that will not ship (a cancellation, an edit), in the
 * caller's transaction: from the line's allocations, the last location by priority first. Units
 * of lines whose product or variant is gone are only taken off the allocations.
 */
export async function releaseLines(tx: Executor, orderId: string, lines: readonly StockedLine[], origin: EventOrigin): Promise<void> {
  const wanted = lines.filter((line) => line.quantity > 0)
  if (wanted.length === 0) return
  const client = sqlOf(tx)
  await lockStockItems(client, lockedItems(wanted))
  const allocations = await allocationsOf(tx, wanted.map((line) => line.id))
  const moves: StockMove[] = []
  for (const line of wanted) {
    let units = line.quantity
    for (const allocation of allocations.get(line.id) ?? []) {
      if (units === 0) break
      const take = Math.min(units, allocation.quantity)
      units -= take
      await lowerAllocation(tx, line.id, allocation.locationId, take)
      const item = itemOf(line)
      if (item) moves.push({ item, location: allocation.locationId, committed: -take, reason: 'order_released', order_id: orderId, actor: origin.actor })
    }
  }
  await applyStockMoves(client, moves)
}

/**
 * Ships units from one location (a fulfillment), in the caller's transaction: each line's units
 * committed there first; the rest are taken from what is available there, and the line's
 * commitments elsewhere are given back (`reallocated`). 409 insufficient_inventory naming
 * `items[i]` when the location has too few. Answers nothing; the fulfillment row names the location.
 */
export async function shipFrom(
  tx: Executor,
  order: { id: string },
  locationId: string,
  units: readonly (StockedLine & { title: string; field: string })[],
  fulfillmentId: string,
  origin: EventOrigin,
): Promise<void> {
  const client = sqlOf(tx)
  const stocked = units.filter((line) => itemOf(line) !== null)
  const { levels } = await lockStockItems(client, lockedItems(stocked))
  // A line whose product or variant is gone (no level anywhere) ships without touching stock.
  const existing = new Set(levels.map((level) => level.itemId))
  const stockItemOf = (line: StockedLine) => {
    const item = itemOf(line)
    return item !== null && existing.has(item) ? item : null
  }
  const allocations = await allocationsOf(tx, units.map((line) => line.id))
  const moves: StockMove[] = []
  const reference = { order_id: order.id, reference_id: fulfillmentId, actor: origin.actor }
  // Units taken from what is free at the location, per item: several lines may share one.
  const extra = new Map<string, number>()
  for (const line of units) {
    const item = stockItemOf(line)
    const mine = allocations.get(line.id) ?? []
    const here = mine.find((allocation) => allocation.locationId === locationId)?.quantity ?? 0
    const fromHere = Math.min(line.quantity, here)
    if (fromHere > 0) await lowerAllocation(tx, line.id, locationId, fromHere)
    let rest = line.quantity - fromHere
    if (item) {
      moves.push({ item, location: locationId, on_hand: -line.quantity, committed: -fromHere, reason: 'fulfilled', ...reference })
      if (rest > 0) extra.set(item, (extra.get(item) ?? 0) + rest)
    }
    // Commitments elsewhere for the units shipped from here are given back.
    for (const allocation of mine) {
      if (rest === 0) break
      if (allocation.locationId === locationId) continue
      const take = Math.min(rest, allocation.quantity)
      rest -= take
      await lowerAllocation(tx, line.id, allocation.locationId, take)
      if (item) moves.push({ item, location: allocation.locationId, committed: -take, reason: 'reallocated', ...reference })
    }
  }
  const level = (item: string) => levels.find((candidate) => candidate.itemId === item && candidate.locationId === locationId)
  for (const line of units) {
    const item = stockItemOf(line)
    if (!item) continue
    const there = level(item)
    const shipped = units.filter((other) => itemOf(other) === item).reduce((sum, other) => sum + other.quantity, 0)
    const free = there ? availableOf(there) : 0
    if (!there || there.onHand < shipped || free < (extra.get(item) ?? 0)) {
      throw new ApiError('insufficient_inventory', `Not enough stock of '${line.title}' at this location to ship ${line.quantity}`, [
        { field: line.field, message: `${there?.onHand ?? 0} on hand, ${Math.max(0, free)} not promised to other orders` },
      ])
    }
  }
  await applyStockMoves(client, moves)
  const events = lowStockEvents(withAvailable(levels), moves, origin)
  if (events.length > 0) await writeEvents(tx, events)
}

/** Puts received units on hand again at a location (a return), making the level if the item was never stocked there. */
export async function restockUnits(
  tx: Executor,
  locationId: string,
  lines: readonly { productId: string | null; variantId: string | null; quantity: number }[],
  reference: { orderId: string; referenceId: string; reason: MovementReason },
  origin: EventOrigin,
): Promise<void> {
  const wanted = lines.filter((line) => line.quantity > 0 && itemOf(line) !== null)
  if (wanted.length === 0) return
  const client = sqlOf(tx)
  const { levels } = await lockStockItems(client, lockedItems(wanted))
  // Only items that still exist (a level somewhere): a deleted product's units have nowhere to go.
  const existing = wanted.filter((line) => levels.some((level) => level.itemId === itemOf(line)))
  await ensureLevels(
    client,
    existing.map((line) => ({ product: line.productId!, variant: line.variantId, location: locationId })),
  )
  await applyStockMoves(
    client,
    existing.map((line) => ({
      item: itemOf(line)!,
      location: locationId,
      on_hand: line.quantity,
      reason: reference.reason,
      order_id: reference.orderId,
      reference_id: reference.referenceId,
      actor: origin.actor,
    })),
  )
}


/**
 * Where a return's units go on hand: the location asked for (400 naming `location_id` when there
 * is no such location), else where the order's latest fulfillment was sent from, else the
 * default location.
 */
export async function restockLocationOf(tx: Executor, orderId: string, requested: string | undefined): Promise<string> {
  if (requested) return requireLocation(tx, requested)
  const [shipped] = await tx
    .select({ locationId: fulfillments.locationId })
    .from(fulfillments)
    .where(and(eq(fulfillments.orderId, orderId), isNotNull(fulfillments.locationId)))
    .orderBy(desc(fulfillments.id))
    .limit(1)
  if (shipped?.locationId) return shipped.locationId
  return defaultLocationOf(tx)
}

/** The default location's id (migration 0026 makes it; it cannot be deleted). */
export async function defaultLocationOf(tx: Executor): Promise<string> {
  const [found] = await tx.select({ id: stockLocations.id }).from(stockLocations).where(eq(stockLocations.isDefault, true))
  return found!.id
}

/**
 * The location a fulfillment sends from: the one asked for (400 naming `location_id` when there is
 * no such location); else the one location the lines' units are committed at, the default
 * location for lines committed nowhere (placed before stock locations, or their item gone), and
 * 400 asking for `location_id` when they are committed at several.
 */
export async function shippingLocationOf(tx: Executor, lineIds: readonly string[], requested: string | undefined): Promise<string> {
  if (requested) return requireLocation(tx, requested)
  const committedAt = new Set([...(await allocationsOf(tx, lineIds)).values()].flat().map((allocation) => allocation.locationId))
  if (committedAt.size === 1) return [...committedAt][0]!
  if (committedAt.size === 0) return defaultLocationOf(tx)
  throw invalidField(
    'location_id',
    `The units to send are committed at ${committedAt.size} locations: name the one they leave from in 'location_id' (one fulfillment per location)`,
  )
}

/**
 * Makes an item's sellable total `target` (inventory_quantity written through the product API,
 * as before stock locations) by adjusting on-hand units at the default location, in the
 * caller's transaction: 409 when the default location is inactive, or has fewer units to sell
 * than the total would drop by (adjust the other locations through /inventory).
 */
export async function setSellableAtDefault(
  tx: Executor,
  item: { productId: string; variantId: string | null },
  target: number,
  origin: EventOrigin,
): Promise<void> {
  const client = sqlOf(tx)
  const { levels } = await lockStockItems(client, lockedItems([item]))
  const itemId = item.variantId ?? item.productId
  const total = levels.reduce((sum, level) => sum + (level.active ? Math.max(0, availableOf(level)) : 0), 0)
  const change = target - total
  if (change === 0) return
  let level = levels.find((candidate) => candidate.isDefault)
  if (!level) {
    await ensureLevels(client, [{ product: item.productId, variant: item.variantId, location: await defaultLocationOf(tx) }])
    level = (await lockStockItems(client, lockedItems([item]))).levels.find((candidate) => candidate.isDefault)!
  }
  if (!level.active) throw conflict('The default stock location is inactive: adjust the stock of an active location through POST /inventory/adjustments')
  const available = availableOf(level)
  const sellable = Math.max(0, available)
  if (sellable + change < 0) {
    throw conflict(
      `The default location '${level.locationName}' has ${sellable} units to sell, fewer than inventory_quantity would drop by (${-change}): ` +
        'adjust the other locations through POST /inventory/adjustments',
    )
  }
  // A location promised more than it holds (available below zero) is filled up first, so the total moves by exactly `change`.
  const onHand = change > 0 ? change - Math.min(0, available) : change
  const moves: StockMove[] = [{ item: itemId, location: level.locationId, on_hand: onHand, reason: 'correction', note: 'inventory_quantity set through the product API', actor: origin.actor }]
  await applyStockMoves(client, moves)
  const events = lowStockEvents(withAvailable([level]), moves, origin)
  if (events.length > 0) await writeEvents(tx, events)
}

/** An order's allocations with units left, by line and location priority; 404 for an order that does not exist (or is archived). */
export async function allocationsOfOrder(tx: Executor, orderId: string): Promise<OrderAllocations['allocations']> {
  const [order] = await tx.select({ id: orders.id }).from(orders).where(and(eq(orders.id, orderId), isNull(orders.archivedAt)))
  if (!order) throw notFound('Order')
  return tx
    .select({
      order_item_id: orderItemAllocations.orderItemId,
      location_id: orderItemAllocations.locationId,
      location_name: stockLocations.name,
      quantity: orderItemAllocations.quantity,
    })
    .from(orderItemAllocations)
    .innerJoin(orderItems, eq(orderItems.id, orderItemAllocations.orderItemId))
    .innerJoin(stockLocations, eq(stockLocations.id, orderItemAllocations.locationId))
    .where(and(eq(orderItems.orderId, orderId), gt(orderItemAllocations.quantity, 0)))
    .orderBy(asc(orderItems.id), asc(stockLocations.priority), asc(stockLocations.id))
}

/** The location a request names in `location_id`; 400 naming the field when there is none. */
async function requireLocation(tx: Executor, id: string): Promise<string> {
  const [found] = await tx.select({ id: stockLocations.id }).from(stockLocations).where(eq(stockLocations.id, id))
  if (!found) throw invalidField('location_id', "Field 'location_id' names no stock location")
  return found.id
}
