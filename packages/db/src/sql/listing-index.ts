/**
 * What an API instance's listing index (apps/api routes/products/listing-index.ts) reads: every
 * public listing row with the collection memberships, at one snapshot, and then, look by look,
 * the products changed since the snapshot it last read (listing_changes, migration 0040).
 */
import type postgres from 'postgres'
import type { SqlClient } from '../transaction.js'

/** A public product's listing row as the index keeps it. */
export interface IndexedListingRow {
  id: string
  titleKey: string
  currency: string
  priceMinor: number
  onSale: boolean
  available: boolean
  terms: string[]
  /** A number or date attribute's values (dates as yyyymmdd), by key. */
  numbers: Record<string, number[]>
  categoryIds: string[]
  sold: number
}

export interface IndexedMembership {
  collectionId: string
  productId: string
  position: number
}

export interface ListingIndexRead {
  /** The snapshot the rows were read at (pg_snapshot text): the next look reads what committed after it. */
  snapshot: string
  /**
   * The catalog revision then (catalog_revision, as text): it moves with every change of a
   * category's, a collection's or an attribute definition's slug, key or what a listing shows of
   * them (migrations 0001 and 0043), so what the index remembers of those is good while it stays.
   */
  revision: string
  rows: IndexedListingRow[]
  memberships: IndexedMembership[]
  /** The keys of the filterable, public number and date attributes (their facets are ranges). */
  numberKeys: string[]
}

export interface ListingChangesRead extends ListingIndexRead {
  /** The products changed: each is in `rows` again if it is still public, else to be dropped. */
  changed: string[]
}

const ROWS = `select product_id as id, title_key as "titleKey", currency, price_minor::float8 as "priceMinor", on_sale as "onSale", available, terms,
    numbers, category_ids as "categoryIds", sold from product_listing where public`
const MEMBERSHIPS = 'select collection_id as "collectionId", product_id as "productId", position from collection_products'
const NUMBER_KEYS = `select key from attribute_definitions where filterable and public and type in ('integer', 'decimal', 'date')`

const REVISION = '(select revision::text from catalog_revision) as revision'

const TITLE_ORDER = 'select product_id as id from product_listing where public order by title_key, product_id'

/** The public products in the title sort's order (the database's collation), for the index's title ranks. */
export async function readTitleOrder(client: SqlClient): Promise<string[]> {
  const rows = await client.unsafe<{ id: string }[]>(TITLE_ORDER, [], { prepare: true })
  return rows.map((row) => row.id)
}

/** The whole index, read at one snapshot. */
export async function readListingIndex(sql: postgres.Sql): Promise<ListingIndexRead> {
  return sql.begin('isolation level repeatable read read only', async (tx) => {
    const [head] = await tx.unsafe<{ snapshot: string; revision: string }[]>(`select pg_current_snapshot()::text as snapshot, ${REVISION}`)
    const rows = await tx.unsafe<IndexedListingRow[]>(ROWS)
    const memberships = await tx.unsafe<IndexedMembership[]>(MEMBERSHIPS)
    const numberKeys = (await tx.unsafe<{ key: string }[]>(NUMBER_KEYS)).map((row) => row.key)
    return { snapshot: head!.snapshot, revision: head!.revision, rows: [...rows], memberships: [...memberships], numberKeys }
  })
}

// The changes visible now that were not at `$1`: committed since (a transaction older than the
// snapshot's xmin had ended by then, so it cannot be among them).
const CHANGED = `select pg_current_snapshot()::text as snapshot, ${REVISION}, coalesce((select array_agg(distinct product_id) from listing_changes
    where xid >= pg_snapshot_xmin($1::pg_snapshot) and not pg_visible_in_snapshot(xid, $1::pg_snapshot)), '{}') as changed`

/**
 * The products changed since `snapshot`, with their rows and memberships now (read after the new
 * snapshot, so possibly newer than it: the next look reads those products again).
 */
export async function readListingChanges(client: SqlClient, snapshot: string): Promise<ListingChangesRead> {
  const [head] = await client.unsafe<{ snapshot: string; revision: string; changed: string[] }[]>(CHANGED, [snapshot], { prepare: true })
  const { snapshot: now, revision, changed } = head!
  if (changed.length === 0) return { snapshot: now, revision, changed, rows: [], memberships: [], numberKeys: [] }
  const rows = await client.unsafe<IndexedListingRow[]>(`${ROWS} and product_id = any($1::uuid[])`, [changed], { prepare: true })
  const memberships = await client.unsafe<IndexedMembership[]>(`${MEMBERSHIPS} where product_id = any($1::uuid[])`, [changed], { prepare: true })
  const numberKeys = (await client.unsafe<{ key: string }[]>(NUMBER_KEYS, [], { prepare: true })).map((row) => row.key)
  return { snapshot: now, revision, changed, rows: [...rows], memberships: [...memberships], numberKeys }
}

/** How long listing_changes keeps a change: an index that looked longer ago reads everything again (listing-index.ts: FULL_READ_AFTER_MS). */
export const LISTING_CHANGES_RETENTION_S = 3600
export const OLD_LISTING_CHANGES_BATCH = 10_000

const DELETE_OLD_CHANGES = `with old as (select ctid from listing_changes where at < now() - make_interval(secs => ${LISTING_CHANGES_RETENTION_S}) limit ${OLD_LISTING_CHANGES_BATCH})
  , deleted as (delete from listing_changes c using old where c.ctid = old.ctid returning 1)
  select count(*)::int as "deleted" from deleted`

/** Deletes up to a batch of the changes older than the retention; how many went. */
export async function deleteOldListingChanges(client: SqlClient): Promise<number> {
  const [row] = await client.unsafe<{ deleted: number }[]>(DELETE_OLD_CHANGES, [], { prepare: true })
  return row!.deleted
}
