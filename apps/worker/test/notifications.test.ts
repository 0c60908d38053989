/**
 * Events to emails, end to end: events written the way the API writes them (writeEvents in a
 * transaction), a worker running in this process, a real SMTP server (mail-server.ts). What the
 * email says, the retries of a refused one, one email per attempt however often its job runs,
 * the account links' tokens, the development files.
 */
import { createHash, randomUUID } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { simpleParser } from 'mailparser'
import { afterAll, afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { formatMoney, type EventKind, type Order, type Return } from '@commerce/domain'
import { addNotificationJob, createDb, createUser, writeEvents, type DatabaseHandle, type NewEvent } from '@commerce/db'
import { createTestDatabase, orderEvent, sampleOrder, type TestDatabase } from '@commerce/db/testing'
import type { NotificationConfig } from '../src/config.js'
import { createLogger } from '../src/logger.js'
import { startWorker, type StartedWorker } from '../src/worker.js'
import { startMailServer, type MailServer } from './mail-server.js'

const RETRIES = [300, 900]
const SHOP = { shopName: 'Test Shop', shopUrl: 'https://shop.example.com' }

let database: TestDatabase
let handle: DatabaseHandle
let mail: MailServer
let worker: StartedWorker | undefined

interface LogLine {
  level: string
  msg: string
  [field: string]: unknown
}

async function startTestWorker(notifications: Partial<NotificationConfig> = {}, logs?: LogLine[]) {
  worker = await startWorker({
    databaseUrl: database.url,
    concurrency: 4,
    databasePoolMax: 6,
    pollIntervalMs: 50,
    webhooks: { timeoutMs: 1000, retrySchedule: [1000], allowPrivateTargets: true },
    notifications: {
      smtpUrl: mail.url,
      from: 'Test Shop <shop@example.com>',
      mailDir: join(tmpdir(), 'unused'),
      templatesDir: undefined,
      retrySchedule: RETRIES,
      smtpTimeoutMs: 2000,
      ...SHOP,
      ...notifications,
    },
    logger: logs ? createLogger('debug', (line) => void logs.push(JSON.parse(line) as LogLine)) : createLogger('silent'),
  })
  return worker
}

beforeAll(async () => {
  database = await createTestDatabase(inject('adminUrl'), inject('template'))
  handle = createDb({ url: database.url, poolMax: 4 })
  mail = await startMailServer()
})

afterEach(async () => {
  await worker?.stop()
  worker = undefined
})

afterAll(async () => {
  await mail?.close()
  await handle?.close()
  await database?.drop()
})

async function emit(...list: NewEvent[]): Promise<string[]> {
  return handle.db.transaction((tx) => writeEvents(tx, list))
}

const paid = (data: Order): NewEvent => ({ ...orderEvent('order.paid', data), requestId: 'req-paid' })

async function notificationOf(eventId: string) {
  const [row] = await handle.sql<{ id: string; template: string; recipient: string; status: string; attempts: number; message_id: string | null; subject: string | null; next_attempt_at: string | null }[]>`
    select id, template, recipient, status, attempts, message_id, subject, next_attempt_at from notifications where event_id = ${eventId}`
  return row
}

async function attemptsOf(notificationId: string) {
  return handle.sql<{ attempt: number; succeeded: boolean; response_code: number | null; error: string | null; response: string | null; created_at: string }[]>`
    select attempt, succeeded, response_code, error, response, created_at from notification_attempts where notification_id = ${notificationId} order by attempt`
}

async function jobsLeft() {
  const [row] = await handle.sql<{ jobs: number }[]>`select count(*)::int as jobs from graphile_worker._private_jobs`
  return row!.jobs
}

const visibleText = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&').replace(/\s+/g, ' ')

describe('the order confirmation', () => {
  it('is one email to the order’s address, from MAIL_FROM, with every line and total of the order formatted by the currency’s exponent, in HTML and text', async () => {
    await startTestWorker()
    const data = sampleOrder('ada@example.com')
    const [eventId] = await emit(paid(data))
    await vi.waitFor(() => expect(mail.received('ada@example.com')).toHaveLength(1), { timeout: 10_000 })
    const notification = await notificationOf(eventId!)
    expect(notification).toMatchObject({ template: 'order_confirmation', recipient: 'ada@example.com' })
    await vi.waitFor(async () => expect((await notificationOf(eventId!))!.status).toBe('sent'), { timeout: 5_000 })

    const { mail: email } = mail.received('ada@example.com')[0]!
    expect(email.from?.value).toEqual([{ name: 'Test Shop', address: 'shop@example.com' }])
    expect(email.subject).toBe(`Order ${data.order_number} confirmed`)
    expect(email.messageId).toBe(`<${notification!.id}@example.com>`)
    const text = email.text!
    const html = visibleText(String(email.html))
    const money = (amount: number) => formatMoney(amount, 'EUR')
    for (const line of data.items) {
      expect(text).toContain(`${line.quantity} × ${line.title}${line.variant_title ? ` – ${line.variant_title}` : ''} at ${money(line.unit_price)}: ${money(line.line_total)}`)
      expect(html).toContain(line.title)
      expect(html).toContain(money(line.line_total))
    }
    // The totals as the order has them: nothing recomputed, every amount with two decimals.
    expect(text).toContain('Subtotal: €113.45')
    expect(text).toContain('Discount AUTUMN10: -€11.35')
    expect(text).toContain('Shipping (Courier): €6.50')
    expect(text).toContain('Tax: €20.42')
    expect(text).toContain('Total: €129.02')
    for (const total of ['€113.45', '-€11.35', '€6.50', '€20.42', '€129.02']) expect(html).toContain(total)
    // HTML escapes the data; the text part carries it as it is.
    expect(String(email.html)).toContain('Wool socks &lt;3 pack&gt;')
    expect(text).toContain('Wool socks <3 pack>')

    const notificationNow = await notificationOf(eventId!)
    expect(notificationNow).toMatchObject({ status: 'sent', attempts: 1, subject: email.subject, message_id: email.messageId, next_attempt_at: null })
    const [attempt] = await attemptsOf(notification!.id)
    expect(attempt).toMatchObject({ attempt: 1, succeeded: true, response_code: 250, error: null })
    expect(attempt!.response).toMatch(/^250 /)
  })

  it('formats a three-decimal currency with its three decimals', async () => {
    await startTestWorker()
    const data = sampleOrder('kwd@example.com', 'KWD')
    await emit(paid(data))
    await vi.waitFor(() => expect(mail.received('kwd@example.com')).toHaveLength(1), { timeout: 10_000 })
    expect(mail.received('kwd@example.com')[0]!.mail.text).toContain('Total: KWD\u00a0129.020')
  })
})

describe('retries and exactly one email', () => {
  it('retries a 550 on NOTIFICATION_RETRY_SCHEDULE, logging each refused attempt, and sends on the third', async () => {
    const logs: LogLine[] = []
    await startTestWorker({}, logs)
    mail.refuse('flaky@example.com', (n) => (n < 2 ? 550 : undefined))
    const [eventId] = await emit(paid(sampleOrder('flaky@example.com')))
    await vi.waitFor(async () => expect((await notificationOf(eventId!))?.status).toBe('sent'), { timeout: 15_000 })
    expect(mail.received('flaky@example.com')).toHaveLength(1)

    const notification = (await notificationOf(eventId!))!
    expect(notification).toMatchObject({ attempts: 3, next_attempt_at: null })
    const attempts = await attemptsOf(notification.id)
    expect(attempts.map((attempt) => [attempt.attempt, attempt.succeeded, attempt.response_code])).toEqual([
      [1, false, 550],
      [2, false, 550],
      [3, true, 250],
    ])
    expect(attempts[0]!.error).toMatch(/^EENVELOPE: .*550/)
    expect(attempts[0]!.response).toContain('mailbox flaky@example.com unavailable')
    const at = attempts.map((attempt) => new Date(attempt.created_at).getTime())
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(RETRIES[0]! - 50)
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(RETRIES[1]! - 50)

    const failed = logs.filter((line) => line.msg === 'notification attempt failed')
    expect(failed).toHaveLength(2)
    expect(failed[0]).toMatchObject({
      level: 'warn',
      notification_id: notification.id,
      event_id: eventId,
      event: 'order.paid',
      request_id: 'req-paid',
      template: 'order_confirmation',
      attempt: 1,
      outcome: 'retrying',
      response_code: 550,
      error: "EENVELOPE: Can't send mail - all recipients were rejected: 550 mailbox <recipient> unavailable",
      next_attempt_at: expect.any(String),
    })
    expect(logs.find((line) => line.msg === 'notification sent')).toMatchObject({ level: 'info', attempt: 3, outcome: 'sent', response_code: 250 })
    // No personal data in the logs: neither the address nor the subject.
    expect(JSON.stringify(logs)).not.toContain('flaky@example.com')
    expect(JSON.stringify(logs)).not.toContain(notification.subject)
  })

  it('marks the notification failed when the retries run out, and sends nothing more', async () => {
    await startTestWorker()
    mail.refuse('gone@example.com', () => 550)
    const [eventId] = await emit(paid(sampleOrder('gone@example.com')))
    await vi.waitFor(async () => expect((await notificationOf(eventId!))?.status).toBe('failed'), { timeout: 15_000 })
    const notification = (await notificationOf(eventId!))!
    expect(notification.attempts).toBe(RETRIES.length + 1)
    expect((await attemptsOf(notification.id)).every((attempt) => !attempt.succeeded && attempt.response_code === 550)).toBe(true)
    await vi.waitFor(async () => expect(await jobsLeft()).toBe(0))
    expect(mail.received('gone@example.com')).toHaveLength(0)
  })

  it('sends one email when its fan-out and its attempt run again after they were recorded', async () => {
    await startTestWorker()
    const [eventId] = await emit(paid(sampleOrder('twice@example.com')))
    await vi.waitFor(async () => expect((await notificationOf(eventId!))?.status).toBe('sent'), { timeout: 10_000 })
    const notification = (await notificationOf(eventId!))!
    // The jobs a worker killed before completing them would run again: the event's fan-out and the first attempt.
    await handle.sql`select graphile_worker.add_job('fanout-event', json_build_object('event_ids', array[${eventId!}::uuid]))`
    await handle.db.transaction((tx) => addNotificationJob(tx, { notification_id: notification.id, attempt: 1, retry: 0 }))
    await vi.waitFor(async () => expect(await jobsLeft()).toBe(0), { timeout: 10_000 })
    expect(mail.received('twice@example.com')).toHaveLength(1)
    expect(await handle.sql`select id from notifications where event_id = ${eventId!}`).toHaveLength(1)
    expect(await attemptsOf(notification.id)).toHaveLength(1)
  })

  it('makes no email of a template turned off, nor of events without one', async () => {
    await startTestWorker()
    await handle.sql`insert into notification_settings (template, enabled) values ('order_cancelled', false)`
    try {
      const cancelled = sampleOrder('off@example.com')
      const [cancelledId, createdId] = await emit(orderEvent('order.cancelled', cancelled), orderEvent('order.created', cancelled))
      const [paidId] = await emit(paid(sampleOrder('on@example.com')))
      await vi.waitFor(() => expect(mail.received('on@example.com')).toHaveLength(1), { timeout: 10_000 })
      expect(await handle.sql`select id from notifications where event_id in (${cancelledId!}, ${createdId!})`).toEqual([])
      expect(await notificationOf(paidId!)).toBeDefined()
      expect(mail.received('off@example.com')).toHaveLength(0)
    } finally {
      await handle.sql`delete from notification_settings`
    }
  })
})

/**
 * A return of `order` as the API answers it and writes it into its events: two of the shirts and
 * the socks, with their shares of what was paid (an estimate until received).
 */
function sampleReturn(order: Order, changes: Partial<Return> = {}): Return {
  const [shirt, socks] = order.items
  const line = (item: Order['items'][number], quantity: number, subtotal: number, discount: number, tax: number, total: number) => ({
    line_id: item.id,
    title: item.title,
    variant_title: item.variant_title,
    sku: item.sku,
    quantity,
    restocked_quantity: 0,
    damaged_quantity: 0,
    subtotal,
    discount,
    tax,
    total,
  })
  return {
    id: randomUUID(),
    order_id: order.id,
    order_number: order.order_number,
    email: order.email,
    status: 'requested',
    currency: order.currency,
    reason: 'Too small',
    decline_reason: null,
    items: [{ ...line(shirt!, 2, 79.8, 7.98, 14.36, 86.18), sku: 'LS-BLUE-M' }, line(socks!, 1, 12.5, 1.25, 2.25, 13.5)],
    refund: { merchandise: 99.68, shipping: 0, restocking_fee: 0, total: 99.68 },
    amount_refunded: 0,
    amount_credited: 0,
    refund_ids: [],
    exchange: null,
    created_at: new Date().toISOString(),
    approved_at: null,
    declined_at: null,
    received_at: null,
    canceled_at: null,
    updated_at: new Date().toISOString(),
    ...changes,
  }
}

/** A return.* event as the API writes it: the order is its resource, the return its data. */
const returnEvent = (kind: EventKind, data: Return): NewEvent => ({ kind, resourceId: data.order_id, data })

describe('the return emails', () => {
  it('a return’s request, approval and receipt, and another’s decline, each send one email to the order’s address naming the items, their amounts and the decline reason; a cancel sends none', async () => {
    await startTestWorker()
    const order = sampleOrder('returner@example.com')
    const asked = sampleReturn(order)
    const now = new Date().toISOString()
    const approved = { ...asked, status: 'approved' as const, approved_at: now }
    const received = {
      ...approved,
      status: 'received' as const,
      items: approved.items.map((item) => ({ ...item, restocked_quantity: item.quantity })),
      refund: { merchandise: 99.68, shipping: 6.5, restocking_fee: 0, total: 106.18 },
      amount_refunded: 106.18,
      refund_ids: [randomUUID()],
      received_at: now,
    }
    const declined = sampleReturn(order, { status: 'declined', reason: null, decline_reason: 'Worn and washed', declined_at: now, items: [asked.items[1]!] })
    const canceled = sampleReturn(order, { status: 'canceled', canceled_at: now })
    const eventIds = await emit(
      returnEvent('return.requested', asked),
      returnEvent('return.approved', approved),
      returnEvent('return.received', received),
      returnEvent('return.declined', declined),
      returnEvent('return.canceled', canceled),
    )
    await vi.waitFor(() => expect(mail.received('returner@example.com')).toHaveLength(4), { timeout: 10_000 })
    await vi.waitFor(async () => expect(await jobsLeft()).toBe(0), { timeout: 10_000 })
    expect(mail.received('returner@example.com')).toHaveLength(4)
    const made = await Promise.all(eventIds.map((id) => notificationOf(id)))
    expect(made.map((row) => row && [row.template, row.recipient, row.status])).toEqual([
      ['return_requested', 'returner@example.com', 'sent'],
      ['return_approved', 'returner@example.com', 'sent'],
      ['return_received', 'returner@example.com', 'sent'],
      ['return_declined', 'returner@example.com', 'sent'],
      undefined,
    ])

    const bySubject = new Map(mail.received('returner@example.com').map(({ mail: email }) => [email.subject, { text: email.text!, html: String(email.html) }]))
    expect([...bySubject.keys()].sort()).toEqual(
      [
        `Return request received for order ${order.order_number}`,
        `Your return for order ${order.order_number} is approved`,
        `We received your return for order ${order.order_number}`,
        `Your return for order ${order.order_number} was declined`,
      ].sort(),
    )
    const shirt = '2 × Linen shirt – Blue / M (SKU LS-BLUE-M): €86.18'
    const socks = '1 × Wool socks <3 pack>: €13.50'

    const request = bySubject.get(`Return request received for order ${order.order_number}`)!
    expect(request.text).toContain(`return these items of order ${order.order_number} (your reason: Too small).`)
    expect(request.text).toContain(`${shirt}\n${socks}\n\nEstimated refund: €99.68\n`)
    expect(visibleText(request.html)).toContain('Linen shirt – Blue / M SKU LS-BLUE-M 2 €86.18')
    expect(visibleText(request.html)).toContain('Estimated refund €99.68')
    expect(request.html).toContain('Wool socks &lt;3 pack&gt;')

    const approval = bySubject.get(`Your return for order ${order.order_number} is approved`)!
    expect(approval.text).toContain(`is approved. Please pack them and send them back to us, with your order number ${order.order_number} in the parcel`)
    expect(approval.text).toContain(`${shirt}\n${socks}\n\nEstimated refund: €99.68\n`)

    const receipt = bySubject.get(`We received your return for order ${order.order_number}`)!
    expect(receipt.text).toContain(`${shirt}\n${socks}\n\nItems: €99.68\nShipping: €6.50\nRefund: €106.18\n`)
    expect(receipt.text).not.toContain('Restocking fee')
    expect(receipt.text).toContain('We have refunded €106.18 to the way you paid. A separate email confirms the refund')
    expect(visibleText(receipt.html)).toContain('Shipping €6.50 Refund €106.18')

    const decline = bySubject.get(`Your return for order ${order.order_number} was declined`)!
    expect(decline.text).toContain(`cannot accept your return of these items of order ${order.order_number}.\n\nWhy: Worn and washed\n\n1 × Wool socks <3 pack>\n`)
    // Declined: the items, but no refund figure.
    expect(decline.text).not.toContain('€')
    expect(visibleText(decline.html)).toContain('Why: Worn and washed')
    expect(decline.html).not.toContain('Linen shirt')
  })

  it('a return template turned off makes no email of its events; the others still send', async () => {
    await startTestWorker()
    await handle.sql`insert into notification_settings (template, enabled) values ('return_approved', false)`
    try {
      const order = sampleOrder('quiet@example.com')
      const asked = sampleReturn(order)
      const [approvedId, declinedId] = await emit(
        returnEvent('return.approved', { ...asked, status: 'approved', approved_at: new Date().toISOString() }),
        returnEvent('return.declined', { ...sampleReturn(order), status: 'declined', decline_reason: null, declined_at: new Date().toISOString() }),
      )
      await vi.waitFor(() => expect(mail.received('quiet@example.com')).toHaveLength(1), { timeout: 10_000 })
      await vi.waitFor(async () => expect(await jobsLeft()).toBe(0), { timeout: 10_000 })
      expect(await notificationOf(approvedId!)).toBeUndefined()
      expect(await notificationOf(declinedId!)).toMatchObject({ template: 'return_declined', recipient: 'quiet@example.com' })
      const email = mail.received('quiet@example.com')[0]!.mail
      expect(email.subject).toBe(`Your return for order ${order.order_number} was declined`)
      // No reason given: no "Why" line.
      expect(email.text).not.toContain('Why:')
    } finally {
      await handle.sql`delete from notification_settings`
    }
  })
})

describe('account links', () => {
  async function account(email: string) {
    const { user, customer } = await createUser(handle.db, { email, passwordHash: 'not-a-real-hash', role: 'customer', firstName: 'Grace' })
    return { user_id: user.id, customer_id: customer!.id, email, first_name: 'Grace' }
  }

  it('emails a password reset link whose token is stored only as its SHA-256, with the event’s expiry; a resend replaces the token', async () => {
    await startTestWorker()
    const data = { ...(await account('grace@example.com')), expires_at: new Date(Date.now() + 30 * 60_000).toISOString() }
    const [eventId] = await emit({ kind: 'account.password_reset_requested', resourceId: data.user_id, data })
    await vi.waitFor(() => expect(mail.received('grace@example.com')).toHaveLength(1), { timeout: 10_000 })
    const tokenIn = (text: string) => /\/account\/reset-password\?token=([A-Za-z0-9_-]{43})\n/.exec(text)?.[1]
    const first = mail.received('grace@example.com')[0]!.mail
    expect(first.subject).toBe('Reset your password for Test Shop')
    expect(first.text).toMatch(/^Hello Grace,/)
    const token = tokenIn(first.text!)!
    expect(String(first.html)).toContain(`https://shop.example.com/account/reset-password?token=${token}`)
    const sha = (text: string) => createHash('sha256').update(text).digest('hex')
    const notification = (await notificationOf(eventId!))!
    const tokens = () => handle.sql<{ purpose: string; email: string; token_hash: string; expires_at: string; used_at: string | null }[]>`
      select purpose, email, token_hash, expires_at, used_at from account_tokens where notification_id = ${notification.id}`
    expect(await tokens()).toEqual([{ purpose: 'password_reset', email: 'grace@example.com', token_hash: sha(token), expires_at: expect.any(String), used_at: null }])
    expect(new Date((await tokens())[0]!.expires_at).toISOString()).toBe(data.expires_at)
    // Nowhere in the database is the token itself.
    const [{ found }] = (await handle.sql`select count(*)::int as found from notifications n, events e, notification_attempts a
      where position(${token} in n::text || e::text || a::text) > 0`) as unknown as [{ found: number }]
    expect(found).toBe(0)

    await handle.db.transaction((tx) => addNotificationJob(tx, { notification_id: notification.id, attempt: 2, retry: 0 }))
    await vi.waitFor(() => expect(mail.received('grace@example.com')).toHaveLength(2), { timeout: 10_000 })
    const second = tokenIn(mail.received('grace@example.com')[1]!.mail.text!)!
    expect(second).not.toBe(token)
    await vi.waitFor(async () => expect((await tokens())[0]!.token_hash).toBe(sha(second)))
  })

  it('does not send a link that expired before its attempt, or one already used', async () => {
    await startTestWorker()
    const expired = { ...(await account('late@example.com')), expires_at: new Date(Date.now() - 1000).toISOString() }
    const [expiredId] = await emit({ kind: 'account.verification_requested', resourceId: expired.user_id, data: expired })
    await vi.waitFor(async () => expect((await notificationOf(expiredId!))?.status).toBe('failed'), { timeout: 10_000 })
    const [attempt] = await attemptsOf((await notificationOf(expiredId!))!.id)
    expect(attempt).toMatchObject({ succeeded: false, response_code: null, error: 'the link expired before it could be sent' })

    const used = { ...(await account('used@example.com')), expires_at: new Date(Date.now() + 60_000).toISOString() }
    const [usedId] = await emit({ kind: 'account.email_change_requested', resourceId: used.user_id, data: { ...used, previous_email: 'old@example.com' } })
    await vi.waitFor(() => expect(mail.received('used@example.com')).toHaveLength(1), { timeout: 10_000 })
    const notification = (await notificationOf(usedId!))!
    await handle.sql`update account_tokens set used_at = now() where notification_id = ${notification.id}`
    await handle.db.transaction((tx) => addNotificationJob(tx, { notification_id: notification.id, attempt: 2, retry: 0 }))
    await vi.waitFor(async () => expect((await notificationOf(usedId!))?.status).toBe('failed'), { timeout: 10_000 })
    expect((await attemptsOf(notification.id))[1]).toMatchObject({ succeeded: false, error: 'the link was used already, or its account no longer exists' })
    expect(mail.received('used@example.com')).toHaveLength(1)
    expect(mail.received('late@example.com')).toHaveLength(0)
  })
})

describe('without SMTP_URL', () => {
  it('writes each email to an .eml file in the mail folder and logs its path', async () => {
    const mailDir = mkdtempSync(join(tmpdir(), 'commerce-mail-'))
    const logs: LogLine[] = []
    try {
      await startTestWorker({ smtpUrl: undefined, mailDir }, logs)
      expect(worker!.mail).toBe(mailDir)
      const data = sampleOrder('files@example.com')
      const [eventId] = await emit(paid(data))
      await vi.waitFor(async () => expect((await notificationOf(eventId!))?.status).toBe('sent'), { timeout: 10_000 })
      const files = readdirSync(mailDir)
      expect(files).toHaveLength(1)
      expect(files[0]).toMatch(/^\d{4}-\d{2}-\d{2}T.*\.eml$/)
      const path = join(mailDir, files[0]!)
      const written = await simpleParser(readFileSync(path))
      expect(written.to).toMatchObject({ text: 'files@example.com' })
      expect(written.text).toContain('Total: €129.02')
      const notification = (await notificationOf(eventId!))!
      expect((await attemptsOf(notification.id))[0]).toMatchObject({ succeeded: true, response_code: null, response: path })
      expect(logs.find((line) => line.msg === 'notification written to a file (no SMTP_URL)')).toMatchObject({ level: 'info', notification_id: notification.id, file: path })
    } finally {
      rmSync(mailDir, { recursive: true, force: true })
    }
  })
})
