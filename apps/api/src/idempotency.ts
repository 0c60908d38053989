/**
 * Idempotency-Key handling (DESIGN §3, §9): a request is done once per (principal, key).
 *
 * Everything happens in the request's one transaction. Its first statement takes a
 * transaction-scoped advisory lock on the key (a second request with the key while the first
 * runs gets 409 at once) and reads any stored answer (replayed, or 422 for another request). The
 * work runs under a savepoint; its answer is inserted with its last writes, so a replay returns
 * exactly what was committed. 400, 401, 403, 429 and 5xx answers are not stored (the whole
 * transaction rolls back; the client may fix the request or retry). Other refusals (402, 404,
 * 409, 422) roll back to the savepoint and are stored, together with whatever the refusal itself
 * must keep (a declined payment's record), still under the lock. A request that dies mid-way
 * leaves nothing behind.
 */
import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { sqlOf, type Database, type Executor } from '@commerce/db'
import { ApiError, errorBody } from './errors.js'
import { toApiError } from './plugins/errors.js'

const KEY = /^[\x21-\x7e]{16,255}$/
const RETENTION_SECONDS = 24 * 60 * 60
const NOT_STORED = new Set([400, 401, 403, 429])

// Fixed statement text, prepared once per connection. The lock is on a 64-bit hash of the
// principal and key: two different keys sharing a hash only make one of them wait its turn (409).
const LOCK_AND_LOOK_UP = `select pg_try_advisory_xact_lock(hashtextextended($1, 0)) as "free",
  (select json_build_object('fingerprint', fingerprint, 'status', response_status, 'body', response_body)
   from idempotency_keys where principal = $2 and key = $3 and completed_at is not null and expires_at > now()) as "stored"`
const STORE = `insert into idempotency_keys (principal, key, fingerprint, response_status, response_body, completed_at, expires_at)
  values ($1, $2, $3, $4, $5, now(), now() + make_interval(secs => $6))
  on conflict (principal, key) do update set fingerprint = excluded.fingerprint, response_status = excluded.response_status,
    response_body = excluded.response_body, completed_at = excluded.completed_at, expires_at = excluded.expires_at,
    created_at = now()`

export interface Outcome {
  status: number
  body: unknown
}

/** A refusal that must keep something (written with the stored refusal, after the rollback). */
export class RefusalWithRecord extends ApiError {
  constructor(
    error: ApiError,
    readonly record: (tx: Executor) => Promise<void>,
  ) {
    super(error.code, error.message, error.details)
  }
}

/** The OpenAPI description of the header, for the routes that take it. */
export const IdempotencyKeyHeader = {
  type: 'object',
  properties: { 'idempotency-key': { type: 'string', description: '16–255 printable ASCII characters; kept 24 h per caller' } },
} as const

/** The request's Idempotency-Key ('' without one), to derive the key sent on to a payment provider. */
export function idempotencyKeyOf(request: FastifyRequest): string {
  const header = request.headers['idempotency-key']
  return (Array.isArray(header) ? header[0] : header) ?? ''
}

/**
 * Sends the outcome to be stored together with the work's last writes (one round trip less); the
 * runner stores the work's answer itself when the work does not. What is remembered is what the
 * request answers. Without a key it stores nothing.
 */
export type Remember = (outcome: Outcome) => PromiseLike<unknown>

/** The guarded work: its writes in `tx`, its answer as the outcome. */
export type Work = (tx: Executor, remember: Remember) => Promise<Outcome>

export interface IdempotencyOptions {
  /** Without a key the request is refused (checkout completion, payments, refunds). */
  required: boolean
}

function principalOf(request: FastifyRequest): string {
  const principal = request.principal
  if (!principal) return `ip:${request.ip}`
  if (principal.kind === 'user') return `user:${principal.userId}`
  return principal.kind === 'api_key' ? `api_key:${principal.keyId}` : `client:${principal.clientId}`
}

function fingerprintOf(request: FastifyRequest): string {
  const hash = createHash('sha256')
  hash.update(`${request.method} ${request.url.split('?')[0]}\n`)
  hash.update(JSON.stringify(request.body ?? null))
  return hash.digest('hex')
}

export function createIdempotency(db: Database) {
  function store(tx: Executor, principal: string, key: string, fingerprint: string, outcome: Outcome) {
    return sqlOf(tx).unsafe(STORE, [principal, key, fingerprint, outcome.status, JSON.stringify(outcome.body), RETENTION_SECONDS], { prepare: true })
  }

  /**
   * Runs `work` in a transaction at most once per key and answers its outcome (or the stored
   * one, with `Idempotent-Replayed: true`).
   */
  async function run(request: FastifyRequest, reply: FastifyReply, options: IdempotencyOptions, work: Work): Promise<FastifyReply> {
    const key = idempotencyKeyOf(request)
    if (key === '') {
      if (options.required) {
        throw new ApiError('validation_error', "Header 'Idempotency-Key' is required", [
          { field: 'Idempotency-Key', message: "Header 'Idempotency-Key' is required" },
        ])
      }
      return runOnce(reply, work)
    }
    if (!KEY.test(key)) {
      throw new ApiError('validation_error', 'Idempotency-Key must be 16 to 255 printable ASCII characters', [
        { field: 'Idempotency-Key', message: 'must be 16 to 255 printable ASCII characters' },
      ])
    }
    const principal = principalOf(request)
    const fingerprint = fingerprintOf(request)
    let replayed = false
    const outcome = await db.transaction(async (tx) => {
      const sql = sqlOf(tx)
      const [[found]] = await Promise.all([
        sql.unsafe<{ free: boolean; stored: { fingerprint: string; status: number; body: unknown } | null }[]>(
          LOCK_AND_LOOK_UP,
          [`${principal} ${key}`, principal, key],
          { prepare: true },
        ),
        sql.unsafe('savepoint work'),
      ])
      if (!found!.free) throw new ApiError('idempotency_conflict', 'A request with this Idempotency-Key is still in progress')
      if (found!.stored) {
        if (found!.stored.fingerprint !== fingerprint) {
          throw new ApiError('idempotency_key_mismatch', 'This Idempotency-Key was used with a different request')
        }
        replayed = true
        return { status: found!.stored.status, body: found!.stored.body }
      }
      try {
        let remembered: Outcome | undefined
        const result = await work(tx, (sent) => store(tx, principal, key, fingerprint, (remembered = sent)))
        if (remembered) return remembered
        await store(tx, principal, key, fingerprint, result)
        return result
      } catch (error) {
        const apiError = toApiError(error as never)
        if (!apiError || apiError.statusCode >= 500 || NOT_STORED.has(apiError.statusCode)) throw error
        const refusal = { status: apiError.statusCode, body: errorBody(apiError, String(request.id)) }
        await sql.unsafe('rollback to savepoint work')
        if (error instanceof RefusalWithRecord) await error.record(tx)
        await store(tx, principal, key, fingerprint, refusal)
        return refusal
      }
    })
    if (replayed) reply.header('idempotent-replayed', 'true')
    return reply.code(outcome.status).send(outcome.body)
  }

  /** Without a key: the same transaction and refusal records, nothing stored. */
  async function runOnce(reply: FastifyReply, work: Work) {
    try {
      const outcome = await db.transaction((tx) => work(tx, async () => undefined))
      return reply.code(outcome.status).send(outcome.body)
    } catch (error) {
      if (error instanceof RefusalWithRecord) await db.transaction(error.record)
      throw error
    }
  }

  return { run }
}

export type Idempotency = ReturnType<typeof createIdempotency>

declare module 'fastify' {
  interface FastifyInstance {
    /** Idempotency-Key handling for the routes that honour or require it. */
    idempotency: Idempotency
  }
}
