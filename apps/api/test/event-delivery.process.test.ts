/**
 * Every event kind of the catalog, end to end: emitted by its API operation (or, for
 * webhook.disabled, by the worker disabling a subscription that has failed too long; the account
 * links are followed from the emails the worker sends to a mail server in this process), committed
 * with it, fanned out and delivered by the worker process (apps/worker/dist/main.js) to the
 * subscribers of that kind and to no other, with the envelope of the stored event.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createHmac, randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { Ajv, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { WebSocket } from 'ws'
import { EVENT_KINDS, type AuthResponse, type Checkout, type EventKind, type Order, type Product } from '@commerce/domain'
import { startMailServer, type MailServer } from '../../worker/test/mail-server.js'
import { createTestContext, type TestContext } from './helpers.js'

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default

const WORKER_MAIN = fileURLToPath(new URL('../../worker/dist/main.js', import.meta.url))
const FAILING = '/failing'
const ADDRESS = { first_name: 'Ada', last_name: 'Lovelace', line1: '12 St James Sq', city: 'London', postal_code: 'SW1Y 4JH', country: 'GB' }

interface Delivery {
  path: string
  body: string
  headers: Record<string, string | string[] | undefined>
}

let ctx: TestContext
let admin: string
let receiver: Server
let base: string
let worker: ChildProcess
let smtp: MailServer
const deliveries: Delivery[] = []

beforeAll(async () => {
  if (!existsSync(WORKER_MAIN)) throw new Error(`${WORKER_MAIN} is missing: build apps/worker first`)
  ctx = await createTestContext({ paymentCapture: 'manual' })
  admin = (await ctx.signIn('admin')).token
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      // A receiver that is down: its attempts fail and are not counted as deliveries.
      if (request.url === FAILING) return void response.writeHead(500).end()
      deliveries.push({ path: request.url!, body: Buffer.concat(chunks).toString(), headers: request.headers })
      response.writeHead(200).end()
    })
  })
  await ctx.app.listen({ host: '127.0.0.1', port: 0 })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`
  smtp = await startMailServer()
  const { DATABASE_URL: _unused, ...env } = process.env
  worker = spawn(process.execPath, [WORKER_MAIN], {
    env: {
      ...env,
      DATABASE_URL: ctx.database.url,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      LOG_LEVEL: 'warn',
      NOTIFICATIONS_ENABLED: 'true',
      SMTP_URL: smtp.url,
      MAIL_FROM: 'Test Shop <shop@example.com>',
      SHOP_URL: 'https://shop.example.com',
    },
    stdio: 'ignore',
  })
})

afterAll(async () => {
  if (worker && worker.exitCode === null) {
    const exited = new Promise((resolve) => worker.once('exit', resolve))
    worker.kill('SIGTERM')
    await exited
  }
  await new Promise((resolve) => receiver?.close(resolve))
  await smtp?.close()
  await ctx?.close()
})

async function checkout(product: Product, token: string | undefined, paymentToken: string) {
  const auth = token ? { token } : {}
  const cart = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: 'GBP' }, ...auth })
  await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/carts/${cart.id}/items`, payload: { product_id: product.id, quantity: 1 }, ...auth })
  const started = await ctx.expectStatus<Checkout>(201, {
    method: 'POST',
    url: '/api/v1/checkouts',
    payload: { cart_id: cart.id, email: 'ada@example.com', shipping_address: ADDRESS },
    ...auth,
  })
  return ctx.request({
    method: 'POST',
    url: `/api/v1/checkouts/${started.id}/complete`,
    payload: { payment: { method: 'card', token: paymentToken } },
    headers: { 'idempotency-key': `e2e-${randomUUID()}` },
    ...auth,
  })
}

/** The token of the link to `path` (on the shop's site) in the first email to `address` that has one. */
async function emailedToken(address: string, path: string): Promise<string> {
  const link = new RegExp(`https://shop\\.example\\.com${path}\\?token=([A-Za-z0-9_-]{43})\\n`)
  return vi.waitFor(
    () => {
      const token = smtp
        .received(address)
        .map((received) => link.exec(received.mail.text ?? '')?.[1])
        .find(Boolean)
      expect(token, `a link to ${path} emailed to ${address}`).toBeDefined()
      return token!
    },
    { timeout: 20_000, interval: 50 },
  )
}

/**
 * payment.refunded is written only for a payment that succeeded after its checkout was released
 * and its stock sold (given back at the provider): the worker's payment sweep tests write it.
 */
const LATE_ONLY = 'payment.refunded'

describe('webhook delivery of every event kind', () => {
  test('each subscriber gets exactly the events of its kind; a * subscriber gets them all', async () => {
    const secrets = new Map<string, string>()
    for (const kind of [...EVENT_KINDS, '*']) {
      const created = await ctx.expectStatus<{ secret: string }>(201, {
        method: 'POST',
        url: '/api/v1/webhooks',
        payload: { url: `${base}/${kind}`, events: [kind] },
        token: admin,
      })
      secrets.set(`/${kind}`, created.secret)
    }
    // webhook.disabled: a subscription failing for six days, past the worker's default of five.
    const failing = await ctx.expectStatus<{ id: string }>(201, {
      method: 'POST',
      url: '/api/v1/webhooks',
      payload: { url: `${base}${FAILING}`, events: ['customer.created'] },
      token: admin,
    })
    await ctx.handle.sql`update webhooks set failing_since = now() - interval '6 days' where id = ${failing.id}`
    // Admins see it on the WebSocket; a customer does not.
    const port = (ctx.app.server.address() as AddressInfo).port
    const watch = async (token: string) => {
      const socket = new WebSocket(`ws://127.0.0.1:${port}/api/v1/ws`, { headers: { authorization: `Bearer ${token}` } })
      const messages: { type: string; event?: string; data?: { id?: string } }[] = []
      socket.on('message', (text: Buffer) => messages.push(JSON.parse(text.toString())))
      await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
      await vi.waitFor(() => expect(messages[0]).toEqual({ type: 'ready' }))
      return { socket, messages }
    }
    const adminFeed = await watch(admin)
    const customerFeed = await watch((await ctx.signIn('customer')).token)

    // customer.created, account.activated
    const registered = await ctx.expectStatus<AuthResponse>(201, {
      method: 'POST',
      url: '/api/v1/auth/register',
      payload: { email: `e2e-${randomUUID()}@example.com`, password: 'correct horse battery' },
    })
    const customer = registered.token
    // product.created, product.updated
    const product = await ctx.expectStatus<Product>(201, {
      method: 'POST',
      url: '/api/v1/products',
      payload: { title: 'Kettle', price: 30, currency: 'GBP', inventory_quantity: 10 },
      token: admin,
    })
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/products/${product.id}`, payload: { price: 32 }, token: admin })
    // collection.created, collection.updated, collection.deleted
    const collection = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/collections', payload: { title: 'Kettles', kind: 'manual', product_ids: [product.id] }, token: admin })
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/collections/${collection.id}`, payload: { published: false }, token: admin })
    await ctx.expectStatus(204, { method: 'DELETE', url: `/api/v1/collections/${collection.id}`, token: admin })
    // order.created, payment.authorized (PAYMENT_CAPTURE=manual here: its fulfillment captures it)
    const paid = await checkout(product, customer, 'tok_visa')
    expect(paid.statusCode, paid.body).toBe(201)
    const order = paid.json<Order>()
    // payment.failed
    expect((await checkout(product, undefined, 'tok_declined')).statusCode).toBe(402)
    // payment.succeeded, order.paid (the capture), order.shipped, order.completed
    await ctx.expectStatus(201, {
      method: 'POST',
      url: `/api/v1/orders/${order.id}/fulfillments`,
      payload: { carrier: 'Royal Mail', tracking_number: 'RM123456789GB' },
      headers: { 'idempotency-key': `e2e-${randomUUID()}` },
      token: admin,
    })
    await ctx.expectStatus(200, { method: 'POST', url: `/api/v1/orders/${order.id}/complete`, token: admin })
    // return.requested, return.declined, return.canceled, return.approved, then return.received with its order.refunded
    const unit = [{ line_id: order.items[0]!.id, quantity: 1 }]
    const askReturn = () => ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: `/api/v1/orders/${order.id}/returns`, payload: { items: unit }, token: customer })
    const returnAction = (id: string, action: string, token = admin) =>
      ctx.expectStatus(200, { method: 'POST', url: `/api/v1/returns/${id}/${action}`, payload: {}, headers: { 'idempotency-key': `e2e-${randomUUID()}` }, token })
    await returnAction((await askReturn()).id, 'decline')
    await returnAction((await askReturn()).id, 'cancel', customer)
    const kept = await askReturn()
    await returnAction(kept.id, 'approve')
    await returnAction(kept.id, 'receive')
    const capture = (order: Order) =>
      ctx.expectStatus(200, { method: 'POST', url: `/api/v1/payments/${order.payments[0]!.id}/capture`, payload: {}, headers: { 'idempotency-key': `e2e-${randomUUID()}` }, token: admin })
    // order.refunded (a refund of a second order, captured first), order.cancelled and payment.canceled (a third, its authorization voided)
    const refunded = (await checkout(product, undefined, 'tok_visa')).json<Order>()
    await capture(refunded)
    await ctx.expectStatus(201, {
      method: 'POST',
      url: `/api/v1/payments/${refunded.payments[0]!.id}/refunds`,
      payload: {},
      headers: { 'idempotency-key': `e2e-${randomUUID()}` },
      token: admin,
    })
    const cancelled = (await checkout(product, undefined, 'tok_visa')).json<Order>()
    // order.edited: a line added before it is cancelled
    await ctx.expectStatus(201, {
      method: 'POST',
      url: `/api/v1/orders/${cancelled.id}/edits`,
      payload: { add: [{ product_id: product.id, quantity: 1 }] },
      headers: { 'idempotency-key': `e2e-${randomUUID()}` },
      token: admin,
    })
    await ctx.expectStatus(200, { method: 'POST', url: `/api/v1/orders/${cancelled.id}/cancel`, token: admin })
    // refund.failed: a payment whose refund the provider refuses (the test provider's tok_refund_refused), its order cancelled
    const disputed = (await checkout(product, undefined, 'tok_refund_refused')).json<Order>()
    await capture(disputed)
    await ctx.expectStatus(200, { method: 'POST', url: `/api/v1/orders/${disputed.id}/cancel`, token: admin })
    // draft_order.invoice_sent: a draft order's payment link
    const draft = await ctx.expectStatus<{ id: string }>(201, {
      method: 'POST',
      url: '/api/v1/draft-orders',
      payload: { currency: 'GBP', email: 'phone-order@example.com', lines: [{ product_id: product.id, quantity: 1 }] },
      token: admin,
    })
    await ctx.expectStatus(200, { method: 'POST', url: `/api/v1/draft-orders/${draft.id}/send-invoice`, token: admin })
    // inventory.adjusted: goods received at a new location; inventory.low (and inventory.adjusted): a count below the level's threshold
    const store = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/stock-locations', payload: { name: 'Shop floor' }, token: admin })
    const adjust = (payload: Record<string, unknown>) =>
      ctx.expectStatus<{ levels: { id: string }[] }>(201, {
        method: 'POST',
        url: '/api/v1/inventory/adjustments',
        payload: { product_id: product.id, location_id: store.id, ...payload },
        token: admin,
      })
    const received = await adjust({ quantity: 5, reason: 'received' })
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/inventory/levels/${received.levels[0]!.id}`, payload: { low_stock_threshold: 3 }, token: admin })
    await adjust({ on_hand: 1, reason: 'cycle_count' })

    // The account's: account.verification_requested (the sign-up did not ask for one), account.email_verified,
    // account.password_reset_requested, account.password_changed, account.email_change_requested, account.email_changed
    const { email } = registered.user
    const post = <T>(status: number, url: string, payload: Record<string, unknown>, token?: string) =>
      ctx.expectStatus<T>(status, { method: 'POST', url: `/api/v1/auth/${url}`, payload, ...(token ? { token } : {}) })
    await post(202, 'verify-email/resend', { email })
    await post(204, 'verify-email', { token: await emailedToken(email, '/account/verify-email') })
    await post(202, 'password-reset', { email })
    const changed = await post<AuthResponse>(200, 'password-change', { current_password: 'correct horse battery', new_password: 'a new password' }, customer)
    const newEmail = `e2e-new-${randomUUID()}@example.com`
    await post(202, 'email-change', { email: newEmail, password: 'a new password' }, changed.token)
    await post(204, 'email-change/confirm', { token: await emailedToken(newEmail, '/account/confirm-email') })

    // The customer.created event's failed attempt disabled the failing subscription.
    await vi.waitFor(() => expect(adminFeed.messages.find((message) => message.event === 'webhook.disabled')?.data?.id).toBe(failing.id), {
      timeout: 20_000,
      interval: 100,
    })
    expect(customerFeed.messages.some((message) => message.event === 'webhook.disabled')).toBe(false)
    expect(customerFeed.messages.some((message) => message.event === 'product.created')).toBe(true)
    for (const feed of [adminFeed, customerFeed]) feed.socket.terminate()
    const disabled = await ctx.expectStatus<{ is_active: boolean; disabled_at: string | null }>(200, {
      method: 'GET',
      url: `/api/v1/webhooks/${failing.id}`,
      token: admin,
    })
    expect(disabled.is_active).toBe(false)
    expect(disabled.disabled_at).not.toBeNull()

    const events = await ctx.handle.sql<{ id: string; kind: string; data: unknown; created_at: string; resource_id: string; sequence: number }[]>`
      select id, kind, data, created_at, resource_id, sequence from events order by id`
    // Each resource's events are numbered 1, 2, 3… in the order they were written (one writer at a time per resource here).
    const sequences = new Map<string, number[]>()
    for (const event of events) sequences.set(event.resource_id, [...(sequences.get(event.resource_id) ?? []), event.sequence])
    for (const numbers of sequences.values()) expect(numbers).toEqual(numbers.map((_, i) => i + 1))
    // The order's story is one sequence: created, its payment, paid, shipped, completed, then its returns.
    const story = events.filter((event) => event.resource_id === order.id)
    expect(story.map((event) => event.kind)).toEqual([
      'order.created',
      'payment.authorized',
      'payment.succeeded',
      'order.paid',
      'order.shipped',
      'order.completed',
      'return.requested',
      'return.declined',
      'return.requested',
      'return.canceled',
      'return.requested',
      'return.approved',
      'order.refunded',
      'return.received',
    ])
    expect(new Set(events.map((event) => event.kind))).toEqual(new Set(EVENT_KINDS.filter((kind) => kind !== LATE_ONLY)))
    await vi.waitFor(() => expect(deliveries.filter((delivery) => delivery.path === '/*')).toHaveLength(events.length), {
      timeout: 20_000,
      interval: 100,
    })
    await vi.waitFor(() => expect(deliveries).toHaveLength(2 * events.length), { timeout: 20_000, interval: 100 })

    for (const kind of EVENT_KINDS) {
      const received = deliveries.filter((delivery) => delivery.path === `/${kind}`)
      const expected = events.filter((event) => event.kind === kind)
      expect(received.map((delivery) => JSON.parse(delivery.body).id).sort(), kind).toEqual(expected.map((event) => event.id).sort())
    }
    const byId = new Map(events.map((event) => [event.id, event]))
    for (const delivery of deliveries) {
      const body = JSON.parse(delivery.body) as { id: string; event: string; timestamp: string; data: unknown }
      const event = byId.get(body.id)!
      expect(body).toEqual({
        id: event.id,
        event: event.kind,
        timestamp: new Date(event.created_at).toISOString(),
        resource_id: event.resource_id,
        sequence: event.sequence,
        data: event.data,
      })
      expect(typeof body.timestamp).toBe('string')
      expect(delivery.headers['x-webhook-event']).toBe(event.kind)
      expect(delivery.headers['x-webhook-signature']).toBe(createHmac('sha256', secrets.get(delivery.path)!).update(delivery.body).digest('hex'))
    }
    const paidDelivery = JSON.parse(deliveries.find((delivery) => delivery.path === '/order.paid')!.body) as { data: Record<string, unknown> }
    expect(paidDelivery.data).toMatchObject({ order_id: order.id, order_number: order.order_number, total: order.totals.total, currency: 'GBP' })

    // The worker's emails of the returns, to the order's address: one per request, decline, approval and receipt; none for the cancel.
    const aboutReturns = () => smtp.received('ada@example.com').filter(({ mail }) => /return/i.test(mail.subject ?? ''))
    await vi.waitFor(() => expect(aboutReturns()).toHaveLength(6), { timeout: 20_000, interval: 100 })
    const number = order.order_number
    expect(aboutReturns().map(({ mail }) => mail.subject).sort()).toEqual(
      [
        ...Array.from({ length: 3 }, () => `Return request received for order ${number}`),
        `Your return for order ${number} was declined`,
        `Your return for order ${number} is approved`,
        `We received your return for order ${number}`,
      ].sort(),
    )
    const receipt = aboutReturns().find(({ mail }) => mail.subject === `We received your return for order ${number}`)!.mail.text!
    expect(receipt).toContain(`1 × ${order.items[0]!.title}`)
    expect(receipt).toContain('A separate email confirms the refund')
  })

  // Reads the deliveries of the test above.
  test('every delivery is what the OpenAPI document’s webhook of its kind says: its body field for field, its headers', () => {
    const document = ctx.app.swagger() as unknown as WebhooksDocument
    const bodyOf = webhookBodyValidators(document)
    expect(deliveries.length).toBeGreaterThan(EVENT_KINDS.length)
    for (const delivery of deliveries) {
      const body = JSON.parse(delivery.body) as { event: EventKind }
      const validate = bodyOf(body.event)
      expect(validate(body) ? [] : validate.errors, `${body.event}: ${delivery.body.slice(0, 200)}`).toEqual([])
      for (const header of document.webhooks[body.event]!.post.parameters.map(({ $ref }) => document.components.parameters[$ref.split('/').at(-1)!]!)) {
        expect(delivery.headers[header.name], `${body.event} ${header.name}`).toEqual(expect.any(String))
      }
    }
  })
})

interface WebhooksDocument {
  webhooks: Record<string, { post: { parameters: { $ref: string }[]; requestBody: { content: { 'application/json': { schema: { $ref: string } } } } } }>
  components: { schemas: Record<string, unknown>; parameters: Record<string, { name: string }> }
}

/**
 * A validator of the webhook body of each kind, from the document, with every object closed: a
 * field the document does not name fails as a missing one does.
 */
function webhookBodyValidators(document: WebhooksDocument): (kind: EventKind) => ValidateFunction {
  const close = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(close)
    if (typeof value !== 'object' || value === null) return value
    const schema = Object.fromEntries(Object.entries(value).map(([key, child]) => [key, close(child)]))
    return schema.type === 'object' && schema.properties && schema.additionalProperties === undefined ? { ...schema, additionalProperties: false } : schema
  }
  const ajv = new Ajv({ strict: false, allErrors: true })
  addFormats(ajv)
  ajv.addSchema({ $id: 'contract', components: { schemas: close(document.components.schemas) } })
  return (kind) => ajv.getSchema(`contract${document.webhooks[kind]!.post.requestBody.content['application/json'].schema.$ref}`)!
}
