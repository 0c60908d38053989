/**
 * Filters, sorts and facets of GET /products (docs/catalog.md, "Filters, sorting and facets"), on
 * a real database through the real app: the answers checked against a brute-force reading of
 * generated catalogs (fast-check), every sort walked by page and by cursor, and the market's
 * prices with the reader's price lists.
 */
import fc from 'fast-check'
import { describe, expect } from 'vitest'
import type { Product, ProductFacets, ProductList } from '@commerce/domain'
import { test, type TestContext } from './helpers.js'

const PRODUCTS = '/api/v1/products'

type Page = ProductList & { meta: { total: number; next_cursor?: string | null } }

const TAGS = ['Summer', 'sale', 'New in']
const TITLES = ['Éclair', 'eclair', 'e-clair', 'Zebra', 'apple', 'Apple pie', 'apple-pie', '_under']
const TYPES = ['Shirt', 'Hat']
const VENDORS = ['Acme', 'Globex']
const SIZES = ['S', 'M', 'L']
const MATERIALS = ['cotton', 'wool']

interface Spec {
  tags: string[]
  type: string | null
  vendor: string | null
  sizes: string[]
  material: string | null
  grams: number | null
  price: number
  compareAt: number | null
  stock: number
}

const spec: fc.Arbitrary<Spec> = fc.record({
  tags: fc.subarray(TAGS),
  type: fc.option(fc.constantFrom(...TYPES), { nil: null }),
  vendor: fc.option(fc.constantFrom(...VENDORS), { nil: null }),
  sizes: fc.subarray(SIZES),
  material: fc.option(fc.constantFrom(...MATERIALS), { nil: null }),
  grams: fc.option(fc.integer({ min: 50, max: 900 }), { nil: null }),
  price: fc.integer({ min: 100, max: 9900 }).map((cents) => cents / 100),
  compareAt: fc.option(fc.integer({ min: 100, max: 9900 }).map((cents) => cents / 100), { nil: null }),
  stock: fc.constantFrom(0, 0, 3),
})

interface Query {
  tag: string[]
  type: string[]
  size: string[]
  material: string[]
  grams: [number | null, number | null] | null
  price: [number | null, number | null] | null
  available: boolean | null
  onSale: boolean | null
}

const query: fc.Arbitrary<Query> = fc.record({
  tag: fc.subarray(TAGS, { maxLength: 2 }),
  type: fc.subarray(TYPES, { maxLength: 1 }),
  size: fc.subarray(SIZES, { maxLength: 2 }),
  material: fc.subarray(MATERIALS, { maxLength: 1 }),
  grams: fc.option(fc.tuple(fc.option(fc.integer({ min: 0, max: 500 }), { nil: null }), fc.option(fc.integer({ min: 400, max: 1000 }), { nil: null })), { nil: null }),
  price: fc.option(fc.tuple(fc.option(fc.integer({ min: 0, max: 50 }), { nil: null }), fc.option(fc.integer({ min: 50, max: 100 }), { nil: null })), { nil: null }),
  available: fc.option(fc.boolean(), { nil: null }),
  onSale: fc.option(fc.boolean(), { nil: null }),
})

/** The filters of a query as tests of a product spec, by facet. */
function tests(q: Query): Record<string, (s: Spec) => boolean> {
  const groups: Record<string, (s: Spec) => boolean> = {}
  if (q.tag.length) groups.tag = (s) => s.tags.some((tag) => q.tag.includes(tag))
  if (q.type.length) groups.type = (s) => s.type !== null && q.type.includes(s.type)
  if (q.size.length) groups.size = (s) => s.sizes.some((size) => q.size.includes(size))
  if (q.material.length) groups.material = (s) => s.material !== null && q.material.includes(s.material)
  if (q.grams) groups.grams = (s) => s.grams !== null && (q.grams![0] === null || s.grams >= q.grams![0]) && (q.grams![1] === null || s.grams <= q.grams![1])
  if (q.price) groups.price = (s) => (q.price![0] === null || s.price >= q.price![0]) && (q.price![1] === null || s.price <= q.price![1])
  if (q.available !== null) groups.available = (s) => (s.stock > 0) === q.available
  if (q.onSale !== null) groups.onSale = (s) => (s.compareAt !== null && s.compareAt > s.price) === q.onSale
  return groups
}

/** The list of `q` in a category, or over the whole catalog (null). */
function urlOf(q: Query, category: string | null, extra = ''): string {
  const params = new URLSearchParams({ per_page: '100' })
  if (category !== null) params.set('category', category)
  for (const tag of q.tag) params.append('tag', tag)
  for (const type of q.type) params.append('type', type)
  for (const size of q.size) params.append('option', `Size:${size}`)
  for (const material of q.material) params.append('attr', `${MATERIAL}:${material}`)
  if (q.grams) params.append('attr', `${GRAMS}:${q.grams[0] ?? ''}..${q.grams[1] ?? ''}`)
  if (q.price?.[0] != null) params.set('price_min', String(q.price[0]))
  if (q.price?.[1] != null) params.set('price_max', String(q.price[1]))
  if (q.available !== null) params.set('available', String(q.available))
  if (q.onSale !== null) params.set('on_sale', String(q.onSale))
  return `${PRODUCTS}?${params}${extra}`
}

let MATERIAL = 'material'
let GRAMS = 'grams'

async function defineAttributes(ctx: TestContext, admin: string) {
  const suffix = Math.random().toString(36).slice(2, 8)
  MATERIAL = `material_${suffix}`
  GRAMS = `grams_${suffix}`
  await ctx.expectStatus(201, { method: 'POST', url: '/api/v1/attributes', token: admin, payload: { key: MATERIAL, name: 'Material', type: 'select', choices: MATERIALS, filterable: true } })
  await ctx.expectStatus(201, { method: 'POST', url: '/api/v1/attributes', token: admin, payload: { key: GRAMS, name: 'Grams', type: 'integer', filterable: true } })
}

/** A category of its own with these products, made through the API; the products in creation order. */
async function seed(ctx: TestContext, admin: string, specs: Spec[]): Promise<{ slug: string; ids: string[] }> {
  const category = await ctx.expectStatus<{ id: string; slug: string }>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: `Run ${Math.random()}` } })
  const ids: string[] = []
  for (const [i, s] of specs.entries()) {
    const product = await ctx.expectStatus<Product>(201, {
      method: 'POST',
      url: PRODUCTS,
      token: admin,
      payload: {
        // Titles whose order depends on the collation (accents, case, punctuation): the title sort's ranks come from the database.
        title: `${TITLES[i % TITLES.length]} ${i}`,
        price: s.price,
        compare_at_price: s.compareAt,
        tags: s.tags,
        product_type: s.type,
        vendor: s.vendor,
        category_ids: [category.id],
        inventory_quantity: s.sizes.length ? 0 : s.stock,
        attributes: { ...(s.material && { [MATERIAL]: s.material }), ...(s.grams !== null && { [GRAMS]: s.grams }) },
        ...(s.sizes.length && { options: [{ name: 'Size', values: s.sizes.map((value) => ({ value })) }] }),
      },
    })
    if (s.sizes.length) {
      await ctx.expectStatus(201, { method: 'POST', url: `${PRODUCTS}/${product.id}/variants/generate`, token: admin, payload: { inventory_quantity: s.stock } })
    }
    ids.push(product.id)
  }
  return { slug: category.slug, ids }
}

/** The facet counts a brute-force reading expects: each group's values over the products passing every other group. */
function expectedFacets(specs: Spec[], q: Query) {
  const groups = tests(q)
  const passing = (except: string) => specs.filter((s) => Object.entries(groups).every(([name, pass]) => name === except || pass(s)))
  const count = <T,>(list: Spec[], values: (s: Spec) => T[]) => {
    const counts = new Map<T, number>()
    for (const s of list) for (const value of new Set(values(s))) counts.set(value, (counts.get(value) ?? 0) + 1)
    return counts
  }
  const prices = passing('price').map((s) => s.price)
  const grams = passing('grams').flatMap((s) => (s.grams === null ? [] : [s.grams]))
  return {
    tags: count(passing('tag'), (s) => s.tags.map((tag) => tag.toLowerCase())),
    types: count(passing('type'), (s) => (s.type ? [s.type.toLowerCase()] : [])),
    sizes: count(passing('size'), (s) => s.sizes.map((size) => size.toLowerCase())),
    materials: count(passing('material'), (s) => (s.material ? [s.material] : [])),
    available: passing('available').filter((s) => s.stock > 0).length,
    onSale: passing('onSale').filter((s) => s.compareAt !== null && s.compareAt > s.price).length,
    price: prices.length ? { min: Math.min(...prices), max: Math.max(...prices) } : null,
    grams: grams.length ? { min: Math.min(...grams), max: Math.max(...grams) } : null,
  }
}

const counts = (values: { value: string; count: number }[]) => new Map(values.map((entry) => [entry.value, entry.count]))

describe('filters and facets', () => {
  test('match a brute-force reading of generated catalogs: every filter, AND across, OR within, disjunctive counts', async ({ ctx, admin }) => {
    await defineAttributes(ctx, admin)
    await fc.assert(
      fc.asyncProperty(fc.array(spec, { minLength: 1, maxLength: 8 }), fc.array(query, { minLength: 1, maxLength: 4 }), async (specs, queries) => {
        const { slug, ids } = await seed(ctx, admin, specs)
        for (const q of queries) {
          const page = await ctx.expectStatus<Page>(200, { method: 'GET', url: urlOf(q, slug, '&facets=true') })
          const groups = Object.values(tests(q))
          const matching = ids.filter((_, i) => groups.every((pass) => pass(specs[i]!)))
          // Newest first: the reverse of creation.
          expect(page.products.map((product) => product.id)).toEqual([...matching].reverse())
          expect(page.meta.total).toBe(matching.length)
          // The same list answered by the statements (a staff filter on status, which the in-memory
          // index leaves to them; every product here is active): the same page and facets.
          const viaSql = await ctx.expectStatus<Page>(200, { method: 'GET', url: urlOf(q, slug, '&facets=true&status=active'), token: admin })
          // Whole items: the public's are their stored JSON, the staff's are built from the rows.
          expect(viaSql.products).toEqual(page.products)
          expect(viaSql.meta.total).toBe(page.meta.total)
          expect(viaSql.facets).toEqual(page.facets)
          // Sorted by title: the index's ranks (read from the database) order as the statements do.
          const byTitle = await ctx.expectStatus<Page>(200, { method: 'GET', url: urlOf(q, slug, '&facets=true&sort=title') })
          const byTitleViaSql = await ctx.expectStatus<Page>(200, { method: 'GET', url: urlOf(q, slug, '&facets=true&sort=title&status=active'), token: admin })
          expect(byTitle.products.map((product) => product.id)).toEqual(byTitleViaSql.products.map((product) => product.id))
          expect(byTitle.facets).toEqual(page.facets)
          // Over the whole catalog (where the index marks a term filter's rows from the terms' own lists, not row by row): as the statements answer it.
          const everywhere = await ctx.expectStatus<Page>(200, { method: 'GET', url: urlOf(q, null, '&facets=true&sort=price_desc') })
          const everywhereViaSql = await ctx.expectStatus<Page>(200, { method: 'GET', url: urlOf(q, null, '&facets=true&sort=price_desc&status=active'), token: admin })
          expect(everywhere.products).toEqual(everywhereViaSql.products)
          expect(everywhere.meta.total).toBe(everywhereViaSql.meta.total)
          expect(everywhere.facets).toEqual(everywhereViaSql.facets)
          // A page past the end has no row to carry the total: it is counted alone, as exactly.
          const beyond = await ctx.expectStatus<Page>(200, { method: 'GET', url: urlOf(q, slug, '&page=2') })
          expect(beyond.products).toEqual([])
          expect(beyond.meta.total).toBe(matching.length)
          const want = expectedFacets(specs, q)
          const facets = page.facets as ProductFacets
          expect(counts(facets.tags)).toEqual(want.tags)
          expect(counts(facets.types)).toEqual(want.types)
          expect(counts(facets.options.find((option) => option.name === 'size')?.values ?? [])).toEqual(want.sizes)
          const material = facets.attributes.find((attribute) => attribute.key === MATERIAL)
          expect(counts(material?.values ?? [])).toEqual(want.materials)
          expect(facets.available).toBe(want.available)
          expect(facets.on_sale).toBe(want.onSale)
          expect(facets.price).toEqual(want.price)
          // A number attribute's facet is its range alone.
          expect(facets.attributes.find((attribute) => attribute.key === GRAMS)?.range ?? null).toEqual(want.grams)
          expect(facets.attributes.find((attribute) => attribute.key === GRAMS)?.values ?? []).toEqual([])
          // Selected values say so; labels keep the products' spelling.
          for (const tag of facets.tags) expect(tag.selected).toBe(q.tag.some((selected) => selected.toLowerCase() === tag.value))
          for (const tag of facets.tags) expect(TAGS).toContain(tag.label)
        }
      }),
      { numRuns: 20 },
    )
  }, 120_000)

  test('over the whole catalog, as the statements answer: lists most of it passes, tied keys, pages from the end', async ({ ctx, admin }) => {
    await defineAttributes(ctx, admin)
    // Some products of no price, the rest priced: `price_min` passes most of the catalog, the
    // best-selling sort ties every key (none sold), newest reads from the newest.
    const specs = Array.from({ length: 14 }, (_, i): Spec => ({
      tags: [TAGS[i % TAGS.length]!],
      type: TYPES[i % TYPES.length]!,
      vendor: null,
      sizes: [],
      material: MATERIALS[i % MATERIALS.length]!,
      grams: 100 + i * 50,
      price: i < 3 ? 0 : i,
      compareAt: i % 4 === 0 ? 99 : null,
      stock: i % 5 === 0 ? 0 : 3,
    }))
    await seed(ctx, admin, specs)
    // The last: an attribute no product has (no rows pass; every row fails that filter alone).
    for (const filters of ['', '&price_min=1', '&available=true', `&attr=${GRAMS}:..10000`, '&tag=sale&price_min=1', '&attr=no_such_key:x']) {
      for (const sort of ['newest', 'best_selling', 'price_desc', 'title']) {
        for (const page of [1, 2]) {
          const url = `${PRODUCTS}?per_page=5&page=${page}&sort=${sort}&facets=true${filters}`
          const fromIndex = await ctx.expectStatus<Page>(200, { method: 'GET', url })
          const viaSql = await ctx.expectStatus<Page>(200, { method: 'GET', url: `${url}&status=active`, token: admin })
          expect(fromIndex.products.map((product) => product.id), url).toEqual(viaSql.products.map((product) => product.id))
          expect(fromIndex.meta.total, url).toBe(viaSql.meta.total)
          expect(fromIndex.facets, url).toEqual(viaSql.facets)
        }
      }
    }
  }, 60_000)

  test("a category's facets count its own rows when a filter's values are held mostly outside it", async ({ ctx, admin }) => {
    const key = `finish_${Math.random().toString(36).slice(2, 8)}`
    await ctx.expectStatus(201, { method: 'POST', url: '/api/v1/attributes', token: admin, payload: { key, name: 'Finish', type: 'select', choices: ['matte', 'gloss'], filterable: true } })
    const make = (title: string, payload: object) => ctx.expectStatus<Product>(201, { method: 'POST', url: PRODUCTS, token: admin, payload: { title, price: 5, ...payload } })
    // Many rows of the value outside the category, made first (rows of their own in the index),
    // then a category of rows that fail the filter but one.
    for (let i = 0; i < 70; i++) await make(`Outside ${i}`, { attributes: { [key]: 'matte' } })
    const category = await ctx.expectStatus<{ id: string; slug: string }>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: `Finish ${Math.random()}` } })
    for (let i = 0; i < 40; i++) await make(`Inside ${i}`, { category_ids: [category.id] })
    await make('Inside matte', { category_ids: [category.id], attributes: { [key]: 'matte' } })
    for (const url of [`${PRODUCTS}?attr=${key}:matte&facets=true`, `${PRODUCTS}?category=${category.slug}&attr=${key}:matte&facets=true`]) {
      const fromIndex = await ctx.expectStatus<Page>(200, { method: 'GET', url })
      const viaSql = await ctx.expectStatus<Page>(200, { method: 'GET', url: `${url}&status=active`, token: admin })
      expect(fromIndex.facets, url).toEqual(viaSql.facets)
      expect(fromIndex.meta.total, url).toBe(viaSql.meta.total)
    }
    const inCategory = await ctx.expectStatus<Page>(200, { method: 'GET', url: `${PRODUCTS}?category=${category.slug}&attr=${key}:matte&facets=true` })
    expect(inCategory.facets?.attributes.find((attribute) => attribute.key === key)?.values.map((value) => [value.value, value.count])).toEqual([['matte', 1]])
  }, 60_000)

  test('a category lists the products of the categories under it', async ({ ctx, admin }) => {
    const parent = await ctx.expectStatus<{ id: string; slug: string }>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: `Parent ${Math.random()}` } })
    const child = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: `Child ${Math.random()}`, parent_id: parent.id } })
    const inChild = await ctx.expectStatus<Product>(201, { method: 'POST', url: PRODUCTS, token: admin, payload: { title: 'Deep', category_ids: [child.id] } })
    const inParent = await ctx.expectStatus<Product>(201, { method: 'POST', url: PRODUCTS, token: admin, payload: { title: 'Shallow', category_ids: [parent.id] } })
    const idsOf = async (query: string, token?: string) =>
      (await ctx.expectStatus<Page>(200, { method: 'GET', url: `${PRODUCTS}?category=${parent.slug}${query}`, token })).products.map((product) => product.id)
    // Every way of reading the page: the public's (its stored items), the staff's and a locale's (the rows), a walk by cursor.
    for (const [query, token] of [['', undefined], ['', admin], ['&locale=fr', undefined], ['&after=', undefined]] as const) {
      expect(await idsOf(query, token), `${query} ${token ? 'admin' : ''}`).toEqual([inParent.id, inChild.id])
    }
    // A parent with no product of its own still lists its children's.
    const bare = await ctx.expectStatus<{ id: string; slug: string }>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: `Bare ${Math.random()}` } })
    const under = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: `Under ${Math.random()}`, parent_id: bare.id } })
    const deeper = await ctx.expectStatus<Product>(201, { method: 'POST', url: PRODUCTS, token: admin, payload: { title: 'Deeper', category_ids: [under.id] } })
    for (const token of [undefined, admin]) {
      expect((await ctx.expectStatus<Page>(200, { method: 'GET', url: `${PRODUCTS}?category=${bare.slug}`, token })).products.map((product) => product.id)).toEqual([deeper.id])
    }
    // Moving the child elsewhere takes its products out of the parent's list.
    const other = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: `Other ${Math.random()}` } })
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/categories/${child.id}`, token: admin, payload: { parent_id: other.id } })
    expect((await ctx.expectStatus<Page>(200, { method: 'GET', url: `${PRODUCTS}?category=${parent.slug}` })).products.map((product) => product.id)).toEqual([inParent.id])
  })

  test('bad filters are 400 naming the field', async ({ ctx }) => {
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${PRODUCTS}?option=Size` })
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${PRODUCTS}?attr=grams:a..b` })
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${PRODUCTS}?price_min=5&price_max=1` })
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${PRODUCTS}?sort=relevance` })
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${PRODUCTS}?sort=manual` })
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${PRODUCTS}?currency=XYZ` })
    await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${PRODUCTS}?sort=title&after=nonsense` })
  })
})

describe('the listing in memory', () => {
  test("follows a product's terms, price and visibility as they change, over the whole catalog and a category", async ({ ctx, admin }) => {
    const category = await ctx.expectStatus<{ id: string; slug: string }>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: `Moves ${Math.random()}` } })
    const [old, fresh] = [`was-${Math.random().toString(36).slice(2, 8)}`, `now-${Math.random().toString(36).slice(2, 8)}`]
    const make = (title: string, tags: string[]) => ctx.expectStatus<Product>(201, { method: 'POST', url: PRODUCTS, token: admin, payload: { title, price: 10, tags, category_ids: [category.id] } })
    const patch = (id: string, payload: object) => ctx.expectStatus(200, { method: 'PATCH', url: `${PRODUCTS}/${id}`, token: admin, payload })
    /** The ids listed by the index and by the statements (a staff filter on status), which must agree, with the tag facet's counts. */
    const listed = async (query: string) => {
      const pages = await Promise.all([
        ctx.expectStatus<Page>(200, { method: 'GET', url: `${PRODUCTS}?${query}&facets=true` }),
        ctx.expectStatus<Page>(200, { method: 'GET', url: `${PRODUCTS}?${query}&facets=true&status=active`, token: admin }),
      ])
      expect(pages[0].products.map((product) => product.id), query).toEqual(pages[1].products.map((product) => product.id))
      expect(pages[0].facets, query).toEqual(pages[1].facets)
      return pages[0].products.map((product) => product.id)
    }
    const a = await make('A', [old])
    const b = await make('B', [fresh])
    for (const scope of ['', `category=${category.slug}&`]) {
      expect(await listed(`${scope}tag=${old}`)).toEqual([a.id])
      expect(await listed(`${scope}tag=${fresh}`)).toEqual([b.id])
    }
    // Its tags change: it leaves the old tag's list and joins the new one's.
    await patch(a.id, { tags: [fresh] })
    for (const scope of ['', `category=${category.slug}&`]) {
      expect(await listed(`${scope}tag=${old}`)).toEqual([])
      expect(await listed(`${scope}tag=${fresh}`)).toEqual([b.id, a.id])
    }
    // Only its price changes: its terms stay as they were.
    await patch(a.id, { price: 99 })
    expect(await listed(`tag=${fresh}&price_min=50`)).toEqual([a.id])
    // Archived, it leaves every list; a product made after it takes its place and only its own terms.
    await patch(b.id, { status: 'archived' })
    expect(await listed(`tag=${fresh}`)).toEqual([a.id])
    const c = await make('C', [old])
    expect(await listed(`tag=${fresh}`)).toEqual([a.id])
    expect(await listed(`tag=${old}`)).toEqual([c.id])
    expect(await listed(`category=${category.slug}&tag=${old}&tag=${fresh}`)).toEqual([c.id, a.id])
  })

  test('counts what committed before the request, whatever order writers commit in', async ({ ctx, admin }) => {
    const category = await ctx.expectStatus<{ id: string; slug: string }>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: `Order ${Math.random()}` } })
    const make = (title: string) => ctx.expectStatus<Product>(201, { method: 'POST', url: PRODUCTS, token: admin, payload: { title, category_ids: [category.id] } })
    const first = await make('First')
    const second = await make('Second')
    // A price no other product has (a new tag would make the second writer wait for the first's facet label).
    const cents = 700_000 + Math.floor(Math.random() * 99_999)
    const priced = async () =>
      (await ctx.expectStatus<Page>(200, { method: 'GET', url: `${PRODUCTS}?category=${category.slug}&price_min=${cents / 100}&price_max=${cents / 100}&facets=true` })).products.map(
        (product) => product.id,
      )
    expect(await priced()).toEqual([])
    // A writer that began first commits last: the index read the second's change in between.
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    let written!: () => void
    const writing = new Promise<void>((resolve) => (written = resolve))
    const slow = ctx.handle.sql.begin(async (tx) => {
      await tx`update products set price_minor = ${cents} where id = ${first.id}`
      written()
      await released
    })
    await writing
    await ctx.handle.sql`update products set price_minor = ${cents} where id = ${second.id}`
    expect(await priced()).toEqual([second.id])
    release()
    await slow
    expect(await priced()).toEqual([second.id, first.id])
  })
})

describe('sorting', () => {
  test('every sort orders the same by page and by cursor, ties by id', async ({ ctx, admin }) => {
    const specs: Spec[] = [30, 10, 20, 10, 40].map((price, i) => ({ tags: [], type: null, vendor: null, sizes: [], material: null, grams: null, price, compareAt: null, stock: i }))
    const { slug, ids } = await seed(ctx, admin, specs)
    // Units sold over the window, as the worker's refresh writes them.
    await ctx.handle.sql`update product_listing set sold = case product_id ${ctx.handle.sql.unsafe(ids.map((id, i) => `when '${id}' then ${[5, 0, 9, 5, 1][i]}`).join(' '))} end where product_id = any(${ids})`
    const titles = await Promise.all(ids.map((id, i) => ctx.expectStatus(200, { method: 'PATCH', url: `${PRODUCTS}/${id}`, token: admin, payload: { title: ['pear', 'Apple', 'fig', 'apple', 'Date'][i] } })))
    expect(titles).toHaveLength(5)
    const byId = (order: number[]) => order.map((i) => ids[i]!)
    const sortedIds = (list: string[]) => [...list].sort()
    const tie = (a: number, b: number) => (ids[a]! < ids[b]! ? [a, b] : [b, a])
    const expected: Record<string, string[]> = {
      newest: byId([4, 3, 2, 1, 0]),
      price_asc: byId([...tie(1, 3), 2, 0, 4]),
      price_desc: byId([4, 0, 2, ...tie(1, 3).reverse()]),
      best_selling: byId([2, ...tie(0, 3).reverse(), 4, 1]),
      title: byId([...tie(1, 3), 4, 2, 0]),
    }
    for (const [sort, order] of Object.entries(expected)) {
      const page = await ctx.expectStatus<Page>(200, { method: 'GET', url: `${PRODUCTS}?category=${slug}&sort=${sort}` })
      expect(page.products.map((product) => product.id), sort).toEqual(order)
      const walked: string[] = []
      let after: string | null | undefined = ''
      do {
        const next: Page = await ctx.expectStatus(200, { method: 'GET', url: `${PRODUCTS}?category=${slug}&sort=${sort}&per_page=2&after=${after}` })
        walked.push(...next.products.map((product) => product.id))
        after = next.meta.next_cursor
      } while (after)
      expect(walked, `${sort} by cursor`).toEqual(order)
      expect(sortedIds(walked)).toEqual(sortedIds(ids))
    }
  })

  test('relevance orders a search by how well it matches', async ({ ctx, admin }) => {
    const word = `quokka${Math.random().toString(36).slice(2, 7)}`
    const weak = await ctx.expectStatus<Product>(201, { method: 'POST', url: PRODUCTS, token: admin, payload: { title: `Plain mug`, description: `A ${word} once looked at it` } })
    const strong = await ctx.expectStatus<Product>(201, { method: 'POST', url: PRODUCTS, token: admin, payload: { title: `${word} ${word} mug`, description: `The ${word} mug` } })
    const page = await ctx.expectStatus<Page>(200, { method: 'GET', url: `${PRODUCTS}?search=${word}&sort=relevance` })
    expect(page.products.map((product) => product.id)).toEqual([strong.id, weak.id])
  })
})

describe('the market', () => {
  test("reads prices in the market's currency with the reader's price lists, and leaves out what is not sold there", async ({ ctx, admin }) => {
    const suffix = Math.random().toString(36).slice(2, 8)
    const category = await ctx.expectStatus<{ id: string; slug: string }>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: `Market ${suffix}` } })
    const make = (title: string, price: number) => ctx.expectStatus<Product>(201, { method: 'POST', url: PRODUCTS, token: admin, payload: { title, price, category_ids: [category.id] } })
    const a = await make('A', 10)
    const b = await make('B', 20)
    const usdOnly = await make('C', 5)
    for (const [product, amount] of [[a, 30], [b, 25]] as const) {
      await ctx.expectStatus(200, { method: 'POST', url: `${PRODUCTS}/${product.id}/prices`, token: admin, payload: { prices: [{ currency: 'EUR', amount, compare_at_amount: 40 }] } })
    }
    const eur = await ctx.expectStatus<Page>(200, { method: 'GET', url: `${PRODUCTS}?category=${category.slug}&currency=EUR&sort=price_asc` })
    expect(eur.products.map((product) => [product.id, product.market_price])).toEqual([
      [b.id, { currency: 'EUR', amount: 25, on_sale: true }],
      [a.id, { currency: 'EUR', amount: 30, on_sale: true }],
    ])
    expect(eur.products.map((product) => product.id)).not.toContain(usdOnly.id)
    // A sale list for one customer group: its members pay less, and sort by what they pay.
    const group = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/customer-groups', token: admin, payload: { name: `VIP ${suffix}` } })
    const member = await ctx.signIn('customer', `vip-${suffix}@example.com`)
    await ctx.expectStatus(200, { method: 'POST', url: `/api/v1/customer-groups/${group.id}/customers`, token: admin, payload: { customer_ids: [member.customerId] } })
    const list = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/price-lists', token: admin, payload: { name: `VIP ${suffix}`, customer_group_ids: [group.id] } })
    await ctx.expectStatus(200, { method: 'POST', url: `/api/v1/price-lists/${list.id}/prices`, token: admin, payload: { prices: [{ product_id: a.id, currency: 'EUR', amount: 12 }] } })
    const vip = await ctx.expectStatus<Page>(200, { method: 'GET', url: `${PRODUCTS}?category=${category.slug}&currency=EUR&sort=price_asc`, token: member.token })
    expect(vip.products.map((product) => [product.id, product.market_price?.amount])).toEqual([
      [a.id, 12],
      [b.id, 25],
    ])
    const guest = await ctx.expectStatus<Page>(200, { method: 'GET', url: `${PRODUCTS}?category=${category.slug}&currency=EUR&price_max=20` })
    expect(guest.products).toEqual([])
    // The facets read the same prices: the price range ignores its own filter (the on-sale count does not), the members' is theirs.
    const faceted = await ctx.expectStatus<Page>(200, { method: 'GET', url: `${PRODUCTS}?category=${category.slug}&currency=EUR&price_max=20&facets=true` })
    expect(faceted.meta.total).toBe(0)
    expect(faceted.facets).toMatchObject({ price: { min: 25, max: 30 }, on_sale: 0, available: 0 })
    const vipFacets = await ctx.expectStatus<Page>(200, { method: 'GET', url: `${PRODUCTS}?category=${category.slug}&currency=EUR&facets=true`, token: member.token })
    expect(vipFacets.facets).toMatchObject({ price: { min: 12, max: 25 }, on_sale: 2 })
  })
})

describe('what the in-memory listing remembers by name', () => {
  test('a category or collection renamed or unpublished, and an attribute renamed, show in the next public list', async ({ ctx, admin }) => {
    const suffix = Math.random().toString(36).slice(2, 8)
    const attribute = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/attributes', token: admin, payload: { key: `fabric_${suffix}`, name: 'Material', type: 'text', filterable: true } })
    const category = await ctx.expectStatus<{ id: string; slug: string }>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: `Named ${suffix}` } })
    const product = await ctx.expectStatus<Product>(201, {
      method: 'POST',
      url: PRODUCTS,
      token: admin,
      payload: { title: `Named ${suffix}`, price: 5, category_ids: [category.id], attributes: { [`fabric_${suffix}`]: 'wool' } },
    })
    const collection = await ctx.expectStatus<{ id: string; slug: string }>(201, { method: 'POST', url: '/api/v1/collections', token: admin, payload: { title: `Named ${suffix}`, kind: 'manual', product_ids: [product.id] } })
    const list = (query: string) => ctx.expectStatus<Page>(200, { method: 'GET', url: `${PRODUCTS}?${query}&sort=price_asc&facets=true` })
    const label = (page: Page) => (page.facets as ProductFacets).attributes.find((entry) => entry.key === `fabric_${suffix}`)?.label

    const before = await list(`category=${category.slug}`)
    expect(before.products.map((item) => item.id)).toEqual([product.id])
    expect(label(before)).toBe('Material')
    expect((await list(`collection=${collection.slug}`)).meta.total).toBe(1)

    // Each change alone, right after a list that remembered what it changes.
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/attributes/${attribute.id}`, token: admin, payload: { name: 'Fabric' } })
    expect(label(await list(`category=${category.slug}`))).toBe('Fabric')
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/categories/${category.id}`, token: admin, payload: { slug: `renamed-${suffix}` } })
    expect((await list(`category=${category.slug}`)).meta.total).toBe(0)
    expect((await list(`category=renamed-${suffix}`)).products.map((item) => item.id)).toEqual([product.id])

    expect((await list(`collection=${collection.slug}`)).meta.total).toBe(1)
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/collections/${collection.id}`, token: admin, payload: { published: false } })
    expect((await list(`collection=${collection.slug}`)).meta.total).toBe(0)
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/collections/${collection.id}`, token: admin, payload: { published: true, slug: `moved-${suffix}` } })
    expect((await list(`collection=${collection.slug}`)).meta.total).toBe(0)
    expect((await list(`collection=moved-${suffix}`)).meta.total).toBe(1)
  })
})
