/**
 * The public product list's statements: a page and a count for each shape of query (filters
 * present or not), each prepared under its own name, so a statement's plan fits its shape.
 * Which shape to run, the totals' cache and the cursor are the API's (routes/products/list.ts).
 */
import { and, desc, eq, inArray, lt, sql, type SQL } from 'drizzle-orm'
import type { PgSelect } from 'drizzle-orm/pg-core'
import type { Database } from '../client.js'
import { categories, productCategories, productListItems, products, productTranslations } from '../schema/index.js'
import { localizedProductColumns, productColumns } from './product-detail.js'
import { inChain, productTranslationJoin } from './translations.js'

export interface ProductListShape {
  includeInactive: boolean
  category: boolean
  /** 'few': read matches through the GIN index; 'many': walk ids newest first and filter. */
  search: 'none' | 'few' | 'many'
  /** Rows after a cursor's id only (cursor mode past its first page); the offset is then 0. */
  keyset: boolean
  /** Text shown (and searched) along a chain of locales, the `locales` placeholder (sql/translations.ts). */
  localized: boolean
}

/** The placeholders of every shape (those a shape does not use are ignored); a type, as Drizzle's execute takes a record. */
export type ProductListParams = {
  /** The search's text (searchText), parsed into word prefixes by prefix_tsquery. */
  search: string
  /** The category's slug. */
  category: string
  limit: number
  offset: number
  /** The cursor's product id. */
  after: string
  /** The chain of locales of a localized shape, in order ([] otherwise). */
  locales: string[]
}

// A bigint: postgres.js reads it as text.
const catalogRevision = sql<string>`(select revision from catalog_revision)`
// On a category's page: whether the category has categories under it (its page is then the
// listing's, list.ts), asked once per execution instead of by a statement of its own.
const nestedOf = (shape: ProductListShape) =>
  shape.category ? sql<boolean>`exists (select 1 from categories c where c.parent_id = (select id from categories where slug = ${sql.placeholder('category')}))` : sql<boolean>`false`
/** What a public item is read as when it is sent as stored (listItemJson). */
const storedItemColumns = { id: products.id, body: productListItems.body, inventoryQuantity: products.inventoryQuantity, updatedAt: products.updatedAt }

// The search's text arrives as a parameter and is parsed once per execution (an InitPlan):
// prefix_tsquery() in a generic plan's filter would run again for every row.
const searchQuery = sql`(select prefix_tsquery(${sql.placeholder('search')}::text))`
const searchMatches = sql`${products.searchVector} @@ ${searchQuery}`
// The same test written so no index can answer it: with many matches, walking ids newest first
// and testing each row finds a page fastest, and this keeps a generic plan from choosing the GIN
// index and sorting every match instead.
const searchMatchesWalking = sql`(${searchMatches}) is true`
// With a chain of locales a search also finds the words of the products' translations in it.
const translationMatches = sql`(select ${productTranslations.productId} from ${productTranslations}
  where ${inChain(productTranslations.locale)} and ${productTranslations.searchVector} @@ ${searchQuery})`
// Two GIN reads, the original words' and the translations'.
const localizedSearchMatches = sql`${products.id} in (select ${products.id} from ${products} where ${searchMatches} union ${translationMatches})`
// Each product's translations read by its key as the walk meets it: written as EXISTS, the
// planner read every translation's words first (a hashed subplan, 34 ms a page instead of 2).
const localizedSearchMatchesWalking = sql`(${searchMatches} or (select true from ${productTranslations}
  where ${productTranslations.productId} = ${products.id} and ${inChain(productTranslations.locale)}
  and ${productTranslations.searchVector} @@ ${searchQuery} limit 1)) is true`
const inCategory = and(
  eq(productCategories.productId, products.id),
  eq(productCategories.categoryId, sql`(select id from categories where slug = ${sql.placeholder('category')})`),
)

function filters(shape: Pick<ProductListShape, 'includeInactive'> & { search: SQL | undefined; after?: SQL }): SQL | undefined {
  const conditions: SQL[] = []
  if (!shape.includeInactive) conditions.push(eq(products.isActive, true))
  if (shape.search) conditions.push(shape.search)
  if (shape.after) conditions.push(shape.after)
  return and(...conditions)
}

/** A page of products of this shape, newest first, with the catalog revision it was read at (and, on each row, whether its category has subcategories); prepared as `name`. */
export function productPageStatement(db: Database, shape: ProductListShape, name: string) {
  if (!shape.localized) return walk(db.select({ ...productColumns, revision: catalogRevision, nested: nestedOf(shape) }).from(products).$dynamic(), shape).prepare(name)
  // The page's ids first, then their text along the chain, joined to the page (a subquery with
  // a limit, which the planner keeps whole): joined to products, a generic plan read the
  // translation of every product before cutting the page (1 request a second).
  const page = walk(db.select({ id: products.id }).from(products).$dynamic(), shape).as('page')
  const translation = productTranslationJoin(db, page.id)
  return db
    .select({ ...localizedProductColumns(translation), revision: catalogRevision, nested: nestedOf(shape) })
    .from(page)
    .innerJoin(products, eq(products.id, page.id))
    .leftJoinLateral(translation, sql`true`)
    .orderBy(desc(page.id))
    .prepare(name)
}

/** A page of a public shape (not localized) as its items' stored JSON (listItemJson), with the catalog revision; prepared as `name`. */
export function storedPageStatement(db: Database, shape: ProductListShape, name: string) {
  const query = db.select({ ...storedItemColumns, revision: catalogRevision, nested: nestedOf(shape) }).from(products).$dynamic()
  return walk(query.innerJoin(productListItems, eq(productListItems.productId, products.id)), shape).prepare(name)
}

/** The page's filters, order, limit and offset on a query of products. */
function walk<Query extends PgSelect>(query: Query, shape: ProductListShape): Query {
  const search = shape.localized
    ? { none: undefined, few: localizedSearchMatches, many: localizedSearchMatchesWalking }[shape.search]
    : { none: undefined, few: searchMatches, many: searchMatchesWalking }[shape.search]
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
  return query
}

/** How many products a shape matches (the search as 'many' counts them all), with the catalog revision; prepared as `name`. */
export function productCountStatement(db: Database, shape: ProductListShape, name: string) {
  const query = db.select({ total: sql<number>`count(*)::int`, revision: catalogRevision }).from(products).$dynamic()
  if (shape.category) query.innerJoin(productCategories, inCategory)
  const search = shape.search === 'none' ? undefined : shape.localized ? localizedSearchMatches : searchMatches
  return query.where(filters({ includeInactive: shape.includeInactive, search })).prepare(name)
}

/**
 * The product rows of a page whose ids a listing statement chose (sql/product-listing.ts), in
 * any order (the caller puts them in the page's); localized along the chain `locales` when
 * `localized`. Prepared as `name`.
 */
export function productRowsStatement(db: Database, localized: boolean, name: string) {
  const ids = sql`${products.id} = any(${sql.placeholder('ids')}::uuid[])`
  if (!localized) return db.select(productColumns).from(products).where(ids).prepare(name)
  const translation = productTranslationJoin(db)
  return db.select(localizedProductColumns(translation)).from(products).leftJoinLateral(translation, sql`true`).where(ids).prepare(name)
}

/** The stored public items of the products `ids` (a uuid[] placeholder), in any order; prepared as `name`. */
export function storedItemsStatement(db: Database, name: string) {
  return db
    .select(storedItemColumns)
    .from(products)
    .innerJoin(productListItems, eq(productListItems.productId, products.id))
    .where(sql`${products.id} = any(${sql.placeholder('ids')}::uuid[])`)
    .prepare(name)
}

/** Whether the category with this slug (`slug` placeholder) has categories under it: a row when it has. Prepared as `category_has_children`. */
export function categoryHasChildrenStatement(db: Database) {
  return db
    .select({ id: categories.id })
    .from(categories)
    .where(eq(categories.parentId, sql`(select id from categories where slug = ${sql.placeholder('slug')})`))
    .limit(1)
    .prepare('category_has_children')
}
