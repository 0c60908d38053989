/**
 * Importing products (docs/csv.md). A product is its consecutive rows, named by `product_id` or
 * else `product_slug`; its product columns come from its first row (later rows may leave them
 * empty, and must agree where they do not). A row with variant cells is a variant, found by
 * `variant_id`, else by SKU, else by title within the product. A product is written whole or not
 * at all: one refused row refuses its product's every row. Columns the file does not have are left
 * as they are; an empty cell clears a field that may be empty (description, SKU, a price in
 * another currency) and gives the default to one that may not (weight unit, status). Every cell
 * is checked as the API checks the field (@commerce/domain), and a variant of a product with
 * options picks one value of each (chooseValues), no two variants the same.
 */
import {
  CreateProduct,
  CreateVariant,
  DomainError,
  chooseValues,
  isCurrency,
  isUuid,
  reconcileOptions,
  WEIGHT_UNITS,
  type Choice,
  type OptionInput,
  type OptionRecord,
  type VariantChoice,
  type WeightUnit,
} from '@commerce/domain'
import {
  applyStockMoves,
  ensureLevels,
  lockStockItems,
  newId,
  productSnapshot,
  readAttributeDefinitions,
  readProductDetails,
  readProductMatches,
  refreshingListingOnce,
  sqlOf,
  writeEvents,
  writeProducts,
  type AttributeDefinitionColumn,
  type AttributeWrite,
  type Executor,
  type ImportReportRow,
  type PriceWrite,
  type ProductFields,
  type ProductMatches,
  type ProductWrite,
  type SqlClient,
  type StockLocationColumn,
  type StockMove,
  type VariantFields,
} from '@commerce/db'
import { CellProblem, checked, readBoolean, readDecimal, readInstant, readInteger, readList, readMoney, readText } from './cells.js'
import { PRODUCT_COLUMNS, productCompareAtColumn, productPriceColumn, variantCompareAtColumn, variantPriceColumn } from './columns.js'
import { HeaderProblem, type RowHandler } from './import.js'
import { readAttribute, readBarcode, readCountry, readDimensionUnit, readHsCode, readLength, readOptions, readStatus, readTags } from './product-cells.js'

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

/** A column `attribute:<key>` or `variant_attribute:<key>`. */
interface AttributeColumn {
  column: string
  owner: 'product' | 'variant'
  key: string
}

const PRICE_PREFIXES = ['product_price', 'variant_price']
const COMPARE_AT_PREFIXES: Record<string, (currency: string) => string> = {
  product_compare_at_price: productPriceColumn,
  variant_compare_at_price: variantPriceColumn,
}
const ATTRIBUTE_PREFIXES: Record<string, AttributeColumn['owner']> = { attribute: 'product', variant_attribute: 'variant' }
const ATTRIBUTE_KEY = /^[a-z][a-z0-9_]{0,63}$/
/** A variant's own cells (the rest of a row repeats its product's). */
const VARIANT_COLUMNS: Column[] = PRODUCT_COLUMNS.filter((column) => column.startsWith('variant_'))

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
  const compareAt: { column: string; base: string }[] = []
  const attributeColumns: AttributeColumn[] = []
  const stock: { column: string; locationId: string }[] = []
  const locations = new Map(context.locations.map((location) => [location.name.toLowerCase(), location.id]))
  header.forEach((name, position) => {
    if (index.has(name)) throw new HeaderProblem(`The column '${name}' appears twice in the header`)
    index.set(name, position)
    if ((PRODUCT_COLUMNS as readonly string[]).includes(name)) return
    const colon = name.indexOf(':')
    if (colon < 0) {
      unknown.push(name)
      return
    }
    const [prefix, rest] = [name.slice(0, colon), name.slice(colon + 1)]
    if (PRICE_PREFIXES.includes(prefix) || prefix in COMPARE_AT_PREFIXES) {
      if (!isCurrency(rest)) throw new HeaderProblem(`The column '${name}' names no known ISO 4217 currency`)
      if (prefix in COMPARE_AT_PREFIXES) compareAt.push({ column: name, base: COMPARE_AT_PREFIXES[prefix]!(rest) })
      else if (!currencies.includes(rest)) currencies.push(rest)
      return
    }
    if (prefix === 'stock') {
      const locationId = locations.get(rest.toLowerCase())
      if (!locationId) throw new HeaderProblem(`The column '${name}' names no stock location: create '${rest}' first (POST /stock-locations)`)
      stock.push({ column: name, locationId })
      return
    }
    if (prefix in ATTRIBUTE_PREFIXES) {
      if (!ATTRIBUTE_KEY.test(rest)) throw new HeaderProblem(`The column '${name}' names no attribute: a key is lower case letters, digits and _`)
      attributeColumns.push({ column: name, owner: ATTRIBUTE_PREFIXES[prefix]!, key: rest })
      return
    }
    unknown.push(name)
  })
  if (unknown.length > 0) throw new HeaderProblem(`Unknown columns: ${unknown.map((name) => `'${name}'`).join(', ')} (docs/csv.md lists them)`)
  for (const { column, base } of compareAt) {
    if (!index.has(base)) throw new HeaderProblem(`The column '${column}' needs the column '${base}' beside it (a compare-at amount belongs to a price)`)
  }
  if (!index.has('product_id') && !index.has('product_slug')) throw new HeaderProblem('The header needs product_id or product_slug, to know which product each row is')

  const cell = (cells: string[], column: string): string | undefined => {
    const position = index.get(column)
    // A short row's missing cells read as empty (the row is refused as misaligned anyway).
    return position === undefined ? undefined : (cells[position] ?? '')
  }
  const keyOf = (cells: string[], row: number) => {
    const id = cell(cells, 'product_id')?.trim().toLowerCase()
    if (id) return `id:${id}`
    const slug = cell(cells, 'product_slug')?.trim()
    return slug ? `slug:${slug}` : `row:${row}`
  }
  /** The cells every row of a product repeats (or leaves empty). */
  const productColumns = [
    ...PRODUCT_COLUMNS.filter((name) => name.startsWith('product_')),
    ...currencies.flatMap((code) => [productPriceColumn(code), productCompareAtColumn(code)]),
    ...attributeColumns.filter((column) => column.owner === 'product').map((column) => column.column),
  ]
  const variantCells = [...VARIANT_COLUMNS, ...attributeColumns.filter((column) => column.owner === 'variant').map((column) => column.column)]

  /** The definitions of the attribute columns, by column (read by prepare). */
  const definitions = new Map<string, AttributeDefinitionColumn>()
  /** Every product id the file names, when a column refers to products (read by prepare's scan). */
  const fileProducts = new Set<string>()
  const referenceColumns = () => attributeColumns.filter((column) => definitions.get(column.column)?.type === 'product_reference').map((column) => column.column)

  const defaultLocation = context.locations.find((location) => location.isDefault)?.id
  const seen = new Map<string, number>()
  let open: ProductGroup | undefined

  return {
    async prepare(database) {
      if (attributeColumns.length === 0) return {}
      const all = await readAttributeDefinitions(database.sql)
      for (const { column, owner, key } of attributeColumns) {
        const definition = all.find((candidate) => candidate.owner === owner && candidate.key === key)
        if (!definition) throw new HeaderProblem(`The column '${column}' names no ${owner} attribute: define '${key}' first (POST /attributes)`)
        definitions.set(column, definition)
      }
      if (referenceColumns().length === 0) return {}
      // A product may refer to one later in the file (an export is in id order).
      return {
        scan: (cells: string[]) => {
          const id = cell(cells, 'product_id')?.trim().toLowerCase()
          if (id && isUuid(id)) fileProducts.add(id)
        },
      }
    },

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
      const names = {
        productIds: new Set<string>(),
        slugs: new Set<string>(),
        variantIds: new Set<string>(),
        categorySlugs: new Set<string>(),
        references: new Set<string>(),
      }
      const references = referenceColumns()
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
          for (const column of references) {
            const target = readText(cell(cells, column) ?? '')?.trim().toLowerCase()
            if (target && isUuid(target)) names.references.add(target)
          }
        }
      }
      const matches = await readProductMatches(sql, {
        productIds: [...names.productIds],
        slugs: [...names.slugs],
        variantIds: [...names.variantIds],
        categorySlugs: [...names.categorySlugs],
        references: [...names.references],
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

  /** A variant a row of the file names. */
  interface VariantEntry {
    row: number
    id: string
    create: boolean
    fields: Partial<VariantFields>
    /** The options its `variant_options` cell gives; undefined: the file gives none for it. */
    sent?: Record<string, string> | undefined
  }

  function decide(groups: ProductGroup[], matches: ProductMatches): Decided {
    const decided: Decided = { products: [], prices: [], stock: [], report: [] }
    const slugsInBatch = new Map<string, string>()
    const knownProducts = new Set(matches.references)
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
        for (const column of productColumns) {
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

      /** The attribute values of a row's columns of `owner`; undefined when the file has none. */
      const readAttributes = (cells: string[], owner: AttributeColumn['owner'], row: number): AttributeWrite | undefined => {
        const columns = attributeColumns.filter((column) => column.owner === owner)
        if (columns.length === 0) return undefined
        const write: AttributeWrite = { keys: [], values: {}, staffValues: {} }
        for (const { column, key } of columns) {
          const definition = definitions.get(column)!
          write.keys.push(key)
          const value = attempt(row, () => readAttribute(column, definition, cell(cells, column)!))
          if (value === undefined || value === null) continue
          if (definition.type === 'product_reference' && !knownProducts.has(value as string) && !fileProducts.has(value as string)) {
            refuse(row, `${column}: names no product: ${value as string} (neither in the shop nor in the file)`)
            continue
          }
          ;(definition.public ? write.values : write.staffValues)[key] = value
        }
        return write
      }

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
      const money = (column: Column, text: string) => (text.trim() === '' ? null : readMoney(column, text, currency))
      const optional = (column: Column, schema: Parameters<typeof checked>[1]) => (text: string) => checked(column, schema, readText(text))
      read('product_title', 'title', (text) => checked('product_title', CreateProduct.properties.title, required('product_title', text)), undefined)
      if (create && fields.title === undefined && !problems.size) refuse(firstRow.row, 'product_title: required for a new product')
      if (slugCell !== undefined) fields.slug = attempt(firstRow.row, () => checked('product_slug', CreateProduct.properties.slug, slugCell))
      else if (create && !group.key.startsWith('row:')) refuse(firstRow.row, 'product_slug: required for a new product')
      read('product_description', 'description', optional('product_description', CreateProduct.properties.description), null)
      read('product_sku', 'sku', optional('product_sku', CreateProduct.properties.sku), null)
      read('product_price', 'priceMinor', (text) => readMoney('product_price', required('product_price', text), currency), 0)
      read('product_compare_at_price', 'compareAtPriceMinor', (text) => money('product_compare_at_price', text), null)
      read('product_weight', 'weight', (text) => (text.trim() === '' ? null : readDecimal('product_weight', text)), null)
      read('product_weight_unit', 'weightUnit', (text) => weightUnit('product_weight_unit', text), 'kg')
      read('product_image_url', 'imageUrl', optional('product_image_url', CreateProduct.properties.image_url), null)
      read('product_tags', 'tags', (text) => readTags('product_tags', text), [])
      read('product_type', 'productType', optional('product_type', CreateProduct.properties.product_type), null)
      read('product_vendor', 'vendor', optional('product_vendor', CreateProduct.properties.vendor), null)
      read('product_barcode', 'barcode', (text) => readBarcode('product_barcode', text), null)
      read('product_length', 'length', (text) => readLength('product_length', text), null)
      read('product_width', 'width', (text) => readLength('product_width', text), null)
      read('product_height', 'height', (text) => readLength('product_height', text), null)
      read('product_dimension_unit', 'dimensionUnit', (text) => readDimensionUnit('product_dimension_unit', text), 'cm')
      read('product_hs_code', 'hsCode', (text) => readHsCode('product_hs_code', text), null)
      read('product_country_of_origin', 'countryOfOrigin', (text) => readCountry('product_country_of_origin', text), null)
      read('product_seo_title', 'seoTitle', optional('product_seo_title', CreateProduct.properties.seo_title), null)
      read('product_seo_description', 'seoDescription', optional('product_seo_description', CreateProduct.properties.seo_description), null)
      decideStatus()
      const productAttributes = readAttributes(first, 'product', firstRow.row)
      if (productAttributes) fields.attributes = productAttributes
      if (create && fields.currency === undefined) fields.currency = currency

      /**
       * `product_status` (with `product_published_at`) says the status; `product_active`, the
       * column before statuses, must then agree with it (true: active and published). Without a
       * status, `product_active` alone works as the API's `is_active`: true makes the product
       * active (published now), false archives it.
       */
      function decideStatus() {
        const statusCell = at('product_status')
        const activeCell = at('product_active')
        const publishedCell = at('product_published_at')
        let publishedAt: string | null | undefined
        if (publishedCell !== undefined) {
          publishedAt = attempt(firstRow.row, () => readInstant('product_published_at', publishedCell, CreateProduct.properties.published_at))
          if (publishedAt !== undefined) fields.publishedAt = publishedAt
        }
        const moment = publishedCell === undefined ? (existing?.publishedAt ?? null) : publishedAt
        const later = typeof moment === 'string' && new Date(moment).getTime() > Date.now()
        const activeText = activeCell?.trim() ?? ''
        if (statusCell !== undefined && statusCell.trim() !== '') {
          const status = attempt(firstRow.row, () => readStatus('product_status', statusCell))
          if (status === undefined) return
          fields.status = status
          const active = activeText === '' ? undefined : attempt(firstRow.row, () => readBoolean('product_active', activeText))
          if (active !== undefined && active !== (status === 'active' && !later)) {
            refuse(
              firstRow.row,
              `product_active: '${activeText}' disagrees with product_status '${status}'${status === 'active' && later ? ' published later' : ''} ` +
                '(true is an active product whose product_published_at has come): leave product_active empty to go by product_status',
            )
          }
        } else if (activeCell !== undefined) {
          const active = activeText === '' ? true : attempt(firstRow.row, () => readBoolean('product_active', activeText))
          if (active === undefined) return
          if (publishedCell === undefined) {
            fields.isActive = active
            return
          }
          if (active && later) refuse(firstRow.row, 'product_active: true is public now, but product_published_at is later: give product_status active to schedule the product')
          fields.status = active ? 'active' : 'archived'
        } else if (statusCell !== undefined) fields.status = 'active'
      }

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
      /** The base price in `code` of the product (variant null) or a variant, with its compare-at amount when the file has its column. */
      const priceOf = (code: string, cells: string[], variantId: string | null, row: number) => {
        const [base, compare] = variantId === null ? [productPriceColumn(code), productCompareAtColumn(code)] : [variantPriceColumn(code), variantCompareAtColumn(code)]
        const text = cell(cells, base)
        if (text === undefined) return
        const compareText = cell(cells, compare)
        if (code === currency) {
          if (text.trim() !== '') refuse(row, `${base}: ${currency} is the product's own currency: its price is product_price (or variant_price)`)
          if (compareText?.trim()) refuse(row, `${compare}: ${currency} is the product's own currency: its compare-at price is product_compare_at_price (or variant_compare_at_price)`)
          return
        }
        if (text.trim() === '') {
          if (compareText?.trim()) refuse(row, `${compare}: a compare-at amount needs its price (${base})`)
          prices.push({ id: newId(), productId, variantId, currency: code, amountMinor: null })
          return
        }
        const amountMinor = attempt(row, () => readMoney(base, text, code))
        const compareAtAmountMinor = compareText === undefined || compareText.trim() === '' ? null : attempt(row, () => readMoney(compare, compareText, code))
        if (amountMinor === undefined || compareAtAmountMinor === undefined) return
        prices.push({ id: newId(), productId, variantId, currency: code, amountMinor, ...(compareText !== undefined && { compareAtAmountMinor }) })
      }
      for (const code of currencies) priceOf(code, first, null, firstRow.row)

      // The variants, one per row with variant cells.
      const entries: VariantEntry[] = []
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
        if (!variantCells.some((column) => (cell(cells, column) ?? '').trim() !== '')) {
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
        readVariant('variant_compare_at_price', 'compareAtPriceMinor', (text) => (text.trim() === '' ? null : readMoney('variant_compare_at_price', text, currency)), null)
        readVariant('variant_barcode', 'barcode', (text) => readBarcode('variant_barcode', text), null)
        readVariant('variant_weight', 'weight', (text) => (text.trim() === '' ? null : readDecimal('variant_weight', text)), null)
        readVariant('variant_weight_unit', 'weightUnit', (text) => weightUnit('variant_weight_unit', text), fields.weightUnit ?? 'kg')
        const variantAttributes = readAttributes(cells, 'variant', row)
        if (variantAttributes) variantFields.attributes = variantAttributes
        const optionsCell = cell(cells, 'variant_options')
        const sent = optionsCell === undefined ? undefined : attempt(row, () => variantOptions(optionsCell))
        for (const code of currencies) priceOf(code, cells, variantId, row)
        entries.push({ row, id: variantId, create: createVariant, fields: variantFields, sent })
        rowCreates.set(row, create || createVariant)
        stockOf(variantId)
      }

      // The product's options, and the values each of its variants picks.
      const given = new Set(entries.filter((entry) => entry.sent !== undefined).map((entry) => entry.id))
      // Existing variants whose options the file does not give: their choices follow the product's options.
      const following = existingVariants.filter((variant) => !given.has(variant.id))
      const followed = new Map<string, Choice>()
      let options: readonly OptionRecord[] = existing?.options ?? []
      const optionsCell = at('product_options')
      const input = optionsCell === undefined ? undefined : attempt(firstRow.row, () => readOptions('product_options', optionsCell))
      if (input !== undefined) {
        const current = existing?.options ?? []
        const choices: VariantChoice[] = following.map((variant) => ({ id: variant.id, valueIds: variant.optionValueIds, record: variant.options, title: variant.title }))
        try {
          const next = current.length === 0 ? firstOptions(input, choices) : reconcileOptions(current, input, choices, newId)
          options = next.options
          fields.options = next.options
          for (const variant of next.variants) {
            const before = following.find((candidate) => candidate.id === variant.id)!
            if (variant.valueIds.join() !== before.optionValueIds.join() || !sameRecord(variant.record, before.options)) followed.set(variant.id, variant)
          }
        } catch (error) {
          if (error instanceof CellProblem) refuse(firstRow.row, error.message)
          else if (error instanceof DomainError) refuse(firstRow.row, `product_options: ${error.message}`)
          else throw error
        }
      }
      for (const entry of entries) {
        if (entry.sent === undefined) {
          const follows = followed.get(entry.id)
          if (follows) Object.assign(entry.fields, { options: follows.record, optionValueIds: follows.valueIds })
          else if (entry.create && options.length > 0) {
            const example = Object.fromEntries(options.map((option) => [option.name, option.values[0]?.value ?? '']))
            refuse(entry.row, `variant_options: the product has options (${options.map((option) => option.name).join(', ')}): pick a value of each, as ${JSON.stringify(example)}`)
          }
          continue
        }
        if (options.length === 0) {
          Object.assign(entry.fields, { options: entry.sent, optionValueIds: [] })
          continue
        }
        try {
          const choice = chooseValues(options, entry.sent, 'variant_options')
          Object.assign(entry.fields, { options: choice.record, optionValueIds: choice.valueIds })
        } catch (error) {
          if (!(error instanceof DomainError)) throw error
          refuse(entry.row, error.message.replace(/Field '([^']+)': /g, '$1: '))
        }
      }
      // No two variants pick the same values: those the file leaves alone first, then the rows in order.
      const holders = new Map<string, string>()
      const named = new Set(entries.map((entry) => entry.id))
      for (const variant of existingVariants.filter((candidate) => !named.has(candidate.id))) {
        const valueIds = followed.get(variant.id)?.valueIds ?? variant.optionValueIds
        if (valueIds.length > 0) holders.set(valueIds.join(), `variant '${variant.title}' (${variant.id})`)
      }
      for (const entry of entries) {
        const valueIds = entry.fields.optionValueIds ?? existingVariants.find((variant) => variant.id === entry.id)?.optionValueIds ?? []
        if (valueIds.length === 0) continue
        const holder = holders.get(valueIds.join())
        if (holder !== undefined) {
          const shown = Object.entries(entry.fields.options ?? {}).map(([name, value]) => `${name}: ${value}`).join(', ')
          refuse(entry.row, `variant_options: ${holder} of this product has the same option values${shown ? ` (${shown})` : ''}`)
        } else holders.set(valueIds.join(), `the variant on row ${entry.row}`)
      }

      const firstProblem = [...problems.keys()].sort((a, b) => a - b)[0]
      for (const { row } of group.rows) {
        const key = slugCell ?? id ?? null
        if (firstProblem !== undefined) {
          const reason = problems.get(row)?.join('; ') ?? `another row of this product was refused (row ${firstProblem})`
          decided.report.push({ row, action: 'refuse', resourceId: existing?.id ?? null, key, reason })
        } else decided.report.push({ row, action: rowCreates.get(row) ? 'create' : 'update', resourceId: productId, key, reason: null })
      }
      if (firstProblem !== undefined) continue
      const variants: ProductWrite['variants'] = [
        ...entries.map((entry) => ({ id: entry.id, create: entry.create, fields: entry.fields })),
        ...[...followed].filter(([variantId]) => !named.has(variantId)).map(([variantId, choice]) => ({
          id: variantId,
          create: false,
          fields: { options: choice.record, optionValueIds: choice.valueIds },
        })),
      ]
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
    await refreshingListingOnce(sql, decided.products.map((product) => product.id), () => writeProductsAndStock(sql, decided))
    const created = new Set(decided.products.filter((product) => product.create).map((product) => product.id))
    const rows = await readProductDetails(tx, decided.products.map((product) => product.id))
    await writeEvents(
      tx,
      rows.map((row) => ({ kind: created.has(row.id) ? 'product.created' : 'product.updated', resourceId: row.id, data: productSnapshot(row), actor: context.actor })),
    )
  }

  async function writeProductsAndStock(sql: SqlClient, decided: Decided) {
    await writeProducts(sql, { products: decided.products, prices: decided.prices })
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
  }
}

function weightUnit(column: string, text: string): WeightUnit {
  const value = text.trim() || 'kg'
  if (!(WEIGHT_UNITS as readonly string[]).includes(value)) throw new CellProblem(`${column}: '${text}' is not one of ${WEIGHT_UNITS.join(', ')}`)
  return value as WeightUnit
}

/** A variant's options as its cell gives them: `{"Size": "M", "Color": "Red"}`. */
function variantOptions(text: string): Record<string, string> {
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

/** The same option name → value pairs, whatever their order. */
function sameRecord(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const entries = Object.entries(a)
  return entries.length === Object.keys(b).length && entries.every(([name, value]) => b[name] === value)
}

/**
 * The first options of a product (a new one, or one without options yet), as reconcileOptions
 * makes them, but with the ids the file gives where it gives them: a file exported elsewhere
 * brings its options back with their ids, and its variants' choices with them.
 */
function firstOptions(input: readonly OptionInput[], variants: readonly VariantChoice[]): { options: OptionRecord[]; variants: (VariantChoice & Choice)[] } {
  const ids = input.flatMap((option) => [option.id, ...option.values.map((value) => value.id)]).flatMap((id) => (id === undefined ? [] : [id.toLowerCase()]))
  const twice = ids.find((id, i) => ids.indexOf(id) !== i)
  if (twice !== undefined) throw new CellProblem(`product_options: the id ${twice} is given twice`)
  const made = reconcileOptions(
    [],
    input.map(({ id: _id, ...option }) => ({ ...option, values: option.values.map(({ id: _valueId, ...value }) => value) })),
    variants,
    newId,
  )
  const renamed = new Map<string, string>()
  const options = made.options.map((option, i) => {
    const sent = input[i]!
    return {
      ...option,
      id: sent.id?.toLowerCase() ?? option.id,
      values: option.values.map((value, j) => {
        const id = sent.values[j]!.id?.toLowerCase() ?? value.id
        renamed.set(value.id, id)
        return { ...value, id }
      }),
    }
  })
  return { options, variants: made.variants.map((variant) => ({ ...variant, valueIds: variant.valueIds.map((id) => renamed.get(id) ?? id).sort() })) }
}
