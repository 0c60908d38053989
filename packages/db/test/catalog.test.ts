import { eq, sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PgUpdateSetSource } from 'drizzle-orm/pg-core'
import { catalogRevision, categories, productCategories, products, productVariants } from '../src/schema/index.js'
import { openTestDatabase, postgresError, type OpenTestDatabase } from './test-database.js'

let database: OpenTestDatabase
beforeAll(async () => {
  database = await openTestDatabase()
})
afterAll(async () => {
  await database.dispose()
})

const negativeStock = { code: '23514', constraint_name: 'products_inventory_nonnegative' }

let slugs = 0
async function insertProduct(values: Partial<typeof products.$inferInsert> = {}) {
  const [row] = await database.db
    .insert(products)
    .values({ title: 'Mug', slug: `mug-${++slugs}`, priceMinor: 1299, currency: 'USD', ...values })
    .returning()
  return row!
}

async function insertCategory() {
  const [row] = await database.db
    .insert(categories)
    .values({ name: 'Kitchen', slug: `kitchen-${++slugs}` })
    .returning()
  return row!
}

async function revision(): Promise<number> {
  const rows = await database.db.select().from(catalogRevision)
  expect(rows).toHaveLength(1)
  return rows[0]!.revision
}

function updateProduct(id: string, values: PgUpdateSetSource<typeof products>) {
  return database.db.update(products).set(values).where(eq(products.id, id))
}

async function stockOf(id: string) {
  const [row] = await database.db.select().from(products).where(eq(products.id, id))
  return row!.inventoryQuantity
}

/** How much `write` moved the catalog revision. */
async function bumpsOf(write: () => Promise<unknown>): Promise<number> {
  const before = await revision()
  await write()
  return (await revision()) - before
}

describe('catalog_revision trigger', () => {
  it('starts at revision 0 in a freshly migrated database', async () => {
    expect(await revision()).toBe(0)
  })

  it('bumps once when a product is inserted', async () => {
    expect(await bumpsOf(() => insertProduct())).toBe(1)
  })

  it('bumps once per statement, however many products it inserts', async () => {
    const write = () =>
      database.db.insert(products).values([
        { title: 'Plate', slug: `plate-${++slugs}`, priceMinor: 500, currency: 'USD' },
        { title: 'Bowl', slug: `bowl-${++slugs}`, priceMinor: 700, currency: 'USD' },
      ])
    expect(await bumpsOf(write)).toBe(1)
  })

  it('bumps when is_active changes (soft delete and restore)', async () => {
    const product = await insertProduct()
    expect(await bumpsOf(() => updateProduct(product.id, { isActive: false }))).toBe(1)
    expect(await bumpsOf(() => updateProduct(product.id, { isActive: true }))).toBe(1)
  })

  it('bumps when the title or description, which search matches, changes', async () => {
    const product = await insertProduct()
    expect(await bumpsOf(() => updateProduct(product.id, { title: 'Big mug' }))).toBe(1)
    expect(await bumpsOf(() => updateProduct(product.id, { description: 'Stoneware' }))).toBe(1)
  })

  it('bumps when a product is deleted (its cascading category links may bump it again)', async () => {
    const product = await insertProduct()
    const remove = () => database.db.delete(products).where(eq(products.id, product.id))
    expect(await bumpsOf(remove)).toBeGreaterThanOrEqual(1)
  })

  it('bumps when a product is put into or taken out of a category', async () => {
    const product = await insertProduct()
    const category = await insertCategory()
    const link = { productId: product.id, categoryId: category.id }
    expect(await bumpsOf(() => database.db.insert(productCategories).values(link))).toBe(1)
    const unlink = () => database.db.delete(productCategories).where(eq(productCategories.productId, product.id))
    expect(await bumpsOf(unlink)).toBe(1)
  })

  it('bumps when a category slug, which the category filter matches, changes', async () => {
    const category = await insertCategory()
    const rename = () =>
      database.db.update(categories).set({ slug: `renamed-${++slugs}` }).where(eq(categories.id, category.id))
    expect(await bumpsOf(rename)).toBe(1)
  })

  it('does not bump when only inventory_quantity changes', async () => {
    const product = await insertProduct({ inventoryQuantity: 10 })
    const decrement = () => updateProduct(product.id, { inventoryQuantity: sql`${products.inventoryQuantity} - 1` })
    expect(await bumpsOf(decrement)).toBe(0)
    expect(await bumpsOf(() => updateProduct(product.id, { inventoryQuantity: 42 }))).toBe(0)
    expect(await stockOf(product.id)).toBe(42)
  })

  it('does not bump when only the price changes', async () => {
    const product = await insertProduct()
    expect(await bumpsOf(() => updateProduct(product.id, { priceMinor: 1499 }))).toBe(0)
  })
})

describe('inventory check constraints', () => {
  it('refuses to insert a product with negative stock', async () => {
    const slug = `negative-${++slugs}`
    const error = await postgresError(insertProduct({ slug, inventoryQuantity: -1 }))
    expect(error).toMatchObject(negativeStock)
    expect(await database.db.select().from(products).where(eq(products.slug, slug))).toEqual([])
  })

  it('refuses to set stock below zero and leaves it unchanged', async () => {
    const product = await insertProduct({ inventoryQuantity: 2 })
    const oversell = updateProduct(product.id, { inventoryQuantity: sql`${products.inventoryQuantity} - 3` })
    expect(await postgresError(oversell)).toMatchObject(negativeStock)
    expect(await stockOf(product.id)).toBe(2)
  })

  it('allows stock to reach exactly zero', async () => {
    const product = await insertProduct({ inventoryQuantity: 2 })
    await updateProduct(product.id, { inventoryQuantity: sql`${products.inventoryQuantity} - 2` })
    expect(await stockOf(product.id)).toBe(0)
  })

  it('refuses negative stock on a variant too', async () => {
    const product = await insertProduct()
    const insertVariant = database.db
      .insert(productVariants)
      .values({ productId: product.id, title: 'Large', inventoryQuantity: -5 })
    expect(await postgresError(insertVariant)).toMatchObject({
      code: '23514',
      constraint_name: 'product_variants_inventory_nonnegative',
    })
  })
})

describe('products.categories read model', () => {
  async function categoriesOf(id: string) {
    const [row] = await database.db.select({ categories: products.categories }).from(products).where(eq(products.id, id))
    return row!.categories
  }

  it('follows links, renames, slug changes, unlinks and category deletes, ordered by name', async () => {
    const product = await insertProduct()
    const kitchen = await insertCategory()
    const [bath] = await database.db.insert(categories).values({ name: 'Bath', slug: `bath-${++slugs}` }).returning()
    expect(await categoriesOf(product.id)).toEqual([])

    await database.db.insert(productCategories).values([
      { productId: product.id, categoryId: kitchen.id },
      { productId: product.id, categoryId: bath!.id },
    ])
    expect(await categoriesOf(product.id)).toEqual([
      { id: bath!.id, name: 'Bath', slug: bath!.slug },
      { id: kitchen.id, name: 'Kitchen', slug: kitchen.slug },
    ])

    await database.db.update(categories).set({ name: 'Aardvark', slug: 'aardvark-x' }).where(eq(categories.id, kitchen.id))
    expect(await categoriesOf(product.id)).toEqual([
      { id: kitchen.id, name: 'Aardvark', slug: 'aardvark-x' },
      { id: bath!.id, name: 'Bath', slug: bath!.slug },
    ])

    await database.db.delete(productCategories).where(eq(productCategories.categoryId, bath!.id))
    expect(await categoriesOf(product.id)).toEqual([{ id: kitchen.id, name: 'Aardvark', slug: 'aardvark-x' }])

    await database.db.delete(categories).where(eq(categories.id, kitchen.id))
    expect(await categoriesOf(product.id)).toEqual([])
  })

  it('a category change leaves products outside the category untouched', async () => {
    const inside = await insertProduct()
    const outside = await insertProduct()
    const category = await insertCategory()
    await database.db.insert(productCategories).values({ productId: inside.id, categoryId: category.id })
    const [before] = await database.db.select({ updated: sql<string>`xmin::text` }).from(products).where(eq(products.id, outside.id))
    await database.db.update(categories).set({ name: 'Renamed' }).where(eq(categories.id, category.id))
    const [after] = await database.db.select({ updated: sql<string>`xmin::text` }).from(products).where(eq(products.id, outside.id))
    expect(after!.updated).toBe(before!.updated)
    expect((await categoriesOf(inside.id))[0]!.name).toBe('Renamed')
  })
})
