/**
 * The catalog model of a storefront (docs/catalog.md): options and their variants, status and
 * scheduled publication, compare-at prices, identifiers and logistics, SEO, slug redirects — on a
 * real database, through the real app (and its socket where requests race).
 */
import fc from 'fast-check'
import { describe, expect } from 'vitest'
import { withGtinCheckDigit, type Product, type Variant } from '@commerce/domain'
import { publishDueProducts } from '@commerce/db'
import { test, type TestContext } from './helpers.js'

const PRODUCTS = '/api/v1/products'

function createProduct(ctx: TestContext, admin: string, payload: Record<string, unknown>): Promise<Product> {
  return ctx.expectStatus(201, { method: 'POST', url: PRODUCTS, payload, token: admin })
}

function patchProduct(ctx: TestContext, admin: string, id: string, payload: Record<string, unknown>): Promise<Product> {
  return ctx.expectStatus(200, { method: 'PATCH', url: `${PRODUCTS}/${id}`, payload, token: admin })
}

const values = (...texts: string[]) => texts.map((value) => ({ value }))

async function tee(ctx: TestContext, admin: string, extra: Record<string, unknown> = {}): Promise<Product> {
  return createProduct(ctx, admin, {
    title: `Tee ${Math.random()}`,
    price: 20,
    options: [
      { name: 'Size', values: values('S', 'M') },
      { name: 'Colour', values: [{ value: 'Blue', swatch_color: '#1e40af' }, { value: 'Red', swatch_color: '#b91c1c' }] },
    ],
    ...extra,
  })
}

function generate(ctx: TestContext, admin: string, id: string, payload: Record<string, unknown> = {}): Promise<{ variants: Variant[] }> {
  return ctx.expectStatus(201, { method: 'POST', url: `${PRODUCTS}/${id}/variants/generate`, payload, token: admin })
}

function detail(ctx: TestContext, id: string, token?: string): Promise<Product> {
  return ctx.expectStatus(200, { method: 'GET', url: `${PRODUCTS}/${id}`, token })
}

describe('options and variants', () => {
  test('a product keeps its options in order with swatches, and generates every combination once', async ({ ctx, admin }) => {
    const product = await tee(ctx, admin)
    expect(product.options.map((option) => [option.name, option.values.map((value) => [value.value, value.swatch_color])])).toEqual([
      ['Size', [['S', null], ['M', null]]],
      ['Colour', [['Blue', '#1e40af'], ['Red', '#b91c1c']]],
    ])
    const { variants } = await generate(ctx, admin, product.id, {
      price: 22,
      inventory_quantity: 5,
      variants: [{ options: { size: 'm', colour: 'red' }, sku: 'TEE-M-RED', price: 25, compare_at_price: 30, inventory_quantity: 1 }],
    })
    expect(variants.map((variant) => [variant.title, variant.options, variant.price, variant.inventory_quantity, variant.sku, variant.on_sale])).toEqual([
      ['S / Blue', { Size: 'S', Colour: 'Blue' }, 22, 5, null, false],
      ['S / Red', { Size: 'S', Colour: 'Red' }, 22, 5, null, false],
      ['M / Blue', { Size: 'M', Colour: 'Blue' }, 22, 5, null, false],
      ['M / Red', { Size: 'M', Colour: 'Red' }, 25, 1, 'TEE-M-RED', true],
    ])
    // A second call makes only what is missing: nothing.
    expect((await generate(ctx, admin, product.id)).variants).toEqual([])
    // One more value: one more column of combinations.
    const grown = await patchProduct(ctx, admin, product.id, { options: [{ name: 'Size', values: values('S', 'M', 'L') }, { name: 'Colour', values: values('Blue', 'Red') }] })
    expect(grown.options[0]!.values.map((value) => value.id).slice(0, 2)).toEqual(product.options[0]!.values.map((value) => value.id))
    expect((await generate(ctx, admin, product.id)).variants.map((variant) => variant.title)).toEqual(['L / Blue', 'L / Red'])
    expect((await detail(ctx, product.id)).variants).toHaveLength(6)
  })

  test('a variant names one value of every option: unknown, missing and taken values are refused, naming them', async ({ ctx, admin }) => {
    const product = await tee(ctx, admin)
    const url = `${PRODUCTS}/${product.id}/variants`
    const first = await ctx.expectStatus<Variant>(201, { method: 'POST', url, token: admin, payload: { title: 'Small blue', options: { Size: 'S', Colour: 'Blue' } } })
    expect(first.options).toEqual({ Size: 'S', Colour: 'Blue' })
    await ctx.expectInvalidField({ method: 'POST', url, token: admin, payload: { title: 'x', options: { Size: 'XL', Colour: 'Blue' } } }, 'options.Size', 'product_variants')
    await ctx.expectInvalidField({ method: 'POST', url, token: admin, payload: { title: 'x', options: { Size: 'S' } } }, 'options.Colour', 'product_variants')
    await ctx.expectInvalidField({ method: 'POST', url, token: admin, payload: { title: 'x', options: { Size: 'S', Colour: 'Blue', Fit: 'Slim' } } }, 'options.Fit', 'product_variants')
    const taken = await ctx.expectError(409, 'conflict', { method: 'POST', url, token: admin, payload: { title: 'Again', options: { size: 's', colour: 'BLUE' } } })
    expect(taken.message).toContain(`Variant 'Small blue' (${first.id})`)
    // Moving another variant onto those values is refused the same way.
    const second = await ctx.expectStatus<Variant>(201, { method: 'POST', url, token: admin, payload: { title: 'Small red', options: { Size: 'S', Colour: 'Red' } } })
    const moved = await ctx.expectError(409, 'conflict', { method: 'PATCH', url: `${url}/${second.id}`, token: admin, payload: { options: { Size: 'S', Colour: 'Blue' } } })
    expect(moved.message).toContain(first.id)
  })

  test('twenty requests racing for one combination make exactly one variant; the others are 409', async ({ ctx, admin, baseUrl }) => {
    const product = await tee(ctx, admin)
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        fetch(`${baseUrl}${PRODUCTS}/${product.id}/variants`, {
          method: 'POST',
          headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
          body: JSON.stringify({ title: `Racer ${i}`, options: { Size: 'M', Colour: 'Red' } }),
        }),
      ),
    )
    const statuses = answers.map((answer) => answer.status).sort()
    expect(statuses).toEqual([201, ...Array<number>(19).fill(409)])
    const [row] = await ctx.handle.sql<{ count: number }[]>`select count(*)::int as count from product_variants where product_id = ${product.id}`
    expect(row!.count).toBe(1)
  })

  test('renaming and reordering values moves the variants with them; removing one still chosen is 409 naming the variants', async ({ ctx, admin }) => {
    const product = await tee(ctx, admin)
    const { variants } = await generate(ctx, admin, product.id)
    const [size, colour] = product.options
    const renamed = await patchProduct(ctx, admin, product.id, {
      options: [
        { id: colour!.id, name: 'Color', values: [{ value: 'Red' }, { id: colour!.values[0]!.id, value: 'Navy' }] },
        { id: size!.id, name: 'Size', values: values('S', 'M') },
      ],
    })
    expect(renamed.options.map((option) => option.name)).toEqual(['Color', 'Size'])
    expect(renamed.options[0]!.values.map((value) => value.value)).toEqual(['Red', 'Navy'])
    // The swatch stays with the renamed value.
    expect(renamed.options[0]!.values[1]!.swatch_color).toBe('#1e40af')
    expect(renamed.variants.find((variant) => variant.id === variants[0]!.id)!.options).toEqual({ Color: 'Navy', Size: 'S' })
    // Titles that were their values follow; a title of the merchant's own stays.
    expect(renamed.variants.find((variant) => variant.id === variants[0]!.id)!.title).toBe('Navy / S')

    const before = await ctx.countRows('events')
    const refused = await ctx.expectError(409, 'conflict', {
      method: 'PATCH',
      url: `${PRODUCTS}/${product.id}`,
      token: admin,
      payload: { title: 'Renamed too', options: [{ name: 'Color', values: values('Red') }, { name: 'Size', values: values('S', 'M') }] },
    })
    // Named by title and id: the merchant knows the first by its title.
    const titled = renamed.variants.filter((variant) => variant.id === variants[0]!.id || variant.id === variants[2]!.id).map((variant) => `'${variant.title}' (${variant.id})`)
    expect(refused.message).toContain(`'Navy' of option 'Color' (variants ${titled.join(', ')})`)
    // Nothing of the refused write stays: not its title, nor an event.
    expect((await detail(ctx, product.id)).title).toBe(product.title)
    expect(await ctx.countRows('events')).toBe(before)
  })

  test('a new option needs a default value for the existing variants; removing an option that would make two variants alike is 409', async ({ ctx, admin }) => {
    const product = await tee(ctx, admin)
    await generate(ctx, admin, product.id)
    const current = (await detail(ctx, product.id)).options.map((option) => ({ id: option.id, name: option.name, values: option.values.map((value) => ({ id: value.id, value: value.value })) }))
    await ctx.expectInvalidField(
      { method: 'PATCH', url: `${PRODUCTS}/${product.id}`, token: admin, payload: { options: [...current, { name: 'Fit', values: values('Slim', 'Wide') }] } },
      'options[2].default_value',
      'product_variants',
    )
    const withFit = await patchProduct(ctx, admin, product.id, { options: [...current, { name: 'Fit', values: values('Slim', 'Wide'), default_value: 'Slim' }] })
    expect(withFit.variants.map((variant) => variant.options['Fit'])).toEqual(['Slim', 'Slim', 'Slim', 'Slim'])
    const clash = await ctx.expectError(409, 'conflict', { method: 'PATCH', url: `${PRODUCTS}/${product.id}`, token: admin, payload: { options: [current[0]] } })
    expect(clash.message).toMatch(/^Variants '[^']+' \([0-9a-f-]{36}\) and '[^']+' \([0-9a-f-]{36}\) would have the same values \(Size: S\)/)
    // Without Fit (every variant has Slim), the variants stay distinct: the removal goes through.
    const without = await patchProduct(ctx, admin, product.id, { options: current })
    expect(without.variants.map((variant) => variant.options)).toEqual(withFit.variants.map((variant) => ({ Size: variant.options['Size'], Colour: variant.options['Colour'] })))
  })

  test("a product's free-form variant options become its first options' values", async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: `Old hoodie ${Math.random()}` })
    for (const size of ['S', 'M']) {
      await ctx.expectStatus(201, { method: 'POST', url: `${PRODUCTS}/${product.id}/variants`, token: admin, payload: { title: size, options: { size } } })
    }
    // An empty list on a product without options changes nothing.
    expect((await patchProduct(ctx, admin, product.id, { options: [] })).variants.map((variant) => variant.options)).toEqual([{ size: 'S' }, { size: 'M' }])
    const structured = await patchProduct(ctx, admin, product.id, { options: [{ name: 'Size', values: values('S', 'M', 'L') }] })
    expect(structured.variants.map((variant) => variant.options)).toEqual([{ Size: 'S' }, { Size: 'M' }])
    expect((await generate(ctx, admin, product.id)).variants.map((variant) => variant.title)).toEqual(['L'])
  })

  test('generating needs options and stops at 1000 combinations', async ({ ctx, admin }) => {
    const plain = await createProduct(ctx, admin, { title: `Plain ${Math.random()}` })
    await ctx.expectInvalidField({ method: 'POST', url: `${PRODUCTS}/${plain.id}/variants/generate`, token: admin, payload: {} }, 'options', 'product_variants')
    const many = await createProduct(ctx, admin, {
      title: `Many ${Math.random()}`,
      options: ['A', 'B', 'C'].map((name) => ({ name, values: values(...Array.from({ length: 11 }, (_, i) => String(i))) })),
    })
    await ctx.expectInvalidField({ method: 'POST', url: `${PRODUCTS}/${many.id}/variants/generate`, token: admin, payload: {} }, 'options', 'product_variants')
  })
})

describe('status and scheduled publication', () => {
  test('a draft is the staff’s only: 404 to the public, absent from the public list; admins see it', async ({ ctx, admin, customer }) => {
    // A word that begins with a letter: PostgreSQL's parser splits one such as '2e4kq' into '2e4' and 'kq'.
    const draft = await createProduct(ctx, admin, { title: `Draft d${Math.random().toString(36).slice(2)}`, status: 'draft' })
    expect(draft).toMatchObject({ status: 'draft', is_active: false, published_at: null })
    for (const url of [`${PRODUCTS}/${draft.id}`, `${PRODUCTS}/${draft.id}/variants`, `${PRODUCTS}/${draft.id}/images`, `${PRODUCTS}/by-slug/${draft.slug}`]) {
      await ctx.expectError(404, 'not_found', { method: 'GET', url })
      await ctx.expectError(404, 'not_found', { method: 'GET', url, token: customer })
      await ctx.expectStatus(200, { method: 'GET', url, token: admin })
    }
    const search = `?search=${encodeURIComponent(draft.title)}`
    expect((await ctx.expectStatus<{ products: Product[] }>(200, { method: 'GET', url: `${PRODUCTS}${search}` })).products).toEqual([])
    expect((await ctx.expectStatus<{ products: Product[] }>(200, { method: 'GET', url: `${PRODUCTS}${search}&include_inactive=true`, token: admin })).products.map((product) => product.id)).toEqual([draft.id])
    // Adding a draft to a cart is refused as any product not for sale.
    const cart = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: 'USD' } })
    await ctx.expectError(404, 'not_found', { method: 'POST', url: `/api/v1/carts/${cart.id}/items`, payload: { product_id: draft.id, quantity: 1 } })
    // The staff's status filter, and the filtered list (the listing read model) following the status.
    const drafts = await ctx.expectStatus<{ products: Product[] }>(200, { method: 'GET', url: `${PRODUCTS}${search}&status=draft`, token: admin })
    expect(drafts.products.map((product) => product.id)).toEqual([draft.id])
    await ctx.expectError(401, 'unauthorized', { method: 'GET', url: `${PRODUCTS}?status=draft` })
    expect((await ctx.expectStatus<{ products: Product[] }>(200, { method: 'GET', url: `${PRODUCTS}${search}&sort=title` })).products).toEqual([])
    const active = await patchProduct(ctx, admin, draft.id, { status: 'active' })
    expect(active.is_active).toBe(true)
    expect(Date.parse(active.published_at!)).toBeGreaterThan(Date.now() - 60_000)
    expect((await ctx.expectStatus<{ products: Product[] }>(200, { method: 'GET', url: `${PRODUCTS}${search}&sort=title` })).products.map((product) => product.id)).toEqual([draft.id])
    expect((await ctx.expectStatus<{ products: Product[] }>(200, { method: 'GET', url: `${PRODUCTS}${search}&status=draft`, token: admin })).products).toEqual([])
  })

  test('is_active written alone sets the status (true: active, false: archived); DELETE archives; both together are 400', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: `Compat ${Math.random()}`, is_active: false })
    expect(product).toMatchObject({ status: 'archived', is_active: false })
    expect(await patchProduct(ctx, admin, product.id, { is_active: true })).toMatchObject({ status: 'active', is_active: true })
    await ctx.expectStatus(204, { method: 'DELETE', url: `${PRODUCTS}/${product.id}`, token: admin })
    // An archived product is still readable (orders link to it), as soft-deleted ones were.
    expect(await detail(ctx, product.id)).toMatchObject({ status: 'archived', is_active: false })
    await ctx.expectInvalidField({ method: 'PATCH', url: `${PRODUCTS}/${product.id}`, token: admin, payload: { status: 'active', is_active: true } }, 'is_active', 'products')
  })

  test('a product scheduled for later is hidden until then; its moment publishes it once, with its product.updated event', async ({ ctx, admin }) => {
    const at = new Date(Date.now() + 1500)
    const scheduled = await createProduct(ctx, admin, { title: `Launch ${Math.random()}`, status: 'active', published_at: at.toISOString() })
    expect(scheduled).toMatchObject({ status: 'active', is_active: false, published_at: at.toISOString() })
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${PRODUCTS}/${scheduled.id}` })
    // The trigger asked the worker for a run at that moment, keyed to the product.
    const jobs = await ctx.handle.sql<{ on_time: boolean; task_identifier: string }[]>`
      select run_at = ${at.toISOString()}::timestamptz as on_time, task_identifier from graphile_worker.jobs where key = ${`publish-product:${scheduled.id}`}`
    expect(jobs).toEqual([{ on_time: true, task_identifier: 'publish-product' }])
    // Too early, the run publishes nothing.
    expect(await publishDueProducts(ctx.app.db)).not.toContain(scheduled.id)
    await new Promise((resolve) => setTimeout(resolve, at.getTime() - Date.now() + 50))
    const runs = await Promise.all([publishDueProducts(ctx.app.db), publishDueProducts(ctx.app.db)])
    expect(runs.flat().filter((id) => id === scheduled.id)).toHaveLength(1)
    expect(await detail(ctx, scheduled.id)).toMatchObject({ is_active: true, status: 'active' })
    const events = await ctx.productEvents(scheduled.id)
    expect(events.map((event) => [event.kind, event.data.is_active])).toEqual([
      ['product.created', false],
      ['product.updated', true],
    ])
  })

  test('moving the moment reschedules the one job; a draft is never published by it', async ({ ctx, admin }) => {
    const later = new Date(Date.now() + 3_600_000)
    const product = await createProduct(ctx, admin, { title: `Later ${Math.random()}`, published_at: later.toISOString() })
    const evenLater = new Date(later.getTime() + 3_600_000)
    await patchProduct(ctx, admin, product.id, { published_at: evenLater.toISOString() })
    const jobs = await ctx.handle.sql<{ on_time: boolean }[]>`
      select run_at = ${evenLater.toISOString()}::timestamptz as on_time from graphile_worker.jobs where key = ${`publish-product:${product.id}`}`
    expect(jobs).toEqual([{ on_time: true }])
    await patchProduct(ctx, admin, product.id, { status: 'draft', published_at: new Date(Date.now() - 1000).toISOString() })
    expect(await publishDueProducts(ctx.app.db)).not.toContain(product.id)
    expect(await detail(ctx, product.id, admin)).toMatchObject({ status: 'draft', is_active: false })
  })
})

describe('compare-at prices', () => {
  test('a product, its variants and its prices show what they were and whether they are on sale; a cart pays the price', async ({ ctx, admin }) => {
    const product = await createProduct(ctx, admin, { title: `Sale ${Math.random()}`, price: 40, compare_at_price: 50, inventory_quantity: 10 })
    expect(product).toMatchObject({ price: 40, compare_at_price: 50, on_sale: true })
    const url = `${PRODUCTS}/${product.id}/variants`
    const inherits = await ctx.expectStatus<Variant>(201, { method: 'POST', url, token: admin, payload: { title: 'Inherits' } })
    expect(inherits).toMatchObject({ price: null, compare_at_price: null, on_sale: true })
    const own = await ctx.expectStatus<Variant>(201, { method: 'POST', url, token: admin, payload: { title: 'Own', price: 60, compare_at_price: 55 } })
    expect(own).toMatchObject({ price: 60, compare_at_price: 55, on_sale: false })
    await ctx.expectInvalidField({ method: 'PATCH', url: `${PRODUCTS}/${product.id}`, token: admin, payload: { compare_at_price: 10.001 } }, 'compare_at_price', 'products')
    const { prices } = await ctx.expectStatus<{ prices: { compare_at_amount: number | null; amount: number }[] }>(200, {
      method: 'POST',
      url: `${PRODUCTS}/${product.id}/prices`,
      token: admin,
      payload: { prices: [{ currency: 'EUR', amount: 35, compare_at_amount: 45 }] },
    })
    expect(prices[0]).toMatchObject({ amount: 35, compare_at_amount: 45 })
    const cart = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: '/api/v1/carts', payload: { currency: 'USD' } })
    const withLine = await ctx.expectStatus<{ totals: { subtotal: number } }>(201, { method: 'POST', url: `/api/v1/carts/${cart.id}/items`, payload: { product_id: product.id, quantity: 2 } })
    expect(withLine.totals.subtotal).toBe(80)
  })
})

describe('identifiers, logistics and SEO', () => {
  test('round-trips what it is given, normalised: tags, HS code; barcodes, countries and units are checked', async ({ ctx, admin }) => {
    const gtin = withGtinCheckDigit('400638133393')
    const product = await createProduct(ctx, admin, {
      title: `Kettle ${Math.random()}`,
      tags: [' Summer ', 'summer', 'New  in'],
      product_type: 'Kettle',
      vendor: 'Acme',
      barcode: gtin,
      length: 20.5,
      width: 15,
      height: 25,
      dimension_unit: 'cm',
      hs_code: '8516.10.80',
      country_of_origin: 'DE',
      seo_title: 'The kettle',
      seo_description: 'Boils water quickly',
    })
    expect(product).toMatchObject({
      tags: ['Summer', 'New in'],
      product_type: 'Kettle',
      vendor: 'Acme',
      barcode: gtin,
      length: 20.5,
      width: 15,
      height: 25,
      dimension_unit: 'cm',
      hs_code: '85161080',
      country_of_origin: 'DE',
      seo_title: 'The kettle',
      seo_description: 'Boils water quickly',
    })
    const wrongDigit = gtin.slice(0, -1) + String((Number(gtin.at(-1)) + 1) % 10)
    const url = `${PRODUCTS}/${product.id}`
    await ctx.expectInvalidField({ method: 'PATCH', url, token: admin, payload: { barcode: wrongDigit } }, 'barcode', 'products')
    await ctx.expectInvalidField({ method: 'PATCH', url, token: admin, payload: { hs_code: '85-16' } }, 'hs_code', 'products')
    await ctx.expectInvalidField({ method: 'PATCH', url, token: admin, payload: { country_of_origin: 'XX' } }, 'country_of_origin', 'products')
    await ctx.expectInvalidField({ method: 'PATCH', url, token: admin, payload: { dimension_unit: 'yd' } }, 'dimension_unit', 'products')
    await ctx.expectInvalidField({ method: 'POST', url: `${url}/variants`, token: admin, payload: { title: 'x', barcode: wrongDigit } }, 'barcode', 'product_variants')
    expect(await patchProduct(ctx, admin, product.id, { tags: [], vendor: null })).toMatchObject({ tags: [], vendor: null, product_type: 'Kettle' })
  })
})

describe('slugs', () => {
  test('a renamed product keeps answering at its old slugs, with its canonical slug; a new product may take an old slug over', async ({ ctx, admin }) => {
    const suffix = Math.random().toString(36).slice(2, 8)
    const product = await createProduct(ctx, admin, { title: 'Mug', slug: `mug-${suffix}` })
    await patchProduct(ctx, admin, product.id, { slug: `big-mug-${suffix}` })
    await patchProduct(ctx, admin, product.id, { slug: `huge-mug-${suffix}` })
    for (const slug of [`mug-${suffix}`, `big-mug-${suffix}`, `huge-mug-${suffix}`]) {
      const found = await ctx.expectStatus<Product>(200, { method: 'GET', url: `${PRODUCTS}/by-slug/${slug}` })
      expect([found.id, found.slug]).toEqual([product.id, `huge-mug-${suffix}`])
    }
    const other = await createProduct(ctx, admin, { title: 'Other mug', slug: `mug-${suffix}` })
    expect((await ctx.expectStatus<Product>(200, { method: 'GET', url: `${PRODUCTS}/by-slug/mug-${suffix}` })).id).toBe(other.id)
    // Back to a slug it had: it is its own again, not a redirect to itself.
    await patchProduct(ctx, admin, product.id, { slug: `big-mug-${suffix}` })
    expect((await ctx.expectStatus<Product>(200, { method: 'GET', url: `${PRODUCTS}/by-slug/huge-mug-${suffix}` })).slug).toBe(`big-mug-${suffix}`)
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${PRODUCTS}/by-slug/no-such-${suffix}` })
  })
})

describe('attributes', () => {
  interface Definition {
    id: string
    key: string
  }
  const define = (ctx: TestContext, admin: string, payload: Record<string, unknown>) =>
    ctx.expectStatus<Definition>(201, { method: 'POST', url: '/api/v1/attributes', payload, token: admin })

  test('values are checked against their definitions, naming the field; staff-only values show to staff only', async ({ ctx, admin, customer }) => {
    const suffix = Math.random().toString(36).slice(2, 8)
    const key = (name: string) => `${name}_${suffix}`
    await define(ctx, admin, { key: key('material'), name: 'Material', type: 'select', choices: ['cotton', 'wool'], filterable: true })
    await define(ctx, admin, { key: key('weight'), name: 'Weight', type: 'integer', unit: 'g', validation: { min: 1, max: 10000 } })
    await define(ctx, admin, { key: key('launch'), name: 'Launch', type: 'date', validation: { min: '2020-01-01' } })
    await define(ctx, admin, { key: key('code'), name: 'Code', type: 'text', validation: { pattern: '[A-Z]{3}' } })
    await define(ctx, admin, { key: key('features'), name: 'Features', type: 'multi_select', choices: ['warm', 'light', 'soft'] })
    const cost = await define(ctx, admin, { key: key('cost'), name: 'Cost', type: 'decimal', public: false })
    await define(ctx, admin, { key: key('related'), name: 'Related', type: 'product_reference' })
    await define(ctx, admin, { key: key('lining'), owner: 'variant', name: 'Lining', type: 'boolean' })
    const other = await createProduct(ctx, admin, { title: `Other ${suffix}` })
    const product = await createProduct(ctx, admin, {
      title: `Jumper ${suffix}`,
      attributes: { [key('material')]: 'wool', [key('weight')]: 350, [key('launch')]: '2024-02-29', [key('code')]: 'ABC', [key('features')]: ['soft', 'warm'], [key('cost')]: 12.5, [key('related')]: other.id },
    })
    expect(product.attributes).toEqual({ [key('material')]: 'wool', [key('weight')]: 350, [key('launch')]: '2024-02-29', [key('code')]: 'ABC', [key('features')]: ['warm', 'soft'], [key('cost')]: 12.5, [key('related')]: other.id })
    const publicView = await detail(ctx, product.id, customer)
    expect(publicView.attributes[key('cost')]).toBeUndefined()
    expect(publicView.attributes[key('material')]).toBe('wool')
    expect((await detail(ctx, product.id, admin)).attributes[key('cost')]).toBe(12.5)

    const url = `${PRODUCTS}/${product.id}`
    const bad: [string, unknown][] = [
      [key('material'), 'silk'],
      [key('weight'), 0],
      [key('weight'), 2.5],
      [key('launch'), '2023-02-30'],
      [key('launch'), '2019-12-31'],
      [key('code'), 'abcd'],
      [key('features'), ['warm', 'shiny']],
      [key('related'), '0190a6f1-7c3a-7000-8000-00000000dead'],
      [`nothing_${suffix}`, 'x'],
    ]
    for (const [name, value] of bad) {
      await ctx.expectInvalidField({ method: 'PATCH', url, token: admin, payload: { attributes: { [name]: value } } }, `attributes.${name}`, 'products')
    }
    // null removes a value; keys not sent stay.
    expect((await patchProduct(ctx, admin, product.id, { attributes: { [key('code')]: null } })).attributes[key('code')]).toBeUndefined()
    expect((await detail(ctx, product.id)).attributes[key('material')]).toBe('wool')
    // Variants hold the variant attributes.
    const variant = await ctx.expectStatus<Variant>(201, { method: 'POST', url: `${url}/variants`, token: admin, payload: { title: 'Lined', attributes: { [key('lining')]: true } } })
    expect(variant.attributes).toEqual({ [key('lining')]: true })
    await ctx.expectInvalidField({ method: 'POST', url: `${url}/variants`, token: admin, payload: { title: 'x', attributes: { [key('material')]: 'wool' } } }, `attributes.${key('material')}`, 'product_variants')

    // A definition made public moves its values: now everyone sees them.
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/attributes/${cost.id}`, token: admin, payload: { public: true } })
    expect((await detail(ctx, product.id, customer)).attributes[key('cost')]).toBe(12.5)
  })

  test('a change that values already written would break is 409; deleting a definition deletes its values', async ({ ctx, admin }) => {
    const suffix = Math.random().toString(36).slice(2, 8)
    const material = await define(ctx, admin, { key: `fabric_${suffix}`, name: 'Fabric', type: 'select', choices: ['cotton', 'wool'] })
    const product = await createProduct(ctx, admin, { title: `Scarf ${suffix}`, attributes: { [material.key]: 'wool' } })
    const refused = await ctx.expectError(409, 'conflict', { method: 'PATCH', url: `/api/v1/attributes/${material.id}`, token: admin, payload: { choices: ['cotton'] } })
    expect(refused.message).toContain('1 product(s)')
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/attributes/${material.id}`, token: admin, payload: { choices: ['cotton', 'wool', 'linen'] } })
    await ctx.expectError(409, 'conflict', { method: 'POST', url: '/api/v1/attributes', token: admin, payload: { key: material.key, name: 'Again', type: 'text' } })
    await ctx.expectInvalidField({ method: 'POST', url: '/api/v1/attributes', token: admin, payload: { key: `x_${suffix}`, name: 'X', type: 'select' } }, 'choices', 'attribute_definitions')
    await ctx.expectInvalidField({ method: 'POST', url: '/api/v1/attributes', token: admin, payload: { key: `y_${suffix}`, name: 'Y', type: 'text', validation: { min: 1 } } }, 'validation.min', 'attribute_definitions')
    await ctx.expectStatus(204, { method: 'DELETE', url: `/api/v1/attributes/${material.id}`, token: admin })
    expect((await detail(ctx, product.id)).attributes).toEqual({})
  })

  test('text attributes and option names and values read in the locale asked for', async ({ ctx, admin }) => {
    // Searched for below: a word that begins with a letter, as PostgreSQL's parser reads it whole.
    const suffix = `s${Math.random().toString(36).slice(2, 8)}`
    const care = await define(ctx, admin, { key: `care_${suffix}`, name: 'Care', type: 'rich_text' })
    const weight = await define(ctx, admin, { key: `grams_${suffix}`, name: 'Grams', type: 'integer' })
    const product = await tee(ctx, admin, { title: `Tee ${suffix}`, attributes: { [care.key]: '<p>Wash at 30°</p>', [weight.key]: 200 } })
    await generate(ctx, admin, product.id)
    const [size, colour] = product.options
    await ctx.expectStatus(201, {
      method: 'PUT',
      url: `${PRODUCTS}/${product.id}/translations/fr`,
      token: admin,
      payload: { attributes: { [care.key]: '<p>Laver à 30°</p>' }, options: { [colour!.id]: 'Couleur', [colour!.values[0]!.id]: 'Bleu', [size!.id]: 'Taille' } },
    })
    const french = await ctx.expectStatus<Product>(200, { method: 'GET', url: `${PRODUCTS}/${product.id}?locale=fr-CA` })
    expect(french.attributes).toEqual({ [care.key]: '<p>Laver à 30°</p>', [weight.key]: 200 })
    expect(french.options.map((option) => [option.name, option.values.map((value) => value.value)])).toEqual([
      ['Taille', ['S', 'M']],
      ['Couleur', ['Bleu', 'Red']],
    ])
    expect(french.variants[0]!.options).toEqual({ Taille: 'S', Couleur: 'Bleu' })
    const list = await ctx.expectStatus<{ products: Product[] }>(200, { method: 'GET', url: `${PRODUCTS}?search=${suffix}&locale=fr` })
    expect(list.products[0]?.attributes[care.key]).toBe('<p>Laver à 30°</p>')
    await ctx.expectInvalidField(
      { method: 'PUT', url: `${PRODUCTS}/${product.id}/translations/de`, token: admin, payload: { attributes: { [weight.key]: 'zweihundert' } } },
      `attributes.${weight.key}`,
      'product_translations',
    )
    await ctx.expectInvalidField(
      { method: 'PUT', url: `${PRODUCTS}/${product.id}/translations/de`, token: admin, payload: { options: { [product.id]: 'Nein' } } },
      `options.${product.id}`,
      'product_translations',
    )
  })
})

describe('the stored public items (product_list_items)', () => {
  const GTIN = withGtinCheckDigit('400638133393')
  const amount = (currency: string) =>
    fc.integer({ min: 0, max: 9_999_999_999 }).map((minor) => minor / 10 ** ({ JPY: 0, KWD: 3, CLF: 4 } as Record<string, number>)[currency]! || minor / 100)
  const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).map((value) => `${value.trim() || 'x'} "q" \\ \u0001`)
  const product = fc.constantFrom('USD', 'JPY', 'KWD', 'CLF').chain((currency) =>
    fc.record({
      title: text,
      description: fc.option(text, { nil: null }),
      currency: fc.constant(currency),
      price: amount(currency),
      compare_at_price: fc.option(amount(currency), { nil: null }),
      weight: fc.option(fc.integer({ min: 1, max: 99_999_999 }).map((tenThousandths) => tenThousandths / 10_000), { nil: null }),
      length: fc.option(fc.integer({ min: 1, max: 99_999 }).map((hundredths) => hundredths / 100), { nil: null }),
      tags: fc.uniqueArray(fc.constantFrom('Summer', 'sale', 'Ünïcode'), { maxLength: 3 }),
      product_type: fc.option(text, { nil: null }),
      barcode: fc.option(fc.constant(GTIN), { nil: null }),
      seo_title: fc.option(text, { nil: null }),
      published_at: fc.option(fc.integer({ min: 0, max: 999 }).map((ms) => `2026-01-02T03:04:05.${String(ms).padStart(3, '0')}Z`), { nil: null }),
      options: fc.option(
        fc.constant([
          { name: 'Size', values: values('S', 'M') },
          { name: 'Colour', values: [{ value: 'Blue', swatch_color: '#1e40af' }, { value: 'Red', swatch_image_url: 'https://cdn.example.com/red.png' }] },
        ]),
        { nil: undefined },
      ),
    }),
  )

  // The staff's list builds its items from the rows (toListItem); with no staff-only attributes they are the public's.
  async function expectStoredAsRows(ctx: TestContext, admin: string, url: string) {
    const stored = await ctx.expectStatus<{ products: Product[] }>(200, { method: 'GET', url })
    const rows = await ctx.expectStatus<{ products: Product[] }>(200, { method: 'GET', url, token: admin })
    expect(stored.products.length).toBeGreaterThan(0)
    expect(stored.products).toEqual(rows.products)
  }

  test('a public list sends each product as its stored JSON, equal to the item its row makes, after every kind of write', async ({ ctx, admin }) => {
    await fc.assert(
      fc.asyncProperty(fc.array(product, { minLength: 1, maxLength: 5 }), async (specs) => {
        const category = await ctx.expectStatus<{ id: string; slug: string }>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: `Stored ${Math.random()}` } })
        const made: Product[] = []
        for (const spec of specs) made.push(await createProduct(ctx, admin, { ...spec, category_ids: [category.id], inventory_quantity: 3 }))
        const plain = `${PRODUCTS}?category=${category.slug}&per_page=100`
        // The listing's statements and index read the same stored items.
        const sorted = `${plain}&sort=price_desc`
        await expectStoredAsRows(ctx, admin, plain)
        await expectStoredAsRows(ctx, admin, sorted)

        // A write of the product, a category renamed (the products' categories), a stock move (its quantity and updated_at).
        await patchProduct(ctx, admin, made[0]!.id, { title: 'Renamed "now"', compare_at_price: null, tags: ['later'] })
        await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/categories/${category.id}`, token: admin, payload: { name: `Moved ${Math.random()}` } })
        await patchProduct(ctx, admin, made.at(-1)!.id, { inventory_quantity: 9 })
        await expectStoredAsRows(ctx, admin, plain)
        await expectStoredAsRows(ctx, admin, sorted)
        const [first] = (await ctx.expectStatus<{ products: Product[] }>(200, { method: 'GET', url: plain })).products.filter((item) => item.id === made.at(-1)!.id)
        expect(first!.inventory_quantity).toBe(9)

        // The detail: the stored item with the variants and images the database makes, equal to the staff's from the rows.
        const pictured = made[0]!
        await ctx.expectStatus(201, { method: 'POST', url: `${PRODUCTS}/${pictured.id}/images`, token: admin, payload: { url: 'https://cdn.example.com/a.jpg', alt: 'Front "q"' } })
        await ctx.expectStatus(201, { method: 'POST', url: `${PRODUCTS}/${pictured.id}/images`, token: admin, payload: { url: 'https://cdn.example.com/b.jpg', position: 0 } })
        for (const spec of made) {
          if (spec.options.length > 0) {
            const { variants } = await generate(ctx, admin, spec.id, { inventory_quantity: 2 })
            const [cheaper, dearer] = variants
            await ctx.expectStatus(200, { method: 'PATCH', url: `${PRODUCTS}/${spec.id}/variants/${cheaper!.id}`, token: admin, payload: { price: 1, compare_at_price: 2, sku: `SKU-${Math.random()}` } })
            await ctx.expectStatus(200, { method: 'PATCH', url: `${PRODUCTS}/${spec.id}/variants/${dearer!.id}`, token: admin, payload: { compare_at_price: 1_000_000 } })
          }
          const stored = await detail(ctx, spec.id)
          expect(stored).toEqual(await detail(ctx, spec.id, admin))
          expect(stored.variants.length).toBe(spec.options.length > 0 ? 4 : 0)
        }
        expect((await detail(ctx, pictured.id)).images).toHaveLength(2)
      }),
      { numRuns: 8 },
    )
  })
})
