/**
 * The stock an order's line takes (an order made by an admin, apps/api routes/orders): one
 * guarded update of the stock row, which takes the units only while that many are in stock, so
 * stock never goes below zero whatever runs at the same time.
 */
import type { SqlClient } from '../transaction.js'

// $1 the variant (or product), $2 the units.
const TAKE_VARIANT_STOCK = `update product_variants set inventory_quantity = inventory_quantity - $2, updated_at = now()
  where id = $1 and inventory_quantity >= $2 returning id`
const TAKE_PRODUCT_STOCK = `update products set inventory_quantity = inventory_quantity - $2, updated_at = now()
  where id = $1 and inventory_quantity >= $2 returning id`

/**
 * Takes `quantity` units of the variant, or of the product for a line without one, in the
 * caller's transaction; false when fewer are in stock, and then nothing changed. Sent at once:
 * updates sent together run one after another in the order they were sent.
 */
export async function takeStock(sql: SqlClient, line: { productId: string; variantId: string | null; quantity: number }): Promise<boolean> {
  const taken = line.variantId
    ? await sql.unsafe(TAKE_VARIANT_STOCK, [line.variantId, line.quantity], { prepare: true })
    : await sql.unsafe(TAKE_PRODUCT_STOCK, [line.productId, line.quantity], { prepare: true })
  return taken.length === 1
}
