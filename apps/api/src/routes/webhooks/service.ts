/** Webhook subscriptions (admin): their targets checked at save time, their deliveries with attempt logs, redelivery. */
import { randomBytes } from 'node:crypto'
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { and, asc, count, desc, eq, inArray, sql, type SQL } from 'drizzle-orm'
import type { Static } from 'typebox'
import {
  isPublicAddress,
  WEBHOOK_URL_MAX_LENGTH,
  type CreateWebhook,
  type ListWebhookDeliveriesQuery,
  type PaginationQuery,
  type UpdatedWebhook,
  type UpdateWebhook,
  type Webhook,
  type WebhookDelivery,
  type WebhookDeliveryList,
  type WebhookList,
  type WebhookWithSecret,
} from '@commerce/domain'
import { addDeliveryJob, events, webhookAttempts, webhookDeliveries, webhooks, type Database, type Executor } from '@commerce/db'
import { conflict, invalidField, notFound } from '../../errors.js'
import { pageMeta } from '../../list-totals.js'

type WebhookRow = typeof webhooks.$inferSelect
type AttemptRow = typeof webhookAttempts.$inferSelect

export interface WebhookServiceOptions {
  /** Skip the check that the URL's host resolves only to public addresses. */
  allowPrivateTargets: boolean
}

/** The Standard Webhooks form of a secret: `whsec_` + base64 of random bytes. */
const generateSecret = () => `whsec_${randomBytes(32).toString('base64')}`

function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: row.events as Webhook['events'],
    description: row.description,
    is_active: row.isActive,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

/** `['*']` alone, or event kinds (the schema already keeps them known and unique). */
function checkEvents(list: readonly string[]): string[] {
  if (list.length > 1 && list.includes('*')) {
    throw invalidField('events', "Field 'events' must be exactly ['*'] or a list of event kinds without '*'")
  }
  return [...list]
}

/**
 * Refuses a host that is, or resolves to, any address that is not public. WHATWG URL parsing has
 * already turned IPv4 spellings such as 2130706433 or 0x7f.0.0.1 into dotted quads. The worker
 * checks again against the address it connects to, so a name that changes its answer later is
 * still refused there.
 */
async function checkPublicTarget(url: URL): Promise<void> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  let addresses: string[]
  if (isIP(host) !== 0) {
    addresses = [host]
  } else {
    try {
      addresses = (await lookup(host, { all: true })).map((entry) => entry.address)
    } catch {
      throw invalidField('url', `Field 'url' has a host name that does not resolve: ${host}`)
    }
  }
  if (addresses.length === 0 || !addresses.every(isPublicAddress)) {
    throw invalidField('url', "Field 'url' must reach a public address (private, loopback, link-local and metadata addresses are refused)")
  }
}

export function createWebhookService(db: Database, options: WebhookServiceOptions) {
  /** The URL as stored: absolute http(s), no credentials, normalised; else a 400 on `url`. */
  async function targetUrl(text: string): Promise<string> {
    let url: URL
    try {
      url = new URL(text)
    } catch {
      throw invalidField('url', "Field 'url' must be an absolute URL")
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw invalidField('url', "Field 'url' must be an http:// or https:// URL")
    }
    if (url.username !== '' || url.password !== '') throw invalidField('url', "Field 'url' must not contain credentials")
    if (url.href.length > WEBHOOK_URL_MAX_LENGTH) {
      throw invalidField('url', `Field 'url' must be at most ${WEBHOOK_URL_MAX_LENGTH} characters once normalised`)
    }
    if (!options.allowPrivateTargets) await checkPublicTarget(url)
    return url.href
  }

  async function webhookExists(id: string): Promise<void> {
    const [row] = await db.select({ id: webhooks.id }).from(webhooks).where(eq(webhooks.id, id))
    if (!row) throw notFound('Webhook')
  }

  /** Deliveries with their event kind and attempt logs (ordered by attempt), in the order of `where`'s rows. */
  async function loadDeliveries(executor: Executor, where: SQL | undefined, page?: { limit: number; offset: number }) {
    const query = executor
      .select({ delivery: webhookDeliveries, kind: events.kind })
      .from(webhookDeliveries)
      .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
      .where(where)
      .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
    const rows = page ? await query.limit(page.limit).offset(page.offset) : await query
    const ids = rows.map((row) => row.delivery.id)
    const attempts =
      ids.length === 0
        ? []
        : await executor
            .select()
            .from(webhookAttempts)
            .where(inArray(webhookAttempts.deliveryId, ids))
            .orderBy(asc(webhookAttempts.attempt), asc(webhookAttempts.createdAt))
    const logs = new Map<string, AttemptRow[]>()
    for (const attempt of attempts) {
      const log = logs.get(attempt.deliveryId)
      if (log) log.push(attempt)
      else logs.set(attempt.deliveryId, [attempt])
    }
    return rows.map(({ delivery, kind }): WebhookDelivery => ({
      id: delivery.id,
      webhook_id: delivery.webhookId,
      event_id: delivery.eventId,
      event: kind,
      status: delivery.status,
      attempts: delivery.attempts,
      next_attempt_at: delivery.nextAttemptAt?.toISOString() ?? null,
      last_status_code: delivery.lastStatusCode,
      created_at: delivery.createdAt.toISOString(),
      updated_at: delivery.updatedAt.toISOString(),
      attempt_log: (logs.get(delivery.id) ?? []).map((attempt) => ({
        attempt: attempt.attempt,
        succeeded: attempt.succeeded,
        status_code: attempt.statusCode,
        duration_ms: attempt.durationMs,
        error: attempt.error,
        response_body: attempt.responseBody,
        created_at: attempt.createdAt.toISOString(),
      })),
    }))
  }

  async function loadDelivery(executor: Executor, webhookId: string, deliveryId: string): Promise<WebhookDelivery> {
    const [delivery] = await loadDeliveries(
      executor,
      and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, webhookId)),
    )
    if (!delivery) throw notFound('Delivery')
    return delivery
  }

  return {
    async list(query: Static<typeof PaginationQuery>): Promise<WebhookList> {
      const page = query.page ?? 1
      const perPage = query.per_page ?? 20
      const [rows, [counted]] = await Promise.all([
        db
          .select()
          .from(webhooks)
          .orderBy(desc(webhooks.createdAt), desc(webhooks.id))
          .limit(perPage)
          .offset((page - 1) * perPage),
        db.select({ total: count() }).from(webhooks),
      ])
      return { webhooks: rows.map(toWebhook), meta: pageMeta(page, perPage, counted!.total) }
    },

    async get(id: string): Promise<Webhook> {
      const [row] = await db.select().from(webhooks).where(eq(webhooks.id, id))
      if (!row) throw notFound('Webhook')
      return toWebhook(row)
    },

    async create(body: CreateWebhook): Promise<WebhookWithSecret> {
      const url = await targetUrl(body.url)
      const secret = body.secret ?? generateSecret()
      const [row] = await db
        .insert(webhooks)
        .values({ url, events: checkEvents(body.events), secret, description: body.description ?? null, isActive: body.is_active ?? true })
        .returning()
      return { ...toWebhook(row!), secret }
    },

    /** One statement; the answer shows the secret only when this update set it. */
    async update(id: string, body: UpdateWebhook): Promise<UpdatedWebhook> {
      // Resolved before the write, so no row waits on DNS.
      const url = body.url === undefined ? undefined : await targetUrl(body.url)
      const [row] = await db
        .update(webhooks)
        .set({
          url,
          events: body.events && checkEvents(body.events),
          secret: body.secret,
          description: body.description,
          isActive: body.is_active,
          updatedAt: new Date(),
        })
        .where(eq(webhooks.id, id))
        .returning()
      if (!row) throw notFound('Webhook')
      return body.secret === undefined ? toWebhook(row) : { ...toWebhook(row), secret: row.secret }
    },

    /** Its deliveries and their attempts go with it (foreign-key cascade). */
    async remove(id: string): Promise<void> {
      const deleted = await db.delete(webhooks).where(eq(webhooks.id, id)).returning({ id: webhooks.id })
      if (deleted.length === 0) throw notFound('Webhook')
    },

    async listDeliveries(id: string, query: ListWebhookDeliveriesQuery): Promise<WebhookDeliveryList> {
      const page = query.page ?? 1
      const perPage = query.per_page ?? 20
      const where = and(
        eq(webhookDeliveries.webhookId, id),
        query.status === undefined ? undefined : eq(webhookDeliveries.status, query.status),
      )
      const [, deliveries, [counted]] = await Promise.all([
        webhookExists(id),
        loadDeliveries(db, where, { limit: perPage, offset: (page - 1) * perPage }),
        db.select({ total: count() }).from(webhookDeliveries).where(where),
      ])
      return { deliveries, meta: pageMeta(page, perPage, counted!.total) }
    },

    getDelivery(id: string, deliveryId: string): Promise<WebhookDelivery> {
      return loadDelivery(db, id, deliveryId)
    },

    /**
     * Sends the delivery again as its next attempt, now, whatever its status. The job key
     * `deliver:<id>:<attempt>` keeps one job per attempt number: redelivering twice before the
     * attempt runs, or while a retry of that number waits, moves that one job to now; the worker
     * skips an attempt number already recorded.
     */
    redeliver(id: string, deliveryId: string): Promise<WebhookDelivery> {
      return db.transaction(async (tx) => {
        const [delivery] = await tx
          .update(webhookDeliveries)
          .set({ status: 'pending', nextAttemptAt: sql`now()`, updatedAt: sql`now()` })
          .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, id)))
          .returning({ attempts: webhookDeliveries.attempts })
        if (!delivery) throw notFound('Delivery')
        // The worker ends deliveries of inactive subscriptions without sending: say so instead.
        const [hook] = await tx.select({ isActive: webhooks.isActive }).from(webhooks).where(eq(webhooks.id, id))
        if (!hook?.isActive) throw conflict('The webhook is inactive; activate it before redelivering')
        await addDeliveryJob(tx, { delivery_id: deliveryId, attempt: delivery.attempts + 1, retry: 0 })
        return loadDelivery(tx, id, deliveryId)
      })
    },
  }
}
