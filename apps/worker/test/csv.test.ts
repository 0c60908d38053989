/**
 * CSV exports and imports against a real database and files on disk: export then import into an
 * empty database gives back the same catalog and customers (property-tested over generated
 * catalogs with text that breaks naive CSV: commas, quotes, newlines, formulas, `|`), the dry
 * run, refused rows and why, bad headers, an import stopped between batches and carried on, and
 * both jobs run by a real worker through the queue.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { and, asc, eq, sql } from 'drizzle-orm'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { formatMinorUnits } from '@commerce/domain'
import {
  addCsvJob,
  applyStockMoves,
  categories,
  claimImport,
  createDb,
  customerGroupMembers,
  customerGroups,
  customers,
  ensureLevels,
  events,
  exports,
  importRows,
  imports,
  inventoryLevels,
  newId,
  prices,
  productCategories,
  products,
  productVariants,
  sqlOf,
  stockLocations,
  TASKS,
  uploads,
  type DatabaseHandle,
} from '@commerce/db'
import { createTestDatabase, type TestDatabase } from '@commerce/db/testing'
import { diskStorage, type FileStorage } from '@commerce/storage'
import { writeExport } from '../src/csv/export.js'
import { createLogger } from '../src/logger.js'
import { createImportCsv } from '../src/tasks/csv.js'
import { createExpireFiles } from '../src/tasks/expire-files.js'
import { startWorker } from '../src/worker.js'

let folder: string
let storage: FileStorage
const opened: { database: TestDatabase; handle: DatabaseHandle }[] = []

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'csv-'))
  storage = diskStorage({ root: folder, publicUrl: 'http://localhost/files' })
})

afterAll(async () => {
  for (const { database, handle } of opened) {
    await handle.close()
    await database.drop()
  }
  await rm(folder, { recursive: true, force: true })
})

async function freshDatabase(): Promise<DatabaseHandle> {
  const database = await createTestDatabase(inject('adminUrl'), inject('template'))
  const handle = createDb({ url: database.url, poolMax: 4 })
  opened.push({ database, handle })
  return handle
}

/** Frees a database a property run is done with. */
async function dropDatabase(handle: DatabaseHandle) {
  const index = opened.findIndex((entry) => entry.handle === handle)
  const { database } = opened.splice(index, 1)[0]!
  await handle.close()
  await database.drop()
}

async function exportText(handle: DatabaseHandle, resource: 'products' | 'customers' | 'orders', filters: Record<string, unknown> = {}): Promise<string> {
  const written = await writeExport(handle.sql, storage, { id: newId(), resource, filters })
  return readFile(join(folder, written.storageKey), 'utf8')
}

const logger = createLogger('silent')
const DAY = 86_400_000
const firstAttempt = { job: { attempts: 1, max_attempts: 5 } } as never

/** Makes an import of `csv` and runs its job's task (the queue itself is in the worker test below). */
async function importText(handle: DatabaseHandle, resource: 'products' | 'customers', csv: string, options: { dryRun?: boolean; batchRows?: number; signal?: AbortSignal } = {}) {
  const id = await newImport(handle, resource, csv, options.dryRun ?? false)
  const task = createImportCsv({ storage, batchRows: options.batchRows ?? 3, retentionMs: DAY, db: handle, logger, signal: options.signal ?? new AbortController().signal })
  await task({ id }, firstAttempt)
  return importResult(handle, id)
}

async function newImport(handle: DatabaseHandle, resource: 'products' | 'customers', csv: string, dryRun: boolean) {
  const id = newId()
  const storageKey = `private/imports/${id}.csv`
  await storage.put(storageKey, Buffer.from(csv), 'text/csv')
  await handle.db.insert(imports).values({ id, resource, dryRun, storageKey, sizeBytes: Buffer.byteLength(csv) })
  return id
}

async function importResult(handle: DatabaseHandle, id: string) {
  const [row] = await handle.db.select().from(imports).where(eq(imports.id, id))
  const report = await handle.db.select().from(importRows).where(eq(importRows.importId, id)).orderBy(asc(importRows.row))
  return { ...row!, report }
}

// --- Generated catalogs ------------------------------------------------------------------------

const NASTY = ['a,b', 'say "hi"', 'two\nlines', 'cr\r\nlf', '=SUM(A1:A2)', '+1', '-5% off', '@home', "'quoted", "''=x", 'pipe|and\\slash', ' padded ', 'Ünïcödé 🎉', '\ttab']
const text = (maxLength: number) => fc.oneof(fc.constantFrom(...NASTY), fc.string({ minLength: 1, maxLength, unit: 'grapheme' }).filter((value) => !value.includes('\u0000')))
const CURRENCIES = ['USD', 'EUR', 'JPY', 'KWD'] as const
const minor = fc.integer({ min: 0, max: 1_000_000_000 })
const weight = fc.option(fc.integer({ min: 0, max: 10_000_000 }).map((n) => n / 100), { nil: null })
const unit = fc.constantFrom('kg', 'g', 'lb', 'oz')

const variantArbitrary = fc.record({
  title: text(40),
  sku: fc.option(fc.stringMatching(/^[A-Za-z0-9-]{1,12}$/), { nil: null }),
  price: fc.option(minor, { nil: null }),
  options: fc.dictionary(text(10), fc.oneof(text(10), fc.constant('')), { maxKeys: 3 }).map((options) => ({ ...options })),
  weight,
  weightUnit: unit,
  extraPrices: fc.array(fc.tuple(fc.constantFrom(...CURRENCIES), minor), { maxLength: 2 }),
  stock: fc.array(fc.integer({ min: 0, max: 500 }), { minLength: 3, maxLength: 3 }),
})

const productArbitrary = fc.record({
  title: text(60),
  description: fc.option(text(200), { nil: null }),
  sku: fc.option(fc.stringMatching(/^[A-Za-z0-9-]{1,12}$/), { nil: null }),
  currency: fc.constantFrom(...CURRENCIES),
  price: minor,
  weight,
  weightUnit: unit,
  isActive: fc.boolean(),
  imageUrl: fc.option(fc.constantFrom('https://cdn.example.com/a.png', 'https://cdn.example.com/b,c.jpg?x=1&y=%222%22'), { nil: null }),
  categories: fc.subarray(['shoes', 'sale', 'new-in']),
  extraPrices: fc.array(fc.tuple(fc.constantFrom(...CURRENCIES), minor), { maxLength: 3 }),
  stock: fc.array(fc.integer({ min: 0, max: 500 }), { minLength: 3, maxLength: 3 }),
  variants: fc.array(variantArbitrary, { maxLength: 3 }),
})

type GeneratedProduct = typeof productArbitrary extends fc.Arbitrary<infer T> ? T : never

const LOCATIONS = ['Warehouse, North', 'Shop "Main"']

/** What an empty shop has before a catalog import: the categories and stock locations it names. */
async function prepareShop(handle: DatabaseHandle) {
  await handle.db.insert(categories).values([
    { name: 'Shoes', slug: 'shoes' },
    { name: 'Sale', slug: 'sale' },
    { name: 'New in', slug: 'new-in' },
  ])
  await handle.db.insert(stockLocations).values(LOCATIONS.map((name, index) => ({ name, priority: index + 1 })))
}

/** Writes a generated catalog straight into the tables (not through the import under test). */
async function seedCatalog(handle: DatabaseHandle, generated: GeneratedProduct[]) {
  const locationRows = await handle.db.select().from(stockLocations).orderBy(asc(stockLocations.priority))
  const categoryRows = await handle.db.select().from(categories)
  await handle.db.transaction(async (tx) => {
    const levels: { product: string; variant: string | null; location: string; onHand: number }[] = []
    for (const [index, product] of generated.entries()) {
      const id = newId()
      await tx.insert(products).values({
        id,
        title: product.title,
        slug: `product-${index}`,
        description: product.description,
        sku: product.sku,
        priceMinor: product.price,
        currency: product.currency,
        weight: product.weight,
        weightUnit: product.weightUnit,
        isActive: product.isActive,
        imageUrl: product.imageUrl,
        imageUrlExplicit: product.imageUrl !== null,
      })
      if (product.categories.length > 0) {
        await tx.insert(productCategories).values(product.categories.map((slug) => ({ productId: id, categoryId: categoryRows.find((row) => row.slug === slug)!.id })))
      }
      const extra = new Map(product.extraPrices.filter(([currency]) => currency !== product.currency))
      if (extra.size > 0) await tx.insert(prices).values([...extra].map(([currency, amount]) => ({ productId: id, currency, amountMinor: amount })))
      if (product.variants.length === 0) product.stock.forEach((onHand, at) => levels.push({ product: id, variant: null, location: locationRows[at]!.id, onHand }))
      for (const variant of product.variants) {
        const variantId = newId()
        await tx.insert(productVariants).values({
          id: variantId,
          productId: id,
          title: variant.title,
          sku: variant.sku,
          priceMinor: variant.price,
          options: variant.options,
          weight: variant.weight,
          weightUnit: variant.weightUnit,
        })
        const variantExtra = new Map(variant.extraPrices.filter(([currency]) => currency !== product.currency))
        if (variantExtra.size > 0) {
          await tx.insert(prices).values([...variantExtra].map(([currency, amount]) => ({ productId: id, variantId, currency, amountMinor: amount })))
        }
        variant.stock.forEach((onHand, at) => levels.push({ product: id, variant: variantId, location: locationRows[at]!.id, onHand }))
      }
    }
    const client = sqlOf(tx)
    await ensureLevels(client, levels)
    await applyStockMoves(
      client,
      levels.map((level) => ({ item: level.variant ?? level.product, location: level.location, on_hand: level.onHand, reason: 'received' })),
    )
  })
}

/** Everything a catalog export covers, in a form two databases can be compared by (categories and locations by name). */
async function catalogOf(handle: DatabaseHandle) {
  const productRows = await handle.db
    .select({
      id: products.id,
      title: products.title,
      slug: products.slug,
      description: products.description,
      sku: products.sku,
      priceMinor: products.priceMinor,
      currency: products.currency,
      inventoryQuantity: products.inventoryQuantity,
      weight: products.weight,
      weightUnit: products.weightUnit,
      isActive: products.isActive,
      imageUrl: products.imageUrl,
      imageUrlExplicit: products.imageUrlExplicit,
      categories: sql<string[]>`(select coalesce(json_agg(c->>'slug' order by c->>'slug'), '[]') from jsonb_array_elements(${products.categories}) c)`,
    })
    .from(products)
    .orderBy(asc(products.id))
  const variantRows = await handle.db
    .select({
      id: productVariants.id,
      productId: productVariants.productId,
      title: productVariants.title,
      sku: productVariants.sku,
      priceMinor: productVariants.priceMinor,
      inventoryQuantity: productVariants.inventoryQuantity,
      options: productVariants.options,
      weight: productVariants.weight,
      weightUnit: productVariants.weightUnit,
    })
    .from(productVariants)
    .orderBy(asc(productVariants.id))
  const priceRows = await handle.db
    .select({ productId: prices.productId, variantId: prices.variantId, currency: prices.currency, amountMinor: prices.amountMinor, minQuantity: prices.minQuantity })
    .from(prices)
    .orderBy(asc(prices.productId), asc(prices.variantId), asc(prices.currency))
  const levelRows = await handle.db
    .select({ item: inventoryLevels.itemId, location: stockLocations.name, onHand: inventoryLevels.onHand })
    .from(inventoryLevels)
    .innerJoin(stockLocations, eq(stockLocations.id, inventoryLevels.locationId))
    .where(sql`${inventoryLevels.onHand} > 0`)
    .orderBy(asc(inventoryLevels.itemId), asc(stockLocations.name))
  return { productRows, variantRows, priceRows, levelRows }
}

describe('products CSV', () => {
  it('export then import into an empty shop is the identity, for any catalog', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(productArbitrary, { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 7 }), async (generated, batchRows) => {
        const source = await freshDatabase()
        const target = await freshDatabase()
        try {
          await prepareShop(source)
          await prepareShop(target)
          await seedCatalog(source, generated)
          const exported = await exportText(source, 'products')
          const result = await importText(target, 'products', exported, { batchRows })
          expect(result.status).toBe('completed')
          expect(result.report.filter((row) => row.action === 'refuse')).toEqual([])
          const rowCount = generated.reduce((sum, product) => sum + Math.max(1, product.variants.length), 0)
          expect(result.processedRows).toBe(rowCount)
          expect(result.report.filter((row) => row.action === 'create')).toHaveLength(rowCount)
          expect(await catalogOf(target)).toEqual(await catalogOf(source))
          // And the file the new shop exports is the same, byte for byte.
          expect(await exportText(target, 'products')).toBe(exported)
          const created = await target.db.select({ n: sql<number>`count(*)::int` }).from(events).where(eq(events.kind, 'product.created'))
          expect(created[0]!.n).toBe(generated.length)
        } finally {
          await dropDatabase(source)
          await dropDatabase(target)
        }
      }),
      { numRuns: 12 },
    )
  })

  it('writes amounts in major units with the currency’s decimals, guards formulas, and lists what it holds', async () => {
    const handle = await freshDatabase()
    await prepareShop(handle)
    await seedCatalog(handle, [
      { title: '=HYPERLINK("http://evil")', description: null, sku: 'A-1', currency: 'KWD', price: 1500, weight: 0.25, weightUnit: 'kg', isActive: true, imageUrl: null, categories: ['sale', 'shoes'], extraPrices: [['JPY', 4250]], stock: [3, 0, 2], variants: [] },
    ])
    const text = await exportText(handle, 'products')
    expect(text.startsWith('\uFEFFproduct_id,product_slug,product_title')).toBe(true)
    expect(text).toContain('\r\n')
    const [header, row] = text.slice(1).split('\r\n')
    expect(header).toContain('product_price:JPY,variant_price:JPY')
    expect(header).toContain('"stock:Warehouse, North","stock:Shop ""Main"""')
    expect(header!.endsWith('stock:Default,"stock:Warehouse, North","stock:Shop ""Main"""')).toBe(true)
    // 1500 fils is 1.500 KWD, 4250 JPY has no decimals; the title cannot run as a formula.
    expect(row).toContain(`"'=HYPERLINK(""http://evil"")"`)
    expect(row).toContain(',KWD,1.500,0.25,kg,true,,sale|shoes,')
    expect(row).toContain(',4250,,3,0,2')
    expect(formatMinorUnits(1500, 'KWD')).toBe('1.500')
  })

  it('a dry run reports every row and writes nothing; applying it then writes exactly that', async () => {
    const handle = await freshDatabase()
    await prepareShop(handle)
    await seedCatalog(handle, [{ title: 'Old', description: null, sku: null, currency: 'USD', price: 100, weight: null, weightUnit: 'kg', isActive: true, imageUrl: null, categories: [], extraPrices: [], stock: [1, 0, 0], variants: [] }])
    const csv = [
      'product_slug,product_title,product_price,product_categories,variant_title,variant_sku,stock:Default',
      'product-0,Renamed,2.50,sale,,,7',
      'tee,Tee,19.99,shoes|new-in,Small,TEE-S,4',
      'tee,,,,Large,TEE-L,5',
      'bad-price,Bad,19.999,,,,',
      'lost,Lost,1.00,no-such-category,,,',
    ].join('\n')
    const dry = await importText(handle, 'products', csv, { dryRun: true })
    expect(dry.status).toBe('validated')
    expect({ created: dry.created, updated: dry.updated, refused: dry.refused }).toEqual({ created: 2, updated: 1, refused: 2 })
    expect(dry.report.map((row) => [row.row, row.action, row.key])).toEqual([
      [2, 'update', 'product-0'],
      [3, 'create', 'tee'],
      [4, 'create', 'tee'],
      [5, 'refuse', 'bad-price'],
      [6, 'refuse', 'lost'],
    ])
    expect(dry.report[3]!.reason).toBe('product_price: USD amounts have at most 2 decimal places (an amount in major units, such as 19.99)')
    expect(dry.report[4]!.reason).toBe("product_categories: no category has the slug 'no-such-category' (create it first)")
    const before = await catalogOf(handle)
    expect(before.productRows).toHaveLength(1)
    expect(before.productRows[0]!.title).toBe('Old')

    // The same file for real.
    const done = await importText(handle, 'products', csv)
    expect(done.status).toBe('completed')
    expect(done.report.map((row) => row.action)).toEqual(dry.report.map((row) => row.action))
    const after = await catalogOf(handle)
    const tee = after.productRows.find((row) => row.slug === 'tee')!
    expect(tee).toMatchObject({ title: 'Tee', priceMinor: 1999, categories: ['new-in', 'shoes'], inventoryQuantity: 0 })
    expect(after.variantRows.filter((row) => row.productId === tee.id).map((row) => [row.title, row.sku, row.inventoryQuantity])).toEqual([
      ['Small', 'TEE-S', 4],
      ['Large', 'TEE-L', 5],
    ])
    expect(after.productRows.find((row) => row.slug === 'product-0')).toMatchObject({ title: 'Renamed', priceMinor: 250, inventoryQuantity: 7, categories: ['sale'] })
    expect(after.productRows.map((row) => row.slug).sort()).toEqual(['product-0', 'tee'])

    // Again: the same rows now update, and nothing changes.
    const again = await importText(handle, 'products', csv)
    expect({ created: again.created, updated: again.updated, refused: again.refused }).toEqual({ created: 0, updated: 3, refused: 2 })
    expect(await catalogOf(handle)).toEqual(after)
  })

  it('refuses a whole product for one bad row, rows out of line, scattered rows and disagreeing rows, and imports the rest', async () => {
    const handle = await freshDatabase()
    await prepareShop(handle)
    const csv = [
      'product_slug,product_title,product_price,variant_title',
      'good,Good,1.00,',
      'mixed,Mixed,1.00,A',
      'mixed,,1.0x,B',
      'shifted,Shifted,1.00,A,extra-cell',
      'twice,Twice,1.00,',
      'good-2,Good two,2.00,',
      'twice,Twice,1.00,',
      'disagree,One name,1.00,A',
      'disagree,Another name,,B',
      ',No key,1.00,',
    ].join('\n')
    const result = await importText(handle, 'products', csv)
    expect(result.status).toBe('completed')
    const reasons = Object.fromEntries(result.report.map((row) => [row.row, [row.action, row.reason]]))
    expect(reasons[2]).toEqual(['create', null])
    expect(reasons[3]).toEqual(['refuse', 'another row of this product was refused (row 4)'])
    expect(reasons[4]![1]).toMatch(/^product_price differs from the product's first row \(row 3\)/)
    expect(reasons[5]).toEqual(['refuse', 'row 5 has 5 cells where the header has 4: its columns do not line up'])
    expect(reasons[6]).toEqual(['create', null])
    expect(reasons[8]).toEqual(['refuse', "the rows of a product must follow each other: this product's rows began at row 6"])
    expect(reasons[10]![1]).toBe("product_title differs from the product's first row (row 9)")
    expect(reasons[11]).toEqual(['refuse', 'a row needs a product_id or a product_slug'])
    const slugs = (await catalogOf(handle)).productRows.map((row) => row.slug).sort()
    expect(slugs).toEqual(['good', 'good-2', 'twice'])
  })

  it('fails an import whose header it cannot use, naming the problem', async () => {
    const handle = await freshDatabase()
    const cases: [string, string][] = [
      ['product_slug,product_titel\nx,y', "Unknown columns: 'product_titel' (docs/csv.md lists them)"],
      ['product_title\nx', 'The header needs product_id or product_slug, to know which product each row is'],
      ['product_slug,stock:Nowhere\nx,1', "The column 'stock:Nowhere' names no stock location: create 'Nowhere' first (POST /stock-locations)"],
      ['product_slug,product_price:XXX\nx,1', "The column 'product_price:XXX' names no known ISO 4217 currency"],
      ['product_slug,product_slug\nx,x', "The column 'product_slug' appears twice in the header"],
      ['', 'The file is empty: it needs a header row'],
      ['product_slug,product_title\n"open,quote\n', ''],
    ]
    for (const [csv, message] of cases) {
      const result = await importText(handle, 'products', csv)
      expect(result.status).toBe('failed')
      if (message) expect(result.error).toBe(message)
      else expect(result.error).toMatch(/^The file could not be read as CSV: /)
    }
  })

  it('an import stopped between batches carries on from its last batch and ends as one run would', async () => {
    const one = await freshDatabase()
    const two = await freshDatabase()
    await prepareShop(one)
    await prepareShop(two)
    const lines = ['product_slug,product_title,product_price,variant_title']
    for (let i = 0; i < 12; i++) lines.push(`p-${i},P ${i},${i}.00,A`, `p-${i},,,B`)
    const csv = lines.join('\n')

    const whole = await importText(one, 'products', csv, { batchRows: 4 })
    expect(whole.status).toBe('completed')

    // The worker stops after the first batch (the job fails, to be tried again).
    const id = await newImport(two, 'products', csv, false)
    let checks = 0
    const stopping = { get aborted() { return ++checks > 1 } } as AbortSignal
    const task = (signal: AbortSignal) => createImportCsv({ storage, batchRows: 4, retentionMs: DAY, db: two, logger, signal })
    await expect(task(stopping)({ id }, firstAttempt)).rejects.toThrow('The worker is stopping')
    const stopped = await importResult(two, id)
    expect(stopped).toMatchObject({ status: 'running', processedRows: 4, created: 4 })
    expect((await two.db.select().from(products)).length).toBe(2)

    await task(new AbortController().signal)({ id }, firstAttempt)
    const resumed = await importResult(two, id)
    expect(resumed).toMatchObject({ status: 'completed', processedRows: 24, created: 24, updated: 0, refused: 0 })
    expect(resumed.report.map((row) => row.row)).toEqual(Array.from({ length: 24 }, (_, i) => i + 2))
    const strip = (catalog: Awaited<ReturnType<typeof catalogOf>>) => ({
      products: catalog.productRows.map(({ id: _id, ...rest }) => rest),
      variants: catalog.variantRows.map(({ id: _id, productId: _product, ...rest }) => rest),
    })
    expect(strip(await catalogOf(two))).toEqual(strip(await catalogOf(one)))
  })
})

describe('customers CSV', () => {
  const customerArbitrary = fc.record({
    first: fc.option(text(30), { nil: null }),
    last: fc.option(text(30), { nil: null }),
    phone: fc.option(fc.stringMatching(/^\+?[0-9 ]{3,15}$/), { nil: null }),
    groups: fc.subarray(['Wholesale', 'VIP | gold', 'back\\slash']),
  })

  async function prepareGroups(handle: DatabaseHandle) {
    await handle.db.insert(customerGroups).values([{ name: 'Wholesale' }, { name: 'VIP | gold' }, { name: 'back\\slash' }])
  }

  async function customersOf(handle: DatabaseHandle) {
    return handle.db
      .select({
        id: customers.id,
        email: customers.email,
        firstName: customers.firstName,
        lastName: customers.lastName,
        phone: customers.phone,
        groups: sql<string[]>`(select coalesce(json_agg(g.name order by g.name), '[]') from ${customerGroupMembers} m join ${customerGroups} g on g.id = m.group_id where m.customer_id = "customers"."id")`,
      })
      .from(customers)
      .orderBy(asc(customers.id))
  }

  it('export then import into an empty shop is the identity', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(customerArbitrary, { minLength: 1, maxLength: 8 }), async (generated) => {
        const source = await freshDatabase()
        const target = await freshDatabase()
        try {
          await prepareGroups(source)
          await prepareGroups(target)
          const groupRows = await source.db.select().from(customerGroups)
          for (const [index, customer] of generated.entries()) {
            const [row] = await source.db
              .insert(customers)
              .values({ email: `Person.${index}@Example.com`, firstName: customer.first, lastName: customer.last, phone: customer.phone })
              .returning()
            if (customer.groups.length > 0) {
              await source.db.insert(customerGroupMembers).values(customer.groups.map((name) => ({ customerId: row!.id, groupId: groupRows.find((group) => group.name === name)!.id })))
            }
          }
          const exported = await exportText(source, 'customers')
          const result = await importText(target, 'customers', exported)
          expect(result).toMatchObject({ status: 'completed', created: generated.length, refused: 0 })
          expect(await customersOf(target)).toEqual(await customersOf(source))
        } finally {
          await dropDatabase(source)
          await dropDatabase(target)
        }
      }),
      { numRuns: 8 },
    )
  })

  it('matches by email, keeps an account’s login, and refuses what the API would', async () => {
    const handle = await freshDatabase()
    await prepareGroups(handle)
    const [existing] = await handle.db.insert(customers).values({ email: 'ada@example.com', firstName: 'Ada' }).returning()
    const csv = [
      'email,first_name,last_name,groups',
      'ADA@example.com,Ada,Lovelace,Wholesale',
      'new@example.com,New,,',
      'not-an-email,X,,',
      'someone@anonymized.invalid,X,,',
      'new@example.com,Again,,',
      'grace@example.com,Grace,,Nobody',
    ].join('\n')
    const result = await importText(handle, 'customers', csv)
    expect(result.report.map((row) => [row.row, row.action])).toEqual([
      [2, 'update'],
      [3, 'create'],
      [4, 'refuse'],
      [5, 'refuse'],
      [6, 'refuse'],
      [7, 'refuse'],
    ])
    expect(result.report[0]!.resourceId).toBe(existing!.id)
    expect(result.report[2]!.reason).toBe('email: must match format "email"')
    expect(result.report[3]!.reason).toBe('email: the domain anonymized.invalid is reserved')
    expect(result.report[4]!.reason).toBe('the customer is also on row 3')
    expect(result.report[5]!.reason).toBe("groups: no customer group is named 'Nobody' (create it first)")
    const rows = await customersOf(handle)
    expect(rows.find((row) => row.id === existing!.id)).toMatchObject({ email: 'ADA@example.com', lastName: 'Lovelace', groups: ['Wholesale'] })
    expect(rows.map((row) => row.email).sort()).toEqual(['ADA@example.com', 'new@example.com'])
  })
})

describe('the jobs in a running worker', () => {
  it('writes an export and applies an import queued in the same transaction as their rows', async () => {
    const handle = await freshDatabase()
    const database = opened.find((entry) => entry.handle === handle)!.database
    await prepareShop(handle)
    await seedCatalog(handle, [{ title: 'Boot', description: 'Warm', sku: 'B-1', currency: 'EUR', price: 8900, weight: 1.2, weightUnit: 'kg', isActive: true, imageUrl: null, categories: ['shoes'], extraPrices: [['USD', 9900]], stock: [5, 1, 0], variants: [] }])
    const worker = await startWorker({
      databaseUrl: database.url,
      concurrency: 2,
      databasePoolMax: 4,
      pollIntervalMs: 50,
      webhooks: { timeoutMs: 1000, retrySchedule: [1000], allowPrivateTargets: true },
      csv: { storage, batchRows: 100, retentionMs: DAY },
      logger,
    })
    try {
      const exportId = newId()
      await handle.db.transaction(async (tx) => {
        await tx.insert(exports).values({ id: exportId, resource: 'products', filters: { category_id: (await tx.select().from(categories).where(eq(categories.slug, 'shoes')))[0]!.id } })
        await addCsvJob(tx, TASKS.exportCsv, exportId)
      })
      const done = await waitFor(async () => {
        const [row] = await handle.db.select().from(exports).where(and(eq(exports.id, exportId), eq(exports.status, 'completed')))
        return row
      })
      expect(done).toMatchObject({ rowCount: 1, storageKey: `private/exports/${exportId}.csv`, heartbeatAt: null })
      const file = await readFile(join(folder, done.storageKey!), 'utf8')
      expect(done.sizeBytes).toBe(Buffer.byteLength(file))
      expect(file).toContain(',Boot,Warm,B-1,EUR,89.00,1.2,kg,true,,shoes,')

      const importId = await newImport(handle, 'products', file.replace(',Boot,', ',Boot v2,'), false)
      await handle.db.transaction((tx) => addCsvJob(tx, TASKS.importCsv, importId))
      const imported = await waitFor(async () => {
        const [row] = await handle.db.select().from(imports).where(and(eq(imports.id, importId), eq(imports.status, 'completed')))
        return row
      })
      expect(imported).toMatchObject({ processedRows: 1, updated: 1, created: 0, refused: 0 })
      const [boot] = await handle.db.select().from(products)
      expect(boot!.title).toBe('Boot v2')
      expect((await claimImport(handle.sql, importId))).toBeUndefined()
    } finally {
      await worker.stop()
    }
  })
})

describe('the hourly sweep of files', () => {
  it('deletes expired uploads, and finished exports and imports past CSV_RETENTION, with their files, and nothing else', async () => {
    const handle = await freshDatabase()
    const file = async (key: string) => {
      await storage.put(key, Buffer.from('a\r\n'), 'text/csv')
      return key
    }
    const old = new Date(Date.now() - 2 * DAY)
    const recent = new Date(Date.now() - DAY / 2)
    const [oldExport, recentExport, runningExport] = [newId(), newId(), newId()]
    await handle.db.insert(exports).values([
      { id: oldExport, resource: 'products', status: 'completed', storageKey: await file(`private/exports/${oldExport}.csv`), completedAt: old },
      { id: recentExport, resource: 'products', status: 'completed', storageKey: await file(`private/exports/${recentExport}.csv`), completedAt: recent },
      { id: runningExport, resource: 'orders', status: 'running', startedAt: old },
      { id: newId(), resource: 'customers', status: 'failed', error: 'x', completedAt: old },
    ])
    const oldImport = await newImport(handle, 'customers', 'email\r\n', false)
    await handle.db.update(imports).set({ status: 'completed', completedAt: old }).where(eq(imports.id, oldImport))
    await handle.db.insert(importRows).values({ importId: oldImport, row: 2, action: 'create' })
    const pendingImport = await newImport(handle, 'customers', 'email\r\n', false)
    const [product] = await handle.db.insert(products).values({ title: 'P', slug: 'p', priceMinor: 0, currency: 'USD' }).returning()
    const upload = (id: string, expiresAt: Date) => ({ id, productId: product!.id, storageKey: `uploads/${id}`, contentType: 'image/png', tokenHash: 'x', expiresAt })
    const [expiredUpload, liveUpload] = [newId(), newId()]
    await file(`uploads/${expiredUpload}`)
    await file(`uploads/${liveUpload}`)
    await handle.db.insert(uploads).values([upload(expiredUpload, new Date(Date.now() - 1000)), upload(liveUpload, new Date(Date.now() + 60_000))])

    await createExpireFiles(handle.sql, storage, DAY)({}, { logger: { info: () => {} } } as never)
    expect((await handle.db.select({ id: exports.id }).from(exports)).map((row) => row.id).sort()).toEqual([recentExport, runningExport].sort())
    expect((await handle.db.select({ id: imports.id }).from(imports)).map((row) => row.id)).toEqual([pendingImport])
    expect(await handle.db.select().from(importRows)).toEqual([])
    expect(await storage.readStream(`private/exports/${oldExport}.csv`)).toBeUndefined()
    expect(await storage.readStream(`private/imports/${oldImport}.csv`)).toBeUndefined()
    expect(await storage.readStream(`private/exports/${recentExport}.csv`)).toBeDefined()
    expect(await storage.readStream(`private/imports/${pendingImport}.csv`)).toBeDefined()
    expect((await handle.db.select({ id: uploads.id }).from(uploads)).map((row) => row.id)).toEqual([liveUpload])
    expect(await storage.readStream(`uploads/${expiredUpload}`)).toBeUndefined()
    expect(await storage.readStream(`uploads/${liveUpload}`)).toBeDefined()
  })
})

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error('timed out')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
