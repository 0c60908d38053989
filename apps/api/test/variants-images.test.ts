/** A product's variants and images: list, add, update, delete, and the product.updated events. */
import { describe, expect } from 'vitest'
import type { Static } from 'typebox'
import type { Image, ImageList as ImageListSchema, Product, Variant, VariantList as VariantListSchema } from '@commerce/domain'
import { test, type TestContext } from './helpers.js'

const PRODUCTS = '/api/v1/products'
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000beef'

function createProduct(ctx: TestContext, admin: string, payload: Record<string, unknown>): Promise<Product> {
  return ctx.expectStatus(201, { method: 'POST', url: PRODUCTS, payload, token: admin })
}

function getProduct(ctx: TestContext, id: string): Promise<Product> {
  return ctx.expectStatus(200, { method: 'GET', url: `${PRODUCTS}/${id}` })
}

function addVariant(ctx: TestContext, admin: string, productId: string, payload: Record<string, unknown>): Promise<Variant> {
  return ctx.expectStatus(201, { method: 'POST', url: `${PRODUCTS}/${productId}/variants`, payload, token: admin })
}

function addImage(ctx: TestContext, admin: string, productId: string, payload: Record<string, unknown>): Promise<Image> {
  return ctx.expectStatus(201, { method: 'POST', url: `${PRODUCTS}/${productId}/images`, payload, token: admin })
}

function listVariants(ctx: TestContext, productId: string, query = ''): Promise<VariantList> {
  return ctx.expectStatus(200, { method: 'GET', url: `${PRODUCTS}/${productId}/variants${query}` })
}

function listImages(ctx: TestContext, productId: string, query = ''): Promise<ImageList> {
  return ctx.expectStatus(200, { method: 'GET', url: `${PRODUCTS}/${productId}/images${query}` })
}

const eventsOf = (ctx: TestContext, productId: string) => ctx.productEvents(productId)
const eventCount = (ctx: TestContext) => ctx.countRows('events')

type VariantList = Static<typeof VariantListSchema>
type ImageList = Static<typeof ImageListSchema>
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

describe('POST /api/v1/products/:id/variants', () => {
  test('adds a variant and answers 201 with every field', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Hoodie', price: 45, weight_unit: 'g' })
    const response = await ctx.request({
      method: 'POST',
      url: `${PRODUCTS}/${product.id}/variants`,
      token: admin,
      payload: {
        title: 'Large / Black',
        sku: 'HOOD-L-BLK',
        price: 49.99,
        inventory_quantity: 12,
        options: { size: 'L', colour: 'black' },
        weight: 450.5,
        weight_unit: 'g',
      },
    })
    expect(response.statusCode).toBe(201)
    expect(response.json()).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      product_id: product.id,
      title: 'Large / Black',
      sku: 'HOOD-L-BLK',
      price: 49.99,
      compare_at_price: null,
      on_sale: false,
      barcode: null,
      inventory_quantity: 12,
      options: { size: 'L', colour: 'black' },
      attributes: {},
      weight: 450.5,
      weight_unit: 'g',
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    })
    const [row] = await ctx.handle.sql`select price_minor::int, inventory_quantity from product_variants where id = ${response.json().id}`
    expect(row).toEqual({ price_minor: 4999, inventory_quantity: 12 })
  })

  test('defaults: price null (the product price applies), no stock, no options, the product\'s weight unit', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Beanie', price: 15.5, weight_unit: 'oz' })
    const variant = await addVariant(ctx, admin, product.id, { title: 'One size' })
    expect(variant).toMatchObject({ title: 'One size', sku: null, price: null, inventory_quantity: 0, options: {}, weight: null, weight_unit: 'oz' })
    const [row] = await ctx.handle.sql`select price_minor from product_variants where id = ${variant.id}`
    expect(row!.price_minor).toBeNull()
    const detail = await getProduct(ctx, product.id)
    expect(detail.price).toBe(15.5)
    expect(detail.variants).toEqual([variant])
  })

  test('an explicit null price is stored as null: the variant uses the product price', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Scarf', price: 20 })
    const variant = await addVariant(ctx, admin, product.id, { title: 'Red', price: null })
    expect(variant.price).toBeNull()
  })

  test('variant prices follow the product currency: JPY 1500 and KWD 1.234 are exact', async ({ ctx, admin }) => {
    const yen = await createProduct(ctx, admin, { title: 'Yen Tea', price: 1000, currency: 'JPY' })
    expect((await addVariant(ctx, admin, yen.id, { title: 'Big tin', price: 1500 })).price).toBe(1500)
    const dinar = await createProduct(ctx, admin, { title: 'Dinar Dates', price: 1, currency: 'KWD' })
    const variant = await addVariant(ctx, admin, dinar.id, { title: 'Box', price: 1.234 })
    expect(variant.price).toBe(1.234)
    const [row] = await ctx.handle.sql`select price_minor::int from product_variants where id = ${variant.id}`
    expect(row!.price_minor).toBe(1234)
  })

  test('more decimals than the product currency allows answers 400 on price (10.5 JPY, 19.999 USD); nothing is written', async ({ ctx, admin }) => {
    const yen = await createProduct(ctx, admin, { title: 'Yen Cup', price: 500, currency: 'JPY' })
    const dollar = await createProduct(ctx, admin, { title: 'Dollar Cup', price: 5 })
    const events = await eventCount(ctx)
    for (const [product, price] of [
      [yen, 10.5],
      [dollar, 19.999],
    ] as const) {
      const response = await ctx.request({
        method: 'POST',
        url: `${PRODUCTS}/${product.id}/variants`,
        token: admin,
        payload: { title: 'Too precise', price },
      })
      expect(response.statusCode).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'validation_error', details: [expect.objectContaining({ field: 'price' })] })
      expect((await listVariants(ctx, product.id)).variants).toEqual([])
    }
    expect(await eventCount(ctx)).toBe(events)
  })

  test('writes exactly one product.updated event whose snapshot holds the new variant', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Evented Tee' })
    const response = await ctx.request({
      method: 'POST',
      url: `${PRODUCTS}/${product.id}/variants`,
      token: admin,
      payload: { title: 'Small', options: { size: 'S' } },
    })
    expect(response.statusCode).toBe(201)
    const events = await eventsOf(ctx, product.id)
    expect(events.map((event) => event.kind)).toEqual(['product.created', 'product.updated'])
    expect(events[1]!.data.variants).toEqual([response.json()])
    expect(events[1]!.data).toEqual(await getProduct(ctx, product.id))
    expect(events[1]!.request_id).toBe(response.headers['x-request-id'])
    expect(Date.parse(events[1]!.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(product.updated_at))
  })

  test('answers 400 "Field \'title\' is required", refuses unknown fields and bad values', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Strict Variant Host' })
    const missing = await ctx.request({ method: 'POST', url: `${PRODUCTS}/${product.id}/variants`, token: admin, payload: { sku: 'X' } })
    expect(missing.statusCode).toBe(400)
    expect(missing.json().error).toMatchObject({
      code: 'validation_error',
      message: "Field 'title' is required",
      details: [{ field: 'title', message: "Field 'title' is required" }],
    })

    const unknown = await ctx.request({
      method: 'POST',
      url: `${PRODUCTS}/${product.id}/variants`,
      token: admin,
      payload: { title: 'V', product_id: product.id },
    })
    expect(unknown.statusCode).toBe(400)
    expect(unknown.json().error.details).toEqual([{ field: 'product_id', message: "Field 'product_id' is not allowed" }])

    for (const [payload, field] of [
      [{ title: 'V', options: { size: 42 } }, 'options.size'],
      [{ title: 'V', inventory_quantity: -1 }, 'inventory_quantity'],
      [{ title: 'V', weight_unit: 'stone' }, 'weight_unit'],
      [{ title: 'V', price: -5 }, 'price'],
      [{ title: 'V', price: '5' }, 'price'],
    ] as const) {
      const response = await ctx.request({ method: 'POST', url: `${PRODUCTS}/${product.id}/variants`, token: admin, payload })
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json().error.details).toContainEqual(expect.objectContaining({ field }))
    }
    expect((await listVariants(ctx, product.id)).variants).toEqual([])
  })

  test('answers 404 for an unknown product and 400 for a malformed product id, writing nothing', async ({ ctx, admin }) => {
    const events = await eventCount(ctx)
    const missing = await ctx.request({ method: 'POST', url: `${PRODUCTS}/${UNKNOWN_ID}/variants`, token: admin, payload: { title: 'V' } })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().error).toMatchObject({ code: 'not_found', message: 'Product not found' })
    const malformed = await ctx.request({ method: 'POST', url: `${PRODUCTS}/nope/variants`, token: admin, payload: { title: 'V' } })
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().error.details).toContainEqual(expect.objectContaining({ field: 'id' }))
    expect(await eventCount(ctx)).toBe(events)
  })

  test('answers 401 without or with a garbage token, 403 for a customer; no variant is added', async ({ ctx, admin, customer }) => {
    const product = await createProduct(ctx, admin, { title: 'Guarded Variants' })
    const anonymous = await ctx.request({ method: 'POST', url: `${PRODUCTS}/${product.id}/variants`, payload: { title: 'V' } })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error.code).toBe('unauthorized')
    const garbage = await ctx.request({ method: 'POST', url: `${PRODUCTS}/${product.id}/variants`, token: 'x.y.z', payload: { title: 'V' } })
    expect(garbage.statusCode).toBe(401)
    expect(garbage.json().error.code).toBe('unauthorized')
    const byCustomer = await ctx.request({ method: 'POST', url: `${PRODUCTS}/${product.id}/variants`, token: customer, payload: { title: 'V' } })
    expect(byCustomer.statusCode).toBe(403)
    expect(byCustomer.json().error.code).toBe('forbidden')
    expect((await listVariants(ctx, product.id)).variants).toEqual([])
  })
})

describe('GET /api/v1/products/:id/variants', () => {
  test('lists the variants in the order they were added, without a token, in the list envelope', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Listed Socks' })
    const small = await addVariant(ctx, admin, product.id, { title: 'S' })
    const medium = await addVariant(ctx, admin, product.id, { title: 'M', price: 7 })
    const large = await addVariant(ctx, admin, product.id, { title: 'L' })
    const response = await ctx.request({ method: 'GET', url: `${PRODUCTS}/${product.id}/variants` })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({
      variants: [small, medium, large],
      meta: { page: 1, per_page: 20, total: 3, total_pages: 1 },
    })
    const second = await listVariants(ctx, product.id, '?page=2&per_page=2')
    expect(second).toEqual({ variants: [large], meta: { page: 2, per_page: 2, total: 3, total_pages: 2 } })
  })

  test('answers an empty list for a product without variants', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'No Variants' })
    expect(await listVariants(ctx, product.id)).toEqual({ variants: [], meta: { page: 1, per_page: 20, total: 0, total_pages: 0 } })
  })

  test('answers 404 for an unknown product, 400 for a malformed id or bad paging', async ({ ctx, admin }) => {
    const missing = await ctx.request({ method: 'GET', url: `${PRODUCTS}/${UNKNOWN_ID}/variants` })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().error).toMatchObject({ code: 'not_found', message: 'Product not found' })
    const malformed = await ctx.request({ method: 'GET', url: `${PRODUCTS}/123/variants` })
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().error.code).toBe('validation_error')
    const product = await createProduct(ctx, admin, { title: 'Paged Variants' })
    const tooMany = await ctx.request({ method: 'GET', url: `${PRODUCTS}/${product.id}/variants?per_page=101` })
    expect(tooMany.statusCode).toBe(400)
    expect(tooMany.json().error.details).toContainEqual(expect.objectContaining({ field: 'per_page' }))
    const pageZero = await ctx.request({ method: 'GET', url: `${PRODUCTS}/${product.id}/variants?page=0` })
    expect(pageZero.statusCode).toBe(400)
    expect(pageZero.json().error.details).toContainEqual(expect.objectContaining({ field: 'page' }))
  })
})

describe('PATCH /api/v1/products/:id/variants/:variant_id', () => {
  test('changes only the fields sent and answers 200 with the variant', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Patched Jeans', price: 60 })
    const variant = await addVariant(ctx, admin, product.id, { title: '32/32', sku: 'J-3232', price: 65, options: { waist: '32' }, inventory_quantity: 4 })
    const response = await ctx.request({
      method: 'PATCH',
      url: `${PRODUCTS}/${product.id}/variants/${variant.id}`,
      token: admin,
      payload: { inventory_quantity: 9, options: { waist: '32', leg: '32' } },
    })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({
      ...variant,
      inventory_quantity: 9,
      options: { waist: '32', leg: '32' },
      updated_at: expect.stringMatching(ISO),
    })
    expect((await getProduct(ctx, product.id)).variants).toEqual([response.json()])
  })

  test('price null goes back to the product price', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Reset Price', price: 30 })
    const variant = await addVariant(ctx, admin, product.id, { title: 'Special', price: 35.5 })
    const response = await ctx.request({
      method: 'PATCH',
      url: `${PRODUCTS}/${product.id}/variants/${variant.id}`,
      token: admin,
      payload: { price: null },
    })
    expect(response.statusCode).toBe(200)
    expect(response.json().price).toBeNull()
    const [row] = await ctx.handle.sql`select price_minor from product_variants where id = ${variant.id}`
    expect(row!.price_minor).toBeNull()
    const detail = await getProduct(ctx, product.id)
    expect(detail.price).toBe(30)
    expect(detail.variants[0]!.price).toBeNull()
  })

  test('writes exactly one product.updated event with the changed variant in the snapshot', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Evented Patch Variant' })
    const variant = await addVariant(ctx, admin, product.id, { title: 'Before' })
    const response = await ctx.request({
      method: 'PATCH',
      url: `${PRODUCTS}/${product.id}/variants/${variant.id}`,
      token: admin,
      payload: { title: 'After', price: 3.25 },
    })
    expect(response.statusCode).toBe(200)
    const events = await eventsOf(ctx, product.id)
    expect(events.map((event) => event.kind)).toEqual(['product.created', 'product.updated', 'product.updated'])
    expect(events[2]!.data.variants).toEqual([response.json()])
    expect(events[2]!.data.variants[0]).toMatchObject({ title: 'After', price: 3.25 })
  })

  test('answers 404 for a variant of another product and leaves it unchanged, with no event', async ({ ctx, admin }) => {
    const mine = await createProduct(ctx, admin, { title: 'Mine' })
    const theirs = await createProduct(ctx, admin, { title: 'Theirs' })
    const theirVariant = await addVariant(ctx, admin, theirs.id, { title: 'Their variant' })
    const events = await eventCount(ctx)
    const response = await ctx.request({
      method: 'PATCH',
      url: `${PRODUCTS}/${mine.id}/variants/${theirVariant.id}`,
      token: admin,
      payload: { title: 'Stolen' },
    })
    expect(response.statusCode).toBe(404)
    expect(response.json().error).toMatchObject({ code: 'not_found', message: 'Variant not found' })
    expect((await listVariants(ctx, theirs.id)).variants).toEqual([theirVariant])
    expect(await eventCount(ctx)).toBe(events)
  })

  test('answers 404 for an unknown variant or product, 400 for a malformed variant id', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Lonely Product' })
    const variant = await addVariant(ctx, admin, product.id, { title: 'Only' })
    const unknownVariant = await ctx.request({
      method: 'PATCH',
      url: `${PRODUCTS}/${product.id}/variants/${UNKNOWN_ID}`,
      token: admin,
      payload: { title: 'x' },
    })
    expect(unknownVariant.statusCode).toBe(404)
    expect(unknownVariant.json().error).toMatchObject({ code: 'not_found', message: 'Variant not found' })
    const unknownProduct = await ctx.request({
      method: 'PATCH',
      url: `${PRODUCTS}/${UNKNOWN_ID}/variants/${variant.id}`,
      token: admin,
      payload: { title: 'x' },
    })
    expect(unknownProduct.statusCode).toBe(404)
    expect(unknownProduct.json().error).toMatchObject({ code: 'not_found', message: 'Product not found' })
    const malformed = await ctx.request({
      method: 'PATCH',
      url: `${PRODUCTS}/${product.id}/variants/not-a-uuid`,
      token: admin,
      payload: { title: 'x' },
    })
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().error.details).toContainEqual(expect.objectContaining({ field: 'variant_id' }))
  })

  test('refuses too many decimals for the currency, unknown fields and bad values with 400', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Yen Variant Host', price: 100, currency: 'JPY' })
    const variant = await addVariant(ctx, admin, product.id, { title: 'Plain', price: 120 })
    for (const [payload, field] of [
      [{ price: 10.5 }, 'price'],
      [{ sku: 'X', colour: 'red' }, 'colour'],
      [{ inventory_quantity: 'many' }, 'inventory_quantity'],
      [{ title: '' }, 'title'],
    ] as const) {
      const response = await ctx.request({
        method: 'PATCH',
        url: `${PRODUCTS}/${product.id}/variants/${variant.id}`,
        token: admin,
        payload,
      })
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'validation_error' })
      expect(response.json().error.details).toContainEqual(expect.objectContaining({ field }))
    }
    expect((await listVariants(ctx, product.id)).variants).toEqual([variant])
  })

  test('answers 401 without or with a garbage token, 403 for a customer', async ({ ctx, admin, customer }) => {
    const product = await createProduct(ctx, admin, { title: 'Guarded Variant Patch' })
    const variant = await addVariant(ctx, admin, product.id, { title: 'Original' })
    const url = `${PRODUCTS}/${product.id}/variants/${variant.id}`
    const anonymous = await ctx.request({ method: 'PATCH', url, payload: { title: 'Hacked' } })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error.code).toBe('unauthorized')
    const garbage = await ctx.request({ method: 'PATCH', url, token: 'garbage', payload: { title: 'Hacked' } })
    expect(garbage.statusCode).toBe(401)
    const byCustomer = await ctx.request({ method: 'PATCH', url, token: customer, payload: { title: 'Hacked' } })
    expect(byCustomer.statusCode).toBe(403)
    expect(byCustomer.json().error.code).toBe('forbidden')
    expect((await listVariants(ctx, product.id)).variants[0]!.title).toBe('Original')
  })
})

describe('DELETE /api/v1/products/:id/variants/:variant_id', () => {
  test('answers 204 with no body and removes the variant; the others stay', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Shrinking Range' })
    const keep = await addVariant(ctx, admin, product.id, { title: 'Keep' })
    const drop = await addVariant(ctx, admin, product.id, { title: 'Drop' })
    const response = await ctx.request({ method: 'DELETE', url: `${PRODUCTS}/${product.id}/variants/${drop.id}`, token: admin })
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    expect(await ctx.handle.sql`select id from product_variants where id = ${drop.id}`).toHaveLength(0)
    expect((await listVariants(ctx, product.id)).variants).toEqual([keep])
    expect((await getProduct(ctx, product.id)).variants).toEqual([keep])

    const again = await ctx.request({ method: 'DELETE', url: `${PRODUCTS}/${product.id}/variants/${drop.id}`, token: admin })
    expect(again.statusCode).toBe(404)
  })

  test('writes exactly one product.updated event whose snapshot no longer has the variant', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Evented Variant Delete' })
    const variant = await addVariant(ctx, admin, product.id, { title: 'Gone soon' })
    const response = await ctx.request({ method: 'DELETE', url: `${PRODUCTS}/${product.id}/variants/${variant.id}`, token: admin })
    expect(response.statusCode).toBe(204)
    const events = await eventsOf(ctx, product.id)
    expect(events.map((event) => event.kind)).toEqual(['product.created', 'product.updated', 'product.updated'])
    expect(events[1]!.data.variants).toEqual([variant])
    expect(events[2]!.data.variants).toEqual([])
  })

  test('answers 404 for a variant of another product, which stays; 404 for unknown ids; 400 for malformed ones', async ({ ctx, admin }) => {
    const mine = await createProduct(ctx, admin, { title: 'Mine Again' })
    const theirs = await createProduct(ctx, admin, { title: 'Theirs Again' })
    const theirVariant = await addVariant(ctx, admin, theirs.id, { title: 'Keep me' })
    const events = await eventCount(ctx)
    const response = await ctx.request({ method: 'DELETE', url: `${PRODUCTS}/${mine.id}/variants/${theirVariant.id}`, token: admin })
    expect(response.statusCode).toBe(404)
    expect(response.json().error).toMatchObject({ code: 'not_found', message: 'Variant not found' })
    expect((await listVariants(ctx, theirs.id)).variants).toEqual([theirVariant])
    expect(await eventCount(ctx)).toBe(events)

    const unknownVariant = await ctx.request({ method: 'DELETE', url: `${PRODUCTS}/${mine.id}/variants/${UNKNOWN_ID}`, token: admin })
    expect(unknownVariant.statusCode).toBe(404)
    const unknownProduct = await ctx.request({ method: 'DELETE', url: `${PRODUCTS}/${UNKNOWN_ID}/variants/${theirVariant.id}`, token: admin })
    expect(unknownProduct.statusCode).toBe(404)
    expect(unknownProduct.json().error.message).toBe('Product not found')
    const malformed = await ctx.request({ method: 'DELETE', url: `${PRODUCTS}/${mine.id}/variants/42`, token: admin })
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().error.details).toContainEqual(expect.objectContaining({ field: 'variant_id' }))
  })

  test('answers 401 without or with a garbage token, 403 for a customer; the variant stays', async ({ ctx, admin, customer }) => {
    const product = await createProduct(ctx, admin, { title: 'Guarded Variant Delete' })
    const variant = await addVariant(ctx, admin, product.id, { title: 'Safe' })
    const url = `${PRODUCTS}/${product.id}/variants/${variant.id}`
    expect((await ctx.request({ method: 'DELETE', url })).statusCode).toBe(401)
    const garbage = await ctx.request({ method: 'DELETE', url, token: 'garbage' })
    expect(garbage.statusCode).toBe(401)
    expect(garbage.json().error.code).toBe('unauthorized')
    const byCustomer = await ctx.request({ method: 'DELETE', url, token: customer })
    expect(byCustomer.statusCode).toBe(403)
    expect(byCustomer.json().error.code).toBe('forbidden')
    expect((await listVariants(ctx, product.id)).variants).toEqual([variant])
  })
})

describe('POST /api/v1/products/:id/images', () => {
  test('adds an image by URL and answers 201 with every field', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Pictured Vase' })
    const response = await ctx.request({
      method: 'POST',
      url: `${PRODUCTS}/${product.id}/images`,
      token: admin,
      payload: { url: 'https://cdn.example.com/vase-front.jpg', alt: 'The vase from the front' },
    })
    expect(response.statusCode).toBe(201)
    expect(response.json()).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      product_id: product.id,
      url: 'https://cdn.example.com/vase-front.jpg',
      alt: 'The vase from the front',
      position: 0,
      // Only linked: nothing is fetched, so nothing about the file is known.
      content_type: null,
      size: null,
      width: null,
      height: null,
      thumbnails: [],
      created_at: expect.stringMatching(ISO),
    })
  })

  test('positions default to increasing order: 0, 1, 2, then one past the highest', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Gallery' })
    const first = await addImage(ctx, admin, product.id, { url: 'https://cdn.example.com/1.jpg' })
    const second = await addImage(ctx, admin, product.id, { url: 'https://cdn.example.com/2.jpg' })
    const third = await addImage(ctx, admin, product.id, { url: 'https://cdn.example.com/3.jpg' })
    expect([first.position, second.position, third.position]).toEqual([0, 1, 2])
    expect(first.alt).toBeNull()
    const placed = await addImage(ctx, admin, product.id, { url: 'https://cdn.example.com/10.jpg', position: 10 })
    expect(placed.position).toBe(10)
    const next = await addImage(ctx, admin, product.id, { url: 'https://cdn.example.com/11.jpg' })
    expect(next.position).toBe(11)
  })

  test('writes exactly one product.updated event whose snapshot holds the image', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Evented Picture' })
    const response = await ctx.request({
      method: 'POST',
      url: `${PRODUCTS}/${product.id}/images`,
      token: admin,
      payload: { url: 'https://cdn.example.com/evented.jpg' },
    })
    expect(response.statusCode).toBe(201)
    const events = await eventsOf(ctx, product.id)
    expect(events.map((event) => event.kind)).toEqual(['product.created', 'product.updated'])
    expect(events[1]!.data.images).toEqual([response.json()])
    expect(events[1]!.request_id).toBe(response.headers['x-request-id'])
  })

  test('answers 400 without a url (or upload), and refuses bad URLs, positions and unknown fields', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Strict Pictures' })
    const missing = await ctx.request({ method: 'POST', url: `${PRODUCTS}/${product.id}/images`, token: admin, payload: { alt: 'x' } })
    expect(missing.statusCode).toBe(400)
    expect(missing.json().error).toMatchObject({
      code: 'validation_error',
      message: 'Send exactly one of url and upload_id (or the file itself as multipart/form-data)',
      details: [{ field: 'url', message: 'exactly one of url and upload_id' }],
    })
    for (const [payload, field] of [
      [{ url: 'not a url' }, 'url'],
      [{ url: 'https://cdn.example.com/a.jpg', position: -1 }, 'position'],
      [{ url: 'https://cdn.example.com/a.jpg', position: 1.5 }, 'position'],
      [{ url: 'https://cdn.example.com/a.jpg', file: 'base64...' }, 'file'],
    ] as const) {
      const response = await ctx.request({ method: 'POST', url: `${PRODUCTS}/${product.id}/images`, token: admin, payload })
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json().error.details).toContainEqual(expect.objectContaining({ field }))
    }
    expect((await listImages(ctx, product.id)).images).toEqual([])
  })

  test('answers 404 for an unknown product, 400 for a malformed id; nothing is written', async ({ ctx, admin }) => {
    const events = await eventCount(ctx)
    const missing = await ctx.request({
      method: 'POST',
      url: `${PRODUCTS}/${UNKNOWN_ID}/images`,
      token: admin,
      payload: { url: 'https://cdn.example.com/a.jpg' },
    })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().error).toMatchObject({ code: 'not_found', message: 'Product not found' })
    const malformed = await ctx.request({
      method: 'POST',
      url: `${PRODUCTS}/xyz/images`,
      token: admin,
      payload: { url: 'https://cdn.example.com/a.jpg' },
    })
    expect(malformed.statusCode).toBe(400)
    expect(await eventCount(ctx)).toBe(events)
  })

  test('answers 401 without or with a garbage token, 403 for a customer; no image is added', async ({ ctx, admin, customer }) => {
    const product = await createProduct(ctx, admin, { title: 'Guarded Pictures' })
    const url = `${PRODUCTS}/${product.id}/images`
    const payload = { url: 'https://cdn.example.com/a.jpg' }
    const anonymous = await ctx.request({ method: 'POST', url, payload })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error.code).toBe('unauthorized')
    const garbage = await ctx.request({ method: 'POST', url, payload, token: 'garbage' })
    expect(garbage.statusCode).toBe(401)
    const byCustomer = await ctx.request({ method: 'POST', url, payload, token: customer })
    expect(byCustomer.statusCode).toBe(403)
    expect(byCustomer.json().error.code).toBe('forbidden')
    expect((await listImages(ctx, product.id)).images).toEqual([])
  })
})

describe('GET /api/v1/products/:id/images', () => {
  test('lists images by position, without a token, in the list envelope', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Ordered Gallery' })
    const back = await addImage(ctx, admin, product.id, { url: 'https://cdn.example.com/back.jpg', position: 5 })
    const front = await addImage(ctx, admin, product.id, { url: 'https://cdn.example.com/front.jpg', position: 1 })
    const side = await addImage(ctx, admin, product.id, { url: 'https://cdn.example.com/side.jpg', position: 3 })
    const response = await ctx.request({ method: 'GET', url: `${PRODUCTS}/${product.id}/images` })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ images: [front, side, back], meta: { page: 1, per_page: 20, total: 3, total_pages: 1 } })
    expect((await getProduct(ctx, product.id)).images).toEqual([front, side, back])
    expect(await listImages(ctx, product.id, '?per_page=2&page=2')).toEqual({
      images: [back],
      meta: { page: 2, per_page: 2, total: 3, total_pages: 2 },
    })
  })

  test('answers 404 for an unknown product and 400 for a malformed id or bad paging', async ({ ctx, admin }) => {
    const missing = await ctx.request({ method: 'GET', url: `${PRODUCTS}/${UNKNOWN_ID}/images` })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().error).toMatchObject({ code: 'not_found', message: 'Product not found' })
    const malformed = await ctx.request({ method: 'GET', url: `${PRODUCTS}/abc/images` })
    expect(malformed.statusCode).toBe(400)
    const product = await createProduct(ctx, admin, { title: 'Paged Images' })
    const tooMany = await ctx.request({ method: 'GET', url: `${PRODUCTS}/${product.id}/images?per_page=101` })
    expect(tooMany.statusCode).toBe(400)
    expect(tooMany.json().error.details).toContainEqual(expect.objectContaining({ field: 'per_page' }))
  })
})

describe('DELETE /api/v1/products/:id/images/:image_id', () => {
  test('answers 204 with no body and removes the image; the others keep their positions', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Pruned Gallery' })
    const a = await addImage(ctx, admin, product.id, { url: 'https://cdn.example.com/a.jpg' })
    const b = await addImage(ctx, admin, product.id, { url: 'https://cdn.example.com/b.jpg' })
    const c = await addImage(ctx, admin, product.id, { url: 'https://cdn.example.com/c.jpg' })
    const response = await ctx.request({ method: 'DELETE', url: `${PRODUCTS}/${product.id}/images/${b.id}`, token: admin })
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    expect(await ctx.handle.sql`select id from product_images where id = ${b.id}`).toHaveLength(0)
    expect((await listImages(ctx, product.id)).images).toEqual([a, c])
    expect((await getProduct(ctx, product.id)).images).toEqual([a, c])
    const again = await ctx.request({ method: 'DELETE', url: `${PRODUCTS}/${product.id}/images/${b.id}`, token: admin })
    expect(again.statusCode).toBe(404)
    expect(again.json().error).toMatchObject({ code: 'not_found', message: 'Image not found' })
  })

  test('writes exactly one product.updated event whose snapshot no longer has the image', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Evented Image Delete' })
    const image = await addImage(ctx, admin, product.id, { url: 'https://cdn.example.com/x.jpg' })
    const response = await ctx.request({ method: 'DELETE', url: `${PRODUCTS}/${product.id}/images/${image.id}`, token: admin })
    expect(response.statusCode).toBe(204)
    const events = await eventsOf(ctx, product.id)
    expect(events.map((event) => event.kind)).toEqual(['product.created', 'product.updated', 'product.updated'])
    expect(events[1]!.data.images).toEqual([image])
    expect(events[2]!.data.images).toEqual([])
    expect(events[2]!.request_id).toBe(response.headers['x-request-id'])
  })

  test('answers 404 for an image of another product, which stays; 400 for a malformed image id', async ({ ctx, admin }) => {
    const mine = await createProduct(ctx, admin, { title: 'My Pictures' })
    const theirs = await createProduct(ctx, admin, { title: 'Their Pictures' })
    const theirImage = await addImage(ctx, admin, theirs.id, { url: 'https://cdn.example.com/theirs.jpg' })
    const events = await eventCount(ctx)
    const response = await ctx.request({ method: 'DELETE', url: `${PRODUCTS}/${mine.id}/images/${theirImage.id}`, token: admin })
    expect(response.statusCode).toBe(404)
    expect(response.json().error).toMatchObject({ code: 'not_found', message: 'Image not found' })
    expect((await listImages(ctx, theirs.id)).images).toEqual([theirImage])
    expect(await eventCount(ctx)).toBe(events)

    const unknownProduct = await ctx.request({ method: 'DELETE', url: `${PRODUCTS}/${UNKNOWN_ID}/images/${theirImage.id}`, token: admin })
    expect(unknownProduct.statusCode).toBe(404)
    expect(unknownProduct.json().error.message).toBe('Product not found')
    const malformed = await ctx.request({ method: 'DELETE', url: `${PRODUCTS}/${mine.id}/images/not-an-id`, token: admin })
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().error.details).toContainEqual(expect.objectContaining({ field: 'image_id' }))
  })

  test('answers 401 without or with a garbage token, 403 for a customer; the image stays', async ({ ctx, admin, customer }) => {
    const product = await createProduct(ctx, admin, { title: 'Guarded Image Delete' })
    const image = await addImage(ctx, admin, product.id, { url: 'https://cdn.example.com/safe.jpg' })
    const url = `${PRODUCTS}/${product.id}/images/${image.id}`
    const anonymous = await ctx.request({ method: 'DELETE', url })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error.code).toBe('unauthorized')
    expect((await ctx.request({ method: 'DELETE', url, token: 'garbage' })).statusCode).toBe(401)
    const byCustomer = await ctx.request({ method: 'DELETE', url, token: customer })
    expect(byCustomer.statusCode).toBe(403)
    expect(byCustomer.json().error.code).toBe('forbidden')
    expect((await listImages(ctx, product.id)).images).toEqual([image])
  })
})
