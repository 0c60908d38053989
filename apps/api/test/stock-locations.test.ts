/**
 * Stock at several locations under orders: checkouts hold and commit units where allocation
 * chooses, fulfillments ship from a location, cancellations and returns give units back, and
 * 100 concurrent checkouts with adjustments and transfers racing them never oversell.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect } from 'vitest'
import type { Checkout, InventoryChange, Order, Product, StockLocation } from '@commerce/domain'
import { test, type TestContext } from './helpers.js'
import { expectStockInvariants } from './stock-invariants.js'

const ADDRESS = { first_name: 'Ada', last_name: 'Lovelace', line1: '12 St James Sq', city: 'London', postal_code: 'SW1Y 4JH', country: 'GB' }
const VISA = { payment: { method: 'card', token: 'tok_visa' } }

function createProduct(ctx: TestContext, admin: string, payload: Record<string, unknown>): Promise<Product> {
  return ctx.expectStatus(201, { method: 'POST', url: '/api/v1/products', payload: { currency: 'GBP', price: 10, ...payload }, token: admin })
}

function createLocation(ctx: TestContext, admin: string, name: string, priority: number): Promise<StockLocation> {
  return ctx.expectStatus(201, { method: 'POST', url: '/api/v1/stock-locations', payload: { name, priority }, token: admin })
}

async function defaultLocation(ctx: TestContext, admin: string): Promise<StockLocation> {
  const { stock_locations: all } = await ctx.expectStatus<{ stock_locations: StockLocation[] }>(200, { method: 'GET', url: '/api/v1/stock-locations', token: admin })
  return all.find((location) => location.is_default)!
}

function adjust(ctx: TestContext, admin: string, body: Record<string, unknown>) {
  return ctx.request({ method: 'POST', url: '/api/v1/inventory/adjustments', payload: { reason: 'received', ...body }, token: admin })
}

async function stockOf(ctx: TestContext, productId: string): Promise<number> {
  const [row] = await ctx.handle.sql<{ n: number }[]>`select inventory_quantity as n from products where id = ${productId}`
  return row!.n
}

async function levelsOf(ctx: TestContext, productId: string) {
  return ctx.handle.sql<{ location: string; on_hand: number; reserved: number; committed: number }[]>`
    select l.location_id as location, l.on_hand, l.reserved, l.committed from inventory_levels l where l.product_id = ${productId} order by l.location_id`
}

async function startCheckout(ctx: TestContext, items: { product: Product; quantity: number }[]): Promise<Checkout> {
  const cart = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: 'GBP' } })
  for (const item of items) {
    await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/carts/${cart.id}/items`, payload: { product_id: item.product.id, quantity: item.quantity } })
  }
  const checkout = await ctx.expectStatus<Checkout>(201, {
    method: 'POST',
    url: '/api/v1/checkouts',
    payload: { cart_id: cart.id, email: 'ada@example.com', shipping_address: ADDRESS },
  })
  const [cheapest] = checkout.shipping_rates
  if (!cheapest) return checkout
  return ctx.expectStatus(200, { method: 'POST', url: `/api/v1/checkouts/${checkout.id}/shipping`, payload: { rate_id: cheapest.id } })
}

function complete(ctx: TestContext, checkoutId: string) {
  return ctx.request({ method: 'POST', url: `/api/v1/checkouts/${checkoutId}/complete`, payload: VISA, headers: { 'idempotency-key': `test-${randomUUID()}` } })
}

/** What a change did to the sellable units of the levels it answers (available after, and its delta). */
function sellableChange(change: InventoryChange): number {
  let total = 0
  for (const level of change.levels) {
    const delta = change.movements
      .filter((movement) => movement.level_id === level.id)
      .reduce((sum, m) => sum + m.on_hand_delta - m.reserved_delta - m.committed_delta - m.safety_stock_delta, 0)
    total += Math.max(0, level.available) - Math.max(0, level.available - delta)
  }
  return total
}

describe('allocation at checkout', () => {
  test('a cart is taken from the one location that has all of it, by priority; split over the fewest when none has', async ({ ctx, admin }) => {
    const home = await defaultLocation(ctx, admin)
    const east = await createLocation(ctx, admin, `East ${randomUUID()}`, 1)
    const west = await createLocation(ctx, admin, `West ${randomUUID()}`, 2)
    const mug = await createProduct(ctx, admin, { title: 'Mug', inventory_quantity: 1 })
    const cap = await createProduct(ctx, admin, { title: 'Cap', inventory_quantity: 0 })
    for (const [product, location, quantity] of [
      [mug, east, 2],
      [cap, east, 1],
      [mug, west, 5],
      [cap, west, 5],
    ] as const) {
      expect((await adjust(ctx, admin, { product_id: product.id, location_id: location.id, quantity })).statusCode).toBe(201)
    }
    expect(await stockOf(ctx, mug.id)).toBe(8)

    // 2 mugs and 2 caps: only West has both.
    const first = await complete(ctx, (await startCheckout(ctx, [{ product: mug, quantity: 2 }, { product: cap, quantity: 2 }])).id)
    expect(first.statusCode, first.body).toBe(201)
    const order = first.json<Order>()
    const allocations = await ctx.expectStatus<{ allocations: { order_item_id: string; location_id: string; quantity: number }[] }>(200, {
      method: 'GET',
      url: `/api/v1/orders/${order.id}/allocations`,
      token: admin,
    })
    expect(allocations.allocations.map((a) => [a.location_id, a.quantity])).toEqual([
      [west.id, 2],
      [west.id, 2],
    ])
    // 6 mugs: home 1, east 2, west 3 left: two locations cannot, all three can.
    const second = await complete(ctx, (await startCheckout(ctx, [{ product: mug, quantity: 6 }])).id)
    expect(second.statusCode, second.body).toBe(201)
    const spread = await ctx.expectStatus<{ allocations: { location_id: string; quantity: number }[] }>(200, {
      method: 'GET',
      url: `/api/v1/orders/${second.json<Order>().id}/allocations`,
      token: admin,
    })
    expect(Object.fromEntries(spread.allocations.map((a) => [a.location_id, a.quantity]))).toEqual({ [home.id]: 1, [east.id]: 2, [west.id]: 3 })
    expect(await stockOf(ctx, mug.id)).toBe(0)
    await expectStockInvariants(ctx.handle.sql)

    // A fulfillment without a location is refused when the units are committed at several; per location it ships.
    const refused = await ctx.expectError(400, 'validation_error', {
      method: 'POST',
      url: `/api/v1/orders/${second.json<Order>().id}/fulfillments`,
      payload: { carrier: 'DHL', tracking_number: 'T-1' },
      token: admin,
    })
    expect(refused.details).toEqual([expect.objectContaining({ field: 'location_id' })])
    const unknown = await ctx.expectError(400, 'validation_error', {
      method: 'POST',
      url: `/api/v1/orders/${second.json<Order>().id}/fulfillments`,
      payload: { carrier: 'DHL', tracking_number: 'T-1', location_id: '0190a6f1-7c3a-7000-8000-00000000beef' },
      token: admin,
    })
    expect(unknown.details).toEqual([expect.objectContaining({ field: 'location_id', message: "Field 'location_id' names no stock location" })])
    const line = second.json<Order>().items[0]!
    const shipped = await ctx.expectStatus<{ location_id: string }>(201, {
      method: 'POST',
      url: `/api/v1/orders/${second.json<Order>().id}/fulfillments`,
      payload: { carrier: 'DHL', tracking_number: 'T-2', location_id: west.id, items: [{ order_item_id: line.id, quantity: 3 }] },
      token: admin,
    })
    expect(shipped.location_id).toBe(west.id)
    const westLevel = (await levelsOf(ctx, mug.id)).find((level) => level.location === west.id)!
    expect(westLevel).toMatchObject({ on_hand: 2, committed: 2, reserved: 0 })
    await expectStockInvariants(ctx.handle.sql)
  })

  test('shipping from a location the units were not committed at moves the commitment there; cancelling gives the rest back', async ({ ctx, admin }) => {
    const home = await defaultLocation(ctx, admin)
    const store = await createLocation(ctx, admin, `Store ${randomUUID()}`, 5)
    const lamp = await createProduct(ctx, admin, { title: 'Lamp', inventory_quantity: 3 })
    expect((await adjust(ctx, admin, { product_id: lamp.id, location_id: store.id, quantity: 4 })).statusCode).toBe(201)
    const placed = await complete(ctx, (await startCheckout(ctx, [{ product: lamp, quantity: 3 }])).id)
    const order = placed.json<Order>()
    expect(await stockOf(ctx, lamp.id)).toBe(4)
    // Committed at home (priority 0); sent from the store: home gets its units back to sell.
    await ctx.expectStatus(201, {
      method: 'POST',
      url: `/api/v1/orders/${order.id}/fulfillments`,
      payload: { carrier: 'DHL', tracking_number: 'T-3', location_id: store.id, items: [{ order_item_id: order.items[0]!.id, quantity: 2 }] },
      token: admin,
    })
    const levels = Object.fromEntries((await levelsOf(ctx, lamp.id)).map((level) => [level.location, level]))
    expect(levels[home.id]).toMatchObject({ on_hand: 3, committed: 1 })
    expect(levels[store.id]).toMatchObject({ on_hand: 2, committed: 0 })
    expect(await stockOf(ctx, lamp.id)).toBe(4)
    // The last unit from the store too: home's commitment goes back to selling.
    await ctx.expectStatus(201, {
      method: 'POST',
      url: `/api/v1/orders/${order.id}/fulfillments`,
      payload: { carrier: 'DHL', tracking_number: 'T-4', location_id: store.id, items: [{ order_item_id: order.items[0]!.id, quantity: 1 }] },
      token: admin,
    })
    expect(Object.fromEntries((await levelsOf(ctx, lamp.id)).map((level) => [level.location, level]))).toMatchObject({
      [home.id]: { on_hand: 3, committed: 0 },
      [store.id]: { on_hand: 1, committed: 0 },
    })
    expect(await stockOf(ctx, lamp.id)).toBe(4)
    // An order committed at home cannot be sent from the store, which has one unit free: 409, nothing written.
    const next = (await complete(ctx, (await startCheckout(ctx, [{ product: lamp, quantity: 3 }])).id)).json<Order>()
    const short = await ctx.request({
      method: 'POST',
      url: `/api/v1/orders/${next.id}/fulfillments`,
      payload: { carrier: 'DHL', tracking_number: 'T-5', location_id: store.id },
      token: admin,
    })
    expect(short.statusCode, short.body).toBe(409)
    expect(short.json().error).toMatchObject({ code: 'insufficient_inventory', details: [expect.objectContaining({ field: 'items' })] })
    expect(await ctx.handle.sql`select 1 from fulfillments where order_id = ${next.id}`).toHaveLength(0)
    await expectStockInvariants(ctx.handle.sql)
  })

  test('an order whose variant was deleted since still ships: there is no stock left to move', async ({ ctx, admin }) => {
    const shirt = await createProduct(ctx, admin, { title: 'Shirt', inventory_quantity: 0 })
    const small = await ctx.expectStatus<{ id: string }>(201, {
      method: 'POST',
      url: `/api/v1/products/${shirt.id}/variants`,
      payload: { title: 'S', inventory_quantity: 3 },
      token: admin,
    })
    const cart = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: 'GBP' } })
    await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/carts/${cart.id}/items`, payload: { product_id: shirt.id, variant_id: small.id, quantity: 2 } })
    const checkout = await ctx.expectStatus<Checkout>(201, {
      method: 'POST',
      url: '/api/v1/checkouts',
      payload: { cart_id: cart.id, email: 'ada@example.com', shipping_address: ADDRESS },
    })
    const placed = await complete(ctx, checkout.id)
    expect(placed.statusCode, placed.body).toBe(201)
    await ctx.expectStatus(204, { method: 'DELETE', url: `/api/v1/products/${shirt.id}/variants/${small.id}`, token: admin })
    const shipped = await ctx.expectStatus<{ location_id: string }>(201, {
      method: 'POST',
      url: `/api/v1/orders/${placed.json<Order>().id}/fulfillments`,
      payload: { carrier: 'DHL', tracking_number: 'T-9' },
      token: admin,
    })
    expect(shipped.location_id).toBe((await defaultLocation(ctx, admin)).id)
    await expectStockInvariants(ctx.handle.sql)
  })

  test('a cancelled order’s committed units are sellable again where they were', async ({ ctx, admin }) => {
    const vase = await createProduct(ctx, admin, { title: 'Vase', inventory_quantity: 5 })
    const placed = await complete(ctx, (await startCheckout(ctx, [{ product: vase, quantity: 2 }])).id)
    expect(await stockOf(ctx, vase.id)).toBe(3)
    await ctx.expectStatus(200, { method: 'POST', url: `/api/v1/orders/${placed.json<Order>().id}/cancel`, token: admin })
    expect(await stockOf(ctx, vase.id)).toBe(5)
    expect((await levelsOf(ctx, vase.id))[0]).toMatchObject({ on_hand: 5, committed: 0, reserved: 0 })
    await expectStockInvariants(ctx.handle.sql)
  })
})

describe('low stock', () => {
  test('a checkout that takes a level below its threshold writes inventory.low once, with the level as it is after', async ({ ctx, admin }) => {
    const jug = await createProduct(ctx, admin, { title: 'Jug', inventory_quantity: 6 })
    const { inventory_levels: levels } = await ctx.expectStatus<{ inventory_levels: { id: string }[] }>(200, {
      method: 'GET',
      url: `/api/v1/inventory/levels?product_id=${jug.id}`,
      token: admin,
    })
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/inventory/levels/${levels[0]!.id}`, payload: { low_stock_threshold: 3 }, token: admin })
    const lowEvents = async () => {
      const { events } = await ctx.expectStatus<{ events: { data: { id: string; available: number; reserved: number; committed: number } }[] }>(200, {
        method: 'GET',
        url: '/api/v1/events?event=inventory.low',
        token: admin,
      })
      return events.filter((event) => event.data.id === levels[0]!.id)
    }
    // 6 → 4: not below 3.
    expect((await complete(ctx, (await startCheckout(ctx, [{ product: jug, quantity: 2 }])).id)).statusCode).toBe(201)
    expect(await lowEvents()).toHaveLength(0)
    // 4 → 2: below.
    expect((await complete(ctx, (await startCheckout(ctx, [{ product: jug, quantity: 2 }])).id)).statusCode).toBe(201)
    const [low] = await lowEvents()
    // The test provider decides in-process: the order committed its units at once.
    expect(low!.data).toMatchObject({ available: 2, reserved: 0, committed: 4 })
    // 2 → 1: still below, no new event.
    expect((await complete(ctx, (await startCheckout(ctx, [{ product: jug, quantity: 1 }])).id)).statusCode).toBe(201)
    expect(await lowEvents()).toHaveLength(1)
    await expectStockInvariants(ctx.handle.sql)
  })
})

describe('no overselling across locations', () => {
  test('100 concurrent checkouts over three locations, with adjustments and transfers racing them: sold + left = stock + what the changes added', async ({ ctx, admin }) => {
    const home = await defaultLocation(ctx, admin)
    const north = await createLocation(ctx, admin, `North ${randomUUID()}`, 1)
    const south = await createLocation(ctx, admin, `South ${randomUUID()}`, 2)
    const locations = [home, north, south]
    const kettle = await createProduct(ctx, admin, { title: 'Kettle', inventory_quantity: 12 })
    for (const [location, quantity] of [
      [north, 15],
      [south, 13],
    ] as const) {
      expect((await adjust(ctx, admin, { product_id: kettle.id, location_id: location.id, quantity })).statusCode).toBe(201)
    }
    const start = await stockOf(ctx, kettle.id)
    expect(start).toBe(40)
    const checkouts: Checkout[] = []
    for (let index = 0; index < 100; index++) checkouts.push(await startCheckout(ctx, [{ product: kettle, quantity: 1 + (index % 2) }]))

    const changes = [
      ...Array.from({ length: 10 }, (_, index) =>
        adjust(ctx, admin, { product_id: kettle.id, location_id: locations[index % 3]!.id, quantity: index % 2 === 0 ? 2 : -1, reason: index % 2 === 0 ? 'received' : 'damaged' }),
      ),
      ...Array.from({ length: 10 }, (_, index) =>
        ctx.request({
          method: 'POST',
          url: '/api/v1/inventory/transfers',
          payload: { product_id: kettle.id, from_location_id: locations[index % 3]!.id, to_location_id: locations[(index + 1) % 3]!.id, quantity: 1 },
          token: admin,
        }),
      ),
    ]
    const [sales, changed] = await Promise.all([Promise.all(checkouts.map((checkout) => complete(ctx, checkout.id))), Promise.all(changes)])

    expect(sales.every((sale) => sale.statusCode === 201 || (sale.statusCode === 409 && sale.json().error.code === 'insufficient_inventory'))).toBe(true)
    expect(changed.every((change) => change.statusCode === 201 || change.statusCode === 409)).toBe(true)
    const sold = sales.filter((sale) => sale.statusCode === 201).reduce((sum, sale) => sum + sale.json<Order>().items[0]!.quantity, 0)
    const added = changed.filter((change) => change.statusCode === 201).reduce((sum, change) => sum + sellableChange(change.json<InventoryChange>()), 0)
    expect(sold).toBeGreaterThan(0)
    expect(sold + (await stockOf(ctx, kettle.id))).toBe(start + added)
    // Every unit sold is committed at a location that has it on hand, and no level went below zero.
    const [committed] = await ctx.handle.sql<{ committed: number }[]>`
      select sum(committed)::int as committed from inventory_levels where product_id = ${kettle.id}`
    expect(committed!.committed).toBe(sold)
    await expectStockInvariants(ctx.handle.sql)
  })
})
