/**
 * Idempotency-Key handling (DESIGN §3, §9): a request is done once per (principal, key).
 *
 * Everything happens in the request's one transaction. Its first statement takes a
 * transaction-scoped advisory lock on the key (a second request with the key while the first
 * runs gets 409 at once) and reads any stored answer (replayed, or 422 for another request). The
 * work runs under a savepoint (unless it writes nothing before its last writes); its answer is inserted with its last writes, and COMMIT goes out
 * with them, so a replay returns exactly what was committed. 400, 401, 403, 429 and 5xx answers
 * are not stored (the whole transaction rolls back; the client may fix the request or retry).
 * Other refusals (402, 404, 409, 422) roll back to the savepoint and are stored, together with
 * whatever the refusal itself must keep (a declined payment's record), still under the lock. A
 * request that dies mid-way leaves nothing behind.
 *
 * A work may send its first statements with the key's lookup, before its answer (one round trip
 * less): they must be guarded by WORK_RUNS, which is false when the request is not this one to
 * run (a replay, or the key in flight elsewhere), so that they then lock and change nothing.
 */
import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { sendCommit, sqlOf, type Database, type Executor } from '@commerce/db'
import { ApiError, errorBody } from './errors.js'
import { toApiError } from './plugins/errors.js'

const KEY = /^[\x21-\x7e]{16,255}$/
const RETENTION_SECONDS = 24 * 60 * 60
const NOT_STORED = new Set([400, 401, 403, 429])

// Fixed statement text, prepared once per connection. The lock is on a 64-bit hash of the
// principal and key: two different keys sharing a hash only make one of them wait its turn (409).
// It also tells the work's guarded first statements whether to run (a transaction-local setting).
const LOCK_AND_LOOK_UP = `with claim as materialized (
  select pg_try_advisory_xact_lock(hashtextextended($1, 0)) as "free",
    (select json_build_object('fingerprint', fingerprint, 'status', response_status, 'body', response_body::text)
     from idempotency_keys where principal = $2 and key = $3 and completed_at is not null and expires_at > now()) as "stored")
select "free", "stored", set_config('commerce.work', case when "free" and "stored" is null then 'run' else 'skip' end, true) as "work"
from claim`
const WORK_WITHOUT_KEY = `select set_config('commerce.work', 'run', true) as "work"`

/** SQL that is true when this request runs its work: the guard of a work's first statements. */
export const WORK_RUNS = `current_setting('commerce.work', true) = 'run'`
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
 * Sends the outcome to be stored together with the work's last writes, and COMMIT right behind
 * them (two round trips less); the runner stores the work's answer itself when the work does not.
 * What is remembered is what the request answers; nothing that can fail may follow it. Without a
 * key it stores nothing (and still commits).
 */
export type Remember = (outcome: Outcome) => PromiseLike<unknown>

/** The guarded work: its writes in `tx`, its answer as the outcome; `first` is what its first statements answered. */
export type Work<F = undefined> = (tx: Executor, remember: Remember, first: F) => Promise<Outcome>

export interface IdempotencyOptions<F = undefined> {
  /** Without a key the request is refused (checkout completion, payments, refunds). */
  required: boolean
  /**
   * The work writes only with its last writes (sent with remember): a refusal then has nothing
   * to undo, so no savepoint is taken (a savepoint makes every later write a subtransaction's).
   */
  writesLast?: boolean
  /**
   * The work's first statements, sent with the key's lookup before its answer. Each must be
   * guarded by WORK_RUNS; what they answer is the work's `first` (unused when the request is a
   * replay or refused).
   */
  first?: (tx: Executor) => Promise<F>
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

/** An outcome as it is stored and sent: its body serialized once, so a replay sends the same bytes. */
interface Answer {
  status: number
  json: string
}

const answerOf = (outcome: Outcome): Answer => ({ status: outcome.status, json: JSON.stringify(outcome.body) })

export function createIdempotency(db: Database) {
  function store(tx: Executor, principal: string, key: string, fingerprint: string, answer: Answer) {
    return sqlOf(tx).unsafe(STORE, [principal, key, fingerprint, answer.status, answer.json, RETENTION_SECONDS], { prepare: true })
  }

  /**
   * Runs `work` in a transaction at most once per key and answers its outcome (or the stored
   * one, with `Idempotent-Replayed: true`).
   */
  async function run<F = undefined>(
    request: FastifyRequest,
    reply: FastifyReply,
    options: IdempotencyOptions<F>,
    work: Work<F>,
  ): Promise<FastifyReply> {
    const key = idempotencyKeyOf(request)
    if (key === '') {
      if (options.required) {
        throw new ApiError('validation_error', "Header 'Idempotency-Key' is required", [
          { field: 'Idempotency-Key', message: "Header 'Idempotency-Key' is required" },
        ])
      }
      return runOnce(reply, options, work)
    }
    if (!KEY.test(key)) {
      throw new ApiError('validation_error', 'Idempotency-Key must be 16 to 255 printable ASCII characters', [
        { field: 'Idempotency-Key', message: 'must be 16 to 255 printable ASCII characters' },
      ])
    }
    const principal = principalOf(request)
    const fingerprint = fingerprintOf(request)
    let replayed = false
    const answer = await db.transaction(async (tx): Promise<Answer> => {
      const sql = sqlOf(tx)
      const looked = sql.unsafe<{ free: boolean; stored: { fingerprint: string; status: number; body: string } | null }[]>(
        LOCK_AND_LOOK_UP,
        [`${principal} ${key}`, principal, key],
        { prepare: true },
      )
      const savepoint = options.writesLast ? undefined : sql.unsafe('savepoint work')
      const first = options.first?.(tx)
      const [[found]] = await Promise.all([looked, savepoint])
      if (!found!.free || found!.stored) {
        // The guarded first statements did nothing; their answers are not needed.
        await first?.catch(() => undefined)
        if (!found!.free) throw new ApiError('idempotency_conflict', 'A request with this Idempotency-Key is still in progress')
        if (found!.stored!.fingerprint !== fingerprint) {
          throw new ApiError('idempotency_key_mismatch', 'This Idempotency-Key was used with a different request')
        }
        replayed = true
        return { status: found!.stored!.status, json: found!.stored!.body }
      }
      let remembered: Answer | undefined
      try {
        const remember: Remember = (sent) => {
          remembered = answerOf(sent)
          const stored = store(tx, principal, key, fingerprint, remembered)
          void sendCommit(sql)
          return stored
        }
        const result = await work(tx, remember, (await first) as F)
        if (remembered) return remembered
        const answer = answerOf(result)
        await store(tx, principal, key, fingerprint, answer)
        return answer
      } catch (error) {
        const apiError = toApiError(error as never)
        // Once COMMIT went out with the last writes, the transaction is over: nothing more to store.
        if (remembered || !apiError || apiError.statusCode >= 500 || NOT_STORED.has(apiError.statusCode)) throw error
        const refusal = answerOf({ status: apiError.statusCode, body: errorBody(apiError, String(request.id)) })
        if (!options.writesLast) await sql.unsafe('rollback to savepoint work')
        if (error instanceof RefusalWithRecord) await error.record(tx)
        await store(tx, principal, key, fingerprint, refusal)
        return refusal
      }
    })
    if (replayed) reply.header('idempotent-replayed', 'true')
    // Already JSON: Fastify sends a string with a JSON content type as it is.
    return reply.code(answer.status).header('content-type', 'application/json; charset=utf-8').send(answer.json)
  }

  /** Without a key: the same transaction and refusal records, nothing stored. */
  async function runOnce<F>(reply: FastifyReply, options: IdempotencyOptions<F>, work: Work<F>) {
    try {
      const outcome = await db.transaction(async (tx) => {
        const sql = sqlOf(tx)
        const first = options.first && Promise.all([sql.unsafe(WORK_WITHOUT_KEY, [], { prepare: true }), options.first(tx)]).then(([, answer]) => answer)
        return work(tx, async () => sendCommit(sql), (await first) as F)
      })
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
