/**
 * Pricing and placing an order made by an admin: `POST /orders` and a draft order's completion
 * both go through here, so the two make the same order from the same figures.
 */
import { eq } from 'drizzle-orm'
import { computeCartTotals, shippingRate, selectTaxRate, type Address, type CartTotals, type CouponRule, type Order } from '@commerce/domain'
import { orderItems, orders, shippingMethods, taxRates, type EventOrigin, type Executor, type OrderShippingMethod } from '@commerce/db'
import { invalidField } from '../../errors.js'
import { commitLines } from '../inventory/stock.js'
import { orderItemRows, type NewOrderLine } from './lines.js'
import { loadOrder, writeOrderEvent } from './view.js'

/** A line to price: its id (the tie-break of discount shares), price, units and weight. */
export interface PricedLine {
  id: string
  unitPriceMinor: number
  quantity: number
  mass: bigint
}

/**
 * The totals of lines shipped to `shippingAddress`: its tax rate today, the discounts given as
 * coupons, and the shipping method's rate (400 naming `shipping_method_id` when it does not ship
 * them). Without an address there is no tax.
 */
export async function priceOrder(
  tx: Executor,
  input: { currency: string; lines: readonly PricedLine[]; shippingAddress: Address | null; shippingMethodId: string | null | undefined; coupons: readonly CouponRule[] },
): Promise<{ totals: CartTotals; shipping: OrderShippingMethod | null }> {
  const { currency, shippingAddress, coupons } = input
  const rates = shippingAddress ? await tx.select().from(taxRates).where(eq(taxRates.country, shippingAddress.country)) : []
  const taxRate = selectTaxRate(rates, shippingAddress)
  const lines = input.lines.map((line) => ({ id: line.id, unitPriceMinor: line.unitPriceMinor, quantity: line.quantity }))
  let shipping: OrderShippingMethod | null = null
  if (input.shippingMethodId) {
    const merchandise = computeCartTotals({ currency, lines, coupons, taxRatePpm: 0, shippingMinor: null })
    const [method] = await tx.select().from(shippingMethods).where(eq(shippingMethods.id, input.shippingMethodId))
    const amount =
      method &&
      shippingRate(method, {
        currency,
        country: shippingAddress?.country ?? null,
        mass: input.lines.reduce((sum, line) => sum + line.mass * BigInt(line.quantity), 0n),
        merchandiseMinor: merchandise.subtotal - merchandise.discount,
      })
    if (amount === null || amount === undefined) {
      throw invalidField('shipping_method_id', "Field 'shipping_method_id' names no method that ships this order")
    }
    shipping = { id: method!.id, name: method!.name, amount_minor: amount }
  }
  const totals = computeCartTotals({
    currency,
    lines,
    coupons,
    taxRatePpm: taxRate?.ratePpm ?? 0,
    taxRounding: taxRate?.rounding,
    shippingMinor: shipping?.amount_minor ?? null,
  })
  return { totals, shipping }
}

/** An admin's order as it is to be placed: its lines (`totals.lines[i]` belongs to `lines[i]`) and their totals. */
export interface OrderPlacement {
  customerId: string | null
  email: string
  currency: string
  lines: readonly NewOrderLine[]
  totals: Pick<CartTotals, 'subtotal' | 'discount' | 'tax' | 'shipping' | 'total' | 'lines'>
  shippingAddress: Address | null
  billingAddress: Address | null
  shippingMethod: OrderShippingMethod | null
  notes: string | null
  /** What the request calls the lines, for the line a 409 insufficient_inventory names (`items[i]`). */
  linesField: string
}

/**
 * Places a pending order: writes the order and its lines, commits every line's units at the
 * locations allocation chooses (409 insufficient_inventory naming the first line short, and the
 * caller's transaction keeps nothing) and writes `order.created`.
 */
export async function placeOrder(tx: Executor, placement: OrderPlacement, origin: EventOrigin): Promise<Order> {
  const { totals } = placement
  const [order] = await tx
    .insert(orders)
    .values({
      customerId: placement.customerId,
      email: placement.email,
      currency: placement.currency,
      subtotalMinor: totals.subtotal,
      discountMinor: totals.discount,
      taxMinor: totals.tax,
      shippingMinor: totals.shipping,
      totalMinor: totals.total,
      shippingAddress: placement.shippingAddress,
      billingAddress: placement.billingAddress,
      shippingMethod: placement.shippingMethod,
      notes: placement.notes,
    })
    .returning({ id: orders.id })
  const items = orderItemRows(order!.id, placement.lines, totals.lines)
  await tx.insert(orderItems).values(items)
  await commitLines(tx, order!.id, items, placement.linesField, origin)
  const created = (await loadOrder(tx, order!.id))!
  await writeOrderEvent(tx, 'order.created', created, origin)
  return created
}
