/**
 * The SQL of Idempotency-Key handling (apps/api/src/idempotency.ts): claiming a key and storing
 * the answer, as statements of their own or as CTEs a hot path's statement includes (the checkout
 * completion's first statement claims, its settlement stores), and the hourly deletion of the
 * expired ones (the worker's expire-idempotency-keys).
 */
import type { SqlClient } from '../transaction.js'

/** Whose key a request claims; null for a request without a key, which claims nothing and runs. */
export interface KeyClaim {
  principal: string
  key: string
}

/** The answer to store with a key; null for a request without a key (nothing is stored). */
export interface StoredAnswer {
  principal: string
  key: string
  /** The request the key was used with, to refuse the key for another one. */
  fingerprint: string
  status: number
  /** The answer's JSON; null stores what the statement names instead (storeCte's bodyOtherwise). */
  body: string | null
  retentionSeconds: number
}

/**
 * The key's claim as a CTE named `claim`, over the three parameters of claimValues, numbered from
 * `$first` by the statement that includes it. The lock is on a 64-bit hash of the principal and
 * key: two different keys sharing a hash only make one of them wait its turn (409).
 */
export function claimCte(first: number): string {
  const [lock, principal, key] = [first, first + 1, first + 2].map((n) => `$${n}`)
  return `claim as materialized (
  select coalesce(pg_try_advisory_xact_lock(hashtextextended(${lock}::text, 0)), true) as "free",
    (select json_build_object('fingerprint', fingerprint, 'status', response_status, 'body', response_body::text)
     from idempotency_keys where principal = ${principal}::text and key = ${key}::text and completed_at is not null
       and expires_at > now()) as "stored")`
}

/** claimCte's parameters, in its order: the lock's text, the principal, the key (all null without a key). */
export function claimValues(claim: KeyClaim | null): [string | null, string | null, string | null] {
  return claim ? [`${claim.principal} ${claim.key}`, claim.principal, claim.key] : [null, null, null]
}

/** In a statement with claimCte: true when this request runs its work (the guard of what it locks and reads). */
export const WORK_RUNS = `(select "free" and "stored" is null from claim)`

/** In a statement with claimCte: the claim, as the columns the runner reads (see Claim). */
export const CLAIM_COLUMNS = `(select "free" from claim) as "keyFree", (select "stored" from claim) as "keyStored"`

/** What the claim answers. */
export interface Claim {
  keyFree: boolean
  keyStored: { fingerprint: string; status: number; body: string } | null
}

/**
 * Storing the answer as a CTE named `stored`, over the six parameters of storeValues, numbered
 * from `$first` by the statement that includes it; nothing is stored without an answer (no key),
 * nor unless `when` (an SQL condition of the statement) holds. A null body stores `bodyOtherwise`
 * (an SQL expression of the statement) instead.
 */
export function storeCte(first: number, bodyOtherwise = 'null::json', when = 'true'): string {
  const [principal, key, fingerprint, status, body, retention] = Array.from({ length: 6 }, (_, i) => `$${first + i}`)
  return `stored as (
  insert into idempotency_keys (principal, key, fingerprint, response_status, response_body, completed_at, expires_at)
  select ${principal}::text, ${key}::text, ${fingerprint}::text, ${status}::int, coalesce(${body}::json, ${bodyOtherwise}), now(), now() + make_interval(secs => ${retention}::int)
  where ${principal}::text is not null and (${when})
  on conflict (principal, key) do update set fingerprint = excluded.fingerprint, response_status = excluded.response_status,
    response_body = excluded.response_body, completed_at = excluded.completed_at, expires_at = excluded.expires_at,
    created_at = now())`
}

/** storeCte's parameters, in its order (all null without an answer). */
export function storeValues(answer: StoredAnswer | null): (string | number | null)[] {
  if (!answer) return [null, null, null, null, null, null]
  return [answer.principal, answer.key, answer.fingerprint, answer.status, answer.body, answer.retentionSeconds]
}

const LOOK_UP = `with ${claimCte(1)} select ${CLAIM_COLUMNS}`
const STORE = `with ${storeCte(1)} select 1`

/** Claims the key in the caller's transaction (its lock is held until that transaction ends). */
export async function claimKey(sql: SqlClient, claim: KeyClaim): Promise<Claim> {
  const [row] = await sql.unsafe<Claim[]>(LOOK_UP, claimValues(claim), { prepare: true })
  return row!
}

/** Stores an answer in a statement of its own (in the caller's transaction, or alone). */
export async function storeAnswer(sql: SqlClient, answer: StoredAnswer): Promise<void> {
  await sql.unsafe(STORE, storeValues(answer), { prepare: true })
}

/**
 * A savepoint `work` in the caller's transaction, and the rollback to it: a refusal undoes the
 * work's writes and keeps the claim (its lock) to store the refusal under.
 */
export function beginWork(sql: SqlClient): Promise<unknown> {
  return sql.unsafe('savepoint work')
}
export async function undoWork(sql: SqlClient): Promise<void> {
  await sql.unsafe('rollback to savepoint work')
}

/** Expired keys deleted per statement: no statement holds many row locks or runs long beside the API's writes. */
export const EXPIRED_KEYS_BATCH = 5_000

const DELETE_EXPIRED = `with expired as (
  select principal, key from idempotency_keys where expires_at < now() order by expires_at limit ${EXPIRED_KEYS_BATCH})
delete from idempotency_keys k using expired e where k.principal = e.principal and k.key = e.key`

/** Deletes up to EXPIRED_KEYS_BATCH expired keys; answers how many. */
export async function deleteExpiredKeys(sql: SqlClient): Promise<number> {
  const result = await sql.unsafe(DELETE_EXPIRED)
  return result.count
}
