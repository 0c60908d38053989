/**
 * The payment sweeps on a real database: reservations written as the API's completion leaves them
 * (checkout-reservations.ts), settled by sweepPayments against the test provider or the fake
 * Stripe. Each test's provider has a name of its own, so a sweep sees only that test's payments.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { PROVIDER_UNANSWERED, ProviderRefusedError, ProviderUnavailableError, type AuthorizeRequest, type CancelRequest, type PaymentProvider, type RefundRequest } from '@commerce/domain'
import { createDb, deleteReleasedReservations, eventRows, newId, reacquireReservation, releaseReservation, type DatabaseHandle } from '@commerce/db'
import { createTestDatabase, type TestDatabase } from '@commerce/db/testing'
import { createStripeProvider, createTestProvider, settlePayment, testProvider } from '@commerce/payments'
import { startFakeStripe, type FakeStripe } from '@commerce/payments/fake-stripe'
import { createLogger } from '../src/logger.js'
import { createWorkerMetrics, type WorkerMetrics } from '../src/metrics.js'
import { PAYMENT_SWEEP_LOCK, sweepPayments, type PaymentSweeper } from '../src/payment-sweeps.js'
import { startWorker } from '../src/worker.js'
import { QUANTITY, STOCK, TOTAL_MINOR, reserveCheckout, type ReservedCheckout } from './checkout-reservations.js'

let database: TestDatabase
let handle: DatabaseHandle
let fake: FakeStripe

beforeAll(async () => {
  database = await createTestDatabase(inject('adminUrl'), inject('template'))
  handle = createDb({ url: database.url, poolMax: 4 })
  fake = await startFakeStripe()
})

afterAll(async () => {
  await fake?.close()
  await handle?.close()
  await database?.drop()
})

let providers = 0
/** The provider under a name of its own (payments.provider), with some calls replaced. */
function providerOf(base: PaymentProvider, overrides: Partial<PaymentProvider> = {}): PaymentProvider {
  return { ...base, name: `${base.name}-${++providers}`, ...overrides }
}

/** What the API's completion asks the provider for the reservation's payment. */
function authorizeRequest(paymentId: string, token: string): AuthorizeRequest {
  return { paymentId, amountMinor: TOTAL_MINOR, currency: 'USD', method: 'card', token, capture: 'automatic', idempotencyKey: `checkout-payment:${paymentId}`, returnUrl: null }
}

/** PAYMENT_UNRECORDED_GRACE's default. */
const UNRECORDED_GRACE_MS = 90_000

function sweeperOf(provider: PaymentProvider, database = handle, unrecordedGraceMs = UNRECORDED_GRACE_MS): { sweeper: PaymentSweeper; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = []
  const logger = createLogger('info', (line) => lines.push(JSON.parse(line) as Record<string, unknown>))
  return { sweeper: { database, provider, reconcileAfterMs: 120_000, unrecordedGraceMs, logger, metrics: createWorkerMetrics() }, lines }
}

/** commerce_worker_payment_settlements_total as `source:outcome` to count. */
async function settlements(metrics: WorkerMetrics): Promise<Record<string, number>> {
  const metric = await metrics.registry.getSingleMetric('commerce_worker_payment_settlements_total')!.get()
  return Object.fromEntries(metric.values.map(({ labels, value }) => [`${labels.source}:${labels.outcome}`, value]))
}

/** The reservation, its payment, checkout, cart, stock, coupon uses, orders and events. */
async function stateOf(ids: ReservedCheckout) {
  const [row] = await handle.sql`
    select r.status as reservation, p.status as payment, p.provider_reference as reference, p.failure_code as "failureCode",
      p.order_id as "paymentOrderId", k.status as checkout, k.order_id as "checkoutOrderId", c.completed_at is not null as "cartClosed",
      (select inventory_quantity from products where id = ${ids.productId}) as stock,
      (select times_used from promotions where id = ${ids.couponId}) as "couponUses",
      (select count(*)::int from orders where cart_id = ${ids.cartId}) as orders,
      array(select kind::text from events where resource_id in (${ids.orderId}, ${ids.paymentId}) order by id) as events
    from payments p left join checkout_reservations r on r.payment_id = p.id join checkouts k on k.id = p.checkout_id join carts c on c.id = k.cart_id
    where p.id = ${ids.paymentId}`
  return row!
}

/** The reservation became its order, paid (and is gone): once, the stock and the coupon use still taken. */
const placed = (ids: ReservedCheckout) => ({
  reservation: null,
  payment: 'captured',
  paymentOrderId: ids.orderId,
  checkout: 'completed',
  checkoutOrderId: ids.orderId,
  cartClosed: true,
  stock: STOCK - QUANTITY,
  couponUses: 1,
  orders: 1,
  events: ['order.created', 'payment.succeeded'],
})

/** The reservation as the completion left it: the stock and the coupon use taken, no order. */
const held = { reservation: 'held', payment: 'pending', checkout: 'open', cartClosed: true, stock: STOCK - QUANTITY, couponUses: 1, orders: 0, events: [] }

describe('the expiry sweep', () => {
  it('places the order of an expired reservation whose payment the provider says succeeded: one order, the stock still taken', async () => {
    const provider = providerOf(testProvider)
    const paymentId = newId()
    const paid = await provider.authorize(authorizeRequest(paymentId, 'tok_visa'))
    const ids = await reserveCheckout(handle, { provider: provider.name, paymentId, reference: paid.reference, expired: true })
    const { sweeper, lines } = sweeperOf(provider)

    expect(await sweepPayments(sweeper)).toBe(true)
    expect(await stateOf(ids)).toMatchObject({ ...placed(ids), reference: paid.reference })
    // Settled: a later sweep has nothing to do with it.
    expect(await sweepPayments(sweeper)).toBe(true)
    expect(await stateOf(ids)).toMatchObject({ orders: 1, events: ['order.created', 'payment.succeeded'] })
    expect(await settlements(sweeper.metrics)).toEqual({ 'expiry:placed': 1 })
    expect(lines).toContainEqual(expect.objectContaining({ level: 'info', msg: 'payment settled', payment_id: paymentId, source: 'expiry', outcome: 'placed' }))
  })

  it('cancels at the provider a payment that still requires action, then releases it: stock, coupon use and cart back, payment.canceled', async () => {
    const cancels: CancelRequest[] = []
    const provider = providerOf(testProvider, {
      cancel: (request) => {
        cancels.push(request)
        return testProvider.cancel(request)
      },
    })
    const paymentId = newId()
    const waiting = await provider.authorize(authorizeRequest(paymentId, 'tok_3ds'))
    expect(waiting.status).toBe('requires_action')
    const ids = await reserveCheckout(handle, { provider: provider.name, paymentId, status: 'requires_action', reference: waiting.reference, expired: true })
    const { sweeper, lines } = sweeperOf(provider)

    await sweepPayments(sweeper)
    expect(cancels).toEqual([{ reference: waiting.reference, idempotencyKey: `expire:${paymentId}` }])
    expect(await stateOf(ids)).toMatchObject({
      reservation: 'released',
      payment: 'canceled',
      paymentOrderId: null,
      checkout: 'open',
      cartClosed: false,
      stock: STOCK,
      couponUses: 0,
      orders: 0,
      events: ['payment.canceled'],
    })
    expect(await settlements(sweeper.metrics)).toEqual({ 'expiry:canceled': 1 })
    expect(lines.map((line) => [line.msg, line.payment_id])).toEqual([
      ['payment canceled at the provider: its reservation expired', paymentId],
      ['payment settled', paymentId],
    ])
  })

  it('leaves held the reservation of a provider that cannot answer (a warning), and still settles the other payments of the sweep', async () => {
    const down = newId()
    const provider = providerOf(testProvider, {
      retrieve: async (request) => {
        if (request.paymentId === down) throw new ProviderUnavailableError('Stripe did not answer: Request timed out')
        return testProvider.retrieve(request)
      },
    })
    const reserved: ReservedCheckout[] = []
    for (const paymentId of [down, newId()]) {
      const paid = await provider.authorize(authorizeRequest(paymentId, 'tok_visa'))
      reserved.push(await reserveCheckout(handle, { provider: provider.name, paymentId, reference: paid.reference, expired: true }))
    }
    const { sweeper, lines } = sweeperOf(provider)

    await sweepPayments(sweeper)
    expect(await stateOf(reserved[0]!)).toMatchObject(held)
    expect(await stateOf(reserved[1]!)).toMatchObject(placed(reserved[1]!))
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        msg: 'the payment provider did not answer: the payment is swept again later',
        payment_id: down,
        source: 'expiry',
        error: 'Stripe did not answer: Request timed out',
      }),
    )
    expect(await settlements(sweeper.metrics)).toEqual({ 'expiry:placed': 1 })
  })
})

describe('the reconciliation sweep', () => {
  it('finds at Stripe, by its id, a payment whose answer the API never recorded (it died) and places its order once PAYMENT_RECONCILE_AFTER has passed', async () => {
    const stripe = createStripeProvider({ secretKey: 'sk_test_fake', webhookSecret: 'whsec_test', maxNetworkRetries: 0, ...fake.stripeOptions })
    const provider = providerOf(stripe)
    const paymentId = newId()
    const ids = await reserveCheckout(handle, { provider: provider.name, paymentId })
    // The API's authorize reached Stripe, which took the money; the answer never reached the database.
    const intent = await provider.authorize(authorizeRequest(paymentId, 'pm_card_visa'))
    expect(intent.status).toBe('captured')
    const searches = () => fake.requests.filter((request) => request.path === '/v1/payment_intents/search' && JSON.stringify(request.params).includes(paymentId))
    const { sweeper } = sweeperOf(provider)

    // Changed just now: it may still be with the API.
    await sweepPayments(sweeper)
    expect(await stateOf(ids)).toMatchObject({ ...held, reference: null })
    expect(searches()).toHaveLength(0)

    await handle.sql`update payments set updated_at = now() - interval '3 minutes' where id = ${paymentId}`
    await sweepPayments(sweeper)
    expect(await stateOf(ids)).toMatchObject({ ...placed(ids), reference: intent.reference })
    expect(searches()).toHaveLength(1)
    expect(await settlements(sweeper.metrics)).toEqual({ 'reconcile:placed': 1 })
  })

  it('releases a payment the provider has no trace of (its call unanswered, nothing recorded) as not_found, only once it is older than PAYMENT_UNRECORDED_GRACE (90 s)', async () => {
    const provider = providerOf(testProvider)
    const ids = await reserveCheckout(handle, { provider: provider.name, failureCode: PROVIDER_UNANSWERED, createdAgoMs: 60_000, updatedAgoMs: 20_000 })
    const { sweeper, lines } = sweeperOf(provider)

    // Asked 10 s after no answer, but a search by our id may not see a payment a minute old yet.
    await sweepPayments(sweeper)
    expect(await stateOf(ids)).toMatchObject({ ...held, failureCode: PROVIDER_UNANSWERED })
    expect(await settlements(sweeper.metrics)).toEqual({ 'reconcile:waiting': 1 })
    expect(lines).toEqual([expect.objectContaining({ msg: 'payment not found at the provider yet: asked again at the next sweep', payment_id: ids.paymentId })])

    await handle.sql`update payments set created_at = now() - interval '100 seconds' where id = ${ids.paymentId}`
    await sweepPayments(sweeper)
    expect(await stateOf(ids)).toMatchObject({
      reservation: 'released',
      payment: 'failed',
      failureCode: 'not_found',
      checkout: 'open',
      cartClosed: false,
      stock: STOCK,
      couponUses: 0,
      orders: 0,
      events: ['payment.failed'],
    })
    expect(await settlements(sweeper.metrics)).toEqual({ 'reconcile:waiting': 1, 'reconcile:declined': 1 })
  })
})

describe('PAYMENT_UNRECORDED_GRACE', () => {
  it('a shorter grace releases a payment the provider has no trace of sooner: 20 s old, with a grace of 10 s', async () => {
    const provider = providerOf(testProvider)
    const ids = await reserveCheckout(handle, { provider: provider.name, failureCode: PROVIDER_UNANSWERED, createdAgoMs: 20_000, updatedAgoMs: 15_000 })
    await sweepPayments(sweeperOf(provider, handle, 30_000).sweeper)
    expect(await stateOf(ids)).toMatchObject({ ...held, failureCode: PROVIDER_UNANSWERED })
    await sweepPayments(sweeperOf(provider, handle, 10_000).sweeper)
    expect(await stateOf(ids)).toMatchObject({ reservation: 'released', payment: 'failed', failureCode: 'not_found', stock: STOCK })
  })
})

describe('sweeping workers', () => {
  it('sweep nothing while another worker holds the lock, and sweep once it is given back', async () => {
    const provider = providerOf(testProvider)
    const paymentId = newId()
    const paid = await provider.authorize(authorizeRequest(paymentId, 'tok_visa'))
    const ids = await reserveCheckout(handle, { provider: provider.name, paymentId, reference: paid.reference, expired: true })
    const { sweeper } = sweeperOf(provider)

    const other = await handle.sql.reserve()
    try {
      await other`select pg_advisory_lock(hashtextextended(${PAYMENT_SWEEP_LOCK}, 0))`
      expect(await sweepPayments(sweeper)).toBe(false)
      expect(await stateOf(ids)).toMatchObject(held)
    } finally {
      await other`select pg_advisory_unlock(hashtextextended(${PAYMENT_SWEEP_LOCK}, 0))`
      other.release()
    }
    expect(await sweepPayments(sweeper)).toBe(true)
    expect(await stateOf(ids)).toMatchObject(placed(ids))
  })

  it('two sweeping at once, and the API settling one of the payments meanwhile, settle each payment once', async () => {
    // A slow provider, so that the sweeps overlap.
    const provider = providerOf(createTestProvider({ latencyMs: 20 }))
    const reserved = []
    for (let n = 0; n < 5; n++) {
      const paymentId = newId()
      const paid = await provider.authorize(authorizeRequest(paymentId, 'tok_visa'))
      reserved.push({ ids: await reserveCheckout(handle, { provider: provider.name, paymentId, reference: paid.reference, expired: true }), paid })
    }
    const otherDatabase = createDb({ url: database.url, poolMax: 2 })
    try {
      const [first, second] = [sweeperOf(provider), sweeperOf(provider, otherDatabase)]
      const api = reserved[0]!
      const [, , byApi] = await Promise.all([
        sweepPayments(first.sweeper),
        sweepPayments(second.sweeper),
        settlePayment(handle.db, provider, api.ids.paymentId, api.paid, { origin: { requestId: 'the-api', actor: null } }),
      ])
      for (const { ids } of reserved) expect(await stateOf(ids)).toMatchObject(placed(ids))
      const counts = [await settlements(first.sweeper.metrics), await settlements(second.sweeper.metrics)]
      const placedBySweeps = counts.reduce((sum, count) => sum + (count['expiry:placed'] ?? 0), 0)
      expect(placedBySweeps + (byApi.kind === 'placed' ? 1 : 0)).toBe(reserved.length)
    } finally {
      await otherDatabase.close()
    }
  })

  it('a worker started with payment settings sweeps on its interval', async () => {
    const provider = providerOf(testProvider)
    const paymentId = newId()
    const paid = await provider.authorize(authorizeRequest(paymentId, 'tok_visa'))
    const ids = await reserveCheckout(handle, { provider: provider.name, paymentId, reference: paid.reference, expired: true })
    const worker = await startWorker({
      databaseUrl: database.url,
      concurrency: 1,
      databasePoolMax: 2,
      webhooks: { timeoutMs: 1000, retrySchedule: [1000], allowPrivateTargets: true },
      payments: { provider, intervalMs: 200, reconcileAfterMs: 120_000, unrecordedGraceMs: UNRECORDED_GRACE_MS },
      logger: createLogger('silent'),
    })
    try {
      await vi.waitFor(async () => expect(await stateOf(ids)).toMatchObject(placed(ids)), { timeout: 10_000, interval: 100 })
      expect(await settlements(worker.metrics)).toEqual({ 'expiry:placed': 1 })
    } finally {
      await worker.stop()
    }
  })
})

describe('released reservations past CHECKOUT_RESERVATION_RETENTION', () => {
  const week = 7 * 24 * 3600_000
  const refunds: RefundRequest[] = []
  const provider = providerOf(testProvider, {
    refund: (request) => {
      refunds.push(request)
      return testProvider.refund(request)
    },
  })
  /** A payment that succeeded at the provider, released here as declined (its answer lost) `daysAgo` days ago. */
  async function releasedLate(daysAgo: number, by: PaymentProvider = provider) {
    const paymentId = newId()
    const paid = await by.authorize(authorizeRequest(paymentId, 'tok_visa'))
    const ids = await reserveCheckout(handle, { provider: by.name, paymentId, reference: paid.reference })
    const failure = { code: 'card_declined', message: 'Your card was declined.' }
    expect(await releaseReservation(handle.sql, { paymentId, state: 'failed', failure, reference: paid.reference, events: eventRows([]) })).toBe(true)
    await handle.sql`update checkout_reservations set updated_at = now() - make_interval(days => ${daysAgo}) where payment_id = ${paymentId}`
    return { ids, paid }
  }
  const origin = { origin: { requestId: null, actor: 'provider:test' } }

  it('a payment that succeeds after its released reservation was deleted is refunded at the provider (payment.refunded), not placed; one released within the retention still becomes its order', async () => {
    const old = await releasedLate(8)
    const recent = await releasedLate(6)
    expect(await stateOf(old.ids)).toMatchObject({ reservation: 'released', payment: 'failed', stock: STOCK, couponUses: 0 })

    expect(await deleteReleasedReservations(handle.sql, week)).toBe(1)
    expect(await stateOf(old.ids)).toMatchObject({ reservation: null, payment: 'failed' })
    expect(await stateOf(recent.ids)).toMatchObject({ reservation: 'released' })

    expect(await settlePayment(handle.db, provider, old.ids.paymentId, old.paid, origin)).toEqual({ kind: 'returned', state: 'refunded' })
    expect(refunds).toEqual([{ reference: old.paid.reference, amountMinor: TOTAL_MINOR, currency: 'USD', idempotencyKey: `late-refund:${old.ids.paymentId}` }])
    expect(await stateOf(old.ids)).toMatchObject({ payment: 'refunded', paymentOrderId: null, checkout: 'open', cartClosed: false, stock: STOCK, couponUses: 0, orders: 0, events: ['payment.refunded'] })
    // The success told again later (Stripe's payment_intent.succeeded delivered late): nothing more is asked of the provider.
    expect(await settlePayment(handle.db, provider, old.ids.paymentId, old.paid, origin)).toMatchObject({ kind: 'earlier', settlement: { status: 'released', paymentState: 'refunded' } })
    expect(refunds).toHaveLength(1)

    expect((await settlePayment(handle.db, provider, recent.ids.paymentId, recent.paid, origin)).kind).toBe('placed')
    expect(await stateOf(recent.ids)).toMatchObject(placed(recent.ids))
  })

  it('a late payment holding its reservation again while the worker deletes it: whichever locks it first wins, and the stock is taken only with a held reservation', async () => {
    // The late payment first: the deletion waits for it, then finds the reservation held and keeps it.
    const first = await releasedLate(8)
    let deleted: Promise<number> | undefined
    await handle.sql.begin(async (tx) => {
      expect(await reacquireReservation(tx, first.ids.paymentId)).toBe(true)
      deleted = deleteReleasedReservations(handle.sql, week)
      await sleep(300)
    })
    expect(await deleted).toBe(0)
    expect(await stateOf(first.ids)).toMatchObject({ reservation: 'held', stock: STOCK - QUANTITY, couponUses: 1 })

    // The deletion first: the late payment waits for it, then finds nothing to hold and takes nothing.
    const second = await releasedLate(8)
    let reacquired: Promise<boolean> | undefined
    await handle.sql.begin(async (tx) => {
      expect(await deleteReleasedReservations(tx, week)).toBe(1)
      reacquired = reacquireReservation(handle.sql, second.ids.paymentId)
      await sleep(300)
    })
    expect(await reacquired).toBe(false)
    expect(await stateOf(second.ids)).toMatchObject({ reservation: null, stock: STOCK, couponUses: 0, cartClosed: false })
  })
})

describe('refunds left pending', () => {
  const week = 7 * 24 * 3600_000
  /** A payment that succeeded after its released reservation was deleted: given back by settlePayment through `provider`. */
  async function givenBack(provider: PaymentProvider) {
    const paymentId = newId()
    const paid = await testProvider.authorize(authorizeRequest(paymentId, 'tok_visa'))
    const ids = await reserveCheckout(handle, { provider: provider.name, paymentId, reference: paid.reference })
    const failure = { code: 'card_declined', message: 'Your card was declined.' }
    expect(await releaseReservation(handle.sql, { paymentId, state: 'failed', failure, reference: paid.reference, events: eventRows([]) })).toBe(true)
    await handle.sql`update checkout_reservations set updated_at = now() - interval '8 days' where payment_id = ${paymentId}`
    await deleteReleasedReservations(handle.sql, week)
    expect(await settlePayment(handle.db, provider, paymentId, paid, { origin: { requestId: null, actor: null } })).toEqual({ kind: 'returned', state: 'refunded' })
    return ids
  }
  const refundOf = async (paymentId: string) =>
    (await handle.sql<{ status: string; failureCode: string | null }[]>`select status, failure_code as "failureCode" from refunds where payment_id = ${paymentId}`)[0]

  it('a refund the provider did not answer stays pending; the sweep asks again once it is 30 s old, under the same key, and records it made', async () => {
    const asked: RefundRequest[] = []
    let answering = false
    const provider = providerOf(testProvider, {
      refund: (request) => {
        asked.push(request)
        return answering ? testProvider.refund(request) : Promise.reject(new ProviderUnavailableError('timed out'))
      },
    })
    const ids = await givenBack(provider)
    expect(await refundOf(ids.paymentId)).toEqual({ status: 'pending', failureCode: null })
    expect(await stateOf(ids)).toMatchObject({ payment: 'refunded', orders: 0, events: ['payment.refunded'] })

    answering = true
    const { sweeper } = sweeperOf(provider)
    await sweepPayments(sweeper)
    expect(asked).toHaveLength(1)
    await handle.sql`update refunds set created_at = now() - interval '1 minute' where payment_id = ${ids.paymentId}`
    await sweepPayments(sweeper)
    expect(asked.map((request) => request.idempotencyKey)).toEqual([`late-refund:${ids.paymentId}`, `late-refund:${ids.paymentId}`])
    expect(await refundOf(ids.paymentId)).toEqual({ status: 'succeeded', failureCode: null })
    await sweepPayments(sweeper)
    expect(asked).toHaveLength(2)
  })

  it('a refund the provider refuses fails (refund.failed): the payment counts as captured again', async () => {
    const provider = providerOf(testProvider, { refund: () => Promise.reject(new ProviderRefusedError('charge_disputed', 'The charge is disputed.')) })
    const ids = await givenBack(provider)
    expect(await refundOf(ids.paymentId)).toEqual({ status: 'failed', failureCode: 'charge_disputed' })
    expect(await stateOf(ids)).toMatchObject({ payment: 'captured', orders: 0, events: ['payment.refunded', 'refund.failed'] })
    const [payment] = await handle.sql<{ refunded: number }[]>`select refunded_minor::int as refunded from payments where id = ${ids.paymentId}`
    expect(payment!.refunded).toBe(0)
  })
})
