/** Setting a cart line's quantity, and learning whether that added units (a change that adds units is checked against the limits). */
import type { cartItems } from '../schema/index.js'
import type { SqlClient } from '../transaction.js'
import type { JsonOf } from './json-rows.js'

// $1 cart, $2 line, $3 the new quantity. The subquery sees the statement's snapshot: the
// quantity before this update.
const SET_QUANTITY = `update cart_items set quantity = $3, updated_at = now()
  where id = $2 and cart_id = $1
  returning product_id as "productId", variant_id as "variantId", (select i.quantity from cart_items i where i.id = $2) as "before"`

export type ChangedLine = JsonOf<typeof cartItems, 'productId' | 'variantId'> & {
  /** The quantity before the change. */
  before: number
}

/** Sets the quantity of a line of the cart (in the caller's transaction); undefined when the cart has no such line. */
export async function setCartLineQuantity(sql: SqlClient, change: { cartId: string; lineId: string; quantity: number }): Promise<ChangedLine | undefined> {
  const [line] = await sql.unsafe<ChangedLine[]>(SET_QUANTITY, [change.cartId, change.lineId, change.quantity], { prepare: true })
  return line
}
