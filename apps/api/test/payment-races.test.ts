/**
 * Races around a checkout's payment, over real HTTP with the Stripe adapter at the fake Stripe:
 * the client's completion against Stripe's webhook (together, webhook first, out of order,
 * twice, forged), a completion while another waits for Stripe, and 50 checkouts of the last 7
 * units with a slow Stripe. Whatever the order, one order per checkout, and no lock held while
 * Stripe decides.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest'
import type { CheckoutPaymentPending, Order, PaymentProvider, Product, Refund } from '@commerce/domain'
import { settlePayment } from '@commerce/payments'
import type { EventType, FakeCharge } from '@commerce/payments/fake-stripe'
import { CARD, key, startStripeShop, stripeSignature, WEBHOOK_PATH, WEBHOOK_SECRET, type ErrorBody, type StripeShop } from './stripe-shop.js'

let shop: StripeShop
/** The adapter the app uses by default, for the tests that wrap it. */
let stripe: PaymentProvider

beforeAll(async () => {
  shop = await startStripeShop()
  stripe = shop.adapter()
})
afterEach(() => shop.reset())
afterAll(() => shop.close())

const PLACED_ONCE = ['order.created', 'payment.succeeded', 'order.paid']

/** A checkout of the product whose payment waits for 3-D Secure (202), and its PaymentIntent. */
async function awaitingThreeDSecure(product: Product) {
  const checkout = await shop.startCheckout(product)
  const pending = await shop.complete<CheckoutPaymentPending>(checkout.id, CARD.threeDSecure)
  expect(pending.status, JSON.stringify(pending.body)).toBe(202)
  const [intent] = shop.intentsOf(pending.body.payment.id)
  return { checkout, paymentId: pending.body.payment.id, intent: intent! }
}

/** The statuses the app answered to the deliveries of the events of this PaymentIntent, in the order they were answered. */
function deliveriesOf(intentId: string): { type: EventType; status: number | null }[] {
  return shop.fake.sent.filter((delivery) => delivery.event.data.object.id === intentId).map((delivery) => ({ type: delivery.event.type, status: delivery.status }))
}

/**
 * Webhooks sent as they happen, and the app on the adapter whose answer to authorize reaches it
 * only once it has handled Stripe's webhook of `type` about that payment.
 */
function webhookFirst(type: EventType): void {
  shop.fake.webhooks = 'auto'
  shop.use({
    ...stripe,
    async authorize(request) {
      const payment = await stripe.authorize(request)
      await vi.waitFor(() => expect(deliveriesOf(payment.reference)).toEqual([{ type, status: 200 }]), { timeout: 10_000 })
      return payment
    },
  })
}

async function reservationOf(paymentId: string) {
  const [row] = await shop.ctx.handle.sql<{ status: string }[]>`select status from checkout_reservations where payment_id = ${paymentId}`
  return row?.status
}

describe('the completion and Stripe’s webhook', () => {
  test('the second completion and payment_intent.succeeded at once, on 8 checkouts: one order each; the completion answers that order (201, or 200 when the webhook placed it)', async () => {
    const product = await shop.createProduct({ title: 'Raced vase', price: 11, inventory_quantity: 20 })
    const waiting = []
    for (let index = 0; index < 8; index++) waiting.push(await awaitingThreeDSecure(product))
    for (const { intent } of waiting) shop.fake.completeAction(intent.id)

    const completions = await Promise.all(
      waiting.map(async ({ checkout, intent }) => {
        const [completion] = await Promise.all([
          shop.complete<Order>(checkout.id, CARD.threeDSecure),
          shop.fake.sendEvent(shop.eventOf('payment_intent.succeeded', intent.id)),
        ])
        return completion
      }),
    )

    for (const [index, { checkout, paymentId, intent }] of waiting.entries()) {
      const completion = completions[index]!
      const orders = await shop.ordersOf(checkout.id)
      expect(orders).toEqual([{ id: expect.any(String), status: 'paid', paymentStatus: 'paid' }])
      expect([200, 201], JSON.stringify(completion.body)).toContain(completion.status)
      expect(completion.body).toMatchObject({ id: orders[0]!.id, payments: [expect.objectContaining({ id: paymentId, status: 'captured' })] })
      expect(deliveriesOf(intent.id)).toEqual([{ type: 'payment_intent.succeeded', status: 200 }])
      expect(await shop.orderEvents(orders[0]!.id)).toEqual(PLACED_ONCE)
      expect(shop.intentsOf(paymentId)).toHaveLength(1)
    }
    expect(await shop.stockOf(product.id)).toBe(12)
  })

  test('the webhook before the completion’s own answer: the webhook places the order, the completion answers 200 with it, and so does its key again (a 200 is not stored)', async () => {
    webhookFirst('payment_intent.succeeded')
    const product = await shop.createProduct({ title: 'Overtaken lamp', price: 16, inventory_quantity: 3 })
    const checkout = await shop.startCheckout(product)
    const idempotencyKey = key()

    const completion = await shop.complete<Order>(checkout.id, CARD.visa, idempotencyKey)
    expect(completion.status, JSON.stringify(completion.body)).toBe(200)
    const orders = await shop.ordersOf(checkout.id)
    expect(orders).toEqual([{ id: completion.body.id, status: 'paid', paymentStatus: 'paid' }])
    expect(completion.body.payments).toEqual([expect.objectContaining({ provider: 'stripe', status: 'captured' })])
    expect(await shop.orderEvents(completion.body.id)).toEqual(PLACED_ONCE)

    const again = await shop.complete<Order>(checkout.id, CARD.visa, idempotencyKey)
    expect(again.status).toBe(200)
    expect(again.headers.get('idempotent-replayed')).toBeNull()
    expect(again.body).toEqual(completion.body)
    expect(await shop.ordersOf(checkout.id)).toHaveLength(1)
    expect(shop.createsOf(completion.body.payments[0]!.id)).toHaveLength(1)
    expect(await shop.stockOf(product.id)).toBe(2)
  })

  test('a decline whose webhook is handled before the completion’s own answer: 402, and the same key replays that 402 without asking Stripe again', async () => {
    webhookFirst('payment_intent.payment_failed')
    const product = await shop.createProduct({ title: 'Declined twice?', price: 19, inventory_quantity: 1 })
    const checkout = await shop.startCheckout(product)
    const idempotencyKey = key()

    const declined = await shop.complete<ErrorBody>(checkout.id, CARD.declined, idempotencyKey)
    expect(declined.status, JSON.stringify(declined.body)).toBe(402)
    expect(declined.body.error.code).toBe('payment_declined')
    const [payment] = await shop.paymentsOf(checkout.id)
    expect(payment).toMatchObject({ status: 'failed', failureCode: 'generic_decline' })
    expect(await shop.stockOf(product.id)).toBe(1)

    const again = await shop.complete<ErrorBody>(checkout.id, CARD.declined, idempotencyKey)
    expect(again.status).toBe(402)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(again.body).toEqual(declined.body)
    expect(await shop.paymentsOf(checkout.id)).toHaveLength(1)
    expect(shop.createsOf(payment!.id)).toHaveLength(1)
  })

  test('out of order: payment_intent.requires_action delivered after payment_intent.succeeded changes nothing', async () => {
    shop.fake.webhooks = 'auto'
    shop.fake.holdEvents()
    const product = await shop.createProduct({ title: 'Shuffled mug', price: 9, inventory_quantity: 2 })
    const { checkout, paymentId, intent } = await awaitingThreeDSecure(product)
    shop.fake.completeAction(intent.id)
    await shop.fake.releaseEvents({ reverse: true })

    expect(deliveriesOf(intent.id)).toEqual([
      { type: 'payment_intent.succeeded', status: 200 },
      { type: 'payment_intent.requires_action', status: 200 },
    ])
    const orders = await shop.ordersOf(checkout.id)
    expect(orders).toEqual([{ id: expect.any(String), status: 'paid', paymentStatus: 'paid' }])
    expect(await shop.paymentsOf(checkout.id)).toEqual([expect.objectContaining({ id: paymentId, status: 'captured', orderId: orders[0]!.id })])
    // Placed: the reservation is gone, its order holds the stock.
    expect(await reservationOf(paymentId)).toBeUndefined()
    expect(await shop.orderEvents(orders[0]!.id)).toEqual(PLACED_ONCE)
    expect(await shop.stockOf(product.id)).toBe(1)

    const later = await shop.complete<Order>(checkout.id, CARD.threeDSecure)
    expect(later.status).toBe(200)
    expect(later.body).toMatchObject({ id: orders[0]!.id, status: 'paid' })
  })

  test('the same event again answers duplicate: true and changes nothing; delivered twice at once, it places one order', async () => {
    const product = await shop.createProduct({ title: 'Echoed bowl', price: 13, inventory_quantity: 4 })
    const first = await awaitingThreeDSecure(product)
    shop.fake.completeAction(first.intent.id)
    const event = shop.eventOf('payment_intent.succeeded', first.intent.id)
    const payload = JSON.stringify(event)

    const handled = await shop.postWebhook<{ received: boolean; duplicate: boolean }>(payload)
    expect(handled).toMatchObject({ status: 200, body: { received: true, duplicate: false } })
    const [order] = await shop.ordersOf(first.checkout.id)
    expect(order).toMatchObject({ status: 'paid' })
    const again = await shop.postWebhook<{ received: boolean; duplicate: boolean }>(payload)
    expect(again).toMatchObject({ status: 200, body: { received: true, duplicate: true } })
    await shop.fake.sendEvent(event, { duplicate: true })
    expect(deliveriesOf(first.intent.id)).toEqual([
      { type: 'payment_intent.succeeded', status: 200 },
      { type: 'payment_intent.succeeded', status: 200 },
    ])
    expect(await shop.ordersOf(first.checkout.id)).toEqual([order])
    expect(await shop.orderEvents(order!.id)).toEqual(PLACED_ONCE)
    const [seen] = await shop.ctx.handle.sql<{ n: number }[]>`select count(*)::int as n from provider_events where provider = 'stripe' and event_id = ${event.id}`
    expect(seen!.n).toBe(1)

    const second = await awaitingThreeDSecure(product)
    shop.fake.completeAction(second.intent.id)
    const twice = JSON.stringify(shop.eventOf('payment_intent.succeeded', second.intent.id))
    const answers = await Promise.all([shop.postWebhook(twice), shop.postWebhook(twice)])
    expect(answers.map((answer) => answer.status)).toEqual([200, 200])
    const orders = await shop.ordersOf(second.checkout.id)
    expect(orders).toHaveLength(1)
    expect(await shop.orderEvents(orders[0]!.id)).toEqual(PLACED_ONCE)
    expect(await shop.stockOf(product.id)).toBe(2)
  })

  test('a bad signature, or a body changed after signing, is 400 and changes nothing; the genuine event then places the order', async () => {
    const product = await shop.createProduct({ title: 'Forged frame', price: 14, inventory_quantity: 1 })
    const { checkout, paymentId, intent } = await awaitingThreeDSecure(product)
    shop.fake.completeAction(intent.id)
    const event = shop.eventOf('payment_intent.succeeded', intent.id)
    const payload = JSON.stringify(event)

    const forged = await shop.postWebhook<ErrorBody>(payload, 'whsec_not_the_endpoint_secret')
    expect(forged.status).toBe(400)
    expect(forged.body.error.code).toBe('validation_error')
    expect(forged.body.error.message).toMatch(/^The notification is refused/)
    // Signed, then changed on the way: Stripe signs the exact bytes.
    const tampered = await shop.call<ErrorBody>('POST', WEBHOOK_PATH, {
      raw: payload.replace(`"id":"${event.id}"`, `"id":"${event.id}x"`),
      headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignature(payload, WEBHOOK_SECRET) },
    })
    expect(tampered.status).toBe(400)
    const unsigned = await shop.call<ErrorBody>('POST', WEBHOOK_PATH, { raw: payload, headers: { 'content-type': 'application/json' } })
    expect(unsigned.status).toBe(400)

    expect(await shop.ordersOf(checkout.id)).toEqual([])
    expect(await reservationOf(paymentId)).toBe('held')
    expect(await shop.paymentsOf(checkout.id)).toEqual([expect.objectContaining({ status: 'requires_action', orderId: null })])
    expect(await shop.stockOf(product.id)).toBe(0)
    expect(await shop.ctx.handle.sql`select 1 from provider_events where event_id = ${event.id}`).toHaveLength(0)

    const genuine = await shop.postWebhook<{ duplicate: boolean }>(payload)
    expect(genuine).toMatchObject({ status: 200, body: { duplicate: false } })
    expect(await shop.ordersOf(checkout.id)).toEqual([{ id: expect.any(String), status: 'paid', paymentStatus: 'paid' }])
  })

  test('while one completion waits for Stripe, another is 409 payment_in_progress and asks Stripe nothing; the first then answers 201', async () => {
    let entered!: () => void
    let open!: () => void
    const reached = new Promise<void>((resolve) => (entered = resolve))
    const gate = new Promise<void>((resolve) => (open = resolve))
    shop.use({
      ...stripe,
      async authorize(request) {
        entered()
        await gate
        return stripe.authorize(request)
      },
    })
    const product = await shop.createProduct({ title: 'Patient plant', price: 8, inventory_quantity: 1 })
    const checkout = await shop.startCheckout(product)
    const first = shop.complete<Order>(checkout.id, CARD.visa)
    await reached
    const requests = shop.fake.requests.length
    const second = await shop.complete<ErrorBody>(checkout.id, CARD.visa)
    expect(second.status, JSON.stringify(second.body)).toBe(409)
    expect(second.body.error.code).toBe('payment_in_progress')
    expect(shop.fake.requests.length).toBe(requests)

    open()
    const placed = await first
    expect(placed.status, JSON.stringify(placed.body)).toBe(201)
    expect(await shop.ordersOf(checkout.id)).toEqual([{ id: placed.body.id, status: 'paid', paymentStatus: 'paid' }])
    expect(shop.createsOf(placed.body.payments[0]!.id)).toHaveLength(1)
  })
})

describe('50 checkouts of the last 7 units, Stripe taking 200 ms', () => {
  test('7 orders (201), 43 × 409 insufficient_inventory, stock 0; the 7 Stripe calls are in flight together, and the 43 refusals are answered while they are', async () => {
    const STOCK = 7
    const BUYERS = 50
    const product = await shop.createProduct({ title: 'Last seven', price: 15, inventory_quantity: STOCK })
    const checkouts = []
    for (let index = 0; index < BUYERS; index++) checkouts.push(await shop.startCheckout(product))
    shop.fake.setLatency(200)

    // Every authorize is held until all 7 are waiting and all 43 refusals have been answered. Were
    // a lock (or a pooled connection: the app has 5) held across the call, the 7 could never be
    // waiting together nor the refusals pass them. The timer only turns such a hang into a failed
    // assertion below; nothing is measured by it.
    let inFlight = 0
    let mostInFlight = 0
    let refused = 0
    let refusedWhileHeld = 0
    let opened = false
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const open = () => {
      opened = true
      release()
    }
    const openWhenAllIn = () => {
      if (inFlight >= STOCK && refused === BUYERS - STOCK) open()
    }
    const valve = setTimeout(open, 10_000)
    shop.use({
      ...stripe,
      async authorize(request) {
        inFlight++
        mostInFlight = Math.max(mostInFlight, inFlight)
        openWhenAllIn()
        try {
          await gate
          return await stripe.authorize(request)
        } finally {
          inFlight--
        }
      },
    })

    const answers = await Promise.all(
      checkouts.map((checkout) =>
        shop.complete<Order & ErrorBody>(checkout.id, CARD.visa).then((answer) => {
          if (answer.status === 409) {
            refused++
            if (!opened) refusedWhileHeld++
            openWhenAllIn()
          }
          return answer
        }),
      ),
    )
    clearTimeout(valve)

    expect(mostInFlight).toBe(STOCK)
    expect(refusedWhileHeld).toBe(BUYERS - STOCK)
    const placed = answers.filter((answer) => answer.status === 201)
    const refusals = answers.filter((answer) => answer.status === 409)
    expect(placed).toHaveLength(STOCK)
    expect(refusals).toHaveLength(BUYERS - STOCK)
    expect(refusals.every((answer) => answer.body.error.code === 'insufficient_inventory')).toBe(true)
    expect(placed.every((answer) => answer.body.status === 'paid' && answer.body.payments[0]?.provider === 'stripe')).toBe(true)
    expect(await shop.stockOf(product.id)).toBe(0)

    const orders = await shop.ctx.handle.sql<{ paid: number; total: number; payments: number }[]>`
      select o.paid_minor::int as paid, o.total_minor::int as total,
        (select count(*)::int from payments p where p.order_id = o.id and p.status = 'captured' and p.provider = 'stripe') as payments
      from orders o join order_items i on i.order_id = o.id where i.product_id = ${product.id}`
    expect(orders).toHaveLength(STOCK)
    expect(orders.every((order) => order.payments === 1 && order.paid === order.total)).toBe(true)
    // Stripe was asked once per order, each under its own key; the refused checkouts started no payment.
    const paymentIds = placed.map((answer) => answer.body.payments[0]!.id)
    expect(paymentIds.map((id) => shop.createsOf(id).length)).toEqual(Array(STOCK).fill(1))
    const [started] = await shop.ctx.handle.sql<{ n: number }[]>`
      select count(*)::int as n from payments where checkout_id in ${shop.ctx.handle.sql(checkouts.map((checkout) => checkout.id))}`
    expect(started!.n).toBe(STOCK)
  })
})

describe('a payment that failed, then succeeded (the customer paid again on the same PaymentIntent)', () => {
  /** A 3-D Secure checkout whose customer failed the challenge, then paid with another card; the stale payment_failed handled first. */
  async function failedThenPaid(product: Product) {
    const started = await awaitingThreeDSecure(product)
    shop.fake.completeAction(started.intent.id, { succeed: false })
    shop.fake.confirmAgain(started.intent.id)
    const failed = await shop.postWebhook(JSON.stringify(shop.eventOf('payment_intent.payment_failed', started.intent.id)))
    expect(failed.status).toBe(200)
    expect(await reservationOf(started.paymentId)).toBe('released')
    return { ...started, succeeded: JSON.stringify(shop.eventOf('payment_intent.succeeded', started.intent.id)) }
  }

  const refundsAtStripe = (intentId: string) => shop.fake.requests.filter((request) => request.path === '/v1/refunds' && request.params.payment_intent === intentId)

  test('payment_intent.succeeded delivered 20 times at once: one delivery handles it and 19 find it handled; the order is placed once, paid, and nothing is refunded, here or at Stripe', async () => {
    const product = await shop.createProduct({ title: 'Twice-tried jug', price: 7.5, inventory_quantity: 3 })
    const { checkout, paymentId, intent, succeeded } = await failedThenPaid(product)

    const answers = await Promise.all(Array.from({ length: 20 }, () => shop.postWebhook<{ received: boolean; duplicate: boolean }>(succeeded)))
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200))
    expect(answers.filter((answer) => !answer.body.duplicate)).toHaveLength(1)
    const orders = await shop.ordersOf(checkout.id)
    expect(orders).toEqual([expect.objectContaining({ status: 'paid', paymentStatus: 'paid' })])
    expect(await shop.paymentsOf(checkout.id)).toEqual([expect.objectContaining({ id: paymentId, status: 'captured', refunded: 0, orderId: orders[0]!.id })])
    expect(refundsAtStripe(intent.id)).toEqual([])
    expect(shop.fake.charges.get(shop.fake.intents.get(intent.id)!.latest_charge as string)).toMatchObject({ amount_refunded: 0 })
    expect(await shop.orderEvents(orders[0]!.id)).toEqual(PLACED_ONCE)
    expect(await shop.stockOf(product.id)).toBe(2)
  })

  test('the stock sold meanwhile: 20 settlements at once (webhook copies, and the settlement the completion and the sweeps run) give the payment back once: one refund at Stripe, one payment.refunded, never an order', async () => {
    const product = await shop.createProduct({ title: 'Last-unit kettle', price: 9, inventory_quantity: 1 })
    const { checkout, paymentId, intent, succeeded } = await failedThenPaid(product)
    // Someone else buys the unit the released checkout gave back.
    const other = await shop.startCheckout(product)
    expect((await shop.complete(other.id, CARD.visa)).status).toBe(201)

    const truth = await stripe.retrieve({ paymentId, reference: intent.id })
    const origin = { origin: { requestId: null, actor: null } }
    const settled = await Promise.all([
      ...Array.from({ length: 10 }, () => shop.postWebhook(succeeded)),
      ...Array.from({ length: 10 }, () => settlePayment(shop.ctx.handle.db, stripe, paymentId, truth, origin)),
    ])
    expect(settled.slice(0, 10).map((answer) => (answer as { status: number }).status)).toEqual(Array(10).fill(200))
    expect(await shop.ordersOf(checkout.id)).toEqual([])
    const refunds = refundsAtStripe(intent.id)
    expect(refunds).toHaveLength(1)
    expect(refunds[0]!.idempotencyKey).toBe(`late-refund:${paymentId}`)
    expect(await shop.paymentsOf(checkout.id)).toEqual([expect.objectContaining({ status: 'refunded', refunded: 900, orderId: null })])
    const recorded = await shop.ctx.handle.sql<{ status: string; amount: number }[]>`select status, amount_minor::int as amount from refunds where payment_id = ${paymentId}`
    expect(recorded).toEqual([{ status: 'succeeded', amount: 900 }])
    const kinds = await shop.ctx.handle.sql<{ kind: string }[]>`select kind from events where resource_id = ${paymentId} order by id`
    expect(kinds.map((row) => row.kind)).toEqual(['payment.failed', 'payment.refunded'])
    expect(await shop.stockOf(product.id)).toBe(0)
  })
})

describe('refunds the provider reports (made in its dashboard, or ours)', () => {
  async function paidOrder(title: string) {
    const product = await shop.createProduct({ title, price: 10, inventory_quantity: 2 })
    const checkout = await shop.startCheckout(product)
    const placed = await shop.complete<Order>(checkout.id, CARD.visa)
    expect(placed.status, JSON.stringify(placed.body)).toBe(201)
    const payment = placed.body.payments[0]!
    return { order: placed.body, payment, intent: shop.intentsOf(payment.id)[0]! }
  }
  const orderOf = async (id: string) => (await shop.call<Order>('GET', `/api/v1/orders/${id}`, { token: shop.admin })).body
  /** The latest charge.refunded of the PaymentIntent's charge, as Stripe sends it. */
  function chargeRefunded(intentId: string): string {
    const event = shop.fake.events.findLast((candidate) => candidate.type === 'charge.refunded' && (candidate.data.object as FakeCharge).payment_intent === intentId)
    if (!event) throw new Error(`No charge.refunded event for ${intentId}`)
    return JSON.stringify(event)
  }

  test('a refund made in Stripe’s dashboard is recorded on the order from charge.refunded (order.refunded, once for 20 copies at once); the rest refunded there too moves the order to refunded, and a refund through the API is then 409', async () => {
    const { order, payment, intent } = await paidOrder('Dashboard-refunded lamp')
    const total = order.totals.total
    shop.fake.refundInDashboard(intent.id, 300)
    const partial = chargeRefunded(intent.id)
    const answers = await Promise.all(Array.from({ length: 20 }, () => shop.postWebhook(partial)))
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200))

    const after = await orderOf(order.id)
    expect(after).toMatchObject({ status: 'paid', payment_status: 'partially_refunded', amount_refunded: 3 })
    expect(after.payments[0]).toMatchObject({
      id: payment.id,
      status: 'partially_refunded',
      amount_refunded: 3,
      refunds: [expect.objectContaining({ amount: 3, status: 'succeeded', reason: 'Refunded at the payment provider', order_id: order.id })],
    })
    expect(await shop.orderEvents(order.id)).toEqual([...PLACED_ONCE, 'order.refunded'])

    shop.fake.refundInDashboard(intent.id)
    expect((await shop.postWebhook(chargeRefunded(intent.id))).status).toBe(200)
    expect(await orderOf(order.id)).toMatchObject({ status: 'refunded', payment_status: 'refunded', amount_refunded: total })
    expect(await shop.orderEvents(order.id)).toEqual([...PLACED_ONCE, 'order.refunded', 'order.refunded'])
    const more = await shop.call<ErrorBody>('POST', `/api/v1/payments/${payment.id}/refunds`, { body: { amount: 1 }, key: key(), token: shop.admin })
    expect(more.status, JSON.stringify(more.body)).toBe(409)
  })

  test('our own refund, then its charge.refunded: recorded once (no second refund from the webhook)', async () => {
    const { order, payment, intent } = await paidOrder('Self-refunded mat')
    const made = await shop.call<Refund>('POST', `/api/v1/payments/${payment.id}/refunds`, { body: { amount: 4 }, key: key(), token: shop.admin })
    expect(made.status, JSON.stringify(made.body)).toBe(201)
    expect(made.body).toMatchObject({ amount: 4, status: 'succeeded' })
    expect((await shop.postWebhook(chargeRefunded(intent.id))).status).toBe(200)
    const after = await orderOf(order.id)
    expect(after).toMatchObject({ amount_refunded: 4 })
    expect(after.payments[0]!.refunds).toHaveLength(1)
  })

  test('a refund through the API after Stripe refunded everything in its dashboard (its webhook not arrived yet): 409 payment_provider_refused naming Stripe’s code, nothing recorded', async () => {
    const { order, payment, intent } = await paidOrder('Raced refund tray')
    shop.fake.refundInDashboard(intent.id)
    const refused = await shop.call<ErrorBody>('POST', `/api/v1/payments/${payment.id}/refunds`, { body: {}, key: key(), token: shop.admin })
    expect(refused.status, JSON.stringify(refused.body)).toBe(409)
    expect(refused.body.error).toMatchObject({ code: 'payment_provider_refused', details: [{ field: 'payment', message: 'charge_already_refunded' }] })
    expect((await orderOf(order.id)).amount_refunded).toBe(0)
    // The dashboard's refund, once its webhook arrives, is what the order shows.
    expect((await shop.postWebhook(chargeRefunded(intent.id))).status).toBe(200)
    expect(await orderOf(order.id)).toMatchObject({ status: 'refunded', amount_refunded: order.totals.total })
  })
})
