/** Webhook subscriptions (admin): their targets checked at save time, their deliveries with attempt logs, redelivery. */
import { randomBytes } from 'node:crypto'
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { and, asc, eq, inArray, sql, type SQL } from 'drizzle-orm'
import {
  eventKindsOf,
  isPublicAddress,
  MAX_REPLAY_DELIVERIES,
  WEBHOOK_URL_MAX_LENGTH,
  type CreateWebhook,
  type ListWebhookDeliveriesQuery,
  type ReplayWebhook,
  type RotateWebhookSecret,
  type UpdatedWebhook,
  type UpdateWebhook,
  type Webhook,
  type WebhookDelivery,
  type WebhookDeliveryList,
  type WebhookList,
  type WebhookReplay,
  type WebhookWithSecret,
} from '@commerce/domain'
import {
  addDeliveryJob,
  countReplay,
  deliveryView,
  events,
  missingEvents,
  newId,
  replayDeliveries,
  sqlOf,
  webhookAttempts,
  webhookDeliveries,
  webhooks,
  webhookView,
  type Database,
  type Executor,
  type ReplaySelection,
} from '@commerce/db'
import { conflict, invalidField, notFound } from '../../errors.js'
import { instant } from '../../fields.js'
import { key, keyset, listTable, readList, type PageQuery } from '../../list-cursor.js'

type AttemptRow = typeof webhookAttempts.$inferSelect

export interface WebhookServiceOptions {
  /** Skip the check that the URL's host resolves only to public addresses. */
  allowPrivateTargets: boolean
}

/** The Standard Webhooks form of a secret: `whsec_` + base64 of random bytes. */
const generateSecret = () => `whsec_${randomBytes(32).toString('base64')}`

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

/**
 * Columns set when a subscription is made active: an inactive one forgets why the worker disabled
 * it and starts a new failure window (SET reads the row as it was, so an active one keeps its own).
 */
const activation = {
  failingSince: sql`case when ${webhooks.isActive} then ${webhooks.failingSince} end`,
  disabledAt: sql`case when ${webhooks.isActive} then ${webhooks.disabledAt} end`,
  disabledReason: sql`case when ${webhooks.isActive} then ${webhooks.disabledReason} end`,
}

/** Newest first: webhooks_created_idx (created_at, id). */
const WEBHOOKS_KEYSET = keyset('webhooks', 'desc', [key.time(webhooks.createdAt), key.uuid(webhooks.id)])
/** A webhook's deliveries, newest first: webhook_deliveries_webhook_created_idx (webhook_id, created_at, id). */
const DELIVERIES_KEYSET = keyset('webhook_deliveries', 'desc', [key.time(webhookDeliveries.createdAt), key.uuid(webhookDeliveries.id)])

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

  /** Deliveries with their event kind and attempt logs (ordered by attempt), in the list's order, each with its cursor key. */
  async function loadDeliveries(executor: Executor, where: SQL | undefined, page?: { limit: number; offset: number }) {
    const query = executor
      .select({ delivery: webhookDeliveries, kind: events.kind, cursorKey: DELIVERIES_KEYSET.cursorKey })
      .from(webhookDeliveries)
      .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
      .where(where)
      .orderBy(...DELIVERIES_KEYSET.orderBy)
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
    return rows.map(({ delivery, kind, cursorKey }) => ({ view: deliveryView(delivery, kind, logs.get(delivery.id) ?? []), cursorKey }))
  }

  async function loadDelivery(executor: Executor, webhookId: string, deliveryId: string): Promise<WebhookDelivery> {
    const [delivery] = await loadDeliveries(
      executor,
      and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, webhookId)),
    )
    if (!delivery) throw notFound('Delivery')
    return delivery.view
  }

  return {
    async list(query: PageQuery): Promise<WebhookList> {
      const { rows, meta } = await listTable(db, WEBHOOKS_KEYSET, webhooks, undefined, query)
      return { webhooks: rows.map(webhookView), meta }
    },

    async get(id: string): Promise<Webhook> {
      const [row] = await db.select().from(webhooks).where(eq(webhooks.id, id))
      if (!row) throw notFound('Webhook')
      return webhookView(row)
    },

    async create(body: CreateWebhook): Promise<WebhookWithSecret> {
      const url = await targetUrl(body.url)
      const secret = body.secret ?? generateSecret()
      const [row] = await db
        .insert(webhooks)
        .values({ url, events: checkEvents(body.events), secret, description: body.description ?? null, isActive: body.is_active ?? true })
        .returning()
      return { ...webhookView(row!), secret }
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
          // A secret set here replaces the current one at once: no grace (rotate-secret has one).
          ...(body.secret === undefined ? {} : { previousSecret: null, previousSecretExpiresAt: null }),
          description: body.description,
          isActive: body.is_active,
          ...(body.is_active === true ? activation : {}),
          updatedAt: new Date(),
        })
        .where(eq(webhooks.id, id))
        .returning()
      if (!row) throw notFound('Webhook')
      return body.secret === undefined ? webhookView(row) : { ...webhookView(row), secret: row.secret }
    },

    /**
     * A new secret (given, or generated), shown once; the current one keeps signing beside it for
     * the grace period, replacing any previous secret still in its own.
     */
    async rotateSecret(id: string, body: RotateWebhookSecret): Promise<WebhookWithSecret> {
      const secret = body.secret ?? generateSecret()
      const grace = body.grace_period_seconds ?? 86_400
      const [row] = await db
        .update(webhooks)
        .set({
          secret,
          previousSecret: grace > 0 ? sql`${webhooks.secret}` : null,
          previousSecretExpiresAt: grace > 0 ? sql`now() + make_interval(secs => ${grace})` : null,
          updatedAt: sql`now()`,
        })
        .where(eq(webhooks.id, id))
        .returning()
      if (!row) throw notFound('Webhook')
      return { ...webhookView(row), secret }
    },

    /** Active again, with a new failure window: an old streak would disable it at its next failure. */
    async enable(id: string): Promise<Webhook> {
      const [row] = await db
        .update(webhooks)
        .set({ isActive: true, ...activation, updatedAt: sql`now()` })
        .where(eq(webhooks.id, id))
        .returning()
      if (!row) throw notFound('Webhook')
      return webhookView(row)
    },

    /**
     * Queues again, now, the deliveries of the events created in [from, to) that the filters
     * select (same event id, so the same `webhook-id`), and with `missing` makes the deliveries
     * the subscription never had. At most MAX_REPLAY_DELIVERIES: a wider selection is refused
     * whole, so a replay never stops half-way; a dry run only counts.
     */
    replay(id: string, body: ReplayWebhook): Promise<WebhookReplay> {
      const from = instant('from', body.from)!
      const to = instant('to', body.to)!
      if (from >= to) throw invalidField('to', "Field 'to' must be later than 'from'")
      const statuses = body.status ?? ['pending', 'succeeded', 'failed']
      const selection: ReplaySelection = {
        webhookId: id,
        from: from.toISOString(),
        to: to.toISOString(),
        kinds: body.events ? [...new Set(body.events.flatMap(eventKindsOf))] : null,
        statuses: statuses.filter((status) => status !== 'missing'),
        missing: statuses.includes('missing'),
      }
      const dryRun = body.dry_run ?? false
      return db.transaction(async (tx) => {
        const sql = sqlOf(tx)
        // Locked so two replays of one subscription run one after the other.
        const [hook] = await tx.select({ isActive: webhooks.isActive }).from(webhooks).where(eq(webhooks.id, id)).for('update')
        if (!hook) throw notFound('Webhook')
        const counted = await countReplay(sql, selection)
        const matched = counted.existing + counted.missing
        if (dryRun) return { matched, replayed: 0, created: 0, dry_run: true }
        if (matched > MAX_REPLAY_DELIVERIES) {
          throw invalidField(
            'to',
            `The replay selects ${matched} deliveries, more than ${MAX_REPLAY_DELIVERIES} at once; narrow 'from' and 'to' and replay in parts`,
          )
        }
        if (!hook.isActive) throw conflict('The webhook is inactive; enable it before replaying')
        const missing = counted.missing === 0 ? [] : await missingEvents(sql, selection, MAX_REPLAY_DELIVERIES)
        const made = missing.map((eventId) => ({ id: newId(), eventId }))
        const queued = await replayDeliveries(sql, selection, { made, limit: MAX_REPLAY_DELIVERIES })
        return { matched, replayed: queued.replayed, created: queued.created, dry_run: false }
      })
    },

    /** Its deliveries and their attempts go with it (foreign-key cascade). */
    async remove(id: string): Promise<void> {
      const deleted = await db.delete(webhooks).where(eq(webhooks.id, id)).returning({ id: webhooks.id })
      if (deleted.length === 0) throw notFound('Webhook')
    },

    async listDeliveries(id: string, query: ListWebhookDeliveriesQuery): Promise<WebhookDeliveryList> {
      const where = and(
        eq(webhookDeliveries.webhookId, id),
        query.status === undefined ? undefined : eq(webhookDeliveries.status, query.status),
      )
      const [, { rows, meta }] = await Promise.all([
        webhookExists(id),
        readList(DELIVERIES_KEYSET, query, (window) => loadDeliveries(db, and(where, window.after), window), () => db.$count(webhookDeliveries, where)),
      ])
      return { deliveries: rows.map((row) => row.view), meta }
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
