/**
 * What the worker's payment sweeps (apps/worker/src/payment-sweeps.ts) ask the provider about:
 * held reservations past their time, and payments in progress that nothing settled (the API died
 * between the provider's answer and its last statement, or the provider did not answer). Both
 * read held reservations only (the checkouts with a payment in progress: few), oldest first, and
 * only the payments of the provider asked (one configured after another cannot answer for them).
 * One worker sweeps at a time: it holds a session advisory lock meanwhile.
 */
import { PROVIDER_UNANSWERED } from '@commerce/domain'
import type { payments } from '../schema/index.js'
import type { SqlClient } from '../transaction.js'

type PaymentRow = typeof payments.$inferSelect

/** A payment of a held reservation, to ask the provider about. */
export interface SweptPayment {
  paymentId: PaymentRow['id']
  /** The provider's id of it; null when the provider's answer to authorize was never recorded. */
  reference: PaymentRow['providerReference']
  /**
   * Whether the provider's "no such payment" is to be believed: with a reference, always; without
   * one, only for a payment older than `unrecordedGraceMs` (a search by our id may lag behind).
   */
  missingIsFinal: boolean
}

export interface SweepQuery {
  /** The provider's name (payments.provider). */
  provider: string
  limit: number
  unrecordedGraceMs: number
}

// $1 the provider, $2 the limit, $3 unrecordedGraceMs in seconds.
const SWEPT = `p.id as "paymentId", p.provider_reference as "reference",
  (p.provider_reference is not null or p.created_at < now() - make_interval(secs => $3::float8)) as "missingIsFinal"`

const EXPIRED = `
select ${SWEPT}
from checkout_reservations r join payments p on p.id = r.payment_id
where r.status = 'held' and r.expires_at <= now() and p.provider = $1
order by r.expires_at limit $2`

/** Held reservations past expires_at (checkout_reservations_expiry_idx). */
export async function expiredReservations(sql: SqlClient, query: SweepQuery): Promise<SweptPayment[]> {
  return sql.unsafe<SweptPayment[]>(EXPIRED, [query.provider, query.limit, query.unrecordedGraceMs / 1000], { prepare: true })
}

// $4 reconcileAfterMs and $5 unansweredAfterMs in seconds; the first condition on updated_at is
// the one payments_unsettled_idx serves. Expired reservations are the other sweep's.
const STUCK = `
select ${SWEPT}
from payments p join checkout_reservations r on r.payment_id = p.id
where p.status in ('pending', 'requires_action') and p.provider = $1 and r.status = 'held' and r.expires_at > now()
  and p.updated_at < now() - make_interval(secs => least($4::float8, $5::float8))
  and (p.updated_at < now() - make_interval(secs => $4::float8) or p.failure_code = '${PROVIDER_UNANSWERED}')
order by p.updated_at limit $2`

/**
 * Payments in progress of held reservations not yet expired, unchanged for `reconcileAfterMs`,
 * or for `unansweredAfterMs` when the provider did not answer (PROVIDER_UNANSWERED).
 */
export async function stuckPayments(sql: SqlClient, query: SweepQuery & { reconcileAfterMs: number; unansweredAfterMs: number }): Promise<SweptPayment[]> {
  const { provider, limit, unrecordedGraceMs, reconcileAfterMs, unansweredAfterMs } = query
  return sql.unsafe<SweptPayment[]>(STUCK, [provider, limit, unrecordedGraceMs / 1000, reconcileAfterMs / 1000, unansweredAfterMs / 1000], { prepare: true })
}

// $1 the lock's name (hashed to its key).
const TRY_LOCK = 'select pg_try_advisory_lock(hashtextextended($1, 0)) as "locked"'
const UNLOCK = 'select pg_advisory_unlock(hashtextextended($1, 0))'

/**
 * Takes the sweeps' session lock `name` on `session` (a reserved connection: the one that takes
 * it is the one that gives it back); false when another worker holds it.
 */
export async function trySweepLock(session: SqlClient, name: string): Promise<boolean> {
  const [row] = await session.unsafe<{ locked: boolean }[]>(TRY_LOCK, [name])
  return row!.locked
}

/** Gives the sweeps' session lock back. */
export async function releaseSweepLock(session: SqlClient, name: string): Promise<void> {
  await session.unsafe(UNLOCK, [name])
}
