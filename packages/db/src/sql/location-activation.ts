/**
 * Opening or closing a stock location for sale (docs/inventory.md): an inactive location sells
 * nothing, so its levels' sellable units (max(0, available)) leave their items'
 * `inventory_quantity` when it is deactivated and come back when it is activated; the levels
 * themselves do not change (what is reserved or committed there can still be shipped). The
 * caller locks the location row (FOR UPDATE: no level can be added there meanwhile, its foreign
 * key check waits) and then every item with a level there (lockStockItems), as movers lock items
 * before levels.
 */
import { noteStockMoved, type SqlClient } from '../transaction.js'
import { MOVED_PRODUCTS, type MovedProducts } from './stock-moves.js'

// $1 the location, $2 true to activate, false to deactivate. Nothing changes when it already is.
const SET_ACTIVE = `
with location_changed as (
  update stock_locations set is_active = $2::boolean, updated_at = now() where id = $1 and is_active <> $2::boolean returning id),
sellable_changes as (
  select l.item_id, l.product_id, l.variant_id is not null as variant,
    (case when $2::boolean then 1 else -1 end) * sum(greatest(0, l.on_hand - l.reserved - l.committed - l.safety_stock))::int as change
  from inventory_levels l where l.location_id in (select id from location_changed)
  group by l.item_id, l.product_id, l.variant_id is not null having sum(greatest(0, l.on_hand - l.reserved - l.committed - l.safety_stock)) > 0),
products_sellable as (
  update products p set inventory_quantity = p.inventory_quantity + c.change, updated_at = now()
  from sellable_changes c where p.id = c.item_id and not c.variant returning p.id),
variants_sellable as (
  update product_variants v set inventory_quantity = v.inventory_quantity + c.change, updated_at = now()
  from sellable_changes c where v.id = c.item_id and c.variant returning v.id)
select (select count(*) from location_changed)::int as "changed",
  (select count(*) from products_sellable)::int + (select count(*) from variants_sellable)::int as "items", ${MOVED_PRODUCTS}`

/**
 * Sets the location's `is_active` and moves its levels' sellable units into or out of their
 * items' totals, in the caller's transaction (location and items locked). Answers whether the
 * location changed and how many items' totals did.
 */
export async function setLocationActive(sql: SqlClient, locationId: string, active: boolean): Promise<{ changed: boolean; items: number }> {
  const [row] = await sql.unsafe<({ changed: number; items: number } & MovedProducts)[]>(SET_ACTIVE, [locationId, active], { prepare: true })
  await noteStockMoved(sql, row!.movedProducts)
  return { changed: row!.changed === 1, items: row!.items }
}
