/**
 * Stock locations and inventory (admin): locations and the default one, opening and closing a
 * location for sale, levels and safety stock, adjustments, transfers, the movement log and its
 * events; after them, every level is the sum of its movements and every item's
 * `inventory_quantity` what its active levels can sell (stock-invariants.ts).
 */
import { randomUUID } from 'node:crypto'
import { describe, expect } from 'vitest'
import type {
  Event,
  EventList,
  InventoryChange,
  InventoryLevel,
  InventoryLevelList,
  InventoryMovement,
  InventoryMovementList,
  Order,
  Product,
  StockLocation,
  StockLocationList,
} from '@commerce/domain'
import { test, type TestContext } from './helpers.js'
import { expectStockInvariants } from './stock-invariants.js'

const LOCATIONS = '/api/v1/stock-locations'
const LEVELS = '/api/v1/inventory/levels'
const ADJUSTMENTS = '/api/v1/inventory/adjustments'
const TRANSFERS = '/api/v1/inventory/transfers'
const MOVEMENTS = '/api/v1/inventory/movements'
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000d0d0'
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const UUID = /^[0-9a-f-]{36}$/
const ADDRESS = { line1: '1 Dock Road', city: 'Felixstowe', postal_code: 'IP11 3SY', country: 'GB' }

let named = 0
function createLocation(ctx: TestContext, admin: string, payload: Record<string, unknown> = {}): Promise<StockLocation> {
  return ctx.expectStatus(201, { method: 'POST', url: LOCATIONS, payload: { name: `Warehouse ${++named}`, ...payload }, token: admin })
}

const patchLocation = (ctx: TestContext, admin: string, id: string, payload: Record<string, unknown>) =>
  ctx.expectStatus<StockLocation>(200, { method: 'PATCH', url: `${LOCATIONS}/${id}`, payload, token: admin })

async function listLocations(ctx: TestContext, admin: string): Promise<StockLocation[]> {
  return (await ctx.expectStatus<StockLocationList>(200, { method: 'GET', url: `${LOCATIONS}?per_page=100`, token: admin })).stock_locations
}

async function defaultLocation(ctx: TestContext, admin: string): Promise<StockLocation> {
  const defaults = (await listLocations(ctx, admin)).filter((location) => location.is_default)
  expect(defaults).toHaveLength(1)
  return defaults[0]!
}

function createProduct(ctx: TestContext, admin: string, inventory: number, title = 'Crate'): Promise<Product> {
  return ctx.expectStatus(201, { method: 'POST', url: '/api/v1/products', payload: { title, price: 10, currency: 'USD', inventory_quantity: inventory }, token: admin })
}

async function stockOf(ctx: TestContext, productId: string): Promise<number> {
  return (await ctx.expectStatus<Product>(200, { method: 'GET', url: `/api/v1/products/${productId}` })).inventory_quantity
}

const adjust = (ctx: TestContext, admin: string, payload: Record<string, unknown>) =>
  ctx.expectStatus<InventoryChange>(201, { method: 'POST', url: ADJUSTMENTS, payload: { reason: 'received', ...payload }, token: admin })

const transfer = (ctx: TestContext, admin: string, payload: Record<string, unknown>) =>
  ctx.expectStatus<InventoryChange>(201, { method: 'POST', url: TRANSFERS, payload, token: admin })

async function levelsOf(ctx: TestContext, admin: string, query: string): Promise<InventoryLevel[]> {
  return (await ctx.expectStatus<InventoryLevelList>(200, { method: 'GET', url: `${LEVELS}?per_page=100&${query}`, token: admin })).inventory_levels
}

async function levelAt(ctx: TestContext, admin: string, productId: string, locationId: string): Promise<InventoryLevel> {
  const [level] = await levelsOf(ctx, admin, `product_id=${productId}&location_id=${locationId}`)
  return level!
}

async function movementsOf(ctx: TestContext, admin: string, query: string): Promise<InventoryMovement[]> {
  return (await ctx.expectStatus<InventoryMovementList>(200, { method: 'GET', url: `${MOVEMENTS}?per_page=100&${query}`, token: admin })).inventory_movements
}

/** A guest's checkout of `quantity` units, paid: the order placed, its units committed where allocation took them. */
async function buy(ctx: TestContext, productId: string, quantity: number): Promise<Order> {
  const cart = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: 'USD' } })
  await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/carts/${cart.id}/items`, payload: { product_id: productId, quantity } })
  const started = await ctx.expectStatus<{ id: string }>(201, {
    method: 'POST',
    url: '/api/v1/checkouts',
    payload: { cart_id: cart.id, email: 'buyer@example.com', shipping_address: ADDRESS },
  })
  return ctx.expectStatus<Order>(201, {
    method: 'POST',
    url: `/api/v1/checkouts/${started.id}/complete`,
    payload: { payment: { method: 'card', token: 'tok_visa' } },
    headers: { 'idempotency-key': `buy-${randomUUID()}` },
  })
}

async function eventsOf(ctx: TestContext, admin: string, kind: string): Promise<Event[]> {
  return (await ctx.expectStatus<EventList>(200, { method: 'GET', url: `/api/v1/events?event=${kind}&per_page=100`, token: admin })).events
}

describe('stock locations', () => {
  test('the default location the migration made is listed; POST creates a location with every field and GET answers it', async ({ ctx, admin }) => {
    expect(await defaultLocation(ctx, admin)).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Default',
      address: null,
      priority: 0,
      is_active: true,
      is_default: true,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    })
    const created = await createLocation(ctx, admin, { name: 'North Warehouse', address: ADDRESS, priority: 5 })
    expect(created).toEqual({
      id: expect.stringMatching(UUID),
      name: 'North Warehouse',
      address: { first_name: null, last_name: null, company: null, line1: '1 Dock Road', line2: null, city: 'Felixstowe', region: null, postal_code: 'IP11 3SY', country: 'GB', phone: null },
      priority: 5,
      is_active: true,
      is_default: false,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    })
    expect(await ctx.expectStatus(200, { method: 'GET', url: `${LOCATIONS}/${created.id}`, token: admin })).toEqual(created)
    const renamed = await patchLocation(ctx, admin, created.id, { name: 'North Hub', address: null, priority: 7 })
    expect(renamed).toMatchObject({ id: created.id, name: 'North Hub', address: null, priority: 7, is_active: true, is_default: false })
  })

  test('a name another location has, in any case, is 409 on create and on update; a location may recase its own', async ({ ctx, admin }) => {
    const store = await createLocation(ctx, admin, { name: 'Harbour Store' })
    const other = await createLocation(ctx, admin)
    const before = await ctx.countRows('stock_locations')
    const clash = await ctx.expectError(409, 'conflict', { method: 'POST', url: LOCATIONS, payload: { name: 'HARBOUR store' }, token: admin })
    expect(clash.message).toBe("A stock location named 'HARBOUR store' already exists")
    expect(await ctx.countRows('stock_locations')).toBe(before)
    await ctx.expectError(409, 'conflict', { method: 'PATCH', url: `${LOCATIONS}/${other.id}`, payload: { name: 'harbour store' }, token: admin })
    expect((await patchLocation(ctx, admin, store.id, { name: 'Harbour STORE' })).name).toBe('Harbour STORE')
  })

  test('lists by priority, then id, in pages', async ({ ctx, admin }) => {
    await createLocation(ctx, admin, { priority: 300 })
    await createLocation(ctx, admin, { priority: 200 })
    await createLocation(ctx, admin, { priority: 200 })
    const all = await listLocations(ctx, admin)
    const order = [...all].sort((a, b) => a.priority - b.priority || (a.id < b.id ? -1 : 1))
    expect(all.map((location) => location.id)).toEqual(order.map((location) => location.id))
    const page = await ctx.expectStatus<StockLocationList>(200, { method: 'GET', url: `${LOCATIONS}?per_page=1&page=2`, token: admin })
    expect(page).toEqual({ stock_locations: [all[1]], meta: { page: 2, per_page: 1, total: all.length, total_pages: all.length } })
  })

  test('is_default: true moves the default flag; false on the default is 400; the default cannot be deactivated or deleted', async ({ ctx, admin }) => {
    const previous = await defaultLocation(ctx, admin)
    const next = await createLocation(ctx, admin)
    expect(await patchLocation(ctx, admin, next.id, { is_default: true })).toMatchObject({ id: next.id, is_default: true })
    expect(await defaultLocation(ctx, admin)).toMatchObject({ id: next.id })
    expect((await ctx.expectStatus<StockLocation>(200, { method: 'GET', url: `${LOCATIONS}/${previous.id}`, token: admin })).is_default).toBe(false)

    // New products start at the default location.
    const product = await createProduct(ctx, admin, 4)
    expect(await levelsOf(ctx, admin, `product_id=${product.id}`)).toEqual([
      expect.objectContaining({ location_id: next.id, on_hand: 4, available: 4 }),
    ])

    const unset = await ctx.expectError(400, 'validation_error', { method: 'PATCH', url: `${LOCATIONS}/${next.id}`, payload: { is_default: false }, token: admin })
    expect(unset.details?.[0]?.field).toBe('is_default')
    const deactivate = await ctx.expectError(409, 'conflict', { method: 'PATCH', url: `${LOCATIONS}/${next.id}`, payload: { is_active: false }, token: admin })
    expect(deactivate.message).toBe('The default location cannot be deactivated')
    const remove = await ctx.expectError(409, 'conflict', { method: 'DELETE', url: `${LOCATIONS}/${next.id}`, token: admin })
    expect(remove.message).toContain('The default location cannot be deleted')
    await ctx.expectError(409, 'conflict', { method: 'POST', url: LOCATIONS, payload: { name: 'Closed default', is_default: true, is_active: false }, token: admin })

    // An inactive location becomes the default only when it is opened in the same request.
    const closed = await createLocation(ctx, admin, { is_active: false })
    await ctx.expectError(409, 'conflict', { method: 'PATCH', url: `${LOCATIONS}/${closed.id}`, payload: { is_default: true }, token: admin })
    expect(await patchLocation(ctx, admin, closed.id, { is_default: true, is_active: true })).toMatchObject({ is_default: true, is_active: true })

    // Created as the default.
    const made = await createLocation(ctx, admin, { is_default: true })
    expect(made.is_default).toBe(true)
    expect((await defaultLocation(ctx, admin)).id).toBe(made.id)

    await patchLocation(ctx, admin, previous.id, { is_default: true })
    expect((await defaultLocation(ctx, admin)).id).toBe(previous.id)
    await expectStockInvariants(ctx.handle.sql)
  })

  test('unknown ids are 404; bad bodies and ids 400', async ({ ctx, admin }) => {
    for (const method of ['GET', 'PATCH', 'DELETE'] as const) {
      const error = await ctx.expectError(404, 'not_found', { method, url: `${LOCATIONS}/${UNKNOWN_ID}`, token: admin, ...(method === 'PATCH' ? { payload: { priority: 1 } } : {}) })
      expect(error.message).toBe('Stock location not found')
    }
    await ctx.expectInvalidField({ method: 'POST', url: LOCATIONS, payload: { name: '' }, token: admin }, 'name', 'stock_locations')
    await ctx.expectInvalidField({ method: 'POST', url: LOCATIONS, payload: { name: 'Minus', priority: -1 }, token: admin }, 'priority', 'stock_locations')
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url: `${LOCATIONS}/${UNKNOWN_ID}`, payload: {}, token: admin })
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${LOCATIONS}/nope`, token: admin })
  })

  test('DELETE refuses a location that holds units (409); once they are moved away it deletes the location with its empty levels and their movements', async ({ ctx, admin }) => {
    const home = await defaultLocation(ctx, admin)
    const product = await createProduct(ctx, admin, 0)
    const outpost = await createLocation(ctx, admin)
    await adjust(ctx, admin, { product_id: product.id, location_id: outpost.id, quantity: 3 })
    const refused = await ctx.expectError(409, 'conflict', { method: 'DELETE', url: `${LOCATIONS}/${outpost.id}`, token: admin })
    expect(refused.message).toContain('still holds units')
    await transfer(ctx, admin, { product_id: product.id, from_location_id: outpost.id, to_location_id: home.id, quantity: 3 })
    expect(await stockOf(ctx, product.id)).toBe(3)

    await ctx.expectStatus(204, { method: 'DELETE', url: `${LOCATIONS}/${outpost.id}`, token: admin })
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${LOCATIONS}/${outpost.id}`, token: admin })
    expect(await levelsOf(ctx, admin, `product_id=${product.id}`)).toEqual([expect.objectContaining({ location_id: home.id, on_hand: 3 })])
    const [left] = await ctx.handle.sql<{ n: number }[]>`select count(*)::int as n from inventory_levels where location_id = ${outpost.id}`
    expect(left!.n).toBe(0)
    expect(await stockOf(ctx, product.id)).toBe(3)
    await expectStockInvariants(ctx.handle.sql)
  })
})

describe('opening and closing a location', () => {
  test('deactivating takes the units available there out of inventory_quantity, reactivating puts them back; committed units stay', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, 10)
    const annex = await createLocation(ctx, admin)
    await adjust(ctx, admin, { product_id: product.id, location_id: annex.id, quantity: 6 })
    expect(await stockOf(ctx, product.id)).toBe(16)
    // Safety stock there: kept back whether the location is open or not.
    const annexLevel = await levelAt(ctx, admin, product.id, annex.id)
    await ctx.expectStatus(200, { method: 'PATCH', url: `${LEVELS}/${annexLevel.id}`, payload: { safety_stock: 1 }, token: admin })
    expect(await stockOf(ctx, product.id)).toBe(15)

    const closed = await patchLocation(ctx, admin, annex.id, { is_active: false })
    expect(closed).toMatchObject({ id: annex.id, is_active: false })
    expect(await stockOf(ctx, product.id)).toBe(10)
    expect(await levelAt(ctx, admin, product.id, annex.id)).toMatchObject({ on_hand: 6, safety_stock: 1, available: 5 })
    // Again: nothing changes.
    await patchLocation(ctx, admin, annex.id, { is_active: false })
    expect(await stockOf(ctx, product.id)).toBe(10)
    // Units received at a closed location are not for sale until it opens.
    await adjust(ctx, admin, { product_id: product.id, location_id: annex.id, quantity: 3 })
    expect(await stockOf(ctx, product.id)).toBe(10)

    await patchLocation(ctx, admin, annex.id, { is_active: true })
    expect(await stockOf(ctx, product.id)).toBe(18)
    await expectStockInvariants(ctx.handle.sql)
  })

  test('units a checkout committed at a location stay committed when it closes; only what is available leaves the total', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, 0)
    const depot = await createLocation(ctx, admin)
    await adjust(ctx, admin, { product_id: product.id, location_id: depot.id, quantity: 6 })
    await buy(ctx, product.id, 2)
    expect(await levelAt(ctx, admin, product.id, depot.id)).toMatchObject({ on_hand: 6, reserved: 0, committed: 2, available: 4 })
    expect(await stockOf(ctx, product.id)).toBe(4)

    await patchLocation(ctx, admin, depot.id, { is_active: false })
    expect(await stockOf(ctx, product.id)).toBe(0)
    expect(await levelAt(ctx, admin, product.id, depot.id)).toMatchObject({ on_hand: 6, committed: 2, available: 4 })
    // Nothing left to sell: a cart cannot take the product.
    const cart = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: 'USD' } })
    await ctx.expectError(409, 'insufficient_inventory', { method: 'POST', url: `/api/v1/carts/${cart.id}/items`, payload: { product_id: product.id, quantity: 1 } })

    await patchLocation(ctx, admin, depot.id, { is_active: true })
    expect(await stockOf(ctx, product.id)).toBe(4)
    await expectStockInvariants(ctx.handle.sql)
  })
})

describe('POST /api/v1/inventory/adjustments', () => {
  test('adds and removes units by quantity: the level, its movement and inventory_quantity change together', async ({ ctx }) => {
    const { token: admin, userId } = await ctx.signIn('admin')
    const home = await defaultLocation(ctx, admin)
    const product = await createProduct(ctx, admin, 5)
    const received = await adjust(ctx, admin, { product_id: product.id, location_id: home.id, quantity: 7, reason: 'received', note: 'PO 1234' })
    expect(received).toEqual({
      levels: [
        {
          id: expect.stringMatching(UUID),
          location_id: home.id,
          location_name: 'Default',
          product_id: product.id,
          variant_id: null,
          on_hand: 12,
          reserved: 0,
          committed: 0,
          safety_stock: 0,
          available: 12,
          low_stock_threshold: null,
          updated_at: expect.stringMatching(ISO),
        },
      ],
      movements: [
        {
          id: expect.stringMatching(/^\d+$/),
          level_id: received.levels[0]!.id,
          location_id: home.id,
          product_id: product.id,
          variant_id: null,
          on_hand_delta: 7,
          reserved_delta: 0,
          committed_delta: 0,
          safety_stock_delta: 0,
          reason: 'received',
          note: 'PO 1234',
          order_id: null,
          reference_id: expect.stringMatching(UUID),
          actor: `user:${userId}`,
          created_at: expect.stringMatching(ISO),
        },
      ],
    })
    expect(await stockOf(ctx, product.id)).toBe(12)
    const damaged = await adjust(ctx, admin, { product_id: product.id, location_id: home.id, quantity: -4, reason: 'damaged' })
    expect(damaged.levels[0]).toMatchObject({ on_hand: 8, available: 8 })
    expect(damaged.movements[0]).toMatchObject({ on_hand_delta: -4, reason: 'damaged', note: null })
    expect(await stockOf(ctx, product.id)).toBe(8)
    await expectStockInvariants(ctx.handle.sql)
  })

  test('on_hand sets the level to a count: the movement is the difference', async ({ ctx, admin }) => {
    const home = await defaultLocation(ctx, admin)
    const product = await createProduct(ctx, admin, 8)
    const counted = await adjust(ctx, admin, { product_id: product.id, location_id: home.id, on_hand: 3, reason: 'cycle_count' })
    expect(counted.levels[0]).toMatchObject({ on_hand: 3 })
    expect(counted.movements[0]).toMatchObject({ on_hand_delta: -5, reason: 'cycle_count' })
    expect(await stockOf(ctx, product.id)).toBe(3)
    const found = await adjust(ctx, admin, { product_id: product.id, location_id: home.id, on_hand: 11, reason: 'cycle_count' })
    expect(found.movements[0]).toMatchObject({ on_hand_delta: 8 })
    expect(await stockOf(ctx, product.id)).toBe(11)
    await expectStockInvariants(ctx.handle.sql)
  })

  test('refuses to take on hand below zero (409) and changes nothing', async ({ ctx, admin }) => {
    const home = await defaultLocation(ctx, admin)
    const product = await createProduct(ctx, admin, 3)
    const before = await ctx.countRows('inventory_movements')
    const refused = await ctx.expectError(409, 'conflict', {
      method: 'POST',
      url: ADJUSTMENTS,
      payload: { product_id: product.id, location_id: home.id, quantity: -4, reason: 'shrinkage' },
      token: admin,
    })
    expect(refused.message).toBe('Cannot remove 4 units: 3 on hand at Default')
    expect(await ctx.countRows('inventory_movements')).toBe(before)
    expect(await stockOf(ctx, product.id)).toBe(3)
  })

  test('refuses more units than an item may hold in all locations together (409), where the integer columns end', async ({ ctx, admin }) => {
    const home = await defaultLocation(ctx, admin)
    const product = await createProduct(ctx, admin, 0)
    const annex = await createLocation(ctx, admin)
    await adjust(ctx, admin, { product_id: product.id, location_id: home.id, quantity: 1_000_000_000 })
    await adjust(ctx, admin, { product_id: product.id, location_id: annex.id, quantity: 1_000_000_000 })
    const refused = await ctx.expectError(409, 'conflict', {
      method: 'POST',
      url: ADJUSTMENTS,
      payload: { product_id: product.id, location_id: annex.id, quantity: 200_000_000, reason: 'received' },
      token: admin,
    })
    expect(refused.message).toBe('Cannot add 200000000 units: an item holds at most 2147483647 units on hand in all locations together')
    expect(await stockOf(ctx, product.id)).toBe(2_000_000_000)
    await expectStockInvariants(ctx.handle.sql)
  })

  test('an item never stocked at a location gets a level there', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, 3)
    const shop = await createLocation(ctx, admin, { name: 'Corner Shop', priority: 9 })
    const change = await adjust(ctx, admin, { product_id: product.id, location_id: shop.id, quantity: 4 })
    expect(change.levels).toEqual([expect.objectContaining({ location_id: shop.id, location_name: 'Corner Shop', on_hand: 4, available: 4 })])
    expect(await levelsOf(ctx, admin, `product_id=${product.id}`)).toEqual([
      expect.objectContaining({ location_name: 'Default', on_hand: 3 }),
      expect.objectContaining({ location_name: 'Corner Shop', on_hand: 4 }),
    ])
    expect(await stockOf(ctx, product.id)).toBe(7)
    await expectStockInvariants(ctx.handle.sql)
  })

  test('a product with variants is adjusted per variant; a variant of another product, an unknown product or location and a bad body are 400', async ({ ctx, admin }) => {
    const home = await defaultLocation(ctx, admin)
    const shirt = await createProduct(ctx, admin, 0, 'Shirt')
    const large = await ctx.expectStatus<{ id: string }>(201, {
      method: 'POST',
      url: `/api/v1/products/${shirt.id}/variants`,
      payload: { title: 'Large', inventory_quantity: 2, options: { size: 'L' } },
      token: admin,
    })
    const other = await createProduct(ctx, admin, 0)
    const refuse = (payload: Record<string, unknown>, field: string) =>
      ctx.expectInvalidField({ method: 'POST', url: ADJUSTMENTS, payload: { reason: 'received', quantity: 1, location_id: home.id, ...payload }, token: admin }, field, 'inventory_movements')

    const perVariant = await refuse({ product_id: shirt.id }, 'variant_id')
    expect(perVariant.message).toContain('this product has variants')
    await refuse({ product_id: other.id, variant_id: large.id }, 'variant_id')
    await refuse({ product_id: UNKNOWN_ID }, 'product_id')
    await refuse({ product_id: other.id, location_id: UNKNOWN_ID }, 'location_id')
    await refuse({ product_id: other.id, on_hand: 4 }, 'on_hand')
    await refuse({ product_id: other.id, quantity: undefined }, 'quantity')
    await refuse({ product_id: other.id, reason: 'transfer' }, 'reason')
    await refuse({ product_id: other.id, location_id: 'nope' }, 'location_id')

    const change = await adjust(ctx, admin, { product_id: shirt.id, variant_id: large.id, location_id: home.id, quantity: 5 })
    expect(change.levels[0]).toMatchObject({ product_id: shirt.id, variant_id: large.id, on_hand: 7 })
    const detail = await ctx.expectStatus<Product>(200, { method: 'GET', url: `/api/v1/products/${shirt.id}` })
    expect(detail.variants.find((variant) => variant.id === large.id)?.inventory_quantity).toBe(7)
    await expectStockInvariants(ctx.handle.sql)
  })

  test('an Idempotency-Key replays the adjustment instead of applying it again', async ({ ctx, admin }) => {
    const home = await defaultLocation(ctx, admin)
    const product = await createProduct(ctx, admin, 1)
    const request = {
      method: 'POST' as const,
      url: ADJUSTMENTS,
      payload: { product_id: product.id, location_id: home.id, quantity: 2, reason: 'received' },
      headers: { 'idempotency-key': `adjust-${randomUUID()}` },
      token: admin,
    }
    const first = await ctx.request(request)
    const again = await ctx.request(request)
    expect(first.statusCode, first.body).toBe(201)
    expect(again.statusCode).toBe(201)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.json()).toEqual(first.json())
    expect(await stockOf(ctx, product.id)).toBe(3)
  })

  test('writes inventory.adjusted with the change, and inventory.low once when a level falls below its threshold', async ({ ctx, admin }) => {
    const home = await defaultLocation(ctx, admin)
    const product = await createProduct(ctx, admin, 10)
    const level = await levelAt(ctx, admin, product.id, home.id)
    await ctx.expectStatus(200, { method: 'PATCH', url: `${LEVELS}/${level.id}`, payload: { low_stock_threshold: 5 }, token: admin })

    const change = await adjust(ctx, admin, { product_id: product.id, location_id: home.id, quantity: -6, reason: 'shrinkage' })
    await adjust(ctx, admin, { product_id: product.id, location_id: home.id, quantity: -1, reason: 'damaged' })

    const adjusted = (await eventsOf(ctx, admin, 'inventory.adjusted')).filter((event) => event.resource_id === level.id)
    expect(adjusted).toHaveLength(2)
    expect(adjusted[1]).toMatchObject({ event: 'inventory.adjusted', resource_id: level.id, data: change, customer_id: null })
    const low = (await eventsOf(ctx, admin, 'inventory.low')).filter((event) => event.resource_id === level.id)
    expect(low).toHaveLength(1)
    expect(low[0]!.data).toMatchObject({ id: level.id, on_hand: 4, available: 4, low_stock_threshold: 5 })
    expect(await levelsOf(ctx, admin, `product_id=${product.id}&low_stock=true`)).toEqual([expect.objectContaining({ id: level.id, available: 3 })])
    expect(await levelsOf(ctx, admin, `product_id=${product.id}&low_stock=false`)).toEqual([])

    // Back above the threshold, then below again: a second inventory.low.
    await adjust(ctx, admin, { product_id: product.id, location_id: home.id, quantity: 5 })
    expect(await levelsOf(ctx, admin, `product_id=${product.id}&low_stock=true`)).toEqual([])
    await adjust(ctx, admin, { product_id: product.id, location_id: home.id, quantity: -4, reason: 'damaged' })
    expect((await eventsOf(ctx, admin, 'inventory.low')).filter((event) => event.resource_id === level.id)).toHaveLength(2)
    await expectStockInvariants(ctx.handle.sql)
  })
})

describe('POST /api/v1/inventory/transfers', () => {
  test('moves units between locations: both levels and both movements, one reference, inventory_quantity unchanged', async ({ ctx, admin }) => {
    const home = await defaultLocation(ctx, admin)
    const product = await createProduct(ctx, admin, 10)
    const store = await createLocation(ctx, admin, { name: 'Market Street' })
    const change = await transfer(ctx, admin, { product_id: product.id, from_location_id: home.id, to_location_id: store.id, quantity: 4, note: 'Restock shelf' })
    expect(change.levels).toEqual([
      expect.objectContaining({ location_id: home.id, on_hand: 6, available: 6 }),
      expect.objectContaining({ location_id: store.id, location_name: 'Market Street', on_hand: 4, available: 4 }),
    ])
    const [out, into] = change.movements
    expect(out).toMatchObject({ location_id: home.id, on_hand_delta: -4, reason: 'transfer', note: 'Restock shelf', reference_id: expect.stringMatching(UUID) })
    expect(into).toMatchObject({ location_id: store.id, on_hand_delta: 4, reason: 'transfer', note: 'Restock shelf', reference_id: out!.reference_id })
    expect(await stockOf(ctx, product.id)).toBe(10)
    const event = (await eventsOf(ctx, admin, 'inventory.adjusted')).find((candidate) => candidate.resource_id === change.levels[0]!.id)
    expect(event?.data).toEqual(change)
    await expectStockInvariants(ctx.handle.sql)
  })

  test('refuses more than is available at the source (409); the same location twice or an unknown one is 400', async ({ ctx, admin }) => {
    const home = await defaultLocation(ctx, admin)
    const product = await createProduct(ctx, admin, 0)
    const yard = await createLocation(ctx, admin, { name: 'Back Yard' })
    await adjust(ctx, admin, { product_id: product.id, location_id: yard.id, quantity: 4 })
    const level = await levelAt(ctx, admin, product.id, yard.id)
    await ctx.expectStatus(200, { method: 'PATCH', url: `${LEVELS}/${level.id}`, payload: { safety_stock: 2 }, token: admin })
    const before = await ctx.countRows('inventory_movements')
    const refused = await ctx.expectError(409, 'conflict', {
      method: 'POST',
      url: TRANSFERS,
      payload: { product_id: product.id, from_location_id: yard.id, to_location_id: home.id, quantity: 3 },
      token: admin,
    })
    expect(refused.message).toBe('Cannot transfer 3 units: 2 available at Back Yard')
    // Nothing at all at the source: none available.
    const other = await createLocation(ctx, admin)
    await ctx.expectError(409, 'conflict', {
      method: 'POST',
      url: TRANSFERS,
      payload: { product_id: product.id, from_location_id: other.id, to_location_id: home.id, quantity: 1 },
      token: admin,
    })
    expect(await ctx.countRows('inventory_movements')).toBe(before)
    const refuse = (payload: Record<string, unknown>, field: string) =>
      ctx.expectInvalidField(
        { method: 'POST', url: TRANSFERS, payload: { product_id: product.id, from_location_id: yard.id, to_location_id: home.id, quantity: 1, ...payload }, token: admin },
        field,
        'inventory_movements',
      )
    await refuse({ to_location_id: yard.id }, 'to_location_id')
    await refuse({ from_location_id: UNKNOWN_ID }, 'from_location_id')
    await refuse({ to_location_id: UNKNOWN_ID }, 'to_location_id')
    await refuse({ quantity: 0 }, 'quantity')
    expect(await transfer(ctx, admin, { product_id: product.id, from_location_id: yard.id, to_location_id: home.id, quantity: 2 })).toMatchObject({
      levels: [expect.objectContaining({ on_hand: 2, safety_stock: 2, available: 0 }), expect.objectContaining({ on_hand: 2 })],
    })
    await expectStockInvariants(ctx.handle.sql)
  })
})

describe('inventory levels', () => {
  test('PATCH safety_stock keeps units back: a movement, a lower inventory_quantity, inventory.low when it crosses the threshold', async ({ ctx, admin }) => {
    const home = await defaultLocation(ctx, admin)
    const product = await createProduct(ctx, admin, 10)
    const level = await levelAt(ctx, admin, product.id, home.id)
    const updated = await ctx.expectStatus<InventoryLevel>(200, {
      method: 'PATCH',
      url: `${LEVELS}/${level.id}`,
      payload: { safety_stock: 3, low_stock_threshold: 8 },
      token: admin,
    })
    expect(updated).toEqual({ ...level, safety_stock: 3, available: 7, low_stock_threshold: 8, updated_at: expect.stringMatching(ISO) })
    expect(await stockOf(ctx, product.id)).toBe(7)
    expect(await movementsOf(ctx, admin, `product_id=${product.id}&reason=safety_stock`)).toEqual([
      expect.objectContaining({ level_id: level.id, safety_stock_delta: 3, on_hand_delta: 0, reason: 'safety_stock' }),
    ])
    const low = (await eventsOf(ctx, admin, 'inventory.low')).filter((event) => event.resource_id === level.id)
    expect(low.map((event) => event.data)).toEqual([expect.objectContaining({ id: level.id, safety_stock: 3, available: 7, low_stock_threshold: 8 })])

    // The threshold alone is a setting: no movement.
    expect(await ctx.expectStatus(200, { method: 'PATCH', url: `${LEVELS}/${level.id}`, payload: { low_stock_threshold: null }, token: admin })).toMatchObject({
      low_stock_threshold: null,
    })
    expect(await movementsOf(ctx, admin, `product_id=${product.id}&reason=safety_stock`)).toHaveLength(1)
    await ctx.expectStatus(200, { method: 'PATCH', url: `${LEVELS}/${level.id}`, payload: { safety_stock: 0 }, token: admin })
    expect(await stockOf(ctx, product.id)).toBe(10)

    await ctx.expectError(404, 'not_found', { method: 'PATCH', url: `${LEVELS}/${UNKNOWN_ID}`, payload: { safety_stock: 1 }, token: admin })
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url: `${LEVELS}/${level.id}`, payload: {}, token: admin })
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url: `${LEVELS}/${level.id}`, payload: { safety_stock: -1 }, token: admin })
    await expectStockInvariants(ctx.handle.sql)
  })

  test('lists by product, then variant (the product’s own level first), then location priority; filters by location and variant', async ({ ctx, admin }) => {
    const home = await defaultLocation(ctx, admin)
    const mug = await createProduct(ctx, admin, 1, 'Mug')
    const small = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: `/api/v1/products/${mug.id}/variants`, payload: { title: 'Small', inventory_quantity: 2 }, token: admin })
    const far = await createLocation(ctx, admin, { priority: 1_000 })
    await adjust(ctx, admin, { product_id: mug.id, variant_id: small.id, location_id: far.id, quantity: 5 })
    const levels = await levelsOf(ctx, admin, `product_id=${mug.id}`)
    expect(levels.map((level) => [level.variant_id, level.location_id])).toEqual([
      [null, home.id],
      [small.id, home.id],
      [small.id, far.id],
    ])
    expect(await levelsOf(ctx, admin, `product_id=${mug.id}&location_id=${far.id}`)).toEqual([levels[2]])
    expect(await levelsOf(ctx, admin, `variant_id=${small.id}`)).toEqual(levels.slice(1))
    const page = await ctx.expectStatus<InventoryLevelList>(200, { method: 'GET', url: `${LEVELS}?product_id=${mug.id}&per_page=2&page=2`, token: admin })
    expect(page).toEqual({ inventory_levels: [levels[2]], meta: { page: 2, per_page: 2, total: 3, total_pages: 2 } })
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${LEVELS}?location_id=nope`, token: admin })
  })
})

describe('GET /api/v1/inventory/movements', () => {
  test('newest first, filtered by location, product, variant, order and reason, in cursor pages', async ({ ctx, admin }) => {
    const home = await defaultLocation(ctx, admin)
    const product = await createProduct(ctx, admin, 2, 'Ledger')
    // Tried after the default location: the checkout below takes its unit at home.
    const cellar = await createLocation(ctx, admin, { priority: 50 })
    for (const quantity of [1, 2, 3]) await adjust(ctx, admin, { product_id: product.id, location_id: home.id, quantity })
    await adjust(ctx, admin, { product_id: product.id, location_id: cellar.id, quantity: 4, reason: 'correction' })
    const order = await buy(ctx, product.id, 1)

    const all = await movementsOf(ctx, admin, `product_id=${product.id}`)
    // The test provider decides in-process: the order commits its unit at once, with no reservation
    // in between (a provider over the network: stripe-payments.test.ts, reserved then committed).
    expect(all.map((movement) => [movement.reason, movement.on_hand_delta, movement.reserved_delta, movement.committed_delta])).toEqual([
      ['committed', 0, 0, 1],
      ['correction', 4, 0, 0],
      ['received', 3, 0, 0],
      ['received', 2, 0, 0],
      ['received', 1, 0, 0],
      ['initial', 2, 0, 0],
    ])
    const ids = all.map((movement) => BigInt(movement.id))
    expect(ids).toEqual([...ids].sort((a, b) => (b > a ? 1 : -1)))
    expect((await movementsOf(ctx, admin, `product_id=${product.id}&location_id=${cellar.id}`)).map((movement) => movement.reason)).toEqual(['correction'])
    expect((await movementsOf(ctx, admin, `product_id=${product.id}&reason=received`)).map((movement) => movement.on_hand_delta)).toEqual([3, 2, 1])
    expect(await movementsOf(ctx, admin, `order_id=${order.id}`)).toEqual(all.slice(0, 1))
    expect(await movementsOf(ctx, admin, `variant_id=${UNKNOWN_ID}`)).toEqual([])

    // Cursor pages of two: the same movements, each once.
    const walked: InventoryMovement[] = []
    let after = ''
    for (let pages = 0; pages < 10; pages++) {
      const page = await ctx.expectStatus<InventoryMovementList>(200, { method: 'GET', url: `${MOVEMENTS}?product_id=${product.id}&per_page=2&after=${after}`, token: admin })
      walked.push(...page.inventory_movements)
      expect(page.meta.per_page).toBe(2)
      if (page.meta.next_cursor === null) break
      after = page.meta.next_cursor
    }
    expect(walked).toEqual(all)

    // The cursor is opaque, as every list's: a movement id (the form it had before) is not one.
    for (const bad of ['abc', '-1', '99999999999999999999', '1.5', walked[2]!.id]) {
      const error = await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${MOVEMENTS}?after=${bad}`, token: admin })
      expect(error.details?.[0]?.field, bad).toBe('after')
    }
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${MOVEMENTS}?reason=stolen`, token: admin })
    await expectStockInvariants(ctx.handle.sql)
  })
})

describe('access', () => {
  test('inventory:read reads levels and movements but may not adjust; customers are refused', async ({ ctx, admin, customer }) => {
    const { key } = await ctx.createApiKey(['inventory:read'])
    const home = await defaultLocation(ctx, admin)
    const product = await createProduct(ctx, admin, 1)
    await ctx.expectStatus(200, { method: 'GET', url: `${LEVELS}?product_id=${product.id}`, token: key })
    await ctx.expectStatus(200, { method: 'GET', url: MOVEMENTS, token: key })
    const payload = { product_id: product.id, location_id: home.id, quantity: 1, reason: 'received' }
    await ctx.expectError(403, 'forbidden', { method: 'POST', url: ADJUSTMENTS, payload, token: key })
    await ctx.expectError(403, 'forbidden', { method: 'GET', url: LOCATIONS, token: customer })
    const { key: writer } = await ctx.createApiKey(['inventory:write'])
    const change = await ctx.expectStatus<InventoryChange>(201, { method: 'POST', url: ADJUSTMENTS, payload, token: writer })
    expect(change.movements[0]!.actor).toMatch(/^api_key:/)
  })
})

test('after everything above, every level is the sum of its movements and every inventory_quantity what its active levels can sell', async ({ ctx }) => {
  await expectStockInvariants(ctx.handle.sql)
})
