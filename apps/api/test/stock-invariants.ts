/**
 * The stock invariants (docs/inventory.md), checked on a test file's database after its changes:
 * every level is the sum of its movements, and every item's `inventory_quantity` (the sellable
 * total) is the sum over active locations of max(0, available) of its levels.
 */
import { expect } from 'vitest'
import type { DatabaseHandle } from '@commerce/db'

export async function expectStockInvariants(sql: DatabaseHandle['sql']): Promise<void> {
  const levelsOffTheLedger = await sql`
    select l.id, l.on_hand, l.reserved, l.committed, l.safety_stock,
      coalesce(sum(m.on_hand_delta), 0)::int as on_hand_movements,
      coalesce(sum(m.reserved_delta), 0)::int as reserved_movements,
      coalesce(sum(m.committed_delta), 0)::int as committed_movements,
      coalesce(sum(m.safety_stock_delta), 0)::int as safety_stock_movements
    from inventory_levels l left join inventory_movements m on m.level_id = l.id
    group by l.id
    having l.on_hand <> coalesce(sum(m.on_hand_delta), 0) or l.reserved <> coalesce(sum(m.reserved_delta), 0)
      or l.committed <> coalesce(sum(m.committed_delta), 0) or l.safety_stock <> coalesce(sum(m.safety_stock_delta), 0)`
  expect(levelsOffTheLedger, 'levels that are not the sum of their movements').toEqual([])

  const totalsOff = await sql`
    with sellable as (
      select l.item_id, sum(case when loc.is_active then greatest(0, l.on_hand - l.reserved - l.committed - l.safety_stock) else 0 end)::int as units
      from inventory_levels l join stock_locations loc on loc.id = l.location_id
      group by l.item_id),
    items as (
      select id, 'product' as kind, inventory_quantity from products
      union all
      select id, 'variant' as kind, inventory_quantity from product_variants)
    select i.kind, i.id, i.inventory_quantity, coalesce(s.units, 0) as sellable
    from items i left join sellable s on s.item_id = i.id
    where i.inventory_quantity <> coalesce(s.units, 0)`
  expect(totalsOff, 'items whose inventory_quantity is not what their active levels can sell').toEqual([])
}
