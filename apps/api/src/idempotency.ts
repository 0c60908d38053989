/**
 * Idempotency-Key handling (DESIGN §3, §9): a request is done once per (principal, key).
 *
 * `run`: everything happens in the request's one transaction. Its first statement claims the
 * key: a transaction-scoped advisory lock on it (a second request with the key while the first
 * runs gets 409 at once) and any stored answer (replayed, or 422 for another request). The work
 * runs under a savepoint; its answer is stored with its writes, so a replay returns exactly what
 * was committed. 400, 401, 403, 429 and 5xx answers are not stored (the whole transaction rolls
 * back; the client may fix the request or retry). Other refusals (402, 404, 409, 422) roll back to
 * the savepoint and are stored, together with whatever the refusal itself must keep (a declined
 * payment's record), still under the lock. A request that dies mid-way leaves nothing behind.
 *
 * `steps`: for the checkout completion, whose work spans two transactions around the payment
 * provider's call: it folds the claim into its own first statement and the stored answer into its
 * settlement (@commerce/db sql/idempotency-keys.ts: claimCte, storeCte).
 */
import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import {
  beginWork,
  claimKey,
  sqlOf,
  storeAnswer,
  undoWork,
  type Claim,
  type Database,
  type Executor,
  type KeyClaim,
  type SqlClient,
  type StoredAnswer,
} from '@commerce/db'
import { ApiError, errorBody } from './errors.js'
import { toApiError } from './plugins/errors.js'

const RETENTION_SECONDS = 24 * 60 * 60
const NOT_STORED = new Set([400, 401, 403, 429])

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

/** The guarded work: its writes in `tx`, its answer as the outcome. */
export type Work = (tx: Executor) => Promise<Outcome>

function principalOf(request: FastifyRequest): string {
  const principal = request.principal
  if (!principal) return `ip:${request.ip}`
  if (principal.kind === 'user') return `user:${principal.userId}`
  return principal.kind === 'api_key' ? `api_key:${principal.keyId}` : `client:${principal.clientId}`
}

function fingerprintOf(request: FastifyRequest): string {
  const hash = createHash('sha256')
  hash.update(`${request.method} ${request.url.split('?')[0]}\n`)
  hash.update(serializedBody(request.body))
  return hash.digest('hex')
}

/** The body as JSON text; a body nested past what JSON.stringify can walk (a RangeError) is the client's 400, not a 500. */
function serializedBody(body: unknown): string {
  try {
    return JSON.stringify(body ?? null)
  } catch (error) {
    if (error instanceof RangeError) throw new ApiError('validation_error', 'The request body is nested too deeply')
    throw error
  }
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
  /** The answer to store with the key. A null `json` stores what the statement names instead (storeCte's bodyOtherwise). */
  const storedAnswer = (key: StoredKey, answer: { status: number; json: string | null }): StoredAnswer => ({
    ...key,
    status: answer.status,
    body: answer.json,
    retentionSeconds: RETENTION_SECONDS,
  })

  /**
   * Runs `work` in a transaction at most once per key and answers its outcome (or the stored
   * one, with `Idempotent-Replayed: true`).
   */
  async function run(request: FastifyRequest, reply: FastifyReply, work: Work): Promise<FastifyReply> {
    // The route's headers schema (IdempotencyKeyRequired or IdempotencyKeyOptional) checked the key.
    const declared = (request.routeOptions.schema?.headers as { properties?: object } | undefined)?.properties ?? {}
    if (!(KEY_HEADER in declared)) {
      throw new Error(`${request.routeOptions.url}: a route that runs idempotency.run declares IdempotencyKeyRequired or IdempotencyKeyOptional`)
    }
    const key = steps.keyOf(request)
    if (!key) return runOnce(reply, work)
    let replayed = false
    const answer = await db.transaction(async (tx): Promise<Answer> => {
      const sql = sqlOf(tx)
      // Sent together: the claim, then the savepoint the work runs under.
      const [claim] = await Promise.all([claimKey(sql, key), beginWork(sql)])
      const replay = steps.replayOf(key, claim)
      if (replay) {
        replayed = true
        return replay
      }
      try {
        const answer = answerOf(await work(tx))
        await storeAnswer(sql, storedAnswer(key, answer))
        return answer
      } catch (error) {
        const apiError = toApiError(error as never)
        if (!apiError || !isStoredStatus(apiError.statusCode)) throw error
        const refusal = answerOf({ status: apiError.statusCode, body: errorBody(apiError, String(request.id)) })
        await undoWork(sql)
        if (error instanceof RefusalWithRecord) await error.record(tx)
        await storeAnswer(sql, storedAnswer(key, refusal))
        return refusal
      }
    })
    return sendAnswer(reply, answer, replayed)
  }

  /** Without a key: the same transaction and refusal records, nothing stored. */
  async function runOnce(reply: FastifyReply, work: Work) {
    try {
      const outcome = await db.transaction(work)
      return reply.code(outcome.status).send(outcome.body)
    } catch (error) {
      if (error instanceof RefusalWithRecord) await db.transaction(error.record)
      throw error
    }
  }

  /**
   * For a work of several transactions (the checkout completion: its payment is with the
   * provider between them): the request's key, its claim for claimCte, what a claim answers (a
   * replay, or a refusal), and the answer to store for storeCte.
   */
  const steps = {
    keyOf(request: FastifyRequest): StoredKey | undefined {
      const header = idempotencyKeyOf(request)
      return header === '' ? undefined : { principal: principalOf(request), key: header, fingerprint: fingerprintOf(request) }
    },
    claimOf(key: StoredKey | undefined): KeyClaim | null {
      return key ? { principal: key.principal, key: key.key } : null
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
    /** The answer to store with the key, for storeCte; null without a key (nothing is stored). */
    storedAnswer: (key: StoredKey | undefined, answer: { status: number; json: string | null }): StoredAnswer | null =>
      key ? storedAnswer(key, answer) : null,
    isStored: isStoredStatus,
    /**
     * Stores the answer in a statement of its own (in the caller's transaction, or alone): for an
     * answer no statement of the work stored (a refusal of the completion's first transaction, or
     * the completion's answer when another request settled its payment first).
     */
    async store(sql: SqlClient, key: StoredKey | undefined, answer: Answer): Promise<void> {
      if (!key) return
      await storeAnswer(sql, storedAnswer(key, answer))
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
