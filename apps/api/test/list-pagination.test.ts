/**
 * Every list of the API walks by cursor (`after`) as by page number, generated from the OpenAPI
 * document: each GET whose answer has `meta` must take `after` and have its row in LISTS, so a new
 * list fails here until it does. Each list holds enough rows for several pages, with ties in its
 * sort key where it has one (the same created_at, the same name or priority), on a real database
 * over real HTTP.
 */
import { describe, expect } from 'vitest'
import { test, type TestContext } from './helpers.js'
import { cursorPage, expectCursorRefused, expectWellFormed, get, pageListing, walk, withQuery } from './list-walks.js'
import { insertOrder } from './order-fixtures.js'

const PER_PAGE = 2

/** The rows the lists are walked over, and whose lists they are. */
interface Seeded {
  shopper: { token: string; customerId: string }
  productId: string
  otherProductId: string
  shelfId: string
  orderId: string
  groupId: string
  priceListId: string
  promotionId: string
  importId: string
  webhookId: string
}

interface ListCase {
  /** The `{id}` of a list of one thing's (an order's payments, a group's customers). */
  of?: (seeded: Seeded) => string
  /** A customer's own list, walked with its token (else an admin's). */
  asShopper?: true
  /** Queries that keep part of the list: each walks like its own page listing too. */
  filters?: (seeded: Seeded) => string[]
  /** A list without page numbers (the movement log): its ids in its order, read from the database. */
  cursorOnly?: (ctx: TestContext) => Promise<string[]>
}

/** Every list of the API. A list route missing here fails the first test below. */
const LISTS: Record<string, ListCase> = {
  listAttributeDefinitions: { filters: () => ['owner=variant'] },
  listCampaigns: {},
  listCollections: {},
  listCategories: {},
  listCoupons: { filters: () => ['is_active=true'] },
  listCustomerGroups: { filters: () => ['q=o'] },
  listCustomerGroupCustomers: { of: (s) => s.groupId },
  listCustomers: { filters: () => ['search=listed'] },
  listCurrentCustomerAddresses: { asShopper: true },
  listCustomerAddresses: { of: (s) => s.shopper.customerId },
  listDraftOrders: { filters: () => ['status=open'] },
  listEvents: { filters: () => ['event=order.paid'] },
  listExports: {},
  listImports: {},
  listImportRows: { of: (s) => s.importId, filters: () => ['action=refuse'] },
  listInventoryLevels: { filters: (s) => [`location_id=${s.shelfId}`] },
  listInventoryMovements: {
    filters: () => ['reason=received'],
    cursorOnly: async (ctx) => (await ctx.handle.sql<{ id: string }[]>`select id::text as id from inventory_movements as movement order by movement.id desc`).map((row) => row.id),
  },
  listNotifications: { filters: () => ['template=order_shipped'] },
  listOrders: { filters: () => ['status=paid'] },
  listOrderEdits: { of: (s) => s.orderId },
  listOrderFulfillments: { of: (s) => s.orderId },
  getOrderHistory: { of: (s) => s.orderId },
  listOrderPayments: { of: (s) => s.orderId },
  listOrderReturns: { of: (s) => s.orderId },
  listPriceLists: { filters: () => ['is_active=true'] },
  listPriceListPrices: { of: (s) => s.priceListId, filters: (s) => ['currency=USD', `product_id=${s.otherProductId}`] },
  // A tag, a price or a facet request goes through the listing read model, with cursors of its own (its sorts: catalog-listing.test.ts).
  listProducts: { filters: () => ['search=listed', 'tag=listed', 'price_max=100&tag=listed', 'sort=newest&available=false&search=listed'] },
  listProductImages: { of: (s) => s.productId },
  listProductPrices: { of: (s) => s.productId, filters: () => ['currency=EUR'] },
  listProductVariants: { of: (s) => s.productId },
  listPromotions: { filters: () => ['automatic=true'] },
  listPromotionUsages: { of: (s) => s.promotionId },
  listReturns: { filters: () => ['status=approved'] },
  listShippingMethods: { filters: () => ['is_active=true'] },
  listStockLocations: {},
  listTaxRates: { filters: () => ['country=US'] },
  listUsers: { filters: () => ['role=customer'] },
  listWebhooks: {},
  listWebhookDeliveries: { of: (s) => s.webhookId, filters: () => ['status=failed'] },
}

/** Five rows of each list at least, most at three instants (two a microsecond apart): ties in created_at. */
async function seed(ctx: TestContext): Promise<Seeded> {
  const { sql } = ctx.handle
  const tied = sql`(array['2026-01-01T00:00:00.000001Z', '2026-01-01T00:00:00.000002Z', '2026-01-02T00:00:00Z']::timestamptz[])[1 + n % 3]`
  const rows = sql`generate_series(1, 5) as n`
  const one = async (query: Promise<{ id: string }[]>) => (await query)[0]!.id
  const shopper = await ctx.signIn('customer')

  // The catalog: a product's variants, images (positions shared) and prices; a price list's prices.
  await sql`
    insert into products (id, title, slug, price_minor, currency)
    select gen_random_uuid(), (case when n <= 5 then 'Listed ' else 'Plain ' end) || n, 'listed-' || n, 100, 'USD' from generate_series(1, 7) as n`
  const productId = await one(sql`select id from products where slug = 'listed-1'`)
  const otherProductId = await one(sql`select id from products where slug = 'listed-6'`)
  await sql`insert into product_variants (id, product_id, title) select gen_random_uuid(), ${productId}, 'Size ' || n from ${rows}`
  await sql`insert into product_images (id, product_id, url, position) select gen_random_uuid(), ${productId}, 'https://img.example/' || n || '.png', n % 2 from ${rows}`
  const [first, second] = await sql<{ id: string }[]>`select id from product_variants where product_id = ${productId} order by id limit 2`
  const priceListId = await one(sql`
    insert into price_lists (id, name, created_at, is_active) select gen_random_uuid(), 'List ' || n, ${tied}, n % 2 = 0 from ${rows} order by n returning id`)
  // The product-wide price and two variants', in two currencies and two tiers; base and listed.
  await sql`
    insert into prices (id, product_id, variant_id, price_list_id, currency, amount_minor, min_quantity)
    select gen_random_uuid(), ${productId}, variant, list, tier.currency, 500, tier.min_quantity
    from unnest(array[null, ${first!.id}, ${second!.id}]::uuid[]) as variant,
      unnest(array[null, ${priceListId}]::uuid[]) as list,
      (values ('USD', 1), ('USD', 10), ('EUR', 1)) as tier (currency, min_quantity)`
  await sql`
    insert into prices (id, product_id, price_list_id, currency, amount_minor, min_quantity)
    select gen_random_uuid(), ${otherProductId}, ${priceListId}, 'USD', 400, n from ${rows}`
  await sql`insert into categories (id, name, slug) select gen_random_uuid(), (array['Boots', 'boots', 'Boots', 'Alpha', 'alpha'])[n], 'listed-' || n from ${rows}`
  await sql`update products set tags = '{Listed}', title = (array['Listed boots', 'listed Boots', 'Listed alpha'])[1 + right(slug, 1)::int % 3] where slug like 'listed-%' and slug <> 'listed-7'`
  await sql`
    insert into attribute_definitions (id, key, owner, name, type, position)
    select gen_random_uuid(), 'listed_' || n, (case when n % 2 = 0 then 'variant' else 'product' end)::attribute_owner, 'Listed ' || n, 'text', n % 2 from ${rows}`
  await sql`insert into collections (id, title, slug, kind, created_at) select gen_random_uuid(), 'Listed ' || n, 'listed-' || n, 'manual', ${tied} from ${rows}`

  // Stock: locations of equal priority, the product's own level and two variants' at each, movements.
  await sql`insert into stock_locations (id, name, priority) select gen_random_uuid(), 'Shelf ' || n, n % 2 from ${rows}`
  const shelfId = await one(sql`select id from stock_locations where name = 'Shelf 2'`)
  await sql`
    insert into inventory_levels (id, location_id, product_id, variant_id)
    select gen_random_uuid(), location.id, ${productId}, variant
    from stock_locations as location, unnest(array[null, ${first!.id}, ${second!.id}]::uuid[]) as variant
    where location.name like 'Shelf %'`
  await sql`
    insert into inventory_movements (level_id, reason)
    select level.id, (case when n % 2 = 0 then 'received' else 'correction' end)::movement_reason
    from inventory_levels as level, ${rows} where level.product_id = ${productId} and level.location_id = ${shelfId}`

  // An order's payments, fulfillments, edits, returns and history; four more orders.
  const { order } = await insertOrder(ctx, { customerId: shopper.customerId, status: 'paid' })
  for (let i = 0; i < 4; i++) await insertOrder(ctx, { customerId: shopper.customerId, status: i % 2 === 0 ? 'paid' : 'pending' })
  await sql`
    insert into payments (id, order_id, provider, method, status, amount_minor, captured_minor, currency, created_at)
    select gen_random_uuid(), ${order.id}, 'test', 'card', 'captured', 100, 100, 'USD', ${tied} from ${rows}`
  await sql`insert into fulfillments (id, order_id, carrier, tracking_number) select gen_random_uuid(), ${order.id}, 'UPS', 'T' || n from ${rows}`
  await sql`
    insert into order_edits (id, order_id, changes, total_before_minor, total_after_minor)
    select gen_random_uuid(), ${order.id}, '{"canceled": [], "added": []}', 2000, 2000 from ${rows}`
  await sql`
    insert into returns (id, order_id, status, currency, merchandise_minor, total_minor)
    select gen_random_uuid(), ${order.id}, (case when n % 2 = 0 then 'approved' else 'requested' end)::return_status, 'USD', 100, 100 from ${rows}`
  await sql`
    insert into events (id, kind, data, resource_id, sequence)
    select gen_random_uuid(), 'order.paid', '{}', ${order.id}, n from ${rows}`

  // Promotions: coupons (half active) and automatic ones; a coupon's uses, one per payment.
  await sql`
    insert into promotions (id, code, name, type, percent_off_ppm, is_active, created_at)
    select gen_random_uuid(), case when n <= 5 then 'LISTED' || n end, 'Listed ' || n, 'percentage', 100000, n % 2 = 0, ${tied}
    from generate_series(1, 7) as n`
  const promotionId = await one(sql`select id from promotions where code = 'LISTED1'`)
  await sql`
    insert into promotion_usages (id, promotion_id, payment_id, discount_minor, currency, created_at)
    select gen_random_uuid(), ${promotionId}, payment.id, 10, 'USD', payment.created_at from payments as payment where payment.order_id = ${order.id}`
  await sql`insert into campaigns (id, name, created_at) select gen_random_uuid(), 'Campaign ' || n, ${tied} from ${rows}`

  // Customers: a group of them, groups, the shopper's addresses, accounts.
  await sql`insert into customers (id, email, first_name) select gen_random_uuid(), 'listed-' || n || '@example.com', 'Listed' from ${rows}`
  const groupId = await one(sql`
    insert into customer_groups (id, name) select gen_random_uuid(), (array['Gold', 'silver', 'Bronze', 'Platinum', 'copper'])[n] from ${rows} order by n returning id`)
  await sql`
    insert into customer_group_members (group_id, customer_id)
    select ${groupId}, id from customers where email like 'listed-%' or id = ${shopper.customerId}`
  await sql`
    insert into customer_addresses (id, customer_id, line1, city, country, created_at)
    select gen_random_uuid(), ${shopper.customerId}, n || ' High Street', 'Leeds', 'GB', ${tied} from ${rows}`
  await sql`insert into users (id, email, password_hash, role) select gen_random_uuid(), 'listed-user-' || n || '@example.com', 'x', 'customer' from ${rows}`

  // Draft orders, exports, imports and an import's report.
  await sql`
    insert into draft_orders (id, status, currency, lines, subtotal_minor, discount_minor, tax_minor, shipping_minor, total_minor)
    select gen_random_uuid(), (case when n % 2 = 0 then 'open' else 'invoice_sent' end)::draft_order_status, 'USD', '[]', 0, 0, 0, 0, 0 from ${rows}`
  await sql`insert into exports (id, resource) select gen_random_uuid(), 'products' from ${rows}`
  const importId = await one(sql`
    insert into imports (id, resource, dry_run, storage_key, size_bytes) select gen_random_uuid(), 'products', false, 'imports/' || n, 10 from ${rows} order by n returning id`)
  await sql`
    insert into import_rows (import_id, row, action, reason)
    select ${importId}, n, case when n % 3 = 0 then 'refuse' else 'create' end, case when n % 3 = 0 then 'price is missing' end
    from generate_series(2, 8) as n`

  // Shipping methods whose names tie but for case; tax rates of two countries, their regions too.
  await sql`
    insert into shipping_methods (id, name, currency, is_active)
    select gen_random_uuid(), (array['Express', 'express', 'EXPRESS', 'Express', 'Standard'])[n], 'USD', n % 2 = 0 from ${rows}`
  await sql`
    insert into tax_rates (id, country, region, rate_ppm, name)
    values (gen_random_uuid(), 'US', null, 0, 'US'), (gen_random_uuid(), 'US', 'CA', 72500, 'California'), (gen_random_uuid(), 'US', 'ny', 40000, 'New York'),
      (gen_random_uuid(), 'US', 'Texas', 62500, 'Texas'), (gen_random_uuid(), 'DE', null, 190000, 'Germany'), (gen_random_uuid(), 'DE', 'by', 190000, 'Bavaria')`

  // Webhooks, a webhook's deliveries (half failed), and the notifications of one event.
  const webhookId = await one(sql`
    insert into webhooks (id, url, events, secret, created_at)
    select gen_random_uuid(), 'https://hooks.example/' || n, '{*}', 'secret', ${tied} from ${rows} order by n returning id`)
  const eventIds = await sql<{ id: string }[]>`
    insert into events (id, kind, data, resource_id, sequence) select gen_random_uuid(), 'product.updated', '{}', gen_random_uuid(), 1 from ${rows} returning id`
  await sql`
    insert into webhook_deliveries (id, webhook_id, event_id, status, created_at)
    select gen_random_uuid(), ${webhookId}, event.id, case when n % 2 = 0 then 'failed' else 'succeeded' end, ${tied}
    from unnest(${eventIds.map((event) => event.id)}::uuid[]) with ordinality as event (id, n)`
  await sql`
    insert into notifications (id, event_id, template, recipient)
    select gen_random_uuid(), ${eventIds[0]!.id}, case when n % 2 = 0 then 'order_shipped' else 'order_confirmation' end, 'listed-' || n || '@example.com' from ${rows}`

  return { shopper: { token: shopper.token, customerId: shopper.customerId! }, productId, otherProductId, shelfId, orderId: order.id, groupId, priceListId, promotionId, importId, webhookId }
}

/** The OpenAPI document's lists: each GET whose answer has `meta`, its path, its items' name, its query parameters and metas. */
interface ListOperation {
  path: string
  items: string
  parameters: string[]
  metas: string[]
}

async function listOperations(ctx: TestContext): Promise<Map<string, ListOperation>> {
  type Schema = { $ref?: string; properties?: Record<string, Schema>; type?: string; anyOf?: Schema[] }
  type Operation = { operationId: string; parameters?: { $ref?: string; name?: string; in?: string }[]; responses: Record<string, { content?: Record<string, { schema: Schema }> }> }
  const document = (await ctx.request({ method: 'GET', url: '/api/v1/openapi.json' })).json() as {
    paths: Record<string, { get?: Operation }>
    components: { schemas: Record<string, Schema>; parameters: Record<string, { name: string; in: string }> }
  }
  const named = (schema: Schema) => (schema.$ref ? document.components.schemas[schema.$ref.split('/').pop()!]! : schema)
  const found = new Map<string, ListOperation>()
  for (const [path, item] of Object.entries(document.paths)) {
    const answer = item.get?.responses['200']?.content?.['application/json']?.schema
    const properties = answer && named(answer).properties
    if (!properties?.meta) continue
    const items = Object.entries(properties).filter(([, schema]) => named(schema).type === 'array')
    expect(items, path).toHaveLength(1)
    const parameters = (item.get!.parameters ?? [])
      .map((parameter) => (parameter.$ref ? document.components.parameters[parameter.$ref.split('/').pop()!]! : parameter))
      .filter((parameter) => parameter.in === 'query')
      .map((parameter) => parameter.name!)
    const meta = properties.meta
    const metas = (meta.anyOf ?? [meta]).map((schema) => schema.$ref!.split('/').pop()!)
    found.set(item.get!.operationId, { path, items: items[0]![0], parameters, metas })
  }
  return found
}

describe('every list by page and by cursor', () => {
  const listsTest = test.extend<{ seeded: Seeded; operations: Map<string, ListOperation> }>({
    seeded: [async ({ ctx }, use) => use(await seed(ctx)), { scope: 'file', auto: true }],
    operations: [async ({ ctx }, use) => use(await listOperations(ctx)), { scope: 'file' }],
  })

  listsTest('every list of the API (a GET answering meta) takes after, answers either meta and is walked here', ({ operations }) => {
    expect([...operations.keys()].sort()).toEqual(Object.keys(LISTS).sort())
    for (const [operationId, operation] of operations) {
      expect(operation.parameters, operationId).toContain('after')
      expect(operation.metas, operationId).toEqual(LISTS[operationId]!.cursorOnly ? ['CursorMeta'] : ['ListMeta', 'CursorMeta'])
    }
  })

  /** The list's URL and who walks it. */
  function target(operations: Map<string, ListOperation>, operationId: string, seeded: Seeded, admin: string) {
    const operation = operations.get(operationId)!
    const list = LISTS[operationId]!
    const path = list.of ? operation.path.replace('{id}', list.of(seeded)) : operation.path
    return { path, items: operation.items, token: list.asShopper ? seeded.shopper.token : admin }
  }

  listsTest.for(Object.keys(LISTS))('%s: by cursor, the items of the page listing in its order', async (operationId, { ctx, baseUrl, admin, seeded, operations }) => {
    const list = LISTS[operationId]!
    const { path, items, token } = target(operations, operationId, seeded, admin)
    const listed = list.cursorOnly ? await list.cursorOnly(ctx) : await pageListing(baseUrl, path, items, token)
    expect(listed.length, `${path} has rows for several pages`).toBeGreaterThanOrEqual(5)
    const walked = await walk(baseUrl, withQuery(path, `per_page=${PER_PAGE}`), items, token)
    expect(walked.ids, path).toEqual(listed)
    expectWellFormed(walked, PER_PAGE, listed.length)
    // Page by page at the walk's size: the same items in the same order.
    if (!list.cursorOnly) expect(await pageListing(baseUrl, withQuery(path, `per_page=${PER_PAGE}`), items, token)).toEqual(listed)

    for (const query of list.filters?.(seeded) ?? []) {
      // A filter keeps part of the list, in the list's order, and its walk meets that part.
      const part = await walk(baseUrl, withQuery(path, `${query}&per_page=${PER_PAGE}`), items, token)
      expect(part.ids.length, query).toBeGreaterThan(0)
      expect(part.ids.length, query).toBeLessThan(listed.length)
      expect(part.ids, query).toEqual(listed.filter((id) => part.ids.includes(id)))
      if (!list.cursorOnly) expect(part.ids, query).toEqual(await pageListing(baseUrl, withQuery(path, query), items, token))
    }
  })

  listsTest.for(Object.keys(LISTS))('%s: a cursor of another list, or after with page, is a 400 naming after', async (operationId, { baseUrl, admin, seeded, operations }) => {
    const { path, items, token } = target(operations, operationId, seeded, admin)
    // The next list of other items (two routes of one list, such as a customer's addresses, share their cursors).
    const names = Object.keys(LISTS)
    const next = names.slice(names.indexOf(operationId) + 1).concat(names).find((name) => operations.get(name)!.items !== items)!
    const other = target(operations, next, seeded, admin)
    const { meta } = await cursorPage(baseUrl, withQuery(other.path, 'per_page=1'), other.items, '', other.token)
    expect(meta.next_cursor).toEqual(expect.any(String))
    const foreign = await expectCursorRefused(baseUrl, withQuery(path, `after=${meta.next_cursor as string}`), token)
    expect(foreign.message).toContain('not a cursor of this list')
    if (LISTS[operationId]!.cursorOnly) return
    const both = await expectCursorRefused(baseUrl, withQuery(path, 'page=1&after='), token)
    expect(both.message).toContain("'page'")
    // The page mode is unchanged: counted, and no cursor.
    const { body } = await get(baseUrl, withQuery(path, 'per_page=1'), token)
    expect(Object.keys(body.meta).sort()).toEqual(['page', 'per_page', 'total', 'total_pages'])
  })
})
