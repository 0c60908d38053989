/** Payments of orders and refunds: amounts, statuses, events, ownership and Idempotency-Key. */
import { randomUUID } from 'node:crypto'
import { describe, expect } from 'vitest'
import type { Order, Payment, PaymentList, Refund } from '@commerce/domain'
import type { PaymentProvider } from '@commerce/domain'
import { testProvider } from '@commerce/payments'
import { test, type TestContext } from './helpers.js'
import { insertOrder, orderRow } from './order-fixtures.js'

const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000beef'
const VISA = { method: 'card', token: 'tok_visa' }

/**
 * The `test` provider, except that a payment with token `tok_gated` waits until the test opens the
 * gate (then succeeds): a request that is certainly still running.
 */
function gatedProvider() {
  let open!: () => void
  let entered!: () => void
  const gate = new Promise<void>((resolve) => (open = resolve))
  const reached = new Promise<void>((resolve) => (entered = resolve))
  const provider: PaymentProvider = {
    ...testProvider,
    async authorize(request) {
      if (request.token !== 'tok_gated') return testProvider.authorize(request)
      entered()
      await gate
      return testProvider.authorize({ ...request, token: 'tok_visa' })
    },
  }
  return { provider, reached, open }
}

const gated = gatedProvider()
test.scoped({ contextOptions: { build: { paymentProvider: gated.provider } } })

const key = () => `test-key-${randomUUID()}`

function pay(ctx: TestContext, admin: string, orderId: string, body: Record<string, unknown>, options: { token?: string; key?: string | null } = {}) {
  const idempotencyKey = options.key === undefined ? key() : options.key
  return ctx.request({
    method: 'POST',
    url: `/api/v1/orders/${orderId}/payments`,
    payload: body,
    headers: idempotencyKey === null ? {} : { 'idempotency-key': idempotencyKey },
    token: options.token ?? admin,
  })
}

function refund(ctx: TestContext, admin: string, paymentId: string, body: Record<string, unknown> = {}, options: { token?: string; key?: string } = {}) {
  return ctx.request({
    method: 'POST',
    url: `/api/v1/payments/${paymentId}/refunds`,
    payload: body,
    headers: { 'idempotency-key': options.key ?? key() },
    token: options.token ?? admin,
  })
}

function getOrder(ctx: TestContext, admin: string, orderId: string): Promise<Order> {
  return ctx.expectStatus(200, { method: 'GET', url: `/api/v1/orders/${orderId}`, token: admin })
}

async function paymentRows(ctx: TestContext, orderId: string) {
  return ctx.handle.sql<{ status: string; amount: number; refunded: number }[]>`
    select status, amount_minor::int as amount, refunded_minor::int as refunded from payments where order_id = ${orderId} order by id`
}

describe('POST /api/v1/orders/:id/payments', () => {
  test('a part payment keeps the order pending; the payment that covers the total moves it to paid with order.paid', async ({ ctx, admin }) => {
    const { order } = await insertOrder(ctx, { items: [{ unitPriceMinor: 2500, quantity: 2 }] })
    const first = await pay(ctx, admin, order.id, { ...VISA, amount: 20 })
    expect(first.statusCode, first.body).toBe(201)
    expect(first.json<Payment>()).toMatchObject({
      order_id: order.id,
      provider: 'test',
      method: 'card',
      status: 'captured',
      amount: 20,
      amount_refunded: 0,
      currency: 'USD',
      refunds: [],
    })
    expect(await getOrder(ctx, admin, order.id)).toMatchObject({ status: 'pending', payment_status: 'unpaid', amount_paid: 20 })

    const rest = await pay(ctx, admin, order.id, VISA)
    expect(rest.statusCode, rest.body).toBe(201)
    expect(rest.json<Payment>().amount).toBe(30)
    const paid = await getOrder(ctx, admin, order.id)
    expect(paid).toMatchObject({ status: 'paid', payment_status: 'paid', amount_paid: 50 })
    expect(paid.payments.map((payment) => payment.amount)).toEqual([20, 30])
    expect(await ctx.orderEvents(order.id)).toEqual(['payment.succeeded', 'payment.succeeded', 'order.paid'])
    const [orderPaid] = await ctx.handle.sql<{ data: Record<string, unknown> }[]>`
      select data from events where kind = 'order.paid' and data->>'order_id' = ${order.id}`
    expect(orderPaid!.data).toMatchObject({ order_id: order.id, order_number: order.orderNumber, total: 50, currency: 'USD' })
  })

  test('refuses more than is owed, an amount finer than the currency, a paid order owing nothing (409) and orders past shipping (409 invalid_state_transition)', async ({ ctx, admin }) => {
    const { order } = await insertOrder(ctx, { items: [{ unitPriceMinor: 1000 }] })
    const over = await pay(ctx, admin, order.id, { ...VISA, amount: 10.01 })
    expect(over.statusCode).toBe(400)
    expect(over.json().error.details).toEqual([{ field: 'amount', message: "Field 'amount' is more than the 10.00 USD owed" }])
    const fine = await pay(ctx, admin, order.id, { ...VISA, amount: 1.005 })
    expect(fine.statusCode).toBe(400)
    expect(fine.json().error.details[0].field).toBe('amount')
    const { order: yen } = await insertOrder(ctx, { currency: 'JPY', items: [{ unitPriceMinor: 1000 }] })
    const fraction = await pay(ctx, admin, yen.id, { ...VISA, amount: 1.5 })
    expect(fraction.statusCode).toBe(400)
    expect((await pay(ctx, admin, yen.id, { ...VISA, amount: 1000 })).statusCode).toBe(201)
    expect(await paymentRows(ctx, order.id)).toEqual([])

    // A paid order takes a payment only of what an edit left owed (order-edits.test.ts).
    const { order: paid } = await insertOrder(ctx, { status: 'paid' })
    const refused = await pay(ctx, admin, paid.id, VISA)
    expect(refused.statusCode).toBe(409)
    expect(refused.json().error).toMatchObject({ code: 'conflict', message: 'Nothing is owed on this order' })
    const { order: completed } = await insertOrder(ctx, { status: 'completed' })
    expect((await pay(ctx, admin, completed.id, VISA)).json().error).toMatchObject({
      code: 'invalid_state_transition',
      message: 'An order cannot move from completed to paid; allowed from completed: refunded',
    })
  })

  test('a declined charge is 402 and keeps only the failed payment and payment.failed; a provider failure keeps nothing', async ({ ctx, admin }) => {
    const { order } = await insertOrder(ctx)
    const declined = await pay(ctx, admin, order.id, { method: 'card', token: 'tok_declined' })
    expect(declined.statusCode).toBe(402)
    expect(declined.json().error).toMatchObject({ code: 'payment_declined', message: 'The card was declined' })
    expect(await paymentRows(ctx, order.id)).toEqual([{ status: 'failed', amount: 2000, refunded: 0 }])
    expect(await ctx.orderEvents(order.id)).toEqual(['payment.failed'])
    expect(await orderRow(ctx, order.id)).toMatchObject({ status: 'pending', paymentStatus: 'unpaid', paidMinor: 0 })

    const events = await ctx.countRows('events')
    const failed = await pay(ctx, admin, order.id, { method: 'card', token: 'tok_error' })
    expect(failed.statusCode).toBe(502)
    expect(failed.json().error.code).toBe('payment_provider_error')
    expect(await paymentRows(ctx, order.id)).toHaveLength(1)
    expect(await ctx.countRows('events')).toBe(events)
    const listed = await ctx.expectStatus<PaymentList>(200, { method: 'GET', url: `/api/v1/orders/${order.id}/payments`, token: admin })
    expect(listed.payments).toEqual([expect.objectContaining({ status: 'failed', failure_code: 'card_declined', amount: 20 })])
  })

  test('a failure after the payment insert keeps no payment, no event and the order as it was', async ({ ctx, admin }) => {
    const { order } = await insertOrder(ctx)
    const events = await ctx.countRows('events')
    const response = await ctx.withFailingInserts('events', () => pay(ctx, admin, order.id, VISA))
    expect(response.statusCode).toBe(500)
    expect(await paymentRows(ctx, order.id)).toEqual([])
    expect(await ctx.countRows('events')).toBe(events)
    expect(await orderRow(ctx, order.id)).toMatchObject({ status: 'pending', paidMinor: 0 })
  })

  test("the order's owner may pay it; another customer gets 404, anonymous callers 401", async ({ ctx, admin }) => {
    const owner = await ctx.signIn('customer')
    const other = await ctx.signIn('customer')
    const { order } = await insertOrder(ctx, { customerId: owner.customerId })
    expect((await pay(ctx, admin, order.id, VISA, { token: other.token })).statusCode).toBe(404)
    const anonymous = await ctx.request({
      method: 'POST',
      url: `/api/v1/orders/${order.id}/payments`,
      payload: VISA,
      headers: { 'idempotency-key': key() },
    })
    expect(anonymous.statusCode).toBe(401)
    expect((await pay(ctx, admin, UNKNOWN_ID, VISA)).statusCode).toBe(404)
    const paid = await pay(ctx, admin, order.id, VISA, { token: owner.token })
    expect(paid.statusCode).toBe(201)
    const listed = await ctx.expectStatus<PaymentList>(200, { method: 'GET', url: `/api/v1/orders/${order.id}/payments`, token: owner.token })
    expect(listed).toEqual({ payments: [paid.json()], meta: { page: 1, per_page: 20, total: 1, total_pages: 1 } })
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `/api/v1/orders/${order.id}/payments`, token: other.token })
  })
})

describe('Idempotency-Key on payments', () => {
  test('is required: without one, or with a short one, 400 and nothing charged', async ({ ctx, admin }) => {
    const { order } = await insertOrder(ctx)
    const missing = await pay(ctx, admin, order.id, VISA, { key: null })
    expect(missing.statusCode).toBe(400)
    expect(missing.json().error.message).toBe("Header 'Idempotency-Key' is required")
    expect((await pay(ctx, admin, order.id, VISA, { key: 'too-short' })).statusCode).toBe(400)
    expect(await paymentRows(ctx, order.id)).toEqual([])
  })

  test('the same key again, in sequence and in parallel, replays one payment: one charge', async ({ ctx, admin }) => {
    const { order } = await insertOrder(ctx)
    const sameKey = key()
    const first = await pay(ctx, admin, order.id, { ...VISA, amount: 5 }, { key: sameKey })
    const again = await pay(ctx, admin, order.id, { ...VISA, amount: 5 }, { key: sameKey })
    expect(again.statusCode).toBe(201)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.json()).toEqual(first.json())
    expect(first.headers['idempotent-replayed']).toBeUndefined()

    const parallelKey = key()
    const responses = await Promise.all(Array.from({ length: 8 }, () => pay(ctx, admin, order.id, { ...VISA, amount: 5 }, { key: parallelKey })))
    const created = responses.filter((response) => response.statusCode === 201)
    expect(created.length).toBeGreaterThanOrEqual(1)
    expect(responses.every((response) => response.statusCode === 201 || response.statusCode === 409)).toBe(true)
    expect(new Set(created.map((response) => response.json<Payment>().id)).size).toBe(1)
    expect(await paymentRows(ctx, order.id)).toEqual([
      { status: 'captured', amount: 500, refunded: 0 },
      { status: 'captured', amount: 500, refunded: 0 },
    ])
  })

  test('another body with the same key is 422; a declined answer is replayed too', async ({ ctx, admin }) => {
    const { order } = await insertOrder(ctx)
    const declinedKey = key()
    const declined = await pay(ctx, admin, order.id, { method: 'card', token: 'tok_declined' }, { key: declinedKey })
    expect(declined.statusCode).toBe(402)
    const replay = await pay(ctx, admin, order.id, { method: 'card', token: 'tok_declined' }, { key: declinedKey })
    expect(replay.statusCode).toBe(402)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.json()).toEqual(declined.json())
    expect(await paymentRows(ctx, order.id)).toHaveLength(1)
    const mismatch = await pay(ctx, admin, order.id, VISA, { key: declinedKey })
    expect(mismatch.statusCode).toBe(422)
    expect(mismatch.json().error.code).toBe('idempotency_key_mismatch')
  })

  test('while the first request runs, the same key is 409 idempotency_conflict; then the first answers', async ({ ctx, admin }) => {
    const { order } = await insertOrder(ctx)
    const runningKey = key()
    const first = pay(ctx, admin, order.id, { method: 'card', token: 'tok_gated' }, { key: runningKey })
    await gated.reached
    const second = await pay(ctx, admin, order.id, { method: 'card', token: 'tok_gated' }, { key: runningKey })
    expect(second.statusCode).toBe(409)
    expect(second.json().error).toMatchObject({ code: 'idempotency_conflict', message: 'A request with this Idempotency-Key is still in progress' })
    gated.open()
    expect((await first).statusCode).toBe(201)
    expect(await paymentRows(ctx, order.id)).toEqual([{ status: 'captured', amount: 2000, refunded: 0 }])
  })

  test('a refusal is stored and replayed; a 400 is not, so the key may carry the corrected request', async ({ ctx, admin }) => {
    const { order: paid } = await insertOrder(ctx, { status: 'paid' })
    const refusedKey = key()
    const refused = await pay(ctx, admin, paid.id, VISA, { key: refusedKey })
    expect(refused.statusCode).toBe(409)
    const replay = await pay(ctx, admin, paid.id, VISA, { key: refusedKey })
    expect(replay.statusCode).toBe(409)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.json()).toEqual(refused.json())

    const { order } = await insertOrder(ctx, { items: [{ unitPriceMinor: 1000 }] })
    const correctedKey = key()
    expect((await pay(ctx, admin, order.id, { ...VISA, amount: 99 }, { key: correctedKey })).statusCode).toBe(400)
    const corrected = await pay(ctx, admin, order.id, { ...VISA, amount: 10 }, { key: correctedKey })
    expect(corrected.statusCode).toBe(201)
    expect(corrected.headers['idempotent-replayed']).toBeUndefined()
    expect(await paymentRows(ctx, order.id)).toEqual([{ status: 'captured', amount: 1000, refunded: 0 }])
  })

  test('keys belong to their caller: two callers may use the same key; an expired key starts afresh', async ({ ctx, admin }) => {
    const owner = await ctx.signIn('customer')
    const { order: mine } = await insertOrder(ctx, { customerId: owner.customerId })
    const { order: theirs } = await insertOrder(ctx)
    const shared = key()
    expect((await pay(ctx, admin, mine.id, { ...VISA, amount: 1 }, { key: shared, token: owner.token })).statusCode).toBe(201)
    expect((await pay(ctx, admin, theirs.id, { ...VISA, amount: 1 }, { key: shared })).statusCode).toBe(201)
    await ctx.handle.sql`update idempotency_keys set expires_at = now() - interval '1 second' where key = ${shared}`
    const fresh = await pay(ctx, admin, theirs.id, { ...VISA, amount: 2 }, { key: shared })
    expect(fresh.statusCode).toBe(201)
    expect(fresh.headers['idempotent-replayed']).toBeUndefined()
    expect((await paymentRows(ctx, theirs.id)).map((row) => row.amount)).toEqual([100, 200])
  })
})

describe('POST /api/v1/payments/:id/refunds', () => {
  test('partial refunds keep the status (partially_refunded); the last one moves the order to refunded; never more than captured', async ({ ctx, admin }) => {
    const { order, payment } = await insertOrder(ctx, { status: 'paid', items: [{ unitPriceMinor: 3000 }] })
    const partial = await refund(ctx, admin, payment!.id, { amount: 12.5, reason: 'Scratched' })
    expect(partial.statusCode, partial.body).toBe(201)
    expect(partial.json<Refund>()).toMatchObject({ payment_id: payment!.id, order_id: order.id, amount: 12.5, currency: 'USD', reason: 'Scratched' })
    expect(await getOrder(ctx, admin, order.id)).toMatchObject({ status: 'paid', payment_status: 'partially_refunded', amount_paid: 30, amount_refunded: 12.5 })

    const over = await refund(ctx, admin, payment!.id, { amount: 17.51 })
    expect(over.statusCode).toBe(400)
    expect(over.json().error.details).toEqual([{ field: 'amount', message: "Field 'amount' is more than the 17.50 USD left to refund on this payment" }])

    const rest = await refund(ctx, admin, payment!.id)
    expect(rest.statusCode, rest.body).toBe(201)
    expect(rest.json<Refund>().amount).toBe(17.5)
    const refunded = await getOrder(ctx, admin, order.id)
    expect(refunded).toMatchObject({ status: 'refunded', payment_status: 'refunded', amount_refunded: 30 })
    expect(refunded.payments[0]).toMatchObject({ amount_refunded: 30, refunds: [expect.objectContaining({ amount: 12.5 }), expect.objectContaining({ amount: 17.5 })] })
    expect(await ctx.orderEvents(order.id)).toEqual(['order.refunded', 'order.refunded'])
    const [last] = await ctx.handle.sql<{ data: Order & { refund: Refund } }[]>`
      select data from events where data->>'order_id' = ${order.id} order by id desc limit 1`
    expect(last!.data).toMatchObject({ status: 'refunded', refund: rest.json() })

    // Refunding the fully refunded order again is 409, with or without an amount (docs/orders.md, Payments and refunds).
    for (const body of [{}, { amount: 1 }]) {
      const again = await refund(ctx, admin, payment!.id, body)
      expect(again.statusCode).toBe(409)
      expect(again.json().error.code).toBe('invalid_state_transition')
    }
    expect(await paymentRows(ctx, order.id)).toEqual([{ status: 'refunded', amount: 3000, refunded: 3000 }])
  })

  test('shipped and completed orders refunded in full move to refunded', async ({ ctx, admin }) => {
    for (const status of ['shipped', 'completed'] as const) {
      const { order, payment } = await insertOrder(ctx, { status })
      expect((await refund(ctx, admin, payment!.id)).statusCode).toBe(201)
      expect(await orderRow(ctx, order.id)).toMatchObject({ status: 'refunded', paymentStatus: 'refunded' })
      expect(await ctx.orderEvents(order.id)).toEqual(['order.refunded'])
    }
  })

  test('with two payments, refunding one in full is partially_refunded; the order is refunded when both are', async ({ ctx, admin }) => {
    const { order } = await insertOrder(ctx, { items: [{ unitPriceMinor: 1000 }] })
    const first = (await pay(ctx, admin, order.id, { ...VISA, amount: 4 })).json<Payment>()
    const second = (await pay(ctx, admin, order.id, VISA)).json<Payment>()
    expect((await refund(ctx, admin, first.id)).statusCode).toBe(201)
    expect(await orderRow(ctx, order.id)).toMatchObject({ status: 'paid', paymentStatus: 'partially_refunded', refundedMinor: 400 })
    // The payment refunded in full refuses another refund by its state: 409 conflict, not 400.
    for (const body of [{}, { amount: 0.01 }]) {
      const again = await refund(ctx, admin, first.id, body)
      expect(again.statusCode).toBe(409)
      expect(again.json().error).toMatchObject({ code: 'conflict', message: 'This payment is already refunded in full' })
    }
    expect((await refund(ctx, admin, second.id)).statusCode).toBe(201)
    expect(await orderRow(ctx, order.id)).toMatchObject({ status: 'refunded', paymentStatus: 'refunded', refundedMinor: 1000 })
  })

  test('a declined payment cannot be refunded (409); unknown payments 404; customers 403; the key is required', async ({ ctx, admin }) => {
    const { order: pending } = await insertOrder(ctx)
    expect((await pay(ctx, admin, pending.id, { method: 'card', token: 'tok_declined' })).statusCode).toBe(402)
    const [failed] = await ctx.handle.sql<{ id: string }[]>`select id from payments where order_id = ${pending.id}`
    const refused = await refund(ctx, admin, failed!.id)
    expect(refused.statusCode).toBe(409)
    expect(refused.json().error.message).toBe('Only a captured payment can be refunded; this one is failed')
    expect((await refund(ctx, admin, UNKNOWN_ID)).statusCode).toBe(404)

    const customer = await ctx.signIn('customer')
    const { order, payment } = await insertOrder(ctx, { status: 'paid', customerId: customer.customerId })
    expect((await refund(ctx, admin, payment!.id, {}, { token: customer.token })).statusCode).toBe(403)
    const url = `/api/v1/payments/${payment!.id}/refunds`
    const keyless = await ctx.request({ method: 'POST', url, payload: {}, token: admin })
    expect(keyless.statusCode).toBe(400)
    expect(keyless.json().error.message).toBe("Header 'Idempotency-Key' is required")
    const negative = await ctx.request({ method: 'POST', url, payload: { amount: -1 }, headers: { 'idempotency-key': key() }, token: admin })
    expect(negative.statusCode).toBe(400)
    expect(negative.json().error.details[0].field).toBe('amount')
    const [refunds] = await ctx.handle.sql<{ n: number }[]>`select count(*)::int as n from refunds where order_id = ${order.id}`
    expect(refunds!.n).toBe(0)
    expect(await orderRow(ctx, order.id)).toMatchObject({ status: 'paid', paymentStatus: 'paid', refundedMinor: 0 })
  })

  test('the same key replays the refund: one refund; a failure after the refund insert keeps nothing', async ({ ctx, admin }) => {
    const { order, payment } = await insertOrder(ctx, { status: 'paid' })
    const sameKey = key()
    const responses = await Promise.all([refund(ctx, admin, payment!.id, { amount: 1 }, { key: sameKey }), refund(ctx, admin, payment!.id, { amount: 1 }, { key: sameKey })])
    const replayed = await refund(ctx, admin, payment!.id, { amount: 1 }, { key: sameKey })
    expect(replayed.headers['idempotent-replayed']).toBe('true')
    expect(responses.filter((response) => response.statusCode === 201).length).toBeGreaterThanOrEqual(1)
    expect((await paymentRows(ctx, order.id))[0]!.refunded).toBe(100)

    const events = await ctx.countRows('events')
    const failed = await ctx.withFailingInserts('events', () => refund(ctx, admin, payment!.id, { amount: 2 }))
    expect(failed.statusCode).toBe(500)
    expect((await paymentRows(ctx, order.id))[0]!.refunded).toBe(100)
    expect(await ctx.countRows('events')).toBe(events)
    expect(await orderRow(ctx, order.id)).toMatchObject({ refundedMinor: 100, paymentStatus: 'partially_refunded' })
  })
})

describe('POST /api/v1/payments/:id/refund (deprecated alias)', () => {
  const deprecated = {
    deprecation: `@${Date.UTC(2026, 10, 24) / 1000}`,
    sunset: 'Tue, 01 Jun 2027 00:00:00 GMT',
  }

  test('refunds like /refunds, and every answer, errors included, carries Deprecation, Sunset and the successor Link', async ({ ctx, admin }) => {
    const { order, payment } = await insertOrder(ctx, { status: 'paid', items: [{ unitPriceMinor: 1000 }] })
    const idempotencyKey = key()
    const request = { method: 'POST' as const, url: `/api/v1/payments/${payment!.id}/refund`, payload: { amount: 4 }, token: admin }
    const refunded = await ctx.request({ ...request, headers: { 'idempotency-key': idempotencyKey } })
    expect(refunded.statusCode, refunded.body).toBe(201)
    expect(refunded.json<Refund>()).toMatchObject({ payment_id: payment!.id, amount: 4 })
    expect(refunded.headers).toMatchObject({ ...deprecated, link: `</api/v1/payments/${payment!.id}/refunds>; rel="successor-version"` })
    expect(await getOrder(ctx, admin, order.id)).toMatchObject({ payment_status: 'partially_refunded', amount_refunded: 4 })

    // A key belongs to one request, path included: on the successor it is another request (422);
    // on the alias again, the same refund replayed.
    const elsewhere = await refund(ctx, admin, payment!.id, { amount: 4 }, { key: idempotencyKey })
    expect(elsewhere.statusCode).toBe(422)
    const again = await ctx.request({ ...request, headers: { 'idempotency-key': idempotencyKey } })
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.json()).toEqual(refunded.json())
    expect(await paymentRows(ctx, order.id)).toEqual([{ status: 'partially_refunded', amount: 1000, refunded: 400 }])

    const missing = await ctx.request({ ...request, url: `/api/v1/payments/${UNKNOWN_ID}/refund`, headers: { 'idempotency-key': key() } })
    expect(missing.statusCode).toBe(404)
    expect(missing.headers).toMatchObject({ ...deprecated, link: `</api/v1/payments/${UNKNOWN_ID}/refunds>; rel="successor-version"` })

    // The successor is not deprecated.
    const current = await refund(ctx, admin, payment!.id, { amount: 1 })
    expect(current.statusCode).toBe(201)
    expect(current.headers.deprecation).toBeUndefined()
    expect(current.headers.sunset).toBeUndefined()
  })

  test('is marked deprecated in the OpenAPI document, with the three headers on its answers', async ({ ctx }) => {
    const document = (await ctx.request({ method: 'GET', url: '/api/v1/openapi.json' })).json()
    const alias = document.paths['/api/v1/payments/{id}/refund'].post
    expect(alias.deprecated).toBe(true)
    expect(alias.description).toContain('use /api/v1/payments/{id}/refunds instead')
    for (const status of ['201', '404']) {
      expect(Object.keys(alias.responses[status].headers)).toEqual(expect.arrayContaining(['Deprecation', 'Sunset', 'Link']))
    }
    const successor = document.paths['/api/v1/payments/{id}/refunds'].post
    expect(successor.deprecated).toBeUndefined()
    expect(Object.keys(successor.responses['201'].headers)).not.toContain('Deprecation')
  })
})

describe('cancelling an order with payments', () => {
  test('a pending order with a part payment is refunded that payment and cancelled', async ({ ctx, admin }) => {
    const { order } = await insertOrder(ctx, { items: [{ unitPriceMinor: 1000 }] })
    expect((await pay(ctx, admin, order.id, { ...VISA, amount: 3 })).statusCode).toBe(201)
    const cancelled = await ctx.expectStatus<Order>(200, { method: 'POST', url: `/api/v1/orders/${order.id}/cancel`, token: admin })
    expect(cancelled).toMatchObject({ status: 'cancelled', payment_status: 'refunded', amount_paid: 3, amount_refunded: 3 })
    expect(await ctx.orderEvents(order.id)).toEqual(['payment.succeeded', 'order.refunded', 'order.cancelled'])
  })
})
