/**
 * Settling a checkout's payment: the reservation its completion made (checkout_reservations:
 * the stock, promotion uses and campaign budgets already taken, the order to place) becomes the order, or is given
 * back. Each is one statement, atomic without a transaction of its own, and acts only on a
 * reservation still `held`: of the settlements that race for one payment (the client's
 * completion, the provider's webhook, the worker's sweep) exactly one places the order or
 * releases the stock, and the others change nothing and learn what happened (settlementOf).
 *
 * Locks are taken in the checkout completion's order (checkout-reservation.ts: the cart, the
 * products then the variants, the levels, the promotions and campaigns, the customer's uses of
 * promotions limited per customer), so a release never deadlocks with a completion.
 */
import { getTableColumns, type Table } from 'drizzle-orm'
import type { PaymentState } from '@commerce/domain'
import { eventsCte } from '../outbox.js'
import type { carts, checkoutReservations, checkouts, payments } from '../schema/index.js'
import { announceWhenCommitted, noteStockMoved, type SqlClient } from '../transaction.js'
import { storeCte, storeValues, type StoredAnswer } from './idempotency-keys.js'
import { customerUsesTakenCte, promotionUsesCte, takePromotionUses, takenValues, type Reservation } from './checkout-reservation.js'
import { MOVED_PRODUCTS, stockMovesCte, type MovedProducts } from './stock-moves.js'
import type { JsonOf, JsonRow } from './json-rows.js'

/** What a reservation keeps to place its order without pricing anything again. */
export interface Placement {
  /** The order row, every column by its SQL name (json_populate_record). */
  order: Record<string, unknown>
  /** The order_items rows, likewise. */
  items: Record<string, unknown>[]
  /** The events of a placed order, as eventRows makes them (ids made when it was priced). */
  events: unknown[]
  /** The checkout completion's 201 answer: the order as the API shows it. */
  answer: unknown
}

/** A row of `table` (its TypeScript keys) as Placement keeps it: every column by its SQL name. */
export function placementRow(table: Table, row: Record<string, unknown>): Record<string, unknown> {
  const columns: Record<string, unknown> = {}
  for (const [key, column] of Object.entries(getTableColumns(table))) columns[column.name] = row[key] ?? null
  return columns
}

/** The payment's facts as the provider's truth left them. */
export interface SettledPayment {
  paymentId: string
  state: PaymentState
  amountMinor: number
  capturedMinor: number
  /** The provider's id of the payment, once known. */
  reference: string | null
}

// A reservation's units (`taken`: ReservedStock) and what its promotion uses take from each
// campaign (`spend`), with its products then variants locked in the completion's order
// (checkout-reservation.ts), each by id; from a CTE named `reservation` with its `stock` and
// `promotion_ids`; $1 is the payment. The levels are locked next (they wait for ITEMS_LOCKED),
// then usesLocked.
const STOCK_LOCKED = `taken as materialized (
  select l.* from reservation, json_to_recordset(reservation.stock::json) as l(id uuid, quantity int, variant bool, location uuid, line uuid)),
spend as materialized (
  -- What the reservation's uses take from each campaign: money (spend) or uses (usage).
  select g.id, sum(case when g.budget_type = 'spend' then u.discount_minor else 1 end)::bigint as amount
  from promotion_usages u join campaigns g on g.id = u.campaign_id
  where u.payment_id = $1
  group by g.id),
products_locked as materialized (
  select p.id, p.inventory_quantity from products p
  where p.id in (select id from taken where not variant)
  order by p.id for update of p),
variants_locked as materialized (
  select v.id, v.inventory_quantity from product_variants v
  where v.id in (select id from taken where variant) and (select count(*) from products_locked) >= 0
  order by v.id for update of v)`

// True once the reservation's products and variants are locked: its levels wait for it.
const ITEMS_LOCKED = '(select count(*) from variants_locked) >= 0'

// Every promotion and campaign of the reservation, locked by id once the levels are (`levels`:
// the CTE that locked them), read as they are now.
function usesLocked(levels: string): string {
  return `promotions_locked as materialized (
  select c.id, c.times_used, c.usage_limit, c.per_customer_limit from promotions c
  where c.id = any(select unnest(promotion_ids) from reservation) and (select count(*) from ${levels}) >= 0
  order by c.id for no key update of c),
campaigns_locked as materialized (
  select g.id, g.budget_used, g.budget_limit from campaigns g
  where g.id in (select id from spend) and (select count(*) from promotions_locked) >= 0
  order by g.id for no key update of g)`
}

// The order of a CTE named `placement` (Placement's parts) and its units `held` (line, location,
// quantity): the order, its items, its lines' allocations, the checkout (`checkout`, an SQL
// expression) completed with it, and its events. Names: placed, lines, allocated, closed and eventsCte's.
function orderOfPlacement(checkout: string): string {
  return `placed as (
  insert into orders select o.* from placement, json_populate_record(null::orders, placement."order") o
  returning id),
lines as (
  insert into order_items select i.* from placement, json_populate_recordset(null::order_items, placement.items) i
  returning id),
allocated as (
  -- After the lines exist (their foreign key), each line's units where they were held.
  insert into order_item_allocations (order_item_id, location_id, quantity)
  select line, location, sum(quantity) from held where (select count(*) from lines) > 0 group by line, location),
closed as (
  update checkouts set status = 'completed', order_id = (select id from placed), updated_at = now()
  where id = ${checkout}),
${eventsCte(`(select events from placement)`)}`
}

const PLACEMENT_PARTS = 'p("order" json, items json, events json, answer json)'

// The order, its items, its lines' allocations (the held units become committed where they are), the payment (its truth, its order), the checkout closed, the events and
// the completion's stored answer (its body, when the caller has none, the placement's).
// The reservation is deleted: its order, allocations and movements now say all it held, and
// kept rows would grow with every order. settlementOf still reports it `converted`.
// $1 payment, $2 its state, $3 amount, $4 captured, $5 the provider's reference, $6–$11 the
// stored answer (storeValues).
const PLACE = `
with reservation as materialized (
  delete from checkout_reservations where payment_id = $1 and status = 'held'
  returning checkout_id, placement, stock),
placement as materialized (
  select p.* from reservation, json_to_record(reservation.placement) as ${PLACEMENT_PARTS}),
held as materialized (
  select h.* from reservation, json_to_recordset(reservation.stock::json) as h(id uuid, location uuid, line uuid, quantity int)),
${orderOfPlacement('(select checkout_id from reservation)')},
${stockMovesCte(`(select json_agg(json_build_object('item', h.id, 'location', h.location, 'reserved', -h.quantity,
  'committed', h.quantity, 'reason', 'committed', 'order_id', (select id from placed), 'reference_id', $1::uuid)) from held h)`)},
linked as (update promotion_usages set order_id = (select id from placed) where payment_id = $1 and exists (select from reservation)),
paid as (
  update payments set status = $2::payment_state, amount_minor = $3, captured_minor = $4,
    provider_reference = coalesce($5, provider_reference), order_id = (select id from placed),
    failure_code = null, failure_message = null, updated_at = now()
  where id = $1 and exists (select from reservation)),
${storeCte(6, `(select answer from placement)`, 'exists (select from reservation)')}
select answer::text as "answer", array(select id::text from written) as "eventIds", ${MOVED_PRODUCTS}
from placement`

/**
 * Places the reserved order of a payment the provider authorized or captured; answers the
 * order's JSON (the completion's answer), or undefined when the reservation was not held (placed
 * or released already: see settlementOf).
 */
export async function placeReservedOrder(sql: SqlClient, payment: SettledPayment, stored: StoredAnswer | null = null): Promise<string | undefined> {
  const [row] = await sql.unsafe<({ answer: string; eventIds: string[] } & MovedProducts)[]>(
    PLACE,
    [payment.paymentId, payment.state, payment.amountMinor, payment.capturedMinor, payment.reference, ...storeValues(stored)],
    { prepare: true },
  )
  if (!row) return undefined
  announceWhenCommitted(sql, row.eventIds)
  await noteStockMoved(sql, row.movedProducts)
  return row.answer
}

// A checkout whose provider decided in-process (PaymentProvider.decidesInProcess), placed in the
// completion's first transaction instead of reserved (its locks held by LOCK_AND_READ): the
// promotions' uses written, the units committed at once (no reservation in between), the order
// as PLACE makes it, the payment written as the provider left it, the cart closed, the events
// (the order's and inventory.low) and the stored answer.
// $1 the transaction's time, $2 the units (JSON: ReservedStock), $3 payment, $4 checkout,
// $5 provider, $6 method, $7 capture mode, $8 amount, $9 currency, $10 the payment's state,
// $11 captured, $12 the provider's reference, $13 the order to place (Placement), $14 cart,
// $15 the units as moves (StockMove, committed), $16 the promotions' uses (PromotionUse),
// $17–$22 the stored answer (storeValues). The counts the uses take are takePromotionUses's.
const PLACE_AT_ONCE = `
with ${stockMovesCte('$15::json')},
placement as materialized (select p.* from json_to_record($13::json) as ${PLACEMENT_PARTS}),
held as materialized (select h.* from json_to_recordset($2::json) as h(id uuid, location uuid, line uuid, quantity int)),
${orderOfPlacement('$4::uuid')},
${promotionUsesCte({ now: '$1', payment: '$3', currency: '$9', uses: '$16', order: '(select id from placed)' })},
paid as (
  insert into payments (id, checkout_id, order_id, provider, method, status, capture_mode, amount_minor, captured_minor, currency,
    provider_reference, created_at, updated_at)
  values ($3, $4, (select id from placed), $5, $6, $10::payment_state, $7::capture_mode, $8, $11, $9, $12, $1, $1)),
cart_closed as (update carts set completed_at = $1, updated_at = $1 where id = $14),
${storeCte(17, '(select answer from placement)')}
select answer::text as "answer", ${MOVED_PRODUCTS} from placement`

/** A checkout placed in its first transaction: the reservation's facts with the units committed, and the provider's answer. */
export interface PlacementAtOnce extends Omit<Reservation, 'expiresAt' | 'events'> {
  payment: Pick<SettledPayment, 'state' | 'capturedMinor' | 'reference'>
  /** The ids of the placement's events (eventRows), announced once committed. */
  eventIds: string[]
}

/**
 * Places the order of a checkout whose provider decided in-process, in the transaction of `sql`
 * (the locks of lockCheckout held); answers the order's JSON (the completion's answer). The
 * placement's events include the inventory.low ones; the counts its promotion uses take follow it
 * (takePromotionUses). The caller sends COMMIT behind them.
 */
export async function placeAtOnce(sql: SqlClient, placement: PlacementAtOnce, stored: StoredAnswer | null): Promise<string> {
  const r = placement
  // Noted before the statement is sent: COMMIT travels right behind it and announces what was noted.
  announceWhenCommitted(sql, r.eventIds)
  const [[row]] = await Promise.all([
    sql.unsafe<({ answer: string } & MovedProducts)[]>(
      PLACE_AT_ONCE,
      [...takenValues(r), r.payment.state, r.payment.capturedMinor, r.payment.reference, r.placementJson, r.cartId, r.movesJson, r.usesJson, ...storeValues(stored)],
      { prepare: true },
    ),
    takePromotionUses(sql, r),
  ])
  await noteStockMoved(sql, row!.movedProducts)
  return row!.answer
}

// The stock, promotion uses and campaign budgets given back, the cart open again for changes, the payment failed or
// canceled, and its event ($6: payment.failed or payment.canceled, made by the caller).
// $1 payment, $2 its state, $3 and $4 the failure's code and message, $5 the provider's
// reference, $6 the event (eventRows), $7–$12 the stored answer (storeValues).
const RELEASE = `
with cart as materialized (
  select c.id from checkout_reservations r join checkouts k on k.id = r.checkout_id join carts c on c.id = k.cart_id
  where r.payment_id = $1 and r.status = 'held'
  for update of c),
reservation as materialized (
  update checkout_reservations set status = 'released', updated_at = now()
  where payment_id = $1 and status = 'held' and exists (select from cart)
  returning stock, promotion_ids),
${STOCK_LOCKED},
${stockMovesCte(`(select json_agg(json_build_object('item', t.id, 'location', t.location, 'reserved', -t.quantity,
  'reason', 'reservation_released', 'reference_id', $1::uuid)) from taken t)`, ITEMS_LOCKED)},
${usesLocked('levels_locked')},
promotions_back as (
  update promotions c set times_used = greatest(c.times_used - 1, 0) where c.id in (select id from promotions_locked) and c.usage_limit is not null),
uses_back as (update promotion_usages set released_at = now() where payment_id = $1 and exists (select from reservation)),
customer_uses_back as (
  update promotion_customer_uses c set uses = greatest(c.uses - 1, 0)
  from promotion_usages u
  where u.payment_id = $1 and u.released_at is null and c.promotion_id = u.promotion_id and c.customer_key = u.customer_key
    and u.promotion_id in (select id from promotions_locked) and exists (select from reservation)),
budgets_back as (
  update campaigns g set budget_used = greatest(g.budget_used - s.amount, 0), updated_at = now()
  from spend s where g.id = s.id and g.id in (select id from campaigns_locked)),
reopened as (
  update carts set completed_at = null, updated_at = now() where id in (select id from cart) and exists (select from reservation)),
ended as (
  update payments set status = $2::payment_state, failure_code = $3, failure_message = $4,
    provider_reference = coalesce($5, provider_reference), updated_at = now()
  where id = $1 and exists (select from reservation)),
${eventsCte(`(select $6::json where exists (select from reservation))`)},
${storeCte(7, 'null::json', 'exists (select from reservation)')}
select count(*)::int as "released", ${MOVED_PRODUCTS} from reservation`

export interface Release {
  paymentId: string
  state: 'failed' | 'canceled'
  failure: { code: string; message: string } | null
  reference: string | null
  /** The payment's event (eventRows: ids and JSON), written only when this call released. */
  events: { ids: string[]; json: string }
}

/** Gives a held reservation back; answers whether this call released it. */
export async function releaseReservation(sql: SqlClient, release: Release, stored: StoredAnswer | null = null): Promise<boolean> {
  const [row] = await sql.unsafe<({ released: number } & MovedProducts)[]>(
    RELEASE,
    [release.paymentId, release.state, release.failure?.code ?? null, release.failure?.message ?? null, release.reference, release.events.json, ...storeValues(stored)],
    { prepare: true },
  )
  const released = row!.released === 1
  if (released) announceWhenCommitted(sql, release.events.ids)
  await noteStockMoved(sql, row!.movedProducts)
  return released
}

// The amounts as float8 (exact within Number.MAX_SAFE_INTEGER): postgres.js reads bigint as text.
// A placed reservation is deleted (PLACE): its checkout's order being this payment's says it was
// converted. A released one is deleted after its retention (released-reservations.ts): a checkout's
// payment without a reservation and without that order is still released, with nothing to hold again.
const SETTLEMENT = `
select coalesce(r.status, case when k.order_id = p.order_id then 'converted'::reservation_status
    when p.checkout_id is not null then 'released'::reservation_status end) as status,
  r.expires_at as "expiresAt", k.order_id as "orderId", p.status as "paymentState",
  p.provider_reference as "reference", p.amount_minor::float8 as "amountMinor", p.captured_minor::float8 as "capturedMinor",
  p.capture_mode as "captureMode", p.currency, p.checkout_id as "checkoutId", p.updated_at as "updatedAt",
  p.failure_code as "failureCode", p.failure_message as "failureMessage", p.method, p.created_at as "createdAt",
  (select c.customer_id from carts c where c.id = k.cart_id) as "customerId"
from payments p left join checkout_reservations r on r.payment_id = p.id left join checkouts k on k.id = p.checkout_id
where p.id = $1`

type PaymentJson = JsonRow<typeof payments.$inferSelect>
type ReservationJson = JsonRow<typeof checkoutReservations.$inferSelect>

export type Settlement = JsonOf<
  typeof payments,
  'amountMinor' | 'capturedMinor' | 'captureMode' | 'currency' | 'checkoutId' | 'updatedAt' | 'failureCode' | 'failureMessage' | 'method' | 'createdAt'
> & {
  /** The reservation's (`converted` once its order is placed); null for a payment without one (an order's own payment). */
  status: ReservationJson['status'] | null
  expiresAt: ReservationJson['expiresAt'] | null
  /** The order the reservation placed. */
  orderId: JsonRow<typeof checkouts.$inferSelect>['orderId']
  paymentState: PaymentJson['status']
  reference: PaymentJson['providerReference']
  /** The checkout's cart's owner (the events' customer). */
  customerId: JsonRow<typeof carts.$inferSelect>['customerId']
}

/** Where a payment and its reservation stand. */
export async function settlementOf(sql: SqlClient, paymentId: string): Promise<Settlement | undefined> {
  const [row] = await sql.unsafe<Settlement[]>(SETTLEMENT, [paymentId], { prepare: true })
  return row
}

// A payment that succeeded after its reservation was released (expired, the provider's answer
// late): the reservation is held again if the checkout is still open, its cart not closed by
// another payment, every level it held units at still has them available at an active location,
// and its promotions' limits (total and the customer's) and campaigns' budgets still have room; all or nothing. Locks as RELEASE (the levels read
// locked: fresh, though the statement waited for the item locks).
const REACQUIRE = `
with cart as materialized (
  select c.id from checkout_reservations r join checkouts k on k.id = r.checkout_id join carts c on c.id = k.cart_id
  where r.payment_id = $1 and r.status = 'released' and k.status = 'open' and c.completed_at is null
  for update of c),
reservation as materialized (
  -- Locked: the worker deletes released reservations past their retention (released-reservations.ts).
  select stock, promotion_ids from checkout_reservations r
  where r.payment_id = $1 and r.status = 'released' and exists (select from cart)
    and not exists (select from checkout_reservations h where h.checkout_id = r.checkout_id and h.status = 'held')
  for update of r),
${STOCK_LOCKED},
wanted as materialized (select id, location, sum(quantity)::int as quantity from taken group by id, location),
fresh_levels as materialized (
  select l.item_id, l.location_id, l.on_hand - l.reserved - l.committed - l.safety_stock as available
  from inventory_levels l join wanted w on w.id = l.item_id and w.location = l.location_id
  where ${ITEMS_LOCKED} order by l.id for update of l),
${usesLocked('fresh_levels')},
enough as materialized (
  select exists (select from reservation) and not exists (
    select from wanted w left join fresh_levels f on f.item_id = w.id and f.location_id = w.location
      left join stock_locations loc on loc.id = w.location
    where f.available is null or f.available < w.quantity or not loc.is_active)
  and not exists (select from promotions_locked c where c.usage_limit is not null and c.times_used >= c.usage_limit)
  and not exists (
    -- The customer's other uses held now, read as of the statement: one committed while it waited for a lock is not seen
    -- here, and the customer's count (customer_used) then fails the statement by its CHECK (the caller's caller tries again).
    select from promotions_locked c join promotion_usages mine on mine.promotion_id = c.id and mine.payment_id = $1
    where c.per_customer_limit is not null and (select count(*) from promotion_usages u
      where u.promotion_id = c.id and u.customer_key = mine.customer_key and u.released_at is null and u.payment_id <> $1) >= c.per_customer_limit)
  and not exists (select from campaigns_locked g join spend s on s.id = g.id where g.budget_limit is not null and g.budget_used + s.amount > g.budget_limit) as ok),
${stockMovesCte(`(select json_agg(json_build_object('item', t.id, 'location', t.location, 'reserved', t.quantity,
  'reason', 'reserved', 'reference_id', $1::uuid)) from taken t where (select ok from enough))`)},
used as (
  update promotions set times_used = times_used + 1
  where id in (select id from promotions_locked) and usage_limit is not null and (select ok from enough)),
uses_again as (update promotion_usages set released_at = null where payment_id = $1 and (select ok from enough)),
${customerUsesTakenCte(
  'customer_used',
  `select c.id as promotion_id, mine.customer_key, c.per_customer_limit as use_limit
  from promotions_locked c join promotion_usages mine on mine.promotion_id = c.id and mine.payment_id = $1
  where c.per_customer_limit is not null and mine.customer_key is not null and (select ok from enough)`,
  '$1',
)},
budgets_again as (
  update campaigns g set budget_used = g.budget_used + s.amount, updated_at = now()
  from spend s where g.id = s.id and g.id in (select id from campaigns_locked) and (select ok from enough)),
closed as (update carts set completed_at = now(), updated_at = now() where id in (select id from cart) and (select ok from enough)),
held as (
  update checkout_reservations set status = 'held', updated_at = now()
  where payment_id = $1 and status = 'released' and (select ok from enough) returning 1)
select exists (select from held) as "held", ${MOVED_PRODUCTS}`

/** Holds a released reservation again for a payment that succeeded late; false when the stock (or the checkout) is no longer there. */
export async function reacquireReservation(sql: SqlClient, paymentId: string): Promise<boolean> {
  const [row] = await sql.unsafe<({ held: boolean } & MovedProducts)[]>(REACQUIRE, [paymentId], { prepare: true })
  await noteStockMoved(sql, row!.movedProducts)
  return row!.held
}

// A late payment with nowhere to go, given back (voided, or refunded by the pending refund
// written here and made at the provider once this commits), and its event; decided once: the
// released reservation is deleted under its lock (a REACQUIRE waiting for it then finds nothing
// to hold, and one that held it first makes this change nothing), and the payment must be neither
// placed (its order) nor given back already. A payment whose reservation the worker deleted after
// its retention is decided on the payment row alone.
// $1 payment, $2 its state, $3 captured, $4 refunded, $5 the provider's reference, $6 the event,
// $7 the refund's id, $8 its amount (0: none), $9 its provider key.
const RETURNED = `
with reservation as materialized (
  delete from checkout_reservations where payment_id = $1 and status = 'released' returning 1),
ended as (
  update payments p set status = $2::payment_state, captured_minor = $3, refunded_minor = $4,
    provider_reference = coalesce($5, provider_reference), updated_at = now()
  where p.id = $1 and p.order_id is null and p.status in ('pending', 'requires_action', 'failed')
    and (exists (select from reservation) or not exists (select from checkout_reservations r where r.payment_id = $1))
  returning p.currency),
refund as (
  insert into refunds (id, payment_id, amount_minor, currency, reason, status, provider_key)
  select $7::uuid, $1, $8::bigint, currency, 'Paid after its checkout was released and its stock sold', 'pending', $9 from ended where $8::bigint > 0),
${eventsCte(`(select $6::json where exists (select from ended))`)}
select count(*)::int as "returned" from ended`

export interface ReturnedPayment {
  paymentId: string
  state: 'refunded' | 'canceled'
  capturedMinor: number
  refundedMinor: number
  reference: string | null
  /** The refund to make at the provider once committed (refunded with money left), or null (voided, or nothing left). */
  refund: { id: string; amountMinor: number; providerKey: string } | null
}

/**
 * Records a late payment given back (refunded or voided) and its event, with its pending refund;
 * false when it was placed or given back by another settlement first (nothing written).
 */
export async function recordReturnedPayment(sql: SqlClient, payment: ReturnedPayment, events: { ids: string[]; json: string }): Promise<boolean> {
  const { refund } = payment
  const [row] = await sql.unsafe<{ returned: number }[]>(
    RETURNED,
    [
      payment.paymentId,
      payment.state,
      payment.capturedMinor,
      payment.refundedMinor,
      payment.reference,
      events.json,
      refund?.id ?? null,
      refund?.amountMinor ?? 0,
      refund?.providerKey ?? null,
    ],
    { prepare: true },
  )
  const returned = row!.returned === 1
  if (returned) announceWhenCommitted(sql, events.ids)
  return returned
}

// What the provider answered about a payment still in progress (requires_action, pending), or that it did not answer.
const NOTE_PROGRESS = `update payments set status = $2::payment_state, provider_reference = coalesce($3, provider_reference),
  failure_code = $4, failure_message = $5, updated_at = now()
  where id = $1 and status in ('pending', 'requires_action')`

/** Notes where a payment in progress stands: its state, its reference once known, or a failure code such as the provider not answering. */
export async function notePaymentProgress(
  sql: SqlClient,
  progress: { paymentId: string; state: 'pending' | 'requires_action'; reference: string | null; failure: { code: string; message: string } | null },
): Promise<void> {
  await sql.unsafe(NOTE_PROGRESS, [progress.paymentId, progress.state, progress.reference, progress.failure?.code ?? null, progress.failure?.message ?? null], {
    prepare: true,
  })
}
