/**
 * Checkouts paid through Stripe (the adapter on the official SDK, at the fake Stripe) over real
 * HTTP: the card that pays, 3-D Secure settled by a second completion or by the webhook, a
 * decline, a Stripe that does not answer, refunds, and PAYMENT_CAPTURE=manual (capture, void,
 * cancel, capture at fulfillment).
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest'
import type { CheckoutPaymentPending, Order, Payment, Product, Refund } from '@commerce/domain'
import { promotions } from '@commerce/db'
import { CARD, key, startStripeShop, type ErrorBody, type StripeShop } from './stripe-shop.js'
import { insertOrder } from './order-fixtures.js'

const minor = (amount: number) => Math.round(amount * 100)

let shop: StripeShop

beforeAll(async () => {
  shop = await startStripeShop()
})
afterEach(() => shop.reset())
afterAll(() => shop.close())

/** A checkout of the product and its 202: the payment waits for 3-D Secure; answers the PaymentIntent too. */
async function awaitingThreeDSecure(product: Product, idempotencyKey = key()) {
  const checkout = await shop.startCheckout(product)
  const pending = await shop.complete<CheckoutPaymentPending>(checkout.id, CARD.threeDSecure, idempotencyKey)
  expect(pending.status, JSON.stringify(pending.body)).toBe(202)
  const [intent] = shop.intentsOf(pending.body.payment.id)
  return { checkout, pending: pending.body, intent: intent! }
}

/**
 * A checkout of one unit whose first completion Stripe does not answer within the adapter's
 * timeoutMs (300 ms): `fault` makes it hang or answer late. Answers 502, the payment pending and
 * unanswered, the unit held.
 */
async function unansweredCheckout(title: string, fault: () => void) {
  shop.use(shop.adapter({ timeoutMs: 300 }))
  const product = await shop.createProduct({ title, price: 12, inventory_quantity: 1 })
  const checkout = await shop.startCheckout(product)
  fault()
  const first = await shop.complete<ErrorBody>(checkout.id, CARD.visa)
  expect(first.status, JSON.stringify(first.body)).toBe(502)
  expect(first.body.error.code).toBe('payment_provider_error')
  const [payment] = await shop.paymentsOf(checkout.id)
  expect(payment).toMatchObject({ status: 'pending', failureCode: 'provider_unanswered', orderId: null })
  expect(await shop.stockOf(product.id)).toBe(0)
  expect(await shop.ordersOf(checkout.id)).toEqual([])
  return { product, checkout, payment: payment! }
}

describe('POST /checkouts/:id/complete with Stripe', () => {
  test('pm_card_visa: 201 with the order paid and its payment captured (provider stripe; the PaymentIntent is its reference, not shown); one PaymentIntent, created with our idempotency key', async () => {
    const product = await shop.createProduct({ title: 'Teapot', price: 24, inventory_quantity: 5 })
    const checkout = await shop.startCheckout(product, 2)
    const total = checkout.totals.total

    const placed = await shop.complete<Order>(checkout.id, CARD.visa)
    expect(placed.status, JSON.stringify(placed.body)).toBe(201)
    const order = placed.body
    expect(order).toMatchObject({ status: 'paid', payment_status: 'paid', amount_paid: total, amount_authorized: 0, totals: { total } })
    expect(order.payments).toEqual([
      expect.objectContaining({
        provider: 'stripe',
        method: 'card',
        status: 'captured',
        capture_mode: 'automatic',
        amount: total,
        amount_captured: total,
        amount_refunded: 0,
        currency: 'GBP',
        order_id: order.id,
        checkout_id: checkout.id,
      }),
    ])

    const [payment] = await shop.paymentsOf(checkout.id)
    const intents = shop.intentsOf(payment!.id)
    expect(intents).toHaveLength(1)
    const intent = intents[0]!
    expect(payment).toMatchObject({ id: order.payments[0]!.id, status: 'captured', provider: 'stripe', reference: intent.id, orderId: order.id })
    expect(JSON.stringify(order)).not.toContain(intent.id)
    expect(intent).toMatchObject({
      status: 'succeeded',
      amount: minor(total),
      amount_received: minor(total),
      currency: 'gbp',
      capture_method: 'automatic',
      payment_method: CARD.visa,
    })
    expect(shop.createsOf(payment!.id)).toEqual([
      expect.objectContaining({
        idempotencyKey: `checkout-payment:${payment!.id}`,
        params: expect.objectContaining({ amount: String(minor(total)), currency: 'gbp', confirm: 'true', capture_method: 'automatic' }),
      }),
    ])
    expect(await shop.stockOf(product.id)).toBe(3)
    // Held while Stripe decided (reserved), then committed by the order.
    expect(
      await shop.ctx.handle.sql`select reason, reserved_delta as reserved, committed_delta as committed from inventory_movements where order_id = ${order.id} order by id`,
    ).toEqual([
      { reason: 'reserved', reserved: 2, committed: 0 },
      { reason: 'committed', reserved: -2, committed: 2 },
    ])
    expect(await shop.orderEvents(order.id)).toEqual(['order.created', 'payment.succeeded', 'order.paid'])
    // The answer is the order as it is stored.
    expect((await shop.call<Order>('GET', `/api/v1/orders/${order.id}`, { token: shop.admin })).body).toEqual(order)

    // Stripe's webhook for the same payment comes after the answer: it finds the order placed.
    const succeeded = shop.eventOf('payment_intent.succeeded', intent.id)
    await shop.fake.sendEvent(succeeded)
    expect(shop.fake.sent.filter((delivery) => delivery.event.id === succeeded.id).map((delivery) => delivery.status)).toEqual([200])
    expect(await shop.ordersOf(checkout.id)).toEqual([{ id: order.id, status: 'paid', paymentStatus: 'paid' }])
    expect(await shop.orderEvents(order.id)).toEqual(['order.created', 'payment.succeeded', 'order.paid'])
    expect(await shop.stockOf(product.id)).toBe(3)
  })

  test('3-D Secure: 202 with next_action use_sdk and the client secret, the stock held and the cart closed; once the customer confirms, completing again with the same key places one order (201), which that key then replays', async () => {
    const product = await shop.createProduct({ title: 'Kettle', price: 30, inventory_quantity: 4 })
    const idempotencyKey = key()
    const { checkout, pending, intent } = await awaitingThreeDSecure(product, idempotencyKey)
    const total = checkout.totals.total
    expect(pending).toEqual({
      checkout_id: checkout.id,
      payment: expect.objectContaining({ provider: 'stripe', status: 'requires_action', amount: total, amount_captured: 0, order_id: null }),
      next_action: { type: 'use_sdk', client_secret: intent.client_secret, redirect_url: null },
      reserved_until: expect.any(String),
    })
    expect(intent.client_secret).toMatch(new RegExp(`^${intent.id}_secret_`))
    expect(await shop.paymentsOf(checkout.id)).toEqual([
      expect.objectContaining({ id: pending.payment.id, status: 'requires_action', reference: intent.id, orderId: null }),
    ])
    expect(await shop.stockOf(product.id)).toBe(3)
    const change = await shop.call<ErrorBody>('POST', `/api/v1/carts/${checkout.cart_id}/items`, { body: { product_id: product.id, quantity: 1 } })
    expect(change.status).toBe(409)
    expect(change.body.error.code).toBe('conflict')
    expect(await shop.ordersOf(checkout.id)).toEqual([])

    shop.fake.completeAction(intent.id)
    // A 202 is not stored with the key: the same key asks Stripe again (retrieve) and places the order.
    const placed = await shop.complete<Order>(checkout.id, CARD.threeDSecure, idempotencyKey)
    expect(placed.status, JSON.stringify(placed.body)).toBe(201)
    expect(placed.headers.get('idempotent-replayed')).toBeNull()
    expect(placed.body).toMatchObject({ status: 'paid', payment_status: 'paid', amount_paid: total })
    expect(placed.body.payments).toEqual([expect.objectContaining({ id: pending.payment.id, provider: 'stripe', status: 'captured', amount_captured: total })])
    expect(shop.fake.requests).toContainEqual(expect.objectContaining({ method: 'GET', path: `/v1/payment_intents/${intent.id}` }))
    expect((await shop.call<Order>('GET', `/api/v1/orders/${placed.body.id}`, { token: shop.admin })).body).toEqual(placed.body)

    const replay = await shop.complete<Order>(checkout.id, CARD.threeDSecure, idempotencyKey)
    expect(replay.status).toBe(201)
    expect(replay.headers.get('idempotent-replayed')).toBe('true')
    expect(replay.body).toEqual(placed.body)
    expect(await shop.ordersOf(checkout.id)).toEqual([{ id: placed.body.id, status: 'paid', paymentStatus: 'paid' }])
    expect(shop.intentsOf(pending.payment.id)).toHaveLength(1)
    expect(shop.createsOf(pending.payment.id)).toHaveLength(1)
    expect(await shop.stockOf(product.id)).toBe(3)
    expect(await shop.orderEvents(placed.body.id)).toEqual(['order.created', 'payment.succeeded', 'order.paid'])
  })

  test('3-D Secure confirmed: Stripe’s webhook payment_intent.succeeded, sent to the listening API, places the order; a later completion answers 200 with that order', async () => {
    shop.fake.webhooks = 'auto'
    const product = await shop.createProduct({ title: 'Toaster', price: 45, inventory_quantity: 2 })
    const { checkout, pending, intent } = await awaitingThreeDSecure(product)
    expect(await shop.ordersOf(checkout.id)).toEqual([])

    shop.fake.completeAction(intent.id)
    const succeeded = shop.eventOf('payment_intent.succeeded', intent.id)
    await expect.poll(() => shop.fake.sent.find((delivery) => delivery.event.id === succeeded.id)?.status, { timeout: 10_000 }).toBe(200)
    const orders = await shop.ordersOf(checkout.id)
    expect(orders).toEqual([{ id: expect.any(String), status: 'paid', paymentStatus: 'paid' }])
    const orderId = orders[0]!.id
    expect(await shop.paymentsOf(checkout.id)).toEqual([expect.objectContaining({ id: pending.payment.id, status: 'captured', orderId, reference: intent.id })])
    const after = await shop.call<{ status: string; order_id: string }>('GET', `/api/v1/checkouts/${checkout.id}`)
    expect(after.body).toMatchObject({ status: 'completed', order_id: orderId })

    const later = await shop.complete<Order>(checkout.id, CARD.threeDSecure)
    expect(later.status, JSON.stringify(later.body)).toBe(200)
    expect(later.body).toMatchObject({ id: orderId, status: 'paid', payments: [expect.objectContaining({ id: pending.payment.id, status: 'captured' })] })
    expect(await shop.ordersOf(checkout.id)).toHaveLength(1)
    expect(await shop.orderEvents(orderId)).toEqual(['order.created', 'payment.succeeded', 'order.paid'])
    expect(await shop.stockOf(product.id)).toBe(1)
  })

  test('3-D Secure failed by the customer: completing again answers 402 (payment_intent_authentication_failure) and gives the stock back', async () => {
    const product = await shop.createProduct({ title: 'Unconfirmed chair', price: 60, inventory_quantity: 1 })
    const { checkout, pending, intent } = await awaitingThreeDSecure(product)
    expect(await shop.stockOf(product.id)).toBe(0)
    shop.fake.completeAction(intent.id, { succeed: false })

    const declined = await shop.complete<ErrorBody>(checkout.id, CARD.threeDSecure)
    expect(declined.status, JSON.stringify(declined.body)).toBe(402)
    expect(declined.body.error).toMatchObject({ code: 'payment_declined', details: [{ field: 'payment.token', message: 'payment_intent_authentication_failure' }] })
    expect(await shop.paymentsOf(checkout.id)).toEqual([expect.objectContaining({ id: pending.payment.id, status: 'failed', failureCode: 'payment_intent_authentication_failure' })])
    expect(await shop.stockOf(product.id)).toBe(1)
    expect(await shop.ordersOf(checkout.id)).toEqual([])
  })

  test('pm_card_chargeDeclined: 402, the stock and the coupon use given back, the cart open again, the payment failed with payment.failed; a good card then places the order', async () => {
    await shop.ctx.handle.db.insert(promotions).values({ code: 'STRIPE10', name: 'STRIPE10', type: 'percentage', percentOffPpm: 100_000, usageLimit: 5 })
    const timesUsed = async () => (await shop.ctx.handle.sql<{ n: number }[]>`select times_used as n from promotions where code = 'STRIPE10'`)[0]!.n
    const product = await shop.createProduct({ title: 'Declined lamp', price: 20, inventory_quantity: 2 })
    const checkout = await shop.startCheckout(product)
    expect((await shop.call('POST', `/api/v1/carts/${checkout.cart_id}/coupons`, { body: { code: 'stripe10' } })).status).toBe(201)

    const declined = await shop.complete<ErrorBody>(checkout.id, CARD.declined)
    expect(declined.status, JSON.stringify(declined.body)).toBe(402)
    expect(declined.body.error).toMatchObject({
      code: 'payment_declined',
      message: 'Your card was declined.',
      details: [{ field: 'payment.token', message: 'generic_decline' }],
    })
    const [payment] = await shop.paymentsOf(checkout.id)
    const [intent] = shop.intentsOf(payment!.id)
    expect(payment).toMatchObject({ status: 'failed', failureCode: 'generic_decline', orderId: null, reference: intent!.id, captured: 0 })
    expect(intent).toMatchObject({ status: 'requires_payment_method', amount_received: 0 })
    expect(await shop.stockOf(product.id)).toBe(2)
    expect(await timesUsed()).toBe(0)
    expect(await shop.ordersOf(checkout.id)).toEqual([])
    const events = await shop.ctx.handle.sql<{ kind: string; data: Payment }[]>`select kind, data from events where resource_id = ${payment!.id} order by id`
    expect(events).toEqual([{ kind: 'payment.failed', data: expect.objectContaining({ id: payment!.id, provider: 'stripe', status: 'failed', failure_code: 'generic_decline' }) }])

    // The cart takes changes again, and the checkout pays with another card.
    expect((await shop.call('POST', `/api/v1/carts/${checkout.cart_id}/items`, { body: { product_id: product.id, quantity: 1 } })).status).toBe(201)
    const paid = await shop.complete<Order>(checkout.id, CARD.visa)
    expect(paid.status, JSON.stringify(paid.body)).toBe(201)
    expect(paid.body.items).toEqual([expect.objectContaining({ product_id: product.id, quantity: 2 })])
    expect(paid.body.coupons).toEqual([expect.objectContaining({ code: 'STRIPE10' })])
    expect(await shop.stockOf(product.id)).toBe(0)
    expect(await timesUsed()).toBe(1)
    expect((await shop.paymentsOf(checkout.id)).map((row) => row.status)).toEqual(['failed', 'captured'])
  })

  test('an unknown payment method (Stripe answers 400 resource_missing): 402 payment_declined naming it, the stock given back at once, the payment failed; a good card then places the order', async () => {
    const product = await shop.createProduct({ title: 'Unknown-card vase', price: 7.5, inventory_quantity: 1 })
    const checkout = await shop.startCheckout(product)
    const refused = await shop.complete<ErrorBody>(checkout.id, 'pm_does_not_exist')
    expect(refused.status, JSON.stringify(refused.body)).toBe(402)
    expect(refused.body.error).toMatchObject({
      code: 'payment_declined',
      message: "Stripe refused the request: No such PaymentMethod: 'pm_does_not_exist'",
      details: [{ field: 'payment.token', message: 'resource_missing' }],
    })
    const [payment] = await shop.paymentsOf(checkout.id)
    expect(payment).toMatchObject({ status: 'failed', failureCode: 'resource_missing', reference: null, orderId: null })
    expect(await reservationStatus(payment!.id)).toBe('released')
    expect(await shop.stockOf(product.id)).toBe(1)
    expect(shop.intentsOf(payment!.id)).toEqual([])

    const paid = await shop.complete<Order>(checkout.id, CARD.visa)
    expect(paid.status, JSON.stringify(paid.body)).toBe(201)
    expect(await shop.stockOf(product.id)).toBe(0)
  })

  test('Stripe not answering (the create hangs past timeoutMs, then a 500): 502 each time and the stock held; once Stripe answers, the payment is created under the same idempotency key: one PaymentIntent, one order', async () => {
    const { product, checkout, payment } = await unansweredCheckout('Flaky radio', () => shop.fake.hangNext(1))
    expect(payment).toMatchObject({ reference: null })
    expect(shop.intentsOf(payment.id)).toEqual([])

    // Asked again, Stripe fails (500, no retries): still unknown, still held.
    shop.fake.failNext(1, 500)
    const failed = await shop.complete<ErrorBody>(checkout.id, CARD.visa)
    expect(failed.status, JSON.stringify(failed.body)).toBe(502)
    expect(await shop.stockOf(product.id)).toBe(0)
    expect(await shop.ordersOf(checkout.id)).toEqual([])

    const placed = await shop.complete<Order>(checkout.id, CARD.visa)
    expect(placed.status, JSON.stringify(placed.body)).toBe(201)
    const intents = shop.intentsOf(payment.id)
    expect(intents).toHaveLength(1)
    // The hung create and the one that went through: the same key, so Stripe could never charge twice.
    expect(shop.createsOf(payment.id).map((request) => request.idempotencyKey)).toEqual([`checkout-payment:${payment.id}`, `checkout-payment:${payment.id}`])
    expect(placed.body.payments).toEqual([expect.objectContaining({ id: payment.id, status: 'captured' })])
    expect(await shop.paymentsOf(checkout.id)).toEqual([expect.objectContaining({ id: payment.id, status: 'captured', reference: intents[0]!.id })])
    expect(await shop.ordersOf(checkout.id)).toHaveLength(1)
    expect(await shop.stockOf(product.id)).toBe(0)
  })

  test('the answer to the create is lost (Stripe answers after timeoutMs): 502, the stock held; completing again finds that PaymentIntent by our payment id and places the order: one PaymentIntent, one order', async () => {
    const { product, checkout, payment } = await unansweredCheckout('Slow clock', () => shop.fake.setLatency(1500))
    // Stripe charged after all: the intent exists, the API does not know it yet.
    await expect.poll(() => shop.intentsOf(payment.id).map((intent) => intent.status), { timeout: 10_000 }).toEqual(['succeeded'])
    expect(await shop.stockOf(product.id)).toBe(0)
    expect(await shop.ordersOf(checkout.id)).toEqual([])

    shop.fake.setLatency(0)
    const placed = await shop.complete<Order>(checkout.id, CARD.visa)
    expect(placed.status, JSON.stringify(placed.body)).toBe(201)
    const [intent] = shop.intentsOf(payment.id)
    expect(shop.intentsOf(payment.id)).toHaveLength(1)
    expect(shop.createsOf(payment.id)).toHaveLength(1)
    expect(await shop.paymentsOf(checkout.id)).toEqual([expect.objectContaining({ id: payment.id, status: 'captured', reference: intent!.id, orderId: placed.body.id })])
    expect(await shop.ordersOf(checkout.id)).toHaveLength(1)
    expect(await shop.stockOf(product.id)).toBe(0)
  })
})

async function reservationStatus(paymentId: string) {
  const [row] = await shop.ctx.handle.sql<{ status: string }[]>`select status from checkout_reservations where payment_id = ${paymentId}`
  return row?.status
}

describe('POST /orders/:id/payments with a payment method Stripe does not know', () => {
  test('402 payment_declined naming the refusal, and a failed payment kept; never a 500', async () => {
    const order = await insertOrder(shop.ctx, { status: 'pending', currency: 'GBP', items: [{ unitPriceMinor: 1250 }] })
    const refused = await shop.call<ErrorBody>('POST', `/api/v1/orders/${order.order.id}/payments`, {
      body: { method: 'card', token: 'pm_does_not_exist' },
      key: key(),
      token: shop.admin,
    })
    expect(refused.status, JSON.stringify(refused.body)).toBe(402)
    expect(refused.body.error).toMatchObject({ code: 'payment_declined', details: [{ field: 'token', message: 'resource_missing' }] })
    const rows = await shop.ctx.handle.sql<{ status: string; failureCode: string }[]>`
      select status, failure_code as "failureCode" from payments where order_id = ${order.order.id}`
    expect(rows).toEqual([{ status: 'failed', failureCode: 'resource_missing' }])
  })
})

describe('POST /payments/:id/refunds of a Stripe payment', () => {
  test('20 concurrent partial refunds of one captured payment: those that fit are refunded, the rest refused (400 or 409); never more than was captured, at Stripe or here', async () => {
    const product = await shop.createProduct({ title: 'Refundable rug', price: 10, inventory_quantity: 1 })
    const checkout = await shop.startCheckout(product)
    const placed = await shop.complete<Order>(checkout.id, CARD.visa)
    expect(placed.status, JSON.stringify(placed.body)).toBe(201)
    const order = placed.body
    const payment = order.payments[0]!
    const captured = minor(order.amount_paid)
    const part = Math.floor(captured / 6.5)
    const fit = Math.floor(captured / part)

    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        shop.call<Refund & ErrorBody>('POST', `/api/v1/payments/${payment.id}/refunds`, { body: { amount: part / 100 }, key: key(), token: shop.admin }),
      ),
    )
    const refunded = answers.filter((answer) => answer.status === 201)
    const refused = answers.filter((answer) => answer.status !== 201)
    expect(refunded).toHaveLength(fit)
    expect(refunded.every((answer) => answer.body.amount === part / 100 && answer.body.payment_id === payment.id)).toBe(true)
    for (const answer of refused) {
      expect([400, 409], JSON.stringify(answer.body)).toContain(answer.status)
      if (answer.status === 400) expect(answer.body.error.details?.[0]?.field).toBe('amount')
    }

    const sum = fit * part
    expect(sum).toBeLessThanOrEqual(captured)
    const [rows] = await shop.ctx.handle.sql<{ n: number; total: number }[]>`
      select count(*)::int as n, coalesce(sum(amount_minor), 0)::int as total from refunds where payment_id = ${payment.id}`
    expect(rows).toEqual({ n: fit, total: sum })
    expect(await shop.paymentsOf(checkout.id)).toEqual([expect.objectContaining({ status: 'partially_refunded', captured, refunded: sum })])
    const after = await shop.call<Order>('GET', `/api/v1/orders/${order.id}`, { token: shop.admin })
    expect(after.body).toMatchObject({ status: 'paid', payment_status: 'partially_refunded', amount_paid: captured / 100, amount_refunded: sum / 100 })
    expect(after.body.payments[0]).toMatchObject({ amount_refunded: sum / 100, refunds: expect.any(Array) })
    expect(after.body.payments[0]!.refunds).toHaveLength(fit)
    // Stripe refunded exactly that: the refused refunds never reached it.
    const [intent] = shop.intentsOf(payment.id)
    const charge = shop.fake.charges.get(intent!.latest_charge as string)
    expect(charge).toMatchObject({ amount_captured: captured, amount_refunded: sum })
    expect(shop.fake.requests.filter((request) => request.path === '/v1/refunds' && request.params.payment_intent === intent!.id)).toHaveLength(fit)
  })
})

describe('PAYMENT_CAPTURE=manual with Stripe', () => {
  let manual: StripeShop

  beforeAll(async () => {
    manual = await startStripeShop({ paymentCapture: 'manual' })
  })
  afterEach(() => manual.reset())
  afterAll(() => manual.close())

  /** A checkout paid with pm_card_visa under manual capture: the order, its payment and the PaymentIntent. */
  async function authorizedOrder(price: number, stock = 3) {
    const product = await manual.createProduct({ title: `Held ${price}`, price, inventory_quantity: stock })
    const checkout = await manual.startCheckout(product)
    const placed = await manual.complete<Order>(checkout.id, CARD.visa)
    expect(placed.status, JSON.stringify(placed.body)).toBe(201)
    const payment = placed.body.payments[0]!
    const [intent] = manual.intentsOf(payment.id)
    return { product, checkout, order: placed.body, payment, intent: intent! }
  }

  const paymentAction = (paymentId: string, action: 'capture' | 'cancel', body?: Record<string, unknown>) =>
    manual.call<Payment & ErrorBody>('POST', `/api/v1/payments/${paymentId}/${action}`, { key: key(), token: manual.admin, ...(body ? { body } : {}) })

  const getOrder = async (orderId: string) => (await manual.call<Order>('GET', `/api/v1/orders/${orderId}`, { token: manual.admin })).body

  test('a checkout only authorizes: 201 with the order pending, payment_status authorized and amount_authorized the total (payment.authorized); the PaymentIntent waits for capture', async () => {
    const { product, order, payment, intent } = await authorizedOrder(20)
    const total = order.totals.total
    expect(order).toMatchObject({ status: 'pending', payment_status: 'authorized', amount_paid: 0, amount_authorized: total })
    expect(payment).toMatchObject({ provider: 'stripe', status: 'authorized', capture_mode: 'manual', amount: total, amount_captured: 0 })
    expect(intent).toMatchObject({ status: 'requires_capture', capture_method: 'manual', amount_capturable: minor(total), amount_received: 0 })
    expect(manual.createsOf(payment.id)).toEqual([expect.objectContaining({ params: expect.objectContaining({ capture_method: 'manual' }) })])
    expect(await manual.orderEvents(order.id)).toEqual(['order.created', 'payment.authorized'])
    expect(await manual.stockOf(product.id)).toBe(2)
  })

  test('3-D Secure under manual capture: once confirmed, the webhook payment_intent.amount_capturable_updated places the order authorized', async () => {
    const product = await manual.createProduct({ title: 'Held after 3DS', price: 35, inventory_quantity: 1 })
    const checkout = await manual.startCheckout(product)
    const pending = await manual.complete<CheckoutPaymentPending>(checkout.id, CARD.threeDSecure)
    expect(pending.status, JSON.stringify(pending.body)).toBe(202)
    expect(pending.body.payment).toMatchObject({ status: 'requires_action', capture_mode: 'manual' })
    const [intent] = manual.intentsOf(pending.body.payment.id)
    manual.fake.completeAction(intent!.id)
    await manual.fake.sendEvent(manual.eventOf('payment_intent.amount_capturable_updated', intent!.id))

    const [order] = await manual.ordersOf(checkout.id)
    expect(order).toMatchObject({ status: 'pending', paymentStatus: 'authorized' })
    expect(await manual.paymentsOf(checkout.id)).toEqual([
      expect.objectContaining({ status: 'authorized', reference: intent!.id, amount: minor(checkout.totals.total), captured: 0, orderId: order!.id }),
    ])
    expect(await manual.orderEvents(order!.id)).toEqual(['order.created', 'payment.authorized'])
    const later = await manual.complete<Order>(checkout.id, CARD.threeDSecure)
    expect(later.status).toBe(200)
    expect(later.body).toMatchObject({ id: order!.id, amount_authorized: checkout.totals.total, amount_paid: 0 })
  })

  test('POST /payments/:id/capture of part, twice at once: one captures (partially_captured, the rest released at Stripe, the order paid), the other is 409; Stripe captured once', async () => {
    const { order, payment, intent } = await authorizedOrder(20)
    const total = order.totals.total
    const part = total - 5
    const answers = await Promise.all([paymentAction(payment.id, 'capture', { amount: part }), paymentAction(payment.id, 'capture', { amount: part })])
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409])
    const captured = answers.find((answer) => answer.status === 200)!.body
    const refused = answers.find((answer) => answer.status === 409)!.body
    expect(captured).toMatchObject({ id: payment.id, status: 'partially_captured', amount: total, amount_captured: part })
    expect(refused.error).toMatchObject({ code: 'conflict', message: 'Only an authorized payment can be captured; this one is partially_captured' })

    // The shop took what it decided to take: the order is paid; the released rest is still owed (payment_status unpaid).
    expect(await getOrder(order.id)).toMatchObject({ status: 'paid', payment_status: 'unpaid', amount_paid: part, amount_authorized: 0 })
    expect(manual.fake.intents.get(intent.id)).toMatchObject({ status: 'succeeded', amount_received: minor(part), amount_capturable: 0 })
    expect(manual.fake.requests.filter((request) => request.path === `/v1/payment_intents/${intent.id}/capture`)).toHaveLength(1)
    expect(await manual.orderEvents(order.id)).toEqual(['order.created', 'payment.authorized', 'payment.succeeded', 'order.paid'])

    const again = await paymentAction(payment.id, 'capture', {})
    expect(again.status).toBe(409)
    expect(manual.fake.requests.filter((request) => request.path === `/v1/payment_intents/${intent.id}/capture`)).toHaveLength(1)
  })

  test('POST /payments/:id/cancel voids the authorization: canceled at Stripe, payment.canceled, nothing held; a second cancel is 409', async () => {
    const { order, payment, intent } = await authorizedOrder(25)
    const canceled = await paymentAction(payment.id, 'cancel')
    expect(canceled.status, JSON.stringify(canceled.body)).toBe(200)
    expect(canceled.body).toMatchObject({ id: payment.id, status: 'canceled', amount_captured: 0 })
    expect(manual.fake.intents.get(intent.id)).toMatchObject({ status: 'canceled', amount_capturable: 0, amount_received: 0 })
    expect(await getOrder(order.id)).toMatchObject({ status: 'pending', payment_status: 'unpaid', amount_authorized: 0, amount_paid: 0 })
    expect(await manual.orderEvents(order.id)).toEqual(['order.created', 'payment.authorized', 'payment.canceled'])
    const [event] = await manual.ctx.handle.sql<{ data: Payment }[]>`
      select data from events where kind = 'payment.canceled' and data->>'id' = ${payment.id}`
    expect(event!.data).toMatchObject({ id: payment.id, status: 'canceled', provider: 'stripe' })

    const again = await paymentAction(payment.id, 'cancel')
    expect(again.status).toBe(409)
    expect(again.body.error.message).toBe('Only an authorized payment can be canceled; this one is canceled')
  })

  test('cancelling an order whose payment is only authorized voids it at Stripe and restocks', async () => {
    const { product, order, payment, intent } = await authorizedOrder(30, 2)
    expect(await manual.stockOf(product.id)).toBe(1)
    const cancelled = await manual.call<Order>('POST', `/api/v1/orders/${order.id}/cancel`, { token: manual.admin })
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200)
    expect(cancelled.body).toMatchObject({ status: 'cancelled', amount_authorized: 0, amount_paid: 0, amount_refunded: 0 })
    expect(cancelled.body.payments).toEqual([expect.objectContaining({ id: payment.id, status: 'canceled' })])
    expect(manual.fake.intents.get(intent.id)?.status).toBe('canceled')
    expect(await manual.stockOf(product.id)).toBe(2)
    expect(await manual.orderEvents(order.id)).toEqual(['order.created', 'payment.authorized', 'payment.canceled', 'order.cancelled'])
  })

  test('cancelling an order whose authorization Stripe canceled already (held past 7 days) still cancels it and restocks', async () => {
    const { product, order, payment, intent } = await authorizedOrder(12, 1)
    // Stripe cancels an authorization it has held for 7 days; the API is not told before it acts.
    await manual.adapter().cancel({ reference: intent.id, idempotencyKey: key() })
    const cancelled = await manual.call<Order>('POST', `/api/v1/orders/${order.id}/cancel`, { token: manual.admin })
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200)
    expect(cancelled.body).toMatchObject({ status: 'cancelled', amount_authorized: 0, payments: [expect.objectContaining({ id: payment.id, status: 'canceled' })] })
    expect(await manual.stockOf(product.id)).toBe(1)
    expect(await manual.orderEvents(order.id)).toEqual(['order.created', 'payment.authorized', 'payment.canceled', 'order.cancelled'])
  })

  test('capturing an authorization Stripe canceled already (held past 7 days) is 409: the void is recorded (payment.canceled), nothing held, nothing captured', async () => {
    const { order, payment, intent } = await authorizedOrder(14, 1)
    await manual.adapter().cancel({ reference: intent.id, idempotencyKey: key() })
    const captured = await paymentAction(payment.id, 'capture', {})
    expect(captured.status, JSON.stringify(captured.body)).toBe(409)
    expect(captured.body.error.message).toBe('The authorization expired at the payment provider and was voided; nothing was captured')
    expect(await getOrder(order.id)).toMatchObject({
      status: 'pending',
      amount_authorized: 0,
      amount_paid: 0,
      payments: [expect.objectContaining({ id: payment.id, status: 'canceled', amount_captured: 0 })],
    })
    expect(await manual.orderEvents(order.id)).toEqual(['order.created', 'payment.authorized', 'payment.canceled'])
  })

  test('the first fulfillment of an authorized order captures it in full (order.paid), then ships it', async () => {
    const { order, payment, intent } = await authorizedOrder(40)
    const total = order.totals.total
    const shipped = await manual.call<{ id: string }>('POST', `/api/v1/orders/${order.id}/fulfillments`, {
      body: { carrier: 'Royal Mail', tracking_number: 'RM123456785GB' },
      token: manual.admin,
    })
    expect(shipped.status, JSON.stringify(shipped.body)).toBe(201)
    expect(await getOrder(order.id)).toMatchObject({
      status: 'shipped',
      payment_status: 'paid',
      amount_paid: total,
      amount_authorized: 0,
      payments: [expect.objectContaining({ id: payment.id, status: 'captured', amount_captured: total })],
    })
    expect(manual.fake.intents.get(intent.id)).toMatchObject({ status: 'succeeded', amount_received: minor(total) })
    expect(await manual.orderEvents(order.id)).toEqual(['order.created', 'payment.authorized', 'payment.succeeded', 'order.paid', 'order.shipped'])
  })
})
