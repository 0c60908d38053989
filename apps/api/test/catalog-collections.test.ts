/**
 * Collections (docs/catalog.md, "Collections"): manual ones in their order, automatic ones kept
 * current by every kind of change — a product write, a CSV import applied by a real worker, stock
 * reaching zero through a checkout and coming back through the inventory — and best-selling.
 */
import type { ChildProcess } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect } from 'vitest'
import type { Collection, Import, Product, ProductList } from '@commerce/domain'
import { refreshBestSellers, sqlOf } from '@commerce/db'
import { diskStorage } from '@commerce/storage'
import { test, type TestContext } from './helpers.js'
import { insertOrder } from './order-fixtures.js'
import { startWorker, stopProcess } from './processes.js'

const ROOT = await mkdtemp(join(tmpdir(), 'collections-test-'))
test.scoped({ contextOptions: { config: { storage: diskStorage({ root: ROOT, publicUrl: 'http://127.0.0.1/files' }) } } })

let worker: ChildProcess | undefined
afterAll(async () => {
  await stopProcess(worker)
  await rm(ROOT, { recursive: true, force: true })
})

const PRODUCTS = '/api/v1/products'
const COLLECTIONS = '/api/v1/collections'

const suffix = () => Math.random().toString(36).slice(2, 8)

function createProduct(ctx: TestContext, admin: string, payload: Record<string, unknown>): Promise<Product> {
  return ctx.expectStatus(201, { method: 'POST', url: PRODUCTS, token: admin, payload })
}

async function productsOf(ctx: TestContext, slug: string, query = ''): Promise<string[]> {
  const page = await ctx.expectStatus<ProductList>(200, { method: 'GET', url: `${PRODUCTS}?collection=${slug}&per_page=100${query}` })
  return page.products.map((product) => product.id)
}

describe('manual collections', () => {
  test('hold their products in the order placed; unpublished ones are the staff’s only', async ({ ctx, admin }) => {
    const [a, b, c] = await Promise.all(['A', 'B', 'C'].map((title) => createProduct(ctx, admin, { title: `${title} ${suffix()}` })))
    const collection = await ctx.expectStatus<Collection>(201, {
      method: 'POST',
      url: COLLECTIONS,
      token: admin,
      payload: { title: `Picks ${suffix()}`, kind: 'manual', product_ids: [b!.id, c!.id, a!.id] },
    })
    expect(collection).toMatchObject({ kind: 'manual', sort: 'manual', product_count: 3, published: true })
    expect(await productsOf(ctx, collection.slug)).toEqual([b!.id, c!.id, a!.id])
    expect(await productsOf(ctx, collection.slug, '&sort=newest')).toEqual([c!.id, b!.id, a!.id].sort().reverse())
    await ctx.expectStatus(200, { method: 'PATCH', url: `${COLLECTIONS}/${collection.id}`, token: admin, payload: { product_ids: [a!.id, b!.id], published: false } })
    expect((await ctx.expectStatus<ProductList>(200, { method: 'GET', url: `${PRODUCTS}?collection=${collection.slug}`, token: admin })).products.map((p) => p.id)).toEqual([a!.id, b!.id])
    expect(await productsOf(ctx, collection.slug)).toEqual([])
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${COLLECTIONS}/by-slug/${collection.slug}` })
    await ctx.expectInvalidField(
      { method: 'POST', url: COLLECTIONS, token: admin, payload: { title: 'Bad', kind: 'manual', product_ids: ['0190a6f1-7c3a-7000-8000-00000000dead'] } },
      'product_ids[0]',
      'collections',
    )
    const events = await ctx.handle.sql<{ kind: string }[]>`select kind from events where data->>'id' = ${collection.id} order by id`
    expect(events.map((event) => event.kind)).toEqual(['collection.created', 'collection.updated'])
  })
})

describe('automatic collections', () => {
  test('are kept current by product writes, with a preview that matches what they then hold', async ({ ctx, admin }) => {
    const tag = `drop-${suffix()}`
    const cheap = await createProduct(ctx, admin, { title: `Cheap ${tag}`, price: 20, tags: [tag] })
    const dear = await createProduct(ctx, admin, { title: `Dear ${tag}`, price: 80, tags: [tag] })
    await createProduct(ctx, admin, { title: `Untagged ${tag}`, price: 10 })
    const rules = [
      { field: 'tag', operator: 'equals', value: tag.toUpperCase() },
      { field: 'price', operator: 'less_than', value: '50', currency: 'USD' },
    ]
    const preview = await ctx.expectStatus<{ count: number; products: { id: string }[] }>(200, { method: 'POST', url: `${COLLECTIONS}/preview`, token: admin, payload: { rules } })
    expect(preview).toMatchObject({ count: 1, products: [{ id: cheap.id }] })
    const collection = await ctx.expectStatus<Collection>(201, { method: 'POST', url: COLLECTIONS, token: admin, payload: { title: `Under 50 ${tag}`, kind: 'automatic', rules } })
    expect(collection.product_count).toBe(1)
    expect(await productsOf(ctx, collection.slug)).toEqual([cheap.id])
    // A price change brings one in, a tag removed takes one out: nothing is rebuilt by hand.
    await ctx.expectStatus(200, { method: 'PATCH', url: `${PRODUCTS}/${dear.id}`, token: admin, payload: { price: 45 } })
    expect(await productsOf(ctx, collection.slug)).toEqual([dear.id, cheap.id])
    await ctx.expectStatus(200, { method: 'PATCH', url: `${PRODUCTS}/${cheap.id}`, token: admin, payload: { tags: [] } })
    expect(await productsOf(ctx, collection.slug)).toEqual([dear.id])
    // Any instead of all: either rule is enough.
    const any = await ctx.expectStatus<Collection>(200, { method: 'PATCH', url: `${COLLECTIONS}/${collection.id}`, token: admin, payload: { match: 'any' } })
    expect(any.product_count).toBeGreaterThanOrEqual(3)
    await ctx.expectInvalidField({ method: 'POST', url: COLLECTIONS, token: admin, payload: { title: 'x', kind: 'automatic', rules: [{ field: 'price', operator: 'equals', value: '1', currency: 'USD' }] } }, 'rules[0].operator', 'collections')
    await ctx.expectInvalidField({ method: 'POST', url: COLLECTIONS, token: admin, payload: { title: 'x', kind: 'automatic', rules: [{ field: 'price', operator: 'less_than', value: '1' }] } }, 'rules[0].currency', 'collections')
  })

  test('follow stock: a checkout that sells the last unit takes the product out, stock received brings it back', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: `Last one ${suffix()}`, price: 5, inventory_quantity: 1 })
    const collection = await ctx.expectStatus<Collection>(201, {
      method: 'POST',
      url: COLLECTIONS,
      token: admin,
      payload: { title: `In stock ${suffix()}`, kind: 'automatic', rules: [{ field: 'stock', operator: 'in_stock' }, { field: 'title', operator: 'contains', value: 'last one' }] },
    })
    expect(await productsOf(ctx, collection.slug)).toContain(product.id)
    const cart = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: 'USD' } })
    await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/carts/${cart.id}/items`, payload: { product_id: product.id, quantity: 1 } })
    const checkout = await ctx.expectStatus<{ id: string }>(201, {
      method: 'POST',
      url: '/api/v1/checkouts',
      payload: {
        cart_id: cart.id,
        email: 'last@example.com',
        shipping_address: { first_name: 'Ada', last_name: 'L', line1: '1 Road', city: 'Leeds', postal_code: 'LS1', country: 'GB' },
      },
    })
    await ctx.expectStatus(201, {
      method: 'POST',
      url: `/api/v1/checkouts/${checkout.id}/complete`,
      headers: { 'idempotency-key': `last-one-${suffix()}-checkout` },
      payload: { payment: { method: 'card', token: 'tok_visa' } },
    })
    expect(await productsOf(ctx, collection.slug)).not.toContain(product.id)
    expect(await productsOf(ctx, collection.slug, '&available=false')).toEqual([])
    await ctx.expectStatus(200, { method: 'PATCH', url: `${PRODUCTS}/${product.id}`, token: admin, payload: { inventory_quantity: 4 } })
    expect(await productsOf(ctx, collection.slug)).toContain(product.id)
  })

  test('take in what a CSV import writes, as the worker applies it', async ({ ctx, admin }) => {
    worker ??= startWorker(ctx.database.url, { UPLOADS_DIR: ROOT, POLL_INTERVAL_MS: '50' })
    const vendor = `Imported ${suffix()}`
    const collection = await ctx.expectStatus<Collection>(201, {
      method: 'POST',
      url: COLLECTIONS,
      token: admin,
      payload: { title: `From ${vendor}`, kind: 'automatic', rules: [{ field: 'title', operator: 'contains', value: vendor.toLowerCase() }] },
    })
    const slug = `csv-${suffix()}`
    const runImport = async (csv: string) => {
      const response = await ctx.request({ method: 'POST', url: '/api/v1/imports?resource=products', headers: { 'content-type': 'text/csv' }, payload: csv, token: admin })
      expect(response.statusCode, response.body).toBe(202)
      const started = response.json<Import>()
      const deadline = Date.now() + 30_000
      let status = started.status
      while (!['completed', 'failed'].includes(status) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        status = (await ctx.expectStatus<Import>(200, { method: 'GET', url: `/api/v1/imports/${started.id}`, token: admin })).status
      }
      expect(status).toBe('completed')
    }
    await runImport(`product_slug,product_title,product_price,stock:Default\r\n${slug},${vendor} lamp,24.00,5\r\n`)
    const [imported] = await ctx.handle.sql<{ id: string }[]>`select id from products where slug = ${slug}`
    expect(await productsOf(ctx, collection.slug)).toEqual([imported!.id])
    // An update by import (its listing row refreshed once for the batch): tags, price and stock show in the filters.
    const tag = `lamp-${suffix()}`
    const filtered = (query: string) => productsOf(ctx, collection.slug, `&tag=${tag}&${query}`)
    expect(await filtered('available=true')).toEqual([])
    await runImport(`product_slug,product_tags,product_price,stock:Default\r\n${slug},${tag},31.00,0\r\n`)
    expect(await filtered('available=true')).toEqual([])
    expect(await filtered('available=false&price_min=30&price_max=32')).toEqual([imported!.id])
  })
})

describe('best-selling', () => {
  test('orders units sold over the last 30 days, paid orders only, less what was cancelled', async ({ ctx, admin }) => {
    const category = await ctx.expectStatus<{ id: string; slug: string }>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: `Sellers ${suffix()}` } })
    const [slow, fast, unpaid] = await Promise.all(['slow', 'fast', 'unpaid'].map((title) => createProduct(ctx, admin, { title, category_ids: [category.id] })))
    await insertOrder(ctx, { status: 'paid', items: [{ unitPriceMinor: 100, quantity: 2, productId: slow!.id }, { unitPriceMinor: 100, quantity: 5, productId: fast!.id }] })
    await insertOrder(ctx, { status: 'pending', items: [{ unitPriceMinor: 100, quantity: 50, productId: unpaid!.id }] })
    await insertOrder(ctx, { status: 'cancelled', items: [{ unitPriceMinor: 100, quantity: 50, productId: slow!.id }] })
    expect(await refreshBestSellers(sqlOf(ctx.handle.db))).toBeGreaterThanOrEqual(2)
    const page = await ctx.expectStatus<ProductList>(200, { method: 'GET', url: `${PRODUCTS}?category=${category.slug}&sort=best_selling` })
    expect(page.products.map((product) => product.id)).toEqual([fast!.id, slow!.id, unpaid!.id])
    const sold = await ctx.handle.sql<{ sold: number }[]>`select sold from product_listing where product_id in (${fast!.id}, ${slow!.id}) order by sold desc`
    expect(sold.map((row) => row.sold)).toEqual([5, 2])
    // A second refresh with nothing new writes nothing.
    expect(await refreshBestSellers(sqlOf(ctx.handle.db))).toBe(0)
  })
})
