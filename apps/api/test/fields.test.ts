/** `?fields=` on reads and lists: selection, nesting, refusals, envelopes, access, and the OpenAPI document. */
import fc from 'fast-check'
import { describe, expect } from 'vitest'
import type { Product } from '@commerce/domain'
import { test as apiTest, type TestContext } from './helpers.js'
import { insertOrder } from './order-fixtures.js'

const PRODUCTS = '/api/v1/products'
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000dead'

type Json = Record<string, unknown>

const get = <T = Json>(ctx: TestContext, url: string, token?: string) => ctx.expectStatus<T>(200, { method: 'GET', url, token })

/** The names `fields` takes on an operation, as its OpenAPI description lists them. */
async function documentedNames(ctx: TestContext, path: string): Promise<string[]> {
  const document = await get<{ paths: Record<string, { get: { parameters: { $ref?: string; description?: string }[] } }> }>(ctx, '/api/v1/openapi.json')
  const parameter = document.paths[path]!.get.parameters.find((one) => one.$ref === '#/components/parameters/fields')!
  return parameter.description!.replace(/^[^:]*: /, '').replace(/\.$/, '').split(', ')
}

/** The file's kettle (two variants, an image) beside three more products (which the lists show), read back whole. */
const test = apiTest.extend<{ product: Product }>({
  product: [
    async ({ ctx, admin }, use) => {
      const create = (payload: Json) => ctx.expectStatus<Product>(201, { method: 'POST', url: PRODUCTS, payload, token: admin })
      const product = await create({ title: 'Kettle', description: 'Boils water', price: 49.5, sku: 'KET-1', inventory_quantity: 7 })
      for (const [title, sku] of [['Red', 'KET-1-R'], ['Blue', null]] as const) {
        await ctx.expectStatus(201, { method: 'POST', url: `${PRODUCTS}/${product.id}/variants`, payload: { title, sku, price: 51 }, token: admin })
      }
      await ctx.expectStatus(201, { method: 'POST', url: `${PRODUCTS}/${product.id}/images`, payload: { url: 'https://example.com/k.jpg' }, token: admin })
      for (const title of ['Teapot', 'Toaster', 'Mug']) await create({ title, price: 10 })
      await use(await get<Product>(ctx, `${PRODUCTS}/${product.id}`))
    },
    { scope: 'file', auto: true },
  ],
})

describe('selection on a read', () => {
  test('GET /products/:id?fields=title,price answers exactly id, title and price, with the full answer’s values', async ({ ctx, product }) => {
    const selected = await get(ctx, `${PRODUCTS}/${product.id}?fields=title,price`)
    expect(selected).toEqual({ id: product.id, title: 'Kettle', price: 49.5 })
  })

  test('id always comes along, and fields=id answers only the id', async ({ ctx, product }) => {
    expect(await get(ctx, `${PRODUCTS}/${product.id}?fields=description`)).toEqual({ id: product.id, description: 'Boils water' })
    expect(await get(ctx, `${PRODUCTS}/${product.id}?fields=id`)).toEqual({ id: product.id })
  })

  test('a dot selects inside an embedded list, with each item’s id; the whole list named beside it wins', async ({ ctx, product }) => {
    const nested = await get<{ variants: Json[] }>(ctx, `${PRODUCTS}/${product.id}?fields=variants.sku,images`)
    expect(nested).toEqual({
      id: product.id,
      variants: product.variants.map((variant) => ({ id: variant.id, sku: variant.sku })),
      images: product.images,
    })
    expect(nested.variants.map((variant) => variant.sku)).toEqual(['KET-1-R', null])
    const whole = await get(ctx, `${PRODUCTS}/${product.id}?fields=variants.sku,variants`)
    expect(whole).toEqual({ id: product.id, variants: product.variants })
  })

  test('a dot selects inside an embedded object too (an order’s address, which has no id) and inside its lines', async ({ ctx, admin }) => {
    const { order, items } = await insertOrder(ctx)
    const selected = await get(ctx, `/api/v1/orders/${order.id}?fields=shipping_address.city,items.quantity,totals.total`, admin)
    expect(selected).toEqual({
      id: order.id,
      shipping_address: { city: 'London' },
      items: items.map((item) => ({ id: item.id, quantity: item.quantity })),
      totals: { total: 20 },
    })
  })

  test('a selected read leaves the next full read whole (nothing cached is cut)', async ({ ctx, product }) => {
    await get(ctx, `${PRODUCTS}/${product.id}?fields=title`)
    expect(await get(ctx, `${PRODUCTS}/${product.id}`)).toEqual(product)
    await get(ctx, `${PRODUCTS}?fields=title`)
    const list = await get<{ products: Json[] }>(ctx, PRODUCTS)
    expect(Object.keys(list.products[0]!)).toContain('categories')
  })

  test('reads send no ETag, so a selected answer and a full one never share a validator', async ({ ctx, product }) => {
    const full = await ctx.request({ method: 'GET', url: `${PRODUCTS}/${product.id}` })
    const selected = await ctx.request({ method: 'GET', url: `${PRODUCTS}/${product.id}?fields=title` })
    expect(full.headers.etag).toBeUndefined()
    expect(selected.headers.etag).toBeUndefined()
    expect(selected.headers['content-type']).toBe(full.headers['content-type'])
    expect(Number(selected.headers['content-length'])).toBeLessThan(Number(full.headers['content-length']))
  })

  test('any subset of the names returns exactly those keys (and id) with the full answer’s values', async ({ ctx, product }) => {
    const names = await documentedNames(ctx, '/api/v1/products/{id}')
    expect(names).toContain('variants.sku')
    const full = product as unknown as Record<string, unknown>
    await fc.assert(
      fc.asyncProperty(fc.subarray(names, { minLength: 1 }), async (chosen) => {
        const selected = await get(ctx, `${PRODUCTS}/${product.id}?fields=${chosen.join(',')}`)
        const whole = new Set(chosen.filter((name) => !name.includes('.')))
        const parts = new Map<string, Set<string>>()
        for (const [parent, child] of chosen.filter((name) => name.includes('.')).map((name) => name.split('.'))) {
          if (!whole.has(parent!)) parts.set(parent!, (parts.get(parent!) ?? new Set(['id'])).add(child!))
        }
        expect(new Set(Object.keys(selected))).toEqual(new Set(['id', ...whole, ...parts.keys()]))
        for (const name of whole) expect(selected[name]).toEqual(full[name])
        for (const [parent, children] of parts) {
          const items = full[parent] as Json[]
          expect(selected[parent]).toEqual(items.map((item) => Object.fromEntries([...children].map((child) => [child, item[child]]))))
        }
      }),
      { numRuns: 60 },
    )
  })
})

describe('selection on a list', () => {
  test('each item is cut and the envelope keeps its meta', async ({ ctx }) => {
    const full = await get<{ products: Json[]; meta: Json }>(ctx, `${PRODUCTS}?per_page=2&page=2`)
    const selected = await get<{ products: Json[]; meta: Json }>(ctx, `${PRODUCTS}?per_page=2&page=2&fields=title,slug`)
    expect(selected).toEqual({
      products: full.products.map((item) => ({ id: item.id, title: item.title, slug: item.slug })),
      meta: full.meta,
    })
    expect(selected.meta).toEqual({ page: 2, per_page: 2, total: 4, total_pages: 2 })
  })

  test('cursor mode keeps its cursor, and the next page is cut alike', async ({ ctx }) => {
    const first = await get<{ products: Json[]; meta: { next_cursor: string } }>(ctx, `${PRODUCTS}?after=&per_page=3&fields=title`)
    const unselected = await get<{ meta: Json }>(ctx, `${PRODUCTS}?after=&per_page=3`)
    expect(first.meta).toEqual(unselected.meta)
    expect(first.products.every((item) => Object.keys(item).join() === 'id,title')).toBe(true)
    const next = await get<{ products: Json[]; meta: Json }>(ctx, `${PRODUCTS}?after=${first.meta.next_cursor}&per_page=3&fields=title`)
    expect(next.meta).toEqual({ per_page: 3, next_cursor: null })
    expect(next.products).toEqual([{ id: expect.any(String), title: expect.any(String) }])
  })

  test('a nested list’s items are selected in: GET /products/:id/variants?fields=sku', async ({ ctx, product }) => {
    const selected = await get(ctx, `${PRODUCTS}/${product.id}/variants?fields=sku`)
    expect(selected).toEqual({
      variants: product.variants.map((variant) => ({ id: variant.id, sku: variant.sku })),
      meta: { page: 1, per_page: 20, total: 2, total_pages: 1 },
    })
  })

  test('item names only: a list item has no variants to select', async ({ ctx }) => {
    const error = await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${PRODUCTS}?fields=variants` })
    expect(error.details).toEqual([{ field: 'fields', message: expect.stringContaining("unknown fields: 'variants'") }])
  })
})

describe('refusals', () => {
  test.for([
    ['an unknown name', 'title,colour', "'colour'"],
    ['an unknown nested name', 'variants.colour', "'variants.colour'"],
    ['a name inside a plain field', 'title.length', "'title.length'"],
    ['an empty name', 'title,', "''"],
    ['an empty list', '', "''"],
  ])('%s is a 400 validation_error naming fields, the name and the known names', async ([, fields, named], { ctx, product }) => {
    const error = await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${PRODUCTS}/${product.id}?fields=${fields}` })
    expect(error.details).toHaveLength(1)
    expect(error.details![0]!.field).toBe('fields')
    expect(error.message).toContain(`Field 'fields' names unknown fields: ${named}.`)
    expect(error.message).toContain('Known: id, title, slug,')
    expect(error.message).toContain('variants.sku')
  })

  test('the refusal comes before the read: an unknown product with an unknown name is 400, not 404', async ({ ctx }) => {
    const error = await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${PRODUCTS}/${UNKNOWN_ID}?fields=colour` })
    expect(error.details![0]!.field).toBe('fields')
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${PRODUCTS}/${UNKNOWN_ID}?fields=title` })
  })

  test('a refused selection changes nothing: no event, the next read is whole', async ({ ctx, product }) => {
    const events = await ctx.countRows('events')
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${PRODUCTS}/${product.id}?fields=price,nope` })
    expect(await ctx.countRows('events')).toBe(events)
    expect(await get(ctx, `${PRODUCTS}/${product.id}`)).toEqual(product)
  })

  test('fields given twice, or longer than 4096 characters, is a 400 naming fields', async ({ ctx, product }) => {
    for (const query of ['fields=title&fields=price', `fields=${'title,'.repeat(820)}title`]) {
      const error = await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${PRODUCTS}/${product.id}?${query}` })
      expect(error.details!.map((detail) => detail.field)).toEqual(['fields'])
    }
  })
})

describe('access', () => {
  test('no field is kept from anyone by role, so the access rules are the route’s: they still apply first', async ({ ctx }) => {
    const customer = await ctx.signIn('customer')
    const other = await ctx.signIn('customer')
    const { order } = await insertOrder(ctx, { customerId: customer.customerId })
    // Anonymous: 401 before the names are looked at (they are not told what an order has).
    await ctx.expectError(401, 'unauthorized', { method: 'GET', url: `/api/v1/orders/${order.id}?fields=colour` })
    // Another customer: the same 404 as without fields.
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `/api/v1/orders/${order.id}?fields=email`, token: other.token })
    // A scope the customer lacks: 403 on an admin list.
    await ctx.expectError(403, 'forbidden', { method: 'GET', url: '/api/v1/coupons?fields=code', token: customer.token })
    // The owner: the fields it asked for, which it may see in full anyway.
    const full = await get<Json>(ctx, `/api/v1/orders/${order.id}`, customer.token)
    expect(await get(ctx, `/api/v1/orders/${order.id}?fields=email,status`, customer.token)).toEqual({ id: order.id, email: full.email, status: full.status })
  })
})

describe('the OpenAPI document', () => {
  test('every read of /api/v1 but the WebSocket takes the shared fields parameter, described with its names', async ({ ctx }) => {
    const document = await get<{
      paths: Record<string, Record<string, { parameters?: { $ref?: string; in?: string; name?: string; description?: string }[]; responses?: Record<string, { content?: Record<string, unknown> }> }>>
      components: { parameters: Record<string, { in: string; name: string; schema: Json }> }
    }>(ctx, '/api/v1/openapi.json')
    expect(document.components.parameters.fields).toMatchObject({ in: 'query', name: 'fields', schema: { type: 'string', maxLength: 4096 } })
    // A file (an export's CSV) is not JSON: nothing to select in it.
    const answersJson = (item: { get?: { responses?: Record<string, { content?: Record<string, unknown> }> } }) => Boolean(item.get?.responses?.['200']?.content?.['application/json'])
    const reads = Object.entries(document.paths).filter(([path, item]) => path.startsWith('/api/v1/') && path !== '/api/v1/ws' && item.get && answersJson(item))
    expect(reads.length).toBeGreaterThanOrEqual(36)
    for (const [path, item] of reads) {
      const parameters = item.get!.parameters ?? []
      const fields = parameters.filter((parameter) => parameter.$ref === '#/components/parameters/fields')
      expect(fields, path).toHaveLength(1)
      expect(fields[0]!.description, path).toMatch(/^Only these fields of (the answer|each of `[a-z_]+`), comma-separated, nested with dots: [a-z0-9_]+(, [a-z0-9_.]+)*\.$/)
      expect(parameters.some((parameter) => parameter.name === 'fields'), path).toBe(false)
    }
    expect(await documentedNames(ctx, '/api/v1/orders')).toContain('payments.refunds.amount')
  })
})
