/**
 * Checkout: a cart with an address, a chosen shipping rate and then one completing transaction
 * that re-prices the cart, takes the stock (never below zero), uses up the coupons, creates the
 * order, charges it and writes the events — or changes nothing.
 */
import { and, eq, inArray, isNull, or, sql } from 'drizzle-orm'
import {
  moveOrder,
  toAddress,
  type Checkout,
  type CompleteCheckout,
  type CreateCheckout,
  type Order,
} from '@commerce/domain'
import {
  cartItems,
  carts,
  checkouts,
  coupons,
  orders,
  payments,
  writeEvent,
  type Database,
  type Executor,
} from '@commerce/db'
import { ApiError, conflict, invalidField, notFound } from '../../errors.js'
import { RefusalWithRecord } from '../../idempotency.js'
import type { PaymentProvider } from '../../payments/provider.js'
import type { PricedCart } from '../carts/pricing.js'
import { readCart } from '../carts/rows.js'
import { priceOrRefuse, type CartViewer } from '../carts/service.js'
import { insertOrderItems, takeStockOfLines, type NewOrderLine } from '../orders/lines.js'
import { loadOrder, paymentOfRow, writeOrderEvent } from '../orders/view.js'
import { availableRates } from '../shipping/rates.js'

type CheckoutRow = typeof checkouts.$inferSelect

function visibleTo(customerId: string | null, viewer: CartViewer): boolean {
  return customerId === null || viewer.canSeeAll || customerId === viewer.customerId
}

export function createCheckoutService(db: Database, provider: PaymentProvider) {
  /** The checkout and its cart, priced now, with the shipping rates that apply. */
  async function view(tx: Executor, checkout: CheckoutRow): Promise<Checkout> {
    const priced = priceOrRefuse((await readCart(tx, checkout.cartId))!)
    const rates = await availableRates(tx, priced)
    const cart = priced.view
    return {
      id: checkout.id,
      cart_id: checkout.cartId,
      status: checkout.status,
      customer_id: cart.customer_id,
      email: cart.email,
      currency: cart.currency,
      items: cart.items,
      coupons: cart.coupons,
      shipping_address: cart.shipping_address,
      billing_address: checkout.billingAddress,
      shipping_rates: rates.map((rate) => rate.view),
      shipping_rate_id: cart.shipping_method_id,
      totals: cart.totals,
      order_id: checkout.orderId,
      created_at: checkout.createdAt.toISOString(),
      updated_at: checkout.updatedAt.toISOString(),
    }
  }

  /** The checkout with its cart's owner, if the viewer may see it; `lock` takes the row lock. */
  async function findCheckout(tx: Executor, id: string, viewer: CartViewer, lock = false) {
    const query = tx
      .select({ checkout: checkouts, customerId: carts.customerId })
      .from(checkouts)
      .innerJoin(carts, eq(carts.id, checkouts.cartId))
      .where(eq(checkouts.id, id))
    const [found] = lock ? await query.for('update', { of: checkouts }) : await query
    if (!found || !visibleTo(found.customerId, viewer)) throw notFound('Checkout')
    return found.checkout
  }

  /** Locks an open cart for a change (the `updated_at` touch), or says why it cannot change. */
  async function lockOpenCart(tx: Executor, cartId: string, viewer: CartViewer, changes: Partial<typeof carts.$inferInsert> = {}) {
    const [cart] = await tx
      .update(carts)
      .set({ ...changes, updatedAt: new Date() })
      .where(and(eq(carts.id, cartId), isNull(carts.completedAt)))
      .returning({ customerId: carts.customerId })
    if (cart && visibleTo(cart.customerId, viewer)) return cart
    const [existing] = await tx.select({ customerId: carts.customerId }).from(carts).where(eq(carts.id, cartId))
    if (!existing || !visibleTo(existing.customerId, viewer)) throw notFound('Cart')
    throw conflict('This cart was already checked out')
  }

  function requireOpen(checkout: CheckoutRow) {
    if (checkout.status !== 'open') throw conflict('This checkout is already completed')
  }

  return {
    create(body: CreateCheckout, viewer: CartViewer): Promise<Checkout> {
      return db.transaction(async (tx) => {
        const shippingAddress = toAddress(body.shipping_address)
        await lockOpenCart(tx, body.cart_id, viewer, { email: body.email, shippingAddress, shippingMethodId: null })
        const [line] = await tx.select({ id: cartItems.id }).from(cartItems).where(eq(cartItems.cartId, body.cart_id)).limit(1)
        if (!line) throw invalidField('cart_id', 'The cart is empty')
        const [checkout] = await tx
          .insert(checkouts)
          .values({
            cartId: body.cart_id,
            billingAddress: body.billing_address ? toAddress(body.billing_address) : shippingAddress,
          })
          .returning()
        return view(tx, checkout!)
      })
    },

    get(id: string, viewer: CartViewer): Promise<Checkout> {
      return db.transaction(async (tx) => view(tx, await findCheckout(tx, id, viewer)))
    },

    selectShipping(id: string, rateId: string, viewer: CartViewer): Promise<Checkout> {
      return db.transaction(async (tx) => {
        const checkout = await findCheckout(tx, id, viewer, true)
        requireOpen(checkout)
        await lockOpenCart(tx, checkout.cartId, viewer)
        const priced = priceOrRefuse((await readCart(tx, checkout.cartId))!)
        const rates = await availableRates(tx, priced)
        if (!rates.some((rate) => rate.id === rateId)) {
          throw invalidField('rate_id', "Field 'rate_id' is not one of this checkout's shipping rates")
        }
        await tx.update(carts).set({ shippingMethodId: rateId }).where(eq(carts.id, checkout.cartId))
        return view(tx, checkout)
      })
    },

    /**
     * Completes the checkout inside `tx` (the idempotency runner's transaction) and answers the
     * order. Lock order: checkout, cart, coupons, then stock rows by id, so concurrent checkouts
     * never deadlock.
     */
    async complete(tx: Executor, id: string, body: CompleteCheckout, viewer: CartViewer, requestId: string, idempotencyKey: string): Promise<Order> {
      const checkout = await findCheckout(tx, id, viewer, true)
      requireOpen(checkout)
      await lockOpenCart(tx, checkout.cartId, viewer)
      const priced = priceOrRefuse((await readCart(tx, checkout.cartId))!)
      const cart = priced.view
      if (cart.items.length === 0) throw conflict('The cart is empty')
      const unavailable = cart.items.find((item) => !item.available)
      if (unavailable) {
        throw new ApiError('conflict', `'${unavailable.title}' is no longer sold; remove it from the cart`, [
          { field: 'items', message: unavailable.id },
        ])
      }
      const rates = await availableRates(tx, priced)
      const rate = rates.find((candidate) => candidate.id === cart.shipping_method_id)
      if (!rate && rates.length > 0) {
        throw invalidField('rate_id', 'Choose a shipping rate first (POST /checkouts/:id/shipping)')
      }

      await useCoupons(tx, priced)
      const lines = priced.availableLines.map((line) => ({ ...line, unitPriceMinor: line.priceMinor }))
      await takeStockOfLines(tx, lines)

      const order = await createOrder(tx, checkout, priced, lines, rate ?? null)
      const charge = await provider.charge({
        amountMinor: priced.totals.total,
        currency: cart.currency,
        method: body.payment.method,
        token: body.payment.token,
        idempotencyKey: `checkout:${checkout.id}:${idempotencyKey}`,
      })
      if (charge.status === 'failed') {
        const declined = new ApiError('payment_declined', charge.message, [{ field: 'payment.token', message: charge.code }])
        throw new RefusalWithRecord(declined, async (recordTx) => {
          const [payment] = await recordTx
            .insert(payments)
            .values({
              checkoutId: checkout.id,
              provider: provider.name,
              method: body.payment.method,
              status: 'failed',
              amountMinor: priced.totals.total,
              currency: cart.currency,
              failureCode: charge.code,
              failureMessage: charge.message,
            })
            .returning()
          await writeEvent(recordTx, {
            kind: 'payment.failed',
            data: { ...paymentOfRow(payment!), checkout_id: checkout.id },
            customerId: cart.customer_id,
            requestId,
          })
        })
      }

      const [payment] = await tx
        .insert(payments)
        .values({
          orderId: order.id,
          checkoutId: checkout.id,
          provider: provider.name,
          method: body.payment.method,
          status: 'succeeded',
          amountMinor: priced.totals.total,
          currency: cart.currency,
          providerReference: charge.reference,
        })
        .returning()
      const paidEvent = moveOrder('pending', 'paid')
      await tx
        .update(orders)
        .set({ status: 'paid', paymentStatus: 'paid', paidMinor: priced.totals.total })
        .where(eq(orders.id, order.id))
      await tx.update(checkouts).set({ status: 'completed', orderId: order.id }).where(eq(checkouts.id, checkout.id))
      await tx.update(carts).set({ completedAt: new Date() }).where(eq(carts.id, checkout.cartId))

      const placed = (await loadOrder(tx, order.id))!
      await writeOrderEvent(tx, 'order.created', placed, requestId)
      await writeEvent(tx, {
        kind: 'payment.succeeded',
        data: { ...paymentOfRow(payment!), order_id: order.id },
        customerId: placed.customer_id,
        requestId,
      })
      await writeOrderEvent(tx, paidEvent, placed, requestId)
      return placed
    },
  }

  /** Each applicable coupon is used once more, refused when another checkout took its last use. */
  async function useCoupons(tx: Executor, priced: PricedCart) {
    const ids = priced.applicableCoupons.map((coupon) => coupon.id)
    if (ids.length === 0) return
    const used = await tx
      .update(coupons)
      .set({ timesUsed: sql`${coupons.timesUsed} + 1` })
      .where(and(inArray(coupons.id, ids), or(isNull(coupons.usageLimit), sql`${coupons.timesUsed} < ${coupons.usageLimit}`)))
      .returning({ id: coupons.id })
    const usedUp = priced.applicableCoupons.find((coupon) => !used.some((row) => row.id === coupon.id))
    if (usedUp) throw new ApiError('coupon_invalid', `Coupon '${usedUp.code}' has reached its usage limit; remove it from the cart`)
  }

  /** The pending order: a copy of the cart's lines, prices, addresses and shipping method. */
  async function createOrder(tx: Executor, checkout: CheckoutRow, priced: PricedCart, lines: NewOrderLine[], rate: { id: string; name: string; amountMinor: number } | null) {
    const { view: cart, totals } = priced
    const [order] = await tx
      .insert(orders)
      .values({
        customerId: cart.customer_id,
        email: cart.email!,
        currency: cart.currency,
        subtotalMinor: totals.subtotal,
        discountMinor: totals.discount,
        taxMinor: totals.tax,
        shippingMinor: totals.shipping,
        totalMinor: totals.total,
        shippingAddress: cart.shipping_address,
        billingAddress: checkout.billingAddress,
        shippingMethod: rate && { id: rate.id, name: rate.name, amount_minor: totals.shipping },
        coupons: priced.applicableCoupons.map((coupon) => ({
          id: coupon.id,
          code: coupon.code,
          type: coupon.type,
          discount_minor: totals.coupons.find((entry) => entry.id === coupon.id)?.discount ?? 0,
        })),
        cartId: checkout.cartId,
      })
      .returning({ id: orders.id })
    const lineTotals = new Map(totals.lines.map((line) => [line.id, line]))
    const amounts = priced.availableLines.map((line) => lineTotals.get(line.id)!)
    await insertOrderItems(tx, order!.id, lines, amounts)
    return order!
  }
}
