/** Carts: the seven routes of the seed plus address and email, live prices, coupons, tax and who may see a cart. */
import { describe, expect } from 'vitest'
import { eq } from 'drizzle-orm'
import type { Cart, Product, Variant } from '@commerce/domain'
import { carts, promotions, shippingMethods, taxRates } from '@commerce/db'
import { test, type TestContext } from './helpers.js'

const CARTS = '/api/v1/carts'
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000beef'
const NY = { line1: '1 Main St', city: 'New York', region: 'NY', postal_code: '10001', country: 'US' }

let codes = 0

function createProduct(ctx: TestContext, admin: string, payload: Record<string, unknown>): Promise<Product> {
  return ctx.expectStatus(201, {
    method: 'POST',
    url: '/api/v1/products',
    payload: { inventory_quantity: 100, ...payload },
    token: admin,
  })
}

function createCart(ctx: TestContext, payload: Record<string, unknown> = { currency: 'USD' }, token?: string): Promise<Cart> {
  return ctx.expectStatus(201, { method: 'POST', url: CARTS, payload, ...(token ? { token } : {}) })
}

function getCart(ctx: TestContext, id: string, token?: string): Promise<Cart> {
  return ctx.expectStatus(200, { method: 'GET', url: `${CARTS}/${id}`, ...(token ? { token } : {}) })
}

function addItem(ctx: TestContext, cartId: string, payload: Record<string, unknown>, token?: string): Promise<Cart> {
  return ctx.expectStatus(201, { method: 'POST', url: `${CARTS}/${cartId}/items`, payload, ...(token ? { token } : {}) })
}

function applyCoupon(ctx: TestContext, cartId: string, code: string): Promise<Cart> {
  return ctx.expectStatus(201, { method: 'POST', url: `${CARTS}/${cartId}/coupons`, payload: { code } })
}

type NewCoupon = Partial<typeof promotions.$inferInsert> & Pick<typeof promotions.$inferInsert, 'type'>

async function createCoupon(ctx: TestContext, values: NewCoupon) {
  const [row] = await ctx.handle.db
    .insert(promotions)
    .values({ code: `CODE${++codes}`, name: `CODE${codes}`, ...values })
    .returning()
  return row!
}

/** A cart holding the given lines, each as a fresh product. */
async function cartWith(ctx: TestContext, admin: string, prices: number[], currency = 'USD'): Promise<Cart> {
  const cart = await createCart(ctx, { currency })
  let current = cart
  for (const price of prices) {
    const product = await createProduct(ctx, admin, { title: `Item ${price}`, price, currency })
    current = await addItem(ctx, cart.id, { product_id: product.id, quantity: 1 })
  }
  return current
}

describe('POST /api/v1/carts', () => {
  test('creates an empty anonymous cart: 201 with id and cart_id, zero totals', async ({ ctx }) => {
    const cart = await createCart(ctx, { currency: 'EUR', email: 'buyer@example.com' })
    expect(cart.cart_id).toBe(cart.id)
    expect(cart).toMatchObject({
      currency: 'EUR',
      customer_id: null,
      email: 'buyer@example.com',
      items: [],
      coupons: [],
      shipping_address: null,
      totals: { subtotal: 0, discount: 0, tax: 0, shipping: 0, total: 0 },
      completed_at: null,
    })
    expect(await getCart(ctx, cart.id)).toEqual(cart)
  })

  test('refuses a missing, malformed or unknown currency and unknown fields with 400', async ({ ctx }) => {
    const missing = await ctx.expectError(400, 'validation_error', { method: 'POST', url: CARTS, payload: {} })
    expect(missing.message).toBe("Field 'currency' is required")
    await ctx.expectError(400, 'validation_error', { method: 'POST', url: CARTS, payload: { currency: 'usd' } })
    const unknown = await ctx.expectError(400, 'validation_error', { method: 'POST', url: CARTS, payload: { currency: 'XYZ' } })
    expect(unknown.message).toContain('XYZ')
    await ctx.expectError(400, 'validation_error', { method: 'POST', url: CARTS, payload: { currency: 'USD', customer_id: UNKNOWN_ID } })
  })

  test('a cart created with a customer token belongs to that customer', async ({ ctx }) => {
    const owner = await ctx.signIn('customer')
    const cart = await createCart(ctx, { currency: 'USD' }, owner.token)
    expect(cart.customer_id).toBe(owner.customerId)
  })
})

describe('GET /api/v1/carts/:id', () => {
  test('answers 404 for an unknown cart and 400 for a malformed id', async ({ ctx }) => {
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${CARTS}/${UNKNOWN_ID}` })
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${CARTS}/not-a-uuid` })
  })

  test("another customer and anonymous callers get 404 for a customer's cart; the owner and admins see it", async ({ ctx, admin }) => {
    const owner = await ctx.signIn('customer')
    const other = await ctx.signIn('customer')
    const cart = await createCart(ctx, { currency: 'USD' }, owner.token)
    const product = await createProduct(ctx, admin, { title: 'Owned', price: 5 })
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${CARTS}/${cart.id}` })
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${CARTS}/${cart.id}`, token: other.token })
    await ctx.expectError(404, 'not_found', {
      method: 'POST',
      url: `${CARTS}/${cart.id}/items`,
      payload: { product_id: product.id, quantity: 1 },
      token: other.token,
    })
    expect((await getCart(ctx, cart.id, owner.token)).id).toBe(cart.id)
    expect((await getCart(ctx, cart.id, admin)).id).toBe(cart.id)
  })

  test('an anonymous cart is reachable by whoever holds its id', async ({ ctx }) => {
    const cart = await createCart(ctx)
    const someone = await ctx.signIn('customer')
    expect((await getCart(ctx, cart.id, someone.token)).id).toBe(cart.id)
  })
})

describe('POST /api/v1/carts/:id/items', () => {
  test('adds a line with the product data and recalculates the totals', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Mug', sku: 'MUG-1', price: 12.5, image_url: 'https://img.example/m.png' })
    const cart = await createCart(ctx)
    const updated = await addItem(ctx, cart.id, { product_id: product.id, quantity: 3 })
    expect(updated.items).toEqual([
      {
        id: expect.any(String),
        product_id: product.id,
        variant_id: null,
        title: 'Mug',
        variant_title: null,
        sku: 'MUG-1',
        image_url: 'https://img.example/m.png',
        quantity: 3,
        unit_price: 12.5,
        original_unit_price: 12.5,
        price_list_id: null,
        line_total: 37.5,
        discount: 0,
        tax: 0,
        available: true,
        problem: null,
      },
    ])
    expect(updated.totals).toEqual({ subtotal: 37.5, discount: 0, tax: 0, shipping: 0, total: 37.5 })
    expect(updated.promotions).toEqual([])
  })

  test('the same product and variant again raises the existing line instead of adding one', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Pen', price: 1.1 })
    const cart = await createCart(ctx)
    await addItem(ctx, cart.id, { product_id: product.id, quantity: 2 })
    const updated = await addItem(ctx, cart.id, { product_id: product.id, quantity: 5 })
    expect(updated.items).toHaveLength(1)
    expect(updated.items[0]).toMatchObject({ quantity: 7, line_total: 7.7 })
  })

  test("a variant line uses the variant's price, sku and stock, and is a line of its own", async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Shirt', sku: 'SHIRT', price: 20 })
    const variant = await ctx.expectStatus<Variant>(201, {
      method: 'POST',
      url: `/api/v1/products/${product.id}/variants`,
      payload: { title: 'XL', sku: 'SHIRT-XL', price: 22.99, inventory_quantity: 2 },
      token: admin,
    })
    const cart = await createCart(ctx)
    await addItem(ctx, cart.id, { product_id: product.id, quantity: 1 })
    const updated = await addItem(ctx, cart.id, { product_id: product.id, variant_id: variant.id, quantity: 2 })
    expect(updated.items.map((item) => [item.variant_title, item.sku, item.unit_price, item.line_total])).toEqual([
      [null, 'SHIRT', 20, 20],
      ['XL', 'SHIRT-XL', 22.99, 45.98],
    ])
    expect(updated.totals.subtotal).toBe(65.98)
    const error = await ctx.expectError(409, 'insufficient_inventory', {
      method: 'POST',
      url: `${CARTS}/${cart.id}/items`,
      payload: { product_id: product.id, variant_id: variant.id, quantity: 1 },
    })
    expect(error.message).toBe('Only 2 in stock, 3 requested')
  })

  test('unknown or inactive products and variants of another product are 404', async ({ ctx, admin }) => {
    const cart = await createCart(ctx)
    const product = await createProduct(ctx, admin, { title: 'Gone', price: 3 })
    const other = await createProduct(ctx, admin, { title: 'Other', price: 3 })
    const variant = await ctx.expectStatus<Variant>(201, {
      method: 'POST',
      url: `/api/v1/products/${other.id}/variants`,
      payload: { title: 'Red' },
      token: admin,
    })
    await ctx.expectStatus(204, { method: 'DELETE', url: `/api/v1/products/${product.id}`, token: admin })
    const items = `${CARTS}/${cart.id}/items`
    const inactive = await ctx.expectError(404, 'not_found', { method: 'POST', url: items, payload: { product_id: product.id, quantity: 1 } })
    expect(inactive.message).toBe('Product not found')
    await ctx.expectError(404, 'not_found', { method: 'POST', url: items, payload: { product_id: UNKNOWN_ID, quantity: 1 } })
    const wrongVariant = await ctx.expectError(404, 'not_found', {
      method: 'POST',
      url: items,
      payload: { product_id: (await createProduct(ctx, admin, { title: 'Third', price: 1 })).id, variant_id: variant.id, quantity: 1 },
    })
    expect(wrongVariant.message).toBe('Variant not found')
    await ctx.expectError(404, 'not_found', {
      method: 'POST',
      url: `${CARTS}/${UNKNOWN_ID}/items`,
      payload: { product_id: other.id, quantity: 1 },
    })
  })

  test('quantity below 1, a fraction, a missing product_id or an extra field (price) is 400', async ({ ctx, admin }) => {
    const cart = await createCart(ctx)
    const product = await createProduct(ctx, admin, { title: 'Q', price: 1 })
    const items = `${CARTS}/${cart.id}/items`
    for (const payload of [
      { product_id: product.id, quantity: 0 },
      { product_id: product.id, quantity: -1 },
      { product_id: product.id, quantity: 1.5 },
      { product_id: product.id, quantity: '2' },
      { product_id: product.id, quantity: 1, price: 0.01 },
    ]) {
      await ctx.expectError(400, 'validation_error', { method: 'POST', url: items, payload })
    }
    const missing = await ctx.expectError(400, 'validation_error', { method: 'POST', url: items, payload: { quantity: 1 } })
    expect(missing.message).toBe("Field 'product_id' is required")
    expect((await getCart(ctx, cart.id)).items).toEqual([])
  })

  test('more than the stock is 409 insufficient_inventory and leaves the cart as it was', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Scarce', price: 9, inventory_quantity: 3 })
    const cart = await createCart(ctx)
    await addItem(ctx, cart.id, { product_id: product.id, quantity: 2 })
    const before = await getCart(ctx, cart.id)
    const error = await ctx.expectError(409, 'insufficient_inventory', {
      method: 'POST',
      url: `${CARTS}/${cart.id}/items`,
      payload: { product_id: product.id, quantity: 2 },
    })
    expect(error.message).toBe('Only 3 in stock, 4 requested')
    expect(await getCart(ctx, cart.id)).toEqual(before)
  })

  test('a product priced in another currency is 400 currency_mismatch', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Euro thing', price: 10, currency: 'EUR' })
    const cart = await createCart(ctx, { currency: 'USD' })
    const error = await ctx.expectError(400, 'currency_mismatch', {
      method: 'POST',
      url: `${CARTS}/${cart.id}/items`,
      payload: { product_id: product.id, quantity: 1 },
    })
    expect(error.message).toBe("The product has no price in USD, the cart's currency (it is priced in EUR)")
  })

  test('concurrent adds of the same product to one cart all count, on one line', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Busy', price: 2 })
    const cart = await createCart(ctx)
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        ctx.request({ method: 'POST', url: `${CARTS}/${cart.id}/items`, payload: { product_id: product.id, quantity: 1 } }),
      ),
    )
    expect(responses.map((response) => response.statusCode)).toEqual(Array(20).fill(201))
    const final = await getCart(ctx, cart.id)
    expect(final.items).toHaveLength(1)
    expect(final.items[0]!.quantity).toBe(20)
    expect(final.totals.subtotal).toBe(40)
  })

  test('a cart holds at most 100 lines', async ({ ctx }) => {
    const cart = await createCart(ctx)
    const rows = await ctx.handle.sql<{ id: string }[]>`
      insert into products (id, title, slug, price_minor, currency, inventory_quantity)
      select gen_random_uuid(), 'Bulk ' || n, ${'bulk-' + cart.id} || '-' || n, 100, 'USD', 10
      from generate_series(1, 101) n
      returning id`
    const [extra, ...hundred] = rows.map((row) => row.id)
    await ctx.handle.sql`
      insert into cart_items (id, cart_id, product_id, quantity)
      select gen_random_uuid(), ${cart.id}, product_id, 1 from unnest(${hundred}::uuid[]) as product_id`
    const error = await ctx.expectError(400, 'validation_error', {
      method: 'POST',
      url: `${CARTS}/${cart.id}/items`,
      payload: { product_id: extra, quantity: 1 },
    })
    expect(error.message).toBe('A cart holds at most 100 lines')
    expect((await getCart(ctx, cart.id)).totals.subtotal).toBe(100)
  })
})

describe('PATCH and DELETE /api/v1/carts/:id/items/:item_id', () => {
  test('PATCH sets the quantity and the totals follow; more than the stock is 409', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Cup', price: 4.99, inventory_quantity: 5 })
    const cart = await createCart(ctx)
    const { items } = await addItem(ctx, cart.id, { product_id: product.id, quantity: 1 })
    const url = `${CARTS}/${cart.id}/items/${items[0]!.id}`
    const updated = await ctx.expectStatus<Cart>(200, { method: 'PATCH', url, payload: { quantity: 5 } })
    expect(updated.items[0]).toMatchObject({ quantity: 5, line_total: 24.95 })
    expect(updated.totals.total).toBe(24.95)
    await ctx.expectError(409, 'insufficient_inventory', { method: 'PATCH', url, payload: { quantity: 6 } })
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url, payload: { quantity: 0 } })
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url, payload: {} })
    await ctx.expectError(404, 'not_found', { method: 'PATCH', url: `${CARTS}/${cart.id}/items/${UNKNOWN_ID}`, payload: { quantity: 1 } })
    expect((await getCart(ctx, cart.id)).items[0]!.quantity).toBe(5)
  })

  test('DELETE removes the line (204) and a second DELETE is 404', async ({ ctx, admin }) => {
    const cart = await cartWith(ctx, admin, [3, 4])
    const url = `${CARTS}/${cart.id}/items/${cart.items[0]!.id}`
    await ctx.expectStatus(204, { method: 'DELETE', url })
    const after = await getCart(ctx, cart.id)
    expect(after.items.map((item) => item.unit_price)).toEqual([4])
    expect(after.totals.subtotal).toBe(4)
    await ctx.expectError(404, 'not_found', { method: 'DELETE', url })
  })

  test("an item id of another cart is 404 on this cart", async ({ ctx, admin }) => {
    const mine = await cartWith(ctx, admin, [1])
    const theirs = await cartWith(ctx, admin, [2])
    await ctx.expectError(404, 'not_found', {
      method: 'PATCH',
      url: `${CARTS}/${mine.id}/items/${theirs.items[0]!.id}`,
      payload: { quantity: 2 },
    })
    await ctx.expectError(404, 'not_found', { method: 'DELETE', url: `${CARTS}/${mine.id}/items/${theirs.items[0]!.id}` })
    expect((await getCart(ctx, theirs.id)).items).toHaveLength(1)
  })
})

describe('live prices', () => {
  test('a cart follows the current product price until checkout', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: 'Moving price', price: 10 })
    const cart = await createCart(ctx)
    await addItem(ctx, cart.id, { product_id: product.id, quantity: 2 })
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/products/${product.id}`, payload: { price: 8.25 }, token: admin })
    const after = await getCart(ctx, cart.id)
    expect(after.items[0]).toMatchObject({ unit_price: 8.25, line_total: 16.5 })
    expect(after.totals.total).toBe(16.5)
  })

  test('a line whose product was deactivated stays visible as unavailable and counts 0', async ({ ctx, admin }) => {
    const kept = await createProduct(ctx, admin, { title: 'Kept', price: 5 })
    const dropped = await createProduct(ctx, admin, { title: 'Dropped', price: 7 })
    const cart = await createCart(ctx)
    await addItem(ctx, cart.id, { product_id: kept.id, quantity: 1 })
    await addItem(ctx, cart.id, { product_id: dropped.id, quantity: 1 })
    await ctx.expectStatus(204, { method: 'DELETE', url: `/api/v1/products/${dropped.id}`, token: admin })
    const after = await getCart(ctx, cart.id)
    expect(after.items.map((item) => [item.title, item.available, item.line_total, item.problem])).toEqual([
      ['Kept', true, 5, null],
      ['Dropped', false, 0, { code: 'not_sold', message: 'This product is no longer sold; remove it from the cart' }],
    ])
    expect(after.totals.subtotal).toBe(5)
  })
})

describe('a line repriced past the total limit', () => {
  const MAX = 'more than 9999999999999.99 CHF, the most an amount can be'

  /** A CHF cart with a line per [title, price, quantity], in order; then the last product is repriced to `price`. */
  async function repricedCart(ctx: TestContext, admin: string, lines: [string, number, number][], price: number) {
    const cart = await createCart(ctx, { currency: 'CHF' })
    const products: Product[] = []
    for (const [title, unitPrice, quantity] of lines) {
      products.push(await createProduct(ctx, admin, { title, price: unitPrice, currency: 'CHF' }))
      await addItem(ctx, cart.id, { product_id: products.at(-1)!.id, quantity })
    }
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/products/${products.at(-1)!.id}`, payload: { price }, token: admin })
    return { cart, products }
  }

  test('the cart still reads (200) with the line marked and left out of the totals; adding units is refused, fixing it is not; checkout refuses it', async ({ ctx, admin }) => {
    // 5 × 5,000,000,000,000 is past the most an amount can be (15 digits).
    const { cart, products: [mug] } = await repricedCart(ctx, admin, [['Mug', 10, 1], ['Yacht', 1000, 5]], 5_000_000_000_000)
    const marked = await getCart(ctx, cart.id)
    expect(marked.items.map((item) => [item.title, item.available, item.line_total, item.problem])).toEqual([
      ['Mug', true, 10, null],
      ['Yacht', false, 0, { code: 'total_too_large', message: `With this line the cart's total would be ${MAX}; lower its quantity or remove it` }],
    ])
    expect(marked.totals).toEqual({ subtotal: 10, discount: 0, tax: 0, shipping: 0, total: 10 })
    expect(marked.items[1]).toMatchObject({ quantity: 5, unit_price: 5_000_000_000_000 })
    await ctx.expectStatus(200, { method: 'GET', url: `/api/v1/shipping/rates?cart_id=${cart.id}` })

    // Adding units, a new line or more of one (the PATCH reads the quantity it replaces), is refused.
    const mugLine = marked.items[0]!.id
    const yachtLine = marked.items[1]!.id
    const more = await ctx.expectError(400, 'validation_error', { method: 'POST', url: `${CARTS}/${cart.id}/items`, payload: { product_id: mug!.id, quantity: 1 } })
    expect(more.details).toEqual([{ field: 'quantity', message: `With this quantity the cart's total would be ${MAX}` }])
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url: `${CARTS}/${cart.id}/items/${mugLine}`, payload: { quantity: 2 } })
    expect((await getCart(ctx, cart.id)).items.map((item) => item.quantity)).toEqual([1, 5])

    // Checkout completion refuses the cart, naming the line.
    const checkout = await ctx.expectStatus<{ id: string }>(201, {
      method: 'POST',
      url: '/api/v1/checkouts',
      payload: { cart_id: cart.id, email: 'buyer@example.com', shipping_address: { line1: '1 Bahnhofstrasse', city: 'Zürich', postal_code: '8001', country: 'CH' } },
    })
    const refused = await ctx.expectError(409, 'conflict', {
      method: 'POST',
      url: `/api/v1/checkouts/${checkout.id}/complete`,
      headers: { 'idempotency-key': `limit-${cart.id}` },
      payload: { payment: { method: 'card', token: 'tok_visa' } },
    })
    expect(refused.message).toBe(`'Yacht': With this line the cart's total would be ${MAX}; lower its quantity or remove it`)
    expect(refused.details).toEqual([{ field: 'items', message: yachtLine }])
    expect(await ctx.countRows('orders')).toBe(0)

    // Lowering the quantity is allowed even while the line is still past the limit, then it fits.
    const lower = await ctx.expectStatus<Cart>(200, { method: 'PATCH', url: `${CARTS}/${cart.id}/items/${yachtLine}`, payload: { quantity: 2 } })
    expect(lower.items[1]!.problem?.code).toBe('total_too_large')
    const fixed = await ctx.expectStatus<Cart>(200, { method: 'PATCH', url: `${CARTS}/${cart.id}/items/${yachtLine}`, payload: { quantity: 1 } })
    expect(fixed.items.map((item) => item.problem)).toEqual([null, null])
    expect(fixed.totals.total).toBe(5_000_000_000_010)
  })

  test('the line added last is the one set aside; removing it clears the cart', async ({ ctx, admin }) => {
    const { cart } = await repricedCart(ctx, admin, [['First', 6_000_000_000_000, 1], ['Second', 1, 1]], 5_000_000_000_000)
    const marked = await getCart(ctx, cart.id)
    expect(marked.items.map((item) => item.problem?.code ?? null)).toEqual([null, 'total_too_large'])
    expect(marked.totals.total).toBe(6_000_000_000_000)
    await ctx.expectStatus(204, { method: 'DELETE', url: `${CARTS}/${cart.id}/items/${marked.items[1]!.id}` })
    expect((await getCart(ctx, cart.id)).items.map((item) => item.available)).toEqual([true])
  })
})

describe('coupons on a cart', () => {
  test('a percentage coupon is spread over the lines by largest remainder and lines sum to the totals', async ({ ctx, admin }) => {
    await createCoupon(ctx, { code: 'TENOFF', type: 'percentage', percentOffPpm: 100_000 })
    const cart = await cartWith(ctx, admin, [3.33, 3.33, 3.34])
    const updated = await applyCoupon(ctx, cart.id, 'tenoff')
    expect(updated.totals).toEqual({ subtotal: 10, discount: 1, tax: 0, shipping: 0, total: 9 })
    const discounts = updated.items.map((item) => item.discount)
    expect(discounts.reduce((sum, value) => sum + Math.round(value * 100), 0)).toBe(100)
    expect(discounts.every((value) => value === 0.33 || value === 0.34)).toBe(true)
    expect(updated.coupons).toEqual([
      { id: expect.any(String), code: 'TENOFF', type: 'percentage', value: 10, discount: 1, applicable: true, reason: null },
    ])
  })

  test('a fixed amount never takes more than the subtotal', async ({ ctx, admin }) => {
    await createCoupon(ctx, { code: 'FIFTY', type: 'fixed_amount', amountOffMinor: 5000, currency: 'USD' })
    const cart = await cartWith(ctx, admin, [12, 8])
    const updated = await applyCoupon(ctx, cart.id, 'FIFTY')
    expect(updated.totals).toEqual({ subtotal: 20, discount: 20, tax: 0, shipping: 0, total: 0 })
    expect(updated.items.map((item) => item.discount)).toEqual([12, 8])
  })

  test('unknown, inactive, not yet started, expired, used up, other-currency and below-minimum coupons are 400 coupon_invalid', async ({ ctx, admin }) => {
    const cart = await cartWith(ctx, admin, [10])
    const day = 86_400_000
    const cases: [NewCoupon | null, string][] = [
      [null, "Coupon 'NOPE' does not exist"],
      [{ code: 'OFF1', type: 'percentage', percentOffPpm: 10_000, isActive: false }, 'OFF1'],
      [{ code: 'SOON1', type: 'percentage', percentOffPpm: 10_000, startsAt: new Date(Date.now() + day) }, 'SOON1'],
      [{ code: 'OLD1', type: 'percentage', percentOffPpm: 10_000, endsAt: new Date(Date.now() - day) }, 'OLD1'],
      [{ code: 'USED1', type: 'percentage', percentOffPpm: 10_000, usageLimit: 2, timesUsed: 2 }, 'USED1'],
      [{ code: 'EURO1', type: 'fixed_amount', amountOffMinor: 100, currency: 'EUR' }, 'EURO1'],
      [{ code: 'BIG1', type: 'percentage', percentOffPpm: 10_000, currency: 'USD', minSubtotalMinor: 5000 }, 'BIG1'],
    ]
    for (const [coupon, expected] of cases) {
      if (coupon) await createCoupon(ctx, coupon)
      const error = await ctx.expectError(400, 'coupon_invalid', {
        method: 'POST',
        url: `${CARTS}/${cart.id}/coupons`,
        payload: { code: coupon?.code ?? 'nope' },
      })
      expect(error.message).toContain(expected)
    }
    expect((await getCart(ctx, cart.id)).coupons).toEqual([])
  })

  test('applying the same coupon twice is 409; DELETE removes it (204) and a second DELETE is 404', async ({ ctx, admin }) => {
    const coupon = await createCoupon(ctx, { code: 'TWICE', type: 'percentage', percentOffPpm: 50_000 })
    const cart = await cartWith(ctx, admin, [20])
    await applyCoupon(ctx, cart.id, 'TWICE')
    await ctx.expectError(409, 'conflict', { method: 'POST', url: `${CARTS}/${cart.id}/coupons`, payload: { code: 'twice' } })
    const url = `${CARTS}/${cart.id}/coupons/${coupon.id}`
    await ctx.expectStatus(204, { method: 'DELETE', url })
    const after = await getCart(ctx, cart.id)
    expect(after.coupons).toEqual([])
    expect(after.totals.discount).toBe(0)
    await ctx.expectError(404, 'not_found', { method: 'DELETE', url })
  })

  test('a coupon that stops qualifying stays on the cart with applicable false and no discount', async ({ ctx, admin }) => {
    await createCoupon(ctx, { code: 'MIN30', type: 'fixed_amount', amountOffMinor: 500, currency: 'USD', minSubtotalMinor: 3000 })
    const cart = await cartWith(ctx, admin, [20, 15])
    const applied = await applyCoupon(ctx, cart.id, 'MIN30')
    expect(applied.totals.discount).toBe(5)
    await ctx.expectStatus(204, { method: 'DELETE', url: `${CARTS}/${cart.id}/items/${cart.items[1]!.id}` })
    const after = await getCart(ctx, cart.id)
    expect(after.totals).toEqual({ subtotal: 20, discount: 0, tax: 0, shipping: 0, total: 20 })
    expect(after.coupons[0]).toMatchObject({ code: 'MIN30', applicable: false, discount: 0 })
    expect(after.coupons[0]!.reason).toContain('30.00 USD')
  })

  test('at most five coupons per cart', async ({ ctx, admin }) => {
    const cart = await cartWith(ctx, admin, [100])
    for (let index = 0; index < 5; index++) {
      await applyCoupon(ctx, cart.id, (await createCoupon(ctx, { type: 'percentage', percentOffPpm: 10_000 })).code!)
    }
    const sixth = await createCoupon(ctx, { type: 'percentage', percentOffPpm: 10_000 })
    const error = await ctx.expectError(400, 'validation_error', {
      method: 'POST',
      url: `${CARTS}/${cart.id}/coupons`,
      payload: { code: sixth.code },
    })
    expect(error.message).toBe('A cart holds at most 5 coupons')
  })
})

describe('tax from the shipping address', () => {
  test('PUT shipping-address applies the region rate over the country rate, on the discounted amounts', async ({ ctx, admin }) => {
    await ctx.handle.db.insert(taxRates).values([
      { country: 'US', region: null, ratePpm: 50_000, name: 'US' },
      { country: 'US', region: 'NY', ratePpm: 88_750, name: 'New York' },
    ])
    await createCoupon(ctx, { code: 'TAXTEST', type: 'percentage', percentOffPpm: 200_000 })
    const cart = await cartWith(ctx, admin, [10, 5.55])
    await applyCoupon(ctx, cart.id, 'TAXTEST')
    const updated = await ctx.expectStatus<Cart>(200, { method: 'PUT', url: `${CARTS}/${cart.id}/shipping-address`, payload: NY })
    expect(updated.shipping_address).toEqual({
      first_name: null,
      last_name: null,
      company: null,
      line1: '1 Main St',
      line2: null,
      city: 'New York',
      region: 'NY',
      postal_code: '10001',
      country: 'US',
      phone: null,
    })
    // Lines 10.00 and 5.55, 20 % off: 8.00 and 4.44; tax 8.875 %: 0.71 and 0.39405 -> 0.39.
    expect(updated.items.map((item) => [item.discount, item.tax])).toEqual([
      [2, 0.71],
      [1.11, 0.39],
    ])
    expect(updated.totals).toEqual({ subtotal: 15.55, discount: 3.11, tax: 1.1, shipping: 0, total: 13.54 })
    const texas = await ctx.expectStatus<Cart>(200, {
      method: 'PUT',
      url: `${CARTS}/${cart.id}/shipping-address`,
      payload: { ...NY, region: 'TX' },
    })
    expect(texas.totals.tax).toBe(0.62)
    const canada = await ctx.expectStatus<Cart>(200, {
      method: 'PUT',
      url: `${CARTS}/${cart.id}/shipping-address`,
      payload: { ...NY, country: 'CA', region: 'ON' },
    })
    expect(canada.totals.tax).toBe(0)
  })

  test("a rate with order rounding rounds the cart's tax once and shares it over the lines", async ({ ctx, admin }) => {
    await ctx.handle.db.insert(taxRates).values([
      { country: 'PT', ratePpm: 50_000, name: 'PT by line' },
      { country: 'PT', region: 'Madeira', ratePpm: 50_000, name: 'Madeira by order', rounding: 'order' },
    ])
    const cart = await cartWith(ctx, admin, [0.1, 0.1, 0.1], 'EUR')
    const url = `${CARTS}/${cart.id}/shipping-address`
    const lisbon = { line1: '1 Rua Augusta', city: 'Lisboa', country: 'PT' }
    // 5 % of 0.10 is 0.005: rounded on each line, 0.01 three times.
    const byLine = await ctx.expectStatus<Cart>(200, { method: 'PUT', url, payload: lisbon })
    expect(byLine.items.map((item) => item.tax)).toEqual([0.01, 0.01, 0.01])
    expect(byLine.totals).toEqual({ subtotal: 0.3, discount: 0, tax: 0.03, shipping: 0, total: 0.33 })
    // Rounded once: 5 % of 0.30 is 0.015 -> 0.02, one cent each to the two lowest line ids.
    const byOrder = await ctx.expectStatus<Cart>(200, { method: 'PUT', url, payload: { ...lisbon, city: 'Funchal', region: 'Madeira' } })
    expect(byOrder.totals).toEqual({ subtotal: 0.3, discount: 0, tax: 0.02, shipping: 0, total: 0.32 })
    const lowestFirst = [...byOrder.items].sort((a, b) => (a.id < b.id ? -1 : 1))
    expect(lowestFirst.map((item) => item.tax)).toEqual([0.01, 0.01, 0])
  })

  test('an address needs line1, city and an ISO 3166-1 alpha-2 country', async ({ ctx }) => {
    const cart = await createCart(ctx)
    const url = `${CARTS}/${cart.id}/shipping-address`
    const missing = await ctx.expectError(400, 'validation_error', { method: 'PUT', url, payload: { city: 'X', country: 'US' } })
    expect(missing.message).toBe("Field 'line1' is required")
    for (const country of ['XX', 'us', 'USA']) {
      await ctx.expectError(400, 'validation_error', { method: 'PUT', url, payload: { ...NY, country } })
    }
    expect((await getCart(ctx, cart.id)).shipping_address).toBeNull()
  })
})

describe('PUT /api/v1/carts/:id/email', () => {
  test('sets the email; a malformed one is 400', async ({ ctx }) => {
    const cart = await createCart(ctx)
    const url = `${CARTS}/${cart.id}/email`
    expect((await ctx.expectStatus<Cart>(200, { method: 'PUT', url, payload: { email: 'a@example.com' } })).email).toBe('a@example.com')
    await ctx.expectError(400, 'validation_error', { method: 'PUT', url, payload: { email: 'not-an-email' } })
    expect((await getCart(ctx, cart.id)).email).toBe('a@example.com')
  })
})

describe('currencies with 0 and 3 decimals', () => {
  test('JPY and KWD carts price in whole yen and in fils', async ({ ctx, admin }) => {
    await ctx.handle.db.insert(taxRates).values({ country: 'JP', ratePpm: 100_000, name: 'JP' })
    const yen = await cartWith(ctx, admin, [1999, 501], 'JPY')
    const taxed = await ctx.expectStatus<Cart>(200, {
      method: 'PUT',
      url: `${CARTS}/${yen.id}/shipping-address`,
      payload: { line1: '1-1', city: 'Tokyo', country: 'JP' },
    })
    // 10 % of 1999 = 199.9 -> 200, of 501 = 50.1 -> 50.
    expect(taxed.totals).toEqual({ subtotal: 2500, discount: 0, tax: 250, shipping: 0, total: 2750 })
    const dinar = await cartWith(ctx, admin, [1.005, 2.25], 'KWD')
    expect(dinar.totals.subtotal).toBe(3.255)
  })
})

describe('shipping', () => {
  async function method(ctx: TestContext, values: Partial<typeof shippingMethods.$inferInsert> & { name: string }) {
    const [row] = await ctx.handle.db.insert(shippingMethods).values({ currency: 'GBP', ...values }).returning()
    return row!
  }

  test('GET /shipping/rates lists the methods that fit address, weight and currency, cheapest first', async ({ ctx, admin }) => {
    const standard = await method(ctx, { name: 'Standard', countries: ['GB'], basePriceMinor: 399, pricePerKgMinor: 100 })
    const express = await method(ctx, { name: 'Express', countries: ['GB', 'IE'], basePriceMinor: 999, estimatedDays: 1 })
    await method(ctx, { name: 'Light only', basePriceMinor: 100, maxWeightKg: 1 })
    await method(ctx, { name: 'France', countries: ['FR'], basePriceMinor: 1 })
    await method(ctx, { name: 'Retired', basePriceMinor: 1, isActive: false })
    await method(ctx, { name: 'Dollars', currency: 'USD', basePriceMinor: 1 })
    const anywhere = await method(ctx, { name: 'Anywhere', basePriceMinor: 2500, freeOverMinor: 10_000 })

    const product = await createProduct(ctx, admin, { title: 'Books', price: 30, currency: 'GBP', weight: 2.5, weight_unit: 'lb' })
    const cart = await createCart(ctx, { currency: 'GBP' })
    await addItem(ctx, cart.id, { product_id: product.id, quantity: 2 })
    const url = `/api/v1/shipping/rates?cart_id=${cart.id}`

    // No address: only methods that ship everywhere. 5 lb = 2.26796185 kg, so "Light only" is out.
    const noAddress = await ctx.expectStatus<{ rates: { name: string }[] }>(200, { method: 'GET', url })
    expect(noAddress.rates.map((rate) => rate.name)).toEqual(['Anywhere'])

    await ctx.expectStatus(200, {
      method: 'PUT',
      url: `${CARTS}/${cart.id}/shipping-address`,
      payload: { line1: '10 Downing St', city: 'London', country: 'GB' },
    })
    const rates = await ctx.expectStatus<{ rates: unknown[] }>(200, { method: 'GET', url })
    // Standard: 3.99 + 1.00/kg × 2.26796185 kg = 6.2579... -> 6.26.
    expect(rates.rates).toEqual([
      { id: standard.id, name: 'Standard', amount: 6.26, currency: 'GBP', estimated_days: null },
      { id: express.id, name: 'Express', amount: 9.99, currency: 'GBP', estimated_days: 1 },
      { id: anywhere.id, name: 'Anywhere', amount: 25, currency: 'GBP', estimated_days: null },
    ])

    // Over 100.00 of goods the "Anywhere" method is free.
    await ctx.expectStatus(200, {
      method: 'PATCH',
      url: `${CARTS}/${cart.id}/items/${(await getCart(ctx, cart.id)).items[0]!.id}`,
      payload: { quantity: 4 },
    })
    const free = await ctx.expectStatus<{ rates: { name: string; amount: number }[] }>(200, { method: 'GET', url })
    expect(free.rates[0]).toMatchObject({ name: 'Anywhere', amount: 0 })
  })

  test('rates need a visible cart: a missing cart_id is 400, another customer’s cart 404', async ({ ctx }) => {
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: '/api/v1/shipping/rates' })
    const owner = await ctx.signIn('customer')
    const other = await ctx.signIn('customer')
    const cart = await createCart(ctx, { currency: 'USD' }, owner.token)
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `/api/v1/shipping/rates?cart_id=${cart.id}`, token: other.token })
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `/api/v1/shipping/rates?cart_id=${UNKNOWN_ID}` })
  })

  test('a chosen method adds shipping to the totals, a free-shipping coupon waives it, a new address drops it', async ({ ctx, admin }) => {
    const courier = await method(ctx, { name: 'Courier', currency: 'USD', basePriceMinor: 750 })
    await createCoupon(ctx, { code: 'SHIPFREE', type: 'free_shipping' })
    const cart = await cartWith(ctx, admin, [40])
    await ctx.handle.db.update(carts).set({ shippingMethodId: courier.id }).where(eq(carts.id, cart.id))
    expect((await getCart(ctx, cart.id)).totals).toEqual({ subtotal: 40, discount: 0, tax: 0, shipping: 7.5, total: 47.5 })
    const waived = await applyCoupon(ctx, cart.id, 'SHIPFREE')
    expect(waived.totals).toEqual({ subtotal: 40, discount: 0, tax: 0, shipping: 0, total: 40 })
    expect(waived.coupons[0]).toMatchObject({ code: 'SHIPFREE', type: 'free_shipping', value: null, discount: 7.5 })
    const moved = await ctx.expectStatus<Cart>(200, { method: 'PUT', url: `${CARTS}/${cart.id}/shipping-address`, payload: NY })
    expect(moved.shipping_method_id).toBeNull()
  })
})

describe('a checked-out cart', () => {
  test('no longer changes: every write is 409', async ({ ctx, admin }) => {
    const cart = await cartWith(ctx, admin, [5])
    await ctx.handle.db.update(carts).set({ completedAt: new Date() }).where(eq(carts.id, cart.id))
    const product = await createProduct(ctx, admin, { title: 'Late', price: 1 })
    const error = await ctx.expectError(409, 'conflict', {
      method: 'POST',
      url: `${CARTS}/${cart.id}/items`,
      payload: { product_id: product.id, quantity: 1 },
    })
    expect(error.message).toBe('This cart was checked out and can no longer change')
    await ctx.expectError(409, 'conflict', { method: 'PUT', url: `${CARTS}/${cart.id}/email`, payload: { email: 'x@example.com' } })
    expect((await getCart(ctx, cart.id)).completed_at).not.toBeNull()
  })
})
