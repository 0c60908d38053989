/**
 * Checkout: a cart with an address and a chosen shipping rate; completing it is complete.ts.
 */
import { and, eq, isNull } from 'drizzle-orm'
import { toAddress, type Checkout, type CreateCheckout } from '@commerce/domain'
import { cartItems, carts, checkouts, readCart, type Database, type Executor } from '@commerce/db'
import { conflict, invalidField, notFound } from '../../errors.js'
import type { PricingRules } from '../carts/pricing.js'
import { priceOrRefuse, visibleTo, type CartViewer } from '../carts/service.js'
import { availableRates } from '../shipping/rates.js'

type CheckoutRow = typeof checkouts.$inferSelect

export function createCheckoutService(db: Database, rules: PricingRules) {
  /** The checkout and its cart, priced now, with the shipping rates that apply. */
  async function view(tx: Executor, checkout: CheckoutRow): Promise<Checkout> {
    const priced = await priceOrRefuse((await readCart(tx, checkout.cartId))!, rules)
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
    if (!found || !visibleTo(found, viewer)) throw notFound('Checkout')
    return found.checkout
  }

  /** Locks an open cart for a change (the `updated_at` touch), or says why it cannot change. */
  async function lockOpenCart(tx: Executor, cartId: string, viewer: CartViewer, changes: Partial<typeof carts.$inferInsert> = {}) {
    const [cart] = await tx
      .update(carts)
      .set({ ...changes, updatedAt: new Date() })
      .where(and(eq(carts.id, cartId), isNull(carts.completedAt)))
      .returning({ customerId: carts.customerId })
    if (cart && visibleTo(cart, viewer)) return cart
    const [existing] = await tx.select({ customerId: carts.customerId }).from(carts).where(eq(carts.id, cartId))
    if (!existing || !visibleTo(existing, viewer)) throw notFound('Cart')
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
        const priced = await priceOrRefuse((await readCart(tx, checkout.cartId))!, rules)
        const rates = await availableRates(tx, priced)
        if (!rates.some((rate) => rate.id === rateId)) {
          throw invalidField('rate_id', "Field 'rate_id' is not one of this checkout's shipping rates")
        }
        await tx.update(carts).set({ shippingMethodId: rateId }).where(eq(carts.id, checkout.cartId))
        return view(tx, checkout)
      })
    },
  }
}
