/**
 * Checkout completion, the hot path of every sale, built around a payment provider that may take
 * seconds (or, with 3-D Secure, minutes in the customer's browser): no lock is held while the
 * provider decides.
 *
 * 1. Reserve (one short transaction, two round trips: BEGIN travels with the first statement,
 *    COMMIT with the last, @commerce/db transaction.ts and checkout-reservation.ts): claim the
 *    Idempotency-Key, lock the cart and its stock rows, re-price and check it (every refusal
 *    before the first write), then take the stock and the promotion uses (their bounds checked as
 *    they are written), start the payment (`pending`), keep the order to place
 *    (checkout_reservations, expiring after CHECKOUT_RESERVATION_TTL) and close the cart to
 *    changes — and commit.
 * 2. Ask the provider, outside any transaction (authorize; or retrieve, for a payment already in
 *    progress).
 * 3. Settle (one statement, @commerce/db checkout-settlement.ts): place the reserved order, or
 *    give the stock and coupons back on a decline, or keep the reservation while the customer
 *    confirms (202 with what the client needs). The provider's webhook and the worker's sweep
 *    settle the same way, and a reservation settles once: exactly one order whoever comes first.
 *
 * A provider that decides in-process (PaymentProvider.decidesInProcess: no I/O, e.g. the `test`
 * provider) is asked in step 1 instead, and a success is placed in that transaction (placeAtOnce):
 * no reservation, no second transaction. Anything else it answers is reserved and settled as above.
 *
 * The statements are fixed SQL text (prepared once per connection): building them with Drizzle
 * cost more CPU than the database spent running them (bench/README.md, Checkout).
 */
import type { FastifyReply } from 'fastify'
import {
  checkoutRefusal,
  moveOrder,
  PROVIDER_UNANSWERED,
  ProviderRefusedError,
  ProviderUnavailableError,
  type Address,
  type AuthorizeRequest,
  type CaptureMode,
  type CheckoutPaymentPending,
  type CompleteCheckout,
  type PaymentProvider,
  type PromotionRejection,
  type ProviderPayment,
  promotionRejectionMessage,
} from '@commerce/domain'
import {
  cartRowOf,
  eventRows,
  isLimitCrossed,
  lockCheckout,
  newId,
  notePaymentProgress,
  orderItems,
  orders,
  placeAtOnce,
  placementRow,
  reserveCheckout,
  sendCommit,
  sqlOf,
  type Database,
  type InProgress,
  type LockedCheckout,
  type NewEvent,
  type CampaignSpend,
  type OrderRow,
  type PromotionUse,
  type Reservation,
  type SqlClient,
} from '@commerce/db'
import type { RequestOrigin } from '../../origin.js'
import { settlePayment, toPayment, type Settled } from '@commerce/payments'
import { ApiError, conflict, errorBody, notFound } from '../../errors.js'
import type { Answer, Idempotency, StoredKey } from '../../idempotency.js'
import type { PricedCart, PricingRules } from '../carts/pricing.js'
import { priceOrRefuse, visibleTo, type CartViewer } from '../carts/service.js'
import { checkoutHold } from '../inventory/stock.js'
import { orderItemRows } from '../orders/lines.js'
import { loadOrder, orderEvent, orderEventJson, toOrder } from '../orders/view.js'
import { ratesFor } from '../shipping/rates.js'

/** How often a completion is priced again when other checkouts keep taking what is left of its promotions' bounds first. */
const LIMIT_ATTEMPTS = 5

/** A payment `pending` for less than this is taken to be with the provider in another request: 409 payment_in_progress. */
const IN_FLIGHT_MS = 60_000

/** Why a promotion stops applying when others used it up: the checkout refuses a coupon that lost its place so. */
const LIMITS: ReadonlySet<PromotionRejection> = new Set(['usage_limit_reached', 'customer_limit_reached', 'budget_exhausted'])

/** What the reservation takes for the promotions applied: a use of each, and what each campaign's budget gives. */
function promotionUses(priced: PricedCart, customerKey: string | null): Pick<Reservation, 'promotionIds' | 'usesJson' | 'campaignSpendJson'> {
  const uses: PromotionUse[] = []
  const spend = new Map<string, number>()
  for (const { rule, applied } of priced.appliedPromotions) {
    const saving = applied.discount + applied.shippingDiscount
    const campaign = rule.campaign
    uses.push({ id: newId(), promotion_id: rule.id, campaign_id: campaign?.id ?? null, customer_key: customerKey, discount_minor: saving })
    if (campaign) spend.set(campaign.id, (spend.get(campaign.id) ?? 0) + (campaign.budgetType === 'spend' ? saving : 1))
  }
  const spent: CampaignSpend[] = [...spend].map(([id, amount]) => ({ id, amount }))
  return { promotionIds: uses.map((use) => use.promotion_id), usesJson: JSON.stringify(uses), campaignSpendJson: JSON.stringify(spent) }
}

/** The order row the reservation will place, as a successful payment leaves it. */
function orderValues(
  id: string,
  billingAddress: Address | null,
  priced: PricedCart,
  rate: { id: string; name: string } | null,
  made: Pick<OrderRow, 'orderNumber' | 'createdAt' | 'updatedAt'>,
  capture: CaptureMode,
): OrderRow {
  const { view: cart, totals } = priced
  const captured = capture === 'automatic'
  return {
    id,
    ...made,
    status: captured ? 'paid' : 'pending',
    paymentStatus: captured ? 'paid' : 'authorized',
    fulfillmentStatus: 'unfulfilled',
    customerId: cart.customer_id,
    email: cart.email!,
    currency: cart.currency,
    subtotalMinor: totals.subtotal,
    discountMinor: totals.discount,
    taxMinor: totals.tax,
    shippingMinor: totals.shipping,
    totalMinor: totals.total,
    paidMinor: captured ? totals.total : 0,
    authorizedMinor: captured ? 0 : totals.total,
    refundedMinor: 0,
    shippingAddress: cart.shipping_address,
    billingAddress,
    shippingMethod: rate && { id: rate.id, name: rate.name, amount_minor: totals.shipping },
    coupons: priced.appliedPromotions
      .filter(({ rule }) => rule.code !== null)
      .map(({ rule, applied }) => ({ id: rule.id, code: rule.code!, type: rule.type, discount_minor: applied.discount + applied.shippingDiscount })),
    promotions: priced.appliedPromotions.map(({ rule, applied }) => ({
      id: rule.id,
      code: rule.code,
      name: rule.name,
      type: rule.type,
      discount_minor: applied.discount,
      shipping_discount_minor: applied.shippingDiscount,
    })),
    notes: null,
    cartId: cart.id,
    archivedAt: null,
  }
}

/** A reservation just made: what the provider is asked, and what settling needs. */
interface Reserved {
  paymentId: string
  amountMinor: number
  currency: string
  capture: CaptureMode
}

/** The provider's truth about a payment; null with `refused` when it refused to create it. */
interface Truth {
  truth: ProviderPayment | null
  refused?: { code: string; message: string } | undefined
}

type Started =
  | { kind: 'answer'; answer: Answer; replayed: boolean }
  | { kind: 'placed'; paymentId: string | null; orderId: string }
  /** `truth`: an in-process provider's answer already (not a success). */
  | { kind: 'reserved'; reserved: Reserved; truth?: ProviderPayment | undefined }
  | { kind: 'in_progress'; payment: InProgress }

export interface CompletionSettings {
  db: Database
  provider: PaymentProvider
  idempotency: Idempotency
  capture: CaptureMode
  reservationTtlMs: number
  /** The instance's price lists and automatic promotions, which price the cart. */
  rules: PricingRules
}

export function createCheckoutCompletion({ db, provider, idempotency, capture, reservationTtlMs, rules }: CompletionSettings) {
  const steps = idempotency.steps

  /**
   * Step 1: the first transaction. Answers a replay or a refusal (stored), or what to ask the
   * provider. Tried again, priced anew, when another checkout took what was left of a promotion's
   * or campaign's bound between this one's read and its write (isLimitCrossed): each such failure
   * is another checkout's use committed, so the bound is soon reached and priced in.
   */
  async function start(id: string, body: CompleteCheckout, viewer: CartViewer, origin: RequestOrigin, key: StoredKey | undefined): Promise<Started> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await startOnce(id, body, viewer, origin, key)
      } catch (error) {
        if (!isLimitCrossed(error)) throw error
        if (attempt === LIMIT_ATTEMPTS) throw conflict('The promotions of this checkout were used up by other orders while it was completed; complete it again')
      }
    }
  }

  function startOnce(id: string, body: CompleteCheckout, viewer: CartViewer, origin: RequestOrigin, key: StoredKey | undefined): Promise<Started> {
    return db.transaction(
      async (tx): Promise<Started> => {
        const sql = sqlOf(tx)
        const read = await lockCheckout(sql, { checkoutId: id, claim: steps.claimOf(key) })
        const replay = steps.replayOf(key, read)
        if (replay) return { kind: 'answer', answer: replay, replayed: true }
        try {
          return await reserve(sql, id, read.checkout, body, viewer, origin, key)
        } catch (error) {
          if (!(error instanceof ApiError) || !steps.isStored(error.statusCode)) throw error
          // A refusal is stored with the key (the transaction wrote nothing), and ends it.
          const answer = refusalAnswer(error, origin.requestId)
          await steps.store(sql, key, answer)
          return { kind: 'answer', answer, replayed: false }
        }
      },
    )
  }

  async function reserve(
    sql: SqlClient,
    id: string,
    locked: LockedCheckout | undefined,
    body: CompleteCheckout,
    viewer: CartViewer,
    origin: RequestOrigin,
    key: StoredKey | undefined,
  ): Promise<Started> {
    if (!locked || !visibleTo(locked, viewer)) throw notFound('Checkout')
    if (locked.inProgress) return { kind: 'in_progress', payment: locked.inProgress }
    // Placed already (by another completion, the provider's webhook or the sweep): its order.
    if (locked.checkoutStatus !== 'open' && locked.orderId) return { kind: 'placed', paymentId: null, orderId: locked.orderId }
    if (locked.checkoutStatus !== 'open') throw conflict('This checkout is already completed')
    if (locked.completedAt) throw conflict('This cart was already checked out')

    const priced = await priceOrRefuse(cartRowOf(locked), rules)
    const cart = priced.view
    const rates = ratesFor(locked.shippingMethods, priced)
    const rate = rates.find((candidate) => candidate.id === cart.shipping_method_id) ?? null
    const lines = priced.availableLines
    // A coupon another checkout has used up (its usage limit, the customer's, its campaign's
    // budget) is refused rather than dropped from the price, so the customer is never charged
    // more than the checkout showed unawares. An automatic promotion used up meanwhile is simply
    // no longer applied: the answer shows the total charged. (One used up after this read fails
    // the write, and start() prices the checkout again.)
    const lostCoupon = locked.coupons.find((coupon) => LIMITS.has(priced.totals.rejected.get(coupon.id) ?? 'inactive'))
    if (lostCoupon) {
      const rule = priced.promotions.get(lostCoupon.id)!
      throw new ApiError('coupon_invalid', `${promotionRejectionMessage(rule, priced.totals.rejected.get(rule.id)!)}; remove it from the cart`)
    }
    const refusal = checkoutRefusal({
      lines: cart.items.map((item) => ({ id: item.id, title: item.title, quantity: item.quantity, stockKey: item.variant_id ?? item.product_id, problem: item.problem })),
      coupons: [],
      stock: locked.stock,
      shippingRates: rates,
      shippingRateId: cart.shipping_method_id,
    })
    if (refusal) throw ApiError.fromDomain(refusal)

    // The order to place once the payment succeeds, with its events and its answer.
    const now = new Date(locked.now)
    const paymentId = newId()
    const orderId = newId()
    const total = priced.totals.total
    const lineTotals = new Map(priced.totals.lines.map((line) => [line.id, line]))
    const items = orderItemRows(orderId, lines, priced.availableLines.map((line) => lineTotals.get(line.id)!))
    // A provider that decides in-process is asked now, its locks held for no I/O (nor any effect
    // outside this process, so a refusal below undoes nothing): a success is placed in this
    // transaction (no reservation in between); anything else is reserved as usual.
    const truth = provider.decidesInProcess ? await decideInProcess(authorizeRequest({ paymentId, amountMinor: total, currency: cart.currency, capture }, body)) : undefined
    const atOnce = truth !== undefined && (truth.status === 'captured' || truth.status === 'authorized')
    const held = checkoutHold(locked.levels, items, { orderId, paymentId }, origin, atOnce ? 'committed' : 'reserved')
    if ('short' in held) {
      const line = items[held.short]!
      throw new ApiError('insufficient_inventory', `Not enough stock for '${line.title}': ${line.quantity} requested`, [
        { field: 'items', message: `${line.title}: ${line.quantity} requested` },
      ])
    }
    const row = orderValues(orderId, locked.billingAddress, priced, rate, { orderNumber: locked.orderNumber, createdAt: now, updatedAt: now }, capture)
    const settled = toPayment({
      id: paymentId,
      checkoutId: id,
      orderId,
      provider: provider.name,
      method: body.payment.method,
      status: capture === 'automatic' ? 'captured' : 'authorized',
      captureMode: capture,
      amountMinor: total,
      capturedMinor: capture === 'automatic' ? total : 0,
      refundedMinor: 0,
      currency: cart.currency,
      failureCode: null,
      failureMessage: null,
      createdAt: locked.now,
      refunds: [],
    })
    const placed = toOrder({ row, items, payments: [], fulfillments: [], balance: { editRefundedMinor: 0, creditedMinor: 0, pendingCreditMinor: 0 } })
    placed.payments.push(settled)
    const placedJson = JSON.stringify(placed)
    const created = { ...orderEvent('order.created', placed, origin), dataJson: orderEventJson(placed, placedJson) }
    const events: NewEvent[] = [
      created,
      { kind: capture === 'automatic' ? 'payment.succeeded' : 'payment.authorized', resourceId: orderId, data: settled, customerId: placed.customer_id, ...origin },
    ]
    // The order is placed paid (or authorized): its pending state is never seen, so only the move to paid is an event.
    if (capture === 'automatic') events.push({ ...created, kind: moveOrder('pending', 'paid') })
    // Placed at once, the stock's inventory.low events are the order's too (one statement writes them).
    const placedEvents = eventRows(atOnce ? [...events, ...held.events] : events)
    const placement =
      `{"order":${JSON.stringify(placementRow(orders, row))},"items":${JSON.stringify(items.map((item) => placementRow(orderItems, { ...item, createdAt: now })))},` +
      `"events":${placedEvents.json},"answer":${placedJson}}`

    const taken = {
      now: locked.now,
      stockJson: JSON.stringify(held.stock),
      movesJson: JSON.stringify(held.moves),
      ...promotionUses(priced, locked.customerId ?? locked.email?.toLowerCase() ?? null),
      paymentId,
      checkoutId: id,
      provider: provider.name,
      method: body.payment.method,
      capture,
      amountMinor: total,
      currency: cart.currency,
      placementJson: placement,
      cartId: cart.id,
    }
    if (atOnce) {
      const payment = { state: truth.status, capturedMinor: truth.capturedMinor, reference: truth.reference }
      const [answer] = await Promise.all([placeAtOnce(sql, { ...taken, payment, eventIds: placedEvents.ids }, steps.storedAnswer(key, { status: 201, json: null })), sendCommit(sql)])
      return { kind: 'answer', answer: { status: 201, json: answer }, replayed: false }
    }
    const expiresAt = new Date(now.getTime() + reservationTtlMs).toISOString()
    await Promise.all([reserveCheckout(sql, { ...taken, events: eventRows(held.events), expiresAt }), sendCommit(sql)])
    return {
      kind: 'reserved',
      reserved: { paymentId, amountMinor: total, currency: cart.currency, capture },
      truth,
    }
  }

  /** The authorization of a payment, its provider idempotency key made from our payment id (asking again never charges twice). */
  function authorizeRequest(payment: Pick<Reserved, 'paymentId' | 'amountMinor' | 'currency' | 'capture'>, body: CompleteCheckout): AuthorizeRequest {
    return {
      paymentId: payment.paymentId,
      amountMinor: payment.amountMinor,
      currency: payment.currency,
      method: body.payment.method,
      token: body.payment.token,
      capture: payment.capture,
      idempotencyKey: `checkout-payment:${payment.paymentId}`,
      returnUrl: body.payment.return_url ?? null,
    }
  }

  /**
   * An in-process provider's answer; undefined when it cannot answer or refuses the request (then
   * asked again, as any provider, after the reservation, which settles a refusal as a decline).
   */
  async function decideInProcess(request: AuthorizeRequest): Promise<ProviderPayment | undefined> {
    try {
      return await provider.authorize(request)
    } catch (error) {
      if (error instanceof ProviderUnavailableError || error instanceof ProviderRefusedError) return undefined
      throw error
    }
  }

  /**
   * Step 2: the provider's truth about the payment: a new one authorized; one in progress asked
   * about, and authorized again with this request's payment method when the provider never
   * answered and has no such payment. The provider's idempotency key is made from our payment id,
   * so asking again never charges twice.
   */
  async function ask(started: Extract<Started, { kind: 'reserved' | 'in_progress' }>, body: CompleteCheckout): Promise<Truth> {
    const payment =
      started.kind === 'reserved'
        ? { ...started.reserved, reference: null, unanswered: true }
        : started.payment
    const authorize = async (): Promise<Truth> => {
      try {
        return { truth: await provider.authorize(authorizeRequest(payment, body)) }
      } catch (error) {
        // Refused as asked (an unknown payment method): nothing exists at the provider; settled as a decline.
        if (error instanceof ProviderRefusedError) return { truth: null, refused: { code: error.code, message: error.message } }
        throw error
      }
    }
    try {
      if (started.kind === 'reserved') return await authorize()
      const { state, unanswered, updatedAt } = started.payment
      const inFlight = state === 'pending' && !unanswered && Date.now() - Date.parse(updatedAt) < IN_FLIGHT_MS
      if (inFlight) throw new ApiError('payment_in_progress', 'The payment of this checkout is with the provider; retry in a few seconds')
      const truth = await provider.retrieve({ paymentId: payment.paymentId, reference: payment.reference })
      return truth === null && unanswered ? await authorize() : { truth }
    } catch (error) {
      if (!(error instanceof ProviderUnavailableError)) throw error
      await notePaymentProgress(sqlOf(db), { paymentId: payment.paymentId, state: 'pending', reference: null, failure: { code: PROVIDER_UNANSWERED, message: error.message } })
      throw new ApiError(
        'payment_provider_error',
        'The payment provider did not answer. The checkout keeps its stock while the payment is looked into: complete it again to learn the outcome',
      )
    }
  }

  return {
    /** POST /checkouts/:id/complete. */
    async complete(reply: FastifyReply, id: string, body: CompleteCheckout, viewer: CartViewer, origin: RequestOrigin, key: StoredKey | undefined): Promise<FastifyReply> {
      const { requestId } = origin
      const started = await start(id, body, viewer, origin, key)
      if (started.kind === 'answer') return steps.send(reply, started.answer, started.replayed)
      if (started.kind === 'placed') return steps.send(reply, { status: 200, json: JSON.stringify(await loadOrder(db, started.orderId)) })
      const { truth, refused } = started.kind === 'reserved' && started.truth ? { truth: started.truth, refused: undefined } : await ask(started, body)
      const paymentId = started.kind === 'reserved' ? started.reserved.paymentId : started.payment.paymentId
      const settled = await settlePayment(db, provider, paymentId, truth, {
        origin,
        refused,
        justReserved: started.kind === 'reserved',
        stored: (outcome) =>
          steps.storedAnswer(key, outcome.kind === 'placed' ? { status: 201, json: null } : completionAnswerNow(outcome, requestId)),
      })
      const answer = await completionAnswer(db, id, settled, requestId)
      // Settled first by someone else (the provider's webhook, the sweep), or a late payment given
      // back: no settlement statement stored this refusal with the key. Stored now, so the same key
      // replays it; else a retry would run again and, after a decline, ask the provider to charge
      // anew. (A 200, the order placed by someone else, is never stored: calling again answers it.)
      if ((settled.kind === 'earlier' || settled.kind === 'returned') && answer.status !== 200 && steps.isStored(answer.status)) {
        await steps.store(sqlOf(db), key, answer)
      }
      return steps.send(reply, answer)
    },
  }
}

/** What a checkout completion answers for a settlement: the order, a refusal, or 202 while the payment waits. */
async function completionAnswer(db: Database, checkoutId: string, settled: Settled, requestId: string): Promise<Answer> {
  const refusal = (error: ApiError) => refusalAnswer(error, requestId)
  switch (settled.kind) {
    case 'placed':
      return { status: 201, json: settled.answer }
    case 'declined':
    case 'canceled':
      return completionAnswerNow(settled, requestId)
    case 'waiting': {
      const pending: CheckoutPaymentPending = { checkout_id: checkoutId, payment: settled.payment, next_action: settled.nextAction, reserved_until: settled.reservedUntil }
      return { status: 202, json: JSON.stringify(pending) }
    }
    case 'returned':
      return refusal(
        conflict(
          `The payment arrived after the checkout was released and its stock was sold; it was ${settled.state === 'refunded' ? 'refunded in full' : 'voided'}`,
        ),
      )
    case 'earlier': {
      const { settlement } = settled
      if (settlement.status === 'converted' && settlement.orderId) return { status: 200, json: JSON.stringify(await loadOrder(db, settlement.orderId)) }
      if (settlement.paymentState === 'failed') {
        return refusal(declined({ code: settlement.failureCode ?? 'declined', message: settlement.failureMessage ?? 'The payment was declined' }))
      }
      return refusal(conflict('The payment of this checkout was released; complete the checkout again to pay'))
    }
  }
}

/** The refusal a settlement that ends the completion stores with its key (the same text completionAnswer sends). */
function completionAnswerNow(outcome: Extract<Settled, { kind: 'declined' | 'canceled' }>, requestId: string): Answer {
  const error = outcome.kind === 'declined' ? declined(outcome.failure) : conflict('The payment was canceled; complete the checkout again to pay')
  return refusalAnswer(error, requestId)
}

/** A refusal as the completion answers (and stores) it: our error body, as its JSON text. */
function refusalAnswer(error: ApiError, requestId: string): Answer {
  return { status: error.statusCode, json: JSON.stringify(errorBody(error, requestId)) }
}

const declined = (failure: { code: string; message: string }) => new ApiError('payment_declined', failure.message, [{ field: 'payment.token', message: failure.code }])
