/**
 * Stock locations (docs/inventory.md): admin CRUD, the one default location, and opening or
 * closing a location for sale, which moves its sellable units into or out of the items' totals.
 * Every write locks the location row first, then (activation) the items stocked there.
 */
import { and, eq, gt, ne, or, sql } from 'drizzle-orm'
import { toAddress, type CreateStockLocation, type StockLocation, type UpdateStockLocation } from '@commerce/domain'
import {
  fulfillments,
  inventoryLevels,
  isForeignKeyViolation,
  isUniqueViolation,
  lockStockItems,
  orderItemAllocations,
  pgConstraintOf,
  setLocationActive,
  sqlOf,
  stockLocations,
  type Database,
  type Executor,
} from '@commerce/db'
import { conflict, invalidField, notFound } from '../../errors.js'
import { key, keyset, listTable, type PageQuery } from '../../list-cursor.js'

type StockLocationRow = typeof stockLocations.$inferSelect

export function toStockLocation(row: StockLocationRow): StockLocation {
  return {
    id: row.id,
    name: row.name,
    address: row.address ?? null,
    priority: row.priority,
    is_active: row.isActive,
    is_default: row.isDefault,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

const nameTaken = (name: string) => conflict(`A stock location named '${name}' already exists`)

/**
 * Opens or closes the location for sale (its row locked by the caller): every item with a level
 * there is locked, as movers lock them, then its sellable units there join or leave the item's
 * `inventory_quantity` in one statement.
 */
async function setActive(tx: Executor, locationId: string, active: boolean): Promise<void> {
  const stocked = await tx
    .select({ productId: inventoryLevels.productId, variantId: inventoryLevels.variantId })
    .from(inventoryLevels)
    .where(eq(inventoryLevels.locationId, locationId))
  const client = sqlOf(tx)
  await lockStockItems(client, {
    products: stocked.flatMap((level) => (level.variantId === null ? [level.productId] : [])),
    variants: stocked.flatMap((level) => (level.variantId === null ? [] : [level.variantId])),
  })
  await setLocationActive(client, locationId, active)
}

/** In allocation order, lowest priority first: stock_locations_priority_idx (priority, id). */
const LOCATIONS_KEYSET = keyset('stock_locations', 'asc', [key.integer(stockLocations.priority), key.uuid(stockLocations.id)])

export function createStockLocationService(db: Database) {
  /** The unique index's own expression (lower(name)), so the check and the index agree on a clash. */
  async function checkNameFree(tx: Executor, name: string, selfId?: string) {
    const [clash] = await tx
      .select({ id: stockLocations.id })
      .from(stockLocations)
      .where(and(sql`lower(${stockLocations.name}) = lower(${name})`, selfId ? ne(stockLocations.id, selfId) : undefined))
    if (clash) throw nameTaken(name)
  }

  /** Makes `id` the default: the previous default stops being it first (one default, a unique index). */
  async function moveDefault(tx: Executor, id: string) {
    await tx
      .update(stockLocations)
      .set({ isDefault: false, updatedAt: new Date() })
      .where(and(eq(stockLocations.isDefault, true), ne(stockLocations.id, id)))
    await tx.update(stockLocations).set({ isDefault: true }).where(eq(stockLocations.id, id))
  }

  async function write<T>(name: string | undefined, work: (tx: Executor) => Promise<T>): Promise<T> {
    try {
      return await db.transaction(work)
    } catch (error) {
      if (isUniqueViolation(error)) {
        // Two requests at once: both passed the checks, the index kept one.
        if (pgConstraintOf(error) === 'stock_locations_default_key') throw conflict('Another location was made the default at the same time: try again')
        throw nameTaken(name ?? '')
      }
      throw error
    }
  }

  const lock = async (tx: Executor, id: string) => {
    const [row] = await tx.select().from(stockLocations).where(eq(stockLocations.id, id)).for('update')
    if (!row) throw notFound('Stock location')
    return row
  }

  return {
    async list(query: PageQuery) {
      const { rows, meta } = await listTable(db, LOCATIONS_KEYSET, stockLocations, undefined, query)
      return { stock_locations: rows.map(toStockLocation), meta }
    },

    async get(id: string): Promise<StockLocation> {
      const [row] = await db.select().from(stockLocations).where(eq(stockLocations.id, id))
      if (!row) throw notFound('Stock location')
      return toStockLocation(row)
    },

    create(body: CreateStockLocation): Promise<StockLocation> {
      if (body.is_default === true && body.is_active === false) throw conflict('The default location cannot be inactive')
      return write(body.name, async (tx) => {
        await checkNameFree(tx, body.name)
        const [created] = await tx
          .insert(stockLocations)
          .values({
            name: body.name,
            address: body.address ? toAddress(body.address) : null,
            priority: body.priority ?? 0,
            isActive: body.is_active ?? true,
          })
          .returning()
        if (body.is_default !== true) return toStockLocation(created!)
        await moveDefault(tx, created!.id)
        return toStockLocation({ ...created!, isDefault: true })
      })
    },

    update(id: string, body: UpdateStockLocation): Promise<StockLocation> {
      return write(body.name, async (tx) => {
        const current = await lock(tx, id)
        if (body.is_default === false && current.isDefault) {
          throw invalidField('is_default', "Field 'is_default' cannot be false on the default location: make another location the default instead")
        }
        const active = body.is_active ?? current.isActive
        const makeDefault = body.is_default === true && !current.isDefault
        if (!active && (current.isDefault || makeDefault)) {
          throw conflict(
            current.isDefault || body.is_active === false
              ? 'The default location cannot be deactivated'
              : 'An inactive location cannot become the default: activate it in the same request (is_active: true)',
          )
        }
        if (body.name !== undefined) await checkNameFree(tx, body.name, id)
        if (active !== current.isActive) await setActive(tx, id, active)
        if (makeDefault) await moveDefault(tx, id)
        const [row] = await tx
          .update(stockLocations)
          .set({
            name: body.name,
            address: body.address === undefined ? undefined : body.address && toAddress(body.address),
            priority: body.priority,
            updatedAt: new Date(),
          })
          .where(eq(stockLocations.id, id))
          .returning()
        return toStockLocation(row!)
      })
    },

    /**
     * Deletes a location that holds nothing: its empty levels go first (their movements with
     * them, by the foreign key's cascade), the order allocations of none. One that holds units, the
     * default, or one orders were shipped from is kept (409).
     */
    remove(id: string): Promise<void> {
      return write(undefined, async (tx) => {
        const current = await lock(tx, id)
        if (current.isDefault) throw conflict('The default location cannot be deleted: make another location the default first')
        const [holding] = await tx
          .select({ id: inventoryLevels.id })
          .from(inventoryLevels)
          .where(
            and(
              eq(inventoryLevels.locationId, id),
              or(gt(inventoryLevels.onHand, 0), gt(inventoryLevels.reserved, 0), gt(inventoryLevels.committed, 0)),
            ),
          )
          .limit(1)
        if (holding) {
          throw conflict('This location still holds units (on hand, reserved or committed): transfer or adjust them away first, or deactivate it')
        }
        const [shipped] = await tx.select({ id: fulfillments.id }).from(fulfillments).where(eq(fulfillments.locationId, id)).limit(1)
        if (shipped) throw conflict('Orders were shipped from this location: deactivate it instead')
        await tx.delete(orderItemAllocations).where(and(eq(orderItemAllocations.locationId, id), eq(orderItemAllocations.quantity, 0)))
        // Only empty ones: a level that took units meanwhile stays, and its foreign key refuses the delete.
        await tx
          .delete(inventoryLevels)
          .where(and(eq(inventoryLevels.locationId, id), eq(inventoryLevels.onHand, 0), eq(inventoryLevels.reserved, 0), eq(inventoryLevels.committed, 0)))
        try {
          await tx.delete(stockLocations).where(eq(stockLocations.id, id))
        } catch (error) {
          if (isForeignKeyViolation(error)) throw conflict('Stock or orders still refer to this location: deactivate it instead')
          throw error
        }
      })
    },
  }
}
