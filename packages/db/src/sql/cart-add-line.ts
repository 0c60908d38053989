/**
 * Adding a line to a cart, the cart's hot write: three statements of fixed text sent together
 * (with BEGIN, in the caller's transaction), one round trip. Built with Drizzle and awaited one
 * by one, the round trips and the query building cost five times a cart read (bench/README.md,
 * Carts).
 *
 * LOCK_CART takes the cart's lock in a statement of its own, so ADD_LINE, which starts once it
 * is held, reads the lines as the previous change to the cart left them (in one statement its
 * snapshot would predate the wait). ADD_LINE checks the line against the cart, the product (or
 * variant) and the limits, says why it refuses (`refusal`), and only when nothing refuses
 * writes the line and touches the cart's updated_at: a refused add changes nothing. READ_CART
 * then reads the cart as ADD_LINE left it.
 */
import type { SqlClient } from '../transaction.js'
import { cartRowOf, cartRowSql, type CartRow } from './cart-read.js'
import type { JsonRow } from './json-rows.js'

const LOCK_CART = 'select from carts where id = $1 for update'

// $1 cart, $2 product, $3 variant, $4 the caller sees every cart, $5 the caller's customer,
// $6 quantity to add, $7 the new line's id, $8 most units per line, $9 most lines per cart.
const ADD_LINE = `
with cart as (
  select c.id, c.currency from carts c
  where c.id = $1 and c.completed_at is null and (c.customer_id is null or $4::boolean or c.customer_id = $5::uuid)),
facts as materialized (
  select cart.currency as "cartCurrency", p.currency,
    coalesce(v.inventory_quantity, p.inventory_quantity) as "inventory",
    coalesce(i.quantity, 0) + $6::int as "quantity",
    case
      when p.is_active is not true then 'product'
      when $3::uuid is not null and v.id is null then 'variant'
      when p.currency <> cart.currency and not exists (
        select from prices pr where pr.product_id = p.id and pr.price_list_id is null and pr.currency = cart.currency
          and (pr.variant_id is null or pr.variant_id = v.id) and pr.min_quantity <= coalesce(i.quantity, 0) + $6::int) then 'currency'
      when coalesce(i.quantity, 0) + $6::int > $8::int then 'quantity'
      when coalesce(i.quantity, 0) + $6::int > coalesce(v.inventory_quantity, p.inventory_quantity) then 'inventory'
      when i.id is null and (select count(*) from cart_items n where n.cart_id = cart.id) >= $9::int then 'lines'
    end as "refusal"
  from cart
  left join products p on p.id = $2
  left join product_variants v on v.id = $3::uuid and v.product_id = p.id
  left join cart_items i on i.cart_id = cart.id and i.product_id = $2 and i.variant_id is not distinct from $3::uuid),
line as (
  insert into cart_items (id, cart_id, product_id, variant_id, quantity)
  select $7, $1, $2, $3::uuid, f."quantity" from facts f where f."refusal" is null
  on conflict (cart_id, product_id, variant_id) do update set quantity = excluded.quantity, updated_at = now()
  returning 1),
touched as (update carts set updated_at = now() where id = $1 and exists (select from line))
select * from facts`

const READ_CART = `select ${cartRowSql()} from carts where "carts"."id" = $1`

export type LineRefusal = 'product' | 'variant' | 'currency' | 'quantity' | 'inventory' | 'lines'

/** What ADD_LINE found: the line's new quantity against the stock, and why it refused (null: added). */
export interface AddedLine {
  cartCurrency: string
  /** The product's currency (null: no such product). */
  currency: string | null
  inventory: number
  quantity: number
  refusal: LineRefusal | null
}

export interface NewCartLine {
  cartId: string
  productId: string
  variantId: string | null
  quantity: number
  /** The id of the line, when it is a new one. */
  lineId: string
  /** Who adds it: anonymous carts are anyone's, a customer's cart only its own (or anyone's who sees all). */
  seesAllCarts: boolean
  customerId: string | null
  maxLineQuantity: number
  maxCartLines: number
}

/**
 * Adds the line in `sql`'s transaction; `line` is undefined when no cart this caller may change
 * was found (missing, someone else's, or checked out: `cart` tells which), else says whether it
 * was added. `cart` is the cart as the statement left it.
 */
export async function addCartLine(sql: SqlClient, add: NewCartLine): Promise<{ line: AddedLine | undefined; cart: CartRow | undefined }> {
  const { cartId } = add
  const parameters = [cartId, add.productId, add.variantId, add.seesAllCarts, add.customerId, add.quantity, add.lineId, add.maxLineQuantity, add.maxCartLines]
  // Sent together: each statement still starts once the one before has finished.
  const locked = sql.unsafe(LOCK_CART, [cartId], { prepare: true })
  const added = sql.unsafe<AddedLine[]>(ADD_LINE, parameters, { prepare: true })
  const read = sql.unsafe<JsonRow<CartRow>[]>(READ_CART, [cartId], { prepare: true })
  await locked
  const [line] = await added
  const [row] = await read
  return { line, cart: row && cartRowOf(row) }
}

