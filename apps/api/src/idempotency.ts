/**
 * Idempotency-Key handling (DESIGN §3, §9): a request is done once per (principal, key).
 *
 * Everything happens in the request's one transaction. Its first statement claims the key: a
 * transaction-scoped advisory lock on it (a second request with the key while the first runs
 * gets 409 at once) and any stored answer (replayed, or 422 for another request). The work runs
 * under a savepoint (unless it writes nothing before its last writes); its answer is stored with
 * its last writes, and COMMIT goes out with them, so a replay returns exactly what was committed.
 * 400, 401, 403, 429 and 5xx answers are not stored (the whole transaction rolls back; the
 * client may fix the request or retry). Other refusals (402, 404, 409, 422) roll back to the
 * savepoint and are stored, together with whatever the refusal itself must keep (a declined
 * payment's record), still under the lock. A request that dies mid-way leaves nothing behind.
 *
 * A hot path may fold the claim into its own first statement (claimCte, guarded by WORK_RUNS,
 * answering CLAIM_COLUMNS) and the stored answer into its own last one (storeCte): a round trip
 * and two statements less.
 */
import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { CLAIM_COLUMNS, claimCte, sendCommit, sendLast, sqlOf, storeCte, type Claim, type Database, type Executor, type SqlClient } from '@commerce/db'
import { ApiError, errorBody } from './errors.js'
import { toApiError } from './plugins/errors.js'

const RETENTION_SECONDS = 24 * 60 * 60
const NOT_STORED = new Set([400, 401, 403, 429])

// Fixed statement text, prepared once per connection.
const LOOK_UP = `with ${claimCte(1)} select ${CLAIM_COLUMNS}`
const STORE = `with ${storeCte(1)} select 1`

export interface Outcome {
  status: number
  body: unknown
  /** The body serialized already (JSON.stringify(body)), when the work has it. */
  json?: string
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

const KEY_HEADER = 'idempotency-key'

/**
 * The Idempotency-Key header as a route's `headers` schema, the one definition of what the header
 * may be and whether it is required: Fastify enforces it before the handler (400
 * validation_error naming the header) and the OpenAPI document states it (`required: true` on the
 * routes that need it). Every route that runs `idempotency.run` declares one of the two.
 */
function idempotencyKeyHeader(required: boolean) {
  return {
    type: 'object',
    properties: {
      [KEY_HEADER]: {
        type: 'string',
        minLength: 16,
        maxLength: 255,
        // Printable ASCII, U+0021 to U+007E.
        pattern: '^[!-~]+$',
        description: '16–255 printable ASCII characters; kept 24 h per caller',
      },
    },
    required: required ? [KEY_HEADER] : [],
  } as const
}
/** Checkout completion, payments and refunds: refused without a key. */
export const IdempotencyKeyRequired = idempotencyKeyHeader(true)
/** Order and fulfillment creation: honoured when sent. */
export const IdempotencyKeyOptional = idempotencyKeyHeader(false)

/** Whether an answer with this status is stored, and so replayed with Idempotent-Replayed: true. */
export const isStoredStatus = (status: number) => status < 500 && !NOT_STORED.has(status)

/** The request's Idempotency-Key ('' without one), to derive the key sent on to a payment provider. */
export function idempotencyKeyOf(request: FastifyRequest): string {
  const header = request.headers[KEY_HEADER]
  return (Array.isArray(header) ? header[0] : header) ?? ''
}

/** How the work has its answer stored, with its last writes. */
export interface Remember {
  /**
   * Sends the answer to be stored together with the work's last writes, and COMMIT right behind
   * them (a round trip less). What is remembered is what the request answers; nothing that can
   * fail may follow it. Without a key nothing is stored (and COMMIT still goes).
   */
  (outcome: Outcome): PromiseLike<unknown>
  /**
   * For a work that stores the answer in its own last statement (storeCte): that statement's
   * parameters for it. The work sends that statement as its last (sendLast), which commits.
   */
  inline(outcome: Outcome): (string | number | null)[]
}

/** The guarded work: its writes in `tx`, its answer as the outcome; `first` is what its first statement answered. */
export type Work<F = undefined> = (tx: Executor, remember: Remember, first: F) => Promise<Outcome>

export interface IdempotencyOptions<F = undefined> {
  /**
   * The work writes only with its last writes (sent with remember): a refusal then has nothing
   * to undo, so no savepoint is taken (a savepoint makes every later write a subtransaction's).
   */
  writesLast?: boolean
  /**
   * The work's first statement, which claims the key itself (claimCte at the parameters given
   * here, first in its own list; WORK_RUNS guarding what it locks; CLAIM_COLUMNS among its
   * columns) and writes nothing. It opens the transaction, instead of the runner's own claim; what it
   * answers is the work's `first`.
   */
  first?: (tx: Executor, claim: readonly [string | null, string | null, string | null]) => Promise<F & Claim>
}

/**
 * A work with its own first statement that writes only last: BEGIN deferred, so the first
 * statement opens the transaction and the last one commits it (@commerce/db transaction.ts).
 */
function transactionConfig(options: IdempotencyOptions<unknown>): { deferBegin: true } | undefined {
  return options.first && options.writesLast ? { deferBegin: true } : undefined
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

/** Whose key, and the request it was used with. */
export interface StoredKey {
  principal: string
  key: string
  fingerprint: string
}

/** An outcome as it is stored and sent: its body serialized once, so a replay sends the same bytes. */
export interface Answer {
  status: number
  json: string
}

/** Sends an answer (stored or to be stored) as it is; `replayed` marks a replay. */
function sendAnswer(reply: FastifyReply, answer: Answer, replayed = false): FastifyReply {
  if (replayed) reply.header('idempotent-replayed', 'true')
  // Already JSON: Fastify sends a string with a JSON content type as it is.
  return reply.code(answer.status).header('content-type', 'application/json; charset=utf-8').send(answer.json)
}

const answerOf = (outcome: Outcome): Answer => ({ status: outcome.status, json: outcome.json ?? JSON.stringify(outcome.body) })

export function createIdempotency(db: Database) {
  /** The answer's parameters for STORE or storeCte; all null without a key (nothing stored). */
  const storeParams = (key: StoredKey | undefined, answer: Answer): (string | number | null)[] =>
    key ? [key.principal, key.key, key.fingerprint, answer.status, answer.json, RETENTION_SECONDS] : [null, null, null, null, null, null]

  function rememberIn(tx: Executor, key: StoredKey | undefined, onRemember: (answer: Answer) => void): Remember {
    const sql = sqlOf(tx)
    const remember = (outcome: Outcome) => {
      const answer = answerOf(outcome)
      onRemember(answer)
      const stored = key ? sql.unsafe(STORE, storeParams(key, answer), { prepare: true }) : undefined
      void sendCommit(sql)
      return stored ?? Promise.resolve()
    }
    return Object.assign(remember, {
      inline(outcome: Outcome) {
        const answer = answerOf(outcome)
        onRemember(answer)
        return storeParams(key, answer)
      },
    })
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
    // The route's headers schema (IdempotencyKeyRequired or IdempotencyKeyOptional) checked the key.
    const declared = (request.routeOptions.schema?.headers as { properties?: object } | undefined)?.properties ?? {}
    if (!(KEY_HEADER in declared)) {
      throw new Error(`${request.routeOptions.url}: a route that runs idempotency.run declares IdempotencyKeyRequired or IdempotencyKeyOptional`)
    }
    const header = idempotencyKeyOf(request)
    if (header === '') return runOnce(reply, options, work)
    const key: StoredKey = { principal: principalOf(request), key: header, fingerprint: fingerprintOf(request) }
    let replayed = false
    const answer = await db.transaction(async (tx): Promise<Answer> => {
      const sql = sqlOf(tx)
      const claimParams = [`${key.principal} ${key.key}`, key.principal, key.key] as const
      const first = options.first?.(tx, claimParams)
      const claimed = first ?? sql.unsafe<Claim[]>(LOOK_UP, [...claimParams], { prepare: true }).then(([claim]) => claim!)
      const savepoint = options.writesLast ? undefined : sql.unsafe('savepoint work')
      const [claim] = await Promise.all([claimed, savepoint])
      if (!claim.keyFree) throw new ApiError('idempotency_conflict', 'A request with this Idempotency-Key is still in progress')
      if (claim.keyStored) {
        if (claim.keyStored.fingerprint !== key.fingerprint) {
          throw new ApiError('idempotency_key_mismatch', 'This Idempotency-Key was used with a different request')
        }
        replayed = true
        return { status: claim.keyStored.status, json: claim.keyStored.body }
      }
      let remembered: Answer | undefined
      try {
        const result = await work(tx, rememberIn(tx, key, (sent) => (remembered = sent)), (first ? claim : undefined) as F)
        if (remembered) return remembered
        const answer = answerOf(result)
        await sql.unsafe(STORE, storeParams(key, answer), { prepare: true })
        return answer
      } catch (error) {
        const apiError = toApiError(error as never)
        // Once COMMIT went out with the last writes, the transaction is over: nothing more to store.
        if (remembered || !apiError || !isStoredStatus(apiError.statusCode)) throw error
        const refusal = answerOf({ status: apiError.statusCode, body: errorBody(apiError, String(request.id)) })
        if (!options.writesLast) await sql.unsafe('rollback to savepoint work')
        if (error instanceof RefusalWithRecord) await error.record(tx)
        await sql.unsafe(STORE, storeParams(key, refusal), { prepare: true })
        return refusal
      }
    }, transactionConfig(options))
    return sendAnswer(reply, answer, replayed)
  }

  /** Without a key: the same transaction and refusal records, nothing stored. */
  async function runOnce<F>(reply: FastifyReply, options: IdempotencyOptions<F>, work: Work<F>) {
    try {
      const outcome = await db.transaction(async (tx) => {
        const first = await options.first?.(tx, [null, null, null])
        return work(tx, rememberIn(tx, undefined, () => {}), first as F)
      }, transactionConfig(options))
      return reply.code(outcome.status).send(outcome.body)
    } catch (error) {
      if (error instanceof RefusalWithRecord) await db.transaction(error.record)
      throw error
    }
  }

  /**
   * For a work of several transactions (the checkout completion: its payment is with the
   * provider between them): the request's key, the claim's parameters for claimCte, what a claim
   * answers (a replay, or a refusal), and the stored answer's parameters for storeCte.
   */
  const steps = {
    keyOf(request: FastifyRequest): StoredKey | undefined {
      const header = idempotencyKeyOf(request)
      return header === '' ? undefined : { principal: principalOf(request), key: header, fingerprint: fingerprintOf(request) }
    },
    claimParams(key: StoredKey | undefined): [string | null, string | null, string | null] {
      return key ? [`${key.principal} ${key.key}`, key.principal, key.key] : [null, null, null]
    },
    /** The stored answer to replay, or undefined when the work runs; throws when the key is busy or was used otherwise. */
    replayOf(key: StoredKey | undefined, claim: Claim): Answer | undefined {
      if (!key) return undefined
      if (!claim.keyFree) throw new ApiError('idempotency_conflict', 'A request with this Idempotency-Key is still in progress')
      if (!claim.keyStored) return undefined
      if (claim.keyStored.fingerprint !== key.fingerprint) {
        throw new ApiError('idempotency_key_mismatch', 'This Idempotency-Key was used with a different request')
      }
      return { status: claim.keyStored.status, json: claim.keyStored.body }
    },
    /** storeCte's parameters for an answer; a null `json` stores what the statement names instead (storeCte's bodyOtherwise). */
    storeParams: (key: StoredKey | undefined, answer: { status: number; json: string | null }) => storeParams(key, answer as Answer),
    isStored: isStoredStatus,
    /** Stores the answer as the transaction's last statement, which commits it (sendLast); without a key the transaction just ends. */
    async storeLast(sql: SqlClient, key: StoredKey | undefined, answer: Answer): Promise<void> {
      if (!key) return
      await Promise.all(sendLast(sql, () => sql.unsafe(STORE, storeParams(key, answer), { prepare: true })))
    },
    /**
     * Stores the answer in a statement of its own, outside any transaction: for an answer that no
     * statement of the work stored (the completion's, when another request settled its payment first).
     */
    async storeNow(sql: SqlClient, key: StoredKey | undefined, answer: Answer): Promise<void> {
      if (!key) return
      await sql.unsafe(STORE, storeParams(key, answer), { prepare: true })
    },
    send: sendAnswer,
  }

  return { run, steps }
}

export type Idempotency = ReturnType<typeof createIdempotency>

declare module 'fastify' {
  interface FastifyInstance {
    /** Idempotency-Key handling for the routes that honour or require it. */
    idempotency: Idempotency
  }
}
