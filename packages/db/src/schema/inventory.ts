/**
 * Stock in several places (docs/inventory.md). A level is one item's stock at one location: the
 * item is a variant, or a product for lines without one, as everywhere else. The item's
 * `inventory_quantity` stays the sellable total, kept in the same statement as every level
 * change: the sum over active locations of max(0, on_hand − reserved − committed − safety_stock).
 * Every change of a level is a row of inventory_movements, so a level equals the sum of its
 * movements.
 */
import { sql } from 'drizzle-orm'
import { bigint, boolean, check, index, integer, jsonb, pgEnum, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { MOVEMENT_REASONS, type Address } from '@commerce/domain'
import { productVariants, products, variantOrNil } from './catalog.js'
import { createdAt, id, updatedAt } from './columns.js'

export const movementReason = pgEnum('movement_reason', MOVEMENT_REASONS)

export const stockLocations = pgTable(
  'stock_locations',
  {
    id: id(),
    name: text('name').notNull(),
    address: jsonb('address').$type<Address>(),
    /** Allocation tries locations by priority, lowest first. */
    priority: integer('priority').notNull().default(0),
    /** An inactive location sells nothing: its units leave the sellable totals. */
    isActive: boolean('is_active').notNull().default(true),
    /** Where new items start and where `inventory_quantity` written through the product API lands. */
    isDefault: boolean('is_default').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('stock_locations_default_key').on(t.isDefault).where(sql`${t.isDefault}`),
    uniqueIndex('stock_locations_name_key').on(sql`lower(${t.name})`),
    index('stock_locations_priority_idx').on(t.priority, t.id),
  ],
)

export const inventoryLevels = pgTable(
  'inventory_levels',
  {
    id: id(),
    locationId: uuid('location_id')
      .notNull()
      .references(() => stockLocations.id),
    productId: uuid('product_id')
      .notNull()
      .references(() => products.id, { onDelete: 'cascade' }),
    variantId: uuid('variant_id').references(() => productVariants.id, { onDelete: 'cascade' }),
    /** The stock item: the variant, or the product for lines without one. */
    itemId: uuid('item_id')
      .notNull()
      .generatedAlwaysAs(sql`coalesce(variant_id, product_id)`),
    onHand: integer('on_hand').notNull().default(0),
    /** Held by checkouts whose payment is with the provider. */
    reserved: integer('reserved').notNull().default(0),
    /** Promised to placed orders, not shipped yet (orders.ts order_item_allocations). */
    committed: integer('committed').notNull().default(0),
    safetyStock: integer('safety_stock').notNull().default(0),
    /** inventory.low is written when available falls below it; null: never. */
    lowStockThreshold: integer('low_stock_threshold'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('inventory_levels_item_location_key').on(t.itemId, t.locationId),
    index('inventory_levels_location_idx').on(t.locationId),
    index('inventory_levels_product_idx').on(t.productId, variantOrNil(t.variantId)),
    check('inventory_levels_quantities_nonnegative', sql`${t.onHand} >= 0 and ${t.reserved} >= 0 and ${t.committed} >= 0 and ${t.safetyStock} >= 0`),
    check('inventory_levels_threshold_nonnegative', sql`${t.lowStockThreshold} >= 0`),
  ],
)

/** The ledger: one row per change of a level, with the deltas of each quantity and why. */
export const inventoryMovements = pgTable(
  'inventory_movements',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    levelId: uuid('level_id')
      .notNull()
      .references(() => inventoryLevels.id, { onDelete: 'cascade' }),
    onHandDelta: integer('on_hand_delta').notNull().default(0),
    reservedDelta: integer('reserved_delta').notNull().default(0),
    committedDelta: integer('committed_delta').notNull().default(0),
    safetyStockDelta: integer('safety_stock_delta').notNull().default(0),
    reason: movementReason('reason').notNull(),
    note: text('note'),
    /** The order (or checkout payment, transfer, return, fulfillment) the change belongs to. */
    orderId: uuid('order_id'),
    referenceId: uuid('reference_id'),
    /** Who made the change (EventOrigin.actor); null for a checkout or the worker. */
    actor: text('actor'),
    createdAt: createdAt(),
  },
  (t) => [index('inventory_movements_level_idx').on(t.levelId, t.id.desc()), index('inventory_movements_order_idx').on(t.orderId)],
)
