/**
 * Refunds made at the payment provider after the transaction that decided them committed
 * (@commerce/payments refunds.ts; schema/orders.ts refunds): the pending ones read with their
 * payment, recorded as made, or failed with their amount given back to the sums.
 */
import type { PaymentState, PaymentStatus } from '@commerce/domain'
import type { refunds } from '../schema/index.js'
import { announceWhenCommitted, type SqlClient } from '../transaction.js'
import { eventsCte } from '../outbox.js'
import type { JsonRow } from './json-rows.js'

type RefundRow = JsonRow<typeof refunds.$inferSelect>

/** A pending refund and what the provider needs to make it. */
export interface PendingRefund {
  id: RefundRow['id']
  paymentId: RefundRow['paymentId']
  orderId: RefundRow['orderId']
  amountMinor: number
  currency: RefundRow['currency']
  reason: RefundRow['reason']
  createdAt: RefundRow['createdAt']
  providerKey: string
  /** The payment's provider and its reference there. */
  provider: string
  reference: string | null
}

// The amount as float8 (exact within Number.MAX_SAFE_INTEGER): postgres.js reads bigint as text.
const PENDING = `
select r.id, r.payment_id as "paymentId", r.order_id as "orderId", r.amount_minor::float8 as "amountMinor", r.currency,
  r.reason, r.created_at as "createdAt", r.provider_key as "providerKey", p.provider, p.provider_reference as "reference"
from refunds r join payments p on p.id = r.payment_id
where r.id = any($1::uuid[]) and r.status = 'pending' and r.provider_key is not null
order by r.id`

/** The refunds of `ids` still pending, with their payments. */
export async function pendingRefunds(sql: SqlClient, ids: readonly string[]): Promise<PendingRefund[]> {
  if (ids.length === 0) return []
  return sql.unsafe<PendingRefund[]>(PENDING, [[...ids]], { prepare: true })
}

const LEFT_PENDING = `
select r.id from refunds r join payments p on p.id = r.payment_id
where r.status = 'pending' and p.provider = $1 and r.created_at < now() - $2 * interval '1 millisecond'
order by r.created_at limit $3`

/** Refunds of `provider`'s payments pending for longer than `olderThanMs` (their request died, or the provider did not answer), oldest first. */
export async function refundsLeftPending(sql: SqlClient, query: { provider: string; olderThanMs: number; limit: number }): Promise<string[]> {
  const rows = await sql.unsafe<{ id: string }[]>(LEFT_PENDING, [query.provider, query.olderThanMs, query.limit], { prepare: true })
  return rows.map((row) => row.id)
}

const MADE = `update refunds set status = 'succeeded', provider_reference = $2, updated_at = now() where id = $1 and status = 'pending'`

/** Records that the provider made the refund (its reference there). */
export async function recordRefundMade(sql: SqlClient, refund: { id: string; reference: string }): Promise<void> {
  await sql.unsafe(MADE, [refund.id, refund.reference], { prepare: true })
}

// Locked in the order every writer of an order takes its rows: the order (when the refund has
// one), then the payment, then the refund; read as of after the locks (statements of their own).
const LOCK_ORDER = 'select o.id from orders o where o.id = (select order_id from refunds where id = $1) for update'
const LOCK_PAYMENT = `
select p.status, p.amount_minor::float8 as "amountMinor", p.captured_minor::float8 as "capturedMinor", p.refunded_minor::float8 as "refundedMinor"
from payments p where p.id = (select payment_id from refunds where id = $1) for update`
const LOCK_REFUND = `
select r.status, o.total_minor::float8 as "totalMinor", o.paid_minor::float8 as "paidMinor", o.authorized_minor::float8 as "authorizedMinor",
  o.refunded_minor::float8 as "refundedMinor", o.customer_id as "customerId"
from refunds r left join orders o on o.id = r.order_id where r.id = $1 for update of r`

/** The sums a failed refund gives its amount back to, read locked; undefined when the refund is no longer pending. */
export interface RefundParties {
  payment: { status: PaymentState; amountMinor: number; capturedMinor: number; refundedMinor: number }
  /** The order's sums (nulls for a refund without an order). */
  order: { totalMinor: number | null; paidMinor: number | null; authorizedMinor: number | null; refundedMinor: number | null; customerId: string | null }
}

/** Locks a pending refund's order, payment and refund (in a transaction) and reads their sums. */
export async function lockPendingRefund(sql: SqlClient, refundId: string): Promise<RefundParties | undefined> {
  await sql.unsafe(LOCK_ORDER, [refundId], { prepare: true })
  const [payment] = await sql.unsafe<RefundParties['payment'][]>(LOCK_PAYMENT, [refundId], { prepare: true })
  const [refund] = await sql.unsafe<(RefundParties['order'] & { status: string })[]>(LOCK_REFUND, [refundId], { prepare: true })
  if (!payment || !refund || refund.status !== 'pending') return undefined
  const { status: _status, ...order } = refund
  return { payment, order }
}

// $1 refund, $2 and $3 the provider's code and message, $4 the payment's state after, $5 its
// refunded sum after, $6 the order's payment status after, $7 its refunded sum after, $8 the event.
const FAILED = `
with failed as (
  update refunds set status = 'failed', failure_code = $2, failure_message = $3, updated_at = now()
  where id = $1 and status = 'pending' returning payment_id, order_id),
payment as (
  update payments set status = $4::payment_state, refunded_minor = $5, updated_at = now() where id = (select payment_id from failed)),
ordered as (
  update orders set refunded_minor = $7, payment_status = $6::payment_status, updated_at = now() where id = (select order_id from failed)),
${eventsCte(8)}
select count(*)::int as "failed" from failed`

export interface RefundFailure {
  refundId: string
  failure: { code: string; message: string }
  payment: { state: PaymentState; refundedMinor: number }
  /** Null for a refund without an order. */
  order: { paymentStatus: PaymentStatus; refundedMinor: number } | null
  /** refund.failed (eventRows). */
  events: { ids: string[]; json: string }
}

/** Records a refund the provider refused, its amount back in the payment's and the order's sums, and its event (inside the transaction of lockPendingRefund). */
export async function recordRefundFailed(sql: SqlClient, refund: RefundFailure): Promise<void> {
  await sql.unsafe(
    FAILED,
    [
      refund.refundId,
      refund.failure.code,
      refund.failure.message,
      refund.payment.state,
      refund.payment.refundedMinor,
      refund.order?.paymentStatus ?? null,
      refund.order?.refundedMinor ?? null,
      refund.events.json,
    ],
    { prepare: true },
  )
  announceWhenCommitted(sql, refund.events.ids)
}
