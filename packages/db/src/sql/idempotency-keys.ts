/**
 * The SQL of Idempotency-Key handling (apps/api/src/idempotency.ts): claiming a key and storing
 * the answer, as CTEs a statement of its own or a hot path's statement includes.
 */

/**
 * The key's claim as a CTE named `claim`, over three parameters from `$first` on (the lock's
 * text, the principal, the key; all null without a key, which claims nothing and runs). The lock
 * is on a 64-bit hash of the principal and key: two different keys sharing a hash only make one
 * of them wait its turn (409).
 */
export function claimCte(first: number): string {
  const [lock, principal, key] = [first, first + 1, first + 2].map((n) => `$${n}`)
  return `claim as materialized (
  select coalesce(pg_try_advisory_xact_lock(hashtextextended(${lock}::text, 0)), true) as "free",
    (select json_build_object('fingerprint', fingerprint, 'status', response_status, 'body', response_body::text)
     from idempotency_keys where principal = ${principal}::text and key = ${key}::text and completed_at is not null
       and expires_at > now()) as "stored")`
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
 * Storing the answer as a CTE named `stored`, over six parameters from `$first` on (the
 * principal, the key, the request's fingerprint, the status, the body's JSON, the retention in
 * seconds); nothing is stored when the principal is null (no key), nor unless `when` (an SQL
 * condition of the statement) holds. A null body parameter stores `bodyOtherwise` (an SQL
 * expression of the statement) instead.
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
