/**
 * Broken object-level authorization (OWASP API1): every route a customer may call with the id of
 * a record someone owns answers another customer 404 and changes nothing. The routes come from
 * the access table, so a new route that takes an id must be listed here, as owned (with B's ids
 * and a valid body) or as holding nothing owned (with the reason), or this test fails.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect } from 'vitest'
import { ACCESS } from '../src/access.js'
import { test, type TestContext } from './helpers.js'

const ADDRESS = { first_name: 'Bea', last_name: 'Baker', line1: '2 Quay St', city: 'Cork', postal_code: 'T12', country: 'IE' }

/** Routes with an id that hold nothing a customer owns: the catalog, and parcel tracking by number. */
const NOT_OWNED: Record<string, string> = {
  'GET /api/v1/products/:id': 'the public catalog',
  'GET /api/v1/products/:id/variants': 'the public catalog',
  'GET /api/v1/products/:id/images': 'the public catalog',
  'GET /api/v1/products/by-slug/:slug': 'the public catalog',
  'GET /api/v1/collections/:id': 'the public catalog',
  'GET /api/v1/collections/by-slug/:slug': 'the public catalog',
  'PUT /api/v1/uploads/:id': "a presigned upload: its own secret (Upload-Token) is the credential, and it holds only the file sent",
  'GET /api/v1/categories/:id': 'the public catalog',
  'GET /api/v1/shipping/tracking/:tracking_number': 'a carrier tracking page: the number is the secret, the answer holds no order data',
  'POST /api/v1/payments/webhooks/:provider': "the payment provider's signed notifications: the signature is the credential, the answer holds no data",
  'POST /api/v1/invoices/lookup': 'a draft order’s payment link: the random token in the body is the credential, the answer holds lines and totals, no customer data',
  'POST /api/v1/invoices/payments': 'paying through a draft order’s payment link: the random token in the body is the credential',
  // CSV exports and imports: the handler checks the scope of their resource, which no customer holds (403, csv.test.ts).
  ...Object.fromEntries(
    ['GET /api/v1/exports/:id', 'GET /api/v1/exports/:id/file', 'DELETE /api/v1/exports/:id', 'GET /api/v1/imports/:id', 'GET /api/v1/imports/:id/rows', 'POST /api/v1/imports/:id/apply', 'DELETE /api/v1/imports/:id'].map(
      (key) => [key, "staff only: the scope of the export's or import's resource, which a customer's token never holds"],
    ),
  ),
}

interface Owned {
  /** B's record for each path parameter. */
  ids: Record<string, string>
  body?: unknown
  headers?: Record<string, string>
}

interface Scene {
  /** The tokens of customer A (Alice) and of customer B (Bea). */
  alice: string
  bea: string
  /** Every owned route with B's ids, from B's real records. */
  owned: Record<string, Owned>
}

/** `scene` is made before the first test: B's records, reached through every owned route. */
const it = test.extend<{ scene: Scene }>({
  scene: [
    async ({ ctx }, use) => {
      const admin = (await ctx.signIn('admin')).token
      const alice = (await ctx.signIn('customer')).token
      const beaAccount = await ctx.signIn('customer')
      const bea = beaAccount.token
      const customerId = beaAccount.customerId!
      const as = (token: string) => ({ token })

      const product = await ctx.expectStatus<{ id: string }>(201, {
        method: 'POST', url: '/api/v1/products', ...as(admin), payload: { title: 'Owned lamp', price: 10, currency: 'EUR', inventory_quantity: 50 },
      })
      await ctx.expectStatus(201, { method: 'POST', url: '/api/v1/coupons', ...as(admin), payload: { code: 'BEA10', type: 'percentage', value: 10 } })
      const address = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/customers/me/addresses', ...as(bea), payload: ADDRESS })

      /** A cart of Bea's with one line and the coupon. */
      const cart = async () => {
        const created = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/carts', ...as(bea), payload: { currency: 'EUR' } })
        const withItem = await ctx.expectStatus<{ items: { id: string }[] }>(201, {
          method: 'POST', url: `/api/v1/carts/${created.id}/items`, ...as(bea), payload: { product_id: product.id, quantity: 1 },
        })
        const withCoupon = await ctx.expectStatus<{ coupons: { id: string }[] }>(201, {
          method: 'POST', url: `/api/v1/carts/${created.id}/coupons`, ...as(bea), payload: { code: 'BEA10' },
        })
        return { id: created.id, itemId: withItem.items[0]!.id, couponId: withCoupon.coupons[0]!.id }
      }
      const startCheckout = (cartId: string) =>
        ctx.expectStatus<{ id: string }>(201, {
          method: 'POST', url: '/api/v1/checkouts', ...as(bea), payload: { cart_id: cartId, email: 'bea@example.com', shipping_address: ADDRESS },
        })

      const openCart = await cart()
      const openCheckout = await startCheckout((await cart()).id)
      const paidCheckout = await startCheckout((await cart()).id)
      const order = await ctx.expectStatus<{ id: string; items: { id: string }[] }>(201, {
        method: 'POST', url: `/api/v1/checkouts/${paidCheckout.id}/complete`, ...as(bea),
        headers: { 'idempotency-key': `bola-${randomUUID()}` }, payload: { payment: { method: 'card', token: 'tok_visa' } },
      })

      // Shipped, with a return of Bea's.
      await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/orders/${order.id}/fulfillments`, ...as(admin), payload: { carrier: 'DHL', tracking_number: 'JD0001' } })
      const returnItems = [{ line_id: order.items[0]!.id, quantity: 1 }]
      const beaReturn = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: `/api/v1/orders/${order.id}/returns`, ...as(bea), payload: { items: returnItems } })
      const idempotent = () => ({ 'idempotency-key': `alice-${randomUUID()}` })
      const cartIds = { id: openCart.id, item_id: openCart.itemId, coupon_id: openCart.couponId }
      const owned: Record<string, Owned> = {
        'GET /api/v1/carts/:id': { ids: cartIds },
        'POST /api/v1/carts/:id/items': { ids: cartIds, body: { product_id: product.id, quantity: 1 } },
        'PATCH /api/v1/carts/:id/items/:item_id': { ids: cartIds, body: { quantity: 3 } },
        'DELETE /api/v1/carts/:id/items/:item_id': { ids: cartIds },
        'POST /api/v1/carts/:id/coupons': { ids: cartIds, body: { code: 'BEA10' } },
        'DELETE /api/v1/carts/:id/coupons/:coupon_id': { ids: cartIds },
        'PUT /api/v1/carts/:id/shipping-address': { ids: cartIds, body: ADDRESS },
        'PUT /api/v1/carts/:id/email': { ids: cartIds, body: { email: 'alice@example.com' } },
        'GET /api/v1/checkouts/:id': { ids: { id: openCheckout.id } },
        'POST /api/v1/checkouts/:id/shipping': { ids: { id: openCheckout.id }, body: { rate_id: randomUUID() } },
        'POST /api/v1/checkouts/:id/complete': {
          ids: { id: openCheckout.id }, headers: idempotent(), body: { payment: { method: 'card', token: 'tok_visa' } },
        },
        'GET /api/v1/orders/:id': { ids: { id: order.id } },
        'POST /api/v1/orders/:id/payments': { ids: { id: order.id }, headers: idempotent(), body: { method: 'card', token: 'tok_visa' } },
        'GET /api/v1/orders/:id/payments': { ids: { id: order.id } },
        'GET /api/v1/orders/:id/fulfillments': { ids: { id: order.id } },
        'POST /api/v1/orders/:id/returns': { ids: { id: order.id }, body: { items: returnItems } },
        'GET /api/v1/orders/:id/returns': { ids: { id: order.id } },
        'GET /api/v1/orders/:id/edits': { ids: { id: order.id } },
        'GET /api/v1/returns/:id': { ids: { id: beaReturn.id } },
        'POST /api/v1/returns/:id/cancel': { ids: { id: beaReturn.id } },
        'GET /api/v1/customers/:id': { ids: { id: customerId } },
        'PATCH /api/v1/customers/:id': { ids: { id: customerId }, body: { first_name: 'Alice' } },
        'GET /api/v1/customers/:id/addresses': { ids: { id: customerId } },
        'POST /api/v1/customers/:id/addresses': { ids: { id: customerId }, body: ADDRESS },
        'GET /api/v1/customers/:id/addresses/:address_id': { ids: { id: customerId, address_id: address.id } },
        'PATCH /api/v1/customers/:id/addresses/:address_id': { ids: { id: customerId, address_id: address.id }, body: { line2: 'Flat 9' } },
        'DELETE /api/v1/customers/:id/addresses/:address_id': { ids: { id: customerId, address_id: address.id } },
        'GET /api/v1/customers/me/addresses/:address_id': { ids: { address_id: address.id } },
        'PATCH /api/v1/customers/me/addresses/:address_id': { ids: { address_id: address.id }, body: { line2: 'Flat 9' } },
        'DELETE /api/v1/customers/me/addresses/:address_id': { ids: { address_id: address.id } },
      }
      // Ids in the body or the query rather than the path.
      owned['POST /api/v1/checkouts'] = { ids: {}, body: { cart_id: openCart.id, email: 'alice@example.com', shipping_address: ADDRESS } }
      owned[`GET /api/v1/shipping/rates?cart_id=${openCart.id}`] = { ids: {} }
      await use({ alice, bea, owned })
    },
    { scope: 'file', auto: true },
  ],
})

/** Every row of the tables that hold owned records, to show that a refused request changed none. */
async function snapshot(ctx: TestContext): Promise<string> {
  const tables = ['carts', 'cart_items', 'cart_coupons', 'checkouts', 'orders', 'order_items', 'payments', 'returns', 'return_items', 'customers', 'customer_addresses', 'events']
  const rows = await Promise.all(
    tables.map((table) => ctx.handle.sql.unsafe(`select coalesce(md5(string_agg(t::text, ',' order by t::text)), '') as sum from ${table} t`)),
  )
  return rows.map((row, index) => `${tables[index]}:${String(row[0]!.sum)}`).join(' ')
}

/** The routes a customer may reach that take an id (of the access table, not those needing a scope). */
const routesWithIds = Object.entries(ACCESS)
  .filter(([key, access]) => key.includes('/:') && access.kind !== 'scope' && key.startsWith(`${key.split(' ')[0]} /api/v1/`))
  .map(([key]) => key)

describe('customer A using customer B’s ids', () => {
  it('every route of the access table that takes an id is either owned (tested below) or holds nothing owned', ({ scene: { owned } }) => {
    const unlisted = routesWithIds.filter((key) => !(key in owned) && !(key in NOT_OWNED))
    expect(unlisted, 'add each to `owned` (with B’s ids and a valid body) or to NOT_OWNED (with the reason)').toEqual([])
  })

  it('gets 404 on every owned route, B gets through on the same ids, and nothing changes', async ({ ctx, scene: { alice, bea, owned } }) => {
    const before = await snapshot(ctx)
    const answers: string[] = []
    for (const [key, route] of Object.entries(owned)) {
      const [method, pattern] = key.split(' ') as [string, string]
      const url = pattern.replace(/:(\w+)/g, (_, name: string) => route.ids[name]!)
      const response = await ctx.request({ method: method as 'GET', url, token: alice, headers: route.headers, payload: route.body as object })
      answers.push(`${key} → ${response.statusCode} ${response.statusCode === 404 ? (response.json() as { error: { code: string } }).error.code : response.body}`)
    }
    expect(answers).toEqual(Object.keys(owned).map((key) => `${key} → 404 not_found`))
    expect(await snapshot(ctx)).toBe(before)

    // The ids are B's real records: B reads each of them.
    for (const [key, route] of Object.entries(owned)) {
      const [method, pattern] = key.split(' ') as [string, string]
      if (method !== 'GET') continue
      const url = pattern.replace(/:(\w+)/g, (_, name: string) => route.ids[name]!)
      const response = await ctx.request({ method: 'GET', url, token: bea })
      expect(`${key} → ${response.statusCode}`).toBe(`${key} → 200`)
    }
  })
})
