/** Webhook subscriptions (admin CRUD, write-only secrets, SSRF check at save time), deliveries, redelivery, and the event log. */
import { describe, expect } from 'vitest'
import type { LightMyRequestResponse } from 'fastify'
import type { Event, EventList, UpdatedWebhook, Webhook, WebhookDelivery, WebhookDeliveryList, WebhookList, WebhookWithSecret } from '@commerce/domain'
import { buildApp } from '../src/app.js'
import { test, testConfig, type TestContext } from './helpers.js'

const WEBHOOKS = '/api/v1/webhooks'
const EVENTS = '/api/v1/events'
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000cafe'
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const GENERATED_SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/
const RECEIVER = 'http://127.0.0.1:9/hooks'

function createWebhook(ctx: TestContext, admin: string, payload: Record<string, unknown> = {}): Promise<WebhookWithSecret> {
  return ctx.expectStatus(201, { method: 'POST', url: WEBHOOKS, token: admin, payload: { url: RECEIVER, events: ['*'], ...payload } })
}

function refused(ctx: TestContext, admin: string, method: 'POST' | 'PATCH', url: string, payload: Record<string, unknown>, field: string) {
  return ctx.expectInvalidField({ method, url, payload, token: admin }, field, 'webhooks')
}

async function storedSecret(ctx: TestContext, id: string): Promise<string> {
  const [row] = await ctx.handle.sql<{ secret: string }[]>`select secret from webhooks where id = ${id}`
  return row!.secret
}

/** An event row of `kind`, created `ago` before now. */
async function insertEvent(ctx: TestContext, kind: string, ago = '0 seconds'): Promise<string> {
  const [row] = await ctx.handle.sql<{ id: string }[]>`
    insert into events (id, kind, data, created_at, resource_id, sequence)
    values (gen_random_uuid(), ${kind}, '{"id":"x"}', now() - ${ago}::interval, gen_random_uuid(), 1)
    returning id`
  return row!.id
}

interface DeliveryRow {
  status: 'pending' | 'succeeded' | 'failed'
  attempts: number
  ago?: string
}

async function insertDelivery(ctx: TestContext, webhookId: string, eventId: string, { status, attempts, ago = '0 seconds' }: DeliveryRow): Promise<string> {
  const [row] = await ctx.handle.sql<{ id: string }[]>`
    insert into webhook_deliveries (id, webhook_id, event_id, status, attempts, last_status_code, created_at, updated_at)
    values (gen_random_uuid(), ${webhookId}, ${eventId}, ${status}, ${attempts}, ${attempts > 0 ? 500 : null},
      now() - ${ago}::interval, now() - ${ago}::interval)
    returning id`
  return row!.id
}

/** Attempt rows, inserted last-first so the answer's order cannot come from insertion order. */
async function insertAttempts(ctx: TestContext, deliveryId: string, count: number, lastSucceeds: boolean): Promise<void> {
  for (let attempt = count; attempt >= 1; attempt--) {
    const succeeded = lastSucceeds && attempt === count
    await ctx.handle.sql`
      insert into webhook_attempts (id, delivery_id, attempt, succeeded, status_code, duration_ms, error, response_body)
      values (gen_random_uuid(), ${deliveryId}, ${attempt}, ${succeeded}, ${succeeded ? 200 : attempt === 1 ? null : 503},
        ${attempt * 10}, ${attempt === 1 ? 'connect ETIMEDOUT' : null}, ${attempt === 1 ? null : `body ${attempt}`})`
  }
}

/** Graphile Worker's jobs for one attempt of a delivery (the payload is only in its private table). */
async function deliveryJobs(ctx: TestContext, deliveryId: string, attempt: number): Promise<{ payload: unknown; due: boolean }[]> {
  return ctx.handle.sql<{ payload: unknown; due: boolean }[]>`
    select (select payload from graphile_worker._private_jobs where id = jobs.id), run_at <= now() as due
    from graphile_worker.jobs
    where task_identifier = 'deliver-webhook' and key = ${`deliver:${deliveryId}:${attempt}`}`
}

describe('POST /api/v1/webhooks', () => {
  test('creates a subscription: 201 with every field and a generated whsec_ secret shown only here', async ({ ctx, admin }) => {
    const body = await ctx.expectStatus<WebhookWithSecret>(201, {
      method: 'POST',
      url: WEBHOOKS,
      token: admin,
      payload: { url: RECEIVER, events: ['order.created', 'order.paid'], description: 'Fulfilment system' },
    })
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      url: RECEIVER,
      events: ['order.created', 'order.paid'],
      description: 'Fulfilment system',
      is_active: true,
      previous_secret_expires_at: null,
      consecutive_failures: 0,
      last_success_at: null,
      last_failure_at: null,
      failing_since: null,
      disabled_at: null,
      disabled_reason: null,
      secret: expect.stringMatching(GENERATED_SECRET),
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    })
    expect(Buffer.from(body.secret.slice('whsec_'.length), 'base64')).toHaveLength(32)
    expect(await storedSecret(ctx, body.id)).toBe(body.secret)

    const { secret, ...shown } = body
    const read = await ctx.expectStatus<Webhook>(200, { method: 'GET', url: `${WEBHOOKS}/${body.id}`, token: admin })
    expect(read).toEqual(shown)
    const list = await ctx.request({ method: 'GET', url: `${WEBHOOKS}?per_page=100`, token: admin })
    expect(list.json<WebhookList>().webhooks).toContainEqual(shown)
    expect(list.body).not.toContain(secret)
    expect(list.body).not.toContain('"secret"')
  })

  test('keeps a given secret, a disabled start, and every event kind as ["*"]; two creates get different secrets', async ({ ctx, admin }) => {
    const given = 'my-own-secret-0123456789!'
    const withSecret = await createWebhook(ctx, admin, { secret: given, is_active: false })
    expect(withSecret).toMatchObject({ secret: given, is_active: false, events: ['*'], description: null })
    expect(await storedSecret(ctx, withSecret.id)).toBe(given)
    const [first, second] = [await createWebhook(ctx, admin), await createWebhook(ctx, admin)]
    expect(first.secret).not.toBe(second.secret)
  })

  test('stores the URL normalised: host lower-cased, default port and empty path settled', async ({ ctx, admin }) => {
    const created = await createWebhook(ctx, admin, { url: 'HTTPS://Example.COM:443' })
    expect(created.url).toBe('https://example.com/')
  })

  test('refuses URLs that are not absolute http(s) URLs, or carry credentials, or are too long', async ({ ctx, admin }) => {
    const notAbsolute = await refused(ctx, admin, 'POST', WEBHOOKS, { url: 'not a url', events: ['*'] }, 'url')
    expect(notAbsolute.message).toBe("Field 'url' must be an absolute URL")
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: '/hooks/relative', events: ['*'] }, 'url')
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: 'example.com/hooks', events: ['*'] }, 'url')
    const ftp = await refused(ctx, admin, 'POST', WEBHOOKS, { url: 'ftp://example.com/hooks', events: ['*'] }, 'url')
    expect(ftp.message).toBe("Field 'url' must be an http:// or https:// URL")
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: 'javascript:alert(1)', events: ['*'] }, 'url')
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: 'file:///etc/passwd', events: ['*'] }, 'url')
    const credentials = await refused(ctx, admin, 'POST', WEBHOOKS, { url: 'https://user:pass@example.com/', events: ['*'] }, 'url')
    expect(credentials.message).toBe("Field 'url' must not contain credentials")
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: 'https://token@example.com/', events: ['*'] }, 'url')
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: `https://example.com/${'a'.repeat(2048)}`, events: ['*'] }, 'url')
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: '', events: ['*'] }, 'url')
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: 42, events: ['*'] }, 'url')
    const missing = await refused(ctx, admin, 'POST', WEBHOOKS, { events: ['*'] }, 'url')
    expect(missing.message).toBe("Field 'url' is required")
  })

  test('refuses an empty, unknown, repeated or mixed-with-"*" list of events', async ({ ctx, admin }) => {
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: RECEIVER, events: [] }, 'events')
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: RECEIVER, events: ['order.exploded'] }, 'events.0')
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: RECEIVER, events: ['order.created', 'order.*'] }, 'events.1')
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: RECEIVER, events: ['order.paid', 'order.paid'] }, 'events')
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: RECEIVER, events: 'order.paid' }, 'events')
    const mixed = await refused(ctx, admin, 'POST', WEBHOOKS, { url: RECEIVER, events: ['*', 'order.paid'] }, 'events')
    expect(mixed.message).toBe("Field 'events' must be exactly ['*'] or a list of event kinds without '*'")
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: RECEIVER }, 'events')
  })

  test('refuses secrets shorter than 16 or longer than 256 characters, or with spaces or non-ASCII; unknown and read-only fields', async ({ ctx, admin }) => {
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: RECEIVER, events: ['*'], secret: 'short-secret' }, 'secret')
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: RECEIVER, events: ['*'], secret: 'x'.repeat(257) }, 'secret')
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: RECEIVER, events: ['*'], secret: 'has a space in it, sadly' }, 'secret')
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: RECEIVER, events: ['*'], secret: 'geheimnis-schlüssel-1234' }, 'secret')
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: RECEIVER, events: ['*'], secret: null }, 'secret')
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: RECEIVER, events: ['*'], description: 'd'.repeat(1001) }, 'description')
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: RECEIVER, events: ['*'], id: UNKNOWN_ID }, 'id')
    await refused(ctx, admin, 'POST', WEBHOOKS, { url: RECEIVER, events: ['*'], headers: { a: 'b' } }, 'headers')
    expect((await createWebhook(ctx, admin, { secret: 's'.repeat(256) })).secret).toHaveLength(256)
  })
})

describe('who may use the webhook and event routes', () => {
  test('every route answers 401 anonymous and 403 to a customer, and changes nothing', async ({ ctx, admin, customer }) => {
    const hook = await createWebhook(ctx, admin)
    const eventId = await insertEvent(ctx, 'order.paid')
    const deliveryId = await insertDelivery(ctx, hook.id, eventId, { status: 'failed', attempts: 4 })
    const routes = [
      { method: 'GET', url: WEBHOOKS },
      { method: 'POST', url: WEBHOOKS, payload: { url: RECEIVER, events: ['*'] } },
      { method: 'GET', url: `${WEBHOOKS}/${hook.id}` },
      { method: 'PATCH', url: `${WEBHOOKS}/${hook.id}`, payload: { is_active: false } },
      { method: 'DELETE', url: `${WEBHOOKS}/${hook.id}` },
      { method: 'GET', url: `${WEBHOOKS}/${hook.id}/deliveries` },
      { method: 'GET', url: `${WEBHOOKS}/${hook.id}/deliveries/${deliveryId}` },
      { method: 'POST', url: `${WEBHOOKS}/${hook.id}/deliveries/${deliveryId}/redeliver` },
      { method: 'POST', url: `${WEBHOOKS}/${hook.id}/rotate-secret`, payload: {} },
      { method: 'POST', url: `${WEBHOOKS}/${hook.id}/enable` },
      { method: 'POST', url: `${WEBHOOKS}/${hook.id}/replay`, payload: { from: '2020-01-01T00:00:00Z', to: '2100-01-01T00:00:00Z' } },
      { method: 'GET', url: EVENTS },
      { method: 'GET', url: `${EVENTS}/${eventId}` },
    ] as const
    const before = await ctx.countRows('webhooks')
    for (const route of routes) {
      const anonymous = await ctx.request(route)
      expect(anonymous.statusCode, `${route.method} ${route.url}`).toBe(401)
      expect(anonymous.json().error.code).toBe('unauthorized')
      const byCustomer = await ctx.request({ ...route, token: customer })
      expect(byCustomer.statusCode, `${route.method} ${route.url}`).toBe(403)
      expect(byCustomer.json().error.code).toBe('forbidden')
    }
    expect(await ctx.countRows('webhooks')).toBe(before)
    expect(await ctx.expectStatus<Webhook>(200, { method: 'GET', url: `${WEBHOOKS}/${hook.id}`, token: admin })).toMatchObject({ is_active: true })
    expect(await deliveryJobs(ctx, deliveryId, 5)).toEqual([])
    expect(await storedSecret(ctx, hook.id)).toBe(hook.secret)
  })
})

describe('GET /api/v1/webhooks', () => {
  test('lists newest first in the list envelope, paginated; out-of-range pages are 400', async ({ ctx, admin }) => {
    const created = [await createWebhook(ctx, admin, { description: 'a' }), await createWebhook(ctx, admin, { description: 'b' }), await createWebhook(ctx, admin, { description: 'c' })]
    const total = await ctx.countRows('webhooks')
    const first = await ctx.expectStatus<WebhookList>(200, { method: 'GET', url: `${WEBHOOKS}?per_page=2`, token: admin })
    expect(first.meta).toEqual({ page: 1, per_page: 2, total, total_pages: Math.ceil(total / 2) })
    expect(first.webhooks.map((hook) => hook.id)).toEqual([created[2]!.id, created[1]!.id])
    const second = await ctx.expectStatus<WebhookList>(200, { method: 'GET', url: `${WEBHOOKS}?per_page=2&page=2`, token: admin })
    expect(second.webhooks[0]!.id).toBe(created[0]!.id)
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${WEBHOOKS}?per_page=101`, token: admin })
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${WEBHOOKS}?page=0`, token: admin })
  })

  test('GET /:id answers 404 for an unknown id and 400 for a malformed one', async ({ ctx, admin }) => {
    const missing = await ctx.expectError(404, 'not_found', { method: 'GET', url: `${WEBHOOKS}/${UNKNOWN_ID}`, token: admin })
    expect(missing.message).toBe('Webhook not found')
    const malformed = await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${WEBHOOKS}/nope`, token: admin })
    expect(malformed.details).toContainEqual(expect.objectContaining({ field: 'id' }))
  })
})

describe('PATCH /api/v1/webhooks/:id', () => {
  test('rotates the secret: the new one shows in that answer only; other updates never show it', async ({ ctx, admin }) => {
    const hook = await createWebhook(ctx, admin)
    const rotated = await ctx.expectStatus<UpdatedWebhook>(200, {
      method: 'PATCH',
      url: `${WEBHOOKS}/${hook.id}`,
      token: admin,
      payload: { secret: 'rotated-secret-abcdefghij' },
    })
    expect(rotated.secret).toBe('rotated-secret-abcdefghij')
    expect(await storedSecret(ctx, hook.id)).toBe('rotated-secret-abcdefghij')
    expect(rotated.updated_at > hook.updated_at).toBe(true)

    const renamed = await ctx.request({ method: 'PATCH', url: `${WEBHOOKS}/${hook.id}`, token: admin, payload: { description: 'renamed' } })
    expect(renamed.statusCode).toBe(200)
    expect(renamed.json()).not.toHaveProperty('secret')
    expect(renamed.body).not.toContain('rotated-secret')
    const read = await ctx.request({ method: 'GET', url: `${WEBHOOKS}/${hook.id}`, token: admin })
    expect(read.json()).not.toHaveProperty('secret')
  })

  test('changes url, events, description and is_active, and keeps what was not sent', async ({ ctx, admin }) => {
    const hook = await createWebhook(ctx, admin, { events: ['product.created'], description: 'before' })
    const updated = await ctx.expectStatus<UpdatedWebhook>(200, {
      method: 'PATCH',
      url: `${WEBHOOKS}/${hook.id}`,
      token: admin,
      payload: { url: 'http://127.0.0.1:8080/other', events: ['order.paid', 'order.refunded'], is_active: false },
    })
    expect(updated).toEqual({
      ...hook,
      secret: undefined,
      url: 'http://127.0.0.1:8080/other',
      events: ['order.paid', 'order.refunded'],
      is_active: false,
      updated_at: expect.stringMatching(ISO),
    })
    const cleared = await ctx.expectStatus<UpdatedWebhook>(200, {
      method: 'PATCH',
      url: `${WEBHOOKS}/${hook.id}`,
      token: admin,
      payload: { description: null, events: ['*'] },
    })
    expect(cleared).toMatchObject({ description: null, events: ['*'], is_active: false, url: 'http://127.0.0.1:8080/other' })
    expect(await storedSecret(ctx, hook.id)).toBe(hook.secret)
  })

  test('refuses an empty body, bad fields, unknown fields; 404 for an unknown id; the row stays as it was', async ({ ctx, admin }) => {
    const hook = await createWebhook(ctx, admin)
    const url = `${WEBHOOKS}/${hook.id}`
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url, token: admin, payload: {} })
    await refused(ctx, admin, 'PATCH', url, { url: 'ftp://example.com/' }, 'url')
    await refused(ctx, admin, 'PATCH', url, { url: '/relative' }, 'url')
    await refused(ctx, admin, 'PATCH', url, { events: [] }, 'events')
    await refused(ctx, admin, 'PATCH', url, { events: ['*', 'order.paid'] }, 'events')
    await refused(ctx, admin, 'PATCH', url, { secret: 'short' }, 'secret')
    await refused(ctx, admin, 'PATCH', url, { is_active: 'no' }, 'is_active')
    await refused(ctx, admin, 'PATCH', url, { created_at: '2030-01-01T00:00:00Z' }, 'created_at')
    const { secret, ...shown } = hook
    expect(await ctx.expectStatus<Webhook>(200, { method: 'GET', url, token: admin })).toEqual(shown)
    expect(await storedSecret(ctx, hook.id)).toBe(secret)
    const missing = await ctx.expectError(404, 'not_found', {
      method: 'PATCH',
      url: `${WEBHOOKS}/${UNKNOWN_ID}`,
      token: admin,
      payload: { is_active: false },
    })
    expect(missing.message).toBe('Webhook not found')
  })
})

describe('DELETE /api/v1/webhooks/:id', () => {
  test('answers 204 and takes the deliveries and their attempts with it; then 404', async ({ ctx, admin }) => {
    const hook = await createWebhook(ctx, admin)
    const deliveryId = await insertDelivery(ctx, hook.id, await insertEvent(ctx, 'order.created'), { status: 'failed', attempts: 2 })
    await insertAttempts(ctx, deliveryId, 2, false)
    const response = await ctx.request({ method: 'DELETE', url: `${WEBHOOKS}/${hook.id}`, token: admin })
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    const [left] = await ctx.handle.sql<{ deliveries: number; attempts: number }[]>`
      select (select count(*)::int from webhook_deliveries where webhook_id = ${hook.id}) as deliveries,
             (select count(*)::int from webhook_attempts where delivery_id = ${deliveryId}) as attempts`
    expect(left).toEqual({ deliveries: 0, attempts: 0 })
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${WEBHOOKS}/${hook.id}`, token: admin })
    await ctx.expectError(404, 'not_found', { method: 'DELETE', url: `${WEBHOOKS}/${hook.id}`, token: admin })
  })
})

describe('SSRF: targets checked when a subscription is saved', () => {
  type Send = (method: 'POST' | 'PATCH', url: string, payload: Record<string, unknown>) => Promise<LightMyRequestResponse>
  /** `send` is an admin's request to an app on the file's database that refuses private targets, as in production. */
  const ssrfTest = test.extend<{ send: Send }>({
    send: [
      async ({ ctx, admin }, use) => {
        const guarded = await buildApp(testConfig(ctx.database.url, { webhookAllowPrivateTargets: false }), { logger: false })
        await guarded.ready()
        await use((method, url, payload) => guarded.inject({ method, url, payload, headers: { authorization: `Bearer ${admin}` } }))
        await guarded.close()
      },
      { scope: 'file' },
    ],
  })

  ssrfTest('refuses loopback, private, link-local and metadata targets in every spelling, and names that do not resolve', async ({ ctx, send }) => {
    const before = await ctx.countRows('webhooks')
    for (const url of [
      'http://127.0.0.1/hooks',
      'http://localhost:3000/hooks',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]/hooks',
      'http://[::ffff:127.0.0.1]/hooks',
      'http://2130706433/',
      'http://0x7f.0.0.1/',
      'http://017700000001/',
      'http://10.0.0.1/',
      'http://192.168.1.10/',
      'http://172.16.0.1/',
      'http://100.64.0.1/',
      'http://0.0.0.0/',
      'http://[fd00::1]/',
      'http://[fe80::1]/',
      'https://no-such-host.invalid/hooks',
    ]) {
      const response = await send('POST', WEBHOOKS, { url, events: ['*'] })
      expect(response.statusCode, url).toBe(400)
      const { error } = response.json()
      expect(error.code).toBe('validation_error')
      expect(error.details, url).toEqual([{ field: 'url', message: error.message }])
    }
    expect(await ctx.countRows('webhooks')).toBe(before)
  })

  ssrfTest('accepts a public IP literal (no DNS needed) and refuses a change of its url to a private one', async ({ ctx, send }) => {
    const created = await send('POST', WEBHOOKS, { url: 'https://93.184.216.34/hooks', events: ['order.paid'] })
    expect(created.statusCode, created.body).toBe(201)
    const { id } = created.json<WebhookWithSecret>()
    expect((await send('POST', WEBHOOKS, { url: 'http://[2606:4700:4700::1111]/', events: ['*'] })).statusCode).toBe(201)

    const moved = await send('PATCH', `${WEBHOOKS}/${id}`, { url: 'http://169.254.169.254/' })
    expect(moved.statusCode).toBe(400)
    expect(moved.json().error.details).toEqual([{ field: 'url', message: expect.stringContaining('public address') }])
    const [row] = await ctx.handle.sql<{ url: string }[]>`select url from webhooks where id = ${id}`
    expect(row!.url).toBe('https://93.184.216.34/hooks')
    expect((await send('PATCH', `${WEBHOOKS}/${id}`, { is_active: false })).statusCode).toBe(200)
  })
})

describe('deliveries', () => {
  test('lists a subscription\'s deliveries newest first, each with its attempt log in attempt order; filters by status', async ({ ctx, admin }) => {
    const hook = await createWebhook(ctx, admin)
    const other = await createWebhook(ctx, admin)
    const paid = await insertEvent(ctx, 'order.paid', '3 minutes')
    const created = await insertEvent(ctx, 'order.created', '2 minutes')
    const oldest = await insertDelivery(ctx, hook.id, paid, { status: 'succeeded', attempts: 3, ago: '3 minutes' })
    await insertAttempts(ctx, oldest, 3, true)
    const newest = await insertDelivery(ctx, hook.id, created, { status: 'failed', attempts: 1, ago: '1 minute' })
    await insertAttempts(ctx, newest, 1, false)
    await insertDelivery(ctx, other.id, paid, { status: 'pending', attempts: 0 })

    const list = await ctx.expectStatus<WebhookDeliveryList>(200, { method: 'GET', url: `${WEBHOOKS}/${hook.id}/deliveries`, token: admin })
    expect(list.meta).toEqual({ page: 1, per_page: 20, total: 2, total_pages: 1 })
    expect(list.deliveries.map((delivery) => delivery.id)).toEqual([newest, oldest])
    expect(list.deliveries[1]).toEqual({
      id: oldest,
      webhook_id: hook.id,
      event_id: paid,
      event: 'order.paid',
      status: 'succeeded',
      attempts: 3,
      next_attempt_at: null,
      last_status_code: 500,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
      attempt_log: [
        { attempt: 1, succeeded: false, status_code: null, duration_ms: 10, error: 'connect ETIMEDOUT', response_body: null, created_at: expect.stringMatching(ISO) },
        { attempt: 2, succeeded: false, status_code: 503, duration_ms: 20, error: null, response_body: 'body 2', created_at: expect.stringMatching(ISO) },
        { attempt: 3, succeeded: true, status_code: 200, duration_ms: 30, error: null, response_body: 'body 3', created_at: expect.stringMatching(ISO) },
      ],
    })
    expect(list.deliveries[0]!.attempt_log.map((attempt) => attempt.attempt)).toEqual([1])

    const failed = await ctx.expectStatus<WebhookDeliveryList>(200, {
      method: 'GET',
      url: `${WEBHOOKS}/${hook.id}/deliveries?status=failed`,
      token: admin,
    })
    expect(failed.deliveries.map((delivery) => delivery.id)).toEqual([newest])
    const paged = await ctx.expectStatus<WebhookDeliveryList>(200, {
      method: 'GET',
      url: `${WEBHOOKS}/${hook.id}/deliveries?per_page=1&page=2`,
      token: admin,
    })
    expect(paged).toMatchObject({ deliveries: [{ id: oldest }], meta: { page: 2, per_page: 1, total: 2, total_pages: 2 } })
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${WEBHOOKS}/${hook.id}/deliveries?status=lost`, token: admin })

    const one = await ctx.expectStatus<WebhookDelivery>(200, { method: 'GET', url: `${WEBHOOKS}/${hook.id}/deliveries/${oldest}`, token: admin })
    expect(one).toEqual(list.deliveries[1])
  })

  test('answers 404 for an unknown subscription, an unknown delivery, or another subscription\'s delivery', async ({ ctx, admin }) => {
    const hook = await createWebhook(ctx, admin)
    const other = await createWebhook(ctx, admin)
    const deliveryId = await insertDelivery(ctx, other.id, await insertEvent(ctx, 'product.created'), { status: 'pending', attempts: 0 })
    const unknownHook = await ctx.expectError(404, 'not_found', { method: 'GET', url: `${WEBHOOKS}/${UNKNOWN_ID}/deliveries`, token: admin })
    expect(unknownHook.message).toBe('Webhook not found')
    const foreign = await ctx.expectError(404, 'not_found', { method: 'GET', url: `${WEBHOOKS}/${hook.id}/deliveries/${deliveryId}`, token: admin })
    expect(foreign.message).toBe('Delivery not found')
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${WEBHOOKS}/${hook.id}/deliveries/${UNKNOWN_ID}`, token: admin })
    await ctx.expectError(404, 'not_found', {
      method: 'POST',
      url: `${WEBHOOKS}/${hook.id}/deliveries/${deliveryId}/redeliver`,
      token: admin,
    })
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${WEBHOOKS}/${hook.id}/deliveries/nope`, token: admin })
    expect(await deliveryJobs(ctx, deliveryId, 1)).toEqual([])
  })
})

describe('POST /api/v1/webhooks/:id/deliveries/:delivery_id/redeliver', () => {
  test('answers 202 with the delivery pending and due now, and queues exactly one job for its next attempt', async ({ ctx, admin }) => {
    const hook = await createWebhook(ctx, admin)
    const deliveryId = await insertDelivery(ctx, hook.id, await insertEvent(ctx, 'order.paid'), { status: 'failed', attempts: 4, ago: '1 hour' })
    await insertAttempts(ctx, deliveryId, 4, false)
    const url = `${WEBHOOKS}/${hook.id}/deliveries/${deliveryId}/redeliver`
    const before = Date.now()
    const answer = await ctx.expectStatus<WebhookDelivery>(202, { method: 'POST', url, token: admin })
    expect(answer).toMatchObject({ id: deliveryId, status: 'pending', attempts: 4 })
    expect(answer.attempt_log).toHaveLength(4)
    expect(Math.abs(Date.parse(answer.next_attempt_at!) - before)).toBeLessThan(60_000)
    expect(Date.parse(answer.updated_at)).toBeGreaterThan(Date.parse(answer.created_at))

    const jobs = await deliveryJobs(ctx, deliveryId, 5)
    expect(jobs).toHaveLength(1)
    expect(jobs[0]!.payload).toEqual({ delivery_id: deliveryId, attempt: 5, retry: 0 })
    expect(jobs[0]!.due).toBe(true)

    // The same attempt asked for again stays one job.
    await ctx.expectStatus(202, { method: 'POST', url, token: admin })
    expect(await deliveryJobs(ctx, deliveryId, 5)).toHaveLength(1)
    const [row] = await ctx.handle.sql`select status, attempts from webhook_deliveries where id = ${deliveryId}`
    expect(row).toEqual({ status: 'pending', attempts: 4 })
  })

  test('an inactive subscription answers 409 conflict and nothing changes or is queued', async ({ ctx, admin }) => {
    const hook = await createWebhook(ctx, admin, { is_active: false })
    const deliveryId = await insertDelivery(ctx, hook.id, await insertEvent(ctx, 'order.shipped'), { status: 'failed', attempts: 4 })
    const error = await ctx.expectError(409, 'conflict', {
      method: 'POST',
      url: `${WEBHOOKS}/${hook.id}/deliveries/${deliveryId}/redeliver`,
      token: admin,
    })
    expect(error.message).toBe('The webhook is inactive; activate it before redelivering')
    const [row] = await ctx.handle.sql`select status, next_attempt_at from webhook_deliveries where id = ${deliveryId}`
    expect(row).toEqual({ status: 'failed', next_attempt_at: null })
    expect(await deliveryJobs(ctx, deliveryId, 5)).toEqual([])
  })

  test('a delivery that succeeded is sent again as attempt attempts + 1', async ({ ctx, admin }) => {
    const hook = await createWebhook(ctx, admin)
    const deliveryId = await insertDelivery(ctx, hook.id, await insertEvent(ctx, 'customer.created'), { status: 'succeeded', attempts: 1 })
    await insertAttempts(ctx, deliveryId, 1, true)
    await ctx.expectStatus(202, { method: 'POST', url: `${WEBHOOKS}/${hook.id}/deliveries/${deliveryId}/redeliver`, token: admin })
    expect(await deliveryJobs(ctx, deliveryId, 2)).toHaveLength(1)
  })
})

describe('POST /api/v1/webhooks/:id/rotate-secret', () => {
  const rotate = (ctx: TestContext, admin: string, id: string, payload?: Record<string, unknown>) =>
    ctx.expectStatus<WebhookWithSecret>(200, { method: 'POST', url: `${WEBHOOKS}/${id}/rotate-secret`, token: admin, ...(payload ? { payload } : {}) })
  const previousOf = async (ctx: TestContext, id: string) =>
    (await ctx.handle.sql<{ previous_secret: string | null; grace: number | null }[]>`
      select previous_secret, extract(epoch from previous_secret_expires_at - now())::float8 as grace from webhooks where id = ${id}`)[0]!

  test('without a body: a generated secret shown once, the old one signing for 24 hours', async ({ ctx, admin }) => {
    const hook = await createWebhook(ctx, admin)
    const rotated = await rotate(ctx, admin, hook.id)
    expect(rotated.secret).toMatch(GENERATED_SECRET)
    expect(rotated.secret).not.toBe(hook.secret)
    expect(await storedSecret(ctx, hook.id)).toBe(rotated.secret)
    const previous = await previousOf(ctx, hook.id)
    expect(previous.previous_secret).toBe(hook.secret)
    expect(previous.grace).toBeGreaterThan(86_400 - 60)
    expect(previous.grace).toBeLessThanOrEqual(86_400)
    expect(Date.parse(rotated.previous_secret_expires_at!) - Date.now()).toBeGreaterThan((86_400 - 60) * 1000)
    // Reads show when the grace ends, never a secret.
    const read = await ctx.request({ method: 'GET', url: `${WEBHOOKS}/${hook.id}`, token: admin })
    expect(read.json<Webhook>().previous_secret_expires_at).toBe(rotated.previous_secret_expires_at)
    for (const secret of [hook.secret, rotated.secret]) expect(read.body).not.toContain(secret)
  })

  test('takes a given secret and grace period; a second rotation replaces the previous secret; 0 ends the grace now', async ({ ctx, admin }) => {
    const hook = await createWebhook(ctx, admin)
    await rotate(ctx, admin, hook.id, { secret: 'the-second-secret-0123', grace_period_seconds: 3600 })
    let previous = await previousOf(ctx, hook.id)
    expect(previous.previous_secret).toBe(hook.secret)
    expect(previous.grace).toBeGreaterThan(3600 - 60)
    expect(previous.grace).toBeLessThanOrEqual(3600)

    await rotate(ctx, admin, hook.id, { secret: 'the-third-secret-012345' })
    previous = await previousOf(ctx, hook.id)
    expect(previous.previous_secret).toBe('the-second-secret-0123')
    expect(await storedSecret(ctx, hook.id)).toBe('the-third-secret-012345')

    const ended = await rotate(ctx, admin, hook.id, { grace_period_seconds: 0 })
    expect(ended.previous_secret_expires_at).toBeNull()
    expect(await previousOf(ctx, hook.id)).toEqual({ previous_secret: null, grace: null })

    // PATCH with a secret replaces it at once, ending any grace.
    await rotate(ctx, admin, hook.id, {})
    await ctx.expectStatus(200, { method: 'PATCH', url: `${WEBHOOKS}/${hook.id}`, token: admin, payload: { secret: 'patched-secret-0123456' } })
    expect(await previousOf(ctx, hook.id)).toEqual({ previous_secret: null, grace: null })
  })

  test('refuses a bad secret, a grace beyond 30 days or unknown fields; 404 for an unknown id; the secret stays', async ({ ctx, admin }) => {
    const hook = await createWebhook(ctx, admin)
    for (const [payload, field] of [
      [{ secret: 'short' }, 'secret'],
      [{ grace_period_seconds: 30 * 86_400 + 1 }, 'grace_period_seconds'],
      [{ grace_period_seconds: -1 }, 'grace_period_seconds'],
      [{ secret_key: 'x'.repeat(20) }, 'secret_key'],
    ] as const) {
      const error = await ctx.expectError(400, 'validation_error', { method: 'POST', url: `${WEBHOOKS}/${hook.id}/rotate-secret`, token: admin, payload })
      expect(error.details?.map((detail) => detail.field)).toContain(field)
    }
    await ctx.expectError(404, 'not_found', { method: 'POST', url: `${WEBHOOKS}/${UNKNOWN_ID}/rotate-secret`, token: admin, payload: {} })
    expect(await storedSecret(ctx, hook.id)).toBe(hook.secret)
    expect(await previousOf(ctx, hook.id)).toEqual({ previous_secret: null, grace: null })
  })
})

describe('POST /api/v1/webhooks/:id/enable', () => {
  test('makes a disabled subscription active with a new failure window, keeping its failure count', async ({ ctx, admin }) => {
    const hook = await createWebhook(ctx, admin)
    await ctx.handle.sql`update webhooks set is_active = false, disabled_at = now(), disabled_reason = 'failing',
      failing_since = now() - interval '6 days', consecutive_failures = 40, last_failure_at = now() where id = ${hook.id}`
    const disabled = await ctx.expectStatus<Webhook>(200, { method: 'GET', url: `${WEBHOOKS}/${hook.id}`, token: admin })
    expect(disabled).toMatchObject({ is_active: false, disabled_reason: 'failing', consecutive_failures: 40 })
    expect(disabled.disabled_at).toMatch(ISO)
    expect(disabled.failing_since).toMatch(ISO)

    const enabled = await ctx.expectStatus<Webhook>(200, { method: 'POST', url: `${WEBHOOKS}/${hook.id}/enable`, token: admin })
    expect(enabled).toMatchObject({ is_active: true, disabled_at: null, disabled_reason: null, failing_since: null, consecutive_failures: 40 })
    expect(enabled.last_failure_at).toBe(disabled.last_failure_at)
    await ctx.expectError(404, 'not_found', { method: 'POST', url: `${WEBHOOKS}/${UNKNOWN_ID}/enable`, token: admin })
  })

  test('PATCH is_active: true does the same for an inactive one; an active one keeps its failure streak', async ({ ctx, admin }) => {
    const hook = await createWebhook(ctx, admin)
    await ctx.handle.sql`update webhooks set failing_since = now() - interval '1 day' where id = ${hook.id}`
    const active = await ctx.expectStatus<Webhook>(200, { method: 'PATCH', url: `${WEBHOOKS}/${hook.id}`, token: admin, payload: { is_active: true } })
    expect(active.failing_since).toMatch(ISO)
    await ctx.handle.sql`update webhooks set is_active = false, disabled_at = now(), disabled_reason = 'failing' where id = ${hook.id}`
    const patched = await ctx.expectStatus<Webhook>(200, { method: 'PATCH', url: `${WEBHOOKS}/${hook.id}`, token: admin, payload: { is_active: true } })
    expect(patched).toMatchObject({ is_active: true, disabled_at: null, disabled_reason: null, failing_since: null })
  })
})

describe('POST /api/v1/webhooks/:id/replay', () => {
  const replay = (ctx: TestContext, admin: string, id: string, payload: Record<string, unknown>) =>
    ctx.request({ method: 'POST', url: `${WEBHOOKS}/${id}/replay`, token: admin, payload })
  const window = { from: new Date(Date.now() - 3 * 3600_000).toISOString(), to: new Date(Date.now() + 60_000).toISOString() }

  /** A subscription with deliveries of several kinds and states inside the window, and one outside it. */
  async function seeded(ctx: TestContext, admin: string) {
    const hook = await createWebhook(ctx, admin)
    const failedPaid = await insertDelivery(ctx, hook.id, await insertEvent(ctx, 'order.paid', '2 hours'), { status: 'failed', attempts: 4, ago: '2 hours' })
    const okPaid = await insertDelivery(ctx, hook.id, await insertEvent(ctx, 'order.paid', '1 hour'), { status: 'succeeded', attempts: 1, ago: '1 hour' })
    const failedProduct = await insertDelivery(ctx, hook.id, await insertEvent(ctx, 'product.updated', '30 minutes'), { status: 'failed', attempts: 2, ago: '30 minutes' })
    const old = await insertDelivery(ctx, hook.id, await insertEvent(ctx, 'order.paid', '5 hours'), { status: 'failed', attempts: 4, ago: '5 hours' })
    return { hook, failedPaid, okPaid, failedProduct, old }
  }

  test('queues each matching delivery as its next attempt, now, by status and kind; the window bounds it', async ({ ctx, admin }) => {
    const { hook, failedPaid, okPaid, failedProduct, old } = await seeded(ctx, admin)
    const answer = await replay(ctx, admin, hook.id, { ...window, status: ['failed'], events: ['order.*'] })
    expect(answer.statusCode, answer.body).toBe(202)
    expect(answer.json()).toEqual({ matched: 1, replayed: 1, created: 0, dry_run: false })
    expect((await deliveryJobs(ctx, failedPaid, 5))[0]).toEqual({ payload: { delivery_id: failedPaid, attempt: 5, retry: 0 }, due: true })
    for (const [id, attempt] of [[okPaid, 2], [failedProduct, 3], [old, 5]] as const) expect(await deliveryJobs(ctx, id, attempt)).toEqual([])
    const [row] = await ctx.handle.sql`select status, attempts, next_attempt_at <= now() as due from webhook_deliveries where id = ${failedPaid}`
    expect(row).toEqual({ status: 'pending', attempts: 4, due: true })

    // Every status by default: the succeeded one and the product one too; the queued one stays one job.
    expect((await replay(ctx, admin, hook.id, window)).json()).toEqual({ matched: 3, replayed: 3, created: 0, dry_run: false })
    expect(await deliveryJobs(ctx, failedPaid, 5)).toHaveLength(1)
    expect(await deliveryJobs(ctx, okPaid, 2)).toHaveLength(1)
    expect(await deliveryJobs(ctx, failedProduct, 3)).toHaveLength(1)
    expect(await deliveryJobs(ctx, old, 5)).toEqual([])
  })

  test('missing: makes deliveries for the events it wants but never got, and sends them as first attempts', async ({ ctx, admin }) => {
    // A window of its own, 100 days ago, so no other test's events fall in it.
    const hook = await createWebhook(ctx, admin, { events: ['order.shipped', 'order.paid'] })
    const past = { from: new Date(Date.now() - 101 * 86_400_000).toISOString(), to: new Date(Date.now() - 99 * 86_400_000).toISOString() }
    const delivered = await insertEvent(ctx, 'order.paid', '100 days')
    await insertDelivery(ctx, hook.id, delivered, { status: 'succeeded', attempts: 1, ago: '100 days' })
    const missed = await insertEvent(ctx, 'order.shipped', '100 days')
    // Not missing: a kind it does not want, and an event outside the window.
    await insertEvent(ctx, 'customer.created', '100 days')
    await insertEvent(ctx, 'order.shipped', '102 days')

    const dry = await replay(ctx, admin, hook.id, { ...past, status: ['missing'], dry_run: true })
    expect(dry.json()).toEqual({ matched: 1, replayed: 0, created: 0, dry_run: true })
    expect(await ctx.handle.sql`select from webhook_deliveries where webhook_id = ${hook.id} and event_id = ${missed}`).toHaveLength(0)

    expect((await replay(ctx, admin, hook.id, { ...past, status: ['missing', 'succeeded'] })).json()).toEqual({ matched: 2, replayed: 2, created: 1, dry_run: false })
    const [made] = await ctx.handle.sql<{ id: string; status: string; attempts: number }[]>`
      select id, status, attempts from webhook_deliveries where webhook_id = ${hook.id} and event_id = ${missed}`
    expect(made).toMatchObject({ status: 'pending', attempts: 0 })
    expect((await deliveryJobs(ctx, made!.id, 1))[0]).toEqual({ payload: { delivery_id: made!.id, attempt: 1, retry: 0 }, due: true })
    // Now it has one: no longer missing.
    expect((await replay(ctx, admin, hook.id, { ...past, status: ['missing'], dry_run: true })).json()).toMatchObject({ matched: 0 })
  })

  test('a dry run counts and queues nothing, also for an inactive subscription, which otherwise answers 409', async ({ ctx, admin }) => {
    const { hook, failedPaid, okPaid } = await seeded(ctx, admin)
    expect((await replay(ctx, admin, hook.id, { ...window, dry_run: true })).json()).toEqual({ matched: 3, replayed: 0, created: 0, dry_run: true })
    expect(await deliveryJobs(ctx, failedPaid, 5)).toEqual([])
    await ctx.expectStatus(200, { method: 'PATCH', url: `${WEBHOOKS}/${hook.id}`, token: admin, payload: { is_active: false } })
    expect((await replay(ctx, admin, hook.id, { ...window, dry_run: true })).json()).toMatchObject({ matched: 3 })
    const error = await ctx.expectError(409, 'conflict', { method: 'POST', url: `${WEBHOOKS}/${hook.id}/replay`, token: admin, payload: window })
    expect(error.message).toBe('The webhook is inactive; enable it before replaying')
    expect(await deliveryJobs(ctx, okPaid, 2)).toEqual([])
    const [row] = await ctx.handle.sql`select status from webhook_deliveries where id = ${okPaid}`
    expect(row).toEqual({ status: 'succeeded' })
  })

  test('refuses more than the cap whole, naming the count; a dry run still counts it', async ({ ctx, admin }) => {
    const hook = await createWebhook(ctx, admin)
    await ctx.handle.sql`
      with made as (
        insert into events (id, kind, data, created_at, resource_id, sequence)
        select gen_random_uuid(), 'order.paid', '{}', now() - interval '1 minute', gen_random_uuid(), 1 from generate_series(1, 10001)
        returning id)
      insert into webhook_deliveries (id, webhook_id, event_id, status, attempts)
      select gen_random_uuid(), ${hook.id}, id, 'failed', 4 from made`
    const from = new Date(Date.now() - 3600_000).toISOString()
    const to = new Date(Date.now() + 60_000).toISOString()
    expect((await replay(ctx, admin, hook.id, { from, to, dry_run: true })).json()).toEqual({ matched: 10_001, replayed: 0, created: 0, dry_run: true })
    const error = await ctx.expectError(400, 'validation_error', { method: 'POST', url: `${WEBHOOKS}/${hook.id}/replay`, token: admin, payload: { from, to } })
    expect(error.message).toBe("The replay selects 10001 deliveries, more than 10000 at once; narrow 'from' and 'to' and replay in parts")
    const [queued] = await ctx.handle.sql<{ n: number }[]>`
      select count(*)::int as n from graphile_worker.jobs where task_identifier = 'deliver-webhook' and key like ${'deliver:%'}
        and key in (select 'deliver:' || id || ':5' from webhook_deliveries where webhook_id = ${hook.id})`
    expect(queued!.n).toBe(0)
  })

  test('refuses a bad window, unknown statuses and kinds; 404 for an unknown subscription', async ({ ctx, admin }) => {
    const hook = await createWebhook(ctx, admin)
    for (const [payload, field] of [
      [{ from: window.to, to: window.from }, 'to'],
      [{ from: 'yesterday', to: window.to }, 'from'],
      [{ to: window.to }, 'from'],
      [{ ...window, status: ['lost'] }, 'status'],
      [{ ...window, events: ['order.lost'] }, 'events'],
      [{ ...window, dry: true }, 'dry'],
    ] as const) {
      const error = await ctx.expectError(400, 'validation_error', { method: 'POST', url: `${WEBHOOKS}/${hook.id}/replay`, token: admin, payload })
      expect(error.details?.map((detail) => detail.field).join(), JSON.stringify(payload)).toContain(field)
    }
    await ctx.expectError(404, 'not_found', { method: 'POST', url: `${WEBHOOKS}/${UNKNOWN_ID}/replay`, token: admin, payload: window })
  })
})

describe('GET /api/v1/events', () => {
  test('lists events written by real operations, newest first, as {id, event, timestamp, data, customer_id}', async ({ ctx, admin }) => {
    const product = await ctx.expectStatus<{ id: string }>(201, {
      method: 'POST',
      url: '/api/v1/products',
      token: admin,
      payload: { title: 'Evented Teapot', price: 25 },
    })
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/products/${product.id}`, token: admin, payload: { price: 26 } })

    const list = await ctx.expectStatus<EventList>(200, { method: 'GET', url: `${EVENTS}?event=product.*&per_page=100`, token: admin })
    const mine = list.events.filter((event) => event.data.id === product.id)
    expect(mine.map((event) => event.event)).toEqual(['product.updated', 'product.created'])
    expect(mine[1]).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      event: 'product.created',
      timestamp: expect.stringMatching(ISO),
      resource_id: product.id,
      sequence: 1,
      data: expect.objectContaining({ id: product.id, title: 'Evented Teapot', price: 25 }),
      customer_id: null,
    })
    expect(mine[0]).toMatchObject({ resource_id: product.id, sequence: 2 })
    const one = await ctx.expectStatus<Event>(200, { method: 'GET', url: `${EVENTS}/${mine[1]!.id}`, token: admin })
    expect(one).toEqual(mine[1])

    const created = await ctx.expectStatus<EventList>(200, { method: 'GET', url: `${EVENTS}?event=product.created&per_page=100`, token: admin })
    expect(created.events.every((event) => event.event === 'product.created')).toBe(true)
    expect(created.events.map((event) => event.id)).toContain(mine[1]!.id)
    const orders = await ctx.expectStatus<EventList>(200, { method: 'GET', url: `${EVENTS}?event=order.*&per_page=100`, token: admin })
    expect(orders.events.every((event) => event.event.startsWith('order.'))).toBe(true)
    expect(orders.events.map((event) => event.id)).not.toContain(mine[1]!.id)
  })

  test('a registration shows as customer.created with its customer_id', async ({ ctx, admin }) => {
    const register = await ctx.expectStatus<{ customer: { id: string } }>(201, {
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { email: `events-${Date.now()}@example.com`, password: 'correct horse battery' },
    })
    const list = await ctx.expectStatus<EventList>(200, { method: 'GET', url: `${EVENTS}?event=customer.created&per_page=100`, token: admin })
    expect(list.events).toContainEqual(expect.objectContaining({ event: 'customer.created', customer_id: register.customer.id }))
  })

  test('filters by time: from inclusive, to exclusive; pages with the list envelope', async ({ ctx, admin }) => {
    const old = await insertEvent(ctx, 'order.cancelled', '10 days')
    const recent = await insertEvent(ctx, 'order.cancelled', '1 hour')
    const [row] = await ctx.handle.sql<{ ms: number }[]>`select floor(extract(epoch from created_at) * 1000)::float8 as ms from events where id = ${old}`
    // Truncated to milliseconds: still at or before the stored microseconds.
    const oldAt = new Date(row!.ms).toISOString()
    const query = (params: string) =>
      ctx.expectStatus<EventList>(200, { method: 'GET', url: `${EVENTS}?event=order.cancelled&${params}`, token: admin })

    expect((await query(`from=${oldAt}`)).events.map((event) => event.id)).toEqual([recent, old])
    expect((await query(`to=${oldAt}`)).events).toEqual([])
    const window = await query(`from=${new Date(Date.now() - 2 * 86_400_000).toISOString()}&to=${new Date().toISOString()}`)
    expect(window.events.map((event) => event.id)).toEqual([recent])
    const paged = await query('per_page=1&page=2')
    expect(paged).toMatchObject({ events: [{ id: old }], meta: { page: 2, per_page: 1, total: 2, total_pages: 2 } })
  })

  test('refuses unknown kinds, bad dates and bad pages with 400; an unknown event is 404, a malformed id 400', async ({ ctx, admin }) => {
    for (const params of ['event=order.exploded', 'event=*', 'from=yesterday', 'to=2030-13-01T00:00:00Z', 'from=2030-06-30T23:59:60Z', 'per_page=0']) {
      const error = await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${EVENTS}?${params}`, token: admin })
      expect(error.details?.[0]?.field, params).toBe(params.split('=')[0])
    }
    const missing = await ctx.expectError(404, 'not_found', { method: 'GET', url: `${EVENTS}/${UNKNOWN_ID}`, token: admin })
    expect(missing.message).toBe('Event not found')
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${EVENTS}/nope`, token: admin })
  })
})

describe('OpenAPI', () => {
  test('documents the webhook and event routes under their tags, without a secret in any read', async ({ ctx }) => {
    const document = (await ctx.request({ method: 'GET', url: '/api/v1/openapi.json' })).json()
    const operations: [string, string, string][] = [
      ['get', '/api/v1/webhooks', 'webhooks'],
      ['post', '/api/v1/webhooks', 'webhooks'],
      ['get', '/api/v1/webhooks/{id}', 'webhooks'],
      ['patch', '/api/v1/webhooks/{id}', 'webhooks'],
      ['delete', '/api/v1/webhooks/{id}', 'webhooks'],
      ['get', '/api/v1/webhooks/{id}/deliveries', 'webhooks'],
      ['get', '/api/v1/webhooks/{id}/deliveries/{delivery_id}', 'webhooks'],
      ['post', '/api/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver', 'webhooks'],
      ['get', '/api/v1/events', 'events'],
      ['get', '/api/v1/events/{id}', 'events'],
    ]
    for (const [method, path, tag] of operations) {
      const operation = document.paths[path]?.[method]
      expect(operation, `${method} ${path}`).toBeDefined()
      expect(operation.tags).toEqual([tag])
      expect(operation.summary).toEqual(expect.any(String))
      expect(operation.security).toEqual([{ bearerAuth: [] }])
    }
    const named = (schema: { $ref: string }) => document.components.schemas[schema.$ref.replace('#/components/schemas/', '')]
    const read = named(document.paths['/api/v1/webhooks/{id}'].get.responses['200'].content['application/json'].schema)
    expect(read.properties).not.toHaveProperty('secret')
    const created = named(document.paths['/api/v1/webhooks'].post.responses['201'].content['application/json'].schema)
    expect(created.required).toContain('secret')
  })
})
