/**
 * The public product list: one prepared statement per shape of query (filters present or not),
 * exact totals cached per catalog revision, and a plan per search chosen by its match count.
 * Cursor mode (`after`) walks the same order by keyset and counts nothing.
 */
import { and, desc, eq, inArray, lt, sql, type SQL } from 'drizzle-orm'
import { toPrefixTsQuery, type ListProductsQuery, type ProductList } from '@commerce/domain'
import { productCategories, products, type Database } from '@commerce/db'
import { cursorPage, decodeCursor } from '../../list-cursor.js'
import { ListTotals, pageMeta } from '../../list-totals.js'
import { productColumns, toListItem } from './rows.js'

/** Up to this many search matches a page is read through the GIN index, above it along the id order. */
const FEW_MATCHES = 2000

interface Shape {
  includeInactive: boolean
  category: boolean
  /** 'few': read matches through the GIN index; 'many': walk ids newest first and filter. */
  search: 'none' | 'few' | 'many'
  /** Rows after a cursor's id only (cursor mode past its first page); the offset is then 0. */
  keyset: boolean
}

const catalogRevision = sql<string>`(select revision from catalog_revision)`
// The query arrives as tsquery text (toPrefixTsQuery: lowercase words, prefix-matched, ANDed),
// cast once per execution; to_tsquery() in a generic plan would run again for every row.
const searchMatches = sql`${products.searchVector} @@ ${sql.placeholder('search')}::tsquery`
// The same test written so no index can answer it: with many matches, walking ids newest first
// and testing each row finds a page fastest, and this keeps a generic plan from choosing the GIN
// index and sorting every match instead.
const searchMatchesWalking = sql`(${searchMatches}) is true`
const inCategory = and(
  eq(productCategories.productId, products.id),
  eq(productCategories.categoryId, sql`(select id from categories where slug = ${sql.placeholder('category')})`),
)

function filters(shape: Pick<Shape, 'includeInactive'> & { search: SQL | undefined; after?: SQL }): SQL | undefined {
  const conditions: SQL[] = []
  if (!shape.includeInactive) conditions.push(eq(products.isActive, true))
  if (shape.search) conditions.push(shape.search)
  if (shape.after) conditions.push(shape.after)
  return and(...conditions)
}

function pageStatement(db: Database, shape: Shape, name: string) {
  const query = db
    .select({ ...productColumns, revision: catalogRevision })
    .from(products)
    .$dynamic()
  const search = { none: undefined, few: searchMatches, many: searchMatchesWalking }[shape.search]
  // The keyset is on the column the order walks: the link's product_id for a category (so the
  // scan of its primary key starts at the cursor), else the product's id.
  const keyColumn = shape.category ? productCategories.productId : products.id
  const after = shape.keyset ? lt(keyColumn, sql.placeholder('after')) : undefined
  const where = filters({ includeInactive: shape.includeInactive, search, after })
  const limit = sql.placeholder('limit')
  const offset = sql.placeholder('offset')
  if (shape.category) {
    // Walks the (category_id, product_id) key backwards: a page reads about its own rows.
    query.innerJoin(productCategories, inCategory).where(where).orderBy(desc(productCategories.productId))
    query.limit(limit).offset(offset)
  } else if (shape.search === 'few') {
    // Left alone, the planner walks the whole id index looking for rare matches (it cannot
    // estimate prefix matches); the materialized CTE makes it read them through the GIN index.
    query.where(
      inArray(
        products.id,
        sql`(with matches as materialized (select id from products where ${where})
             select id from matches order by id desc limit ${limit} offset ${offset})`,
      ),
    )
    query.orderBy(desc(products.id))
  } else {
    query.where(where).orderBy(desc(products.id)).limit(limit).offset(offset)
  }
  return query.prepare(name)
}

function countStatement(db: Database, shape: Shape, name: string) {
  const query = db.select({ total: sql<number>`count(*)::int`, revision: catalogRevision }).from(products).$dynamic()
  if (shape.category) query.innerJoin(productCategories, inCategory)
  const search = shape.search === 'none' ? undefined : searchMatches
  return query.where(filters({ includeInactive: shape.includeInactive, search })).prepare(name)
}

export function createProductLister(db: Database) {
  const totals = new ListTotals()
  const pages = new Map<string, ReturnType<typeof pageStatement>>()
  const counts = new Map<string, ReturnType<typeof countStatement>>()
  const statement = <T>(cache: Map<string, T>, prefix: string, shape: Shape, build: (name: string) => T): T => {
    const key = `${prefix}_${shape.includeInactive ? 'all' : 'active'}_${shape.category ? 'category' : 'any'}_${shape.search}${shape.keyset ? '_after' : ''}`
    let found = cache.get(key)
    if (!found) cache.set(key, (found = build(key)))
    return found
  }

  return async function listProducts(query: ListProductsQuery, includeInactive: boolean): Promise<ProductList> {
    const byCursor = query.after !== undefined
    // Checked before any query: a bad cursor is a 400, never a statement that fails.
    const [after] = query.after ? decodeCursor('products', query.after) : []
    const page = query.page ?? 1
    const perPage = query.per_page ?? 20
    // An empty `search=` is no search; text without letters or digits matches nothing.
    const tsQuery = query.search?.trim() ? toPrefixTsQuery(query.search) : undefined
    const base = { includeInactive, category: query.category !== undefined, keyset: after !== undefined }
    const cacheKey = JSON.stringify([includeInactive, query.category ?? null, tsQuery ?? null])
    const params = {
      search: tsQuery ?? '',
      category: query.category ?? '',
      // A cursor page reads one row more, to know whether a next page exists without counting.
      limit: byCursor ? perPage + 1 : perPage,
      offset: byCursor ? 0 : (page - 1) * perPage,
      after: after ?? '',
    }
    if (tsQuery === null) {
      return { products: [], meta: byCursor ? { per_page: perPage, next_cursor: null } : pageMeta(page, perPage, 0) }
    }

    const count = async () => {
      const shape: Shape = { ...base, keyset: false, search: tsQuery ? 'many' : 'none' }
      const [counted] = await statement(counts, 'product_count', shape, (name) => countStatement(db, shape, name)).execute(params)
      totals.set(cacheKey, counted!.revision, counted!.total)
      return counted!.total
    }

    let search: Shape['search'] = 'none'
    if (tsQuery) {
      // A total counted earlier (even at an older revision) is good enough to choose the plan;
      // so a walk by cursor counts a search's matches at most once, not on every page.
      const matches = totals.latest(cacheKey) ?? (await count())
      search = !base.category && matches <= FEW_MATCHES ? 'few' : 'many'
    }
    const shape: Shape = { ...base, search }
    const rows = await statement(pages, 'product_page', shape, (name) => pageStatement(db, shape, name)).execute(params)
    if (byCursor) {
      const found = cursorPage('products', rows, perPage, (row) => [row.id])
      return { products: found.rows.map(toListItem), meta: found.meta }
    }

    // Totals are exact: used only while the catalog revision they were counted at is current.
    const total = (rows.length > 0 ? totals.get(cacheKey, rows[0]!.revision) : undefined) ?? (await count())
    return { products: rows.map(toListItem), meta: pageMeta(page, perPage, total) }
  }
}
