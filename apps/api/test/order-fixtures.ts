/** Orders straight into the database, for tests of what happens to an order after it exists. */
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { eq } from 'drizzle-orm'
import type { Order, OrderStatus, PaymentProvider, PaymentStatus, Product } from '@commerce/domain'
import { applyStockMoves, newId, orderItemAllocations, orderItems, orders, payments, stockLocations } from '@commerce/db'
import { testProvider } from '@commerce/payments'
import type { TestContext } from './helpers.js'

export interface OrderFixture {
  status?: OrderStatus
  paymentStatus?: PaymentStatus
  customerId?: string | null
  currency?: string
  /** Unit prices in minor units; each line has quantity 1 unless given. */
  items?: { unitPriceMinor: number; quantity?: number; productId?: string | null; title?: string }[]
  shippingMinor?: number
  /** A succeeded `test` payment of the whole total (default when the status is past pending). */
  paid?: boolean
}

export async function insertOrder(ctx: TestContext, fixture: OrderFixture = {}) {
  const currency = fixture.currency ?? 'USD'
  const items = fixture.items ?? [{ unitPriceMinor: 1000, quantity: 2 }]
  const subtotal = items.reduce((sum, item) => sum + item.unitPriceMinor * (item.quantity ?? 1), 0)
  const shipping = fixture.shippingMinor ?? 0
  const total = subtotal + shipping
  const status = fixture.status ?? 'pending'
  const paid = fixture.paid ?? status !== 'pending'
  const [order] = await ctx.handle.db
    .insert(orders)
    .values({
      status,
      paymentStatus: fixture.paymentStatus ?? (paid ? 'paid' : 'unpaid'),
      customerId: fixture.customerId ?? null,
      email: 'buyer@example.com',
      currency,
      subtotalMinor: subtotal,
      discountMinor: 0,
      taxMinor: 0,
      shippingMinor: shipping,
      totalMinor: total,
      paidMinor: paid ? total : 0,
      shippingAddress: {
        first_name: 'Ada',
        last_name: 'Lovelace',
        company: null,
        line1: '12 St James Sq',
        line2: null,
        city: 'London',
        region: null,
        postal_code: 'SW1Y 4JH',
        country: 'GB',
        phone: null,
      },
    })
    .returning()
  const lines = await ctx.handle.db
    .insert(orderItems)
    .values(
      items.map((item, index) => {
        const quantity = item.quantity ?? 1
        const lineTotal = item.unitPriceMinor * quantity
        return {
          orderId: order!.id,
          productId: item.productId ?? null,
          title: item.title ?? `Item ${index + 1}`,
          quantity,
          unitPriceMinor: item.unitPriceMinor,
          subtotalMinor: lineTotal,
          discountMinor: 0,
          taxMinor: 0,
          totalMinor: lineTotal,
        }
      }),
    )
    .returning()
  // The lines' units are promised to the order at the default location, on hand there beside the
  // product's stock (its inventory_quantity does not change), as a placed order's would be.
  const stocked = lines.filter((line) => line.productId !== null)
  if (stocked.length > 0 && ['pending', 'paid', 'shipped'].includes(status)) {
    const [location] = await ctx.handle.db.select({ id: stockLocations.id }).from(stockLocations).where(eq(stockLocations.isDefault, true))
    await applyStockMoves(
      ctx.handle.sql,
      stocked.map((line) => ({ item: line.productId!, location: location!.id, on_hand: line.quantity, committed: line.quantity, reason: 'initial' as const })),
    )
    await ctx.handle.db.insert(orderItemAllocations).values(stocked.map((line) => ({ orderItemId: line.id, locationId: location!.id, quantity: line.quantity })))
  }
  const paymentId = newId()
  const [payment] = paid
    ? await ctx.handle.db
        .insert(payments)
        .values({
          id: paymentId,
          orderId: order!.id,
          provider: 'test',
          method: 'card',
          status: 'captured',
          amountMinor: total,
          capturedMinor: total,
          currency,
          // What the test provider answered for this payment (its reference encodes it).
          providerReference: `pay_test_${paymentId}.${total}.${currency}.automatic.tok_visa`,
        })
        .returning()
    : []
  return { order: order!, items: lines, payment: payment ?? null }
}

export async function orderRow(ctx: TestContext, id: string) {
  const [row] = await ctx.handle.db.select().from(orders).where(eq(orders.id, id))
  return row
}

/** Ships everything left of an order (admin). */
export async function shipAll(ctx: TestContext, admin: string, orderId: string) {
  await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/orders/${orderId}/fulfillments`, payload: { carrier: 'DHL', tracking_number: `JD${Date.now()}` }, token: admin })
}

/** A paid order of two stocked products (2 × 10.00 and 1 × 5.00, shipping 4.00), placed straight into the database and shipped. */
export async function shippedOrder(ctx: TestContext, admin: string, customerId: string | null = null) {
  const product = (title: string) =>
    ctx.expectStatus<Product>(201, { method: 'POST', url: '/api/v1/products', payload: { title, price: 10, currency: 'USD', inventory_quantity: 5 }, token: admin })
  const [mug, plate] = [await product('Mug'), await product('Plate')]
  const { order, items, payment } = await insertOrder(ctx, {
    status: 'paid',
    customerId,
    shippingMinor: 400,
    items: [
      { unitPriceMinor: 1000, quantity: 2, productId: mug.id, title: 'Mug' },
      { unitPriceMinor: 500, quantity: 1, productId: plate.id, title: 'Plate' },
    ],
  })
  await shipAll(ctx, admin, order.id)
  return { order, mugLine: items[0]!, plateLine: items[1]!, mug, plate, payment: payment! }
}

/** A guest buys one unit of a product through a cart and a checkout (the `test` provider, tok_visa). */
export async function buyOne(ctx: TestContext, productId: string): Promise<Order> {
  const cart = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: 'USD' } })
  await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/carts/${cart.id}/items`, payload: { product_id: productId, quantity: 1 } })
  const address = { first_name: 'Ada', last_name: 'L', line1: '1 Sq', city: 'London', postal_code: 'SW1Y 4JH', country: 'GB' }
  const checkout = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/checkouts', payload: { cart_id: cart.id, email: 'ada@example.com', shipping_address: address } })
  return ctx.expectStatus<Order>(201, { method: 'POST', url: `/api/v1/checkouts/${checkout.id}/complete`, payload: { payment: { method: 'card', token: 'tok_visa' } }, headers: { 'idempotency-key': `buy-${randomUUID()}` } })
}

/** The `test` provider taking `ms` to make each refund; `refundAsked` settles when the first is asked. */
export function refundingSlowly(ms: number): { provider: PaymentProvider; refundAsked: Promise<void> } {
  let asked!: () => void
  const refundAsked = new Promise<void>((resolve) => (asked = resolve))
  const provider: PaymentProvider = {
    ...testProvider,
    async refund(request) {
      asked()
      await sleep(ms)
      return testProvider.refund(request)
    },
  }
  return { provider, refundAsked }
}
