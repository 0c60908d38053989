/**
 * `GET /products` with sorting, filters, facets, a collection or a market (docs/catalog.md,
 * "Filters, sorting and facets"): the query read into a ListingFilter, a page of ids from the
 * listing read model (@commerce/db sql/product-listing.ts), their rows (or stored JSON) read by id, and the
 * facets labelled. A list that asks for none of these keeps the plain statements of list.ts.
 */
import { and, eq } from 'drizzle-orm'
import { currencyExponent, isCalendarDate, searchText, type ListProductsQuery, type ProductFacets, type ProductListItem } from '@commerce/domain'
import {
  attributeDefinitions,
  categories,
  collections,
  facetLabelsOf,
  listingFacets,
  listingPage,
  listItemJson,
  productRowsStatement,
  sqlOf,
  storedItemsStatement,
  toListItem,
  type Database,
  type ListingFacets,
  type ListingFilter,
  type ListingKey,
  type ListingSort,
  type RangeFilter,
  type TermFilter,
} from '@commerce/db'
import type postgres from 'postgres'
import { invalidField } from '../../errors.js'
import { pageMeta } from '../../list-totals.js'
import type { ProductPage } from './page.js'
import { ListingIndex, indexCounts, indexPages } from './listing-index.js'

/** Whether a list needs the listing read model: any parameter the plain statements do not serve. */
export function needsListing(query: ListProductsQuery): boolean {
  return (
    query.sort !== undefined ||
    query.collection !== undefined ||
    query.tag !== undefined ||
    query.type !== undefined ||
    query.vendor !== undefined ||
    query.option !== undefined ||
    query.attr !== undefined ||
    query.price_min !== undefined ||
    query.price_max !== undefined ||
    query.available !== undefined ||
    query.on_sale !== undefined ||
    query.currency !== undefined ||
    query.status !== undefined ||
    query.facets === true
  )
}

const NUMBER = /^-?\d+(\.\d+)?$/

/** The product terms a filter's values name, lower case, grouped by what they filter. */
function termGroups(query: ListProductsQuery): TermFilter[] {
  const groups: TermFilter[] = []
  const plain = (prefix: string, values: string[] | undefined) => {
    if (values?.length) groups.push({ prefix, terms: values.map((value) => `${prefix}${value.trim().toLowerCase()}`) })
  }
  plain('tag:', query.tag)
  plain('type:', query.type)
  plain('vendor:', query.vendor)
  const byName = new Map<string, string[]>()
  for (const entry of query.option ?? []) {
    const at = entry.indexOf(':')
    const name = entry.slice(0, at).trim().toLowerCase()
    byName.set(name, [...(byName.get(name) ?? []), `opt:${name}:${entry.slice(at + 1).trim().toLowerCase()}`])
  }
  for (const [name, terms] of byName) groups.push({ prefix: `opt:${name}:`, terms })
  const byKey = new Map<string, string[]>()
  for (const entry of query.attr ?? []) {
    const at = entry.indexOf(':')
    const key = entry.slice(0, at)
    const value = entry.slice(at + 1)
    if (value.includes('..') && rangeOf(key, value)) continue
    byKey.set(key, [...(byKey.get(key) ?? []), `attr:${key}:${value.trim().toLowerCase()}`])
  }
  for (const [key, terms] of byKey) groups.push({ prefix: `attr:${key}:`, terms })
  return groups
}

/** `min..max` of numbers or dates (dates as yyyymmdd), either end open; undefined when it is not one. */
function rangeOf(key: string, text: string): RangeFilter | undefined {
  const [low, high, ...rest] = text.split('..')
  if (rest.length > 0 || low === undefined || high === undefined) return undefined
  const bound = (part: string): number | null | undefined => {
    const trimmed = part.trim()
    if (trimmed === '') return null
    if (NUMBER.test(trimmed)) return Number(trimmed)
    if (isCalendarDate(trimmed)) return Number(trimmed.replaceAll('-', ''))
    return undefined
  }
  const min = bound(low)
  const max = bound(high)
  // `key:..` (both ends open): any value.
  if (min === undefined || max === undefined) {
    throw invalidField('attr', `Field 'attr' has a range that is not numbers or dates (YYYY-MM-DD): ${key}:${text}`)
  }
  return { key, min, max }
}

function rangeGroups(query: ListProductsQuery): RangeFilter[] {
  const ranges: RangeFilter[] = []
  for (const entry of query.attr ?? []) {
    const at = entry.indexOf(':')
    const value = entry.slice(at + 1)
    const range = value.includes('..') ? rangeOf(entry.slice(0, at), value) : undefined
    if (range) ranges.push(range)
  }
  return ranges
}

/** A page's cursor in a sorted list: the sort and its key, as base64url JSON. */
const encodeCursor = (sort: ListingSort, key: ListingKey) => Buffer.from(JSON.stringify([sort, ...key])).toString('base64url')

function decodeCursor(sort: ListingSort, text: string): ListingKey {
  try {
    const [cursorSort, value, id] = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as [unknown, unknown, unknown]
    const valueOk = value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))
    if (cursorSort === sort && valueOk && typeof id === 'string' && /^[0-9a-f-]{36}$/.test(id)) return [value as ListingKey[0], id]
  } catch {
    // Falls through to the 400 below.
  }
  throw invalidField('after', "Field 'after' is not a cursor of this list and sort (take next_cursor as it was given)")
}

/** How a list reads what it names: categories and collections by slug, attribute definitions, facet labels (remembered by the index when it counts the list). */
interface Names {
  read<T>(name: string, read: () => Promise<T>): Promise<T>
  labels(terms: string[]): Promise<Map<string, string>>
}

/** Who reads: their price lists, and whether they see inactive products and staff-only values. */
export interface Reader {
  staff: boolean
  customerId: string | null
}

export function createProductListing(db: Database, catalogDb: Database) {
  const rows = {
    plain: productRowsStatement(catalogDb, false, 'product_rows'),
    localized: productRowsStatement(catalogDb, true, 'product_rows_localized'),
    stored: storedItemsStatement(catalogDb, 'stored_items'),
  }
  const sql = sqlOf(catalogDb)
  // The root client behind the pool (sqlOf types it for statements only): a whole read is a transaction.
  const index = new ListingIndex(sql as postgres.Sql)

  async function categoryId(slug: string): Promise<string | null> {
    const [row] = await catalogDb.select({ id: categories.id }).from(categories).where(eq(categories.slug, slug))
    return row?.id ?? null
  }

  async function collectionOf(slug: string): Promise<{ id: string; sort: ListingSort; published: boolean } | null> {
    const [row] = await catalogDb.select({ id: collections.id, sort: collections.sort, published: collections.published }).from(collections).where(eq(collections.slug, slug))
    return row ?? null
  }

  /** The filterable, public attribute definitions (what facets name). */
  function facetDefinitions() {
    return catalogDb
      .select({ key: attributeDefinitions.key, name: attributeDefinitions.name })
      .from(attributeDefinitions)
      .where(and(eq(attributeDefinitions.filterable, true), eq(attributeDefinitions.public, true)))
  }

  /** The facets as the API shows them: values labelled, grouped by filter, those selected marked. */
  async function facetsOf(found: ListingFacets, selected: Set<string>, names: Names): Promise<ProductFacets> {
    const groupTerms = [...new Set(found.terms.filter((entry) => entry.term.startsWith('opt:')).map((entry) => entry.term.slice(0, entry.term.lastIndexOf(':'))))]
    const labels = await names.labels([...found.terms.map((entry) => entry.term), ...groupTerms])
    const definitions = found.terms.some((entry) => entry.term.startsWith('attr:')) || found.ranges.length > 0 ? await names.read('attributes', facetDefinitions) : []
    const facets: ProductFacets = { price: found.price, available: found.available, on_sale: found.onSale, tags: [], types: [], vendors: [], options: [], attributes: [] }
    const value = (term: string, text: string, count: number) => ({ value: text, label: labels.get(term) ?? text, count, selected: selected.has(term) })
    for (const { term, count } of found.terms) {
      const [kind, ...rest] = term.split(':')
      if (kind === 'tag') facets.tags.push(value(term, rest.join(':'), count))
      else if (kind === 'type') facets.types.push(value(term, rest.join(':'), count))
      else if (kind === 'vendor') facets.vendors.push(value(term, rest.join(':'), count))
      else if (kind === 'opt') {
        const [name, ...text] = rest
        let option = facets.options.find((entry) => entry.name === name)
        if (!option) facets.options.push((option = { name: name!, label: labels.get(`opt:${name}`) ?? name!, values: [] }))
        option.values.push(value(term, text.join(':'), count))
      } else if (kind === 'attr') {
        const [key, ...text] = rest
        const definition = definitions.find((entry) => entry.key === key)
        if (!definition) continue
        let attribute = facets.attributes.find((entry) => entry.key === key)
        if (!attribute) facets.attributes.push((attribute = { key: key!, label: definition.name, values: [], range: null }))
        attribute.values.push(value(term, text.join(':'), count))
      }
    }
    // By key, whichever read found them (the statements' order is the database's).
    for (const range of [...found.ranges].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))) {
      const definition = definitions.find((entry) => entry.key === range.key)
      if (!definition) continue
      let attribute = facets.attributes.find((entry) => entry.key === range.key)
      if (!attribute) facets.attributes.push((attribute = { key: range.key, label: definition.name, values: [], range: null }))
      attribute.range = { min: range.min, max: range.max }
    }
    return facets
  }

  return async function listFiltered(
    query: ListProductsQuery,
    includeInactive: boolean,
    locales: string[],
    reader: Reader,
  ): Promise<ProductPage> {
    const perPage = query.per_page ?? 20
    const page = query.page ?? 1
    const byCursor = query.after !== undefined
    const empty = { products: [], meta: byCursor ? { per_page: perPage, next_cursor: null } : pageMeta(page, perPage, 0), shownLocales: [] }
    if (query.facets && byCursor) throw invalidField('facets', "Field 'facets' is for page mode: ask for them without 'after'")
    const searched = query.search?.trim() ? searchText(query.search) : null
    if (searched === null && query.search?.trim()) return empty
    // A list the index counts looks first, so that what it remembers by name is current too.
    const indexed = indexCounts({ includeInactive: includeInactive || query.status !== undefined, status: query.status ?? null, search: searched, currency: query.currency ?? null })
    if (indexed) await index.current()
    const names: Names = indexed
      ? { read: (name, read) => index.remembered(name, read), labels: (terms) => index.labelsOf(terms, (missing) => facetLabelsOf(sql, missing)) }
      : { read: (_name, read) => read(), labels: (terms) => facetLabelsOf(sql, terms) }
    const category = query.category === undefined ? null : await names.read(`category:${query.category}`, () => categoryId(query.category!))
    const found = query.collection === undefined ? null : await names.read(`collection:${query.collection}`, () => collectionOf(query.collection!))
    const collection = found && (found.published || reader.staff) ? found : null
    if ((query.category !== undefined && category === null) || (query.collection !== undefined && collection === null)) return empty
    const sort: ListingSort = query.sort ?? (searched ? 'relevance' : (collection?.sort ?? 'newest'))
    if (sort === 'manual' && !collection) throw invalidField('sort', "Field 'sort' manual is a collection's own order: name a collection")
    if (sort === 'relevance' && !searched) throw invalidField('sort', "Field 'sort' relevance needs a search")
    if (query.price_min !== undefined && query.price_max !== undefined && query.price_min > query.price_max) {
      throw invalidField('price_max', "Field 'price_max' is below price_min")
    }
    if (query.currency !== undefined) {
      try {
        currencyExponent(query.currency)
      } catch {
        throw invalidField('currency', `Field 'currency' is not a known ISO 4217 currency: ${query.currency}`)
      }
    }
    const filter: ListingFilter = {
      includeInactive: includeInactive || query.status !== undefined,
      status: query.status ?? null,
      category,
      collection: collection?.id ?? null,
      search: searched ?? null,
      searchLocales: locales,
      terms: termGroups(query),
      ranges: rangeGroups(query),
      price: query.price_min === undefined && query.price_max === undefined ? null : { min: query.price_min ?? null, max: query.price_max ?? null },
      available: query.available ?? null,
      onSale: query.on_sale ?? null,
      currency: query.currency ?? null,
      customerId: reader.customerId,
    }
    // `after=` (empty) starts a walk: the first page by cursor.
    const after = query.after === undefined || query.after === '' ? null : decodeCursor(sort, query.after)
    const window = { limit: byCursor ? perPage + 1 : perPage, offset: byCursor ? 0 : (page - 1) * perPage, after }
    const fromIndex = (!byCursor && indexPages(filter, sort, window)) || (query.facets === true && indexed)
    if (fromIndex && sort === 'title') await index.titlesRanked()
    const answer = fromIndex ? index.answer(filter, sort, window, query.facets === true) : null
    const listed = answer?.page ?? (await listingPage(sql, filter, sort, window))
    const pageRows = byCursor ? listed.rows.slice(0, perPage) : listed.rows
    const ids = pageRows.map((row) => row.id)
    const marketPrice = (entry: (typeof pageRows)[number]) =>
      filter.currency !== null && entry.price !== null ? { currency: filter.currency, amount: entry.price, on_sale: entry.onSale ?? false } : undefined
    let items: Pick<ProductPage, 'shownLocales'> & ({ products: ProductListItem[] } | { json: string[]; ids: string[] })
    if (!reader.staff && locales.length === 0) {
      // The public in the shop's own language: the items' stored JSON (list.ts, StoredPage).
      const byId = new Map(ids.length === 0 ? [] : (await rows.stored.execute({ ids })).map((row) => [row.id, row]))
      // A product deleted between the two reads is left out of this page.
      const shown = pageRows.filter((entry) => byId.has(entry.id))
      items = { json: shown.map((entry) => listItemJson(byId.get(entry.id)!, marketPrice(entry))), ids: shown.map((entry) => entry.id), shownLocales: shown.map(() => null) }
    } else {
      const statement = locales.length > 0 ? rows.localized : rows.plain
      const byId = new Map(ids.length === 0 ? [] : (await statement.execute({ ids, locales })).map((row) => [row.id, row]))
      const shown = pageRows.filter((entry) => byId.has(entry.id))
      items = {
        products: shown.map((entry) => {
          const item = toListItem(byId.get(entry.id)!, reader.staff)
          const market = marketPrice(entry)
          if (market) item.market_price = market
          return item
        }),
        shownLocales: shown.map((entry) => (byId.get(entry.id) as { translationLocale?: string | null }).translationLocale ?? null),
      }
    }
    if (byCursor) {
      const more = listed.rows.length > perPage
      return { ...items, meta: { per_page: perPage, next_cursor: more ? encodeCursor(sort, pageRows.at(-1)!.key) : null } }
    }
    const list: ProductPage = { ...items, meta: pageMeta(page, perPage, listed.total ?? 0) }
    if (query.facets) {
      const selected = new Set(filter.terms.flatMap((group) => group.terms))
      list.facets = await facetsOf(answer?.facets ?? (await listingFacets(sql, filter)), selected, names)
    }
    return list
  }
}

