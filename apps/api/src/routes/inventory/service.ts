/**
 * Inventory levels and the movement log as admins read and change them (docs/inventory.md):
 * levels' safety stock and thresholds, adjustments (goods received, counts, damage) and transfers
 * between locations. Each write locks the stock item (lockStockItems; an adjustment or a transfer
 * first takes its locations FOR SHARE, so none is opened, closed or deleted meanwhile), changes
 * levels only through applyStockMoves, and writes its events in the same transaction.
 */
import { and, asc, eq, inArray, sql, type SQL } from 'drizzle-orm'
import {
  availableOf,
  DEFAULT_PER_PAGE,
  type CreateInventoryAdjustment,
  type CreateInventoryTransfer,
  type InventoryChange,
  type InventoryLevel,
  type InventoryLevelList,
  type InventoryMovement,
  type InventoryMovementList,
  type ListInventoryLevelsQuery,
  type ListInventoryMovementsQuery,
  type UpdateInventoryLevel,
} from '@commerce/domain'
import {
  applyStockMoves,
  ensureLevels,
  inventoryLevels,
  inventoryMovements,
  lockStockItems,
  newId,
  productVariants,
  products,
  sqlOf,
  stockLocations,
  variantOrNil,
  writeEvents,
  type Database,
  type EventOrigin,
  type Executor,
  type LockedLevel,
  type NewEvent,
  type StockMove,
} from '@commerce/db'
import { conflict, invalidField, notFound } from '../../errors.js'
import { cursorPage, key, keyset, selectList } from '../../list-cursor.js'
import { lowStockEvents, toInventoryLevel } from './stock.js'

/** A level with its location's name, as the API shows it. */
const LEVEL_FIELDS = {
  id: inventoryLevels.id,
  locationId: inventoryLevels.locationId,
  locationName: stockLocations.name,
  productId: inventoryLevels.productId,
  variantId: inventoryLevels.variantId,
  onHand: inventoryLevels.onHand,
  reserved: inventoryLevels.reserved,
  committed: inventoryLevels.committed,
  safetyStock: inventoryLevels.safetyStock,
  lowStockThreshold: inventoryLevels.lowStockThreshold,
  updatedAt: inventoryLevels.updatedAt,
}

/**
 * By product, its own level first (no variant), then its variants, each item's locations in
 * allocation order: inventory_levels_product_idx (product_id, variant or nil) gives
 * the items in order, and each item's few locations are sorted as they come.
 */
const LEVELS_KEYSET = keyset('inventory_levels', 'asc', [
  key.uuid(inventoryLevels.productId),
  key.uuid(variantOrNil(inventoryLevels.variantId)),
  key.integer(stockLocations.priority),
  key.uuid(inventoryLevels.locationId),
])

const MOVEMENT_FIELDS = {
  id: inventoryMovements.id,
  levelId: inventoryMovements.levelId,
  locationId: inventoryLevels.locationId,
  productId: inventoryLevels.productId,
  variantId: inventoryLevels.variantId,
  onHandDelta: inventoryMovements.onHandDelta,
  reservedDelta: inventoryMovements.reservedDelta,
  committedDelta: inventoryMovements.committedDelta,
  safetyStockDelta: inventoryMovements.safetyStockDelta,
  reason: inventoryMovements.reason,
  note: inventoryMovements.note,
  orderId: inventoryMovements.orderId,
  referenceId: inventoryMovements.referenceId,
  actor: inventoryMovements.actor,
  createdAt: inventoryMovements.createdAt,
}

/** Movements with their level's location and item. */
const movementsFrom = (executor: Executor) =>
  executor.select(MOVEMENT_FIELDS).from(inventoryMovements).innerJoin(inventoryLevels, eq(inventoryLevels.id, inventoryMovements.levelId))
type MovementRow = Awaited<ReturnType<typeof movementsFrom>>[number]

function toInventoryMovement(row: MovementRow): InventoryMovement {
  return {
    id: String(row.id),
    level_id: row.levelId,
    location_id: row.locationId,
    product_id: row.productId,
    variant_id: row.variantId,
    on_hand_delta: row.onHandDelta,
    reserved_delta: row.reservedDelta,
    committed_delta: row.committedDelta,
    safety_stock_delta: row.safetyStockDelta,
    reason: row.reason,
    note: row.note,
    order_id: row.orderId,
    reference_id: row.referenceId,
    actor: row.actor,
    created_at: row.createdAt.toISOString(),
  }
}

/** available < low_stock_threshold, in SQL (availableOf). */
const IS_LOW = sql`(${inventoryLevels.lowStockThreshold} is not null and ${inventoryLevels.onHand} - ${inventoryLevels.reserved} - ${inventoryLevels.committed} - ${inventoryLevels.safetyStock} < ${inventoryLevels.lowStockThreshold})`

/** The most units an item may hold on hand in all its locations together: PostgreSQL's integer, the columns' type. */
const MAX_ITEM_UNITS = 2_147_483_647

/** The log, newest first: the identity id, which the (level_id, id) index also serves after a level's filter. */
const MOVEMENTS_KEYSET = keyset('inventory_movements', 'desc', [key.integer(inventoryMovements.id)])

/** The stock item a request names: the variant, or the product when it has none. */
interface StockItem {
  product: string
  variant: string | null
  item: string
}

const itemsOf = (item: StockItem) => ({ products: item.variant ? [] : [item.product], variants: item.variant ? [item.variant] : [] })

export function createInventoryService(db: Database) {
  const readLevels = (tx: Executor, ids: readonly string[]) =>
    tx
      .select(LEVEL_FIELDS)
      .from(inventoryLevels)
      .innerJoin(stockLocations, eq(stockLocations.id, inventoryLevels.locationId))
      .where(inArray(inventoryLevels.id, [...ids]))

  /** The levels (in the order of `ids`) and the movements of one change, as it answers and its event carries them. */
  async function changeOf(tx: Executor, levelIds: readonly string[], referenceId: string): Promise<InventoryChange> {
    const [levels, movements] = await Promise.all([
      readLevels(tx, levelIds),
      // By level first: the (level_id, id) index finds them.
      movementsFrom(tx)
        .where(and(inArray(inventoryMovements.levelId, [...levelIds]), eq(inventoryMovements.referenceId, referenceId)))
        .orderBy(asc(inventoryMovements.id)),
    ])
    return {
      levels: levelIds.map((id) => toInventoryLevel(levels.find((level) => level.id === id)!)),
      movements: movements.map(toInventoryMovement),
    }
  }

  /**
   * The stock item of a request, checked: the product exists, the variant is the product's, and
   * a product with variants is named by variant (its units are the variants').
   */
  async function stockItemOf(tx: Executor, productId: string, variantId: string | null | undefined): Promise<StockItem> {
    const [product] = await tx.select({ id: products.id }).from(products).where(eq(products.id, productId))
    if (!product) throw invalidField('product_id', "Field 'product_id' names no product")
    if (variantId) {
      const [variant] = await tx
        .select({ id: productVariants.id })
        .from(productVariants)
        .where(and(eq(productVariants.id, variantId), eq(productVariants.productId, productId)))
      if (!variant) throw invalidField('variant_id', "Field 'variant_id' names no variant of this product")
      return { product: productId, variant: variantId, item: variantId }
    }
    const [variant] = await tx.select({ id: productVariants.id }).from(productVariants).where(eq(productVariants.productId, productId)).limit(1)
    if (variant) throw invalidField('variant_id', "Field 'variant_id' is required: this product has variants, and each variant has its own stock")
    return { product: productId, variant: null, item: productId }
  }

  /** The locations, share-locked in id order (not opened, closed or deleted until the change commits); 400 naming the field of one that does not exist. */
  async function shareLocations(tx: Executor, fields: readonly { field: string; id: string }[]) {
    const ids = [...new Set(fields.map((entry) => entry.id))].sort()
    const rows = await tx
      .select({ id: stockLocations.id, name: stockLocations.name })
      .from(stockLocations)
      .where(inArray(stockLocations.id, ids))
      .orderBy(asc(stockLocations.id))
      .for('share')
    for (const { field, id } of fields) {
      if (!rows.some((row) => row.id === id)) throw invalidField(field, `Field '${field}' names no stock location`)
    }
    return rows
  }

  /** Locks the item and answers its levels; 400 when it went away meanwhile (a variant deleted). */
  async function lockItem(tx: Executor, item: StockItem): Promise<LockedLevel[]> {
    const { locked, levels } = await lockStockItems(sqlOf(tx), itemsOf(item))
    if (locked === 0) throw invalidField(item.variant ? 'variant_id' : 'product_id', `Field '${item.variant ? 'variant_id' : 'product_id'}' names no product or variant`)
    return levels
  }

  /** The item's level at a location, made (empty) if the item was never stocked there; the levels as they are now. */
  async function levelAt(tx: Executor, item: StockItem, locationId: string, levels: LockedLevel[]): Promise<{ level: LockedLevel; levels: LockedLevel[] }> {
    const found = levels.find((level) => level.locationId === locationId)
    if (found) return { level: found, levels }
    await ensureLevels(sqlOf(tx), [{ product: item.product, variant: item.variant, location: locationId }])
    const again = await lockItem(tx, item)
    return { level: again.find((level) => level.locationId === locationId)!, levels: again }
  }

  /** Applies the moves and writes inventory.adjusted (its resource: the first level) and the inventory.low of levels they take below their threshold. */
  async function commitChange(tx: Executor, levels: readonly LockedLevel[], levelIds: readonly string[], moves: StockMove[], referenceId: string, origin: EventOrigin) {
    await applyStockMoves(sqlOf(tx), moves)
    const change = await changeOf(tx, levelIds, referenceId)
    const events: NewEvent[] = [
      { kind: 'inventory.adjusted', resourceId: levelIds[0]!, data: change, requestId: origin.requestId, actor: origin.actor },
      ...lowStockEvents(levels, moves, origin),
    ]
    await writeEvents(tx, events)
    return change
  }

  return {
    async listLevels(query: ListInventoryLevelsQuery): Promise<InventoryLevelList> {
      const conditions: (SQL | undefined)[] = [
        query.location_id === undefined ? undefined : eq(inventoryLevels.locationId, query.location_id),
        query.product_id === undefined ? undefined : eq(inventoryLevels.productId, query.product_id),
        query.variant_id === undefined ? undefined : eq(inventoryLevels.variantId, query.variant_id),
        query.low_stock === undefined ? undefined : query.low_stock ? IS_LOW : sql`not (${IS_LOW})`,
      ]
      const where = and(...conditions)
      const select = db
        .select({ ...LEVEL_FIELDS, cursorKey: LEVELS_KEYSET.cursorKey })
        .from(inventoryLevels)
        .innerJoin(stockLocations, eq(stockLocations.id, inventoryLevels.locationId))
        .$dynamic()
      const { rows, meta } = await selectList(LEVELS_KEYSET, query, select, where, () => db.$count(inventoryLevels, where))
      return { inventory_levels: rows.map(toInventoryLevel), meta }
    },

    /**
     * Safety stock (a move: `safety_stock`, through the log) and the low-stock threshold (a
     * column) of a level; inventory.low when more safety stock takes it below the threshold.
     */
    updateLevel(id: string, body: UpdateInventoryLevel, origin: EventOrigin): Promise<InventoryLevel> {
      return db.transaction(async (tx) => {
        const [named] = await tx
          .select({ productId: inventoryLevels.productId, variantId: inventoryLevels.variantId })
          .from(inventoryLevels)
          .where(eq(inventoryLevels.id, id))
        if (!named) throw notFound('Inventory level')
        const item = { product: named.productId, variant: named.variantId, item: named.variantId ?? named.productId }
        const { levels } = await lockStockItems(sqlOf(tx), itemsOf(item))
        const level = levels.find((candidate) => candidate.id === id)
        if (!level) throw notFound('Inventory level')
        const threshold = body.low_stock_threshold === undefined ? level.lowStockThreshold : body.low_stock_threshold
        if (body.low_stock_threshold !== undefined) {
          await tx.update(inventoryLevels).set({ lowStockThreshold: threshold, updatedAt: new Date() }).where(eq(inventoryLevels.id, id))
        }
        const moves: StockMove[] =
          body.safety_stock === undefined || body.safety_stock === level.safetyStock
            ? []
            : [{ item: level.itemId, location: level.locationId, safety: body.safety_stock - level.safetyStock, reason: 'safety_stock', actor: origin.actor }]
        await applyStockMoves(sqlOf(tx), moves)
        // Crossing the threshold the level has from now on.
        const events = lowStockEvents([{ ...level, lowStockThreshold: threshold }], moves, origin)
        if (events.length > 0) await writeEvents(tx, events)
        const [row] = await readLevels(tx, [id])
        return toInventoryLevel(row!)
      })
    },

    /** Units added or removed on hand (a delta, or a count it is set to), with the reason and who; 409 below zero. */
    async adjust(tx: Executor, body: CreateInventoryAdjustment, origin: EventOrigin): Promise<InventoryChange> {
      if ((body.quantity === undefined) === (body.on_hand === undefined)) {
        throw invalidField(body.quantity === undefined ? 'quantity' : 'on_hand', "Send exactly one of 'quantity' (units to add or remove) and 'on_hand' (the units counted)")
      }
      const item = await stockItemOf(tx, body.product_id, body.variant_id)
      const [location] = await shareLocations(tx, [{ field: 'location_id', id: body.location_id }])
      const { level, levels } = await levelAt(tx, item, body.location_id, await lockItem(tx, item))
      const delta = body.quantity ?? body.on_hand! - level.onHand
      if (level.onHand + delta < 0) {
        throw conflict(`Cannot remove ${-delta} units: ${level.onHand} on hand at ${location!.name}`)
      }
      // The item's units everywhere bound its levels and its inventory_quantity: within PostgreSQL's integer.
      if (levels.reduce((sum, other) => sum + other.onHand, 0) + delta > MAX_ITEM_UNITS) {
        throw conflict(`Cannot add ${delta} units: an item holds at most ${MAX_ITEM_UNITS} units on hand in all locations together`)
      }
      const referenceId = newId()
      const moves: StockMove[] = [
        { item: item.item, location: body.location_id, on_hand: delta, reason: body.reason, note: body.note ?? null, reference_id: referenceId, actor: origin.actor },
      ]
      return commitChange(tx, levels, [level.id], moves, referenceId, origin)
    },

    /** Available units moved from one location to another: two movements with one reference (the transfer). */
    async transfer(tx: Executor, body: CreateInventoryTransfer, origin: EventOrigin): Promise<InventoryChange> {
      if (body.from_location_id === body.to_location_id) {
        throw invalidField('to_location_id', "Field 'to_location_id' must differ from 'from_location_id'")
      }
      const item = await stockItemOf(tx, body.product_id, body.variant_id)
      const locations = await shareLocations(tx, [
        { field: 'from_location_id', id: body.from_location_id },
        { field: 'to_location_id', id: body.to_location_id },
      ])
      const locked = await lockItem(tx, item)
      const source = locked.find((level) => level.locationId === body.from_location_id)
      const free = source ? Math.max(0, availableOf(source)) : 0
      if (free < body.quantity) {
        const name = locations.find((location) => location.id === body.from_location_id)!.name
        throw conflict(`Cannot transfer ${body.quantity} units: ${free} available at ${name}`)
      }
      const { level: destination, levels } = await levelAt(tx, item, body.to_location_id, locked)
      const referenceId = newId()
      const common = { item: item.item, reason: 'transfer' as const, note: body.note ?? null, reference_id: referenceId, actor: origin.actor }
      const moves: StockMove[] = [
        { ...common, location: body.from_location_id, on_hand: -body.quantity },
        { ...common, location: body.to_location_id, on_hand: body.quantity },
      ]
      return commitChange(tx, levels, [source!.id, destination.id], moves, referenceId, origin)
    },

    /** The movement log, newest first, by cursor only (no page numbers: a ledger is walked, not counted). */
    async listMovements(query: ListInventoryMovementsQuery): Promise<InventoryMovementList> {
      const perPage = query.per_page ?? DEFAULT_PER_PAGE
      const rows = await movementsFrom(db)
        .where(
          and(
            query.after ? MOVEMENTS_KEYSET.after(query.after) : undefined,
            query.location_id === undefined ? undefined : eq(inventoryLevels.locationId, query.location_id),
            query.product_id === undefined ? undefined : eq(inventoryLevels.productId, query.product_id),
            query.variant_id === undefined ? undefined : eq(inventoryLevels.variantId, query.variant_id),
            query.order_id === undefined ? undefined : eq(inventoryMovements.orderId, query.order_id),
            query.reason === undefined ? undefined : eq(inventoryMovements.reason, query.reason),
          ),
        )
        .orderBy(...MOVEMENTS_KEYSET.orderBy)
        .limit(perPage + 1)
      const found = cursorPage(MOVEMENTS_KEYSET, rows, perPage, (row) => [row.id])
      return { inventory_movements: found.rows.map(toInventoryMovement), meta: found.meta }
    },

  }
}
