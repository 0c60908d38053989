/**
 * Catalog answers in memory (routes/products/catalog-cache.ts): a product detail and a public list
 * page are answered from memory for PRODUCT_CACHE_TTL after they were read; a catalog write
 * (products, variants, images, categories, translations) empties both before answering; a stock
 * move this instance commits (a checkout, the payment provider's webhook, a cancellation, a return,
 * an order edit, an inventory change) drops, before answering, the answers that show the products
 * it moved and only those; a change made behind the API (here: plain SQL, as another instance or
 * the worker would) shows once the TTL has passed; a read that began before a write never stores
 * what it found.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect } from 'vitest'
import type { Category, Checkout, CheckoutPaymentPending, Order, Product, ProductList, Return, StockLocation } from '@commerce/domain'
import { CatalogCache } from '../src/routes/products/catalog-cache.js'
import { createTestContext, test, type TestContext } from './helpers.js'
import { shipAll } from './order-fixtures.js'
import { CARD, startStripeShop } from './stripe-shop.js'

const TTL_MS = 60_000
test.scoped({ contextOptions: { config: { productCacheTtlMs: TTL_MS } } })

const PRODUCTS = '/api/v1/products'
let made = 0

function createProduct(ctx: TestContext, admin: string, payload: Record<string, unknown> = {}): Promise<Product> {
  made += 1
  return ctx.expectStatus(201, { method: 'POST', url: PRODUCTS, token: admin, payload: { title: `Lamp ${made}`, price: 10, inventory_quantity: 5, ...payload } })
}

const read = (ctx: TestContext, id: string, query = '') => ctx.expectStatus<Product>(200, { method: 'GET', url: `${PRODUCTS}/${id}${query}` })

/** The titles of a public list page (one category, so other tests' products stay out of it). */
async function listed(ctx: TestContext, query: string, token?: string): Promise<string[]> {
  const page = await ctx.expectStatus<ProductList>(200, { method: 'GET', url: `${PRODUCTS}?${query}`, token })
  return page.products.map((product) => product.title)
}

/** A product of its own new category, and the query of that category's list. */
async function createListedProduct(
  ctx: TestContext,
  admin: string,
  title: string,
  payload: Record<string, unknown> = {},
): Promise<{ product: Product; category: Category; query: string }> {
  const category = await ctx.expectStatus<Category>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: `Shelf ${++made}` } })
  const product = await createProduct(ctx, admin, { title, category_ids: [category.id], ...payload })
  return { product, category, query: `category=${category.slug}` }
}

/** A change behind the API's back: the cache cannot know of it. */
async function retitleBySql(ctx: TestContext, id: string, title: string) {
  await ctx.handle.sql`update products set title = ${title} where id = ${id}`
}

describe('a product detail answered from memory', () => {
  test('a second read within the TTL is answered from memory, even after a change made behind the API', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Brass lamp' })
    expect((await read(ctx, product.id)).title).toBe('Brass lamp')
    await retitleBySql(ctx, product.id, 'Changed behind the API')
    expect((await read(ctx, product.id)).title).toBe('Brass lamp')
    // ?fields= cuts the same remembered answer.
    expect(await read(ctx, product.id, '?fields=title')).toEqual({ id: product.id, title: 'Brass lamp' })
  })

  test('each locale chain is remembered apart, with its Content-Language', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Lamp' })
    await ctx.expectStatus(201, { method: 'PUT', url: `${PRODUCTS}/${product.id}/translations/fr`, token: admin, payload: { title: 'Lampe' } })
    for (let round = 0; round < 2; round++) {
      const french = await ctx.request({ method: 'GET', url: `${PRODUCTS}/${product.id}`, headers: { 'accept-language': 'fr' } })
      expect(french.json().title).toBe('Lampe')
      expect(french.headers['content-language']).toBe('fr')
      const original = await ctx.request({ method: 'GET', url: `${PRODUCTS}/${product.id}` })
      expect(original.json().title).toBe('Lamp')
      expect(original.headers['content-language']).toBeUndefined()
    }
  })

  test('a missing product is not remembered: created behind the API, it is found at once', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin)
    await ctx.handle.sql`delete from products where id = ${product.id}`
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${PRODUCTS}/${product.id}` })
    await ctx.handle.sql`insert into products (id, title, slug, price_minor, currency) values (${product.id}, 'Back again', ${`back-${product.id}`}, 100, 'USD')`
    expect((await read(ctx, product.id)).title).toBe('Back again')
  })
})

describe('a public list page answered from memory', () => {
  test('a second read of a page within the TTL is answered from memory, even after a change made behind the API', async ({ ctx, admin }) => {
    const { product, query } = await createListedProduct(ctx, admin, 'Brass lamp')
    expect(await listed(ctx, query)).toEqual(['Brass lamp'])
    await retitleBySql(ctx, product.id, 'Changed behind the API')
    expect(await listed(ctx, query)).toEqual(['Brass lamp'])
    // Another page size is another page, read from the database.
    expect(await listed(ctx, `${query}&per_page=5`)).toEqual(['Changed behind the API'])
  })

  test("an admin's read always reads the database", async ({ ctx, admin }) => {
    const { product, query } = await createListedProduct(ctx, admin, 'Brass lamp')
    expect(await listed(ctx, query, admin)).toEqual(['Brass lamp'])
    expect(await listed(ctx, query)).toEqual(['Brass lamp'])
    await retitleBySql(ctx, product.id, 'Changed behind the API')
    expect(await listed(ctx, query, admin)).toEqual(['Changed behind the API'])
    expect(await listed(ctx, `${query}&include_inactive=true`, admin)).toEqual(['Changed behind the API'])
    // A customer reads the page as the shop's visitors do.
    const customer = (await ctx.signIn('customer')).token
    expect(await listed(ctx, query, customer)).toEqual(['Brass lamp'])
  })

  test('a walk by cursor always reads the database', async ({ ctx, admin }) => {
    const { product, category, query } = await createListedProduct(ctx, admin, 'First')
    await createProduct(ctx, admin, { title: 'Second', category_ids: [category.id] })
    const first = await ctx.expectStatus<ProductList>(200, { method: 'GET', url: `${PRODUCTS}?${query}&per_page=1&after=` })
    const cursor = (first.meta as { next_cursor: string | null }).next_cursor!
    expect(await listed(ctx, `${query}&per_page=1&after=${cursor}`)).toEqual(['First'])
    await retitleBySql(ctx, product.id, 'Changed behind the API')
    expect(await listed(ctx, `${query}&per_page=1&after=${cursor}`)).toEqual(['Changed behind the API'])
  })
})

describe('a catalog write empties it before answering', () => {
  // Each case changes the product behind the API first, so the read after the write shows
  // whether the remembered detail was dropped (the SQL title) or kept (the old one).
  const writes: [string, (ctx: TestContext, admin: string, product: Product) => Promise<unknown>][] = [
    ['PATCH /products/:id', (ctx, admin, product) => ctx.expectStatus(200, { method: 'PATCH', url: `${PRODUCTS}/${product.id}`, token: admin, payload: { description: 'New' } })],
    ['POST /products/:id/variants', (ctx, admin, product) => ctx.expectStatus(201, { method: 'POST', url: `${PRODUCTS}/${product.id}/variants`, token: admin, payload: { title: 'Large', sku: `LARGE-${product.id}`, options: { size: 'L' } } })],
    ['POST /products/:id/images', (ctx, admin, product) => ctx.expectStatus(201, { method: 'POST', url: `${PRODUCTS}/${product.id}/images`, token: admin, payload: { url: 'https://cdn.example.com/lamp.jpg' } })],
    ['PUT /products/:id/translations/:locale', (ctx, admin, product) => ctx.expectStatus(201, { method: 'PUT', url: `${PRODUCTS}/${product.id}/translations/de`, token: admin, payload: { title: 'Lampe' } })],
    ['PATCH /categories/:id', async (ctx, admin) => {
      const category = await ctx.expectStatus<Category>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: `Lighting ${++made}` } })
      return ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/categories/${category.id}`, token: admin, payload: { name: `Lights ${made}` } })
    }],
  ]

  for (const [name, write] of writes) {
    test(name, async ({ ctx, admin }) => {
      const { product, query } = await createListedProduct(ctx, admin, 'Remembered')
      expect((await read(ctx, product.id)).title).toBe('Remembered')
      expect(await listed(ctx, query)).toEqual(['Remembered'])
      await retitleBySql(ctx, product.id, 'Current')
      await write(ctx, admin, product)
      expect((await read(ctx, product.id)).title).toBe('Current')
      expect(await listed(ctx, query)).toEqual(['Current'])
    })
  }

  test('a write elsewhere (a cart) keeps it', async ({ ctx, admin }) => {
    const { product, query } = await createListedProduct(ctx, admin, 'Remembered')
    await read(ctx, product.id)
    await listed(ctx, query)
    await retitleBySql(ctx, product.id, 'Current')
    await ctx.expectStatus(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: 'USD' } })
    expect((await read(ctx, product.id)).title).toBe('Remembered')
    expect(await listed(ctx, query)).toEqual(['Remembered'])
  })
})

const ADDRESS = { first_name: 'Ada', last_name: 'Lovelace', line1: '12 St James Sq', city: 'London', postal_code: 'SW1Y 4JH', country: 'GB' }

/** A guest's checkout of `quantity` units of the product, paid with the `test` provider (placed at once). */
async function buy(ctx: TestContext, product: Product, quantity: number): Promise<Order> {
  const cart = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: product.currency } })
  await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/carts/${cart.id}/items`, payload: { product_id: product.id, quantity } })
  let checkout = await ctx.expectStatus<Checkout>(201, { method: 'POST', url: '/api/v1/checkouts', payload: { cart_id: cart.id, email: 'ada@example.com', shipping_address: ADDRESS } })
  const [cheapest] = checkout.shipping_rates
  if (cheapest) checkout = await ctx.expectStatus(200, { method: 'POST', url: `/api/v1/checkouts/${checkout.id}/shipping`, payload: { rate_id: cheapest.id } })
  return ctx.expectStatus(201, {
    method: 'POST',
    url: `/api/v1/checkouts/${checkout.id}/complete`,
    payload: { payment: { method: 'card', token: 'tok_visa' } },
    headers: { 'idempotency-key': randomUUID() },
  })
}

/**
 * A product with `stock` units, in a category of its own, and a bystander product. `remember` reads
 * both (detail and category page), so that they are answered from memory, then changes the
 * bystander behind the API, and answers the product's stock as its detail and its page show it.
 * `shown` answers the same after a write, once it has found the bystander still answered from
 * memory: a stock move drops only what shows the products it moved.
 */
async function watchedProduct(ctx: TestContext, admin: string, stock = 3) {
  const watched = await createListedProduct(ctx, admin, 'Watched', { inventory_quantity: stock })
  const bystander = await createListedProduct(ctx, admin, 'Bystander')
  const shown = async () => {
    expect((await read(ctx, bystander.product.id)).title).toBe('Bystander')
    expect(await listed(ctx, bystander.query)).toEqual(['Bystander'])
    const page = await ctx.expectStatus<ProductList>(200, { method: 'GET', url: `${PRODUCTS}?${watched.query}` })
    return [(await read(ctx, watched.product.id)).inventory_quantity, ...page.products.map((product) => product.inventory_quantity)]
  }
  return {
    product: watched.product,
    async remember(): Promise<number[]> {
      const stock = await shown()
      await retitleBySql(ctx, bystander.product.id, 'Changed behind the API')
      return stock
    },
    shown,
  }
}

describe('a stock move committed through this instance drops the answers showing the products it moved (only those) before answering', () => {
  test('POST /checkouts/:id/complete: the units bought', async ({ ctx, admin }) => {
    const watched = await watchedProduct(ctx, admin)
    expect(await watched.remember()).toEqual([3, 3])
    await buy(ctx, watched.product, 2)
    expect(await watched.shown()).toEqual([1, 1])
  })

  test('POST /orders/:id/cancel: the units given back', async ({ ctx, admin }) => {
    const watched = await watchedProduct(ctx, admin)
    const order = await buy(ctx, watched.product, 2)
    expect(await watched.remember()).toEqual([1, 1])
    await ctx.expectStatus(200, { method: 'POST', url: `/api/v1/orders/${order.id}/cancel`, token: admin, payload: {} })
    expect(await watched.shown()).toEqual([3, 3])
  })

  test('POST /returns/:id/receive: the units put back on hand', async ({ ctx, admin }) => {
    const watched = await watchedProduct(ctx, admin)
    const order = await buy(ctx, watched.product, 2)
    await shipAll(ctx, admin, order.id)
    const asked = await ctx.expectStatus<Return>(201, {
      method: 'POST',
      url: `/api/v1/orders/${order.id}/returns`,
      payload: { items: [{ line_id: order.items[0]!.id, quantity: 2 }] },
      token: admin,
    })
    await ctx.expectStatus(200, { method: 'POST', url: `/api/v1/returns/${asked.id}/approve`, token: admin, payload: {} })
    expect(await watched.remember()).toEqual([1, 1])
    await ctx.expectStatus(200, { method: 'POST', url: `/api/v1/returns/${asked.id}/receive`, token: admin, payload: {}, headers: { 'idempotency-key': randomUUID() } })
    expect(await watched.shown()).toEqual([3, 3])
  })

  test('POST /orders/:id/edits: a unit cancelled; its preview, rolled back, drops nothing', async ({ ctx, admin }) => {
    const watched = await watchedProduct(ctx, admin)
    const order = await buy(ctx, watched.product, 2)
    expect(await watched.remember()).toEqual([1, 1])
    const edit = { lines: [{ line_id: order.items[0]!.id, quantity: 1 }] }
    await retitleBySql(ctx, watched.product.id, 'Changed behind the API')
    await ctx.expectStatus(200, { method: 'POST', url: `/api/v1/orders/${order.id}/edits/preview`, payload: edit, token: admin })
    expect((await read(ctx, watched.product.id)).title).toBe('Watched')
    await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/orders/${order.id}/edits`, payload: edit, headers: { 'idempotency-key': randomUUID() }, token: admin })
    expect(await watched.shown()).toEqual([2, 2])
  })

  test('POST /inventory/adjustments, and PATCH /stock-locations/:id closing a location for sale', async ({ ctx, admin }) => {
    const watched = await watchedProduct(ctx, admin)
    const store = await ctx.expectStatus<StockLocation>(201, { method: 'POST', url: '/api/v1/stock-locations', payload: { name: `Store ${++made}` }, token: admin })
    expect(await watched.remember()).toEqual([3, 3])
    await ctx.expectStatus(201, {
      method: 'POST',
      url: '/api/v1/inventory/adjustments',
      payload: { reason: 'received', product_id: watched.product.id, location_id: store.id, quantity: 4 },
      token: admin,
    })
    expect(await watched.shown()).toEqual([7, 7])
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/stock-locations/${store.id}`, payload: { is_active: false }, token: admin })
    expect(await watched.shown()).toEqual([3, 3])
  })

  test('Stripe: the 202 holding the units, a stale payment_intent.payment_failed giving them back, the late payment_intent.succeeded taking them again and placing the order', async () => {
    const shop = await startStripeShop({ productCacheTtlMs: TTL_MS })
    try {
      const category = (await shop.call<Category>('POST', '/api/v1/categories', { body: { name: 'Kettles' }, token: shop.admin })).body
      const product = await shop.createProduct({ title: 'Kettle', price: 30, inventory_quantity: 3, category_ids: [category.id] })
      const shown = async () => [
        (await shop.call<Product>('GET', `${PRODUCTS}/${product.id}`)).body.inventory_quantity,
        ...(await shop.call<ProductList>('GET', `${PRODUCTS}?category=${category.slug}`)).body.products.map((listed) => listed.inventory_quantity),
      ]
      expect(await shown()).toEqual([3, 3])
      const checkout = await shop.startCheckout(product, 2)
      const pending = await shop.complete<CheckoutPaymentPending>(checkout.id, CARD.threeDSecure)
      expect(pending.status, JSON.stringify(pending.body)).toBe(202)
      expect(await shown()).toEqual([1, 1])

      // A failure Stripe reported before the customer passed 3-D Secure, delivered now: the units go back.
      const [intent] = shop.intentsOf(pending.body.payment.id)
      const stale = structuredClone(shop.eventOf('payment_intent.requires_action', intent!.id))
      stale.id = `evt_stale_${randomUUID()}`
      stale.type = 'payment_intent.payment_failed'
      Object.assign(stale.data.object, {
        status: 'requires_payment_method',
        next_action: null,
        last_payment_error: { type: 'card_error', code: 'card_declined', message: 'Your card was declined.' },
      })
      expect((await shop.postWebhook(JSON.stringify(stale))).status).toBe(200)
      expect(await shown()).toEqual([3, 3])

      shop.fake.completeAction(intent!.id)
      await shop.fake.sendEvent(shop.eventOf('payment_intent.succeeded', intent!.id))
      expect(await shop.ordersOf(checkout.id)).toEqual([expect.objectContaining({ status: 'paid' })])
      expect(await shown()).toEqual([1, 1])
    } finally {
      await shop.close()
    }
  })
})

describe('the TTL', () => {
  test('a change behind the API shows once the TTL has passed; with 0 every read goes to the database', async () => {
    for (const ttl of [300, 0]) {
      const ctx = await createTestContext({ productCacheTtlMs: ttl })
      try {
        const admin = (await ctx.signIn('admin')).token
        const product = await createProduct(ctx, admin, { title: 'Before' })
        await read(ctx, product.id)
        await retitleBySql(ctx, product.id, 'After')
        if (ttl > 0) {
          expect((await read(ctx, product.id)).title).toBe('Before')
          await new Promise((resolve) => setTimeout(resolve, ttl + 50))
        }
        expect((await read(ctx, product.id)).title).toBe('After')
      } finally {
        await ctx.close()
      }
    }
  })
})

describe('CatalogCache', () => {
  test('what a read found is not kept when a write emptied the cache while it ran', () => {
    const cache = new CatalogCache<string>(TTL_MS)
    const before = cache.begin()
    cache.clear()
    cache.set('a', 'as read before the write', before)
    expect(cache.get('a')).toBeUndefined()
    cache.set('a', 'as read after the write', cache.begin())
    expect(cache.get('a')).toBe('as read after the write')
  })

  test('it holds at most 20,000 parts by weight, dropping the oldest stored first', () => {
    const cache = new CatalogCache<number>(TTL_MS, (weight) => weight)
    cache.set('heavy', 15_000, cache.begin())
    cache.set('light', 4_000, cache.begin())
    expect([cache.get('heavy'), cache.get('light')]).toEqual([15_000, 4_000])
    cache.set('more', 2_000, cache.begin())
    expect([cache.get('heavy'), cache.get('light'), cache.get('more')]).toEqual([undefined, 4_000, 2_000])
    cache.set('too heavy alone', 20_001, cache.begin())
    expect(cache.get('too heavy alone')).toBeUndefined()
    // Storing a key again replaces its weight rather than adding to it.
    for (let i = 0; i < 5; i++) cache.set('light', 4_000, cache.begin())
    expect([cache.get('light'), cache.get('more')]).toEqual([4_000, 2_000])
  })

  test('forget drops the answers that show one of the products, and no other; a read of one under way then is not kept', () => {
    const cache = new CatalogCache<string[]>(TTL_MS, (ids) => ids.length, (ids) => ids)
    cache.set('detail a', ['a'], cache.begin())
    cache.set('page 1', ['a', 'b'], cache.begin())
    cache.set('page 2', ['b', 'c'], cache.begin())
    const before = cache.begin()
    cache.forget(['a'])
    expect([cache.get('detail a'), cache.get('page 1'), cache.get('page 2')]).toEqual([undefined, undefined, ['b', 'c']])
    cache.set('detail a', ['a'], before)
    cache.set('detail c', ['c'], before)
    expect([cache.get('detail a'), cache.get('detail c')]).toEqual([undefined, ['c']])
    cache.set('detail a', ['a'], cache.begin())
    expect(cache.get('detail a')).toEqual(['a'])
    // page 1 is gone from b's answers too: forgetting b drops page 2 and keeps the rest.
    cache.forget(['b'])
    expect([cache.get('detail a'), cache.get('page 2'), cache.get('detail c')]).toEqual([['a'], undefined, ['c']])
  })

  test('the TTL counts from the start of the read, not from when it was stored', () => {
    const cache = new CatalogCache<string>(TTL_MS)
    cache.set('a', 'read long ago', { ...cache.begin(), at: Date.now() - TTL_MS })
    expect(cache.get('a')).toBeUndefined()
  })
})
