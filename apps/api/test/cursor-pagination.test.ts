/**
 * Cursor mode (`?after=`) of the product, order and event lists, over real HTTP on a real
 * database: a walk meets every row once in the page listing's order, rows written during a walk
 * neither repeat nor hide the others, filters and a customer's scope hold, and bad input is a 400.
 */
import { describe, expect } from 'vitest'
import type { Category, Product } from '@commerce/domain'
import { test, type TestContext } from './helpers.js'
import { CURSOR, cursorPage, encode, expectCursorRefused, expectWellFormed, get, pageListing, walk, withQuery } from './list-walks.js'
import { insertOrder } from './order-fixtures.js'

/** The smallest UUIDv7s there are: older than any id the app makes, so last in newest-first order. */
const OLDEST_ID = '00000000-0000-7000-8000-000000000001'

describe('products by cursor', () => {
  /** The block's products, made before its first test: their titles by id. */
  const productsTest = test.extend<{ titles: Map<string, string> }>({
    titles: [
      async ({ ctx, admin }, use) => {
        const titles = new Map<string, string>()
        const category = await ctx.expectStatus<Category>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: 'Walking boots' } })
        expect(category.slug).toBe('walking-boots')
        for (let i = 1; i <= 23; i++) {
          const product = await ctx.expectStatus<Product>(201, {
            method: 'POST',
            url: '/api/v1/products',
            token: admin,
            payload: { title: `Cursorwalk ${i}`, category_ids: i % 3 === 0 ? [category.id] : [] },
          })
          titles.set(product.id, product.title)
          if (i % 5 === 0) await ctx.expectStatus(204, { method: 'DELETE', url: `/api/v1/products/${product.id}`, token: admin })
        }
        // Enough matches for the id-walk plan of a search (above 2,000), and 3 for the GIN plan.
        await ctx.handle.sql`
          insert into products (id, title, slug, description, price_minor, currency, is_active)
          select gen_random_uuid(), 'Bulkwalk ' || n, 'bulkwalk-' || n,
                 case when n % 900 = 0 then 'a rarewalk thing' else 'plain stock' end, 100, 'USD', n % 11 <> 0
          from generate_series(1, 2400) as n`
        await use(titles)
      },
      { scope: 'file', auto: true },
    ],
  })

  productsTest('a walk meets every product once, in the order of the page listing, with {per_page, next_cursor} and no total', async ({ baseUrl }) => {
    const listed = await pageListing(baseUrl, '/api/v1/products', 'products')
    expect(listed.length).toBeGreaterThan(2000)
    const result = await walk(baseUrl, '/api/v1/products?per_page=100', 'products')
    expect(result.ids).toEqual(listed)
    expectWellFormed(result, 100, listed.length)
    // The default page size applies in cursor mode too.
    const first = await cursorPage(baseUrl, '/api/v1/products', 'products', '')
    expect(first.ids).toEqual(listed.slice(0, 20))
    expect(first.meta).toEqual({ per_page: 20, next_cursor: expect.stringMatching(CURSOR) })
  })

  productsTest.for([
    ['search with many matches (id walk)', '?search=bulkwalk', 2182, 50],
    ['search with few matches (GIN index)', '?search=rarewalk', 2, 1],
    ['a category', '?category=walking-boots', 6, 4],
    ['a category and a search', '?category=walking-boots&search=cursorwalk', 6, 4],
    ['a search and inactive products (admin)', '?search=cursorwalk&include_inactive=true', 23, 4],
  ] as const)('filters apply in cursor mode: %s', async ([_name, query, expected, perPage], { baseUrl, admin }) => {
    const path = `/api/v1/products${query}`
    const token = query.includes('include_inactive') ? admin : undefined
    const listed = await pageListing(baseUrl, path, 'products', token)
    expect(listed).toHaveLength(expected)
    const result = await walk(baseUrl, withQuery(path, `per_page=${perPage}`), 'products', token)
    expect(result.ids).toEqual(listed)
    expectWellFormed(result, perPage, expected)
  })

  productsTest('an inactive product stays out of the public walk; include_inactive is still for admins only', async ({ baseUrl, titles }) => {
    const result = await walk(baseUrl, '/api/v1/products?search=cursorwalk&per_page=5', 'products')
    expect(result.ids.map((id) => titles.get(id))).toEqual(
      Array.from({ length: 23 }, (_, index) => 23 - index)
        .filter((n) => n % 5 !== 0)
        .map((n) => `Cursorwalk ${n}`),
    )
    const { status } = await get(baseUrl, '/api/v1/products?include_inactive=true&after=')
    expect(status).toBe(401)
  })

  productsTest('products added and removed during a walk neither repeat nor hide the products that were there', async ({ ctx, baseUrl, admin }) => {
    const path = '/api/v1/products?search=cursorwalk&include_inactive=true&per_page=5'
    const before = await pageListing(baseUrl, '/api/v1/products?search=cursorwalk&include_inactive=true', 'products', admin)
    const first = await cursorPage(baseUrl, path, 'products', '', admin)
    expect(first.ids).toEqual(before.slice(0, 5))

    // Ahead of the cursor (newer): an offset would shift every later row down by one.
    const newer = await ctx.expectStatus<Product>(201, { method: 'POST', url: '/api/v1/products', token: admin, payload: { title: 'Cursorwalk new' } })
    // Behind the cursor (older than every product): the rest of the walk reaches it.
    await ctx.handle.sql`
      insert into products (id, title, slug, price_minor, currency) values (${OLDEST_ID}, 'Cursorwalk oldest', 'cursorwalk-oldest', 100, 'USD')`
    // Gone from the part already read (the cursor's own row): an offset would skip a row.
    await ctx.handle.sql`delete from products where id = ${first.ids[4]!}`
    const gone = before[9]!
    await ctx.handle.sql`delete from products where id = ${gone}`

    const rest: string[] = []
    let after = first.meta.next_cursor as string
    while (after) {
      const page = await cursorPage(baseUrl, path, 'products', after, admin)
      rest.push(...page.ids)
      after = page.meta.next_cursor as string
    }
    expect(rest).not.toContain(newer.id)
    expect(rest).toEqual([...before.slice(5).filter((id) => id !== gone), OLDEST_ID])
  })

  productsTest('nothing matching is one empty page without a cursor', async ({ baseUrl }) => {
    for (const query of ['?search=nosuchwordanywhere&after=', '?search=%21%21%21&after=', '?category=no-such-category&after=']) {
      const { status, body } = await get(baseUrl, `/api/v1/products${query}`)
      expect(status, query).toBe(200)
      expect(body, query).toEqual({ products: [], meta: { per_page: 20, next_cursor: null } })
    }
  })
})

describe('orders by cursor', () => {
  interface Orders {
    alice: { token: string; customerId: string | null }
    bob: { token: string; customerId: string | null }
    aliceOrders: string[]
    bobOrders: string[]
    createdAt: Map<string, Date>
  }
  /** Two customers' orders (newest first) and one guest order, made before the block's first test. */
  const ordersTest = test.extend<{ orders: Orders }>({
    orders: [
      async ({ ctx }, use) => {
        const orders: Orders = { alice: await ctx.signIn('customer'), bob: await ctx.signIn('customer'), aliceOrders: [], bobOrders: [], createdAt: new Map() }
        for (let i = 0; i < 9; i++) {
          const owner = i % 3 === 2 ? orders.bob : orders.alice
          const { order } = await insertOrder(ctx, { customerId: owner.customerId, status: i % 2 === 0 ? 'paid' : 'pending' })
          ;(owner === orders.bob ? orders.bobOrders : orders.aliceOrders).unshift(order.id)
          orders.createdAt.set(order.id, order.createdAt)
        }
        await insertOrder(ctx, { customerId: null })
        await use(orders)
      },
      { scope: 'file', auto: true },
    ],
  })

  ordersTest('an admin walk meets every order once, in the order of the page listing; archived orders stay out', async ({ ctx, baseUrl, admin, orders: { alice } }) => {
    const archived = await insertOrder(ctx, { customerId: alice.customerId, status: 'cancelled' })
    await ctx.expectStatus(204, { method: 'DELETE', url: `/api/v1/orders/${archived.order.id}`, token: admin })
    const listed = await pageListing(baseUrl, '/api/v1/orders', 'orders', admin)
    expect(listed).toHaveLength(10)
    const result = await walk(baseUrl, '/api/v1/orders?per_page=3', 'orders', admin)
    expect(result.ids).toEqual(listed)
    expect(result.ids).not.toContain(archived.order.id)
    expectWellFormed(result, 3, 10)
  })

  ordersTest('filters apply in cursor mode: status, customer_id, created_from', async ({ baseUrl, admin, orders: { alice, bob, aliceOrders, bobOrders, createdAt } }) => {
    for (const query of [
      'status=paid',
      `customer_id=${bob.customerId}`,
      `customer_id=${alice.customerId}&status=pending`,
      `created_from=${encodeURIComponent(createdAt.get(aliceOrders[3]!)!.toISOString())}`,
    ]) {
      const listed = await pageListing(baseUrl, `/api/v1/orders?${query}`, 'orders', admin)
      const result = await walk(baseUrl, `/api/v1/orders?${query}&per_page=2`, 'orders', admin)
      expect(result.ids, query).toEqual(listed)
      expectWellFormed(result, 2, listed.length)
    }
    expect((await walk(baseUrl, `/api/v1/orders?customer_id=${bob.customerId}&per_page=2`, 'orders', admin)).ids).toEqual(bobOrders)
  })

  ordersTest('a customer walks only its own orders, whatever customer_id or cursor it sends', async ({ baseUrl, admin, orders: { alice, bob, aliceOrders, bobOrders } }) => {
    expect((await walk(baseUrl, '/api/v1/orders?per_page=2', 'orders', alice.token)).ids).toEqual(aliceOrders)
    expect((await walk(baseUrl, '/api/v1/orders?per_page=2', 'orders', bob.token)).ids).toEqual(bobOrders)
    expect((await walk(baseUrl, `/api/v1/orders?customer_id=${bob.customerId}`, 'orders', alice.token)).ids).toEqual([])
    // A cursor from an admin's walk, placed among Bob's orders, still reads only Alice's after it.
    const adminFirst = await cursorPage(baseUrl, `/api/v1/orders?customer_id=${bob.customerId}&per_page=1`, 'orders', '', admin)
    const after = adminFirst.meta.next_cursor as string
    const rest = await cursorPage(baseUrl, '/api/v1/orders?per_page=100', 'orders', after, alice.token)
    const olderThanBobsNewest = aliceOrders.filter((id) => id < bobOrders[0]!)
    expect(olderThanBobsNewest.length).toBeGreaterThan(0)
    expect(rest.ids).toEqual(olderThanBobsNewest)
    const { status } = await get(baseUrl, '/api/v1/orders?after=')
    expect(status).toBe(401)
  })

  ordersTest('orders added and archived during a walk neither repeat nor hide the orders that were there', async ({ ctx, baseUrl, admin, orders: { alice } }) => {
    const path = `/api/v1/orders?customer_id=${alice.customerId}&per_page=2`
    const before = await pageListing(baseUrl, `/api/v1/orders?customer_id=${alice.customerId}`, 'orders', admin)
    const first = await cursorPage(baseUrl, path, 'orders', '', admin)
    expect(first.ids).toEqual(before.slice(0, 2))
    const added = await insertOrder(ctx, { customerId: alice.customerId })
    // The cursor's own order leaves the list: the walk goes on after its place all the same.
    await ctx.handle.sql`update orders set archived_at = now() where id = ${first.ids[1]!}`
    const rest: string[] = []
    let after = first.meta.next_cursor as string
    while (after) {
      const page = await cursorPage(baseUrl, path, 'orders', after, admin)
      rest.push(...page.ids)
      after = page.meta.next_cursor as string
    }
    expect(rest).not.toContain(added.order.id)
    expect(rest).toEqual(before.slice(2))
    await ctx.handle.sql`update orders set archived_at = null where id = ${first.ids[1]!}`
  })
})

describe('events by cursor', () => {
  // Events of one transaction share created_at: the order is created_at, then id. These are in a
  // window of their own, at three instants one microsecond apart (inside one millisecond).
  const WINDOW = 'event=order.refunded&from=2001-02-03T04:05:06Z&to=2001-02-03T04:05:07Z'
  const at = (microseconds: number) => `2001-02-03T04:05:06.123${String(microseconds).padStart(3, '0')}Z`

  /** Twelve events in that window, written before the block's first test. */
  const eventsTest = test.extend<{ windowEvents: void }>({
    windowEvents: [
      async ({ ctx }, use) => {
        await ctx.handle.sql`
          insert into events (id, kind, data, created_at, resource_id, sequence)
          select gen_random_uuid(), 'order.refunded', json_build_object('n', n), ${at(400)}::timestamptz + (n % 3) * interval '1 microsecond',
            gen_random_uuid(), 1
          from generate_series(1, 12) as n`
        await use()
      },
      { scope: 'file', auto: true },
    ],
  })

  async function expectedOrder(ctx: TestContext): Promise<string[]> {
    const rows = await ctx.handle.sql<{ id: string }[]>`
      select id from events where kind = 'order.refunded' and created_at >= '2001-02-03T04:05:06Z' and created_at < '2001-02-03T04:05:07Z'
      order by created_at desc, id desc`
    return rows.map((row) => row.id)
  }

  eventsTest('a walk meets every event once, newest first then by id, as the page listing, across equal and microsecond-apart times', async ({ ctx, baseUrl, admin }) => {
    const expected = await expectedOrder(ctx)
    expect(expected).toHaveLength(12)
    expect(await pageListing(baseUrl, `/api/v1/events?${WINDOW}`, 'events', admin)).toEqual(expected)
    for (const perPage of [1, 2, 5]) {
      const result = await walk(baseUrl, `/api/v1/events?${WINDOW}&per_page=${perPage}`, 'events', admin)
      expect(result.ids, `per_page ${perPage}`).toEqual(expected)
      expectWellFormed(result, perPage, 12)
    }
  })

  eventsTest('the whole log and a family filter walk like their page listings', async ({ baseUrl, admin }) => {
    for (const query of ['', 'event=product.*']) {
      const listed = await pageListing(baseUrl, `/api/v1/events?${query}`, 'events', admin)
      expect(listed.length, query).toBeGreaterThan(10)
      const result = await walk(baseUrl, `/api/v1/events?${query}&per_page=7`, 'events', admin)
      expect(result.ids, query).toEqual(listed)
    }
  })

  eventsTest('events written during a walk, at the cursor’s own time too, neither repeat nor hide the others', async ({ ctx, baseUrl, admin }) => {
    const path = `/api/v1/events?${WINDOW}&per_page=5`
    const before = await expectedOrder(ctx)
    const first = await cursorPage(baseUrl, path, 'events', '', admin)
    expect(first.ids).toEqual(before.slice(0, 5))
    const [cursorRow] = await ctx.handle.sql<{ t: string }[]>`
      select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as t from events where id = ${first.ids[4]!}`
    const insert = async (id: string, time: string) => {
      await ctx.handle.sql`insert into events (id, kind, data, created_at, resource_id, sequence)
        values (${id}, 'order.refunded', '{}', ${time}::timestamptz, gen_random_uuid(), 1)`
      return id
    }
    // Same time as the cursor's event: a larger id sorts before it (already passed), a smaller after it.
    const sameTimeBefore = await insert('ffffffff-ffff-7fff-bfff-ffffffffffff', cursorRow!.t)
    const sameTimeAfter = await insert(OLDEST_ID, cursorRow!.t)
    const newer = await insert('00000000-0000-7000-8000-0000000000a1', at(900))
    const older = await insert('ffffffff-ffff-7fff-bfff-0000000000a2', at(1))

    const rest: string[] = []
    let after = first.meta.next_cursor as string
    while (after) {
      const page = await cursorPage(baseUrl, path, 'events', after, admin)
      rest.push(...page.ids)
      after = page.meta.next_cursor as string
    }
    expect(rest).not.toContain(sameTimeBefore)
    expect(rest).not.toContain(newer)
    const preExisting = rest.filter((id) => before.includes(id))
    expect(preExisting).toEqual(before.slice(5))
    const now = await expectedOrder(ctx)
    expect(rest).toEqual(now.slice(now.indexOf(first.ids[4]!) + 1))
    expect(rest).toContain(sameTimeAfter)
    expect(rest.at(-1)).toBe(older)
    await ctx.handle.sql`delete from events where id in ${ctx.handle.sql([sameTimeBefore, sameTimeAfter, newer, older])}`
  })
})

describe('refusals', () => {
  const LISTS = [
    ['/api/v1/products', 'products'],
    ['/api/v1/orders', 'orders'],
    ['/api/v1/events', 'events'],
  ] as const
  const UUID = '0190a6f1-7c3a-7000-8000-00000000f00d'

  test('page with after is 400 naming after, on every list, whatever the cursor', async ({ baseUrl, admin }) => {
    for (const [path] of LISTS) {
      for (const query of ['page=1&after=', 'after=&page=2', `page=1&after=${encode(['products', UUID])}`]) {
        const error = await expectCursorRefused(baseUrl, `${path}?${query}`, admin)
        expect(error.message).toContain("'page'")
      }
    }
  })

  test('a malformed, edited or foreign cursor is 400 naming after, never a 500', async ({ baseUrl, admin }) => {
    const real: Record<string, string> = {}
    for (const [path, key] of LISTS) real[key] = (await cursorPage(baseUrl, `${path}?per_page=1`, key, '', admin)).meta.next_cursor as string
    for (const [path, key] of LISTS) {
      const valid = key === 'events' ? [key, '2026-01-01T00:00:00.000000Z', UUID] : [key, UUID]
      expect((await get(baseUrl, `${path}?after=${encode(valid)}`, admin)).status, `${key}: a well-formed cursor`).toBe(200)
      const other = LISTS.map(([, name]) => name).find((name) => name !== key)!
      const bad = [
        'not a cursor',
        '!!!',
        'abc',
        `${real[key]!}=`,
        `X${real[key]!.slice(1)}`,
        real[other]!,
        encode([key]),
        encode({ list: key, id: UUID }),
        encode([key, UUID, UUID, UUID]),
        encode([key, 'not-a-uuid']),
        encode([key, UUID.toUpperCase()]),
        encode([key, 42]),
        encode(['events', '2026-02-30T00:00:00.000000Z', UUID]),
        encode(['events', '2026-01-01T00:00:00.000Z', UUID]),
        encode(['events', '0000-01-01T00:00:00.000000Z', UUID]),
        encode(['events', '2026-01-01T00:00:00.000000Z', 'not-a-uuid']),
        Buffer.from('["products", "').toString('base64url'),
      ]
      for (const cursor of bad) {
        const error = await expectCursorRefused(baseUrl, `${path}?after=${encodeURIComponent(cursor)}`, admin)
        expect(error.message, cursor).toBe(
          "Field 'after' is not a cursor of this list: send it empty for the first page, then the meta.next_cursor of the page before, unchanged",
        )
      }
      await expectCursorRefused(baseUrl, `${path}?after=${'a'.repeat(513)}`, admin)
    }
  })
})

describe('OpenAPI', () => {
  test('documents after and both metas on the three lists', async ({ ctx }) => {
    const document = (await ctx.request({ method: 'GET', url: '/api/v1/openapi.json' })).json()
    const named = (schema: { $ref: string }) => document.components.schemas[schema.$ref.replace('#/components/schemas/', '')]
    for (const [path, key] of [
      ['/api/v1/products', 'products'],
      ['/api/v1/orders', 'orders'],
      ['/api/v1/events', 'events'],
    ]) {
      const operation = document.paths[path!].get
      const after = operation.parameters.find((parameter: { name: string }) => parameter.name === 'after')
      expect(after, path).toMatchObject({ in: 'query', required: false, schema: { type: 'string', maxLength: 512 } })
      expect(after.description ?? after.schema.description).toContain('next_cursor')
      const schema = named(operation.responses['200'].content['application/json'].schema)
      expect(schema.properties[key!].type).toBe('array')
      const metas = schema.properties.meta.anyOf.map(named)
      expect(metas.map((meta: { required: string[] }) => [...meta.required].sort())).toEqual([
        ['page', 'per_page', 'total', 'total_pages'],
        ['next_cursor', 'per_page'],
      ])
    }
  })
})
