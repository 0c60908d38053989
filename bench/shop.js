/**
 * The carts, checkouts, prices and promotions the cart and checkout scenarios work on (run.js,
 * cpu.js), written straight into a seeded database.
 */
import { randomUUID } from 'node:crypto'
import { stockUp } from './seed.js'

/** Carts for the cart scenarios: many more than connections (see createBenchCarts). */
const BENCH_CARTS = 2_000
export const CART_LINES = 20
/** Checkouts are used up, one per completed request: more than any run completes. */
const BENCH_CHECKOUTS = 60_000
export const CHECKOUT_PRODUCTS = 200
/** Units on hand per checkout product and location. */
const BENCH_STOCK = 30_000_000

/**
 * Carts of CART_LINES lines each (the same CART_LINES products, with ample stock so the adds never
 * run out), written straight into the database: far more carts than connections, so that two
 * requests in flight almost never want the same cart's lock and the scenarios measure the work of
 * a request, not the wait for another connection's.
 */
export async function createBenchCarts(monitor, productIds, { currency = 'USD', count = BENCH_CARTS } = {}) {
  const lineProducts = productIds.slice(0, CART_LINES)
  await monitor`update products set inventory_quantity = 100000000 where id = any(${lineProducts}::uuid[])`
  const rows = await monitor`
    with made as (
      insert into carts (id, currency)
      select gen_random_uuid(), ${currency} from generate_series(1, ${count})
      returning id),
    lines as (
      insert into cart_items (id, cart_id, product_id, quantity)
      select gen_random_uuid(), made.id, product_id, 1 from made, unnest(${lineProducts}::uuid[]) as product_id)
    select id from made`
  await monitor`vacuum (analyze) carts, cart_items`
  return { cartIds: rows.map((row) => row.id), lineProducts }
}

/** The tables a checkout reads or writes. */
export const CHECKOUT_TABLES = ['carts', 'cart_items', 'cart_coupons', 'checkouts', 'checkout_reservations', 'products', 'product_variants', 'promotions', 'promotion_usages', 'campaigns', 'orders',
  'order_items', 'payments', 'events', 'event_outbox', 'idempotency_keys', 'inventory_levels', 'inventory_movements', 'order_item_allocations']

/**
 * Open checkouts written straight into the database (a cart of one unit, an address, a checkout),
 * each for one of CHECKOUT_PRODUCTS products with ample stock, so the checkout scenario completes
 * a fresh one with every request and the reference orders the same products.
 */
export async function createBenchCheckouts(monitor, productIds, { first = CART_LINES, locations = 1, currency = 'USD', count = BENCH_CHECKOUTS } = {}) {
  const products = productIds.slice(first, first + CHECKOUT_PRODUCTS)
  await stockUp(monitor, products, { units: BENCH_STOCK, locations })
  const address = { first_name: null, last_name: null, company: null, line1: '1 Bench St', line2: null, city: 'Bench', region: null, postal_code: null, country: 'US', phone: null }
  const rows = await monitor`
    with carts_made as (
      insert into carts (id, currency, email, shipping_address)
      select gen_random_uuid(), ${currency}, 'bench@example.com', ${monitor.json(address)}
      from generate_series(1, ${count})
      returning id),
    numbered as (select id, row_number() over () as n from carts_made),
    items as (
      insert into cart_items (id, cart_id, product_id, quantity)
      select gen_random_uuid(), numbered.id, (${products}::uuid[])[1 + (numbered.n % ${products.length})], 1 from numbered)
    insert into checkouts (id, cart_id, billing_address)
    select gen_random_uuid(), id, ${monitor.json(address)} from numbered
    returning id`
  return { checkoutIds: rows.map((row) => row.id), checkoutProducts: products }
}

/** The currency of the promotion scenarios: the products get a base price in it, and only its carts see the promotions. */
export const PROMO_CURRENCY = 'EUR'

/**
 * Prices for a second market and what a shop runs in it: a EUR base price for `products`, three
 * price lists (a sale for everyone over half of them, a sale for a customer group nobody is in, an
 * override of a quarter), and ten automatic promotions of every kind, some of which apply to a
 * cart of `products` and some not (a campaign with a budget, a per-customer limit, a group, a
 * higher minimum, an exclusive one that loses).
 */
export async function createBenchPromotions(monitor, products) {
  await monitor`delete from promotions where name like 'Bench %'`
  await monitor`delete from price_lists where name like 'Bench %'`
  await monitor`delete from campaigns where name like 'Bench %'`
  await monitor`
    insert into prices (id, product_id, currency, amount_minor)
    select gen_random_uuid(), p.id, ${PROMO_CURRENCY}, p.price_minor from products p where p.id = any(${products}::uuid[])
    on conflict do nothing`
  const [group] = await monitor`insert into customer_groups (id, name) values (gen_random_uuid(), 'Bench trade') on conflict do nothing returning id`
  const groupId = group?.id ?? (await monitor`select id from customer_groups where name = 'Bench trade'`)[0].id
  const lists = await monitor`
    insert into price_lists (id, name, type, priority, customer_group_ids) values
      (gen_random_uuid(), 'Bench sale', 'sale', 0, '{}'), (gen_random_uuid(), 'Bench trade', 'sale', 0, ${[groupId]}::uuid[]),
      (gen_random_uuid(), 'Bench override', 'override', 1, '{}')
    returning id`
  const [sale, trade, override] = lists.map((list) => list.id)
  const priceOf = (listId, share, factor) => monitor`
    insert into prices (id, product_id, price_list_id, currency, amount_minor)
    select gen_random_uuid(), p.id, ${listId}, ${PROMO_CURRENCY}, round(p.price_minor * ${factor}::numeric)::bigint
    from products p where p.id = any(${products.slice(0, Math.ceil(products.length * share))}::uuid[])`
  await priceOf(sale, 0.5, 0.8)
  await priceOf(trade, 1, 0.7)
  await priceOf(override, 0.25, 1.1)
  const [campaign] = await monitor`
    insert into campaigns (id, name, budget_type, budget_limit, currency) values (gen_random_uuid(), 'Bench launch', 'spend', 100000000000000, ${PROMO_CURRENCY})
    returning id`
  const some = products.slice(0, 5)
  const promotion = (fields) => monitor`insert into promotions ${monitor({ id: randomUUID(), currency: PROMO_CURRENCY, ...fields })}`
  await promotion({ name: 'Bench 5 % off', type: 'percentage', percent_off_ppm: 50_000 })
  await promotion({ name: 'Bench 2 off over 10', type: 'fixed_amount', amount_off_minor: 200, min_subtotal_minor: 1000 })
  await promotion({ name: 'Bench 10 % off five', type: 'percentage', percent_off_ppm: 100_000, target_product_ids: some })
  await promotion({ name: 'Bench 1 off five', type: 'fixed_amount', amount_off_minor: 100, target_product_ids: some })
  await promotion({ name: 'Bench 3 for 2', type: 'buy_x_get_y', percent_off_ppm: 500_000, buy_quantity: 2, get_quantity: 1, condition_product_ids: products })
  await promotion({ name: 'Bench free shipping', type: 'free_shipping' })
  await promotion({ name: 'Bench launch 1 %', type: 'percentage', percent_off_ppm: 10_000, campaign_id: campaign.id })
  await promotion({ name: 'Bench welcome', type: 'fixed_amount', amount_off_minor: 300, per_customer_limit: 1 })
  await promotion({ name: 'Bench trade 20 %', type: 'percentage', percent_off_ppm: 200_000, customer_group_ids: [groupId] })
  await promotion({ name: 'Bench exclusive 3 %', type: 'percentage', percent_off_ppm: 30_000, stacking: 'exclusive' })
  await monitor`vacuum (analyze) prices, price_lists, promotions, campaigns`
}

export function checkCart(body, id) {
  if (body?.id !== id) return [`returned id ${body?.id}, expected ${id}`]
  if (!Array.isArray(body.items) || body.items.length !== CART_LINES) return [`cart has ${body.items?.length} lines, expected ${CART_LINES}`]
  if (typeof body.totals?.total !== 'number') return ['cart has no totals.total']
  return []
}
