/**
 * Importing products (docs/csv.md). A product is its consecutive rows, named by `product_id` or
 * else `product_slug`; its product columns come from its first row (later rows may leave them
 * empty, and must agree where they do not). A row with variant cells is a variant, found by
 * `variant_id`, else by SKU, else by title within the product. A product is written whole or not
 * at all: one refused row refuses its product's every row. Columns the file does not have are left
 * as they are; an empty cell clears a field that may be empty (description, SKU, a price in
 * another currency) and gives the default to one that may not (weight unit, active).
 */
import { CreateProduct, CreateVariant, isCurrency, isUuid, WEIGHT_UNITS, type WeightUnit } from '@commerce/domain'
import {
  applyStockMoves,
  ensureLevels,
  lockStockItems,
  newId,
  productSnapshot,
  readProductDetails,
  readProductMatches,
  sqlOf,
  writeEvents,
  writeProducts,
  type Executor,
  type ImportReportRow,
  type PriceWrite,
  type ProductFields,
  type ProductMatches,
  type ProductWrite,
  type StockLocationColumn,
  type StockMove,
  type VariantFields,
} from '@commerce/db'
import { CellProblem, checked, readBoolean, readDecimal, readInteger, readList, readMoney, readText } from './cells.js'
import { PRODUCT_COLUMNS, productPriceColumn, variantPriceColumn } from './columns.js'
import { HeaderProblem, type RowHandler } from './import.js'

interface Row {
  row: number
  cells: string[]
  misaligned?: string | undefined
}

interface ProductGroup {
  key: string
  rows: Row[]
  /** Set when the key was seen before, earlier in the file. */
  repeatOf?: number
}

type Column = (typeof PRODUCT_COLUMNS)[number]

const PRODUCT_FIELDS: [Column, keyof ProductFields][] = [
  ['product_title', 'title'],
  ['product_slug', 'slug'],
  ['product_description', 'description'],
  ['product_sku', 'sku'],
  ['product_price', 'priceMinor'],
  ['product_currency', 'currency'],
  ['product_weight', 'weight'],
  ['product_weight_unit', 'weightUnit'],
  ['product_active', 'isActive'],
  ['product_image_url', 'imageUrl'],
]
const VARIANT_FIELDS: [Column, keyof VariantFields][] = [
  ['variant_title', 'title'],
  ['variant_sku', 'sku'],
  ['variant_price', 'priceMinor'],
  ['variant_options', 'options'],
  ['variant_weight', 'weight'],
  ['variant_weight_unit', 'weightUnit'],
]
const VARIANT_CELLS: Column[] = ['variant_id', ...VARIANT_FIELDS.map(([column]) => column)]

export interface ProductImportContext {
  importId: string
  actor: string | null
  locations: StockLocationColumn[]
}

/** The handler of a products file with this header, or a HeaderProblem naming what is wrong with it. */
export function productImport(header: string[], context: ProductImportContext): RowHandler<ProductGroup> {
  const index = new Map<string, number>()
  const unknown: string[] = []
  const currencies: string[] = []
  const stock: { column: string; locationId: string }[] = []
  const locations = new Map(context.locations.map((location) => [location.name.toLowerCase(), location.id]))
  header.forEach((name, position) => {
    if (index.has(name)) throw new HeaderProblem(`The column '${name}' appears twice in the header`)
    index.set(name, position)
    const [prefix, rest] = [name.slice(0, name.indexOf(':')), name.slice(name.indexOf(':') + 1)]
    if ((PRODUCT_COLUMNS as readonly string[]).includes(name)) return
    if ((prefix === 'product_price' || prefix === 'variant_price') && name.includes(':')) {
      if (!isCurrency(rest)) throw new HeaderProblem(`The column '${name}' names no known ISO 4217 currency`)
      if (!currencies.includes(rest)) currencies.push(rest)
      return
    }
    if (prefix === 'stock' && name.includes(':')) {
      const locationId = locations.get(rest.toLowerCase())
      if (!locationId) throw new HeaderProblem(`The column '${name}' names no stock location: create '${rest}' first (POST /stock-locations)`)
      stock.push({ column: name, locationId })
      return
    }
    unknown.push(name)
  })
  if (unknown.length > 0) throw new HeaderProblem(`Unknown columns: ${unknown.map((name) => `'${name}'`).join(', ')} (docs/csv.md lists them)`)
  if (!index.has('product_id') && !index.has('product_slug')) throw new HeaderProblem('The header needs product_id or product_slug, to know which product each row is')

  const has = (column: string) => index.has(column)
  const cell = (cells: string[], column: string): string | undefined => {
    const position = index.get(column)
    // A short row's missing cells read as empty (the row is refused as misaligned anyway).
    return position === undefined ? undefined : (cells[position] ?? '')
  }
  const productPresent = PRODUCT_FIELDS.filter(([column]) => has(column)).map(([, field]) => field)
  const variantPresent = VARIANT_FIELDS.filter(([column]) => has(column)).map(([, field]) => field)
  const keyOf = (cells: string[], row: number) => {
    const id = cell(cells, 'product_id')?.trim().toLowerCase()
    if (id) return `id:${id}`
    const slug = cell(cells, 'product_slug')?.trim()
    return slug ? `slug:${slug}` : `row:${row}`
  }

  const defaultLocation = context.locations.find((location) => location.isDefault)?.id
  const seen = new Map<string, number>()
  let open: ProductGroup | undefined

  return {
    take(row, cells, misaligned) {
      const key = keyOf(cells, row)
      if (open?.key === key) {
        open.rows.push({ row, cells, misaligned })
        return []
      }
      const done = open ? [open] : []
      const first = seen.get(key)
      open = { key, rows: [{ row, cells, misaligned }], ...(first !== undefined && { repeatOf: first }) }
      if (first === undefined) seen.set(key, row)
      return done
    },

    finish() {
      const done = open ? [open] : []
      open = undefined
      return done
    },

    rowCount: (group) => group.rows.length,

    async apply(tx, groups, dryRun) {
      const sql = sqlOf(tx)
      const names = { productIds: new Set<string>(), slugs: new Set<string>(), variantIds: new Set<string>(), categorySlugs: new Set<string>() }
      for (const group of groups) {
        const first = group.rows[0]!.cells
        const id = cell(first, 'product_id')?.trim().toLowerCase()
        const slug = cell(first, 'product_slug')?.trim()
        if (id && isUuid(id)) names.productIds.add(id)
        if (slug) names.slugs.add(slug)
        for (const category of readList(cell(first, 'product_categories') ?? '')) names.categorySlugs.add(category)
        for (const { cells } of group.rows) {
          const variantId = cell(cells, 'variant_id')?.trim().toLowerCase()
          if (variantId && isUuid(variantId)) names.variantIds.add(variantId)
        }
      }
      const matches = await readProductMatches(sql, {
        productIds: [...names.productIds],
        slugs: [...names.slugs],
        variantIds: [...names.variantIds],
        categorySlugs: [...names.categorySlugs],
      })
      const decided = decide(groups, matches)
      if (!dryRun) await write(tx, decided)
      return decided.report
    },
  }

  interface Decided {
    products: ProductWrite[]
    prices: PriceWrite[]
    stock: { product: string; variant: string | null; location: string; onHand: number }[]
    report: ImportReportRow[]
  }

  function decide(groups: ProductGroup[], matches: ProductMatches): Decided {
    const decided: Decided = { products: [], prices: [], stock: [], report: [] }
    const slugsInBatch = new Map<string, string>()
    for (const group of groups) {
      const problems = new Map<number, string[]>()
      const refuse = (row: number, problem: string) => problems.set(row, [...(problems.get(row) ?? []), problem])
      const attempt = <T>(row: number, read: () => T): T | undefined => {
        try {
          return read()
        } catch (error) {
          if (error instanceof CellProblem) {
            refuse(row, error.message)
            return undefined
          }
          throw error
        }
      }
      const firstRow = group.rows[0]!
      const first = firstRow.cells
      for (const { row, misaligned } of group.rows) if (misaligned) refuse(row, misaligned)
      if (group.repeatOf !== undefined) refuse(firstRow.row, `the rows of a product must follow each other: this product's rows began at row ${group.repeatOf}`)
      if (group.key.startsWith('row:')) refuse(firstRow.row, 'a row needs a product_id or a product_slug')

      // Later rows repeat the product's cells or leave them empty.
      for (const { row, cells } of group.rows.slice(1)) {
        for (const column of [...PRODUCT_COLUMNS.filter((name) => name.startsWith('product_')), ...currencies.map(productPriceColumn)]) {
          const value = cell(cells, column)
          if (value && value !== cell(first, column)) refuse(row, `${column} differs from the product's first row (row ${firstRow.row})`)
        }
      }

      const id = cell(first, 'product_id')?.trim().toLowerCase() || undefined
      const slugCell = cell(first, 'product_slug')?.trim() || undefined
      if (id && !isUuid(id)) refuse(firstRow.row, `product_id: '${id}' is not a UUID`)
      const bySlug = slugCell ? matches.products.find((product) => product.slug === slugCell) : undefined
      const existing = id ? matches.products.find((product) => product.id === id) : bySlug
      if (slugCell && bySlug && bySlug.id !== (existing?.id ?? id)) refuse(firstRow.row, `product_slug: '${slugCell}' is the slug of another product (${bySlug.id})`)
      const productId = existing?.id ?? id ?? newId()
      if (slugCell) {
        const other = slugsInBatch.get(slugCell)
        if (other !== undefined && other !== productId) refuse(firstRow.row, `product_slug: '${slugCell}' is also the slug of another product in this file`)
        slugsInBatch.set(slugCell, productId)
      }
      const create = !existing

      // The product's fields, from its first row.
      const fields: Partial<ProductFields> = {}
      const at = (column: Column) => cell(first, column)
      const currencyCell = at('product_currency')?.trim()
      const currency = existing?.currency ?? (currencyCell || 'USD')
      if (currencyCell !== undefined) {
        if (!isCurrency(currencyCell || currency)) refuse(firstRow.row, `product_currency: '${currencyCell}' is not a known ISO 4217 currency`)
        else if (existing && currencyCell && currencyCell !== existing.currency) {
          refuse(firstRow.row, `product_currency: the product's currency is ${existing.currency}; change it through PATCH /products/{id}, which converts its variants' prices`)
        } else fields.currency = currency
      } else if (create) fields.currency = currency
      const read = <K extends keyof ProductFields>(column: Column, field: K, value: (cell: string) => ProductFields[K], fallback: ProductFields[K] | undefined) => {
        const text = at(column)
        if (text === undefined) {
          if (create && fallback !== undefined) fields[field] = fallback
          return
        }
        const result = attempt(firstRow.row, () => value(text))
        if (result !== undefined) fields[field] = result
      }
      const required = (column: Column, text: string) => {
        const value = readText(text)
        if (value === null) throw new CellProblem(`${column}: required`)
        return value
      }
      read('product_title', 'title', (text) => checked('product_title', CreateProduct.properties.title, required('product_title', text)), undefined)
      if (create && fields.title === undefined && !problems.size) refuse(firstRow.row, 'product_title: required for a new product')
      if (slugCell !== undefined) fields.slug = attempt(firstRow.row, () => checked('product_slug', CreateProduct.properties.slug, slugCell))
      else if (create && !group.key.startsWith('row:')) refuse(firstRow.row, 'product_slug: required for a new product')
      read('product_description', 'description', (text) => checked('product_description', CreateProduct.properties.description, readText(text)), null)
      read('product_sku', 'sku', (text) => checked('product_sku', CreateProduct.properties.sku, readText(text)), null)
      read('product_price', 'priceMinor', (text) => readMoney('product_price', required('product_price', text), currency), 0)
      read('product_weight', 'weight', (text) => (text.trim() === '' ? null : readDecimal('product_weight', text)), null)
      read('product_weight_unit', 'weightUnit', (text) => weightUnit('product_weight_unit', text), 'kg')
      read('product_active', 'isActive', (text) => (text.trim() === '' ? true : readBoolean('product_active', text)), true)
      read('product_image_url', 'imageUrl', (text) => checked('product_image_url', CreateProduct.properties.image_url, readText(text)), null)
      if (create && fields.currency === undefined) fields.currency = currency

      let categoryIds: string[] | undefined
      const categoriesCell = at('product_categories')
      if (categoriesCell !== undefined) {
        categoryIds = []
        for (const slug of readList(categoriesCell)) {
          const category = matches.categories.find((candidate) => candidate.slug === slug)
          if (category) categoryIds.push(category.id)
          else refuse(firstRow.row, `product_categories: no category has the slug '${slug}' (create it first)`)
        }
      }

      const prices: PriceWrite[] = []
      const priceOf = (column: string, text: string | undefined, cellCurrency: string, variantId: string | null, row: number) => {
        if (text === undefined) return
        if (cellCurrency === currency) {
          if (text.trim() !== '') refuse(row, `${column}: ${currency} is the product's own currency: its price is product_price (or variant_price)`)
          return
        }
        const amountMinor = text.trim() === '' ? null : attempt(row, () => readMoney(column, text, cellCurrency))
        if (amountMinor !== undefined) prices.push({ id: newId(), productId, variantId, currency: cellCurrency, amountMinor })
      }
      for (const code of currencies) priceOf(productPriceColumn(code), cell(first, productPriceColumn(code)), code, null, firstRow.row)

      // The variants, one per row with variant cells.
      const variants: ProductWrite['variants'] = []
      const stockTargets: Decided['stock'] = []
      const rowCreates = new Map<number, boolean>()
      const existingVariants = existing?.variants ?? []
      const variantsInGroup = new Map<string, number>()
      for (const { row, cells } of group.rows) {
        const stockOf = (variant: string | null) => {
          for (const { column, locationId } of stock) {
            const text = cell(cells, column)!
            if (text.trim() === '') continue
            const onHand = attempt(row, () => readInteger(column, text))
            if (onHand !== undefined) stockTargets.push({ product: productId, variant, location: locationId, onHand })
          }
        }
        if (!VARIANT_CELLS.some((column) => (cell(cells, column) ?? '').trim() !== '')) {
          rowCreates.set(row, create)
          stockOf(null)
          continue
        }
        const variantIdCell = cell(cells, 'variant_id')?.trim().toLowerCase() || undefined
        const sku = readText(cell(cells, 'variant_sku') ?? '')
        const title = readText(cell(cells, 'variant_title') ?? '')
        let variantId: string
        let createVariant: boolean
        if (variantIdCell) {
          if (!isUuid(variantIdCell)) refuse(row, `variant_id: '${variantIdCell}' is not a UUID`)
          const owner = matches.variants.find((variant) => variant.id === variantIdCell)
          if (owner && owner.productId !== productId) refuse(row, `variant_id: the variant belongs to another product (${owner.productId})`)
          variantId = variantIdCell
          createVariant = !owner
        } else {
          const match = sku !== null ? existingVariants.find((variant) => variant.sku === sku) : existingVariants.find((variant) => variant.title === title)
          variantId = match?.id ?? newId()
          createVariant = !match
        }
        const earlier = variantsInGroup.get(variantId)
        if (earlier !== undefined) refuse(row, `the variant is also on row ${earlier}`)
        variantsInGroup.set(variantId, row)
        const variantFields: Partial<VariantFields> = {}
        const readVariant = <K extends keyof VariantFields>(column: Column, field: K, value: (cell: string) => VariantFields[K], fallback: VariantFields[K] | undefined) => {
          const text = cell(cells, column)
          if (text === undefined) {
            if (createVariant && fallback !== undefined) variantFields[field] = fallback
            return
          }
          const result = attempt(row, () => value(text))
          if (result !== undefined) variantFields[field] = result
        }
        readVariant('variant_title', 'title', (text) => checked('variant_title', CreateVariant.properties.title, required('variant_title', text)), undefined)
        if (createVariant && variantFields.title === undefined && !problems.has(row)) refuse(row, 'variant_title: required for a new variant')
        readVariant('variant_sku', 'sku', (text) => checked('variant_sku', CreateVariant.properties.sku, readText(text)), null)
        readVariant('variant_price', 'priceMinor', (text) => (text.trim() === '' ? null : readMoney('variant_price', text, currency)), null)
        readVariant('variant_options', 'options', (text) => options(text), {})
        readVariant('variant_weight', 'weight', (text) => (text.trim() === '' ? null : readDecimal('variant_weight', text)), null)
        readVariant('variant_weight_unit', 'weightUnit', (text) => weightUnit('variant_weight_unit', text), fields.weightUnit ?? 'kg')
        for (const code of currencies) priceOf(variantPriceColumn(code), cell(cells, variantPriceColumn(code)), code, variantId, row)
        variants.push({ id: variantId, create: createVariant, fields: variantFields })
        rowCreates.set(row, create || createVariant)
        stockOf(variantId)
      }

      const firstProblem = [...problems.keys()][0]
      for (const { row } of group.rows) {
        const key = slugCell ?? id ?? null
        if (firstProblem !== undefined) {
          const reason = problems.get(row)?.join('; ') ?? `another row of this product was refused (row ${firstProblem})`
          decided.report.push({ row, action: 'refuse', resourceId: existing?.id ?? null, key, reason })
        } else decided.report.push({ row, action: rowCreates.get(row) ? 'create' : 'update', resourceId: productId, key, reason: null })
      }
      if (firstProblem !== undefined) continue
      // A new item's units at the default location are its level's first ones (no move needed).
      let initialStock: number | undefined
      const moves = stockTargets.filter((target) => {
        if (target.location !== defaultLocation) return true
        const variant = target.variant === null ? undefined : variants.find((candidate) => candidate.id === target.variant)
        if (target.variant === null ? create : variant?.create) {
          if (variant) variant.initialStock = target.onHand
          else initialStock = target.onHand
          return false
        }
        return true
      })
      decided.products.push({ id: productId, create, fields, categoryIds, variants, initialStock })
      decided.prices.push(...prices)
      decided.stock.push(...moves)
    }
    return decided
  }

  async function write(tx: Executor, decided: Decided) {
    if (decided.products.length === 0) return
    const sql = sqlOf(tx)
    await writeProducts(sql, { products: decided.products, prices: decided.prices, present: { product: productPresent, variant: variantPresent } })
    if (decided.stock.length > 0) {
      await ensureLevels(sql, decided.stock)
      const { levels } = await lockStockItems(sql, {
        products: [...new Set(decided.stock.filter((target) => !target.variant).map((target) => target.product))],
        variants: [...new Set(decided.stock.flatMap((target) => (target.variant ? [target.variant] : [])))],
      })
      const moves: StockMove[] = []
      for (const target of decided.stock) {
        const level = levels.find((candidate) => candidate.itemId === (target.variant ?? target.product) && candidate.locationId === target.location)!
        const change = target.onHand - level.onHand
        if (change !== 0) moves.push({ item: level.itemId, location: target.location, on_hand: change, reason: 'import', note: `CSV import ${context.importId}`, reference_id: context.importId, actor: context.actor })
      }
      await applyStockMoves(sql, moves)
    }
    const created = new Set(decided.products.filter((product) => product.create).map((product) => product.id))
    const rows = await readProductDetails(tx, decided.products.map((product) => product.id))
    await writeEvents(
      tx,
      rows.map((row) => ({ kind: created.has(row.id) ? 'product.created' : 'product.updated', resourceId: row.id, data: productSnapshot(row), actor: context.actor })),
    )
  }
}

function weightUnit(column: string, text: string): WeightUnit {
  const value = text.trim() || 'kg'
  if (!(WEIGHT_UNITS as readonly string[]).includes(value)) throw new CellProblem(`${column}: '${text}' is not one of ${WEIGHT_UNITS.join(', ')}`)
  return value as WeightUnit
}

function options(text: string): Record<string, string> {
  const value = readText(text)
  if (value === null) return {}
  let parsed: unknown
  try {
    parsed = JSON.parse(value)
  } catch {
    throw new CellProblem(`variant_options: not JSON: write the options as {"Size": "M", "Color": "Red"}`)
  }
  return checked('variant_options', CreateVariant.properties.options, parsed) as Record<string, string>
}
