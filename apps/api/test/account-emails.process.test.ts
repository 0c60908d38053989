/**
 * Customers' emails end to end: the API writes the events, a worker process
 * (apps/worker/dist/main.js) sends the emails to an SMTP server in this process (the worker
 * tests' mail-server.ts), and the test reads them as a customer would, following their links.
 */
import type { ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { formatMoney, type AuthResponse, type Checkout, type Me, type Order, type Product, type RegistrationPending } from '@commerce/domain'
import { buildApp } from '../src/app.js'
import { createTestContext, testConfig, type ApiErrorBody, type TestContext } from './helpers.js'
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
/** The same database's API with REQUIRE_EMAIL_VERIFICATION on. */
let verifying: FastifyInstance

beforeAll(async () => {
  ctx = await createTestContext({ passwordResetTtlMs: RESET_TTL_MS })
  verifying = await buildApp(testConfig(ctx.database.url, { requireEmailVerification: true }), { logger: false })
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
  await verifying?.close()
  await stopProcess(worker)
  await smtp?.close()
  await ctx?.close()
})

const SUBJECTS = {
  orderConfirmed: /^Order \S+ confirmed$/,
  reset: 'Reset your password for Test Shop',
  welcome: 'Welcome to Test Shop',
  verify: 'Verify your email address for Test Shop',
  change: 'Confirm your new email address for Test Shop',
}

/** The emails to `address` with this subject once there are `count` of them. */
async function mailTo(address: string, subject: string | RegExp, count = 1): Promise<ParsedMail[]> {
  return vi.waitFor(
    () => {
      const mails = sent(address, subject)
      expect(mails.length).toBeGreaterThanOrEqual(count)
      return mails
    },
    { timeout: 20_000, interval: 50 },
  )
}

/** The emails received so far to `address` with this subject. */
const sent = (address: string, subject: string | RegExp) =>
  smtp
    .received(address)
    .map((received) => received.mail)
    .filter((mail) => (typeof subject === 'string' ? mail.subject === subject : subject.test(mail.subject ?? '')))

/** The token of the link to `path` in an email's text. */
function linkToken(mail: ParsedMail, path: string): string {
  const token = new RegExp(`https://shop\\.example\\.com${path}\\?token=([A-Za-z0-9_-]{43})\\n`).exec(mail.text ?? '')?.[1]
  expect(token, mail.text).toBeDefined()
  return token!
}

async function register(email: string): Promise<AuthResponse> {
  return ctx.expectStatus<AuthResponse>(201, { method: 'POST', url: '/api/v1/auth/register', payload: { email, password: PASSWORD, first_name: 'Grace' } })
}

/** The kinds of the account events of a user, oldest first. */
async function accountEvents(userId: string): Promise<string[]> {
  const rows = await ctx.handle.sql<{ kind: string }[]>`select kind from events where resource_id = ${userId} order by id`
  return rows.map((row) => row.kind)
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

    const [mail] = await mailTo(email, SUBJECTS.orderConfirmed)
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

    const [mail] = await mailTo(email, SUBJECTS.reset)
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
    const token = linkToken((await mailTo(email, SUBJECTS.reset))[0]!, '/account/reset-password')
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
    await mailTo(email, SUBJECTS.reset, 1)
    await requestReset(email)
    const [first, second] = await mailTo(email, SUBJECTS.reset, 2)
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

describe('sign-up', () => {
  test('a new account can sign in at once and gets a welcome email (account.activated, written with the account)', async () => {
    const email = `welcome-${randomUUID()}@example.com`
    const registered = await register(email)
    expect(registered.token).toEqual(expect.any(String))
    expect(await accountEvents(registered.user.id)).toEqual(['account.activated'])
    const [welcome] = await mailTo(email, SUBJECTS.welcome)
    expect(welcome!.text).toMatch(/^Hello Grace,/)
    expect(welcome!.text).toContain(`sign in with ${email} `)
    expect((await login(email, PASSWORD)).statusCode).toBe(200)
  })
})

describe('with REQUIRE_EMAIL_VERIFICATION on', () => {
  const strict = async <T>(status: number, options: InjectOptions) => {
    const response = await verifying.inject(options)
    expect(response.statusCode, response.body).toBe(status)
    return response.json<T>()
  }
  const signUp = (email: string) =>
    strict<RegistrationPending>(202, { method: 'POST', url: '/api/v1/auth/register', payload: { email, password: PASSWORD, first_name: 'Grace' } })
  const strictLogin = (email: string, password: string) => verifying.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } })
  const verify = (token: string) => verifying.inject({ method: 'POST', url: '/api/v1/auth/verify-email', payload: { token } })
  const resend = (email: string) => verifying.inject({ method: 'POST', url: '/api/v1/auth/verify-email/resend', payload: { email } })

  test('sign-up answers 202 without a token; sign-in is 403 email_not_verified to the right password only; the emailed link verifies once and only once, then sign-in works and a welcome comes', async () => {
    const email = `verify-${randomUUID()}@example.com`
    const pending = await signUp(email)
    expect(pending).toEqual({
      user: expect.objectContaining({ email, role: 'customer', email_verified_at: null }),
      customer: expect.objectContaining({ email, first_name: 'Grace' }),
      message: 'The account is made: follow the link emailed to its address to verify it, then sign in',
    })
    expect(pending).not.toHaveProperty('token')

    expect((await strictLogin(email, 'not the password')).json<ApiErrorBody>().error).toMatchObject({ code: 'unauthorized', message: 'Invalid email or password' })
    const refused = await strictLogin(email, PASSWORD)
    expect(refused.statusCode).toBe(403)
    expect(refused.json<ApiErrorBody>().error).toMatchObject({
      code: 'email_not_verified',
      message: 'This account’s email address is not verified yet: follow the link emailed to it, or ask for a new one (POST /auth/verify-email/resend)',
    })

    const [mail] = await mailTo(email, SUBJECTS.verify)
    expect(mail!.text).toContain(`confirm that ${email} is your email address`)
    const token = linkToken(mail!, '/account/verify-email')
    expect(await accountEvents(pending.user.id)).toEqual(['account.verification_requested'])

    expect((await verify(token)).statusCode).toBe(204)
    const again = await verify(token)
    expect(again.statusCode).toBe(400)
    expect(again.json<ApiErrorBody>().error.details).toEqual([{ field: 'token', message: 'This link is unknown or was used already' }])

    const signedIn = await strictLogin(email, PASSWORD)
    expect(signedIn.statusCode, signedIn.body).toBe(200)
    const me = await strict<Me>(200, { method: 'GET', url: '/api/v1/auth/me', headers: { authorization: `Bearer ${signedIn.json<AuthResponse>().token}` } })
    expect(Date.parse(me.user.email_verified_at!)).toBeGreaterThan(Date.now() - 60_000)
    const [welcome] = await mailTo(email, SUBJECTS.welcome)
    expect(welcome!.text).toContain(`sign in with ${email} `)
    expect(await accountEvents(pending.user.id)).toEqual(['account.verification_requested', 'account.email_verified', 'account.activated'])
    expect(sent(email, SUBJECTS.welcome)).toHaveLength(1)
  })

  test('a new link answers 202 alike for an unverified account, an unknown address and a verified account; only the unverified one gets it, and following either link voids the other', async () => {
    const email = `resend-${randomUUID()}@example.com`
    const verified = `verified-${randomUUID()}@example.com`
    await signUp(email)
    await signUp(verified)
    expect((await verify(linkToken((await mailTo(verified, SUBJECTS.verify))[0]!, '/account/verify-email'))).statusCode).toBe(204)
    await mailTo(email, SUBJECTS.verify)
    const nobody = `nobody-${randomUUID()}@example.com`
    const answers = [await resend(email), await resend(nobody), await resend(verified)]
    expect(answers.map((answer) => answer.statusCode)).toEqual([202, 202, 202])
    expect(new Set(answers.map((answer) => answer.body)).size).toBe(1)
    expect(answers[0]!.json()).toEqual({ message: 'If an account with this address awaits verification, a new link is on its way to it' })
    expect(Object.keys(answers[0]!.headers).sort()).toEqual(Object.keys(answers[1]!.headers).sort())

    const [first, second] = await mailTo(email, SUBJECTS.verify, 2)
    const tokens = [linkToken(first!, '/account/verify-email'), linkToken(second!, '/account/verify-email')]
    expect(tokens[0]).not.toBe(tokens[1])
    expect((await verify(tokens[1]!)).statusCode).toBe(204)
    expect((await verify(tokens[0]!)).statusCode).toBe(400)
    expect(await ctx.handle.sql`select id from events where data->>'email' = ${nobody}`).toEqual([])
    // The verified account's resend wrote nothing: one verification email, one welcome.
    expect(await ctx.handle.sql`select kind from events where kind = 'account.verification_requested' and data->>'email' = ${verified}`).toHaveLength(1)
    expect((await strictLogin(email, PASSWORD)).statusCode).toBe(200)
  })
})

const changeEmail = (token: string, email: string, password = PASSWORD) =>
  ctx.request({ method: 'POST', url: '/api/v1/auth/email-change', payload: { email, password }, token })
const confirmChange = (token: string) => ctx.request({ method: 'POST', url: '/api/v1/auth/email-change/confirm', payload: { token } })

describe('email change', () => {
  test('the link goes to the new address only; confirming it makes the new address the sign-in one (the old no longer signs in) and the customer record’s, verified', async () => {
    const old = `old-${randomUUID()}@example.com`
    const next = `new-${randomUUID()}@example.com`
    const registered = await register(old)
    await mailTo(old, SUBJECTS.welcome)
    const wrong = await changeEmail(registered.token, next, 'not the password')
    expect(wrong.statusCode).toBe(400)
    expect(wrong.json<ApiErrorBody>().error.details).toEqual([{ field: 'password', message: 'This is not the account’s password' }])
    const asked = await changeEmail(registered.token, next)
    expect(asked.statusCode, asked.body).toBe(202)
    expect(asked.json()).toEqual({ message: 'A link to confirm the change is on its way to the new address' })

    const [mail] = await mailTo(next, SUBJECTS.change)
    expect(mail!.text).toContain(`from ${old} to ${next}`)
    const token = linkToken(mail!, '/account/confirm-email')
    expect(sent(old, SUBJECTS.change)).toEqual([])
    // Nothing changed until the link is followed.
    expect((await login(old, PASSWORD)).statusCode).toBe(200)
    expect((await login(next, PASSWORD)).statusCode).toBe(401)

    expect((await confirmChange(token)).statusCode).toBe(204)
    expect((await confirmChange(token)).statusCode).toBe(400)
    expect((await login(old, PASSWORD)).statusCode).toBe(401)
    const signedIn = await login(next, PASSWORD)
    expect(signedIn.statusCode).toBe(200)
    const me = await ctx.expectStatus<Me>(200, { method: 'GET', url: '/api/v1/auth/me', token: signedIn.json<AuthResponse>().token })
    expect(me.user.email).toBe(next)
    expect(me.customer!.email).toBe(next)
    expect(me.user.email_verified_at).not.toBeNull()
    // An email change does not sign anyone out: the token of before still works.
    expect((await ctx.expectStatus<Me>(200, { method: 'GET', url: '/api/v1/auth/me', token: registered.token })).user.email).toBe(next)

    const [changed] = await ctx.handle.sql<{ data: Record<string, unknown> }[]>`
      select data from events where kind = 'account.email_changed' and resource_id = ${registered.user.id}`
    expect(changed!.data).toEqual({ user_id: registered.user.id, customer_id: registered.customer!.id, email: next, first_name: 'Grace', previous_email: old })
    expect(await accountEvents(registered.user.id)).toEqual(['account.activated', 'account.email_change_requested', 'account.email_changed'])
  })

  test('answers 409 for an address another account has, at the request and at the confirmation when it was taken meanwhile; 400 for the account’s own', async () => {
    const mine = `mine-${randomUUID()}@example.com`
    const theirs = `theirs-${randomUUID()}@example.com`
    const later = `later-${randomUUID()}@example.com`
    const { token } = await register(mine)
    await register(theirs)
    const taken = await changeEmail(token, theirs.toUpperCase())
    expect(taken.statusCode).toBe(409)
    expect(taken.json<ApiErrorBody>().error).toMatchObject({ code: 'conflict', message: 'Another account or customer has this email address' })
    const own = await changeEmail(token, mine)
    expect(own.json<ApiErrorBody>().error).toMatchObject({ code: 'validation_error', details: [{ field: 'email', message: 'This is the account’s email address already' }] })

    expect((await changeEmail(token, later)).statusCode).toBe(202)
    const link = linkToken((await mailTo(later, SUBJECTS.change))[0]!, '/account/confirm-email')
    await register(later)
    const lost = await confirmChange(link)
    expect(lost.statusCode).toBe(409)
    expect((await login(mine, PASSWORD)).statusCode).toBe(200)
  })
})

describe('password change', () => {
  test('refuses a wrong current password with 400 on current_password; the right one signs out every older token and the answer’s token works', async () => {
    const email = `change-${randomUUID()}@example.com`
    const registered = await register(email)
    const other = (await login(email, PASSWORD)).json<AuthResponse>().token
    const change = (current: string, token: string) =>
      ctx.request({ method: 'POST', url: '/api/v1/auth/password-change', payload: { current_password: current, new_password: 'a changed password' }, token })

    const wrong = await change('not the password', registered.token)
    expect(wrong.statusCode).toBe(400)
    expect(wrong.json<ApiErrorBody>().error.details).toEqual([{ field: 'current_password', message: 'This is not the account’s password' }])
    expect((await login(email, PASSWORD)).statusCode).toBe(200)

    const changed = await change(PASSWORD, registered.token)
    expect(changed.statusCode, changed.body).toBe(200)
    const answer = changed.json<AuthResponse>()
    expect(answer).toMatchObject({ user: { id: registered.user.id, email }, token_type: 'Bearer', expires_in: 3600 })
    for (const old of [registered.token, other]) {
      const refused = await ctx.expectError(401, 'unauthorized', { method: 'GET', url: '/api/v1/auth/me', token: old })
      expect(refused.message).toBe('The password of this account changed after this token was issued; sign in again')
    }
    expect((await ctx.expectStatus<Me>(200, { method: 'GET', url: '/api/v1/auth/me', token: answer.token })).user.id).toBe(registered.user.id)
    expect((await login(email, PASSWORD)).statusCode).toBe(401)
    expect((await login(email, 'a changed password')).statusCode).toBe(200)
    expect(await accountEvents(registered.user.id)).toEqual(['account.activated', 'account.password_changed'])
  })
})
