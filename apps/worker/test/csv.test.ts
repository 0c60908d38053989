/**
 * CSV exports and imports against a real database and files on disk: export then import into an
 * empty database gives back the same catalog and customers (property-tested over generated
 * catalogs with text that breaks naive CSV: commas, quotes, newlines, formulas, `|`; and with
 * statuses, schedules, tags, compare-at prices, identifiers, options with their variants and
 * attributes of every type), the dry run, refused rows and why (each new cell as the API refuses
 * it), options and attributes changed in part, bad headers, an import stopped between batches and
 * carried on, and both jobs run by a real worker through the queue.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { and, asc, eq, sql } from 'drizzle-orm'
import { parse } from 'csv-parse/sync'
import { stringify } from 'csv-stringify/sync'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { formatMinorUnits, normalizeTags, optionCombinations, withGtinCheckDigit, type AttributeValue, type OptionRecord } from '@commerce/domain'
import {
  addCsvJob,
  applyStockMoves,
  attributeDefinitions,
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

const gtin = fc.oneof(fc.stringMatching(/^[0-9]{12}$/), fc.stringMatching(/^[0-9]{7}$/)).map(withGtinCheckDigit)
/** A base price in another currency, with a compare-at amount or none. */
const extraPrice = fc.tuple(fc.constantFrom(...CURRENCIES), minor, fc.option(minor, { nil: null }))
const TAGS = ['Summer', 'summer ', 'sale, 50%', 'back\\slash', '=formula', ' spaced  out ', 'a|b', "'quoted"]
const tags = fc.array(fc.oneof(fc.constantFrom(...TAGS), fc.string({ minLength: 1, maxLength: 10, unit: 'grapheme' }).filter((value) => !value.includes('\u0000'))), { maxLength: 4 })
/** Past, future (scheduled) or none, to the microsecond as PostgreSQL keeps it. */
const publishedAt = fc.option(
  fc.tuple(fc.integer({ min: -3 * 365, max: 3 * 365 }), fc.integer({ min: 0, max: 999_999 })).map(([days, micros]) => {
    const moment = new Date(Date.now() + days * DAY + (days === 0 ? -DAY : 0)).toISOString().slice(0, 19)
    return `${moment}.${String(micros).padStart(6, '0')}Z`
  }),
  { nil: null },
)
const OPTION_NAMES = ['Size', 'Colour, tint', 'Matériau "x"']
const OPTION_VALUES = ['S', 'M', 'L', '=XL', 'a|b', 'Bleu "nuit"', 'two\nlines']
const optionsArbitrary = fc.uniqueArray(
  fc.record({
    name: fc.constantFrom(...OPTION_NAMES),
    values: fc.uniqueArray(
      fc.record({
        value: fc.constantFrom(...OPTION_VALUES),
        swatchColor: fc.option(fc.constantFrom('#1e40af', '#FFAA00'), { nil: null }),
        swatchImageUrl: fc.option(fc.constant('https://cdn.example.com/swatch,1.png'), { nil: null }),
      }),
      { minLength: 1, maxLength: 3, selector: (value) => value.value },
    ),
  }),
  { maxLength: 2, selector: (option) => option.name },
)

/** The attributes a shop defines before a catalog import (both shops of a round trip): a few of every type, one staff-only each. */
const ATTRIBUTES: (typeof attributeDefinitions.$inferInsert)[] = [
  { key: 'material', name: 'Material', type: 'text' },
  { key: 'warranty_years', name: 'Warranty', type: 'integer', rules: { min: -5, max: 100 } },
  { key: 'rating', name: 'Rating', type: 'decimal' },
  { key: 'eco', name: 'Eco', type: 'boolean' },
  { key: 'launch', name: 'Launch', type: 'date' },
  { key: 'fit', name: 'Fit', type: 'select', choices: ['slim', 'regular, wide', '"loose"'] },
  { key: 'features', name: 'Features', type: 'multi_select', choices: ['waterproof', 'vegan', 'recycled|x'] },
  { key: 'supplier_note', name: 'Supplier note', type: 'text', public: false },
  { key: 'related', name: 'Related', type: 'product_reference' },
  { key: 'shade', name: 'Shade', type: 'select', owner: 'variant', choices: ['light', 'dark'] },
  { key: 'batch', name: 'Batch', type: 'integer', owner: 'variant', public: false },
]
const productAttributes = fc.record(
  {
    material: text(30),
    warranty_years: fc.integer({ min: -5, max: 100 }),
    rating: fc.integer({ min: -10_000, max: 10_000 }).map((n) => n / 100),
    eco: fc.boolean(),
    launch: fc.date({ min: new Date('1990-01-01'), max: new Date('2040-12-31'), noInvalidDate: true }).map((date) => date.toISOString().slice(0, 10)),
    fit: fc.constantFrom('slim', 'regular, wide', '"loose"'),
    features: fc.subarray(['waterproof', 'vegan', 'recycled|x']),
    supplier_note: text(30),
    /** Another product of the catalog, by its index (earlier, later or itself). */
    related: fc.nat(),
  },
  { requiredKeys: [] },
)
const variantAttributes = fc.record({ shade: fc.constantFrom('light', 'dark'), batch: fc.integer({ min: 0, max: 1_000_000 }) }, { requiredKeys: [] })

const variantArbitrary = fc.record({
  title: text(40),
  sku: fc.option(fc.stringMatching(/^[A-Za-z0-9-]{1,12}$/), { nil: null }),
  price: fc.option(minor, { nil: null }),
  compareAt: fc.option(minor, { nil: null }),
  barcode: fc.option(gtin, { nil: null }),
  options: fc.dictionary(text(10), fc.oneof(text(10), fc.constant('')), { maxKeys: 3 }).map((options) => ({ ...options })),
  attributes: variantAttributes,
  weight,
  weightUnit: unit,
  extraPrices: fc.array(extraPrice, { maxLength: 2 }),
  stock: fc.array(fc.integer({ min: 0, max: 500 }), { minLength: 3, maxLength: 3 }),
})

const productArbitrary = fc
  .record({
    title: text(60),
    description: fc.option(text(200), { nil: null }),
    sku: fc.option(fc.stringMatching(/^[A-Za-z0-9-]{1,12}$/), { nil: null }),
    currency: fc.constantFrom(...CURRENCIES),
    price: minor,
    compareAt: fc.option(minor, { nil: null }),
    weight,
    weightUnit: unit,
    status: fc.constantFrom('draft', 'active', 'archived'),
    publishedAt,
    tags,
    productType: fc.option(text(40), { nil: null }),
    vendor: fc.option(text(40), { nil: null }),
    barcode: fc.option(gtin, { nil: null }),
    length: weight,
    width: weight,
    height: weight,
    dimensionUnit: fc.constantFrom('mm', 'cm', 'm', 'in', 'ft'),
    hsCode: fc.option(fc.stringMatching(/^[0-9]{6,10}$/), { nil: null }),
    countryOfOrigin: fc.option(fc.constantFrom<string>('FR', 'US', 'JP', 'CI'), { nil: null }),
    seoTitle: fc.option(text(60), { nil: null }),
    seoDescription: fc.option(text(200), { nil: null }),
    options: optionsArbitrary,
    attributes: productAttributes,
    imageUrl: fc.option(fc.constantFrom('https://cdn.example.com/a.png', 'https://cdn.example.com/b,c.jpg?x=1&y=%222%22'), { nil: null }),
    categories: fc.subarray(['shoes', 'sale', 'new-in']),
    extraPrices: fc.array(extraPrice, { maxLength: 3 }),
    stock: fc.array(fc.integer({ min: 0, max: 500 }), { minLength: 3, maxLength: 3 }),
    variants: fc.array(variantArbitrary, { maxLength: 3 }),
  })
  // A product with options has at most a variant per combination of their values.
  .map((product) => ({ ...product, variants: product.variants.slice(0, product.options.length === 0 ? undefined : product.options.reduce((n, option) => n * option.values.length, 1)) }))

type GeneratedProduct = typeof productArbitrary extends fc.Arbitrary<infer T> ? T : never
type GeneratedVariant = GeneratedProduct['variants'][number]
type SeedPrice = [string, number] | [string, number, number | null]
/** A product to seed: the fields of the catalog before statuses, options and attributes, the others optional. */
type SeedProduct = Pick<GeneratedProduct, 'title' | 'description' | 'sku' | 'currency' | 'price' | 'weight' | 'weightUnit' | 'imageUrl' | 'categories' | 'stock'> &
  Partial<Omit<GeneratedProduct, 'extraPrices' | 'variants'>> & {
    isActive?: boolean
    extraPrices: SeedPrice[]
    variants: (Pick<GeneratedVariant, 'title' | 'sku' | 'price' | 'options' | 'weight' | 'weightUnit' | 'stock'> & Partial<Omit<GeneratedVariant, 'extraPrices'>> & { extraPrices: SeedPrice[] })[]
  }

/** A product or a variant of the catalog before statuses, options and attributes, to spread and change. */
const plainProduct = (title: string): SeedProduct => ({ title, description: null, sku: null, currency: 'USD', price: 1000, weight: null, weightUnit: 'kg', imageUrl: null, categories: [], extraPrices: [], stock: [0, 0, 0], variants: [] })
const plainVariant = (title: string): SeedProduct['variants'][number] => ({ title, sku: null, price: null, options: {}, weight: null, weightUnit: 'kg', extraPrices: [], stock: [0, 0, 0] })

const LOCATIONS = ['Warehouse, North', 'Shop "Main"']

/** What an empty shop has before a catalog import: the categories, stock locations and attribute definitions it names. */
async function prepareShop(handle: DatabaseHandle) {
  await handle.db.insert(categories).values([
    { name: 'Shoes', slug: 'shoes' },
    { name: 'Sale', slug: 'sale' },
    { name: 'New in', slug: 'new-in' },
  ])
  await handle.db.insert(stockLocations).values(LOCATIONS.map((name, index) => ({ name, priority: index + 1 })))
  await handle.db.insert(attributeDefinitions).values(ATTRIBUTES.map((definition, position) => ({ ...definition, position })))
}

/** Attribute values split as the API keeps them: public definitions' in `attributes`, the others in `staff_attributes`. */
function splitAttributes(values: Record<string, AttributeValue | undefined>) {
  const attributes: Record<string, AttributeValue> = {}
  const staffAttributes: Record<string, AttributeValue> = {}
  for (const [key, value] of Object.entries(values)) {
    if (value === undefined) continue
    const staff = ATTRIBUTES.find((definition) => definition.key === key)!.public === false
    ;(staff ? staffAttributes : attributes)[key] = value
  }
  return { attributes, staffAttributes }
}

/** Writes a generated catalog straight into the tables (not through the import under test), as the API would keep it. */
async function seedCatalog(handle: DatabaseHandle, generated: SeedProduct[]) {
  const locationRows = await handle.db.select().from(stockLocations).orderBy(asc(stockLocations.priority))
  const categoryRows = await handle.db.select().from(categories)
  const ids = generated.map(() => newId())
  await handle.db.transaction(async (tx) => {
    const levels: { product: string; variant: string | null; location: string; onHand: number }[] = []
    for (const [index, product] of generated.entries()) {
      const id = ids[index]!
      const options: OptionRecord[] = (product.options ?? []).map((option) => ({ id: newId(), name: option.name, values: option.values.map((value) => ({ id: newId(), ...value })) }))
      const combinations = optionCombinations(options)
      const { related, ...attributes } = product.attributes ?? {}
      const status = product.status ?? (product.isActive === false ? 'archived' : 'active')
      await tx.insert(products).values({
        id,
        title: product.title,
        slug: `product-${index}`,
        description: product.description,
        sku: product.sku,
        priceMinor: product.price,
        compareAtPriceMinor: product.compareAt ?? null,
        currency: product.currency,
        weight: product.weight,
        weightUnit: product.weightUnit,
        status,
        isActive: status === 'active',
        publishedAt: product.publishedAt ? sql`${product.publishedAt}::timestamptz` : null,
        tags: normalizeTags(product.tags ?? []),
        productType: product.productType ?? null,
        vendor: product.vendor ?? null,
        barcode: product.barcode ?? null,
        length: product.length ?? null,
        width: product.width ?? null,
        height: product.height ?? null,
        dimensionUnit: product.dimensionUnit ?? 'cm',
        hsCode: product.hsCode ?? null,
        countryOfOrigin: product.countryOfOrigin ?? null,
        seoTitle: product.seoTitle ?? null,
        seoDescription: product.seoDescription ?? null,
        options,
        ...splitAttributes({ ...attributes, related: related === undefined ? undefined : ids[related % ids.length] }),
        imageUrl: product.imageUrl,
        imageUrlExplicit: product.imageUrl !== null,
      })
      if (product.categories.length > 0) {
        await tx.insert(productCategories).values(product.categories.map((slug) => ({ productId: id, categoryId: categoryRows.find((row) => row.slug === slug)!.id })))
      }
      const extraValues = (productId: string, variantId: string | null, extraPrices: SeedProduct['extraPrices']) => {
        const byCurrency = new Map(extraPrices.filter(([currency]) => currency !== product.currency).map(([currency, amount, compareAt]) => [currency, [amount, compareAt ?? null] as const]))
        return [...byCurrency].map(([currency, [amount, compareAt]]) => ({ productId, variantId, currency, amountMinor: amount, compareAtAmountMinor: compareAt }))
      }
      const extra = extraValues(id, null, product.extraPrices)
      if (extra.length > 0) await tx.insert(prices).values(extra)
      if (product.variants.length === 0) product.stock.forEach((onHand, at) => levels.push({ product: id, variant: null, location: locationRows[at]!.id, onHand }))
      for (const [position, variant] of product.variants.entries()) {
        const variantId = newId()
        const choice = combinations[position]
        await tx.insert(productVariants).values({
          id: variantId,
          productId: id,
          title: variant.title,
          sku: variant.sku,
          priceMinor: variant.price,
          compareAtPriceMinor: variant.compareAt ?? null,
          barcode: variant.barcode ?? null,
          options: choice ? choice.record : variant.options,
          optionValueIds: choice ? choice.valueIds : [],
          ...splitAttributes(variant.attributes ?? {}),
          weight: variant.weight,
          weightUnit: variant.weightUnit,
        })
        const variantExtra = extraValues(id, variantId, variant.extraPrices)
        if (variantExtra.length > 0) await tx.insert(prices).values(variantExtra)
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
  return ids
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
      compareAtPriceMinor: products.compareAtPriceMinor,
      currency: products.currency,
      inventoryQuantity: products.inventoryQuantity,
      weight: products.weight,
      weightUnit: products.weightUnit,
      isActive: products.isActive,
      status: products.status,
      publishedAt: sql<string | null>`${products.publishedAt}::text`,
      tags: products.tags,
      productType: products.productType,
      vendor: products.vendor,
      barcode: products.barcode,
      length: products.length,
      width: products.width,
      height: products.height,
      dimensionUnit: products.dimensionUnit,
      hsCode: products.hsCode,
      countryOfOrigin: products.countryOfOrigin,
      seoTitle: products.seoTitle,
      seoDescription: products.seoDescription,
      options: products.options,
      attributes: products.attributes,
      staffAttributes: products.staffAttributes,
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
      compareAtPriceMinor: productVariants.compareAtPriceMinor,
      barcode: productVariants.barcode,
      inventoryQuantity: productVariants.inventoryQuantity,
      options: productVariants.options,
      optionValueIds: productVariants.optionValueIds,
      attributes: productVariants.attributes,
      staffAttributes: productVariants.staffAttributes,
      weight: productVariants.weight,
      weightUnit: productVariants.weightUnit,
    })
    .from(productVariants)
    .orderBy(asc(productVariants.id))
  const priceRows = await handle.db
    .select({
      productId: prices.productId,
      variantId: prices.variantId,
      currency: prices.currency,
      amountMinor: prices.amountMinor,
      compareAtAmountMinor: prices.compareAtAmountMinor,
      minQuantity: prices.minQuantity,
    })
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
      ['product_slug,product_compare_at_price:EUR\nx,1', "The column 'product_compare_at_price:EUR' needs the column 'product_price:EUR' beside it (a compare-at amount belongs to a price)"],
      ['product_slug,attribute:material\nx,y', "The column 'attribute:material' names no product attribute: define 'material' first (POST /attributes)"],
      ['product_slug,variant_attribute:Shade\nx,y', "The column 'variant_attribute:Shade' names no attribute: a key is lower case letters, digits and _"],
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

  it('writes the catalog model: status, compare-at prices, tags, identifiers, options and attributes, a column each', async () => {
    const handle = await freshDatabase()
    await prepareShop(handle)
    const [id] = await seedCatalog(handle, [
      {
        ...plainProduct('Tee'),
        status: 'active',
        publishedAt: '2031-05-01T09:30:00.000250Z',
        compareAt: 2500,
        tags: ['Summer', 'sale, 50%', 'back\\slash'],
        productType: 'Shirts',
        vendor: '=Acme',
        barcode: '4006381333931',
        length: 30.5,
        width: 20,
        height: null,
        dimensionUnit: 'cm',
        hsCode: '61091000',
        countryOfOrigin: 'PT',
        seoTitle: 'Tee, "cotton"',
        seoDescription: null,
        options: [{ name: 'Size', values: [{ value: 'S', swatchColor: null, swatchImageUrl: null }, { value: 'M', swatchColor: '#1e40af', swatchImageUrl: null }] }],
        attributes: { warranty_years: -2, rating: 4.5, eco: true, launch: '2026-03-01', features: ['waterproof', 'recycled|x'], supplier_note: 'ask Ana' },
        extraPrices: [['EUR', 1800, 2200]],
        variants: [
          { ...plainVariant('Small'), compareAt: 2000, barcode: '96385074', attributes: { shade: 'dark', batch: 12 }, extraPrices: [['EUR', 1700, null]] },
          { ...plainVariant('Medium'), extraPrices: [] },
        ],
      },
    ])
    const [header, small, medium] = parse(await exportText(handle, 'products'), { bom: true }) as string[][]
    const at = (row: string[], column: string) => row[header!.indexOf(column)]
    expect(header!.slice(header!.indexOf('product_categories') + 1, header!.indexOf('variant_id'))).toEqual([
      'product_status', 'product_published_at', 'product_compare_at_price', 'product_tags', 'product_type', 'product_vendor', 'product_barcode', 'product_length',
      'product_width', 'product_height', 'product_dimension_unit', 'product_hs_code', 'product_country_of_origin', 'product_seo_title', 'product_seo_description', 'product_options',
    ])
    expect(header!.filter((name) => name.includes('attribute:'))).toEqual([
      ...ATTRIBUTES.filter((definition) => definition.owner !== 'variant').map((definition) => `attribute:${definition.key}`),
      'variant_attribute:shade',
      'variant_attribute:batch',
    ])
    expect(header!.slice(header!.indexOf('product_price:EUR'), header!.indexOf('product_price:EUR') + 4)).toEqual([
      'product_price:EUR', 'variant_price:EUR', 'product_compare_at_price:EUR', 'variant_compare_at_price:EUR',
    ])
    // A scheduled product: active, not yet public.
    expect([at(small!, 'product_status'), at(small!, 'product_active'), at(small!, 'product_published_at')]).toEqual(['active', 'false', '2031-05-01T09:30:00.00025Z'])
    expect(at(small!, 'product_tags')).toBe('Summer, sale\\, 50%, back\\\\slash')
    expect(at(small!, 'product_vendor')).toBe("'=Acme")
    expect([at(small!, 'product_compare_at_price'), at(small!, 'product_length'), at(small!, 'product_width'), at(small!, 'product_height')]).toEqual(['25.00', '30.5', '20', ''])
    expect([at(small!, 'product_barcode'), at(small!, 'product_hs_code'), at(small!, 'product_country_of_origin')]).toEqual(['4006381333931', '61091000', 'PT'])
    const options = JSON.parse(at(small!, 'product_options')!) as { id: string; name: string; values: { id: string; value: string; swatch_color?: string }[] }[]
    expect(options.map((option) => [option.name, option.values.map((value) => [value.value, value.swatch_color ?? null])])).toEqual([['Size', [['S', null], ['M', '#1e40af']]]])
    const [stored] = await handle.db.select({ options: products.options }).from(products).where(eq(products.id, id!))
    expect(options[0]!.values.map((value) => value.id)).toEqual(stored!.options[0]!.values.map((value) => value.id))
    expect([at(small!, 'variant_options'), at(medium!, 'variant_options')]).toEqual(['{"Size":"S"}', '{"Size":"M"}'])
    expect([at(small!, 'variant_compare_at_price'), at(small!, 'variant_barcode'), at(medium!, 'variant_compare_at_price')]).toEqual(['20.00', '96385074', ''])
    // Attributes as text: numbers (a negative one guarded), booleans, dates, multi-selects as JSON; staff-only ones too.
    expect(['warranty_years', 'rating', 'eco', 'launch', 'features', 'supplier_note', 'fit'].map((key) => at(small!, `attribute:${key}`))).toEqual([
      "'-2", '4.5', 'true', '2026-03-01', '["waterproof","recycled|x"]', 'ask Ana', '',
    ])
    expect([at(small!, 'variant_attribute:shade'), at(small!, 'variant_attribute:batch'), at(medium!, 'variant_attribute:shade')]).toEqual(['dark', '12', ''])
    expect([at(small!, 'product_price:EUR'), at(small!, 'product_compare_at_price:EUR'), at(small!, 'variant_price:EUR'), at(small!, 'variant_compare_at_price:EUR')]).toEqual([
      '18.00', '22.00', '17.00', '',
    ])
  })

  it('refuses every new cell the API would refuse, naming the column, and takes the rest as the API keeps it', async () => {
    const handle = await freshDatabase()
    await prepareShop(handle)
    const [other] = await seedCatalog(handle, [plainProduct('Other')])
    const header = [
      'product_slug', 'product_title', 'product_status', 'product_active', 'product_published_at', 'product_compare_at_price', 'product_tags', 'product_barcode',
      'product_length', 'product_dimension_unit', 'product_hs_code', 'product_country_of_origin', 'product_seo_title', 'product_options', 'attribute:warranty_years',
      'attribute:fit', 'attribute:features', 'attribute:launch', 'attribute:related', 'attribute:supplier_note', 'variant_title', 'variant_barcode', 'variant_options',
      'variant_attribute:shade', 'product_price:EUR', 'product_compare_at_price:EUR',
    ]
    const product = (slug: string, cells: Record<string, string> = {}) => ({ product_slug: slug, product_title: slug, ...cells })
    const variant = (slug: string, cells: Record<string, string>) => ({ product_slug: slug, ...cells })
    const TEE_OPTIONS = '[{"name": "Size", "values": ["S", {"value": "M", "swatch_color": "#1e40af"}]}, {"name": "Colour", "values": ["Red"]}]'
    const rows = [
      product('bad-status', { product_status: 'live' }),
      product('disagree', { product_status: 'archived', product_active: 'true' }),
      product('bad-moment', { product_published_at: 'tomorrow' }),
      product('bad-compare', { product_compare_at_price: '1.234' }),
      product('long-tag', { product_tags: `ok, ${'x'.repeat(101)}` }),
      product('bad-barcode', { product_barcode: '4006381333932' }),
      product('too-long', { product_length: '1000001' }),
      product('bad-unit', { product_dimension_unit: 'yd' }),
      product('bad-hs', { product_hs_code: '12345' }),
      product('bad-country', { product_country_of_origin: 'fr' }),
      product('long-seo', { product_seo_title: 'x'.repeat(256) }),
      product('twice', { product_options: '[{"name": "Size", "values": ["S", "s"]}]' }),
      product('not-json', { product_options: 'Size: S, M' }),
      product('bad-int', { 'attribute:warranty_years': '2.5' }),
      product('not-number', { 'attribute:warranty_years': 'two' }),
      product('bad-select', { 'attribute:fit': 'baggy' }),
      product('bad-multi', { 'attribute:features': 'vegan' }),
      product('bad-date', { 'attribute:launch': '2024-02-30' }),
      product('no-product', { 'attribute:related': '0190a000-0000-7000-8000-000000000000' }),
      product('compare-alone', { 'product_price:EUR': '', 'product_compare_at_price:EUR': '5.00' }),
      product('tee', { product_options: TEE_OPTIONS, variant_title: 'A', variant_options: '{"Size": "S", "Colour": "Red"}' }),
      variant('tee', { variant_title: 'B', variant_options: '{"size": "s", "colour": "RED"}' }),
      variant('tee', { variant_title: 'C', variant_options: '{"Size": "XL", "Colour": "Red"}' }),
      variant('tee', { variant_title: 'D', variant_options: '{"Size": "M"}' }),
      variant('tee', { variant_title: 'E', variant_barcode: '123' }),
      variant('tee', { variant_title: 'F', variant_options: '{"Size": "M", "Colour": "Red"}', 'variant_attribute:shade': 'medium' }),
      product('good', {
        product_status: 'active',
        product_active: 'false',
        product_published_at: '2999-01-01T00:00:00+01:00',
        product_compare_at_price: '25.00',
        product_tags: ' Summer, sale\\, 50%, summer , ',
        product_barcode: '4006381333931',
        product_length: '12.5',
        product_dimension_unit: 'in',
        product_hs_code: '6109.10.00',
        product_country_of_origin: 'FR',
        product_options: TEE_OPTIONS,
        'attribute:warranty_years': '3',
        'attribute:features': '["vegan", "waterproof", "vegan"]',
        'attribute:related': other!,
        'attribute:supplier_note': 'staff only',
        'product_price:EUR': '18.00',
        'product_compare_at_price:EUR': '21.00',
        variant_title: 'Small red',
        variant_options: '{"size": "s", "colour": "red"}',
        'variant_attribute:shade': 'dark',
      }),
      variant('good', { variant_title: 'Medium red', variant_options: '{"Size": "M", "Colour": "Red"}' }),
    ]
    const csv = stringify([header, ...rows.map((row) => header.map((column) => (row as Record<string, string>)[column] ?? ''))])
    const result = await importText(handle, 'products', csv, { batchRows: 50 })
    expect(result.status).toBe('completed')
    const reasons = Object.fromEntries(result.report.map((row) => [`${row.key} ${row.row}`, row.reason]))
    const reason = (slug: string) => result.report.find((row) => row.key === slug)!.reason
    expect(reason('bad-status')).toBe("product_status: 'live' is not one of draft, active, archived")
    expect(reason('disagree')).toBe(
      "product_active: 'true' disagrees with product_status 'archived' (true is an active product whose product_published_at has come): leave product_active empty to go by product_status",
    )
    expect(reason('bad-moment')).toBe('product_published_at: must match format "date-time"')
    expect(reason('bad-compare')).toBe('product_compare_at_price: USD amounts have at most 2 decimal places (an amount in major units, such as 19.99)')
    expect(reason('long-tag')).toMatch(/^product_tags\/1: must not have more than 100 characters/)
    expect(reason('bad-barcode')).toBe("product_barcode: '4006381333932' is not a GTIN-8, -12, -13 or -14 with a valid check digit")
    expect(reason('too-long')).toBe('product_length: must be at most 1000000')
    expect(reason('bad-unit')).toBe("product_dimension_unit: 'yd' is not one of mm, cm, m, in, ft")
    expect(reason('bad-hs')).toBe("product_hs_code: '12345' is not an HS code of 6 to 10 digits")
    expect(reason('bad-country')).toBe("product_country_of_origin: 'fr' is not an ISO 3166-1 alpha-2 country code (such as FR or US)")
    expect(reason('long-seo')).toMatch(/^product_seo_title: must not have more than 255 characters/)
    expect(reason('twice')).toBe("product_options: Field 'options[0].values[1].value': Value 's' of option 'Size' is given twice")
    expect(reason('not-json')).toBe('product_options: not JSON: write the options as [{"name": "Size", "values": ["S", "M"]}]')
    expect(reason('bad-int')).toBe('attribute:warranty_years: must be an integer')
    expect(reason('not-number')).toBe("attribute:warranty_years: 'two' is not a number")
    expect(reason('bad-select')).toBe('attribute:fit: must be one of slim, regular, wide, "loose"')
    expect(reason('bad-multi')).toBe('attribute:features: not JSON: write the values as ["red", "blue"]')
    expect(reason('bad-date')).toBe('attribute:launch: must be a date, YYYY-MM-DD')
    expect(reason('no-product')).toBe('attribute:related: names no product: 0190a000-0000-7000-8000-000000000000 (neither in the shop nor in the file)')
    expect(reason('compare-alone')).toBe('product_compare_at_price:EUR: a compare-at amount needs its price (product_price:EUR)')
    const tee = result.report.filter((row) => row.key === 'tee').map((row) => reasons[`tee ${row.row}`])
    expect(tee).toEqual([
      'another row of this product was refused (row 23)',
      'variant_options: the variant on row 22 of this product has the same option values (Size: S, Colour: Red)',
      "variant_options.Size: 'XL' is not a value of option 'Size' (S, M)",
      "variant_options.Colour: Choose a value of option 'Colour' (Red)",
      // An empty variant_options cell picks nothing.
      "variant_barcode: '123' is not a GTIN-8, -12, -13 or -14 with a valid check digit; " +
        "variant_options.Size: Choose a value of option 'Size' (S, M); variant_options.Colour: Choose a value of option 'Colour' (Red)",
      'variant_attribute:shade: must be one of light, dark',
    ])
    expect(result.report.filter((row) => row.action !== 'refuse').map((row) => [row.key, row.action])).toEqual([
      ['good', 'create'],
      ['good', 'create'],
    ])

    const [good] = await handle.db.select().from(products).where(eq(products.slug, 'good'))
    expect(good).toMatchObject({
      status: 'active',
      isActive: false,
      publishedAt: new Date('2998-12-31T23:00:00Z'),
      compareAtPriceMinor: 2500,
      tags: ['Summer', 'sale, 50%'],
      barcode: '4006381333931',
      length: 12.5,
      dimensionUnit: 'in',
      hsCode: '61091000',
      countryOfOrigin: 'FR',
      attributes: { warranty_years: 3, features: ['waterproof', 'vegan'], related: other },
      staffAttributes: { supplier_note: 'staff only' },
    })
    expect(good!.options.map((option) => [option.name, option.values.map((value) => [value.value, value.swatchColor])])).toEqual([
      ['Size', [['S', null], ['M', '#1e40af']]],
      ['Colour', [['Red', null]]],
    ])
    const goodVariants = await handle.db.select().from(productVariants).where(eq(productVariants.productId, good!.id)).orderBy(asc(productVariants.id))
    const [size, colour] = good!.options
    expect(goodVariants.map((row) => [row.title, row.options, row.optionValueIds, row.attributes])).toEqual([
      ['Small red', { Size: 'S', Colour: 'Red' }, [size!.values[0]!.id, colour!.values[0]!.id].sort(), { shade: 'dark' }],
      ['Medium red', { Size: 'M', Colour: 'Red' }, [size!.values[1]!.id, colour!.values[0]!.id].sort(), {}],
    ])
    const [eur] = await handle.db.select().from(prices).where(and(eq(prices.productId, good!.id), eq(prices.currency, 'EUR')))
    expect([eur!.amountMinor, eur!.compareAtAmountMinor]).toEqual([1800, 2100])
  })

  it('moves the variants the file leaves alone with the options it changes, lets rows swap values, and refuses a value another variant has', async () => {
    const handle = await freshDatabase()
    await prepareShop(handle)
    const [legacy, sized] = await seedCatalog(handle, [
      { ...plainProduct('Legacy'), variants: [{ ...plainVariant('Small'), options: { size: 's' } }, { ...plainVariant('Medium'), options: { Size: 'M' } }] },
      {
        ...plainProduct('Sized'),
        options: [{ name: 'Size', values: ['S', 'M', 'L'].map((value) => ({ value, swatchColor: null, swatchImageUrl: null })) }],
        variants: ['S', 'M', 'L'].map((title) => ({ ...plainVariant(title), sku: `SZ-${title}` })),
      },
    ])
    const variantsOf = async (productId: string) =>
      (await handle.db.select().from(productVariants).where(eq(productVariants.productId, productId)).orderBy(asc(productVariants.id))).map((row) => [
        row.title,
        row.options,
        row.optionValueIds.length,
      ])
    const [sizedRow] = await handle.db.select({ options: products.options }).from(products).where(eq(products.id, sized!))
    const [s, m, l] = sizedRow!.options[0]!.values.map((value) => ({ id: value.id, value: value.value }))
    const options = (values: { id?: string; value: string }[]) => `"${JSON.stringify([{ name: 'Size', values }]).replace(/"/g, '""')}"`

    // Options for a product whose variants were free-form: each takes the value its options named.
    // A value renamed by its id: the variants that chose it show the new text, though the file names none of them.
    const first = await importText(
      handle,
      'products',
      [
        'product_id,product_options,variant_sku,variant_options',
        `${legacy},${options([{ value: 'S' }, { value: 'M' }, { value: 'L' }])},,`,
        `${sized},${options([s!, { id: m!.id, value: 'Medium' }, l!])},,`,
      ].join('\n'),
    )
    expect(first.report.map((row) => [row.action, row.reason])).toEqual([
      ['update', null],
      ['update', null],
    ])
    expect(await variantsOf(legacy!)).toEqual([
      ['Small', { Size: 'S' }, 1],
      ['Medium', { Size: 'M' }, 1],
    ])
    expect(await variantsOf(sized!)).toEqual([
      ['S', { Size: 'S' }, 1],
      ['M', { Size: 'Medium' }, 1],
      ['L', { Size: 'L' }, 1],
    ])

    // Two rows swap their values (the unique index sees no clash on the way); a new variant may not take a value another variant keeps.
    const second = await importText(
      handle,
      'products',
      ['product_id,variant_sku,variant_title,variant_options', `${sized},SZ-S,S,"{""Size"": ""L""}"`, `${sized},SZ-L,L,"{""Size"": ""S""}"`].join('\n'),
    )
    expect(second.report.map((row) => row.action)).toEqual(['update', 'update'])
    expect(await variantsOf(sized!)).toEqual([
      ['S', { Size: 'L' }, 1],
      ['M', { Size: 'Medium' }, 1],
      ['L', { Size: 'S' }, 1],
    ])
    const taken = await importText(handle, 'products', ['product_id,variant_sku,variant_title,variant_options', `${sized},SZ-XL,XL,"{""Size"": ""medium""}"`].join('\n'))
    const [medium] = await handle.db.select({ id: productVariants.id }).from(productVariants).where(eq(productVariants.sku, 'SZ-M'))
    expect(taken.report.map((row) => row.reason)).toEqual([`variant_options: variant 'M' (${medium!.id}) of this product has the same option values (Size: Medium)`])
    const unpicked = await importText(handle, 'products', ['product_id,variant_sku,variant_title', `${sized},SZ-XL,XL`].join('\n'))
    expect(unpicked.report.map((row) => row.reason)).toEqual(['variant_options: the product has options (Size): pick a value of each, as {"Size":"S"}'])
    // A value still chosen cannot go (409 through the API).
    const removed = await importText(handle, 'products', ['product_id,product_options', `${sized},${options([s!, l!])}`].join('\n'))
    expect(removed.report[0]!.reason).toMatch(/^product_options: Values still chosen by variants cannot be removed: 'Medium' of option 'Size'/)
  })

  it('changes the attributes it has columns for, public and staff-only, and leaves the others', async () => {
    const handle = await freshDatabase()
    await prepareShop(handle)
    const [id] = await seedCatalog(handle, [
      { ...plainProduct('Boot'), attributes: { material: 'leather', eco: false, supplier_note: 'old' }, variants: [{ ...plainVariant('One'), sku: 'B-1', attributes: { shade: 'dark', batch: 4 } }] },
    ])
    const result = await importText(
      handle,
      'products',
      ['product_slug,attribute:eco,attribute:supplier_note,attribute:rating,variant_sku,variant_attribute:batch', 'product-0,yes,,1e2,B-1,'].join('\n'),
    )
    expect(result.report.map((row) => [row.action, row.reason])).toEqual([['update', null]])
    const [boot] = await handle.db.select().from(products).where(eq(products.id, id!))
    expect([boot!.attributes, boot!.staffAttributes]).toEqual([{ material: 'leather', eco: true, rating: 100 }, {}])
    const [one] = await handle.db.select().from(productVariants).where(eq(productVariants.productId, id!))
    expect([one!.attributes, one!.staffAttributes]).toEqual([{ shade: 'dark' }, {}])
  })

  it('takes product_active alone as the API takes is_active, and a status with its publication moment', async () => {
    const handle = await freshDatabase()
    await prepareShop(handle)
    await seedCatalog(handle, [plainProduct('A'), plainProduct('B'), { ...plainProduct('C'), status: 'draft' }])
    const statusOf = async () =>
      (await handle.db.select({ slug: products.slug, status: products.status, isActive: products.isActive }).from(products).orderBy(asc(products.slug))).map((row) => [
        row.slug,
        row.status,
        row.isActive,
      ])
    await importText(handle, 'products', 'product_slug,product_active\nproduct-0,false\nproduct-2,true')
    expect(await statusOf()).toEqual([
      ['product-0', 'archived', false],
      ['product-1', 'active', true],
      ['product-2', 'active', true],
    ])
    const scheduled = await importText(
      handle,
      'products',
      ['product_slug,product_status,product_published_at', 'product-0,active,2999-01-01T00:00:00Z', 'product-1,draft,'].join('\n'),
    )
    expect(scheduled.report.map((row) => row.action)).toEqual(['update', 'update'])
    expect(await statusOf()).toEqual([
      ['product-0', 'active', false],
      ['product-1', 'draft', false],
      ['product-2', 'active', true],
    ])
    const refused = await importText(handle, 'products', 'product_slug,product_active,product_published_at\nproduct-2,true,2999-01-01T00:00:00Z')
    expect(refused.report[0]!.reason).toBe('product_active: true is public now, but product_published_at is later: give product_status active to schedule the product')
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
      // Published when each run made them.
      products: catalog.productRows.map(({ id: _id, publishedAt: _published, ...rest }) => rest),
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
