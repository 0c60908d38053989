/**
 * Catalog answers in memory (routes/products/catalog-cache.ts): a product detail and a public list
 * page are answered from memory for PRODUCT_CACHE_TTL after they were read; a write through the
 * catalog, inventory and order routes (products, variants, images, categories, translations,
 * stock, cancellations) empties both before answering; a change made behind the API (here: plain
 * SQL, as another instance, the worker or a checkout would) shows once the TTL has passed; a read
 * that began before a write never stores what it found.
 */
import { describe, expect } from 'vitest'
import type { Category, Product, ProductList } from '@commerce/domain'
import { CatalogCache } from '../src/routes/products/catalog-cache.js'
import { createTestContext, test, type TestContext } from './helpers.js'
import { insertOrder } from './order-fixtures.js'

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
async function createListedProduct(ctx: TestContext, admin: string, title: string): Promise<{ product: Product; category: Category; query: string }> {
  const category = await ctx.expectStatus<Category>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: `Shelf ${++made}` } })
  const product = await createProduct(ctx, admin, { title, category_ids: [category.id] })
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

describe('a write through the catalog, inventory or order routes empties it before answering', () => {
  // Each case changes the product behind the API first, so the read after the write shows
  // whether the remembered detail was dropped (the SQL title) or kept (the old one).
  const writes: [string, (ctx: TestContext, admin: string, product: Product) => Promise<unknown>][] = [
    ['PATCH /products/:id', (ctx, admin, product) => ctx.expectStatus(200, { method: 'PATCH', url: `${PRODUCTS}/${product.id}`, token: admin, payload: { description: 'New' } })],
    ['POST /products/:id/variants', (ctx, admin, product) => ctx.expectStatus(201, { method: 'POST', url: `${PRODUCTS}/${product.id}/variants`, token: admin, payload: { title: 'Large', sku: `LARGE-${product.id}`, options: { size: 'L' } } })],
    ['POST /products/:id/images', (ctx, admin, product) => ctx.expectStatus(201, { method: 'POST', url: `${PRODUCTS}/${product.id}/images`, token: admin, payload: { url: 'https://cdn.example.com/lamp.jpg' } })],
    ['PUT /products/:id/translations/:locale', (ctx, admin, product) => ctx.expectStatus(201, { method: 'PUT', url: `${PRODUCTS}/${product.id}/translations/de`, token: admin, payload: { title: 'Lampe' } })],
    ['POST /inventory/adjustments', async (ctx, admin, product) => {
      const [location] = await ctx.handle.sql<{ id: string }[]>`select id from stock_locations where is_default`
      return ctx.expectStatus(201, { method: 'POST', url: '/api/v1/inventory/adjustments', token: admin, payload: { reason: 'received', product_id: product.id, location_id: location!.id, quantity: 3 } })
    }],
    ['POST /orders/:id/cancel', async (ctx, admin, product) => {
      const { order } = await insertOrder(ctx, { status: 'paid', items: [{ unitPriceMinor: 1000, productId: product.id }] })
      return ctx.expectStatus(200, { method: 'POST', url: `/api/v1/orders/${order.id}/cancel`, token: admin, payload: {} })
    }],
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

  test('the TTL counts from the start of the read, not from when it was stored', () => {
    const cache = new CatalogCache<string>(TTL_MS)
    cache.set('a', 'read long ago', { ...cache.begin(), at: Date.now() - TTL_MS })
    expect(cache.get('a')).toBeUndefined()
  })
})
