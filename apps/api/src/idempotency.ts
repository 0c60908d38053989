/**
 * Idempotency-Key handling (DESIGN §3, §9): a request is done once per (principal, key). The
 * stored response is written in the same transaction as the business write, so a replay
 * returns exactly what was committed. 400, 401, 403, 429 and 5xx answers are not stored (the
 * client may fix the request or retry); other refusals (402, 404, 409, 422) are, together with
 * whatever the refusal itself must keep (a declined payment's record).
 */
import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { and, eq, lt, sql } from 'drizzle-orm'
import { idempotencyKeys, type Database, type Executor } from '@commerce/db'
import { ApiError, errorBody } from './errors.js'
import { toApiError } from './plugins/errors.js'

const KEY = /^[\x21-\x7e]{16,255}$/
const RETENTION_MS = 24 * 60 * 60 * 1000
/** A claim older than this without a result belongs to a request that died; its transaction rolled back. */
const ABANDONED_MS = 60 * 1000
const NOT_STORED = new Set([400, 401, 403, 429])

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

export interface IdempotencyOptions {
  /** Without a key the request is refused (checkout completion, payments, refunds). */
  required: boolean
}

function principalOf(request: FastifyRequest): string {
  return request.principal ? `user:${request.principal.userId}` : `ip:${request.ip}`
}

function fingerprintOf(request: FastifyRequest): string {
  const hash = createHash('sha256')
  hash.update(`${request.method} ${request.url.split('?')[0]}\n`)
  hash.update(JSON.stringify(request.body ?? null))
  return hash.digest('hex')
}

export function createIdempotency(db: Database) {
  /** Claims the key, or answers how an earlier request with it ended. */
  async function claim(principal: string, key: string, fingerprint: string): Promise<Outcome | 'claimed'> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const now = new Date()
      const [claimed] = await db
        .insert(idempotencyKeys)
        .values({ principal, key, fingerprint, expiresAt: new Date(now.getTime() + RETENTION_MS) })
        .onConflictDoNothing()
        .returning({ key: idempotencyKeys.key })
      if (claimed) return 'claimed'
      const mine = and(eq(idempotencyKeys.principal, principal), eq(idempotencyKeys.key, key))
      const [row] = await db.select().from(idempotencyKeys).where(mine)
      if (!row) continue
      if (row.expiresAt < now) {
        await db.delete(idempotencyKeys).where(and(mine, lt(idempotencyKeys.expiresAt, now)))
        continue
      }
      if (row.fingerprint !== fingerprint) {
        throw new ApiError('idempotency_key_mismatch', 'This Idempotency-Key was used with a different request')
      }
      if (row.completedAt) return { status: row.responseStatus!, body: row.responseBody }
      // A claim left by a request that died mid-way: take it over (its transaction rolled back).
      const [takenOver] = await db
        .update(idempotencyKeys)
        .set({ createdAt: now })
        .where(and(mine, sql`${idempotencyKeys.completedAt} is null`, lt(idempotencyKeys.createdAt, new Date(now.getTime() - ABANDONED_MS))))
        .returning({ key: idempotencyKeys.key })
      if (takenOver) return 'claimed'
      throw new ApiError('idempotency_conflict', 'A request with this Idempotency-Key is still in progress')
    }
    throw new ApiError('idempotency_conflict', 'A request with this Idempotency-Key is still in progress')
  }

  function complete(tx: Executor, principal: string, key: string, outcome: Outcome) {
    return tx
      .update(idempotencyKeys)
      .set({ responseStatus: outcome.status, responseBody: outcome.body, completedAt: new Date() })
      .where(and(eq(idempotencyKeys.principal, principal), eq(idempotencyKeys.key, key)))
  }

  /**
   * Runs `work` in a transaction at most once per key and answers its outcome (or the stored
   * one, with `Idempotent-Replayed: true`).
   */
  async function run(
    request: FastifyRequest,
    reply: FastifyReply,
    options: IdempotencyOptions,
    work: (tx: Executor) => Promise<Outcome>,
  ): Promise<FastifyReply> {
    const key = idempotencyKeyOf(request)
    if (key === '') {
      if (options.required) {
        throw new ApiError('validation_error', "Header 'Idempotency-Key' is required", [
          { field: 'Idempotency-Key', message: "Header 'Idempotency-Key' is required" },
        ])
      }
      return runOnce(request, reply, work)
    }
    if (!KEY.test(key)) {
      throw new ApiError('validation_error', 'Idempotency-Key must be 16 to 255 printable ASCII characters', [
        { field: 'Idempotency-Key', message: 'must be 16 to 255 printable ASCII characters' },
      ])
    }
    const principal = principalOf(request)
    const claimed = await claim(principal, key, fingerprintOf(request))
    if (claimed !== 'claimed') {
      return reply.code(claimed.status).header('idempotent-replayed', 'true').send(claimed.body)
    }
    try {
      const outcome = await db.transaction(async (tx) => {
        const result = await work(tx)
        await complete(tx, principal, key, result)
        return result
      })
      return reply.code(outcome.status).send(outcome.body)
    } catch (error) {
      const apiError = toApiError(error as never)
      if (!apiError || apiError.statusCode >= 500 || NOT_STORED.has(apiError.statusCode)) {
        await db.delete(idempotencyKeys).where(and(eq(idempotencyKeys.principal, principal), eq(idempotencyKeys.key, key)))
        throw error
      }
      const body = errorBody(apiError, String(request.id))
      await db.transaction(async (tx) => {
        if (error instanceof RefusalWithRecord) await error.record(tx)
        await complete(tx, principal, key, { status: apiError.statusCode, body })
      })
      return reply.code(apiError.statusCode).send(body)
    }
  }

  /** Without a key: the same transaction and refusal records, nothing stored. */
  async function runOnce(request: FastifyRequest, reply: FastifyReply, work: (tx: Executor) => Promise<Outcome>) {
    try {
      const outcome = await db.transaction(work)
      return reply.code(outcome.status).send(outcome.body)
    } catch (error) {
      if (error instanceof RefusalWithRecord) await db.transaction(error.record)
      throw error
    }
  }

  return { run }
}

export type Idempotency = ReturnType<typeof createIdempotency>
