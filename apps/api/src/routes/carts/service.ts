/** Carts: creating, reading and changing them, and who may see which cart. */
import { and, eq, isNull, sql } from 'drizzle-orm'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import {
  DomainError,
  MAX_CART_COUPONS,
  MAX_CART_LINES,
  MAX_LINE_QUANTITY,
  MAX_MINOR_UNITS,
  formatMinorUnits,
  hasScope,
  normalizeCouponCode,
  promotionRejectionMessage,
  toAddress,
  type AddCartItem,
  type AddressInput,
  type Cart,
  type CreateCart,
} from '@commerce/domain'
import {
  addCartLine,
  cartCoupons,
  cartItems,
  carts,
  promotions,
  newId,
  prepareCartRead,
  products,
  productVariants,
  readCart,
  setCartLineQuantity,
  sqlOf,
  type AddedLine,
  type CartRow,
  type Database,
  type Executor,
} from '@commerce/db'
import { ApiError, conflict, invalidField, notFound } from '../../errors.js'
import { knownCurrency } from '../../fields.js'
import { priceCart, type PricedCart, type PricingRules } from './pricing.js'

/** Who is asking: a customer sees its own and anonymous carts; `canSeeAll` is an admin or a scoped key. */
export interface CartViewer {
  customerId: string | null
  canSeeAll: boolean
}

export async function cartViewerOf(
  app: FastifyInstance,
  request: FastifyRequest,
  scope: 'carts:read' | 'carts:write',
): Promise<CartViewer> {
  return {
    customerId: app.customerIdOf(request),
    canSeeAll: request.principal !== null && hasScope(request.principal.scopes, scope),
  }
}

/** An anonymous cart is anyone's who holds its id; a customer's cart is its owner's (and admins'). */
export function visibleTo(row: { customerId: string | null }, viewer: CartViewer): boolean {
  return row.customerId === null || viewer.canSeeAll || row.customerId === viewer.customerId
}

function insufficientInventory(available: number, requested: number, line: { productId: string; variantId: string | null }) {
  return new ApiError(
    'insufficient_inventory',
    `Only ${available} in stock, ${requested} requested`,
    [{ field: line.variantId ? 'variant_id' : 'product_id', message: `${available} available` }],
  )
}

/** Pricing that fails on data it cannot price refuses the request (a total past the limit does not fail: priceCart marks the line). */
export function priceOrRefuse(row: CartRow, rules: PricingRules, now?: Date): Promise<PricedCart> {
  return priceCart(row, rules, now).catch(refusal)
}

function refusal(error: unknown): never {
  if (error instanceof DomainError) throw ApiError.fromDomain(error)
  throw error
}

function addRefusal(line: AddedLine, request: { productId: string; variantId: string | null }): ApiError {
  switch (line.refusal!) {
    case 'product':
      return notFound('Product')
    case 'variant':
      return notFound('Variant')
    case 'currency':
      return new ApiError(
        'currency_mismatch',
        `The product has no price in ${line.cartCurrency}, the cart's currency (it is priced in ${line.currency})`,
        [{ field: 'product_id', message: `priced in ${line.currency}` }],
      )
    case 'quantity':
      return invalidField('quantity', `A cart line holds at most ${MAX_LINE_QUANTITY} units`)
    case 'inventory':
      return insufficientInventory(line.inventory, line.quantity, request)
    case 'lines':
      return new ApiError('validation_error', `A cart holds at most ${MAX_CART_LINES} lines`)
  }
}

/** A change that adds units is refused when a line would then be past the total limit. */
function refuseUnitsPastLimit(view: Cart) {
  if (view.items.some((item) => item.problem?.code === 'total_too_large')) {
    const max = `${formatMinorUnits(MAX_MINOR_UNITS, view.currency)} ${view.currency}`
    throw invalidField('quantity', `With this quantity the cart's total would be more than ${max}, the most an amount can be`)
  }
}

export function createCartService(db: Database, rules: PricingRules) {
  const cartRead = prepareCartRead(db)
  const priceRow = (row: CartRow, now?: Date) => priceOrRefuse(row, rules, now)

  /**
   * Locks the cart for a change by touching `updated_at`: one writer per cart at a time, so lines
   * and limits stay consistent. Only a refusal costs a second query, to say why.
   */
  async function lockCart(tx: Executor, id: string, viewer: CartViewer) {
    const [row] = await tx
      .update(carts)
      .set({ updatedAt: new Date() })
      .where(and(eq(carts.id, id), isNull(carts.completedAt)))
      .returning({ customerId: carts.customerId, currency: carts.currency })
    if (row && visibleTo(row, viewer)) return row
    const [existing] = await tx.select({ customerId: carts.customerId }).from(carts).where(eq(carts.id, id))
    if (!existing || !visibleTo(existing, viewer)) throw notFound('Cart')
    throw conflict('This cart was checked out and can no longer change')
  }

  /**
   * Runs a change to one cart and answers the cart as that transaction left it. `work` resolves
   * true when it adds units: such a change is refused when a line would then be past the total
   * limit. Any other change (a removal, a lower quantity, an email) goes through and the line
   * stays marked, so that the customer can always fix the cart.
   */
  function change(id: string, viewer: CartViewer, work: (tx: Executor, cart: Awaited<ReturnType<typeof lockCart>>) => Promise<boolean | void>) {
    return db.transaction(async (tx) => {
      const cart = await lockCart(tx, id, viewer)
      const addsUnits = await work(tx, cart)
      const { view } = await priceRow((await readCart(tx, id))!)
      if (addsUnits) refuseUnitsPastLimit(view)
      return view
    })
  }

  /** The stock of a line's product (or variant), as sold now; a product no longer sold, or a variant gone, is not found. */
  async function stockOf(tx: Executor, productId: string, variantId: string | null): Promise<number> {
    const [found] = await tx
      .select({
        isActive: products.isActive,
        variantFound: sql<boolean>`${productVariants.id} is not null`,
        inventory: sql<number>`coalesce(${productVariants.inventoryQuantity}, ${products.inventoryQuantity})`,
      })
      .from(products)
      .leftJoin(
        productVariants,
        and(eq(productVariants.id, sql`${variantId}::uuid`), eq(productVariants.productId, products.id)),
      )
      .where(eq(products.id, productId))
    if (!found?.isActive) throw notFound('Product')
    if (variantId !== null && !found.variantFound) throw notFound('Variant')
    return found.inventory
  }

  return {
    async create(body: CreateCart, customerId: string | null): Promise<Cart> {
      knownCurrency(body.currency)
      const [row] = await db
        .insert(carts)
        .values({ currency: body.currency, customerId, email: body.email ?? null })
        .returning({ id: carts.id })
      return this.get(row!.id, { customerId, canSeeAll: false })
    },

    async get(id: string, viewer: CartViewer): Promise<Cart> {
      return (await this.price(id, viewer)).view
    },

    /** The priced cart with what shipping rates need (country, mass, discounted subtotal). */
    async price(id: string, viewer: CartViewer): Promise<PricedCart> {
      const [row] = await cartRead.execute({ id })
      if (!row || !visibleTo(row, viewer)) throw notFound('Cart')
      return priceRow(row)
    },

    /**
     * The cart's hot write: one round trip sent with BEGIN (addCartLine), then COMMIT once the
     * cart has been priced (pricing that fails refuses the change).
     */
    addItem(id: string, body: AddCartItem, viewer: CartViewer): Promise<Cart> {
      const variantId = body.variant_id ?? null
      return db.transaction(async (tx) => {
        const { line, cart } = await addCartLine(sqlOf(tx), {
          cartId: id,
          productId: body.product_id,
          variantId,
          quantity: body.quantity,
          lineId: newId(),
          seesAllCarts: viewer.canSeeAll,
          customerId: viewer.customerId,
          maxLineQuantity: MAX_LINE_QUANTITY,
          maxCartLines: MAX_CART_LINES,
        })
        if (!line) {
          // No cart this caller may change: missing or someone else's (404), or checked out (409).
          if (!cart || !visibleTo(cart, viewer)) throw notFound('Cart')
          throw conflict('This cart was checked out and can no longer change')
        }
        if (line.refusal !== null) throw addRefusal(line, { productId: body.product_id, variantId })
        const { view } = await priceRow(cart!)
        refuseUnitsPastLimit(view)
        return view
      })
    },

    updateItem(id: string, itemId: string, quantity: number, viewer: CartViewer): Promise<Cart> {
      return change(id, viewer, async (tx) => {
        const line = await setCartLineQuantity(sqlOf(tx), { cartId: id, lineId: itemId, quantity })
        if (!line) throw notFound('Cart item')
        const inventory = await stockOf(tx, line.productId, line.variantId)
        if (quantity > inventory) throw insufficientInventory(inventory, quantity, line)
        return quantity > line.before
      })
    },

    async removeItem(id: string, itemId: string, viewer: CartViewer): Promise<void> {
      await change(id, viewer, async (tx) => {
        const removed = await tx
          .delete(cartItems)
          .where(and(eq(cartItems.id, itemId), eq(cartItems.cartId, id)))
          .returning({ id: cartItems.id })
        if (removed.length === 0) throw notFound('Cart item')
      })
    },

    /**
     * Applies a code promotion. A code that would take nothing off this cart now (expired, below
     * its minimum, beaten by an exclusive promotion, …) is refused with the reason, and not kept.
     */
    applyCoupon(id: string, code: string, viewer: CartViewer, now: Date = new Date()): Promise<Cart> {
      return change(id, viewer, async (tx) => {
        const normalized = normalizeCouponCode(code)
        const [promotion] = await tx.select({ id: promotions.id }).from(promotions).where(eq(promotions.code, normalized))
        if (!promotion) throw new ApiError('coupon_invalid', `Coupon '${normalized}' does not exist`)
        const applied = await tx
          .select({ couponId: cartCoupons.couponId })
          .from(cartCoupons)
          .where(eq(cartCoupons.cartId, id))
        if (applied.some((row) => row.couponId === promotion.id)) {
          throw conflict(`Coupon '${normalized}' is already applied to this cart`)
        }
        if (applied.length >= MAX_CART_COUPONS) {
          throw new ApiError('validation_error', `A cart holds at most ${MAX_CART_COUPONS} coupons`)
        }
        await tx.insert(cartCoupons).values({ cartId: id, couponId: promotion.id })
        const priced = await priceRow((await readCart(tx, id))!, now)
        const rejection = priced.totals.rejected.get(promotion.id)
        if (rejection) throw new ApiError('coupon_invalid', promotionRejectionMessage(priced.promotions.get(promotion.id)!, rejection))
      })
    },

    async removeCoupon(id: string, couponId: string, viewer: CartViewer): Promise<void> {
      await change(id, viewer, async (tx) => {
        const removed = await tx
          .delete(cartCoupons)
          .where(and(eq(cartCoupons.cartId, id), eq(cartCoupons.couponId, couponId)))
          .returning({ couponId: cartCoupons.couponId })
        if (removed.length === 0) throw notFound('Coupon on this cart')
      })
    },

    /** A new address changes tax and which shipping methods apply, so a chosen method is dropped. */
    setShippingAddress(id: string, address: AddressInput, viewer: CartViewer): Promise<Cart> {
      return change(id, viewer, async (tx) => {
        await tx.update(carts).set({ shippingAddress: toAddress(address), shippingMethodId: null }).where(eq(carts.id, id))
      })
    },

    setEmail(id: string, email: string, viewer: CartViewer): Promise<Cart> {
      return change(id, viewer, async (tx) => {
        await tx.update(carts).set({ email }).where(eq(carts.id, id))
      })
    },
  }
}
