/** Products: list, read, create, update, soft delete — on a real database, through the real app. */
import { afterAll, beforeAll, describe, expect } from 'vitest'
import type { Category, Product, ProductList } from '@commerce/domain'
import { createTestContext, test, type TestContext } from './helpers.js'

const PRODUCTS = '/api/v1/products'
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000dead'

function createProduct(ctx: TestContext, admin: string, payload: Record<string, unknown>): Promise<Product> {
  return ctx.expectStatus(201, { method: 'POST', url: PRODUCTS, payload, token: admin })
}

function patchProduct(ctx: TestContext, admin: string, id: string, payload: Record<string, unknown>): Promise<Product> {
  return ctx.expectStatus(200, { method: 'PATCH', url: `${PRODUCTS}/${id}`, payload, token: admin })
}

function deleteProduct(ctx: TestContext, admin: string, id: string): Promise<void> {
  return ctx.expectStatus(204, { method: 'DELETE', url: `${PRODUCTS}/${id}`, token: admin })
}

function getProduct(ctx: TestContext, id: string): Promise<Product> {
  return ctx.expectStatus(200, { method: 'GET', url: `${PRODUCTS}/${id}` })
}

/** A list answer in page mode (no `after`): its meta is the page envelope's, with a total. */
type ProductPage = ProductList & { meta: { total: number } }

function listProducts(ctx: TestContext, query = '', token?: string): Promise<ProductPage> {
  return ctx.expectStatus(200, { method: 'GET', url: `${PRODUCTS}${query}`, token })
}

async function totalOf(ctx: TestContext, query = '', token?: string): Promise<number> {
  return (await listProducts(ctx, query, token)).meta.total
}

function createCategory(ctx: TestContext, admin: string, name: string, slug?: string): Promise<Category> {
  return ctx.expectStatus(201, { method: 'POST', url: '/api/v1/categories', payload: slug ? { name, slug } : { name }, token: admin })
}

const eventsOf = (ctx: TestContext, productId: string) => ctx.productEvents(productId)
const eventCount = (ctx: TestContext) => ctx.countRows('events')
const productRowCount = (ctx: TestContext) => ctx.countRows('products')

describe('POST /api/v1/products', () => {
  test('creates a product and answers 201 with every field of the detail shape', async ({ ctx, admin }) => {
    const category = await createCategory(ctx, admin, 'Kitchen')
    const response = await ctx.request({
      method: 'POST',
      url: PRODUCTS,
      token: admin,
      payload: {
        title: 'Espresso Cup',
        description: 'A small cup for strong coffee',
        sku: 'CUP-001',
        price: 12.5,
        currency: 'EUR',
        inventory_quantity: 40,
        weight: 0.25,
        weight_unit: 'g',
        image_url: 'https://cdn.example.com/cup.jpg',
        category_ids: [category.id],
      },
    })
    expect(response.statusCode).toBe(201)
    const body: Product = response.json()
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      title: 'Espresso Cup',
      slug: 'espresso-cup',
      description: 'A small cup for strong coffee',
      sku: 'CUP-001',
      price: 12.5,
      currency: 'EUR',
      inventory_quantity: 40,
      compare_at_price: null,
      on_sale: false,
      weight: 0.25,
      weight_unit: 'g',
      status: 'active',
      published_at: body.created_at,
      is_active: true,
      tags: [],
      product_type: null,
      vendor: null,
      barcode: null,
      length: null,
      width: null,
      height: null,
      dimension_unit: 'cm',
      hs_code: null,
      country_of_origin: null,
      seo_title: null,
      seo_description: null,
      options: [],
      attributes: {},
      image_url: 'https://cdn.example.com/cup.jpg',
      categories: [{ id: category.id, name: 'Kitchen', slug: 'kitchen' }],
      variants: [],
      images: [],
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      updated_at: expect.stringMatching(/Z$/),
    })
    const [row] = await ctx.handle.sql`select price_minor::int, currency, is_active from products where id = ${body.id}`
    expect(row).toEqual({ price_minor: 1250, currency: 'EUR', is_active: true })
  })

  test('with only a title: price 0 USD, no stock, weight unit kg, active, slug from the title', async ({ ctx, admin }) => {
    const body = await createProduct(ctx, admin, { title: 'Plain Thing' })
    expect(body).toMatchObject({
      title: 'Plain Thing',
      slug: 'plain-thing',
      description: null,
      sku: null,
      price: 0,
      currency: 'USD',
      inventory_quantity: 0,
      weight: null,
      weight_unit: 'kg',
      is_active: true,
      image_url: null,
      categories: [],
    })
  })

  test('writes exactly one product.created event whose data is the product snapshot, in the request', async ({ ctx, admin }) => {
    const response = await ctx.request({ method: 'POST', url: PRODUCTS, token: admin, payload: { title: 'Evented Kettle', price: 30 } })
    expect(response.statusCode).toBe(201)
    const body: Product = response.json()
    const events = await eventsOf(ctx, body.id)
    expect(events).toHaveLength(1)
    expect(events[0]!.kind).toBe('product.created')
    expect(events[0]!.data).toEqual(body)
    expect(events[0]!.request_id).toBe(response.headers['x-request-id'])
  })

  test('answers 400 "Field \'title\' is required" when the title is missing, and creates nothing', async ({ ctx, admin }) => {
    const before = await productRowCount(ctx)
    const response = await ctx.request({ method: 'POST', url: PRODUCTS, token: admin, payload: { price: 5 } })
    expect(response.statusCode).toBe(400)
    expect(response.json().error).toEqual({
      code: 'validation_error',
      message: "Field 'title' is required",
      details: [{ field: 'title', message: "Field 'title' is required" }],
      request_id: response.headers['x-request-id'],
    })
    expect(await productRowCount(ctx)).toBe(before)
  })

  test('lists every problem of a bad body in details', async ({ ctx, admin }) => {
    const response = await ctx.request({
      method: 'POST',
      url: PRODUCTS,
      token: admin,
      payload: { price: -1, weight_unit: 'stone', inventory_quantity: 1.5, colour: 'red' },
    })
    expect(response.statusCode).toBe(400)
    const error = response.json().error
    expect(error.code).toBe('validation_error')
    const fields = error.details.map((detail: { field: string }) => detail.field)
    expect(fields).toEqual(expect.arrayContaining(['title', 'price', 'weight_unit', 'inventory_quantity', 'colour']))
    expect(error.details).toContainEqual({ field: 'title', message: "Field 'title' is required" })
    expect(error.details).toContainEqual({ field: 'colour', message: "Field 'colour' is not allowed" })
  })

  test('refuses unknown fields with 400 naming the field', async ({ ctx, admin }) => {
    const response = await ctx.request({
      method: 'POST',
      url: PRODUCTS,
      token: admin,
      payload: { title: 'Sneaky', price_minor: 1 },
    })
    expect(response.statusCode).toBe(400)
    expect(response.json().error).toMatchObject({
      code: 'validation_error',
      details: [{ field: 'price_minor', message: "Field 'price_minor' is not allowed" }],
    })
  })

  test('refuses wrong types without coercion: a price given as a string, an empty title, a non-URL image', async ({ ctx, admin }) => {
    for (const [payload, field] of [
      [{ title: 'Typed', price: '19.99' }, 'price'],
      [{ title: '' }, 'title'],
      [{ title: 'Imaged', image_url: 'not a url' }, 'image_url'],
      [{ title: 'Flagged', is_active: 'yes' }, 'is_active'],
      [{ title: 'Slugged', slug: 'Not A Slug' }, 'slug'],
      [{ title: 'Categorised', category_ids: ['not-a-uuid'] }, 'category_ids.0'],
    ] as const) {
      const response = await ctx.request({ method: 'POST', url: PRODUCTS, token: admin, payload })
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json().error.code).toBe('validation_error')
      expect(response.json().error.details).toContainEqual(expect.objectContaining({ field }))
    }
  })

  test('answers 400 for malformed JSON', async ({ ctx, admin }) => {
    const response = await ctx.request({
      method: 'POST',
      url: PRODUCTS,
      token: admin,
      headers: { 'content-type': 'application/json' },
      payload: '{"title": ',
    })
    expect(response.statusCode).toBe(400)
    expect(response.json().error.code).toBe('validation_error')
  })

  test('answers 401 without a token and with a garbage token, 403 for a customer; nothing is created', async ({ ctx, customer }) => {
    const before = await productRowCount(ctx)
    const events = await eventCount(ctx)
    const anonymous = await ctx.request({ method: 'POST', url: PRODUCTS, payload: { title: 'Anonymous' } })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error).toMatchObject({ code: 'unauthorized' })

    const garbage = await ctx.request({ method: 'POST', url: PRODUCTS, token: 'garbage.token.value', payload: { title: 'Garbage' } })
    expect(garbage.statusCode).toBe(401)
    expect(garbage.json().error).toMatchObject({ code: 'unauthorized' })

    const notBearer = await ctx.request({
      method: 'POST',
      url: PRODUCTS,
      headers: { authorization: 'Basic dXNlcjpwYXNz' },
      payload: { title: 'Basic' },
    })
    expect(notBearer.statusCode).toBe(401)

    const byCustomer = await ctx.request({ method: 'POST', url: PRODUCTS, token: customer, payload: { title: 'Customer' } })
    expect(byCustomer.statusCode).toBe(403)
    expect(byCustomer.json().error).toMatchObject({ code: 'forbidden' })

    expect(await productRowCount(ctx)).toBe(before)
    expect(await eventCount(ctx)).toBe(events)
  })

  test('category_ids naming an unknown category answers 400 and leaves no product and no event', async ({ ctx, admin }) => {
    const before = await productRowCount(ctx)
    const events = await eventCount(ctx)
    const response = await ctx.request({
      method: 'POST',
      url: PRODUCTS,
      token: admin,
      payload: { title: 'Orphan Product', category_ids: [UNKNOWN_ID] },
    })
    expect(response.statusCode).toBe(400)
    expect(response.json().error).toMatchObject({
      code: 'validation_error',
      details: [{ field: 'category_ids', message: expect.stringContaining(UNKNOWN_ID) }],
    })
    expect(await productRowCount(ctx)).toBe(before)
    expect(await eventCount(ctx)).toBe(events)
  })

  test('refuses the same category id twice', async ({ ctx, admin }) => {
    const category = await createCategory(ctx, admin, 'Doubles')
    const response = await ctx.request({
      method: 'POST',
      url: PRODUCTS,
      token: admin,
      payload: { title: 'Twice', category_ids: [category.id, category.id] },
    })
    expect(response.statusCode).toBe(400)
    expect(response.json().error.details).toContainEqual(expect.objectContaining({ field: 'category_ids' }))
  })
})

describe('slugs', () => {
  test('a slug is generated from the title without accents: "Café Crème" -> cafe-creme', async ({ ctx, admin }) => {
    const body = await createProduct(ctx, admin, { title: 'Café Crème' })
    expect(body.slug).toBe('cafe-creme')
  })

  test('generated duplicates get -2, -3', async ({ ctx, admin }) => {
    const second = await createProduct(ctx, admin, { title: 'Café  Crème!' })
    const third = await createProduct(ctx, admin, { title: 'cafe creme' })
    expect(second.slug).toBe('cafe-creme-2')
    expect(third.slug).toBe('cafe-creme-3')
  })

  test('a title with no letters or digits gets a fallback slug', async ({ ctx, admin }) => {
    const body = await createProduct(ctx, admin, { title: '!!!' })
    expect(body.slug).toMatch(/^product(-\d+)?$/)
  })

  test('an explicit slug is kept as given', async ({ ctx, admin }) => {
    const body = await createProduct(ctx, admin, { title: 'Whatever', slug: 'my-custom-slug' })
    expect(body.slug).toBe('my-custom-slug')
  })

  test('an explicit slug that is taken answers 409 conflict and writes no row and no event', async ({ ctx, admin }) => {
    const before = await productRowCount(ctx)
    const events = await eventCount(ctx)
    const response = await ctx.request({
      method: 'POST',
      url: PRODUCTS,
      token: admin,
      payload: { title: 'Clashing Cafe', slug: 'cafe-creme' },
    })
    expect(response.statusCode).toBe(409)
    expect(response.json().error).toMatchObject({ code: 'conflict', message: expect.stringContaining('cafe-creme') })
    expect(await productRowCount(ctx)).toBe(before)
    expect(await eventCount(ctx)).toBe(events)
    const [row] = await ctx.handle.sql`select count(*)::int as n from products where title = 'Clashing Cafe'`
    expect(row!.n).toBe(0)
  })

  test('PATCH to a slug another product has answers 409 and changes nothing', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Slug Mover' })
    const events = await eventCount(ctx)
    const response = await ctx.request({
      method: 'PATCH',
      url: `${PRODUCTS}/${product.id}`,
      token: admin,
      payload: { slug: 'cafe-creme', title: 'Renamed Mover' },
    })
    expect(response.statusCode).toBe(409)
    expect(response.json().error.code).toBe('conflict')
    expect(await getProduct(ctx, product.id)).toMatchObject({ slug: 'slug-mover', title: 'Slug Mover' })
    expect(await eventCount(ctx)).toBe(events)
  })

  test('PATCH to its own slug, or a free one, succeeds', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Slug Keeper' })
    expect((await patchProduct(ctx, admin, product.id, { slug: 'slug-keeper' })).slug).toBe('slug-keeper')
    expect((await patchProduct(ctx, admin, product.id, { slug: 'kept-slug' })).slug).toBe('kept-slug')
  })
})

describe('money', () => {
  test('price 19.99 USD round-trips exactly and is stored as 1999 minor units', async ({ ctx, admin }) => {
    const created = await createProduct(ctx, admin, { title: 'Nineteen Ninety Nine', price: 19.99, currency: 'USD' })
    expect(created.price).toBe(19.99)
    const [row] = await ctx.handle.sql`select price_minor from products where id = ${created.id}`
    expect(Number(row!.price_minor)).toBe(1999)
    expect((await getProduct(ctx, created.id)).price).toBe(19.99)
    const listed = (await listProducts(ctx, '?search=ninety')).products.find((item) => item.id === created.id)
    expect(listed?.price).toBe(19.99)
    const patched = await patchProduct(ctx, admin, created.id, { price: 0.3 })
    expect(patched.price).toBe(0.3)
    const [after] = await ctx.handle.sql`select price_minor from products where id = ${created.id}`
    expect(Number(after!.price_minor)).toBe(30)
  })

  test('JPY has no minor unit: 1500 is stored as 1500', async ({ ctx, admin }) => {
    const created = await createProduct(ctx, admin, { title: 'Yen Thing', price: 1500, currency: 'JPY' })
    expect(created).toMatchObject({ price: 1500, currency: 'JPY' })
    const [row] = await ctx.handle.sql`select price_minor from products where id = ${created.id}`
    expect(Number(row!.price_minor)).toBe(1500)
  })

  test('KWD has three decimals: 1.234 is stored as 1234', async ({ ctx, admin }) => {
    const created = await createProduct(ctx, admin, { title: 'Dinar Thing', price: 1.234, currency: 'KWD' })
    expect(created).toMatchObject({ price: 1.234, currency: 'KWD' })
    const [row] = await ctx.handle.sql`select price_minor from products where id = ${created.id}`
    expect(Number(row!.price_minor)).toBe(1234)
  })

  test('the largest amount (15 digits) round-trips exactly; one more digit is refused', async ({ ctx, admin }) => {
    const created = await createProduct(ctx, admin, { title: 'Very Expensive', price: 9999999999999.99 })
    expect(created.price).toBe(9999999999999.99)
    expect((await getProduct(ctx, created.id)).price).toBe(9999999999999.99)
    const tooLarge = await ctx.request({ method: 'POST', url: PRODUCTS, token: admin, payload: { title: 'Too Expensive', price: 100_000_000_000_000 } })
    expect(tooLarge.statusCode).toBe(400)
    expect(tooLarge.json().error.details).toEqual([expect.objectContaining({ field: 'price' })])
  })

  test('more decimals than the currency allows is a 400 validation_error on price (19.999 USD, 10.5 JPY, 1.2345 KWD)', async ({ ctx, admin }) => {
    const before = await productRowCount(ctx)
    for (const [price, currency, places] of [
      [19.999, 'USD', '2 decimal places'],
      [10.5, 'JPY', '0 decimal places'],
      [1.2345, 'KWD', '3 decimal places'],
    ] as const) {
      const response = await ctx.request({
        method: 'POST',
        url: PRODUCTS,
        token: admin,
        payload: { title: 'Too Precise', price, currency },
      })
      expect(response.statusCode).toBe(400)
      const error = response.json().error
      expect(error.code).toBe('validation_error')
      expect(error.details).toEqual([{ field: 'price', message: expect.stringContaining(places) }])
    }
    expect(await productRowCount(ctx)).toBe(before)
  })

  test('an unknown currency is a 400 validation_error on currency, whether or not a price is sent', async ({ ctx, admin }) => {
    for (const payload of [
      { title: 'Unknown Money', price: 10, currency: 'XYZ' },
      { title: 'Unknown Money', currency: 'ABC' },
      { title: 'Lowercase Money', price: 10, currency: 'usd' },
    ]) {
      const response = await ctx.request({ method: 'POST', url: PRODUCTS, token: admin, payload })
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json().error).toMatchObject({
        code: 'validation_error',
        details: [expect.objectContaining({ field: 'currency' })],
      })
    }
  })

  test('a negative price is refused', async ({ ctx, admin }) => {
    const response = await ctx.request({ method: 'POST', url: PRODUCTS, token: admin, payload: { title: 'Negative', price: -0.01 } })
    expect(response.statusCode).toBe(400)
    expect(response.json().error.details).toContainEqual(expect.objectContaining({ field: 'price' }))
  })
})

describe('PATCH /api/v1/products/:id', () => {
  test('changes only the fields sent and answers 200 with the whole product', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Patch Me', description: 'before', price: 10, sku: 'P-1', inventory_quantity: 3 })
    const response = await ctx.request({
      method: 'PATCH',
      url: `${PRODUCTS}/${product.id}`,
      token: admin,
      payload: { description: 'after', inventory_quantity: 7, weight: 1.5, weight_unit: 'lb' },
    })
    expect(response.statusCode).toBe(200)
    const body: Product = response.json()
    expect(body).toMatchObject({
      id: product.id,
      title: 'Patch Me',
      slug: 'patch-me',
      description: 'after',
      sku: 'P-1',
      price: 10,
      currency: 'USD',
      inventory_quantity: 7,
      weight: 1.5,
      weight_unit: 'lb',
      is_active: true,
      created_at: product.created_at,
    })
    expect(Date.parse(body.updated_at)).toBeGreaterThanOrEqual(Date.parse(product.updated_at))
    expect(await getProduct(ctx, product.id)).toEqual(body)
  })

  test('null clears a nullable field', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Clearable', description: 'words', sku: 'C-1', image_url: 'https://example.com/a.png' })
    const body = await patchProduct(ctx, admin, product.id, { description: null, sku: null, image_url: null })
    expect(body).toMatchObject({ description: null, sku: null, image_url: null })
  })

  test('category_ids replaces the categories; an empty list removes them all', async ({ ctx, admin }) => {
    const a = await createCategory(ctx, admin, 'Alpha Cat')
    const b = await createCategory(ctx, admin, 'Beta Cat')
    const product = await createProduct(ctx, admin, { title: 'Recategorised', category_ids: [a.id] })
    expect(product.categories).toEqual([{ id: a.id, name: 'Alpha Cat', slug: 'alpha-cat' }])
    const moved = await patchProduct(ctx, admin, product.id, { category_ids: [b.id, a.id] })
    expect(moved.categories).toEqual([
      { id: a.id, name: 'Alpha Cat', slug: 'alpha-cat' },
      { id: b.id, name: 'Beta Cat', slug: 'beta-cat' },
    ])
    const cleared = await patchProduct(ctx, admin, product.id, { category_ids: [] })
    expect(cleared.categories).toEqual([])
    const links = await ctx.handle.sql`select * from product_categories where product_id = ${product.id}`
    expect(links).toHaveLength(0)
  })

  test('category_ids with an unknown id answers 400 and keeps the old categories', async ({ ctx, admin }) => {
    const category = await createCategory(ctx, admin, 'Kept Cat')
    const product = await createProduct(ctx, admin, { title: 'Keeps Category', category_ids: [category.id] })
    const events = await eventCount(ctx)
    const response = await ctx.request({
      method: 'PATCH',
      url: `${PRODUCTS}/${product.id}`,
      token: admin,
      payload: { title: 'Should Not Stick', category_ids: [UNKNOWN_ID] },
    })
    expect(response.statusCode).toBe(400)
    expect(response.json().error.details).toEqual([expect.objectContaining({ field: 'category_ids' })])
    expect(await getProduct(ctx, product.id)).toMatchObject({ title: 'Keeps Category', categories: [{ id: category.id }] })
    expect(await eventCount(ctx)).toBe(events)
  })

  test('writes exactly one product.updated event with the new snapshot', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Event Patch', price: 1 })
    const response = await ctx.request({ method: 'PATCH', url: `${PRODUCTS}/${product.id}`, token: admin, payload: { price: 2.5 } })
    expect(response.statusCode).toBe(200)
    const events = await eventsOf(ctx, product.id)
    expect(events.map((event) => event.kind)).toEqual(['product.created', 'product.updated'])
    expect(events[1]!.data).toEqual(response.json())
    expect(events[1]!.data.price).toBe(2.5)
    expect(events[1]!.request_id).toBe(response.headers['x-request-id'])
  })

  test('an empty body, an unknown field and a bad value answer 400', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Validated Patch' })
    const empty = await ctx.request({ method: 'PATCH', url: `${PRODUCTS}/${product.id}`, token: admin, payload: {} })
    expect(empty.statusCode).toBe(400)
    expect(empty.json().error.code).toBe('validation_error')

    const unknown = await ctx.request({ method: 'PATCH', url: `${PRODUCTS}/${product.id}`, token: admin, payload: { id: UNKNOWN_ID } })
    expect(unknown.statusCode).toBe(400)
    expect(unknown.json().error.details).toEqual([{ field: 'id', message: "Field 'id' is not allowed" }])

    const badValue = await ctx.request({ method: 'PATCH', url: `${PRODUCTS}/${product.id}`, token: admin, payload: { title: null } })
    expect(badValue.statusCode).toBe(400)
    expect(badValue.json().error.details).toContainEqual(expect.objectContaining({ field: 'title' }))

    const tooPrecise = await ctx.request({ method: 'PATCH', url: `${PRODUCTS}/${product.id}`, token: admin, payload: { price: 19.999 } })
    expect(tooPrecise.statusCode).toBe(400)
    expect(tooPrecise.json().error.details).toEqual([expect.objectContaining({ field: 'price' })])
    expect((await getProduct(ctx, product.id)).title).toBe('Validated Patch')
  })

  test('answers 404 for an unknown id and 400 for a malformed id, writing no event', async ({ ctx, admin }) => {
    const events = await eventCount(ctx)
    const missing = await ctx.request({ method: 'PATCH', url: `${PRODUCTS}/${UNKNOWN_ID}`, token: admin, payload: { title: 'x' } })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().error).toMatchObject({ code: 'not_found', message: 'Product not found' })
    const malformed = await ctx.request({ method: 'PATCH', url: `${PRODUCTS}/not-a-uuid`, token: admin, payload: { title: 'x' } })
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().error).toMatchObject({ code: 'validation_error', details: [expect.objectContaining({ field: 'id' })] })
    expect(await eventCount(ctx)).toBe(events)
  })

  test('answers 401 without or with a garbage token and 403 for a customer, changing nothing', async ({ ctx, admin, customer }) => {
    const product = await createProduct(ctx, admin, { title: 'Guarded Patch' })
    const anonymous = await ctx.request({ method: 'PATCH', url: `${PRODUCTS}/${product.id}`, payload: { title: 'Hacked' } })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error.code).toBe('unauthorized')
    const garbage = await ctx.request({ method: 'PATCH', url: `${PRODUCTS}/${product.id}`, token: 'nope', payload: { title: 'Hacked' } })
    expect(garbage.statusCode).toBe(401)
    expect(garbage.json().error.code).toBe('unauthorized')
    const byCustomer = await ctx.request({ method: 'PATCH', url: `${PRODUCTS}/${product.id}`, token: customer, payload: { title: 'Hacked' } })
    expect(byCustomer.statusCode).toBe(403)
    expect(byCustomer.json().error.code).toBe('forbidden')
    expect((await getProduct(ctx, product.id)).title).toBe('Guarded Patch')
  })
})

describe('currency change', () => {
  async function addVariant(ctx: TestContext, admin: string, productId: string, payload: Record<string, unknown>) {
    const response = await ctx.request({ method: 'POST', url: `${PRODUCTS}/${productId}/variants`, token: admin, payload })
    expect(response.statusCode, response.body).toBe(201)
    return response.json()
  }

  test('keeps the amounts shown (19.99 USD -> 19.99 EUR), product and variant prices alike', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Traveller', price: 19.99, currency: 'USD' })
    await addVariant(ctx, admin, product.id, { title: 'Large', price: 24.5 })
    await addVariant(ctx, admin, product.id, { title: 'Default price' })
    const body = await patchProduct(ctx, admin, product.id, { currency: 'EUR' })
    expect(body).toMatchObject({ price: 19.99, currency: 'EUR' })
    expect(body.variants.map((variant) => [variant.title, variant.price])).toEqual([
      ['Large', 24.5],
      ['Default price', null],
    ])
    const [row] = await ctx.handle.sql`select price_minor::int, currency from products where id = ${product.id}`
    expect(row).toEqual({ price_minor: 1999, currency: 'EUR' })

    const kwd = await patchProduct(ctx, admin, product.id, { currency: 'KWD' })
    expect(kwd).toMatchObject({ price: 19.99, currency: 'KWD' })
    expect(kwd.variants[0]!.price).toBe(24.5)
    const [kwdRow] = await ctx.handle.sql`select price_minor from products where id = ${product.id}`
    expect(Number(kwdRow!.price_minor)).toBe(19990)
  })

  test('refuses a currency that cannot hold the current price (19.99 -> JPY) with 400 on currency; nothing changes', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Stay Dollar', price: 19.99 })
    const events = await eventCount(ctx)
    const response = await ctx.request({ method: 'PATCH', url: `${PRODUCTS}/${product.id}`, token: admin, payload: { currency: 'JPY' } })
    expect(response.statusCode).toBe(400)
    expect(response.json().error).toMatchObject({
      code: 'validation_error',
      details: [expect.objectContaining({ field: 'currency' })],
    })
    expect(await getProduct(ctx, product.id)).toMatchObject({ price: 19.99, currency: 'USD' })
    expect(await eventCount(ctx)).toBe(events)
  })

  test('refuses a currency that cannot hold a variant price, even with a new product price; nothing changes', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Variant Holder', price: 20 })
    const whole = await addVariant(ctx, admin, product.id, { title: 'Whole', price: 10 })
    const variant = await addVariant(ctx, admin, product.id, { title: 'Half', price: 10.5 })
    const response = await ctx.request({
      method: 'PATCH',
      url: `${PRODUCTS}/${product.id}`,
      token: admin,
      payload: { currency: 'JPY', price: 3000 },
    })
    expect(response.statusCode).toBe(400)
    expect(response.json().error.details).toEqual([expect.objectContaining({ field: 'currency' })])
    const unchanged = await getProduct(ctx, product.id)
    expect(unchanged).toMatchObject({ price: 20, currency: 'USD' })
    expect(unchanged.variants).toEqual([
      expect.objectContaining({ id: whole.id, price: 10 }),
      expect.objectContaining({ id: variant.id, price: 10.5 }),
    ])
    // The whole transaction rolled back, including a variant converted before the refusal.
    const rows = await ctx.handle.sql`select id, price_minor::int from product_variants where product_id = ${product.id} order by id`
    expect(rows).toEqual([
      { id: whole.id, price_minor: 1000 },
      { id: variant.id, price_minor: 1050 },
    ])

    const fix = await ctx.request({
      method: 'PATCH',
      url: `${PRODUCTS}/${product.id}/variants/${variant.id}`,
      token: admin,
      payload: { price: 11 },
    })
    expect(fix.statusCode).toBe(200)
    const moved = await patchProduct(ctx, admin, product.id, { currency: 'JPY', price: 3000 })
    expect(moved).toMatchObject({ price: 3000, currency: 'JPY' })
    expect(moved.variants.map((item) => [item.id, item.price])).toEqual([
      [whole.id, 10],
      [variant.id, 11],
    ])
  })

  test('an unknown currency in PATCH is a 400 on currency', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'No Such Money', price: 5 })
    const response = await ctx.request({ method: 'PATCH', url: `${PRODUCTS}/${product.id}`, token: admin, payload: { currency: 'XYZ' } })
    expect(response.statusCode).toBe(400)
    expect(response.json().error.details).toEqual([expect.objectContaining({ field: 'currency' })])
    expect((await getProduct(ctx, product.id)).currency).toBe('USD')
  })
})

describe('GET /api/v1/products/:id', () => {
  test('answers the product with variants, images and categories, without a token', async ({ ctx, admin }) => {
    const category = await createCategory(ctx, admin, 'Detail Cat')
    const product = await createProduct(ctx, admin, { title: 'Detailed', price: 9.5, category_ids: [category.id] })
    const variant = await ctx.request({
      method: 'POST',
      url: `${PRODUCTS}/${product.id}/variants`,
      token: admin,
      payload: { title: 'Blue', options: { colour: 'blue' } },
    })
    const image = await ctx.request({
      method: 'POST',
      url: `${PRODUCTS}/${product.id}/images`,
      token: admin,
      payload: { url: 'https://cdn.example.com/detailed.png', alt: 'front' },
    })
    const response = await ctx.request({ method: 'GET', url: `${PRODUCTS}/${product.id}` })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({
      id: product.id,
      title: 'Detailed',
      price: 9.5,
      categories: [{ id: category.id, name: 'Detail Cat', slug: 'detail-cat' }],
      variants: [{ id: variant.json().id, title: 'Blue', price: null, options: { colour: 'blue' } }],
      images: [{ id: image.json().id, url: 'https://cdn.example.com/detailed.png', alt: 'front', position: 0 }],
    })
  })

  test('answers 404 not_found for an unknown id', async ({ ctx }) => {
    const response = await ctx.request({ method: 'GET', url: `${PRODUCTS}/${UNKNOWN_ID}` })
    expect(response.statusCode).toBe(404)
    expect(response.json().error).toMatchObject({ code: 'not_found', message: 'Product not found' })
  })

  test('answers 400 for ids that are not plain UUIDs, never 500', async ({ ctx }) => {
    for (const id of ['not-a-uuid', '123', `urn:uuid:${UNKNOWN_ID}`, `${UNKNOWN_ID}x`]) {
      const response = await ctx.request({ method: 'GET', url: `${PRODUCTS}/${encodeURIComponent(id)}` })
      expect(response.statusCode, id).toBe(400)
      const error = response.json().error
      expect(error.code).toBe('validation_error')
      expect(error.message).toMatch(/^Field 'id' /)
      expect(error.details.length).toBeGreaterThan(0)
      for (const detail of error.details) expect(detail.field).toBe('id')
    }
  })
})

describe('DELETE /api/v1/products/:id (soft delete)', () => {
  test('answers 204 with no body, sets is_active to false and keeps the record', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Retired Lamp', price: 40 })
    const response = await ctx.request({ method: 'DELETE', url: `${PRODUCTS}/${product.id}`, token: admin })
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    const rows = await ctx.handle.sql`select title, is_active from products where id = ${product.id}`
    expect(rows).toEqual([{ title: 'Retired Lamp', is_active: false }])
  })

  test('GET /:id still answers the product with is_active false; the public list leaves it out', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Ghost Lantern' })
    await deleteProduct(ctx, admin, product.id)
    expect(await getProduct(ctx, product.id)).toMatchObject({ id: product.id, title: 'Ghost Lantern', is_active: false })
    const publicList = await listProducts(ctx, '?search=ghost lantern')
    expect(publicList.products).toEqual([])
    expect(publicList.meta.total).toBe(0)
  })

  test('an admin sees it with ?include_inactive=true; a customer gets 403 and an anonymous caller 401', async ({ ctx, admin, customer }) => {
    const product = await createProduct(ctx, admin, { title: 'Hidden Gem' })
    await deleteProduct(ctx, admin, product.id)
    const adminList = await listProducts(ctx, '?include_inactive=true&search=hidden gem', admin)
    expect(adminList.products).toEqual([expect.objectContaining({ id: product.id, is_active: false })])
    expect(adminList.meta.total).toBe(1)

    const asCustomer = await ctx.request({ method: 'GET', url: `${PRODUCTS}?include_inactive=true`, token: customer })
    expect(asCustomer.statusCode).toBe(403)
    expect(asCustomer.json().error.code).toBe('forbidden')
    const anonymous = await ctx.request({ method: 'GET', url: `${PRODUCTS}?include_inactive=true` })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error.code).toBe('unauthorized')

    const notAsked = await listProducts(ctx, '?include_inactive=false&search=hidden gem', customer)
    expect(notAsked.products).toEqual([])
  })

  test('writes one product.updated event whose snapshot has is_active false; deleting again writes none', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Deleted Twice' })
    await deleteProduct(ctx, admin, product.id)
    const events = await eventsOf(ctx, product.id)
    expect(events.map((event) => event.kind)).toEqual(['product.created', 'product.updated'])
    expect(events[1]!.data).toMatchObject({ id: product.id, title: 'Deleted Twice', is_active: false })
    expect(events[1]!.data).toEqual(await getProduct(ctx, product.id))

    await deleteProduct(ctx, admin, product.id)
    expect(await eventsOf(ctx, product.id)).toHaveLength(2)
  })

  test('PATCH is_active true brings it back to the public list', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Phoenix Mug' })
    await deleteProduct(ctx, admin, product.id)
    expect((await listProducts(ctx, '?search=phoenix')).products).toEqual([])
    await patchProduct(ctx, admin, product.id, { is_active: true })
    expect((await listProducts(ctx, '?search=phoenix')).products).toEqual([expect.objectContaining({ id: product.id, is_active: true })])
  })

  test('answers 404 for an unknown id, 400 for a malformed one', async ({ ctx, admin }) => {
    const missing = await ctx.request({ method: 'DELETE', url: `${PRODUCTS}/${UNKNOWN_ID}`, token: admin })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().error).toMatchObject({ code: 'not_found', message: 'Product not found' })
    const malformed = await ctx.request({ method: 'DELETE', url: `${PRODUCTS}/xyz`, token: admin })
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().error.code).toBe('validation_error')
  })

  test('answers 401 without or with a garbage token, 403 for a customer; the product stays active', async ({ ctx, admin, customer }) => {
    const product = await createProduct(ctx, admin, { title: 'Protected Vase' })
    const anonymous = await ctx.request({ method: 'DELETE', url: `${PRODUCTS}/${product.id}` })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error.code).toBe('unauthorized')
    const garbage = await ctx.request({ method: 'DELETE', url: `${PRODUCTS}/${product.id}`, token: 'a.b.c' })
    expect(garbage.statusCode).toBe(401)
    const byCustomer = await ctx.request({ method: 'DELETE', url: `${PRODUCTS}/${product.id}`, token: customer })
    expect(byCustomer.statusCode).toBe(403)
    expect(byCustomer.json().error.code).toBe('forbidden')
    expect((await getProduct(ctx, product.id)).is_active).toBe(true)
  })
})

describe('GET /api/v1/products', () => {
  test('answers active products without a token as { products, meta }, list items without variants and images', async ({ ctx, admin }) => {
    const category = await createCategory(ctx, admin, 'Listing Cat')
    const product = await createProduct(ctx, admin, {
      title: 'Listed Xylophone',
      description: 'Musical',
      sku: 'XYL-1',
      price: 89.9,
      currency: 'GBP',
      inventory_quantity: 2,
      weight: 3,
      weight_unit: 'kg',
      image_url: 'https://cdn.example.com/xylophone.jpg',
      category_ids: [category.id],
    })
    await ctx.request({
      method: 'POST',
      url: `${PRODUCTS}/${product.id}/variants`,
      token: admin,
      payload: { title: 'Wooden' },
    })
    const response = await ctx.request({ method: 'GET', url: `${PRODUCTS}?search=xylophone` })
    expect(response.statusCode).toBe(200)
    const { variants: _variants, images: _images, ...listItem } = product
    expect(response.json()).toEqual({
      products: [{ ...listItem, updated_at: expect.stringMatching(/Z$/) }],
      meta: { page: 1, per_page: 20, total: 1, total_pages: 1 },
    })
    expect(response.json().products[0].categories).toEqual([{ id: category.id, name: 'Listing Cat', slug: 'listing-cat' }])
  })

  test('an empty search parameter lists everything', async ({ ctx }) => {
    const all = await listProducts(ctx)
    const empty = await listProducts(ctx, '?search=')
    expect(empty.meta.total).toBe(all.meta.total)
  })
})

describe('GET /api/v1/products search', () => {
  /** The three products every test here searches among, made before the first of them. */
  const searchTest = test.extend<{ found: Record<'trail' | 'road' | 'jacket', Product> }>({
    found: [
      async ({ ctx, admin }, use) =>
        use({
          trail: await createProduct(ctx, admin, { title: 'Zephyr Trail Runner', description: 'Breathable mesh shoe for rocky paths' }),
          road: await createProduct(ctx, admin, { title: 'Zephyr Road Racer', description: 'Carbon plate, built for asphalt' }),
          jacket: await createProduct(ctx, admin, { title: 'Quokka Rain Jacket', description: 'Waterproof shell; packs into its own pocket' }),
        }),
      { scope: 'file', auto: true },
    ],
  })

  const ids = async (ctx: TestContext, search: string) =>
    (await listProducts(ctx, `?search=${encodeURIComponent(search)}`)).products.map((product) => product.id).sort()

  searchTest('matches word prefixes in the title, case-insensitively', async ({ ctx, found: { trail, road, jacket } }) => {
    expect(await ids(ctx, 'zeph')).toEqual([trail.id, road.id].sort())
    expect(await ids(ctx, 'ZEPHYR')).toEqual([trail.id, road.id].sort())
    expect(await ids(ctx, 'quok')).toEqual([jacket.id])
  })

  searchTest('matches words of the description too', async ({ ctx, found: { road, jacket } }) => {
    expect(await ids(ctx, 'asphalt')).toEqual([road.id])
    expect(await ids(ctx, 'Waterproof POCK')).toEqual([jacket.id])
  })

  searchTest('several words must all match (AND), in title or description', async ({ ctx, found: { trail } }) => {
    expect(await ids(ctx, 'zephyr trail')).toEqual([trail.id])
    expect(await ids(ctx, 'zephyr mesh')).toEqual([trail.id])
    expect(await ids(ctx, 'zephyr jacket')).toEqual([])
  })

  searchTest('matches prefixes only, not the middle of a word', async ({ ctx }) => {
    expect(await ids(ctx, 'ephyr')).toEqual([])
  })

  searchTest('the total in meta counts the matches', async ({ ctx }) => {
    const result = await listProducts(ctx, '?search=zephyr')
    expect(result.meta).toEqual({ page: 1, per_page: 20, total: 2, total_pages: 1 })
  })

  searchTest('punctuation-only search answers 200 with an empty list', async ({ ctx }) => {
    const result = await listProducts(ctx, `?search=${encodeURIComponent('!!! ... ---')}`)
    expect(result).toEqual({ products: [], meta: { page: 1, per_page: 20, total: 0, total_pages: 0 } })
  })

  searchTest('SQL-ish text answers 200 with an empty list and harms nothing', async ({ ctx, found: { trail, road } }) => {
    const before = await productRowCount(ctx)
    for (const search of ["'; drop table products; --", "' or 1=1 --", "') or true; --"]) {
      const response = await ctx.request({ method: 'GET', url: `${PRODUCTS}?search=${encodeURIComponent(search)}` })
      expect(response.statusCode, search).toBe(200)
      expect(response.json(), search).toEqual({ products: [], meta: { page: 1, per_page: 20, total: 0, total_pages: 0 } })
    }
    // tsquery operators are not passed through: only the words are matched, as prefixes.
    for (const search of ['zephyr | quokka', 'zephyr & !trail', 'zeph:* <-> road', '%_\\']) {
      const response = await ctx.request({ method: 'GET', url: `${PRODUCTS}?search=${encodeURIComponent(search)}` })
      expect(response.statusCode, search).toBe(200)
    }
    expect(await ids(ctx, 'zephyr | quokka')).toEqual([])
    expect(await ids(ctx, 'zephyr & !trail')).toEqual([trail.id])
    expect(await ids(ctx, 'zeph:* <-> road')).toEqual([road.id])
    expect(await productRowCount(ctx)).toBe(before)
  })

  searchTest('finds words as the database parsed them: split at a number ("2e4kq8m1"), kept whole ("3.5"), in every listing', async ({ ctx, admin }) => {
    const coded = await createProduct(ctx, admin, { title: 'Zephyr part 2e4kq8m1' })
    const bolt = await createProduct(ctx, admin, { title: 'Zephyr bolt 3.5mm', description: "O'Brien's pick" })
    // The plain statements, and the listing's (a sort, facets).
    for (const listing of ['', '&sort=newest', '&sort=relevance', '&facets=true']) {
      const found = async (search: string) => (await listProducts(ctx, `?search=${encodeURIComponent(search)}${listing}`)).products.map((product) => product.id)
      expect(await found('2e4kq'), listing).toEqual([coded.id])
      expect(await found('2E4KQ8M1'), listing).toEqual([coded.id])
      expect(await found('3.5'), listing).toEqual([bolt.id])
      expect(await found("o'brien"), listing).toEqual([bolt.id])
    }
  })

  searchTest('soft-deleted products do not match', async ({ ctx, admin }) => {
    const gone = await createProduct(ctx, admin, { title: 'Zephyr Retired Model' })
    expect(await ids(ctx, 'zephyr retired')).toEqual([gone.id])
    await deleteProduct(ctx, admin, gone.id)
    expect(await ids(ctx, 'zephyr retired')).toEqual([])
  })

  searchTest('a search longer than 200 characters answers 400', async ({ ctx }) => {
    const response = await ctx.request({ method: 'GET', url: `${PRODUCTS}?search=${'a'.repeat(201)}` })
    expect(response.statusCode).toBe(400)
    expect(response.json().error.details).toContainEqual(expect.objectContaining({ field: 'search' }))
  })
})

describe('GET /api/v1/products category filter', () => {
  test('?category=<slug> lists only that category\'s active products, with their categories', async ({ ctx, admin }) => {
    const trailGear = await createCategory(ctx, admin, 'Trail Gear')
    const other = await createCategory(ctx, admin, 'Other Gear')
    const boots = await createProduct(ctx, admin, { title: 'Ridge Boots', category_ids: [trailGear.id, other.id] })
    const poles = await createProduct(ctx, admin, { title: 'Ridge Poles', category_ids: [trailGear.id] })
    await createProduct(ctx, admin, { title: 'Ridge Hat', category_ids: [other.id] })
    const hidden = await createProduct(ctx, admin, { title: 'Ridge Old Boots', category_ids: [trailGear.id] })
    await deleteProduct(ctx, admin, hidden.id)

    const result = await listProducts(ctx, '?category=trail-gear')
    expect(result.products.map((product) => product.id)).toEqual([poles.id, boots.id])
    expect(result.meta).toEqual({ page: 1, per_page: 20, total: 2, total_pages: 1 })
    expect(result.products[1]!.categories).toEqual([
      { id: other.id, name: 'Other Gear', slug: 'other-gear' },
      { id: trailGear.id, name: 'Trail Gear', slug: 'trail-gear' },
    ])

    const withSearch = await listProducts(ctx, '?category=trail-gear&search=poles')
    expect(withSearch.products.map((product) => product.id)).toEqual([poles.id])
    const withInactive = await listProducts(ctx, '?category=trail-gear&include_inactive=true', admin)
    expect(withInactive.meta.total).toBe(3)
  })

  test('an unknown category slug answers an empty list', async ({ ctx }) => {
    const result = await listProducts(ctx, '?category=no-such-category')
    expect(result).toEqual({ products: [], meta: { page: 1, per_page: 20, total: 0, total_pages: 0 } })
  })
})

describe('list totals stay exact across writes (the count cache is invalidated)', () => {
  test('creating, deactivating, re-activating, re-categorising and renaming keep every total exact', async ({ ctx, admin }) => {
    const category = await createCategory(ctx, admin, 'Totals Cat', 'totals-cat')
    const all = () => totalOf(ctx)
    const inCategory = () => totalOf(ctx, '?category=totals-cat')
    const searched = () => totalOf(ctx, '?search=wombat')
    const withInactive = () => totalOf(ctx, '?include_inactive=true', admin)
    // Ask twice so each total is cached before the writes.
    const start = { all: await all(), inCategory: await inCategory(), searched: await searched(), withInactive: await withInactive() }
    expect({ all: await all(), inCategory: await inCategory(), searched: await searched(), withInactive: await withInactive() }).toEqual(start)
    expect(start.inCategory).toBe(0)
    expect(start.searched).toBe(0)

    const lamp = await createProduct(ctx, admin, { title: 'Wombat Lamp' })
    expect(await all()).toBe(start.all + 1)
    expect(await withInactive()).toBe(start.withInactive + 1)
    expect(await searched()).toBe(1)
    expect(await inCategory()).toBe(0)

    await patchProduct(ctx, admin, lamp.id, { category_ids: [category.id] })
    expect(await inCategory()).toBe(1)
    expect(await all()).toBe(start.all + 1)

    const desk = await createProduct(ctx, admin, { title: 'Wombat Desk', category_ids: [category.id] })
    expect(await inCategory()).toBe(2)
    expect(await searched()).toBe(2)
    expect(await all()).toBe(start.all + 2)

    await deleteProduct(ctx, admin, lamp.id)
    expect(await all()).toBe(start.all + 1)
    expect(await inCategory()).toBe(1)
    expect(await searched()).toBe(1)
    expect(await withInactive()).toBe(start.withInactive + 2)

    await patchProduct(ctx, admin, desk.id, { title: 'Plain Desk' })
    expect(await searched()).toBe(0)
    await patchProduct(ctx, admin, desk.id, { description: 'a wombat-proof desk' })
    expect(await searched()).toBe(1)

    await patchProduct(ctx, admin, desk.id, { category_ids: [] })
    expect(await inCategory()).toBe(0)

    await patchProduct(ctx, admin, lamp.id, { is_active: true })
    expect(await all()).toBe(start.all + 2)
    expect(await inCategory()).toBe(1)
    expect(await searched()).toBe(2)

    const renamed = await ctx.request({
      method: 'PATCH',
      url: `/api/v1/categories/${category.id}`,
      token: admin,
      payload: { slug: 'totals-renamed' },
    })
    expect(renamed.statusCode).toBe(200)
    expect(await inCategory()).toBe(0)
    expect(await totalOf(ctx, '?category=totals-renamed')).toBe(1)

    const removed = await ctx.request({ method: 'DELETE', url: `/api/v1/categories/${category.id}`, token: admin })
    expect(removed.statusCode).toBe(204)
    expect(await totalOf(ctx, '?category=totals-renamed')).toBe(0)
    expect(await all()).toBe(start.all + 2)
  })
})

describe('GET /api/v1/products pagination and order', () => {
  let pages: TestContext
  let pagesAdmin: string
  const titles: string[] = []

  beforeAll(async () => {
    pages = await createTestContext()
    pagesAdmin = (await pages.signIn('admin')).token
    for (let i = 1; i <= 45; i++) {
      const title = `Item ${String(i).padStart(2, '0')}`
      const response = await pages.request({ method: 'POST', url: PRODUCTS, token: pagesAdmin, payload: { title } })
      expect(response.statusCode).toBe(201)
      titles.push(title)
    }
  })
  afterAll(() => pages.close())

  async function page(query: string): Promise<ProductPage> {
    const response = await pages.request({ method: 'GET', url: `${PRODUCTS}${query}` })
    expect(response.statusCode, response.body).toBe(200)
    return response.json()
  }

  test('defaults to page 1 of 20, newest first', async () => {
    const first = await page('')
    expect(first.meta).toEqual({ page: 1, per_page: 20, total: 45, total_pages: 3 })
    expect(first.products.map((product) => product.title)).toEqual(titles.slice(25).reverse())
  })

  test('45 products at per_page 20 make 3 pages; the last has 5; together they hold each product once', async () => {
    const results = [await page('?page=1&per_page=20'), await page('?page=2&per_page=20'), await page('?page=3&per_page=20')]
    expect(results.map((result) => result.products.length)).toEqual([20, 20, 5])
    for (const [index, result] of results.entries()) {
      expect(result.meta).toEqual({ page: index + 1, per_page: 20, total: 45, total_pages: 3 })
    }
    const seen = results.flatMap((result) => result.products.map((product) => product.title))
    expect(seen).toEqual([...titles].reverse())
    expect(results[2]!.products.map((product) => product.title)).toEqual(['Item 05', 'Item 04', 'Item 03', 'Item 02', 'Item 01'])
  })

  test('a page beyond the end is empty and still tells the right total', async () => {
    const beyond = await page('?page=4&per_page=20')
    expect(beyond).toEqual({ products: [], meta: { page: 4, per_page: 20, total: 45, total_pages: 3 } })
    const far = await page('?page=1000')
    expect(far.meta).toEqual({ page: 1000, per_page: 20, total: 45, total_pages: 3 })
  })

  test('per_page 100 is allowed and other sizes divide correctly', async () => {
    const all = await page('?per_page=100')
    expect(all.products).toHaveLength(45)
    expect(all.meta).toEqual({ page: 1, per_page: 100, total: 45, total_pages: 1 })
    const sevens = await page('?page=7&per_page=7')
    expect(sevens.products.map((product) => product.title)).toEqual(['Item 03', 'Item 02', 'Item 01'])
    expect(sevens.meta).toEqual({ page: 7, per_page: 7, total: 45, total_pages: 7 })
  })

  test('per_page 101, per_page 0, page 0, negative, non-numeric and absurdly large values answer 400 validation_error', async () => {
    for (const [query, field] of [
      ['?per_page=101', 'per_page'],
      ['?per_page=0', 'per_page'],
      ['?page=0', 'page'],
      ['?page=-1', 'page'],
      ['?page=abc', 'page'],
      ['?page=1.5', 'page'],
      ['?page=100000000000000000000', 'page'],
    ] as const) {
      const response = await pages.request({ method: 'GET', url: `${PRODUCTS}${query}` })
      expect(response.statusCode, query).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'validation_error', details: [expect.objectContaining({ field })] })
    }
  })

  test('a newly created product comes first and the total grows by one', async () => {
    const response = await pages.request({ method: 'POST', url: PRODUCTS, token: pagesAdmin, payload: { title: 'Item 46' } })
    expect(response.statusCode).toBe(201)
    const first = await page('')
    expect(first.products[0]!.title).toBe('Item 46')
    expect(first.meta.total).toBe(46)
    expect((await page('?page=3')).products).toHaveLength(6)
  })
})

describe('GET /api/v1/products search at both query plans', () => {
  // Up to 2,000 matches a page is read through the GIN index, above it by walking ids; both must
  // answer the same pages as a plain SQL reading of the same data.
  let big: TestContext

  beforeAll(async () => {
    big = await createTestContext()
    await big.handle.sql`
      insert into products (id, title, slug, description, price_minor, currency, is_active)
      select gen_random_uuid(), 'Plentiful ' || n, 'plentiful-' || n,
             case when n % 1000 = 0 then 'a scarce thing' else 'common stock' end, 100, 'USD', n % 7 <> 0
      from generate_series(1, 2600) as n`
  })
  afterAll(() => big.close())

  async function expectedPage(word: string, page: number, perPage: number) {
    const rows = await big.handle.sql`
      select id from products where is_active and search_vector @@ to_tsquery('simple', ${`${word}:*`})
      order by id desc limit ${perPage} offset ${(page - 1) * perPage}`
    const [counted] = await big.handle.sql`
      select count(*)::int as n from products where is_active and search_vector @@ to_tsquery('simple', ${`${word}:*`})`
    return { ids: rows.map((row) => row.id), total: counted!.n as number }
  }

  test.each([
    ['many matches (id walk)', 'plentiful', 3],
    ['few matches (GIN index)', 'scarce', 1],
  ])('%s: every page holds the same products, in the same order, as SQL says', async (_plan, word, pagesToCheck) => {
    for (let page = 1; page <= pagesToCheck; page++) {
      const response = await big.request({ method: 'GET', url: `${PRODUCTS}?search=${word}&per_page=50&page=${page}` })
      expect(response.statusCode).toBe(200)
      const body = response.json()
      const expected = await expectedPage(word, page, 50)
      expect(body.products.map((product: { id: string }) => product.id)).toEqual(expected.ids)
      expect(body.meta.total).toBe(expected.total)
    }
    const { total } = await expectedPage(word, 1, 1)
    expect(total).toBe(word === 'scarce' ? 2 : 2229)
  })
})
