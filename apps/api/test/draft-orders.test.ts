/** Draft orders: pricing, completion (stock, races, idempotency, mark paid), manual refunds, and the public payment link. */
import { randomUUID } from 'node:crypto'
import { describe, expect } from 'vitest'
import { hashAccountToken, type DraftOrder, type DraftOrderInvoice, type DraftOrderList, type Invoice, type Order, type PaymentProvider, type Product } from '@commerce/domain'
import { createNotifications, customerGroupMembers, customerGroups, newId, priceLists, prices, shippingMethods, sqlOf, taxRates } from '@commerce/db'
import { testProvider } from '@commerce/payments'
import { test, type TestContext } from './helpers.js'

/** The test provider, counting what reaches it: a manual payment's refund must not. */
const calls = { authorize: 0, refund: 0, cancel: 0 }
const countingProvider: PaymentProvider = {
  ...testProvider,
  name: testProvider.name,
  authorize: (request) => (calls.authorize++, testProvider.authorize(request)),
  refund: (request) => (calls.refund++, testProvider.refund(request)),
  cancel: (request) => (calls.cancel++, testProvider.cancel(request)),
}
test.scoped({ contextOptions: { build: { paymentProvider: countingProvider } } })

const DRAFTS = '/api/v1/draft-orders'
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000beef'
const ADDRESS = { first_name: 'Ada', last_name: 'Lovelace', line1: '1 Rue de Rivoli', city: 'Paris', postal_code: '75001', country: 'FR' }
const key = () => ({ 'idempotency-key': `draft-${randomUUID()}` })

function createProduct(ctx: TestContext, admin: string, payload: Record<string, unknown>): Promise<Product> {
  return ctx.expectStatus(201, { method: 'POST', url: '/api/v1/products', payload: { currency: 'EUR', ...payload }, token: admin })
}

async function stockOf(ctx: TestContext, productId: string): Promise<number> {
  const [row] = await ctx.handle.sql<{ n: number }[]>`select inventory_quantity as n from products where id = ${productId}`
  return row!.n
}

function createDraft(ctx: TestContext, admin: string, payload: Record<string, unknown>): Promise<DraftOrder> {
  return ctx.expectStatus(201, { method: 'POST', url: DRAFTS, payload: { currency: 'EUR', email: 'buyer@example.com', ...payload }, token: admin })
}

function complete(ctx: TestContext, admin: string, id: string, payload: Record<string, unknown> = {}, headers: Record<string, string> = key()) {
  return ctx.request({ method: 'POST', url: `${DRAFTS}/${id}/complete`, payload, headers, token: admin })
}

function getDraft(ctx: TestContext, admin: string, id: string): Promise<DraftOrder> {
  return ctx.expectStatus(200, { method: 'GET', url: `${DRAFTS}/${id}`, token: admin })
}

function sendInvoice(ctx: TestContext, admin: string, id: string): Promise<DraftOrderInvoice> {
  return ctx.expectStatus(200, { method: 'POST', url: `${DRAFTS}/${id}/send-invoice`, token: admin })
}

function payInvoice(ctx: TestContext, token: string, body: Record<string, unknown>, headers: Record<string, string> = key()) {
  return ctx.request({ method: 'POST', url: '/api/v1/invoices/payments', payload: { invoice_token: token, ...body }, headers })
}

const tokenOf = (url: string) => url.split('/invoices/')[1]!

/** France at 20 %, Colissimo at 4.90, a 9.99 and a 5.00 product with 10 of each. */
async function shop(ctx: TestContext, admin: string) {
  await ctx.handle.db.insert(taxRates).values({ country: 'FR', ratePpm: 200_000, name: 'TVA' }).onConflictDoNothing()
  const [colissimo] = await ctx.handle.db.insert(shippingMethods).values({ name: 'Colissimo', currency: 'EUR', countries: ['FR'], basePriceMinor: 490 }).returning()
  const tin = await createProduct(ctx, admin, { title: 'Croissant tin', price: 9.99, inventory_quantity: 10, sku: `TIN-${randomUUID()}` })
  const jam = await createProduct(ctx, admin, { title: 'Jam', price: 5, inventory_quantity: 10 })
  return { colissimo: colissimo!, tin, jam }
}

describe('pricing a draft', () => {
  test('a percentage discount, then a fixed one, shared over the lines before tax, exact to the cent; no stock taken, no order', async ({ ctx, admin }) => {
    const { colissimo, tin, jam } = await shop(ctx, admin)
    const ordersBefore = await ctx.countRows('orders')
    const draft = await createDraft(ctx, admin, {
      lines: [
        { product_id: tin.id, quantity: 3 },
        { product_id: jam.id, quantity: 1 },
      ],
      discount: { type: 'percentage', value: 10, reason: 'Phone order' },
      shipping_address: ADDRESS,
      shipping_method_id: colissimo.id,
      notes: 'Call before delivery',
    })
    // 29.97 + 5.00 = 34.97; 10 % = 3.497 -> 3.50, shared 3.00 / 0.50 (largest remainder);
    // tax 20 % of 26.97 = 5.394 -> 5.39 and of 4.50 = 0.90; shipping 4.90.
    expect(draft).toMatchObject({
      status: 'open',
      email: 'buyer@example.com',
      currency: 'EUR',
      discount: { type: 'percentage', value: 10, reason: 'Phone order', amount: 3.5 },
      shipping_method: { id: colissimo.id, name: 'Colissimo', amount: 4.9 },
      totals: { subtotal: 34.97, discount: 3.5, tax: 6.29, shipping: 4.9, total: 42.66 },
      order_id: null,
      invoice_sent_at: null,
      notes: 'Call before delivery',
    })
    expect(draft.lines).toEqual([
      expect.objectContaining({ product_id: tin.id, title: 'Croissant tin', sku: tin.sku, quantity: 3, unit_price: 9.99, line_total: 29.97, discount: 3, tax: 5.39, total: 32.36 }),
      expect.objectContaining({ product_id: jam.id, title: 'Jam', quantity: 1, unit_price: 5, line_total: 5, discount: 0.5, tax: 0.9, total: 5.4 }),
    ])

    const fixed = await ctx.expectStatus<DraftOrder>(200, {
      method: 'PATCH',
      url: `${DRAFTS}/${draft.id}`,
      payload: { discount: { type: 'fixed_amount', value: 5, reason: 'Loyal customer' } },
      token: admin,
    })
    // 5.00 shared 4.29 / 0.71; tax 20 % of 25.68 = 5.136 -> 5.14 and of 4.29 = 0.858 -> 0.86.
    expect(fixed.discount).toEqual({ type: 'fixed_amount', value: 5, reason: 'Loyal customer', amount: 5 })
    expect(fixed.totals).toEqual({ subtotal: 34.97, discount: 5, tax: 6, shipping: 4.9, total: 40.87 })
    expect(fixed.lines.map((line) => [line.discount, line.tax, line.total])).toEqual([
      [4.29, 5.14, 30.82],
      [0.71, 0.86, 5.15],
    ])
    // A fixed discount never takes more than the lines.
    const capped = await ctx.expectStatus<DraftOrder>(200, {
      method: 'PATCH',
      url: `${DRAFTS}/${draft.id}`,
      payload: { discount: { type: 'fixed_amount', value: 100 }, shipping_method_id: null },
      token: admin,
    })
    expect(capped.totals).toEqual({ subtotal: 34.97, discount: 34.97, tax: 0, shipping: 0, total: 0 })
    expect(capped.discount?.amount).toBe(34.97)

    expect(await stockOf(ctx, tin.id)).toBe(10)
    expect(await ctx.countRows('orders')).toBe(ordersBefore)
  })

  test('a line keeps the price it was added at when the catalog changes; a new line takes today’s; clearing the discount and address', async ({ ctx, admin }) => {
    const { tin, jam } = await shop(ctx, admin)
    const draft = await createDraft(ctx, admin, { lines: [{ product_id: tin.id, quantity: 1 }], shipping_address: ADDRESS })
    expect(draft.totals).toEqual({ subtotal: 9.99, discount: 0, tax: 2, shipping: 0, total: 11.99 })
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/products/${tin.id}`, payload: { price: 12 }, token: admin })
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/products/${jam.id}`, payload: { price: 6 }, token: admin })
    const changed = await ctx.expectStatus<DraftOrder>(200, {
      method: 'PATCH',
      url: `${DRAFTS}/${draft.id}`,
      payload: { lines: [{ product_id: tin.id, quantity: 2 }, { product_id: jam.id, quantity: 1 }], shipping_address: null },
      token: admin,
    })
    expect(changed.lines.map((line) => [line.title, line.quantity, line.unit_price])).toEqual([
      ['Croissant tin', 2, 9.99],
      ['Jam', 1, 6],
    ])
    // No address: no tax.
    expect(changed.totals).toEqual({ subtotal: 25.98, discount: 0, tax: 0, shipping: 0, total: 25.98 })
    expect(changed.shipping_address).toBeNull()
  })

  test("lines are priced as the customer's cart would be in the draft's currency: a base price there, a quantity tier, the customer's group list", async ({ ctx, admin }) => {
    const mug = await createProduct(ctx, admin, { title: 'Diner mug', price: 12, currency: 'USD', inventory_quantity: 50 })
    await ctx.handle.db.insert(prices).values([
      { productId: mug.id, currency: 'EUR', amountMinor: 1100 },
      { productId: mug.id, currency: 'EUR', amountMinor: 1000, minQuantity: 10 },
    ])
    const guest = await createDraft(ctx, admin, { lines: [{ product_id: mug.id, quantity: 2 }] })
    expect(guest.lines.map((line) => [line.quantity, line.unit_price])).toEqual([[2, 11]])
    const bulk = await createDraft(ctx, admin, { lines: [{ product_id: mug.id, quantity: 10 }] })
    expect(bulk.lines.map((line) => [line.quantity, line.unit_price])).toEqual([[10, 10]])

    const trade = await ctx.signIn('customer')
    const [group] = await ctx.handle.db.insert(customerGroups).values({ name: `Trade ${randomUUID().slice(0, 8)}` }).returning()
    await ctx.handle.db.insert(customerGroupMembers).values({ groupId: group!.id, customerId: trade.customerId! })
    const [list] = await ctx.handle.db.insert(priceLists).values({ name: 'Trade prices', type: 'override', customerGroupIds: [group!.id] }).returning()
    await ctx.handle.db.insert(prices).values({ productId: mug.id, currency: 'EUR', amountMinor: 900, priceListId: list!.id })
    const theirs = await createDraft(ctx, admin, { customer_id: trade.customerId, lines: [{ product_id: mug.id, quantity: 2 }] })
    expect(theirs.lines.map((line) => line.unit_price)).toEqual([9])
    // Not a member, not the list's price.
    expect((await createDraft(ctx, admin, { lines: [{ product_id: mug.id, quantity: 2 }] })).lines.map((line) => line.unit_price)).toEqual([11])
    // A product without a price in the draft's currency is refused, naming the line.
    const yen = await createProduct(ctx, admin, { title: 'Yen thing', price: 500, currency: 'JPY', inventory_quantity: 2 })
    const refused = await ctx.expectError(400, 'currency_mismatch', {
      method: 'POST',
      url: DRAFTS,
      payload: { currency: 'EUR', email: 'buyer@example.com', lines: [{ product_id: yen.id, quantity: 1 }] },
      token: admin,
    })
    expect(refused.message).toBe("'Yen thing' has no price in EUR, the order's currency")
  })

  test('GET lists drafts newest first with a status filter; drafts are never orders; DELETE removes an open draft', async ({ ctx, admin }) => {
    const { tin } = await shop(ctx, admin)
    const first = await createDraft(ctx, admin, { lines: [{ product_id: tin.id, quantity: 1 }] })
    const second = await createDraft(ctx, admin, { lines: [{ product_id: tin.id, quantity: 1 }] })
    await sendInvoice(ctx, admin, second.id)
    const open = await ctx.expectStatus<DraftOrderList>(200, { method: 'GET', url: `${DRAFTS}?status=open&per_page=100`, token: admin })
    expect(open.draft_orders.map((draft) => draft.id)).toContain(first.id)
    expect(open.draft_orders.map((draft) => draft.id)).not.toContain(second.id)
    const sent = await ctx.expectStatus<DraftOrderList>(200, { method: 'GET', url: `${DRAFTS}?status=invoice_sent`, token: admin })
    expect(sent.draft_orders.map((draft) => draft.id)).toEqual([second.id])
    const all = await ctx.expectStatus<DraftOrderList>(200, { method: 'GET', url: `${DRAFTS}?per_page=1`, token: admin })
    expect(all.draft_orders.map((draft) => draft.id)).toEqual([second.id])
    expect(all.meta).toMatchObject({ page: 1, per_page: 1 })
    const orders = await ctx.expectStatus<{ orders: Order[] }>(200, { method: 'GET', url: '/api/v1/orders?per_page=100', token: admin })
    expect(orders.orders.map((order) => order.id)).not.toContain(first.id)

    await ctx.expectStatus(204, { method: 'DELETE', url: `${DRAFTS}/${first.id}`, token: admin })
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${DRAFTS}/${first.id}`, token: admin })
    await ctx.expectError(404, 'not_found', { method: 'DELETE', url: `${DRAFTS}/${first.id}`, token: admin })
  })

  test('email defaults to the customer’s; customer_id must name a customer', async ({ ctx, admin }) => {
    const { tin } = await shop(ctx, admin)
    const customer = await ctx.signIn('customer', `phone-${randomUUID()}@example.com`)
    const draft = await ctx.expectStatus<DraftOrder>(201, {
      method: 'POST',
      url: DRAFTS,
      payload: { currency: 'EUR', customer_id: customer.customerId, lines: [{ product_id: tin.id, quantity: 1 }] },
      token: admin,
    })
    expect(draft.customer_id).toBe(customer.customerId)
    expect(draft.email).toMatch(/^phone-.*@example\.com$/)
    await ctx.expectInvalidField(
      { method: 'POST', url: DRAFTS, payload: { currency: 'EUR', customer_id: UNKNOWN_ID, lines: [{ product_id: tin.id, quantity: 1 }] }, token: admin },
      'customer_id',
      'draft_orders',
    )
  })
})

describe('POST /draft-orders/:id/complete', () => {
  test('places a pending order at the draft’s prices, takes the stock, writes order.created, completes the draft', async ({ ctx, admin }) => {
    const { colissimo, tin, jam } = await shop(ctx, admin)
    const draft = await createDraft(ctx, admin, {
      lines: [{ product_id: tin.id, quantity: 3 }, { product_id: jam.id, quantity: 1 }],
      discount: { type: 'percentage', value: 10 },
      shipping_address: ADDRESS,
      shipping_method_id: colissimo.id,
    })
    // The catalog price moves after the quote: the order keeps the draft's.
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/products/${tin.id}`, payload: { price: 20 }, token: admin })
    const response = await complete(ctx, admin, draft.id)
    expect(response.statusCode, response.body).toBe(201)
    const order = response.json<Order>()
    expect(order).toMatchObject({
      status: 'pending',
      payment_status: 'unpaid',
      email: 'buyer@example.com',
      totals: { subtotal: 34.97, discount: 3.5, tax: 6.29, shipping: 4.9, total: 42.66 },
      shipping_method: { id: colissimo.id, name: 'Colissimo', amount: 4.9 },
      payments: [],
    })
    expect(order.order_number).toMatch(/^\d+$/)
    expect(order.items.map((item) => [item.title, item.quantity, item.unit_price, item.discount, item.tax, item.total])).toEqual([
      ['Croissant tin', 3, 9.99, 3, 5.39, 32.36],
      ['Jam', 1, 5, 0.5, 0.9, 5.4],
    ])
    expect(order.billing_address).toEqual(order.shipping_address)
    expect(await stockOf(ctx, tin.id)).toBe(7)
    expect(await stockOf(ctx, jam.id)).toBe(9)
    expect(await ctx.orderEvents(order.id)).toEqual(['order.created'])
    expect(await getDraft(ctx, admin, draft.id)).toMatchObject({ status: 'completed', order_id: order.id })
    // A completed draft no longer changes or goes.
    await ctx.expectError(409, 'conflict', { method: 'PATCH', url: `${DRAFTS}/${draft.id}`, payload: { notes: 'late' }, token: admin })
    await ctx.expectError(409, 'conflict', { method: 'DELETE', url: `${DRAFTS}/${draft.id}`, token: admin })
  })

  test('short of stock: 409 naming the line, and nothing kept (no order, stock unchanged, draft still open)', async ({ ctx, admin }) => {
    const { tin } = await shop(ctx, admin)
    const scarce = await createProduct(ctx, admin, { title: 'Last tin', price: 3, inventory_quantity: 1 })
    const draft = await createDraft(ctx, admin, { lines: [{ product_id: tin.id, quantity: 1 }, { product_id: scarce.id, quantity: 2 }] })
    const before = { orders: await ctx.countRows('orders'), events: await ctx.countRows('events') }
    const response = await complete(ctx, admin, draft.id)
    expect(response.statusCode, response.body).toBe(409)
    const { error } = response.json<{ error: { code: string; details: { field: string }[] } }>()
    expect(error.code).toBe('insufficient_inventory')
    expect(error.details).toEqual([expect.objectContaining({ field: 'lines[1]' })])
    expect(await ctx.countRows('orders')).toBe(before.orders)
    expect(await ctx.countRows('events')).toBe(before.events)
    expect(await stockOf(ctx, tin.id)).toBe(10)
    expect(await stockOf(ctx, scarce.id)).toBe(1)
    expect(await getDraft(ctx, admin, draft.id)).toMatchObject({ status: 'open', order_id: null })
  })

  test('two drafts completed at once for the last unit: exactly one order', async ({ ctx, admin, baseUrl }) => {
    const last = await createProduct(ctx, admin, { title: 'The last one', price: 50, inventory_quantity: 1 })
    const drafts = [await createDraft(ctx, admin, { lines: [{ product_id: last.id, quantity: 1 }] }), await createDraft(ctx, admin, { lines: [{ product_id: last.id, quantity: 1 }] })]
    const before = await ctx.countRows('orders')
    const answers = await Promise.all(
      drafts.map((draft) =>
        fetch(`${baseUrl}${DRAFTS}/${draft.id}/complete`, {
          method: 'POST',
          headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json', ...key() },
          body: '{}',
        }),
      ),
    )
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409])
    expect(await ctx.countRows('orders')).toBe(before + 1)
    expect(await stockOf(ctx, last.id)).toBe(0)
    const after = await Promise.all(drafts.map((draft) => getDraft(ctx, admin, draft.id)))
    expect(after.map((draft) => draft.status).sort()).toEqual(['completed', 'open'])
  })

  test('completing twice: the same key replays the order; another key is 409; one order', async ({ ctx, admin }) => {
    const { tin } = await shop(ctx, admin)
    const draft = await createDraft(ctx, admin, { lines: [{ product_id: tin.id, quantity: 2 }] })
    const ordersBefore = await ctx.countRows('orders')
    const headers = key()
    const first = await complete(ctx, admin, draft.id, {}, headers)
    expect(first.statusCode, first.body).toBe(201)
    const replay = await complete(ctx, admin, draft.id, {}, headers)
    expect(replay.statusCode).toBe(201)
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(replay.body).toBe(first.body)
    const other = await complete(ctx, admin, draft.id)
    expect(other.statusCode).toBe(409)
    expect(other.json().error.code).toBe('conflict')
    const fromDraft = await ctx.handle.sql<{ id: string }[]>`select o.id from orders o join draft_orders d on d.order_id = o.id where d.id = ${draft.id}`
    expect(fromDraft).toEqual([{ id: first.json<Order>().id }])
    expect(await ctx.countRows('orders')).toBe(ordersBefore + 1)
    expect(await stockOf(ctx, tin.id)).toBe(8)
  })

  test('a draft without an email is 409 naming email; nothing kept', async ({ ctx, admin }) => {
    const { tin } = await shop(ctx, admin)
    const draft = await ctx.expectStatus<DraftOrder>(201, { method: 'POST', url: DRAFTS, payload: { currency: 'EUR', lines: [{ product_id: tin.id, quantity: 1 }] }, token: admin })
    expect(draft.email).toBeNull()
    const response = await complete(ctx, admin, draft.id)
    expect(response.statusCode).toBe(409)
    expect(response.json().error.details).toEqual([expect.objectContaining({ field: 'email' })])
    expect(await stockOf(ctx, tin.id)).toBe(10)
  })
})

describe('mark_paid: a payment made outside the provider', () => {
  test('the order is paid by a captured manual payment; refunding it is recorded without calling the provider', async ({ ctx, admin }) => {
    const { tin } = await shop(ctx, admin)
    const draft = await createDraft(ctx, admin, { lines: [{ product_id: tin.id, quantity: 2 }], shipping_address: ADDRESS })
    const authorizeCalls = calls.authorize
    const response = await complete(ctx, admin, draft.id, { mark_paid: true })
    expect(response.statusCode, response.body).toBe(201)
    const order = response.json<Order>()
    // 19.98 + 20 % (4.00) = 23.98
    expect(order).toMatchObject({ status: 'paid', payment_status: 'paid', amount_paid: 23.98, totals: { total: 23.98 } })
    expect(order.payments).toEqual([expect.objectContaining({ provider: 'manual', method: 'manual', status: 'captured', amount: 23.98, amount_captured: 23.98 })])
    expect(calls.authorize).toBe(authorizeCalls)
    expect(await ctx.orderEvents(order.id)).toEqual(['order.created', 'payment.succeeded', 'order.paid'])

    const refundCalls = calls.refund
    const partial = await ctx.expectStatus<{ amount: number }>(201, {
      method: 'POST',
      url: `/api/v1/payments/${order.payments[0]!.id}/refunds`,
      payload: { amount: 3.98, reason: 'Cash back at the counter' },
      headers: key(),
      token: admin,
    })
    expect(partial.amount).toBe(3.98)
    await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/payments/${order.payments[0]!.id}/refunds`, payload: {}, headers: key(), token: admin })
    expect(calls.refund).toBe(refundCalls)
    const refunded = await ctx.expectStatus<Order>(200, { method: 'GET', url: `/api/v1/orders/${order.id}`, token: admin })
    expect(refunded).toMatchObject({ status: 'refunded', payment_status: 'refunded', amount_refunded: 23.98 })
    expect(refunded.payments[0]).toMatchObject({ status: 'refunded', amount_refunded: 23.98 })
    const references = await ctx.handle.sql<{ provider_reference: string | null }[]>`select provider_reference from refunds where order_id = ${order.id}`
    expect(references).toEqual([{ provider_reference: null }, { provider_reference: null }])
  })

  test('a draft discounted in full is marked paid without a payment', async ({ ctx, admin }) => {
    const { tin } = await shop(ctx, admin)
    const draft = await createDraft(ctx, admin, { lines: [{ product_id: tin.id, quantity: 1 }], discount: { type: 'percentage', value: 100, reason: 'Replacement' } })
    expect(draft.totals.total).toBe(0)
    const response = await complete(ctx, admin, draft.id, { mark_paid: true })
    expect(response.statusCode, response.body).toBe(201)
    expect(response.json<Order>()).toMatchObject({ status: 'paid', payment_status: 'paid', payments: [], amount_owed: 0 })
    expect(await ctx.orderEvents(response.json<Order>().id)).toEqual(['order.created', 'order.paid'])
  })

  test('cancelling a marked-paid order refunds the manual payment without the provider and restocks', async ({ ctx, admin }) => {
    const { tin } = await shop(ctx, admin)
    const draft = await createDraft(ctx, admin, { lines: [{ product_id: tin.id, quantity: 4 }] })
    const order = (await complete(ctx, admin, draft.id, { mark_paid: true })).json<Order>()
    expect(order.status).toBe('paid')
    expect(await stockOf(ctx, tin.id)).toBe(6)
    const refundCalls = calls.refund
    const cancelled = await ctx.expectStatus<Order>(200, { method: 'POST', url: `/api/v1/orders/${order.id}/cancel`, token: admin })
    expect(cancelled).toMatchObject({ status: 'cancelled', amount_refunded: 39.96, payment_status: 'refunded' })
    expect(calls.refund).toBe(refundCalls)
    expect(await stockOf(ctx, tin.id)).toBe(10)
    expect(await ctx.orderEvents(order.id)).toEqual(['order.created', 'payment.succeeded', 'order.paid', 'order.refunded', 'order.cancelled'])
  })
})

describe('the payment link', () => {
  test('send-invoice makes the link and its event; the public page shows lines and totals only; a declined card, then a good one, pay the order', async ({ ctx, admin }) => {
    const { tin } = await shop(ctx, admin)
    const customer = await ctx.signIn('customer')
    const draft = await createDraft(ctx, admin, {
      customer_id: customer.customerId,
      lines: [{ product_id: tin.id, quantity: 2 }],
      discount: { type: 'fixed_amount', value: 1.98 },
      shipping_address: ADDRESS,
    })
    const sent = await sendInvoice(ctx, admin, draft.id)
    expect(sent.status).toBe('invoice_sent')
    expect(sent.invoice_url).toMatch(/^https:\/\/shop\.example\/invoices\/[A-Za-z0-9_-]{43}$/)
    const token = tokenOf(sent.invoice_url)
    // Only the token's hash is kept, and a read of the draft does not show the link.
    const [stored] = await ctx.handle.sql<{ invoice_token_hash: string }[]>`select invoice_token_hash from draft_orders where id = ${draft.id}`
    expect(stored!.invoice_token_hash).toBe(hashAccountToken(token))
    expect(await getDraft(ctx, admin, draft.id)).not.toHaveProperty('invoice_url')
    const events = await ctx.handle.sql<{ id: string; kind: string; data: DraftOrderInvoice; customer_id: string }[]>`
      select id, kind, data, customer_id from events where resource_id = ${draft.id} order by id`
    expect(events).toEqual([
      { id: expect.any(String), kind: 'draft_order.invoice_sent', data: expect.objectContaining({ id: draft.id, invoice_url: sent.invoice_url }), customer_id: customer.customerId },
    ])
    // The worker's fan-out makes the invoice email to the draft's address from it.
    expect(await createNotifications(sqlOf(ctx.handle.db), [events[0]!.id], [newId()])).toBe(1)
    const mails = await ctx.handle.sql<{ template: string; recipient: string }[]>`select template, recipient from notifications where event_id = ${events[0]!.id}`
    expect(mails).toEqual([{ template: 'draft_order_invoice', recipient: 'buyer@example.com' }])

    // 19.98 - 1.98 = 18.00, + 20 % = 21.60
    const page = await ctx.expectStatus<Invoice>(200, { method: 'POST', url: '/api/v1/invoices/lookup', payload: { invoice_token: token } })
    expect(page).toEqual({
      status: 'open',
      currency: 'EUR',
      lines: [{ title: 'Croissant tin', variant_title: null, quantity: 2, unit_price: 9.99, total: 21.6 }],
      totals: { subtotal: 19.98, discount: 1.98, tax: 3.6, shipping: 0, total: 21.6 },
      amount_due: 21.6,
      order_number: null,
    })

    const declined = await payInvoice(ctx, token, { method: 'card', token: 'tok_declined' })
    expect(declined.statusCode, declined.body).toBe(402)
    expect(declined.json().error.code).toBe('payment_declined')
    const converted = await getDraft(ctx, admin, draft.id)
    expect(converted).toMatchObject({ status: 'completed', order_id: expect.any(String) })
    const pending = await ctx.expectStatus<Order>(200, { method: 'GET', url: `/api/v1/orders/${converted.order_id}`, token: admin })
    expect(pending).toMatchObject({ status: 'pending', customer_id: customer.customerId, totals: { total: 21.6 } })
    expect(pending.payments).toEqual([expect.objectContaining({ status: 'failed' })])
    expect(await stockOf(ctx, tin.id)).toBe(8)
    expect(await ctx.expectStatus<Invoice>(200, { method: 'POST', url: '/api/v1/invoices/lookup', payload: { invoice_token: token } })).toMatchObject({
      status: 'open',
      amount_due: 21.6,
      order_number: pending.order_number,
    })

    const paid = await payInvoice(ctx, token, { method: 'card', token: 'tok_visa' })
    expect(paid.statusCode, paid.body).toBe(201)
    expect(paid.json()).toMatchObject({ order_id: pending.id, status: 'captured', amount: 21.6, provider: 'test' })
    const order = await ctx.expectStatus<Order>(200, { method: 'GET', url: `/api/v1/orders/${pending.id}`, token: admin })
    expect(order).toMatchObject({ status: 'paid', payment_status: 'paid', amount_paid: 21.6 })
    expect(await ctx.orderEvents(order.id)).toEqual(['order.created', 'payment.failed', 'payment.succeeded', 'order.paid'])
    expect(await ctx.expectStatus<Invoice>(200, { method: 'POST', url: '/api/v1/invoices/lookup', payload: { invoice_token: token } })).toMatchObject({ status: 'paid', amount_due: 0 })
    // Paid: nothing more to take; the stock was taken once.
    await ctx.expectError(409, 'conflict', { method: 'POST', url: '/api/v1/invoices/payments', payload: { invoice_token: token, method: 'card', token: 'tok_visa' }, headers: key() })
    expect(await stockOf(ctx, tin.id)).toBe(8)

    // An edit adds a line to the paid order: the same link shows it due and takes it.
    await ctx.expectStatus(201, { method: 'POST', url: `/api/v1/orders/${order.id}/edits`, payload: { add: [{ product_id: tin.id, quantity: 1 }] }, headers: key(), token: admin })
    expect(await ctx.expectStatus<Invoice>(200, { method: 'POST', url: '/api/v1/invoices/lookup', payload: { invoice_token: token } })).toMatchObject({ status: 'open', amount_due: 11.99 })
    const balance = await payInvoice(ctx, token, { method: 'card', token: 'tok_visa' })
    expect(balance.statusCode, balance.body).toBe(201)
    expect(balance.json()).toMatchObject({ amount: 11.99 })
    expect(await ctx.expectStatus<Invoice>(200, { method: 'POST', url: '/api/v1/invoices/lookup', payload: { invoice_token: token } })).toMatchObject({ status: 'paid', amount_due: 0 })
  })

  test('sending again replaces the link: the old one is 404, the new one works', async ({ ctx, admin }) => {
    const { tin } = await shop(ctx, admin)
    const draft = await createDraft(ctx, admin, { lines: [{ product_id: tin.id, quantity: 1 }] })
    const old = tokenOf((await sendInvoice(ctx, admin, draft.id)).invoice_url)
    const fresh = tokenOf((await sendInvoice(ctx, admin, draft.id)).invoice_url)
    expect(fresh).not.toBe(old)
    await ctx.expectError(404, 'not_found', { method: 'POST', url: '/api/v1/invoices/lookup', payload: { invoice_token: old } })
    await ctx.expectError(404, 'not_found', { method: 'POST', url: '/api/v1/invoices/payments', payload: { invoice_token: old, method: 'card', token: 'tok_visa' }, headers: key() })
    expect(await stockOf(ctx, tin.id)).toBe(10)
    await ctx.expectStatus(200, { method: 'POST', url: '/api/v1/invoices/lookup', payload: { invoice_token: fresh } })
  })

  test('a completed draft’s link pays its pending order; once the order is cancelled the link is closed (409), as is sending it again', async ({ ctx, admin }) => {
    const { tin } = await shop(ctx, admin)
    const draft = await createDraft(ctx, admin, { lines: [{ product_id: tin.id, quantity: 1 }] })
    const order = (await complete(ctx, admin, draft.id)).json<Order>()
    const token = tokenOf((await sendInvoice(ctx, admin, draft.id)).invoice_url)
    expect(await getDraft(ctx, admin, draft.id)).toMatchObject({ status: 'completed', order_id: order.id })
    expect(await ctx.expectStatus<Invoice>(200, { method: 'POST', url: '/api/v1/invoices/lookup', payload: { invoice_token: token } })).toMatchObject({ status: 'open', amount_due: 9.99, order_number: order.order_number })
    await ctx.expectStatus(200, { method: 'POST', url: `/api/v1/orders/${order.id}/cancel`, token: admin })
    expect(await ctx.expectStatus<Invoice>(200, { method: 'POST', url: '/api/v1/invoices/lookup', payload: { invoice_token: token } })).toMatchObject({ status: 'closed', amount_due: 0 })
    await ctx.expectError(409, 'invalid_state_transition', { method: 'POST', url: '/api/v1/invoices/payments', payload: { invoice_token: token, method: 'card', token: 'tok_visa' }, headers: key() })
    await ctx.expectError(409, 'conflict', { method: 'POST', url: `${DRAFTS}/${draft.id}/send-invoice`, token: admin })
    expect(await stockOf(ctx, tin.id)).toBe(10)
  })

  test('a link short of stock is 409 and converts nothing', async ({ ctx, admin }) => {
    const scarce = await createProduct(ctx, admin, { title: 'One left', price: 3, inventory_quantity: 1 })
    const draft = await createDraft(ctx, admin, { lines: [{ product_id: scarce.id, quantity: 2 }] })
    const token = tokenOf((await sendInvoice(ctx, admin, draft.id)).invoice_url)
    const before = await ctx.countRows('orders')
    await ctx.expectError(409, 'insufficient_inventory', { method: 'POST', url: '/api/v1/invoices/payments', payload: { invoice_token: token, method: 'card', token: 'tok_visa' }, headers: key() })
    expect(await ctx.countRows('orders')).toBe(before)
    expect(await stockOf(ctx, scarce.id)).toBe(1)
    expect(await getDraft(ctx, admin, draft.id)).toMatchObject({ status: 'invoice_sent', order_id: null })
  })
})

describe('access and bad input', () => {
  test('customers and keys without the orders scopes are refused the admin routes; anonymous callers 401', async ({ ctx, admin, customer }) => {
    const { tin } = await shop(ctx, admin)
    const draft = await createDraft(ctx, admin, { lines: [{ product_id: tin.id, quantity: 1 }] })
    const payload = { currency: 'EUR', lines: [{ product_id: tin.id, quantity: 1 }] }
    for (const [method, url, body] of [
      ['GET', DRAFTS, undefined],
      ['POST', DRAFTS, payload],
      ['GET', `${DRAFTS}/${draft.id}`, undefined],
      ['PATCH', `${DRAFTS}/${draft.id}`, { notes: 'x' }],
      ['DELETE', `${DRAFTS}/${draft.id}`, undefined],
      ['POST', `${DRAFTS}/${draft.id}/send-invoice`, undefined],
    ] as const) {
      await ctx.expectError(403, 'forbidden', { method, url, payload: body, token: customer })
      await ctx.expectError(401, 'unauthorized', { method, url, payload: body })
    }
    await ctx.expectError(403, 'forbidden', { method: 'POST', url: `${DRAFTS}/${draft.id}/complete`, payload: {}, headers: key(), token: customer })
    const reader = await ctx.createApiKey(['orders:read'])
    await ctx.expectStatus(200, { method: 'GET', url: `${DRAFTS}/${draft.id}`, token: reader.key })
    await ctx.expectError(403, 'forbidden', { method: 'POST', url: DRAFTS, payload, token: reader.key })
    expect(await getDraft(ctx, admin, draft.id)).toMatchObject({ status: 'open', notes: null })
  })

  test('bad input is 400 in the error format, naming the field, and keeps nothing', async ({ ctx, admin }) => {
    const { tin } = await shop(ctx, admin)
    const lines = [{ product_id: tin.id, quantity: 1 }]
    const post = (payload: Record<string, unknown>) => ({ method: 'POST' as const, url: DRAFTS, payload: { currency: 'EUR', ...payload }, token: admin })
    await ctx.expectInvalidField(post({ lines, discount: { type: 'percentage', value: 150 } }), 'discount.value', 'draft_orders')
    await ctx.expectInvalidField(post({ lines, discount: { type: 'fixed_amount', value: 1.234 } }), 'discount.value', 'draft_orders')
    await ctx.expectInvalidField(post({ lines: [{ product_id: UNKNOWN_ID, quantity: 1 }] }), 'lines[0]', 'draft_orders')
    await ctx.expectInvalidField(post({ lines, surprise: true }), 'surprise', 'draft_orders')
    await ctx.expectInvalidField(post({ lines: [] }), 'lines', 'draft_orders')
    await ctx.expectInvalidField(post({ lines, currency: 'XYZ' }), 'currency', 'draft_orders')
    await ctx.expectInvalidField(post({ lines, shipping_method_id: UNKNOWN_ID, shipping_address: ADDRESS }), 'shipping_method_id', 'draft_orders')
    const dollars = await createProduct(ctx, admin, { title: 'Dollar thing', price: 5, currency: 'USD', inventory_quantity: 2 })
    await ctx.expectError(400, 'currency_mismatch', post({ lines: [{ product_id: dollars.id, quantity: 1 }] }))

    const draft = await createDraft(ctx, admin, { lines })
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url: `${DRAFTS}/${draft.id}`, payload: {}, token: admin })
    const missingKey = await ctx.expectError(400, 'validation_error', { method: 'POST', url: `${DRAFTS}/${draft.id}/complete`, payload: {}, token: admin })
    expect(missingKey.message).toContain('Idempotency-Key')
    await ctx.expectError(400, 'validation_error', { method: 'POST', url: `${DRAFTS}/${draft.id}/complete`, payload: { mark_paid: 'yes' }, headers: key(), token: admin })
    await ctx.expectError(400, 'validation_error', { method: 'POST', url: '/api/v1/invoices/lookup', payload: { invoice_token: 'not-a-token' } })
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${DRAFTS}?status=lost`, token: admin })
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${DRAFTS}/${UNKNOWN_ID}`, token: admin })
    expect(await getDraft(ctx, admin, draft.id)).toMatchObject({ status: 'open', order_id: null })
    expect(await stockOf(ctx, tin.id)).toBe(10)
  })
})
