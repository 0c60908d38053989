/**
 * Changing inventory levels: the one way every quantity of a level changes (docs/inventory.md).
 * A move adds deltas to one level (an item at a location) and is written to the movement log;
 * the items' sellable totals (`inventory_quantity`) change in the same statement by what their
 * levels can sell more or less. Callers lock the items first (lockStockItems, or the checkout's
 * own locks) and decide the moves from what they read; a checkout's order placement is the one
 * mover that locks no item, and changes no sellable total (reserved units become committed).
 */
import type { MovementReason } from '@commerce/domain'
import type { inventoryLevels, stockLocations } from '../schema/index.js'
import { noteStockMoved, type SqlClient } from '../transaction.js'
import type { JsonRow } from './json-rows.js'

/** One change of one level; absent deltas are 0. */
export interface StockMove {
  /** The stock item: the variant's id, or the product's for an item without variants. */
  item: string
  location: string
  on_hand?: number
  reserved?: number
  committed?: number
  safety?: number
  reason: MovementReason
  note?: string | null
  order_id?: string | null
  reference_id?: string | null
  actor?: string | null
}

/**
 * The CTEs that apply the moves of `source` (an SQL expression of a JSON array of StockMove):
 * the levels locked in id order, so movers never deadlock on each other's levels; `after` (an SQL
 * condition) holds the level locks back until the caller's own locks of the statement are taken
 * (items before levels, as everywhere). Then the levels changed, the log written, and each
 * item's total changed by what its levels' sellable units (sellableOf: max(0, available) at an
 * active location) changed. A move on a level that does not exist changes nothing: callers make
 * the level first (ensureLevels). Names: moves, move_sums, levels_locked, levels_moved,
 * movements_written, sellable_changes, products_sellable, variants_sellable. Every statement
 * built on it answers MOVED_PRODUCTS, and its caller passes them to noteStockMoved: what shows
 * those products' stock (an API instance's catalog answers in memory) is dropped once committed.
 */
export function stockMovesCte(source: string, after = 'true'): string {
  return `moves as (
  select * from json_to_recordset(${source}) as m(item uuid, location uuid, on_hand int, reserved int, committed int, safety int,
    reason movement_reason, note text, order_id uuid, reference_id uuid, actor text)),
move_sums as (
  select item, location, sum(coalesce(on_hand, 0))::int as on_hand, sum(coalesce(reserved, 0))::int as reserved,
    sum(coalesce(committed, 0))::int as committed, sum(coalesce(safety, 0))::int as safety
  from moves group by item, location),
levels_locked as materialized (
  select l.id from inventory_levels l join move_sums s on l.item_id = s.item and l.location_id = s.location
  where ${after} order by l.id for update of l),
levels_moved as (
  update inventory_levels l set on_hand = l.on_hand + s.on_hand, reserved = l.reserved + s.reserved,
    committed = l.committed + s.committed, safety_stock = l.safety_stock + s.safety, updated_at = now()
  from move_sums s join stock_locations loc on loc.id = s.location
  where l.id in (select id from levels_locked) and l.item_id = s.item and l.location_id = s.location
  returning l.id, l.item_id, l.product_id, l.location_id, l.variant_id is not null as variant,
    case when loc.is_active then greatest(0, l.on_hand - l.reserved - l.committed - l.safety_stock)
      - greatest(0, l.on_hand - l.reserved - l.committed - l.safety_stock - (s.on_hand - s.reserved - s.committed - s.safety))
    else 0 end as sellable_change),
movements_written as (
  insert into inventory_movements (level_id, on_hand_delta, reserved_delta, committed_delta, safety_stock_delta, reason, note, order_id, reference_id, actor)
  select lm.id, coalesce(m.on_hand, 0), coalesce(m.reserved, 0), coalesce(m.committed, 0), coalesce(m.safety, 0), m.reason, m.note,
    m.order_id, m.reference_id, m.actor
  from moves m join levels_moved lm on lm.item_id = m.item and lm.location_id = m.location),
sellable_changes as (
  select item_id, product_id, variant, sum(sellable_change)::int as change from levels_moved
  group by item_id, product_id, variant having sum(sellable_change) <> 0),
products_sellable as (
  update products p set inventory_quantity = p.inventory_quantity + c.change, updated_at = now()
  from sellable_changes c where p.id = c.item_id and not c.variant),
variants_sellable as (
  update product_variants v set inventory_quantity = v.inventory_quantity + c.change, updated_at = now()
  from sellable_changes c where v.id = c.item_id and c.variant)`
}

/** A result column of a statement built on stockMovesCte (or of its own `sellable_changes`): the products whose sellable stock it changed. */
export const MOVED_PRODUCTS = `array(select distinct product_id::text from sellable_changes) as "movedProducts"`

/** What a statement answering MOVED_PRODUCTS answers of them. */
export interface MovedProducts {
  movedProducts: string[]
}

const APPLY = `with ${stockMovesCte('$1::json')} select count(*)::int as "moved", ${MOVED_PRODUCTS} from levels_moved`

/** Applies moves in the caller's transaction (their items locked); answers how many levels changed. */
export async function applyStockMoves(sql: SqlClient, moves: readonly StockMove[]): Promise<number> {
  if (moves.length === 0) return 0
  const [row] = await sql.unsafe<({ moved: number } & MovedProducts)[]>(APPLY, [JSON.stringify(moves)], { prepare: true })
  await noteStockMoved(sql, row!.movedProducts)
  return row!.moved
}

type LevelJson = JsonRow<typeof inventoryLevels.$inferSelect>
type LocationJson = JsonRow<typeof stockLocations.$inferSelect>

/** A level as movers read it, with its location's standing. */
export interface LockedLevel {
  id: LevelJson['id']
  itemId: LevelJson['itemId']
  productId: LevelJson['productId']
  variantId: LevelJson['variantId']
  locationId: LevelJson['locationId']
  locationName: LocationJson['name']
  priority: LocationJson['priority']
  active: LocationJson['isActive']
  isDefault: LocationJson['isDefault']
  onHand: LevelJson['onHand']
  reserved: LevelJson['reserved']
  committed: LevelJson['committed']
  safetyStock: LevelJson['safetyStock']
  lowStockThreshold: LevelJson['lowStockThreshold']
  updatedAt: LevelJson['updatedAt']
}

export const LEVEL_COLUMNS = `l.id, l.item_id as "itemId", l.product_id as "productId", l.variant_id as "variantId", l.location_id as "locationId",
  loc.name as "locationName", loc.priority, loc.is_active as "active", loc.is_default as "isDefault", l.on_hand as "onHand",
  l.reserved, l.committed, l.safety_stock as "safetyStock", l.low_stock_threshold as "lowStockThreshold", l.updated_at as "updatedAt"`

// $1 products, $2 variants: locked in id order, products first, as checkouts lock them.
const LOCK_ITEMS = `
with products_locked as materialized (select id from products where id = any($1::uuid[]) order by id for update),
variants_locked as materialized (select id from product_variants where id = any($2::uuid[]) order by id for update)
select (select count(*) from products_locked)::int + (select count(*) from variants_locked)::int as "locked"`

// Read in a statement of its own, after the locks: a statement that waited for a lock reads
// other rows as they were when it began.
const READ_LEVELS = `select ${LEVEL_COLUMNS}
from inventory_levels l join stock_locations loc on loc.id = l.location_id
where l.item_id = any($1::uuid[]) order by loc.priority, loc.id`

/**
 * Locks the stock items (variants, and products for items without variants) in the checkouts'
 * order, then reads every level of them, by location priority. Answers how many items exist.
 */
export async function lockStockItems(sql: SqlClient, items: { products: readonly string[]; variants: readonly string[] }): Promise<{ locked: number; levels: LockedLevel[] }> {
  const [row] = await sql.unsafe<{ locked: number }[]>(LOCK_ITEMS, [[...items.products], [...items.variants]], { prepare: true })
  const levels = await sql.unsafe<LockedLevel[]>(READ_LEVELS, [[...items.products, ...items.variants]], { prepare: true })
  return { locked: row!.locked, levels }
}

// $1 the levels to have: [{product, variant, location}]; an existing one is left as it is.
const ENSURE_LEVELS = `
insert into inventory_levels (id, location_id, product_id, variant_id)
select gen_random_uuid(), e.location, e.product, e.variant from json_to_recordset($1::json) as e(product uuid, variant uuid, location uuid)
on conflict (item_id, location_id) do nothing`

/** Makes the levels that do not exist yet (an item stocked at a new location), empty. */
export async function ensureLevels(sql: SqlClient, levels: readonly { product: string; variant: string | null; location: string }[]): Promise<void> {
  if (levels.length === 0) return
  await sql.unsafe(ENSURE_LEVELS, [JSON.stringify(levels)], { prepare: true })
}
