/**
 * The notifications' admin API: the log of the emails made from events (filters, pages and
 * cursors), a resend, and which emails are on. The notifications are made here as the worker's
 * fan-out makes them (createNotifications); sending them is the worker's (its tests, and
 * account-emails.test.ts end to end).
 */
import { describe, expect } from 'vitest'
import type { Notification, NotificationList, NotificationSettings } from '@commerce/domain'
import { createNotifications, newId, sqlOf, writeEvents, type NewEvent } from '@commerce/db'
import { test as apiTest, type TestContext } from './helpers.js'

type Made = { id: string; eventId: string; recipient: string; template: string }[]

/** `made`: six notifications of the file's database, made before the first test that asks for them. */
const test = apiTest.extend<{ made: Made }>({
  made: [
    async ({ ctx }, use) => {
      const made: Made = []
      // Six emails of three templates to two recipients, made in this order (the list shows them newest first).
      const orderEvent = (kind: NewEvent['kind'], email: string): NewEvent => ({ kind, resourceId: newId(), data: { order_number: '1', email, currency: 'EUR' } })
      const plan: [NewEvent['kind'], string][] = [
        ['order.paid', 'ada@example.com'],
        ['order.shipped', 'ada@example.com'],
        ['order.paid', 'Bob@Example.com'],
        ['order.cancelled', 'bob@example.com'],
        ['order.paid', 'ada@example.com'],
        ['order.shipped', 'bob@example.com'],
      ]
      for (const [kind, email] of plan) {
        const eventIds = await ctx.handle.db.transaction((tx) => writeEvents(tx, [orderEvent(kind, email)]))
        const ids = [newId()]
        await createNotifications(sqlOf(ctx.handle.db), eventIds, ids)
        made.push({ id: ids[0]!, eventId: eventIds[0]!, recipient: email, template: kind === 'order.paid' ? 'order_confirmation' : kind === 'order.shipped' ? 'order_shipped' : 'order_cancelled' })
      }
      // The first was sent at its second attempt; the fourth failed for good.
      await ctx.handle.sql`update notifications set status = 'sent', attempts = 2, sent_at = now(), subject = 'Order 1 confirmed', message_id = ${`<${made[0]!.id}@example.com>`} where id = ${made[0]!.id}`
      await ctx.handle.sql`insert into notification_attempts (id, notification_id, attempt, succeeded, response_code, duration_ms, error, response) values
        (${newId()}, ${made[0]!.id}, 1, false, 451, 12, 'EMESSAGE: try later', '451 4.3.0 try later'),
        (${newId()}, ${made[0]!.id}, 2, true, 250, 9, null, '250 2.0.0 queued')`
      await ctx.handle.sql`update notifications set status = 'failed', attempts = 4 where id = ${made[3]!.id}`
      await use(made)
    },
    { scope: 'file' },
  ],
})

const list = (ctx: TestContext, admin: string, query = '') => ctx.expectStatus<NotificationList>(200, { method: 'GET', url: `/api/v1/notifications${query}`, token: admin })
const idsOf = (page: NotificationList) => page.notifications.map((notification) => notification.id)
const newestFirst = (made: Made) => [...made].reverse()

describe('GET /api/v1/notifications', () => {
  test('lists every notification newest first, with its event, template, status and attempt log', async ({ ctx, admin, made }) => {
    const page = await list(ctx, admin)
    expect(idsOf(page)).toEqual(newestFirst(made).map((row) => row.id))
    expect(page.meta).toEqual({ page: 1, per_page: 20, total: 6, total_pages: 1 })
    const first = page.notifications.at(-1)!
    expect(first).toEqual({
      id: made[0]!.id,
      event_id: made[0]!.eventId,
      event: 'order.paid',
      template: 'order_confirmation',
      recipient: 'ada@example.com',
      status: 'sent',
      attempts: 2,
      next_attempt_at: null,
      subject: 'Order 1 confirmed',
      message_id: `<${made[0]!.id}@example.com>`,
      sent_at: expect.any(String),
      created_at: expect.any(String),
      updated_at: expect.any(String),
      attempt_log: [
        { attempt: 1, succeeded: false, response_code: 451, duration_ms: 12, error: 'EMESSAGE: try later', response: '451 4.3.0 try later', created_at: expect.any(String) },
        { attempt: 2, succeeded: true, response_code: 250, duration_ms: 9, error: null, response: '250 2.0.0 queued', created_at: expect.any(String) },
      ],
    })
    expect(page.notifications[0]).toMatchObject({ status: 'pending', attempts: 0, subject: null, message_id: null, sent_at: null, attempt_log: [] })
  })

  test('filters by event id, event kind or family, template, recipient (exact, any case) and status', async ({ ctx, admin, made }) => {
    const expectIds = async (query: string, rows: typeof made) => expect(idsOf(await list(ctx, admin, query)), query).toEqual([...rows].reverse().map((row) => row.id))
    await expectIds(`?event_id=${made[2]!.eventId}`, [made[2]!])
    await expectIds('?event=order.shipped', [made[1]!, made[5]!])
    await expectIds('?event=order.*', made)
    await expectIds('?template=order_confirmation', [made[0]!, made[2]!, made[4]!])
    await expectIds('?recipient=BOB@example.com', [made[2]!, made[3]!, made[5]!])
    await expectIds('?status=failed', [made[3]!])
    await expectIds('?status=pending&recipient=ada@example.com', [made[1]!, made[4]!])
    expect((await list(ctx, admin, '?recipient=ada@example.com&status=pending')).meta).toMatchObject({ total: 2 })
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: '/api/v1/notifications?status=lost', token: admin })
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: '/api/v1/notifications?template=newsletter', token: admin })
  })

  test('walks the whole list by cursor, without repeats, and refuses page with after', async ({ ctx, admin, made }) => {
    const seen: string[] = []
    let cursor = ''
    for (;;) {
      const page = await list(ctx, admin, `?per_page=4&after=${cursor}`)
      seen.push(...idsOf(page))
      const meta = page.meta as { per_page: number; next_cursor: string | null }
      if (meta.next_cursor === null) break
      expect(meta).toEqual({ per_page: 4, next_cursor: expect.any(String) })
      cursor = meta.next_cursor
    }
    expect(seen).toEqual(newestFirst(made).map((row) => row.id))
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: '/api/v1/notifications?page=2&after=', token: admin })
    const foreign = Buffer.from(JSON.stringify(['orders', made[0]!.id])).toString('base64url')
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `/api/v1/notifications?after=${foreign}`, token: admin })
  })

  test('is for admins: a customer gets 403, an anonymous caller 401', async ({ ctx, made }) => {
    const customer = await ctx.signIn('customer')
    await ctx.expectError(403, 'forbidden', { method: 'GET', url: '/api/v1/notifications', token: customer.token })
    await ctx.expectError(401, 'unauthorized', { method: 'GET', url: '/api/v1/notifications' })
    const key = await ctx.createApiKey(['notifications:read'])
    await ctx.expectStatus(200, { method: 'GET', url: '/api/v1/notifications', token: key.key })
    await ctx.expectError(403, 'forbidden', { method: 'POST', url: `/api/v1/notifications/${made[0]!.id}/resend`, token: key.key })
  })
})

describe('GET /api/v1/notifications/:id', () => {
  test('answers the notification, 404 for an unknown id and 400 for a malformed one', async ({ ctx, admin, made }) => {
    expect(await ctx.expectStatus<Notification>(200, { method: 'GET', url: `/api/v1/notifications/${made[3]!.id}`, token: admin })).toMatchObject({ id: made[3]!.id, status: 'failed' })
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `/api/v1/notifications/${newId()}`, token: admin })
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: '/api/v1/notifications/not-an-id', token: admin })
  })
})

describe('POST /api/v1/notifications/:id/resend', () => {
  const jobsOf = (ctx: TestContext, id: string) => ctx.handle.sql<{ key: string; payload: unknown; run_at: string }[]>`
    select key, (select payload from graphile_worker._private_jobs p where p.id = j.id), run_at from graphile_worker.jobs j where key like ${`notify:${id}:%`} order by key`

  test('makes a failed notification pending and queues its next attempt now, one job however often it is asked', async ({ ctx, admin, made }) => {
    const failed = made[3]!
    const before = Date.now()
    const resent = await ctx.expectStatus<Notification>(202, { method: 'POST', url: `/api/v1/notifications/${failed.id}/resend`, token: admin })
    expect(resent).toMatchObject({ id: failed.id, status: 'pending', attempts: 4 })
    expect(new Date(resent.next_attempt_at!).getTime()).toBeGreaterThanOrEqual(before - 1000)
    await ctx.expectStatus(202, { method: 'POST', url: `/api/v1/notifications/${failed.id}/resend`, token: admin })
    const jobs = (await jobsOf(ctx, failed.id)).filter((job) => job.key.endsWith(':5'))
    expect(jobs).toEqual([{ key: `notify:${failed.id}:5`, payload: { notification_id: failed.id, attempt: 5, retry: 0 }, run_at: expect.any(String) }])
    expect(new Date(jobs[0]!.run_at).getTime()).toBeLessThanOrEqual(Date.now() + 1000)
  })

  test('answers 404 for an unknown notification and queues nothing', async ({ ctx, admin }) => {
    const unknown = newId()
    await ctx.expectError(404, 'not_found', { method: 'POST', url: `/api/v1/notifications/${unknown}/resend`, token: admin })
    expect(await jobsOf(ctx, unknown)).toEqual([])
  })
})

describe('the notification settings', () => {
  const settingsUrl = '/api/v1/notifications/settings'

  test('are all on at first; a PATCH turns the templates it names on or off and leaves the others', async ({ ctx, admin }) => {
    const initial = await ctx.expectStatus<NotificationSettings>(200, { method: 'GET', url: settingsUrl, token: admin })
    expect(initial.templates.map((row) => [row.template, row.event, row.enabled, row.updated_at])).toEqual([
      ['order_confirmation', 'order.paid', true, null],
      ['order_shipped', 'order.shipped', true, null],
      ['order_refunded', 'order.refunded', true, null],
      ['order_cancelled', 'order.cancelled', true, null],
      ['return_requested', 'return.requested', true, null],
      ['return_approved', 'return.approved', true, null],
      ['return_declined', 'return.declined', true, null],
      ['return_received', 'return.received', true, null],
      ['welcome', 'account.activated', true, null],
      ['email_verification', 'account.verification_requested', true, null],
      ['password_reset', 'account.password_reset_requested', true, null],
      ['email_change', 'account.email_change_requested', true, null],
      ['draft_order_invoice', 'draft_order.invoice_sent', true, null],
    ])
    const off = await ctx.expectStatus<NotificationSettings>(200, { method: 'PATCH', url: settingsUrl, payload: { order_shipped: false, welcome: false }, token: admin })
    const enabled = (settings: NotificationSettings) => Object.fromEntries(settings.templates.map((row) => [row.template, row.enabled]))
    expect(enabled(off)).toMatchObject({ order_confirmation: true, order_shipped: false, welcome: false, password_reset: true })
    expect(off.templates.find((row) => row.template === 'order_shipped')!.updated_at).toEqual(expect.any(String))
    const back = await ctx.expectStatus<NotificationSettings>(200, { method: 'PATCH', url: settingsUrl, payload: { welcome: true }, token: admin })
    expect(enabled(back)).toMatchObject({ order_shipped: false, welcome: true })
    expect(await ctx.expectStatus(200, { method: 'GET', url: settingsUrl, token: admin })).toEqual(back)
    // What the worker's fan-out reads: a template turned off makes no notification.
    const [eventId] = await ctx.handle.db.transaction((tx) => writeEvents(tx, [{ kind: 'order.shipped', resourceId: newId(), data: { email: 'off@example.com' } }]))
    expect(await createNotifications(sqlOf(ctx.handle.db), [eventId!], [newId()])).toBe(0)
  })

  test('refuses an empty change, an unknown template and a value that is not a boolean, with 400', async ({ ctx, admin }) => {
    for (const payload of [{}, { newsletter: false }, { welcome: 'no' }]) {
      await ctx.expectError(400, 'validation_error', { method: 'PATCH', url: settingsUrl, payload, token: admin })
    }
    const customer = await ctx.signIn('customer')
    await ctx.expectError(403, 'forbidden', { method: 'PATCH', url: settingsUrl, payload: { welcome: false }, token: customer.token })
  })
})
