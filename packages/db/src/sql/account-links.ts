/**
 * Asking for an emailed account link by email address (a password reset, a new verification
 * link): one statement that writes the event the worker mails the link from — in the shape the
 * event writer takes (outbox.ts) — if an account with that address can have one, and writes
 * nothing otherwise. Whether the account exists, the caller pays the same round trip and learns
 * nothing but the count, which it does not tell (no account enumeration).
 */
import type { EventKind } from '@commerce/domain'
import { eventsCte } from '../outbox.js'
import { announceWhenCommitted, type SqlClient } from '../transaction.js'
import { jsonObject } from './json-rows.js'

interface AccountLinkRow {
  id: string
  kind: string
  data: string
  customer_id: string
  request_id: string
  resource_id: string
}

// $1 the address, $2 the event's id, $3 its kind, $4 the link's expiry (ISO text), $5 the request
// id, $6 only a customer account whose address is not verified (a new verification link). A
// disabled account gets no link.
const REQUEST = `with account as (
  select u.id as user_id, c.id as customer_id, u.email, c.first_name
  from users u left join customers c on c.user_id = u.id and c.deleted_at is null
  where lower(u.email) = lower($1) and u.disabled_at is null
    and (not $6::bool or (u.role = 'customer' and u.email_verified_at is null))),
${eventsCte(`(select json_agg(${jsonObject<AccountLinkRow>({
  id: '$2::uuid',
  kind: '$3::text',
  data: "json_build_object('user_id', a.user_id, 'customer_id', a.customer_id, 'email', a.email, 'first_name', a.first_name, 'expires_at', $4::text)",
  customer_id: 'a.customer_id',
  request_id: '$5::text',
  resource_id: 'a.user_id',
})}) from account a)`)}
select count(*)::int as "written" from written`

export interface AccountLinkRequest {
  email: string
  /** A new id for the event. */
  eventId: string
  kind: Extract<EventKind, 'account.password_reset_requested' | 'account.verification_requested'>
  expiresAt: Date
  requestId: string | null
  /** Only for a customer account whose address is not verified yet. */
  unverifiedOnly: boolean
}

/** Writes the event of a link asked for by address if such an account exists; answers whether it did. */
export async function requestAccountLink(sql: SqlClient, request: AccountLinkRequest): Promise<boolean> {
  const [row] = await sql.unsafe<{ written: number }[]>(
    REQUEST,
    [request.email, request.eventId, request.kind, request.expiresAt.toISOString(), request.requestId, request.unverifiedOnly],
    { prepare: true },
  )
  const written = row!.written > 0
  if (written) announceWhenCommitted(sql, [request.eventId])
  return written
}
