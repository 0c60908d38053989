/**
 * Best-selling, as `sort=best_selling` reads it (docs/catalog.md): the units of each product in
 * orders placed in the last BEST_SELLING_DAYS days that are paid or past it (not pending, cancelled
 * or refunded), less the units cancelled and returned, kept in product_listing.sold. The worker's
 * refresh-best-sellers writes them every ten minutes, reading orders from the primary key's
 * window (UUIDv7 ids sort by creation time), so a checkout pays nothing for it and a list reads one
 * indexed column.
 */
import type { SqlClient } from '../transaction.js'

export const BEST_SELLING_DAYS = 30

// $1 the smallest UUIDv7 of the window's first millisecond.
const REFRESH = `with sold as (
  select i.product_id, sum(i.quantity - i.canceled_quantity - i.returned_quantity)::int as units
  from orders o join order_items i on i.order_id = o.id
  where o.id >= $1::uuid and o.status in ('paid', 'shipped', 'completed') and i.product_id is not null
  group by i.product_id
), wanted as (
  select l.product_id, coalesce(s.units, 0) as units from product_listing l left join sold s on s.product_id = l.product_id
  where l.sold <> 0 or s.units is not null
), changed as (
  update product_listing l set sold = w.units from wanted w where l.product_id = w.product_id and l.sold <> w.units returning 1
)
select count(*)::int as changed from changed`

/** The smallest UUIDv7 of a moment: its 48-bit millisecond timestamp, version 7, the rest zero. */
export function uuidv7Floor(at: Date): string {
  const hex = at.getTime().toString(16).padStart(12, '0')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-000000000000`
}

/** Writes each product's units sold over the window; answers how many products' figure changed. */
export async function refreshBestSellers(client: SqlClient, now = new Date()): Promise<number> {
  const since = new Date(now.getTime() - BEST_SELLING_DAYS * 86_400_000)
  const [row] = await client.unsafe<{ changed: number }[]>(REFRESH, [uuidv7Floor(since)], { prepare: true })
  return row!.changed
}
