/**
 * Translations (docs/translations.md): admin CRUD of product, variant and category translations,
 * reads in a locale (?locale= or Accept-Language, fr-CA → fr → original, field by field) with
 * Content-Language and Vary, and search in the locale shown.
 */
import { sql } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import type { Category, Product, ProductList, ProductTranslation } from '@commerce/domain'
import { test, type TestContext } from './helpers.js'

const PRODUCTS = '/api/v1/products'
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000cafe'
let made = 0

async function makeProduct(ctx: TestContext, admin: string, payload: Record<string, unknown> = {}): Promise<Product> {
  made += 1
  return ctx.expectStatus(201, { method: 'POST', url: PRODUCTS, token: admin, payload: { title: `Shirt ${made}`, price: 10, ...payload } })
}

const put = (ctx: TestContext, token: string, url: string, payload: Record<string, unknown>) => ctx.request({ method: 'PUT', url, token, payload })

describe('product translations: admin CRUD', () => {
  test('PUT creates (201) then replaces (200) a translation, stored under the canonical tag; GET lists and reads it; DELETE removes it', async ({ ctx, admin }) => {
    const product = await makeProduct(ctx, admin, { description: 'Soft cotton' })
    const url = `${PRODUCTS}/${product.id}/translations`

    const created = await put(ctx, admin, `${url}/fr-ca`, { title: 'Chemise', description: 'Coton doux' })
    expect(created.statusCode).toBe(201)
    expect(created.json()).toMatchObject({ locale: 'fr-CA', title: 'Chemise', description: 'Coton doux' })

    const replaced = await put(ctx, admin, `${url}/fr-CA`, { title: 'Chemise bleue' })
    expect(replaced.statusCode).toBe(200)
    // The whole translation is replaced: the description left out is no longer translated.
    expect(replaced.json()).toMatchObject({ locale: 'fr-CA', title: 'Chemise bleue', description: null })
    await ctx.expectStatus(201, { method: 'PUT', url: `${url}/de`, token: admin, payload: { description: 'Weiche Baumwolle' } })

    const list = await ctx.expectStatus<{ translations: ProductTranslation[] }>(200, { method: 'GET', url, token: admin })
    expect(list.translations.map((translation) => [translation.locale, translation.title, translation.description])).toEqual([
      ['de', null, 'Weiche Baumwolle'],
      ['fr-CA', 'Chemise bleue', null],
    ])
    expect(await ctx.expectStatus(200, { method: 'GET', url: `${url}/FR-ca`, token: admin })).toMatchObject({ title: 'Chemise bleue' })

    await ctx.expectStatus(204, { method: 'DELETE', url: `${url}/fr-CA`, token: admin })
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${url}/fr-CA`, token: admin })
    await ctx.expectError(404, 'not_found', { method: 'DELETE', url: `${url}/fr-CA`, token: admin })
    const rows = await ctx.handle.sql`select locale from product_translations where product_id = ${product.id}`
    expect(rows).toEqual([{ locale: 'de' }])
  })

  test('each write touches the product and records product.updated in the same transaction', async ({ ctx, admin }) => {
    const product = await makeProduct(ctx, admin)
    const url = `${PRODUCTS}/${product.id}/translations/it`
    await ctx.expectStatus(201, { method: 'PUT', url, token: admin, payload: { title: 'Camicia' } })
    await ctx.expectStatus(204, { method: 'DELETE', url, token: admin })
    const events = await ctx.productEvents(product.id)
    expect(events.map((event) => event.kind)).toEqual(['product.created', 'product.updated', 'product.updated'])
    const [row] = await ctx.handle.sql<{ updated_at: string }[]>`select updated_at from products where id = ${product.id}`
    expect(new Date(row!.updated_at).getTime()).toBeGreaterThan(new Date(product.updated_at).getTime())
  })

  test('refuses bad locales, empty bodies and unknown fields with 400, and writes nothing', async ({ ctx, admin }) => {
    const product = await makeProduct(ctx, admin)
    const url = `${PRODUCTS}/${product.id}/translations`
    for (const locale of ['f', 'fr_CA', 'und', 'x'.repeat(36), '123']) {
      const error = await ctx.expectError(400, 'validation_error', { method: 'PUT', url: `${url}/${locale}`, token: admin, payload: { title: 'T' } })
      expect(error.details?.map((detail) => detail.field), locale).toContain('locale')
    }
    await ctx.expectError(400, 'validation_error', { method: 'PUT', url: `${url}/fr`, token: admin, payload: {} })
    await ctx.expectError(400, 'validation_error', { method: 'PUT', url: `${url}/fr`, token: admin, payload: { title: '' } })
    await ctx.expectError(400, 'validation_error', { method: 'PUT', url: `${url}/fr`, token: admin, payload: { slug: 'chemise' } })
    // Both fields null: nothing would be translated.
    await ctx.expectError(400, 'validation_error', { method: 'PUT', url: `${url}/fr`, token: admin, payload: { title: null, description: null } })
    expect(await ctx.handle.sql`select 1 from product_translations where product_id = ${product.id}`).toEqual([])
    expect((await ctx.productEvents(product.id)).map((event) => event.kind)).toEqual(['product.created'])
  })

  test('404 for an unknown product; 401 without a credential; 403 for a customer', async ({ ctx, admin, customer }) => {
    await ctx.expectError(404, 'not_found', { method: 'PUT', url: `${PRODUCTS}/${UNKNOWN_ID}/translations/fr`, token: admin, payload: { title: 'T' } })
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${PRODUCTS}/${UNKNOWN_ID}/translations`, token: admin })
    const product = await makeProduct(ctx, admin)
    await ctx.expectError(401, 'unauthorized', { method: 'PUT', url: `${PRODUCTS}/${product.id}/translations/fr`, payload: { title: 'T' } })
    await ctx.expectError(403, 'forbidden', { method: 'PUT', url: `${PRODUCTS}/${product.id}/translations/fr`, token: customer, payload: { title: 'T' } })
    await ctx.expectError(403, 'forbidden', { method: 'GET', url: `${PRODUCTS}/${product.id}/translations`, token: customer })
  })

  test('an API key with products:read may read translations and not write them', async ({ ctx, admin }) => {
    const product = await makeProduct(ctx, admin)
    const { key } = await ctx.createApiKey(['products:read'])
    await ctx.expectStatus(200, { method: 'GET', url: `${PRODUCTS}/${product.id}/translations`, headers: { authorization: `Bearer ${key}` } })
    await ctx.expectError(403, 'forbidden', { method: 'PUT', url: `${PRODUCTS}/${product.id}/translations/fr`, headers: { authorization: `Bearer ${key}` }, payload: { title: 'T' } })
  })
})

describe('reading products in a locale', () => {
  test('?locale= shows the translation, falling back field by field along fr-CA → fr → the original', async ({ ctx, admin }) => {
    const product = await makeProduct(ctx, admin, { title: 'Shirt', description: 'Soft cotton' })
    const url = `${PRODUCTS}/${product.id}`
    await put(ctx, admin, `${url}/translations/fr`, { title: 'Chemise', description: 'Coton doux' })
    await put(ctx, admin, `${url}/translations/fr-CA`, { title: 'Chandail' })

    const canadian = await ctx.request({ method: 'GET', url: `${url}?locale=fr-ca` })
    expect(canadian.json()).toMatchObject({ title: 'Chandail', description: 'Coton doux' })
    expect(canadian.headers['content-language']).toBe('fr-CA')
    expect(canadian.headers.vary).toContain('Accept-Language')

    const french = await ctx.request({ method: 'GET', url: `${url}?locale=fr-BE` })
    expect(french.json()).toMatchObject({ title: 'Chemise', description: 'Coton doux' })
    expect(french.headers['content-language']).toBe('fr')

    const german = await ctx.request({ method: 'GET', url: `${url}?locale=de` })
    expect(german.json()).toMatchObject({ title: 'Shirt', description: 'Soft cotton' })
    expect(german.headers['content-language']).toBeUndefined()

    // The original, byte for byte, without a locale; the rest of the product is the same in every locale.
    const original = await ctx.expectStatus<Product>(200, { method: 'GET', url })
    expect(original).toMatchObject({ title: 'Shirt', description: 'Soft cotton' })
    expect({ ...canadian.json(), title: 'Shirt', description: 'Soft cotton' }).toEqual(original)
  })

  test('Accept-Language chooses by q-value when there is no ?locale=, and ?locale= wins over it', async ({ ctx, admin }) => {
    const product = await makeProduct(ctx, admin, { title: 'Hat' })
    const url = `${PRODUCTS}/${product.id}`
    await put(ctx, admin, `${url}/translations/es`, { title: 'Sombrero' })
    await put(ctx, admin, `${url}/translations/de`, { title: 'Hut' })
    const read = async (headers: Record<string, string>, query = '') =>
      (await ctx.expectStatus<Product>(200, { method: 'GET', url: `${url}${query}`, headers })).title
    expect(await read({ 'accept-language': 'de;q=0.5, es-MX;q=0.9, en' })).toBe('Sombrero')
    expect(await read({ 'accept-language': 'it, de;q=0.1' })).toBe('Hut')
    expect(await read({ 'accept-language': 'es;q=0, *' })).toBe('Hat')
    expect(await read({ 'accept-language': 'not a tag;;, ???' })).toBe('Hat')
    expect(await read({ 'accept-language': 'es' }, '?locale=de')).toBe('Hut')
    const error = await ctx.expectError(400, 'validation_error', { method: 'GET', url: `${url}?locale=fr_FR` })
    expect(error.details?.map((detail) => detail.field)).toContain('locale')
  })

  test('variant titles and category names are translated in the product, its list item and its variants', async ({ ctx, admin }) => {
    const category = await ctx.expectStatus<Category>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: 'Shoes' } })
    const product = await makeProduct(ctx, admin, { title: 'Boot', category_ids: [category.id] })
    const variant = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: `${PRODUCTS}/${product.id}/variants`, token: admin, payload: { title: 'Large' } })
    const other = await ctx.expectStatus<{ id: string }>(201, { method: 'POST', url: `${PRODUCTS}/${product.id}/variants`, token: admin, payload: { title: 'Small' } })
    await ctx.expectStatus(201, { method: 'PUT', url: `${PRODUCTS}/${product.id}/variants/${variant.id}/translations/fr`, token: admin, payload: { title: 'Grand' } })
    await ctx.expectStatus(201, { method: 'PUT', url: `/api/v1/categories/${category.id}/translations/fr`, token: admin, payload: { name: 'Chaussures' } })

    const detail = await ctx.expectStatus<Product>(200, { method: 'GET', url: `${PRODUCTS}/${product.id}?locale=fr` })
    expect(detail.title).toBe('Boot')
    expect(detail.variants.map((v) => [v.id, v.title])).toEqual([[variant.id, 'Grand'], [other.id, 'Small']])
    expect(detail.categories).toEqual([{ id: category.id, name: 'Chaussures', slug: category.slug }])

    const variants = await ctx.expectStatus<{ variants: { title: string }[] }>(200, { method: 'GET', url: `${PRODUCTS}/${product.id}/variants?locale=fr` })
    expect(variants.variants.map((v) => v.title)).toEqual(['Grand', 'Small'])

    const list = await ctx.expectStatus<ProductList>(200, { method: 'GET', url: `${PRODUCTS}?category=${category.slug}`, headers: { 'accept-language': 'fr' } })
    expect(list.products.map((item) => item.categories)).toEqual([[{ id: category.id, name: 'Chaussures', slug: category.slug }]])

    const categoryRead = await ctx.request({ method: 'GET', url: `/api/v1/categories/${category.id}?locale=fr` })
    expect(categoryRead.json()).toMatchObject({ name: 'Chaussures', description: null })
    expect(categoryRead.headers['content-language']).toBe('fr')

    // A variant's translation through another product is not found.
    const stranger = await makeProduct(ctx, admin)
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `${PRODUCTS}/${stranger.id}/variants/${variant.id}/translations/fr`, token: admin })
    await ctx.expectError(404, 'not_found', { method: 'PUT', url: `${PRODUCTS}/${stranger.id}/variants/${variant.id}/translations/fr`, token: admin, payload: { title: 'X' } })
    await ctx.expectStatus(200, { method: 'GET', url: `${PRODUCTS}/${product.id}/variants/${variant.id}/translations/fr`, token: admin })
  })

  test('the list shows each product in the locale, names the locales shown in Content-Language, and pages by cursor alike', async ({ ctx, admin }) => {
    const category = await ctx.expectStatus<Category>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: 'Lamps' } })
    const ids: string[] = []
    for (let index = 0; index < 3; index++) ids.push((await makeProduct(ctx, admin, { title: `Lamp ${index}`, category_ids: [category.id] })).id)
    await put(ctx, admin, `${PRODUCTS}/${ids[0]}/translations/nl`, { title: 'Lamp nul' })
    await put(ctx, admin, `${PRODUCTS}/${ids[2]}/translations/nl-BE`, { title: 'Lamp twee' })

    const page = await ctx.request({ method: 'GET', url: `${PRODUCTS}?category=${category.slug}&locale=nl-BE` })
    expect((page.json() as ProductList).products.map((item) => item.title)).toEqual(['Lamp twee', 'Lamp 1', 'Lamp nul'])
    expect(page.headers['content-language']).toBe('nl-BE, nl')

    const first = await ctx.expectStatus<ProductList>(200, { method: 'GET', url: `${PRODUCTS}?category=${category.slug}&locale=nl&per_page=2&after=` })
    const cursor = (first.meta as { next_cursor: string }).next_cursor
    const second = await ctx.expectStatus<ProductList>(200, { method: 'GET', url: `${PRODUCTS}?category=${category.slug}&locale=nl&per_page=2&after=${cursor}` })
    expect([...first.products, ...second.products].map((item) => item.title)).toEqual(['Lamp 2', 'Lamp 1', 'Lamp nul'])
  })
})

describe('searching in a locale', () => {
  test('finds words of the translation in that locale, still finds the original words, and counts both', async ({ ctx, admin }) => {
    const word = `zq${Date.now().toString(36)}`
    const translated = await makeProduct(ctx, admin, { title: `${word}alpha teapot` })
    const untranslated = await makeProduct(ctx, admin, { title: `${word}alpha kettle` })
    const search = async (text: string, locale?: string) => {
      const list = await ctx.expectStatus<ProductList>(200, { method: 'GET', url: `${PRODUCTS}?search=${encodeURIComponent(text)}${locale ? `&locale=${locale}` : ''}` })
      return { ids: list.products.map((item) => item.id), titles: list.products.map((item) => item.title), total: (list.meta as { total: number }).total }
    }
    // Before: the French words match nothing, in French or not.
    expect((await search(`${word}beta`, 'fr')).total).toBe(0)
    await put(ctx, admin, `${PRODUCTS}/${translated.id}/translations/fr`, { title: `${word}beta théière`, description: `${word}gamma porcelaine` })

    expect(await search(`${word}beta`)).toEqual({ ids: [], titles: [], total: 0 })
    expect(await search(`${word}beta`, 'fr-CA')).toEqual({ ids: [translated.id], titles: [`${word}beta théière`], total: 1 })
    expect((await search(`${word}gamma`, 'fr')).ids).toEqual([translated.id])
    expect((await search(`${word}beta`, 'de')).total).toBe(0)
    // The original words still find both products in French, each shown in French where it can be.
    expect(await search(`${word}alpha`, 'fr')).toEqual({
      ids: [untranslated.id, translated.id],
      titles: [`${word}alpha kettle`, `${word}beta théière`],
      total: 2,
    })
    // The walk for many matches (cursor pages) finds them too.
    const byCursor = await ctx.expectStatus<ProductList>(200, { method: 'GET', url: `${PRODUCTS}?search=${word}gamma&locale=fr&after=` })
    expect(byCursor.products.map((item) => item.id)).toEqual([translated.id])

    // Deleting the translation changes the totals at once (the catalog revision moves).
    await ctx.expectStatus(204, { method: 'DELETE', url: `${PRODUCTS}/${translated.id}/translations/fr`, token: admin })
    expect((await search(`${word}beta`, 'fr')).total).toBe(0)
  })
})

describe('the translated locales each instance knows', () => {
  test('a locale first translated through another instance shows once this one refreshes; a read in an untranslated locale is the original', async ({ ctx, admin }) => {
    const product = await makeProduct(ctx, admin, { title: 'Kettle' })
    const category = await ctx.expectStatus<Category>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: 'Kitchen' } })
    // Written as another API instance would: not through this one.
    await ctx.handle.sql`insert into product_translations (product_id, locale, title) values (${product.id}, 'pt-BR', 'Chaleira')`
    await ctx.handle.sql`insert into category_translations (category_id, locale, name) values (${category.id}, 'eu', 'Sukaldea')`
    const read = async () => ({
      product: await ctx.request({ method: 'GET', url: `${PRODUCTS}/${product.id}`, headers: { 'accept-language': 'pt-BR' } }),
      category: (await ctx.expectStatus<Category>(200, { method: 'GET', url: `/api/v1/categories/${category.id}?locale=eu` })).name,
    })
    const before = await read()
    expect([before.product.json().title, before.product.headers['content-language'], before.category]).toEqual(['Kettle', undefined, 'Kitchen'])
    expect(before.product.headers.vary).toContain('Accept-Language')

    await ctx.app.translatedLocales.refresh()
    const after = await read()
    expect([after.product.json().title, after.product.headers['content-language'], after.category]).toEqual(['Chaleira', 'pt-BR', 'Sukaldea'])
  })
})

describe('the catalog pool', () => {
  test('runs its generic plans without JIT: a translated page estimated as a tenth of the table compiled for 258 ms', async ({ ctx }) => {
    const [row] = await ctx.app.catalogDb.execute<{ jit: string; plans: string }>(sql`select current_setting('jit') as jit, current_setting('plan_cache_mode') as plans`)
    expect(row).toEqual({ jit: 'off', plans: 'force_generic_plan' })
  })
})

describe('category translations', () => {
  test('CRUD, the list in a locale ordered by the names shown, and 404 for an unknown category', async ({ ctx, admin }) => {
    const a = await ctx.expectStatus<Category>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: 'Aardvark gear', description: 'For aardvarks' } })
    const z = await ctx.expectStatus<Category>(201, { method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: 'Zebra gear' } })
    await ctx.expectStatus(201, { method: 'PUT', url: `/api/v1/categories/${z.id}/translations/sv`, token: admin, payload: { name: 'Aaa zebra' } })
    const list = await ctx.request({ method: 'GET', url: '/api/v1/categories?per_page=100&locale=sv' })
    const names = (list.json() as { categories: Category[] }).categories.map((category) => category.name)
    expect(names.indexOf('Aaa zebra')).toBeLessThan(names.indexOf('Aardvark gear'))
    expect(list.headers['content-language']).toBe('sv')
    const plain = await ctx.request({ method: 'GET', url: '/api/v1/categories?per_page=100' })
    expect((plain.json() as { categories: Category[] }).categories.map((category) => category.name)).toContain('Zebra gear')
    expect(plain.headers.vary).toContain('Accept-Language')

    const replaced = await put(ctx, admin, `/api/v1/categories/${a.id}/translations/sv`, { description: 'För myrslokar' })
    expect(replaced.statusCode).toBe(201)
    expect(await ctx.expectStatus(200, { method: 'GET', url: `/api/v1/categories/${a.id}?locale=sv` })).toMatchObject({ name: 'Aardvark gear', description: 'För myrslokar' })
    await ctx.expectError(404, 'not_found', { method: 'PUT', url: `/api/v1/categories/${UNKNOWN_ID}/translations/sv`, token: admin, payload: { name: 'X' } })

    // Deleting the category deletes its translations.
    await ctx.expectStatus(204, { method: 'DELETE', url: `/api/v1/categories/${z.id}`, token: admin })
    expect(await ctx.handle.sql`select 1 from category_translations where category_id = ${z.id}`).toEqual([])
  })
})
