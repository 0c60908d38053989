/** Categories: public list and read, admin create/update/delete, parents, and links to products. */
import { afterAll, beforeAll, describe, expect } from 'vitest'
import type { Static } from 'typebox'
import type { Category, CategoryList as CategoryListSchema, Product } from '@commerce/domain'
import { createTestContext, test, type TestContext } from './helpers.js'

const CATEGORIES = '/api/v1/categories'
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000cafe'
type CategoryList = Static<typeof CategoryListSchema>
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

function createCategory(ctx: TestContext, admin: string, payload: Record<string, unknown>): Promise<Category> {
  return ctx.expectStatus(201, { method: 'POST', url: CATEGORIES, payload, token: admin })
}

function getCategory(ctx: TestContext, id: string): Promise<Category> {
  return ctx.expectStatus(200, { method: 'GET', url: `${CATEGORIES}/${id}` })
}

async function patchCategory(ctx: TestContext, admin: string, id: string, payload: Record<string, unknown>) {
  return ctx.request({ method: 'PATCH', url: `${CATEGORIES}/${id}`, payload, token: admin })
}

const categoryCount = (ctx: TestContext) => ctx.countRows('categories')

function createProduct(ctx: TestContext, admin: string, payload: Record<string, unknown>): Promise<Product> {
  return ctx.expectStatus(201, { method: 'POST', url: '/api/v1/products', payload, token: admin })
}

describe('POST /api/v1/categories', () => {
  test('creates a category and answers 201 with id, name, slug from the name, description and parent_id', async ({ ctx, admin }) => {
    const response = await ctx.request({ method: 'POST', url: CATEGORIES, token: admin, payload: { name: 'Garden Tools' } })
    expect(response.statusCode).toBe(201)
    const body: Category = response.json()
    expect(body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: 'Garden Tools',
      slug: 'garden-tools',
      description: null,
      parent_id: null,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    })
    const rows = await ctx.handle.sql`select name, slug, parent_id from categories where id = ${body.id}`
    expect(rows).toEqual([{ name: 'Garden Tools', slug: 'garden-tools', parent_id: null }])
  })

  test('generates the slug without accents: "Café Crème" -> cafe-creme', async ({ ctx, admin }) => {
    expect((await createCategory(ctx, admin, { name: 'Café Crème' })).slug).toBe('cafe-creme')
  })

  test('two categories with the same name get distinct generated slugs (-2), like "Shirts" under two parents', async ({ ctx, admin }) => {
    const first = await ctx.request({ method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: 'Same Name' } })
    const second = await ctx.request({ method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: 'Same Name' } })
    expect(first.statusCode).toBe(201)
    expect(second.statusCode).toBe(201)
    expect([first.json().slug, second.json().slug]).toEqual(['same-name', 'same-name-2'])
  })

  test('an empty PATCH body answers 400', async ({ ctx, admin }) => {
    const created = await ctx.request({ method: 'POST', url: '/api/v1/categories', token: admin, payload: { name: 'Patch Me' } })
    const response = await ctx.request({ method: 'PATCH', url: `/api/v1/categories/${created.json().id}`, token: admin, payload: {} })
    expect(response.statusCode).toBe(400)
    expect(response.json().error.code).toBe('validation_error')
  })

  test('keeps an explicit slug, a description and a parent', async ({ ctx, admin }) => {
    const parent = await createCategory(ctx, admin, { name: 'Outdoors' })
    const child = await createCategory(ctx, admin, { name: 'Tents & Shelters', slug: 'tents', description: 'Sleep outside', parent_id: parent.id })
    expect(child).toMatchObject({ name: 'Tents & Shelters', slug: 'tents', description: 'Sleep outside', parent_id: parent.id })
    expect(await getCategory(ctx, child.id)).toEqual(child)
  })

  test('a slug already taken answers 409 conflict and creates nothing', async ({ ctx, admin }) => {
    await createCategory(ctx, admin, { name: 'Lighting', slug: 'lighting' })
    const before = await categoryCount(ctx)
    const response = await ctx.request({ method: 'POST', url: CATEGORIES, token: admin, payload: { name: 'Lamps', slug: 'lighting' } })
    expect(response.statusCode).toBe(409)
    expect(response.json().error).toMatchObject({ code: 'conflict', request_id: response.headers['x-request-id'] })
    expect(await categoryCount(ctx)).toBe(before)
  })

  test('a parent_id naming no category answers 400 on parent_id and creates nothing', async ({ ctx, admin }) => {
    const before = await categoryCount(ctx)
    const response = await ctx.request({
      method: 'POST',
      url: CATEGORIES,
      token: admin,
      payload: { name: 'Orphan', parent_id: UNKNOWN_ID },
    })
    expect(response.statusCode).toBe(400)
    expect(response.json().error).toMatchObject({
      code: 'validation_error',
      details: [{ field: 'parent_id', message: expect.stringContaining(UNKNOWN_ID) }],
    })
    expect(await categoryCount(ctx)).toBe(before)
  })

  test('answers 400 "Field \'name\' is required", and refuses unknown fields, bad slugs and bad parent ids', async ({ ctx, admin }) => {
    const before = await categoryCount(ctx)
    const missing = await ctx.request({ method: 'POST', url: CATEGORIES, token: admin, payload: { slug: 'nameless' } })
    expect(missing.statusCode).toBe(400)
    expect(missing.json().error).toEqual({
      code: 'validation_error',
      message: "Field 'name' is required",
      details: [{ field: 'name', message: "Field 'name' is required" }],
      request_id: missing.headers['x-request-id'],
    })
    for (const [payload, field] of [
      [{ name: 'X', colour: 'red' }, 'colour'],
      [{ name: 'X', slug: 'Has Spaces' }, 'slug'],
      [{ name: 'X', slug: 'trailing-' }, 'slug'],
      [{ name: '' }, 'name'],
      [{ name: 42 }, 'name'],
      [{ name: 'X', parent_id: 'not-a-uuid' }, 'parent_id'],
    ] as const) {
      const response = await ctx.request({ method: 'POST', url: CATEGORIES, token: admin, payload })
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json().error.code).toBe('validation_error')
      expect(response.json().error.details).toContainEqual(expect.objectContaining({ field }))
    }
    const several = await ctx.request({ method: 'POST', url: CATEGORIES, token: admin, payload: { slug: 'BAD', extra: 1 } })
    expect(several.statusCode).toBe(400)
    expect(several.json().error.details.map((detail: { field: string }) => detail.field).sort()).toEqual(['extra', 'name', 'slug'])
    expect(await categoryCount(ctx)).toBe(before)
  })

  test('answers 401 without or with a garbage token, 403 for a customer; nothing is created', async ({ ctx, customer }) => {
    const before = await categoryCount(ctx)
    const anonymous = await ctx.request({ method: 'POST', url: CATEGORIES, payload: { name: 'Anonymous' } })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error.code).toBe('unauthorized')
    const garbage = await ctx.request({ method: 'POST', url: CATEGORIES, token: 'not.a.jwt', payload: { name: 'Garbage' } })
    expect(garbage.statusCode).toBe(401)
    expect(garbage.json().error.code).toBe('unauthorized')
    const byCustomer = await ctx.request({ method: 'POST', url: CATEGORIES, token: customer, payload: { name: 'Customer' } })
    expect(byCustomer.statusCode).toBe(403)
    expect(byCustomer.json().error.code).toBe('forbidden')
    expect(await categoryCount(ctx)).toBe(before)
  })
})

describe('GET /api/v1/categories/:id', () => {
  test('answers the category without a token', async ({ ctx, admin }) => {
    const created = await createCategory(ctx, admin, { name: 'Readable', description: 'Open to all' })
    const response = await ctx.request({ method: 'GET', url: `${CATEGORIES}/${created.id}` })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual(created)
  })

  test('answers 404 not_found for an unknown id and 400 for a malformed one', async ({ ctx }) => {
    const missing = await ctx.request({ method: 'GET', url: `${CATEGORIES}/${UNKNOWN_ID}` })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().error).toMatchObject({ code: 'not_found', message: 'Category not found' })
    for (const id of ['nope', `urn:uuid:${UNKNOWN_ID}`]) {
      const malformed = await ctx.request({ method: 'GET', url: `${CATEGORIES}/${encodeURIComponent(id)}` })
      expect(malformed.statusCode, id).toBe(400)
      expect(malformed.json().error.details).toContainEqual(expect.objectContaining({ field: 'id' }))
    }
  })
})

describe('GET /api/v1/categories', () => {
  let own: TestContext
  const names = ['Delta', 'alpha', 'Charlie', 'Bravo', 'Echo']

  beforeAll(async () => {
    own = await createTestContext()
    const { token } = await own.signIn('admin')
    for (const name of names) {
      const response = await own.request({ method: 'POST', url: CATEGORIES, token, payload: { name } })
      expect(response.statusCode).toBe(201)
    }
  })
  afterAll(() => own.close())

  async function list(query = ''): Promise<CategoryList> {
    const response = await own.request({ method: 'GET', url: `${CATEGORIES}${query}` })
    expect(response.statusCode, response.body).toBe(200)
    return response.json()
  }

  test('lists every category by name without a token, in the list envelope', async () => {
    const body = await list()
    expect(body.meta).toEqual({ page: 1, per_page: 20, total: 5, total_pages: 1 })
    expect(body.categories.map((category) => category.name)).toEqual(
      [...names].sort((a, b) => a.localeCompare(b, 'en')),
    )
    expect(body.categories[0]).toEqual({
      id: expect.any(String),
      name: expect.any(String),
      slug: expect.any(String),
      description: null,
      parent_id: null,
      created_at: expect.stringMatching(ISO),
      updated_at: expect.stringMatching(ISO),
    })
  })

  test('pages: 5 categories at per_page 2 make 3 pages, the last holding 1; past the end is empty', async () => {
    const pages = [await list('?per_page=2&page=1'), await list('?per_page=2&page=2'), await list('?per_page=2&page=3')]
    expect(pages.map((page) => page.categories.length)).toEqual([2, 2, 1])
    for (const [index, page] of pages.entries()) {
      expect(page.meta).toEqual({ page: index + 1, per_page: 2, total: 5, total_pages: 3 })
    }
    const all = (await list()).categories
    expect(pages.flatMap((page) => page.categories)).toEqual(all)
    expect(await list('?per_page=2&page=4')).toEqual({ categories: [], meta: { page: 4, per_page: 2, total: 5, total_pages: 3 } })
  })

  test('per_page 101, per_page 0, page 0 and an absurdly large page answer 400 validation_error', async () => {
    for (const [query, field] of [
      ['?per_page=101', 'per_page'],
      ['?per_page=0', 'per_page'],
      ['?page=0', 'page'],
      ['?page=two', 'page'],
      ['?page=100000000000000000000', 'page'],
    ] as const) {
      const response = await own.request({ method: 'GET', url: `${CATEGORIES}${query}` })
      expect(response.statusCode, query).toBe(400)
      expect(response.json().error).toMatchObject({ code: 'validation_error', details: [expect.objectContaining({ field })] })
    }
  })

  test('the total follows creates and deletes', async () => {
    const { token } = await own.signIn('admin')
    const created = await own.request({ method: 'POST', url: CATEGORIES, token, payload: { name: 'Foxtrot' } })
    expect((await list()).meta).toMatchObject({ total: 6 })
    const removed = await own.request({ method: 'DELETE', url: `${CATEGORIES}/${created.json().id}`, token })
    expect(removed.statusCode).toBe(204)
    expect((await list()).meta).toMatchObject({ total: 5 })
  })
})

describe('PATCH /api/v1/categories/:id', () => {
  test('changes only the fields sent and answers 200 with the category', async ({ ctx, admin }) => {
    const category = await createCategory(ctx, admin, { name: 'Old Name', description: 'Old words' })
    const response = await patchCategory(ctx, admin, category.id, { name: 'New Name' })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({
      ...category,
      name: 'New Name',
      updated_at: expect.stringMatching(ISO),
    })
    const moved = await patchCategory(ctx, admin, category.id, { slug: 'new-name', description: null })
    expect(moved.statusCode).toBe(200)
    expect(moved.json()).toMatchObject({ name: 'New Name', slug: 'new-name', description: null })
    expect(await getCategory(ctx, category.id)).toEqual(moved.json())
  })

  test('products show the category\'s new name and slug', async ({ ctx, admin }) => {
    const category = await createCategory(ctx, admin, { name: 'Before Rename' })
    const product = await createProduct(ctx, admin, { title: 'Renamed Category Member', category_ids: [category.id] })
    expect(product.categories).toEqual([{ id: category.id, name: 'Before Rename', slug: 'before-rename' }])
    expect((await patchCategory(ctx, admin, category.id, { name: 'After Rename', slug: 'after-rename' })).statusCode).toBe(200)
    const detail = await ctx.request({ method: 'GET', url: `/api/v1/products/${product.id}` })
    expect(detail.json().categories).toEqual([{ id: category.id, name: 'After Rename', slug: 'after-rename' }])
    const filtered = await ctx.request({ method: 'GET', url: '/api/v1/products?category=after-rename' })
    expect(filtered.json().products.map((item: Product) => item.id)).toEqual([product.id])
  })

  test('sets and clears the parent', async ({ ctx, admin }) => {
    const parent = await createCategory(ctx, admin, { name: 'Parent To Be' })
    const child = await createCategory(ctx, admin, { name: 'Child To Be' })
    const attached = await patchCategory(ctx, admin, child.id, { parent_id: parent.id })
    expect(attached.statusCode).toBe(200)
    expect(attached.json().parent_id).toBe(parent.id)
    const detached = await patchCategory(ctx, admin, child.id, { parent_id: null })
    expect(detached.statusCode).toBe(200)
    expect(detached.json().parent_id).toBeNull()
  })

  test('a slug another category has answers 409 conflict and changes nothing', async ({ ctx, admin }) => {
    await createCategory(ctx, admin, { name: 'Taken Slug', slug: 'taken-slug' })
    const category = await createCategory(ctx, admin, { name: 'Wants Slug' })
    const response = await patchCategory(ctx, admin, category.id, { slug: 'taken-slug', name: 'Should Not Stick' })
    expect(response.statusCode).toBe(409)
    expect(response.json().error.code).toBe('conflict')
    expect(await getCategory(ctx, category.id)).toEqual(category)
  })

  test('an unknown parent_id answers 400 on parent_id', async ({ ctx, admin }) => {
    const category = await createCategory(ctx, admin, { name: 'Bad Parent Target' })
    const response = await patchCategory(ctx, admin, category.id, { parent_id: UNKNOWN_ID })
    expect(response.statusCode).toBe(400)
    expect(response.json().error).toMatchObject({ code: 'validation_error', details: [expect.objectContaining({ field: 'parent_id' })] })
    expect((await getCategory(ctx, category.id)).parent_id).toBeNull()
  })

  test('a parent that would make a cycle answers 400: itself, its child, its grandchild', async ({ ctx, admin }) => {
    const top = await createCategory(ctx, admin, { name: 'Cycle Top' })
    const middle = await createCategory(ctx, admin, { name: 'Cycle Middle', parent_id: top.id })
    const bottom = await createCategory(ctx, admin, { name: 'Cycle Bottom', parent_id: middle.id })
    for (const [id, parentId] of [
      [top.id, top.id],
      [top.id, middle.id],
      [top.id, bottom.id],
      [middle.id, bottom.id],
    ] as const) {
      const response = await patchCategory(ctx, admin, id, { parent_id: parentId })
      expect(response.statusCode).toBe(400)
      expect(response.json().error).toMatchObject({
        code: 'validation_error',
        details: [{ field: 'parent_id', message: expect.stringContaining('ancestor') }],
      })
    }
    expect((await getCategory(ctx, top.id)).parent_id).toBeNull()
    expect((await getCategory(ctx, middle.id)).parent_id).toBe(top.id)
    // Moving a leaf under another branch is fine.
    const sideline = await createCategory(ctx, admin, { name: 'Cycle Side' })
    const moved = await patchCategory(ctx, admin, bottom.id, { parent_id: sideline.id })
    expect(moved.statusCode).toBe(200)
    expect(moved.json().parent_id).toBe(sideline.id)
  })

  test('answers 404 for an unknown id, 400 for a malformed id and for unknown fields', async ({ ctx, admin }) => {
    const missing = await patchCategory(ctx, admin, UNKNOWN_ID, { name: 'Ghost' })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().error).toMatchObject({ code: 'not_found', message: 'Category not found' })
    const malformed = await patchCategory(ctx, admin, 'abc', { name: 'Ghost' })
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().error.details).toContainEqual(expect.objectContaining({ field: 'id' }))
    const category = await createCategory(ctx, admin, { name: 'Strict Patch' })
    const unknown = await patchCategory(ctx, admin, category.id, { id: UNKNOWN_ID })
    expect(unknown.statusCode).toBe(400)
    expect(unknown.json().error.details).toEqual([{ field: 'id', message: "Field 'id' is not allowed" }])
    const badSlug = await patchCategory(ctx, admin, category.id, { slug: 'UPPER' })
    expect(badSlug.statusCode).toBe(400)
    expect(badSlug.json().error.details).toContainEqual(expect.objectContaining({ field: 'slug' }))
  })

  test('answers 401 without or with a garbage token, 403 for a customer; nothing changes', async ({ ctx, admin, customer }) => {
    const category = await createCategory(ctx, admin, { name: 'Guarded Category' })
    const url = `${CATEGORIES}/${category.id}`
    const anonymous = await ctx.request({ method: 'PATCH', url, payload: { name: 'Hacked' } })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error.code).toBe('unauthorized')
    const garbage = await ctx.request({ method: 'PATCH', url, token: 'garbage', payload: { name: 'Hacked' } })
    expect(garbage.statusCode).toBe(401)
    const byCustomer = await ctx.request({ method: 'PATCH', url, token: customer, payload: { name: 'Hacked' } })
    expect(byCustomer.statusCode).toBe(403)
    expect(byCustomer.json().error.code).toBe('forbidden')
    expect(await getCategory(ctx, category.id)).toEqual(category)
  })
})

describe('DELETE /api/v1/categories/:id', () => {
  test('answers 204 with no body; the category is gone', async ({ ctx, admin }) => {
    const category = await createCategory(ctx, admin, { name: 'Short Lived' })
    const response = await ctx.request({ method: 'DELETE', url: `${CATEGORIES}/${category.id}`, token: admin })
    expect(response.statusCode).toBe(204)
    expect(response.body).toBe('')
    const after = await ctx.request({ method: 'GET', url: `${CATEGORIES}/${category.id}` })
    expect(after.statusCode).toBe(404)
    expect(await ctx.handle.sql`select id from categories where id = ${category.id}`).toHaveLength(0)
    const again = await ctx.request({ method: 'DELETE', url: `${CATEGORIES}/${category.id}`, token: admin })
    expect(again.statusCode).toBe(404)
    expect(again.json().error).toMatchObject({ code: 'not_found', message: 'Category not found' })
  })

  test('removes the links but keeps the products, which stay active and listed', async ({ ctx, admin }) => {
    const doomed = await createCategory(ctx, admin, { name: 'Doomed Category' })
    const survivor = await createCategory(ctx, admin, { name: 'Survivor Category' })
    const product = await createProduct(ctx, admin, { title: 'Linked Survivor', category_ids: [doomed.id, survivor.id] })
    expect(product.categories.map((category) => category.id).sort()).toEqual([doomed.id, survivor.id].sort())

    const response = await ctx.request({ method: 'DELETE', url: `${CATEGORIES}/${doomed.id}`, token: admin })
    expect(response.statusCode).toBe(204)

    const detail = await ctx.request({ method: 'GET', url: `/api/v1/products/${product.id}` })
    expect(detail.statusCode).toBe(200)
    expect(detail.json()).toMatchObject({
      id: product.id,
      title: 'Linked Survivor',
      is_active: true,
      categories: [{ id: survivor.id, name: 'Survivor Category', slug: 'survivor-category' }],
    })
    const links = await ctx.handle.sql`select category_id from product_categories where product_id = ${product.id}`
    expect(links).toEqual([{ category_id: survivor.id }])
    const listed = await ctx.request({ method: 'GET', url: '/api/v1/products?search=linked survivor' })
    expect(listed.json().products.map((item: Product) => item.id)).toEqual([product.id])
    const filtered = await ctx.request({ method: 'GET', url: '/api/v1/products?category=doomed-category' })
    expect(filtered.json()).toEqual({ products: [], meta: { page: 1, per_page: 20, total: 0, total_pages: 0 } })
  })

  test('children of a deleted category stay, with no parent', async ({ ctx, admin }) => {
    const parent = await createCategory(ctx, admin, { name: 'Departing Parent' })
    const child = await createCategory(ctx, admin, { name: 'Remaining Child', parent_id: parent.id })
    const response = await ctx.request({ method: 'DELETE', url: `${CATEGORIES}/${parent.id}`, token: admin })
    expect(response.statusCode).toBe(204)
    expect(await getCategory(ctx, child.id)).toMatchObject({ id: child.id, name: 'Remaining Child', parent_id: null })
  })

  test('answers 404 for an unknown id and 400 for a malformed one', async ({ ctx, admin }) => {
    const missing = await ctx.request({ method: 'DELETE', url: `${CATEGORIES}/${UNKNOWN_ID}`, token: admin })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().error).toMatchObject({ code: 'not_found', message: 'Category not found' })
    const malformed = await ctx.request({ method: 'DELETE', url: `${CATEGORIES}/1`, token: admin })
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().error.code).toBe('validation_error')
  })

  test('answers 401 without or with a garbage token, 403 for a customer; the category stays', async ({ ctx, admin, customer }) => {
    const category = await createCategory(ctx, admin, { name: 'Protected Category' })
    const url = `${CATEGORIES}/${category.id}`
    const anonymous = await ctx.request({ method: 'DELETE', url })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.json().error.code).toBe('unauthorized')
    expect((await ctx.request({ method: 'DELETE', url, token: 'garbage' })).statusCode).toBe(401)
    const byCustomer = await ctx.request({ method: 'DELETE', url, token: customer })
    expect(byCustomer.statusCode).toBe(403)
    expect(byCustomer.json().error.code).toBe('forbidden')
    expect(await getCategory(ctx, category.id)).toEqual(category)
  })
})
