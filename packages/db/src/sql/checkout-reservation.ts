/**
 * The checkout completion's first transaction (apps/api routes/checkouts/complete.ts), two round
 * trips: LOCK_AND_READ claims the Idempotency-Key, locks the cart, its coupons and its stock rows
 * and reads what prices it; RESERVE then takes the stock and the coupon uses, starts the payment,
 * keeps the order to place and closes the cart, with COMMIT right behind it (sendCommit). The
 * order is placed, or the reservation given back, by checkout-settlement.ts.
 */
import { PROVIDER_UNANSWERED } from '@commerce/domain'
import { pgConstraintOf, pgErrorCode } from '../errors.js'
import { eventsCte } from '../outbox.js'
import type { checkouts, inventoryLevels, payments } from '../schema/index.js'
import { announceWhenCommitted, noteStockMoved, type SqlClient } from '../transaction.js'
import { SHIPPING_METHOD_JSON, cartRowSql, type CartRow, type ShippingMethodRow } from './cart-read.js'
import { CLAIM_COLUMNS, WORK_RUNS, claimCte, claimValues, type Claim, type KeyClaim } from './idempotency-keys.js'
import type { JsonRow } from './json-rows.js'
import { MOVED_PRODUCTS, stockMovesCte, type MovedProducts } from './stock-moves.js'

// A level of a locked item at an active location, as checkouts allocate from it (CheckoutLevel).
const LEVEL_JSON = `'id', l.id, 'item', l.item_id, 'product_id', l.product_id, 'variant_id', l.variant_id, 'location', l.location_id,
  'location_name', loc.name, 'priority', loc.priority, 'on_hand', l.on_hand, 'reserved', l.reserved, 'committed', l.committed,
  'safety_stock', l.safety_stock, 'threshold', l.low_stock_threshold, 'updated_at', l.updated_at`

// Locks, in this order (every completion, release and reacquire takes them so; none deadlocks with
// another): the cart, through the checkout, which serializes this completion with every other
// completion and change of the cart; then the stock rows of its lines (the variant's, or the
// product's for a line without one), products then variants, each by id, so the stock read here is
// what the reservation takes. RESERVE then takes the levels; last, TAKE_USES takes the promotions
// with a usage limit and the campaigns it counts a use of, by id, then its customer's uses of
// promotions limited per customer. No promotion or campaign is held while the checkout prices:
// their counts are read as of the statement, and the write that takes a use checks the bound
// against the count as it is then (the CHECKs of promotions, campaigns and
// promotion_customer_uses): a checkout that another used the last of a bound under fails, and is
// priced again (complete.ts). Those rows are shared by every checkout of a currency, so they are
// taken last, by a statement sent with COMMIT right behind it: checkouts queue on them only for
// that moment (bench/README.md, issue 49). Each lock is chained to the one before it (a
// materialized CTE waits for the previous one's count), so the order does not depend on how
// PostgreSQL evaluates the statement.
// It reads what prices the cart with the instance's pricing rules (the cart read of cart-read.ts),
// the payment already in progress for this checkout (held reservation), the order's number (from
// its sequence) and the transaction's time. A row changed by a transaction that committed while
// this one waited for its lock is read as of before that change by the rest of the statement (the
// cart, a stock row: every change of what a level can sell changes its row's total): "stale" says
// so, and the statement is sent again (the locks held, it then reads the change).
// It claims the Idempotency-Key first ($2–$4), and nothing is locked or read unless this request
// runs (WORK_RUNS: not a replay, not a key in flight); it always answers one row, the claim's.
// Last, it has the rest of the transaction use generic plans: RESERVE's parameters are arrays,
// whose sizes a custom plan knows, so PostgreSQL's plan cache would otherwise plan it anew on every
// call; a generic plan is made once per connection.
// $1 checkout, $2–$4 the key's claim (claimValues).
const LOCK_AND_READ = `
with ${claimCte(2)},
locked as materialized (
  select c.*, c.xmin::text as row_version, k.status as checkout_status, k.billing_address as checkout_billing_address,
    k.order_id as checkout_order_id
  from checkouts k join carts c on c.id = k.cart_id
  where k.id = $1 and ${WORK_RUNS}
  for update of c),
lines as materialized (
  select i.product_id, i.variant_id from cart_items i where i.cart_id = (select id from locked)),
locked_products as materialized (
  select p.id, p.inventory_quantity, p.xmin::text as version from products p
  where p.id in (select product_id from lines where variant_id is null)
  order by p.id for update of p),
locked_variants as materialized (
  select v.id, v.inventory_quantity, v.xmin::text as version from product_variants v
  where v.id in (select variant_id from lines) and (select count(*) from locked_products) >= 0
  order by v.id for update of v),
locked_items as materialized (select * from locked_products union all select * from locked_variants)
select ${cartRowSql()},
  "carts".checkout_status as "checkoutStatus", "carts".checkout_billing_address as "billingAddress",
  coalesce((select json_agg(${SHIPPING_METHOD_JSON}) from shipping_methods s where s.currency = "carts"."currency"), '[]'::json)
    as "shippingMethods",
  coalesce((select json_object_agg(s.id, s.inventory_quantity) from locked_items s), '{}'::json) as "stock",
  coalesce((select json_agg(json_build_object(${LEVEL_JSON}) order by loc.priority, loc.id)
    from inventory_levels l join stock_locations loc on loc.id = l.location_id
    where loc.is_active and l.item_id in (select id from locked_items)), '[]'::json) as "levels",
  (select as_read.xmin::text from carts as as_read where as_read.id = "carts"."id") is distinct from "carts".row_version
    or exists (select from locked_products s join products as_read on as_read.id = s.id where as_read.xmin::text <> s.version)
    or exists (select from locked_variants s join product_variants as_read on as_read.id = s.id where as_read.xmin::text <> s.version) as "stale",
  (select json_build_object('paymentId', r.payment_id, 'state', p.status, 'reference', p.provider_reference,
      'amountMinor', p.amount_minor, 'capture', p.capture_mode, 'currency', p.currency,
      'updatedAt', p.updated_at, 'unanswered', p.failure_code = '${PROVIDER_UNANSWERED}')
    from checkout_reservations r join payments p on p.id = r.payment_id
    where r.checkout_id = $1 and r.status = 'held') as "inProgress",
  "carts".checkout_order_id as "orderId",
  case when "carts".id is not null then nextval('order_number_seq')::text end as "orderNumber",
  now() as "now",
  set_config('plan_cache_mode', 'force_generic_plan', true) as "planCacheMode",
  ${CLAIM_COLUMNS}
from claim left join locked as "carts" on true`

type LevelJson = JsonRow<typeof inventoryLevels.$inferSelect>

/** A level a checkout can take units from. */
export interface CheckoutLevel {
  id: LevelJson['id']
  item: LevelJson['itemId']
  product_id: LevelJson['productId']
  variant_id: LevelJson['variantId']
  location: LevelJson['locationId']
  location_name: string
  priority: number
  on_hand: LevelJson['onHand']
  reserved: LevelJson['reserved']
  committed: LevelJson['committed']
  safety_stock: LevelJson['safetyStock']
  threshold: LevelJson['lowStockThreshold']
  updated_at: LevelJson['updatedAt']
}

type PaymentJson = JsonRow<typeof payments.$inferSelect>
type CheckoutJson = JsonRow<typeof checkouts.$inferSelect>

/** The payment of this checkout with the provider now (a held reservation). */
export interface InProgress {
  paymentId: PaymentJson['id']
  state: PaymentJson['status']
  reference: PaymentJson['providerReference']
  amountMinor: PaymentJson['amountMinor']
  capture: PaymentJson['captureMode']
  currency: PaymentJson['currency']
  updatedAt: PaymentJson['updatedAt']
  /** The provider did not answer its last call (PROVIDER_UNANSWERED). */
  unanswered: boolean
}

export interface LockedCheckout extends JsonRow<CartRow> {
  checkoutStatus: CheckoutJson['status']
  billingAddress: CheckoutJson['billingAddress']
  /** The shipping methods in the cart's currency. */
  shippingMethods: ShippingMethodRow[]
  /** The units in stock of each locked stock row (variant or product id). */
  stock: Record<string, number>
  /** The levels of the locked stock rows at active locations, by location priority. */
  levels: CheckoutLevel[]
  inProgress: InProgress | null
  /** The order placed already (by another completion, the provider's webhook or the sweep). */
  orderId: CheckoutJson['orderId']
  orderNumber: string
  /** The transaction's time, as text. */
  now: string
}

/**
 * The first round trip: the key claimed (null: no key), then, when this request runs, the cart,
 * its coupons and its stock rows locked and what prices it read. `checkout` is undefined when the
 * request does not run or no such checkout exists.
 */
export async function lockCheckout(sql: SqlClient, lock: { checkoutId: string; claim: KeyClaim | null }): Promise<Claim & { checkout: LockedCheckout | undefined }> {
  type Row = LockedCheckout & Claim & { stale: boolean }
  const read = async () => (await sql.unsafe<Row[]>(LOCK_AND_READ, [lock.checkoutId, ...claimValues(lock.claim)], { prepare: true }))[0]!
  let row = await read()
  // Read again, with the lock held: the change the lock waited for is seen now.
  if (row.stale) row = await read()
  return { keyFree: row.keyFree, keyStored: row.keyStored, checkout: row.id === null ? undefined : row }
}

/**
 * A use taken on each customer's count of a promotion limited per customer (promotion_customer_uses),
 * from `source`: rows of promotion_id, customer_key and use_limit (the promotion's limit as the
 * statement reads it), for the payment `payment`. A count not there yet is made from the
 * customer's other held uses. Past the limit, the CHECK fails the statement: a concurrent
 * checkout of the same customer took the last use first.
 */
export function customerUsesTakenCte(name: string, source: string, payment: string): string {
  return `${name} as (
  insert into promotion_customer_uses (promotion_id, customer_key, uses, use_limit)
  select s.promotion_id, s.customer_key, 1 + (select count(*) from promotion_usages h
      where h.promotion_id = s.promotion_id and h.customer_key = s.customer_key and h.released_at is null and h.payment_id <> ${payment}), s.use_limit
  from (${source}) s
  on conflict (promotion_id, customer_key) do update set uses = promotion_customer_uses.uses + 1, use_limit = excluded.use_limit)`
}

/**
 * A checkout's promotion uses written (promotion_usages, of the payment and, once placed, the
 * order), for RESERVE and PLACE_AT_ONCE (checkout-settlement.ts), over their parameters as SQL
 * expressions. The counts they take are TAKE_USES's.
 */
export function promotionUsesCte(p: { now: string; payment: string; currency: string; uses: string; order: string }): string {
  return `uses as (
  insert into promotion_usages (id, promotion_id, campaign_id, payment_id, order_id, customer_key, discount_minor, currency, created_at)
  select u.id, u.promotion_id, u.campaign_id, ${p.payment}, ${p.order}, u.customer_key, u.discount_minor, ${p.currency}, ${p.now}
  from json_to_recordset(${p.uses}::json) as u(id uuid, promotion_id uuid, campaign_id uuid, customer_key text, discount_minor bigint))`
}

// The counts a checkout's promotion uses take, last in its transaction (COMMIT right behind):
// the promotions applied that have a usage limit, then the campaigns their uses spend from,
// locked by id; each use counted on its promotion's row where it has a limit, the customer's too
// where it has a limit per customer, and the campaigns' budgets taken. A bound crossed fails the
// statement by its CHECK (isLimitCrossed). A promotion without a usage limit is not written: its
// uses are counted from promotion_usages (apps/api promotions/validation.ts, withTimesUsed), so
// its checkouts never queue on its row. A limit set on it counts the uses held then (migration
// 0047), those of checkouts still completing too: the API locks the row for update first, which
// waits for them (their uses' foreign key share-locks it).
// $1 the transaction's time, $2 the promotions used, $3 payment, $4 their uses (JSON: PromotionUse),
// $5 what they take from campaign budgets (JSON: CampaignSpend).
const TAKE_USES = `
with promotions_locked as materialized (
  select id from promotions where id = any($2::uuid[]) and usage_limit is not null order by id for no key update),
campaigns_locked as materialized (
  select id from campaigns where id in (select x.id from json_to_recordset($5::json) as x(id uuid))
    and (select count(*) from promotions_locked) >= 0
  order by id for no key update),
used as (update promotions set times_used = times_used + 1 where id in (select id from promotions_locked)),
${customerUsesTakenCte(
  'customer_used',
  `select c.id as promotion_id, u.customer_key, c.per_customer_limit as use_limit
  from json_to_recordset($4::json) as u(promotion_id uuid, customer_key text) join promotions c on c.id = u.promotion_id
  where c.per_customer_limit is not null and u.customer_key is not null and (select count(*) from campaigns_locked) >= 0`,
  '$3',
)},
spent as (
  update campaigns g set budget_used = g.budget_used + x.amount, updated_at = $1
  from json_to_recordset($5::json) as x(id uuid, amount bigint) where g.id = x.id and g.id in (select id from campaigns_locked))
select 1`

/**
 * Sends TAKE_USES in the transaction of `sql` when the checkout applies promotions (none: nothing
 * sent); the caller sends COMMIT right behind it. Rejects with the CHECK a use crosses (isLimitCrossed).
 */
export async function takePromotionUses(sql: SqlClient, taken: Pick<Reservation, 'now' | 'promotionIds' | 'paymentId' | 'usesJson' | 'campaignSpendJson'>): Promise<void> {
  if (taken.promotionIds.length === 0) return
  await sql.unsafe(TAKE_USES, [taken.now, taken.promotionIds, taken.paymentId, taken.usesJson, taken.campaignSpendJson], { prepare: true })
}

const LIMIT_CHECKS: ReadonlySet<string> = new Set(['promotions_times_used_within_limit', 'campaigns_budget_within_limit', 'promotion_customer_uses_within_limit'])

/** Whether a statement failed because another checkout took what was left of a promotion's or campaign's bound first: priced again, the checkout sees so. */
export function isLimitCrossed(error: unknown): boolean {
  return pgErrorCode(error) === '23514' && LIMIT_CHECKS.has(pgConstraintOf(error) ?? '')
}

// $1 the transaction's time, $2 the units held (JSON: ReservedStock), $3 payment, $4 checkout,
// $5 provider, $6 method, $7 capture mode, $8 amount, $9 currency, $10 the reservation's expiry,
// $11 the order to place (JSON), $12 cart, $13 the held units as moves (StockMove), $14 events
// (inventory.low of the levels it takes below their threshold), $15 the promotions' uses (JSON:
// PromotionUse), $16 the promotions used.
const RESERVE = `
with ${stockMovesCte('$13::json')},
${eventsCte(14)},
${promotionUsesCte({ now: '$1', payment: '$3', currency: '$9', uses: '$15', order: 'null::uuid' })},
started as (
  insert into payments (id, checkout_id, provider, method, status, capture_mode, amount_minor, currency, created_at, updated_at)
  values ($3, $4, $5, $6, 'pending', $7::capture_mode, $8, $9, $1, $1)),
reserved as (
  insert into checkout_reservations (payment_id, checkout_id, expires_at, stock, promotion_ids, placement, created_at, updated_at)
  values ($3, $4, $10, $2::jsonb, $16::uuid[], $11::json, $1, $1)),
cart_closed as (update carts set completed_at = $1, updated_at = $1 where id = $12)
select ${MOVED_PRODUCTS}`

/** One promotion's use by a checkout (a promotion_usages row to write). */
export interface PromotionUse {
  id: string
  promotion_id: string
  campaign_id: string | null
  customer_key: string | null
  discount_minor: number
}

/** What a checkout takes from one campaign's budget: money (spend) or uses (usage). */
export interface CampaignSpend {
  id: string
  amount: number
}

export interface Reservation {
  /** The transaction's time (LockedCheckout.now): every row written is stamped with it. */
  now: string
  /** The units held, as JSON: ReservedStock[], one entry per order line and location. */
  stockJson: string
  /** The same units as moves (StockMove[], reserved), as JSON. */
  movesJson: string
  /** inventory.low events (eventRows), or none. */
  events: { ids: string[]; json: string }
  /** The promotions applied: each one's use (times_used + 1, a promotion_usages row) and campaign spend. */
  promotionIds: string[]
  usesJson: string
  campaignSpendJson: string
  paymentId: string
  checkoutId: string
  provider: string
  method: string
  capture: PaymentJson['captureMode']
  amountMinor: number
  currency: string
  expiresAt: string
  /** The order to place once the payment succeeds (checkout-settlement.ts Placement), as JSON. */
  placementJson: string
  cartId: string
}

/** $1–$9 of RESERVE and PLACE_AT_ONCE (checkout-settlement.ts): what a checkout takes and the payment it starts. */
export function takenValues(r: Omit<Reservation, 'expiresAt' | 'events'>): (string | number)[] {
  return [r.now, r.stockJson, r.paymentId, r.checkoutId, r.provider, r.method, r.capture, r.amountMinor, r.currency]
}

/**
 * Sends the reservation now, in the transaction of `sql` (the locks of lockCheckout held): the
 * stock, promotion uses and campaign budgets taken (a use past its bound fails the whole
 * transaction by the CHECK it crosses (isLimitCrossed); inventory_quantity >= 0 backs the
 * stock locked and checked), the payment started (`pending`), the order to place kept, and the
 * cart closed to changes until the payment settles. The caller sends COMMIT behind it.
 */
export async function reserveCheckout(sql: SqlClient, reservation: Reservation): Promise<void> {
  const r = reservation
  announceWhenCommitted(sql, r.events.ids)
  const [[row]] = await Promise.all([
    sql.unsafe<MovedProducts[]>(RESERVE, [...takenValues(r), r.expiresAt, r.placementJson, r.cartId, r.movesJson, r.events.json, r.usesJson, r.promotionIds], {
      prepare: true,
    }),
    takePromotionUses(sql, r),
  ])
  await noteStockMoved(sql, row!.movedProducts)
}
