/**
 * The public product list: one prepared statement per shape of query (filters present or not:
 * @commerce/db sql/product-list.ts), exact totals cached per catalog revision, and a plan per
 * search chosen by its match count. Cursor mode (`after`) walks the same order by keyset and
 * counts nothing. Public pages by number are kept in memory for PRODUCT_CACHE_TTL (catalog-cache.ts).
 */
import { searchText, type ListProductsQuery } from '@commerce/domain'
import {
  categoryHasChildrenStatement,
  listItemJson,
  productCountStatement,
  productPageStatement,
  products,
  storedPageStatement,
  toListItem,
  type Database,
  type ProductListParams,
  type ProductListShape as Shape,
} from '@commerce/db'
import { cursorPage, key, keyset } from '../../list-cursor.js'
import { ListTotals, pageMeta } from '../../list-totals.js'
import type { CatalogCache } from './catalog-cache.js'
import type { ProductPage } from './page.js'
import { createProductListing, needsListing, type Reader } from './listing.js'

/** Newest first by id (UUIDv7); @commerce/db sql/product-list.ts writes the keyset's condition itself, per plan. */
const PRODUCTS_KEYSET = keyset('products', 'desc', [key.uuid(products.id)])

/** What readPage answers for a category with subcategories: the listing's to answer (listing.ts). */
const NESTED = Symbol('nested category')

/** Up to this many search matches a page is read through the GIN index, above it along the id order. */
const FEW_MATCHES = 2000

/** The locale of a localized row's own translation (null: none, or not a localized read). */
const shownLocale = (row: object): string | null => (row as { translationLocale?: string | null }).translationLocale ?? null

export function createProductLister(db: Database, pages: CatalogCache<ProductPage>, primary: Database) {
  const totals = new ListTotals()
  const listFiltered = createProductListing(primary, db)
  const subcategories = categoryHasChildrenStatement(db)
  const pageStatements = new Map<string, ReturnType<typeof productPageStatement>>()
  const storedPages = new Map<string, ReturnType<typeof storedPageStatement>>()
  const counts = new Map<string, ReturnType<typeof productCountStatement>>()
  const statement = <T>(cache: Map<string, T>, prefix: string, shape: Shape, build: (name: string) => T): T => {
    const key = `${prefix}_${shape.includeInactive ? 'all' : 'active'}_${shape.category ? 'category' : 'any'}_${shape.search}${shape.keyset ? '_after' : ''}${shape.localized ? '_localized' : ''}`
    let found = cache.get(key)
    if (!found) cache.set(key, (found = build(key)))
    return found
  }

  /**
   * `locales`: the chain of locales to show the text in and to search (none: the original text).
   * `remember`: the page may be answered from memory, as it is for the shop's visitors; an admin's
   * list is a working tool (an import or another instance's change shows at once), and a walk by
   * cursor (an export, a sync) would only push the hot pages out, so both read the database.
   */
  return async function listProducts(query: ListProductsQuery, includeInactive: boolean, locales: string[], remember: boolean, reader: Reader): Promise<ProductPage> {
    if (needsListing(query)) return listFiltered(query, includeInactive, locales, reader)
    // A category with categories under it lists theirs too (the listing's categories hold each
    // product's ancestors): readPage says so (NESTED) instead of answering.
    if (!remember || includeInactive || query.after !== undefined) {
      const page = await readPage(query, includeInactive, locales, !remember)
      return page === NESTED ? listFiltered(query, includeInactive, locales, reader) : page
    }
    const key = JSON.stringify([query.page ?? 1, query.per_page ?? 20, query.category ?? null, query.search ?? null, locales])
    const cached = pages.get(key)
    if (cached !== undefined) return cached
    const start = pages.begin()
    const page = await readPage(query, false, locales, false)
    if (page === NESTED) return listFiltered(query, includeInactive, locales, reader)
    pages.set(key, page, start)
    return page
  }

  /** Whether a category page's category has subcategories: its rows say, an empty page asks. */
  async function nested(slug: string | undefined, rows: { nested: boolean }[]): Promise<boolean> {
    if (slug === undefined) return false
    return rows.length > 0 ? rows[0]!.nested : hasSubcategories(slug)
  }

  async function hasSubcategories(slug: string): Promise<boolean> {
    const [row] = await subcategories.execute({ slug })
    return row !== undefined
  }

  /** `staff`: items with the values of attributes that are not public. NESTED: a category with subcategories, whose page is the listing's. */
  async function readPage(query: ListProductsQuery, includeInactive: boolean, locales: string[], staff: boolean): Promise<ProductPage | typeof NESTED> {
    const byCursor = query.after !== undefined
    // Checked before any query: a bad cursor is a 400, never a statement that fails.
    const [after] = query.after ? PRODUCTS_KEYSET.decode(query.after) : []
    const page = query.page ?? 1
    const perPage = query.per_page ?? 20
    // An empty `search=` is no search; text without letters or digits matches nothing.
    const searched = query.search?.trim() ? searchText(query.search) : undefined
    const localized = locales.length > 0
    const base = { includeInactive, category: query.category !== undefined, keyset: after !== undefined, localized }
    // A search's matches depend on the locales searched; other totals do not.
    const cacheKey = JSON.stringify([includeInactive, query.category ?? null, searched ?? null, searched && localized ? locales : null])
    const params: ProductListParams = {
      search: searched ?? '',
      category: query.category ?? '',
      // A cursor page reads one row more, to know whether a next page exists without counting.
      limit: byCursor ? perPage + 1 : perPage,
      offset: byCursor ? 0 : (page - 1) * perPage,
      after: after ?? '',
      locales,
    }
    if (searched === null) {
      return { products: [], meta: byCursor ? { per_page: perPage, next_cursor: null } : pageMeta(page, perPage, 0), shownLocales: [] }
    }

    const count = async () => {
      // Only a search counts differently in a locale.
      const shape: Shape = { ...base, keyset: false, search: searched ? 'many' : 'none', localized: localized && searched !== undefined }
      const [counted] = await statement(counts, 'product_count', shape, (name) => productCountStatement(db, shape, name)).execute(params)
      totals.set(cacheKey, counted!.revision, counted!.total)
      return counted!.total
    }

    let search: Shape['search'] = 'none'
    if (searched) {
      // A total counted earlier (even at an older revision) is good enough to choose the plan;
      // so a walk by cursor counts a search's matches at most once, not on every page.
      const matches = totals.latest(cacheKey) ?? (await count())
      search = !base.category && matches <= FEW_MATCHES ? 'few' : 'many'
    }
    const shape: Shape = { ...base, search }
    if (!staff && !localized) {
      const rows = await statement(storedPages, 'stored_page', shape, (name) => storedPageStatement(db, shape, name)).execute(params)
      if (await nested(query.category, rows)) return NESTED
      const none = rows.map(() => null)
      if (byCursor) {
        const found = cursorPage(PRODUCTS_KEYSET, rows, perPage, (row) => [row.id])
        return { json: found.rows.map((row) => listItemJson(row)), ids: found.rows.map((row) => row.id), meta: found.meta, shownLocales: none.slice(0, found.rows.length) }
      }
      const total = (rows.length > 0 ? totals.get(cacheKey, rows[0]!.revision) : undefined) ?? (await count())
      return { json: rows.map((row) => listItemJson(row)), ids: rows.map((row) => row.id), meta: pageMeta(page, perPage, total), shownLocales: none }
    }
    const rows = await statement(pageStatements, 'product_page', shape, (name) => productPageStatement(db, shape, name)).execute(params)
    if (await nested(query.category, rows)) return NESTED
    if (byCursor) {
      const found = cursorPage(PRODUCTS_KEYSET, rows, perPage, (row) => [row.id])
      return { products: found.rows.map((row) => toListItem(row, staff)), meta: found.meta, shownLocales: found.rows.map(shownLocale) }
    }

    // Totals are exact: used only while the catalog revision they were counted at is current.
    const total = (rows.length > 0 ? totals.get(cacheKey, rows[0]!.revision) : undefined) ?? (await count())
    return { products: rows.map((row) => toListItem(row, staff)), meta: pageMeta(page, perPage, total), shownLocales: rows.map(shownLocale) }
  }
}
