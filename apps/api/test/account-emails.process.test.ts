/**
 * Customers' emails end to end: the API writes the events, a worker process
 * (apps/worker/dist/main.js) sends the emails to an SMTP server in this process (the worker
 * tests' mail-server.ts), and the test reads them as a customer would, following their links.
 */
import type { ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { formatMoney, type AuthResponse, type Checkout, type Order, type Product } from '@commerce/domain'
import { createTestContext, type TestContext } from './helpers.js'
import { startMailServer, type MailServer, type ReceivedMail } from '../../worker/test/mail-server.js'
import { startWorker, stopProcess } from './processes.js'

const ADDRESS = { first_name: 'Ada', last_name: 'Lovelace', line1: '12 St James Sq', city: 'London', postal_code: 'SW1Y 4JH', country: 'GB' }
const PASSWORD = 'correct horse battery'
const RESET_TTL_MS = 20 * 60_000
type ParsedMail = ReceivedMail['mail']

let ctx: TestContext
let admin: string
let worker: ChildProcess
let smtp: MailServer

beforeAll(async () => {
  ctx = await createTestContext({ passwordResetTtlMs: RESET_TTL_MS })
  admin = (await ctx.signIn('admin')).token
  smtp = await startMailServer()
  worker = startWorker(ctx.database.url, {
    NOTIFICATIONS_ENABLED: 'true',
    SMTP_URL: smtp.url,
    MAIL_FROM: 'Test Shop <shop@example.com>',
    SHOP_NAME: 'Test Shop',
    SHOP_URL: 'https://shop.example.com',
    NOTIFICATION_RETRY_SCHEDULE: '1s',
  })
})

afterAll(async () => {
  await stopProcess(worker)
  await smtp?.close()
  await ctx?.close()
})

/** The emails to `address` once there are `count` of them. */
async function mailTo(address: string, count = 1): Promise<ParsedMail[]> {
  return vi.waitFor(
    () => {
      const mails = smtp.received(address).map((received) => received.mail)
      expect(mails.length).toBeGreaterThanOrEqual(count)
      return mails
    },
    { timeout: 20_000, interval: 50 },
  )
}

/** The token of the link to `path` in an email's text. */
function linkToken(mail: ParsedMail, path: string): string {
  const token = new RegExp(`https://shop\\.example\\.com${path}\\?token=([A-Za-z0-9_-]{43})\\n`).exec(mail.text ?? '')?.[1]
  expect(token, mail.text).toBeDefined()
  return token!
}

async function register(email: string): Promise<AuthResponse> {
  return ctx.expectStatus<AuthResponse>(201, { method: 'POST', url: '/api/v1/auth/register', payload: { email, password: PASSWORD, first_name: 'Grace' } })
}

const login = (email: string, password: string) => ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } })
const requestReset = (email: string) => ctx.request({ method: 'POST', url: '/api/v1/auth/password-reset', payload: { email } })
const confirmReset = (token: string, password: string) => ctx.request({ method: 'POST', url: '/api/v1/auth/password-reset/confirm', payload: { token, password } })

describe('the order confirmation', () => {
  test('of a checkout carries every line and total of the order as the API shows it', async () => {
    const product = (payload: Record<string, unknown>) =>
      ctx.expectStatus<Product>(201, { method: 'POST', url: '/api/v1/products', payload: { currency: 'GBP', inventory_quantity: 50, ...payload }, token: admin })
    const [shirt, socks] = [await product({ title: 'Linen shirt', price: 39.99 }), await product({ title: 'Wool socks', price: 7.35 })]
    await ctx.expectStatus(201, { method: 'POST', url: '/api/v1/tax-rates', payload: { country: 'GB', rate: 20, name: 'VAT' }, token: admin })
    await ctx.expectStatus(201, { method: 'POST', url: '/api/v1/coupons', payload: { code: 'AUTUMN', type: 'percentage', value: 12.5 }, token: admin })
    await ctx.expectStatus(201, { method: 'POST', url: '/api/v1/shipping/methods', payload: { name: 'Courier', currency: 'GBP', base_price: 4.95 }, token: admin })
    const email = `buyer-${randomUUID()}@example.com`
    const cart = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: 'GBP' } })
    for (const [item, quantity] of [[shirt!, 2], [socks!, 3]] as const) {
      await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/carts/${cart.id}/items`, payload: { product_id: item.id, quantity } })
    }
    await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/carts/${cart.id}/coupons`, payload: { code: 'AUTUMN' } })
    const checkout = await ctx.expectStatus<Checkout>(201, { method: 'POST', url: '/api/v1/checkouts', payload: { cart_id: cart.id, email, shipping_address: ADDRESS } })
    await ctx.expectStatus(200, { method: 'POST', url: `/api/v1/checkouts/${checkout.id}/shipping`, payload: { rate_id: checkout.shipping_rates[0]!.id } })
    const placed = await ctx.expectStatus<Order>(201, {
      method: 'POST',
      url: `/api/v1/checkouts/${checkout.id}/complete`,
      payload: { payment: { method: 'card', token: 'tok_visa' } },
      headers: { 'idempotency-key': randomUUID() },
    })
    const order = await ctx.expectStatus<Order>(200, { method: 'GET', url: `/api/v1/orders/${placed.id}`, token: admin })
    expect(order.status).toBe('paid')
    // Every part of the totals is there, so the email has something to get wrong.
    for (const part of ['subtotal', 'discount', 'tax', 'shipping'] as const) expect(order.totals[part]).toBeGreaterThan(0)

    const [mail] = await mailTo(email)
    expect(mail!.subject).toBe(`Order ${order.order_number} confirmed`)
    const money = (amount: number) => formatMoney(amount, 'GBP')
    const text = mail!.text!
    for (const line of order.items) expect(text).toContain(`${line.quantity} × ${line.title} at ${money(line.unit_price)}: ${money(line.line_total)}`)
    expect(text).toContain(`Subtotal: ${money(order.totals.subtotal)}\nDiscount AUTUMN: -${money(order.totals.discount)}\n`)
    expect(text).toContain(`Shipping (Courier): ${money(order.totals.shipping)}\nTax: ${money(order.totals.tax)}\nTotal: ${money(order.totals.total)}\n`)
    for (const amount of Object.values(order.totals)) expect(String(mail!.html)).toContain(money(amount))
  })
})

describe('password reset', () => {
  test('answers 202 with the same body for an account and an unknown address; only the account gets a link, which works once and signs out every older token', async () => {
    const email = `reset-${randomUUID()}@example.com`
    const { token: before } = await register(email)
    const nobody = `nobody-${randomUUID()}@example.com`
    const [known, unknown] = [await requestReset(email), await requestReset(nobody)]
    expect([known.statusCode, unknown.statusCode]).toEqual([202, 202])
    expect(known.body).toBe(unknown.body)
    expect(known.json()).toEqual({ message: 'If an account has this address, a link to set a new password is on its way to it' })
    expect(Object.keys(known.headers).sort()).toEqual(Object.keys(unknown.headers).sort())

    const [mail] = await mailTo(email)
    expect(mail!.subject).toBe('Reset your password for Test Shop')
    expect(mail!.text).toMatch(/^Hello Grace,/)
    const token = linkToken(mail!, '/account/reset-password')
    // Nothing at all for the unknown address: no event, no notification.
    expect(await ctx.handle.sql`select id from events where data->>'email' = ${nobody}`).toEqual([])
    expect(await ctx.handle.sql`select id from notifications where recipient = ${nobody}`).toEqual([])

    expect(await ctx.expectStatus(200, { method: 'GET', url: '/api/v1/auth/me', token: before })).toMatchObject({ user: { email } })
    expect((await confirmReset(token, 'a brand new password')).statusCode).toBe(204)
    const old = await ctx.expectError(401, 'unauthorized', { method: 'GET', url: '/api/v1/auth/me', token: before })
    expect(old.message).toBe('The password of this account changed after this token was issued; sign in again')
    expect((await login(email, PASSWORD)).statusCode).toBe(401)
    const signedIn = await login(email, 'a brand new password')
    expect(signedIn.statusCode).toBe(200)
    expect(await ctx.expectStatus(200, { method: 'GET', url: '/api/v1/auth/me', token: signedIn.json<AuthResponse>().token })).toMatchObject({ user: { email } })

    const again = await ctx.expectError(400, 'validation_error', { method: 'POST', url: '/api/v1/auth/password-reset/confirm', payload: { token, password: 'yet another password' } })
    expect(again.details).toEqual([{ field: 'token', message: 'This link is unknown or was used already' }])
    expect((await login(email, 'a brand new password')).statusCode).toBe(200)
    const [changed] = await ctx.handle.sql<{ kind: string; data: Record<string, unknown> }[]>`
      select kind, data from events where kind = 'account.password_changed' and data->>'email' = ${email}`
    expect(changed).toMatchObject({ data: { email, first_name: 'Grace', user_id: expect.any(String) } })
  })

  test('a link expires PASSWORD_RESET_TTL after it was asked for; an expired one changes nothing', async () => {
    const email = `late-${randomUUID()}@example.com`
    await register(email)
    const asked = Date.now()
    expect((await requestReset(email)).statusCode).toBe(202)
    const token = linkToken((await mailTo(email))[0]!, '/account/reset-password')
    const [event] = await ctx.handle.sql<{ data: { expires_at: string } }[]>`
      select data from events where kind = 'account.password_reset_requested' and data->>'email' = ${email}`
    const expiresAt = new Date(event!.data.expires_at).getTime()
    expect(expiresAt - asked).toBeGreaterThanOrEqual(RESET_TTL_MS - 1000)
    expect(expiresAt - asked).toBeLessThanOrEqual(RESET_TTL_MS + 5000)

    await ctx.handle.sql`update account_tokens set expires_at = now() - interval '1 second' where email = ${email}`
    const refused = await ctx.expectError(400, 'validation_error', { method: 'POST', url: '/api/v1/auth/password-reset/confirm', payload: { token, password: 'a brand new password' } })
    expect(refused.details![0]!.message).toMatch(/^This link expired at \d{4}-\d\d-\d\dT[\d:.]+Z; ask for a new one$/)
    expect((await login(email, PASSWORD)).statusCode).toBe(200)
    expect((await login(email, 'a brand new password')).statusCode).toBe(401)
  })

  test('each request sends its own link; setting the password with one voids the others', async () => {
    const email = `twice-${randomUUID()}@example.com`
    await register(email)
    await requestReset(email)
    await mailTo(email, 1)
    await requestReset(email)
    const [first, second] = await mailTo(email, 2)
    const tokens = [linkToken(first!, '/account/reset-password'), linkToken(second!, '/account/reset-password')]
    expect(tokens[0]).not.toBe(tokens[1])
    expect((await confirmReset(tokens[1]!, 'the second new password')).statusCode).toBe(204)
    expect((await confirmReset(tokens[0]!, 'the first new password')).statusCode).toBe(400)
    expect((await login(email, 'the second new password')).statusCode).toBe(200)
  })

  test('refuses a made-up token, and a new password shorter than 8 characters, with 400 naming the field', async () => {
    const made = await ctx.expectError(400, 'validation_error', { method: 'POST', url: '/api/v1/auth/password-reset/confirm', payload: { token: 'x'.repeat(43), password: 'long enough' } })
    expect(made.details).toEqual([{ field: 'token', message: 'This link is unknown or was used already' }])
    const short = await ctx.expectError(400, 'validation_error', { method: 'POST', url: '/api/v1/auth/password-reset/confirm', payload: { token: 'x'.repeat(43), password: 'short' } })
    expect(short.details?.[0]?.field).toBe('password')
    await ctx.expectError(400, 'validation_error', { method: 'POST', url: '/api/v1/auth/password-reset', payload: { email: 'not an address' } })
  })

  test('takes about as long for an unknown address as for an account', { timeout: 120_000 }, async () => {
    const emails = await Promise.all(Array.from({ length: 15 }, async (_, n) => (await register(`timing-${n}-${randomUUID()}@example.com`)).user.email))
    const timed = async (email: string) => {
      const started = performance.now()
      expect((await requestReset(email)).statusCode).toBe(202)
      return performance.now() - started
    }
    await timed('warm-up@example.com')
    const known: number[] = []
    const unknown: number[] = []
    for (const [n, email] of emails.entries()) {
      known.push(await timed(email))
      unknown.push(await timed(`nobody-${n}-${randomUUID()}@example.com`))
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
    const ratio = median(unknown) / median(known)
    expect(ratio, `unknown ${median(unknown).toFixed(2)} ms, known ${median(known).toFixed(2)} ms`).toBeGreaterThan(0.5)
    expect(ratio).toBeLessThan(2)
  })
})
