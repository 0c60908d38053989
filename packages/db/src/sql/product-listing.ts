/**
 * The storefront's filtered, sorted and faceted product lists (docs/catalog.md, "Filters, sorting
 * and facets"), over the listing read model (schema/listing.ts): one statement for a page of ids
 * with the total, one for the facets. Each is written for the shape of its request (how many
 * filters of each kind, which sort) with the values as parameters, and prepared per shape.
 *
 * Facets are disjunctive: a filter's own counts ignore that filter's selection (what a sidebar
 * needs to offer "or"). In one pass each row notes which filters it fails; a row failing none
 * counts for every facet, a row failing exactly one counts for that one's facet only.
 */
import { currencyExponent } from '@commerce/domain'
import type { SqlClient } from '../transaction.js'

/** A filter over terms (`tag:`, `type:`, `vendor:`, `opt:<name>:`, `attr:<key>:`): a row matches when it has any of them. */
export interface TermFilter {
  /** What the group's terms begin with, lower case: `tag:`, `opt:size:`. */
  prefix: string
  /** Whole terms, lower case (`tag:summer`). */
  terms: string[]
}

/** A range over a number or date attribute (dates as yyyymmdd); either end may be open. */
export interface RangeFilter {
  key: string
  min: number | null
  max: number | null
}

export interface ListingFilter {
  includeInactive: boolean
  /** The staff's filter on status (`scheduled`: active, not yet published). */
  status: 'draft' | 'active' | 'archived' | 'scheduled' | null
  /** A category's id: its products and its descendants'. */
  category: string | null
  /** A collection's id. */
  collection: string | null
  /** The search's text (searchText), matched as word prefixes against the products' words (prefix_tsquery). */
  search: string | null
  /** The chain of locales whose translations a search also matches (none: the original only). */
  searchLocales: string[]
  terms: TermFilter[]
  ranges: RangeFilter[]
  /** Major units (19.99) of the price read: the market's, else each product's own in its own currency. */
  price: { min: number | null; max: number | null } | null
  available: boolean | null
  onSale: boolean | null
  /** The market: prices in this currency (products not sold in it are left out); null: each product's own. */
  currency: string | null
  /** The reader's customer (their groups' price lists apply); null: a guest's (lists without groups). */
  customerId: string | null
}

export const LISTING_SORTS = ['relevance', 'newest', 'title', 'price_asc', 'price_desc', 'best_selling', 'manual'] as const
export type ListingSort = (typeof LISTING_SORTS)[number]

/** A row's place in a sort, as a cursor carries it: the sort's value (none for newest) and the product's id. */
export type ListingKey = [value: string | number | null, id: string]

export interface ListingWindow {
  limit: number
  offset: number
  /** Rows after this key (cursor mode). */
  after: ListingKey | null
}

export interface ListingPage {
  /** With the price read in the market (major units) and whether it is on sale there, when the filter names one. */
  rows: { id: string; key: ListingKey; price: number | null; onSale: boolean | null }[]
  /** Every row matching (page mode); null in cursor mode. */
  total: number | null
}

/** Counts and ranges of a list's facets; terms are lower case (`tag:summer`). */
export interface ListingFacets {
  total: number
  terms: { term: string; count: number }[]
  available: number
  onSale: number
  /** Major units, of the market (else each product's own currency). */
  price: { min: number; max: number } | null
  ranges: { key: string; min: number; max: number }[]
}

/** A statement's text and its parameters, built together so that $n always matches. */
class Statement {
  readonly params: unknown[] = []
  param(value: unknown, cast: string): string {
    this.params.push(value)
    return `$${this.params.length}::${cast}`
  }
}

/** The keys of the filterable, public number and date attributes (what `numbers` holds). */
const NUMBER_ATTRIBUTES = `select key from attribute_definitions where filterable and public and type in ('integer', 'decimal', 'date')`

/** The applicable price lists of the reader, in the market's currency (a CTE). */
const LISTS = (s: Statement, filter: ListingFilter) => `lists as (
  select id, type, priority from price_lists
  where is_active and (starts_at is null or starts_at <= now()) and (ends_at is null or ends_at > now())
    and (customer_group_ids = '{}' or customer_group_ids && array(select group_id from customer_group_members where customer_id = ${s.param(filter.customerId, 'uuid')}))),
listed as materialized (
  select distinct pr.product_id from prices pr join lists on lists.id = pr.price_list_id
  where pr.currency = ${s.param(filter.currency, 'text')} and pr.min_quantity = 1)`

/**
 * The price a reader pays, in major units (what filters, sorts and the price facet read): the
 * market's base price, an override list's in its stead, the lowest sale list's if lower; without a
 * market, each product's own.
 */
function priceOf(s: Statement, filter: ListingFilter, exponent: number): string {
  if (filter.currency === null) return '(l.price_minor::numeric / power(10::numeric, currency_exponent(l.currency)))'
  const currency = s.param(filter.currency, 'text')
  const override = `(select pr.amount_minor from prices pr join lists on lists.id = pr.price_list_id and lists.type = 'override'
      where pr.product_id = l.product_id and pr.currency = ${currency} and pr.min_quantity = 1 order by lists.priority desc, pr.amount_minor limit 1)`
  const sale = `(select min(pr.amount_minor) from prices pr join lists on lists.id = pr.price_list_id and lists.type = 'sale'
      where pr.product_id = l.product_id and pr.currency = ${currency} and pr.min_quantity = 1)`
  // Only the products a list prices read the lists (a hashed set): the others pay their base price.
  const divisor = 10 ** exponent
  return `((case when l.product_id in (select product_id from listed) then least(coalesce(${override}, lp.amount_minor), ${sale}) else lp.amount_minor end)::numeric / ${divisor})`
}

/** FROM and WHERE of the rows a list starts from (before the filters). */
function baseOf(s: Statement, filter: ListingFilter, sort: ListingSort): { from: string; where: string[] } {
  let from = 'product_listing l'
  const where: string[] = []
  if (!filter.includeInactive) where.push('l.public')
  if (filter.currency !== null) from += ` join product_listing_prices lp on lp.product_id = l.product_id and lp.currency = ${s.param(filter.currency, 'text')}`
  if (filter.category !== null) where.push(`l.category_ids @> array[${s.param(filter.category, 'uuid')}]`)
  if (filter.status !== null) {
    where.push(
      filter.status === 'scheduled'
        ? `exists (select 1 from products sp where sp.id = l.product_id and sp.status = 'active' and not sp.is_active)`
        : `exists (select 1 from products sp where sp.id = l.product_id and sp.status = ${s.param(filter.status, 'product_status')})`,
    )
  }
  if (filter.collection !== null) {
    from += ` join collection_products cp on cp.product_id = l.product_id and cp.collection_id = ${s.param(filter.collection, 'uuid')}`
  }
  if (filter.search !== null || sort === 'relevance') from += ' join products p on p.id = l.product_id'
  if (filter.search !== null) {
    const query = `(select prefix_tsquery(${s.param(filter.search, 'text')}))`
    where.push(
      filter.searchLocales.length === 0
        ? `p.search_vector @@ ${query}`
        : `(p.search_vector @@ ${query} or exists (select 1 from product_translations t where t.product_id = l.product_id
            and t.locale = any(${s.param(filter.searchLocales, 'text[]')}) and t.search_vector @@ ${query}))`,
    )
  }
  return { from, where }
}

/** Each filter's test of a row, in the order of ListingFilter's groups. */
function testsOf(s: Statement, filter: ListingFilter, price: string): { test: string; kind: 'term' | 'range' | 'price' | 'available' | 'sale'; index: number }[] {
  const tests: ReturnType<typeof testsOf> = []
  filter.terms.forEach((group, index) => tests.push({ test: `l.terms && ${s.param(group.terms, 'text[]')}`, kind: 'term', index }))
  filter.ranges.forEach((range, index) => {
    const bounds = [range.min === null ? null : `v::numeric >= ${s.param(range.min, 'numeric')}`, range.max === null ? null : `v::numeric <= ${s.param(range.max, 'numeric')}`].filter(Boolean)
    tests.push({
      test: `exists (select 1 from jsonb_array_elements_text(l.numbers -> ${s.param(range.key, 'text')}) n(v) where ${bounds.length ? bounds.join(' and ') : 'true'})`,
      kind: 'range',
      index,
    })
  })
  if (filter.price) {
    const bounds = [filter.price.min === null ? null : `${price} >= ${s.param(filter.price.min, 'numeric')}`, filter.price.max === null ? null : `${price} <= ${s.param(filter.price.max, 'numeric')}`]
    tests.push({ test: bounds.filter(Boolean).join(' and ') || 'true', kind: 'price', index: 0 })
  }
  if (filter.available !== null) tests.push({ test: filter.available ? 'l.available' : 'not l.available', kind: 'available', index: 0 })
  if (filter.onSale !== null) {
    const sale = filter.currency === null ? 'l.on_sale' : 'lp.on_sale'
    tests.push({ test: filter.onSale ? sale : `not ${sale}`, kind: 'sale', index: 0 })
  }
  return tests
}

/** What a sort orders by: its value (null: the id alone) and the direction. */
function orderOf(sort: ListingSort, price: string, search: string | null, s: Statement): { value: string | null; descending: boolean } {
  switch (sort) {
    case 'newest':
      return { value: null, descending: true }
    case 'title':
      return { value: 'l.title_key', descending: false }
    case 'price_asc':
      return { value: price, descending: false }
    case 'price_desc':
      return { value: price, descending: true }
    case 'best_selling':
      return { value: 'l.sold', descending: true }
    case 'manual':
      return { value: 'cp.position', descending: false }
    case 'relevance':
      return { value: `ts_rank(p.search_vector, (select prefix_tsquery(${s.param(search ?? '', 'text')})))::float8`, descending: true }
  }
}

/** A page of the ids of the products matching every filter, in the sort's order, with the total in page mode. */
export async function listingPage(client: SqlClient, filter: ListingFilter, sort: ListingSort, window: ListingWindow): Promise<ListingPage> {
  const s = new Statement()
  const lists = filter.currency === null ? '' : `with ${LISTS(s, filter)} `
  const price = priceOf(s, filter, filter.currency === null ? 2 : currencyExponent(filter.currency))
  const base = baseOf(s, filter, sort)
  const where = [...base.where, ...testsOf(s, filter, price).map((test) => test.test)]
  const order = orderOf(sort, price, filter.search, s)
  const direction = order.descending ? 'desc' : 'asc'
  if (window.after) {
    const [value, id] = window.after
    const comparison = order.descending ? '<' : '>'
    where.push(
      order.value === null
        ? `l.product_id ${comparison} ${s.param(id, 'uuid')}`
        : `(${order.value}, l.product_id) ${comparison} (${s.param(value, sort === 'title' ? 'text' : 'numeric')}, ${s.param(id, 'uuid')})`,
    )
  }
  const market = filter.currency === null ? 'null::float8 as price, null::boolean as on_sale' : `${price}::float8 as price, lp.on_sale`
  const select = `select l.product_id as id, ${order.value ?? 'null'} as key, ${market} from ${base.from} ${where.length ? `where ${where.join(' and ')}` : ''}`
  const limit = `limit ${s.param(window.limit, 'int')} offset ${s.param(window.offset, 'int')}`
  // Past a cursor no total: the rows in the sort's order, where an index can walk to the page.
  // Else every match is read for the total anyway: read once through the filters' indexes, counted,
  // and the page cut by a top-N sort (an index walk in the sort's order under a count read the
  // whole catalog to find a category's few matches). One row at least, carrying the total.
  const text = window.after
    ? `${lists}${select} order by ${order.value === null ? '' : `${order.value} ${direction}, `}l.product_id ${direction} ${limit}`
    : `${lists ? `${lists}, ` : 'with '}matched as materialized (${select})
      select page.id, page.key, total.count::int as total, page.price, page.on_sale
      from (select count(*) from matched) total
      left join lateral (select * from matched order by ${order.value === null ? '' : `key ${direction}, `}id ${direction} ${limit}) page on true`
  const found = await client.unsafe<{ id: string | null; key: string | number | null; total: number | null; price: number | null; on_sale: boolean | null }[]>(text, s.params as never[], { prepare: true })
  const total = window.after ? null : (found[0]?.total ?? 0)
  const rows = found.filter((row): row is typeof row & { id: string } => row.id !== null)
  // bigint and numeric values arrive as text; the title's is text.
  const keyOf = (value: string | number | null): string | number | null => (value === null || sort === 'title' ? value : Number(value))
  return { rows: rows.map((row) => ({ id: row.id, key: [keyOf(row.key), row.id] as ListingKey, price: row.price, onSale: row.on_sale })), total }
}

/**
 * The facets of a list: the total, the count of every term (disjunctive), of available and on-sale
 * products, and the price and number ranges (each range over the rows that pass every other
 * filter).
 */
export async function listingFacets(client: SqlClient, filter: ListingFilter): Promise<ListingFacets> {
  const s = new Statement()
  const price = priceOf(s, filter, filter.currency === null ? 2 : currencyExponent(filter.currency))
  const base = baseOf(s, filter, 'newest')
  const tests = testsOf(s, filter, price)
  const ctes = filter.currency === null ? [] : [LISTS(s, filter)]
  const marks = tests.map((test, i) => `(${test.test}) as m${i}`)
  const fails = tests.length === 0 ? '0' : tests.map((_, i) => `(not m${i})::int`).join(' + ')
  /** Rows failing none of the filters, or only one of `kind`: those counting for its facet. */
  const countingFor = (kinds: string[]) => {
    const failing = tests.flatMap((test, i) => (kinds.includes(test.kind) ? [`not m${i}`] : []))
    return failing.length === 0 ? 'fails = 0' : `(fails = 0 or (fails = 1 and (${failing.join(' or ')})))`
  }
  // Without a market the price in major units is worked out only for the rows it is read from.
  const priceColumns = filter.currency === null ? 'l.price_minor, l.currency' : `${price} as price`
  const priceRead = filter.currency === null ? '(price_minor::numeric / power(10::numeric, currency_exponent(currency)))' : 'price'
  // Each row's tests run once (offset 0 keeps the planner from copying them into every use), and
  // its terms and numbers are kept only where a facet reads them: a large result's rows that fail
  // two filters cost no copy and no unnesting.
  ctes.push(`marked as materialized (select fails, available, on_sale, ${filter.currency === null ? 'price_minor, currency' : 'price'}
      ${tests.length ? `, ${tests.map((_, i) => `m${i}`).join(', ')}` : ''},
      case when ${countingFor(['term'])} then terms end as terms, case when ${countingFor(['range'])} then numbers end as numbers
    from (select *, ${fails} as fails from (select l.terms, l.numbers, l.available, ${filter.currency === null ? 'l.on_sale' : 'lp.on_sale'} as on_sale, ${priceColumns}
      ${marks.length ? `, ${marks.join(', ')}` : ''} from ${base.from} ${base.where.length ? `where ${base.where.join(' and ')}` : ''} offset 0) tested) scored)`)
  const termOwners = tests.flatMap((test, i) => (test.kind === 'term' ? [`(not m${i} and starts_with(t, ${s.param(filter.terms[test.index]!.prefix, 'text')}))`] : []))
  const totals = `select 'totals' as kind, null::text as key, count(*) filter (where fails = 0)::float8 as a,
      count(*) filter (where available and ${countingFor(['available'])})::float8 as b, count(*) filter (where on_sale and ${countingFor(['sale'])})::float8 as c,
      min(${priceRead}) filter (where ${countingFor(['price'])})::float8 as d, max(${priceRead}) filter (where ${countingFor(['price'])})::float8 as e from marked`
  // A number or date attribute's facet is its range: its thousands of distinct values are not counted.
  const termCounts = `select 'term', t, count(*)::float8, null, null, null, null from marked, unnest(terms) t
        where (fails = 0 ${termOwners.length ? `or ${termOwners.join(' or ')}` : ''})
          and not (starts_with(t, 'attr:') and split_part(t, ':', 2) = any(array(${NUMBER_ATTRIBUTES})))
        group by t`
  // Every number of the rows passing all filters; of a row failing only a range, that range's
  // numbers alone, read by key (the ranges of one key are merged below).
  const rangeRows = [
    `select 'range', e.key, min(v::numeric)::float8, max(v::numeric)::float8, null, null, null
        from marked, jsonb_each(numbers) e, jsonb_array_elements_text(e.value) v where fails = 0 group by e.key`,
    ...tests.flatMap((test, i) => {
      if (test.kind !== 'range') return []
      const key = s.param(filter.ranges[test.index]!.key, 'text')
      return [`select 'range', ${key}, min(v::numeric)::float8, max(v::numeric)::float8, null, null, null
        from marked, jsonb_array_elements_text(numbers -> ${key}) v where fails = 1 and not m${i}`]
    }),
  ]
  const text = `with ${ctes.join(',\n')}\n${[totals, termCounts, ...rangeRows].join('\nunion all ')}`
  type Row = { kind: string; key: string | null; a: number | null; b: number | null; c: number | null; d: number | null; e: number | null }
  const rows = await client.unsafe<Row[]>(text, s.params as never[], { prepare: true })
  const facets: ListingFacets = { total: 0, terms: [], available: 0, onSale: 0, price: null, ranges: [] }
  for (const row of rows) {
    if (row.kind === 'totals') {
      facets.total = row.a ?? 0
      facets.available = row.b ?? 0
      facets.onSale = row.c ?? 0
      facets.price = row.d === null || row.e === null ? null : { min: row.d, max: row.e }
    } else if (row.kind === 'term') facets.terms.push({ term: row.key!, count: row.a! })
    else if (row.kind === 'range' && row.a !== null && row.b !== null) {
      const known = facets.ranges.find((range) => range.key === row.key)
      if (known) Object.assign(known, { min: Math.min(known.min, row.a), max: Math.max(known.max, row.b) })
      else facets.ranges.push({ key: row.key!, min: row.a, max: row.b })
    }
  }
  facets.terms.sort((a, b) => (a.term < b.term ? -1 : a.term > b.term ? 1 : 0))
  return facets
}

/** How each term is written where it was first seen ("Summer" for `tag:summer`), and the options' names (`opt:size`). */
export async function facetLabelsOf(client: SqlClient, terms: readonly string[]): Promise<Map<string, string>> {
  if (terms.length === 0) return new Map()
  const rows = await client.unsafe<{ term: string; label: string }[]>('select term, label from facet_labels where term = any($1::text[])', [terms as string[]], { prepare: true })
  return new Map(rows.map((row) => [row.term, row.label]))
}

/**
 * Runs a batch of writes to these products (in the caller's transaction) with the listing's row
 * triggers held back, and the stored list items' (migration 0045), then refreshes both once: an
 * import's batch otherwise pays a refresh for every product, variant and price it writes, and for
 * every stock level it moves.
 */
export async function refreshingListingOnce<T>(tx: SqlClient, productIds: readonly string[], writes: () => Promise<T>): Promise<T> {
  await tx.unsafe('set local commerce.defer_listing = on')
  const result = await writes()
  await tx.unsafe('set local commerce.defer_listing = off')
  await tx.unsafe('select refresh_product_listing($1::uuid[]), refresh_product_list_items($1::uuid[])', [productIds as string[]], { prepare: true })
  return result
}
