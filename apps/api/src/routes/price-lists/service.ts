/**
 * Price lists (docs/pricing.md): admin CRUD, and the batches of their prices (prices.ts). A list's
 * `status` is worked out at each request from `is_active` and its window (priceListStatus).
 */
import { and, count, eq, getTableColumns, inArray, type SQL } from 'drizzle-orm'
import {
  priceListStatus,
  type CreatePriceList,
  type ListPriceListPricesQuery,
  type ListPriceListsQuery,
  type Price,
  type PriceList,
  type PriceListList,
  type PricePage,
  type UpdatePriceList,
  type UpsertPriceListPrices,
} from '@commerce/domain'
import { customerGroups, priceLists, prices, type Database, type Executor } from '@commerce/db'
import { ApiError, invalidField, notFound } from '../../errors.js'
import { instant } from '../../fields.js'
import { key, keyset, selectList } from '../../list-cursor.js'
import { deletePrice, listPrices, ofPriceList, PRICE_LIST_PRICES_KEYSET, upsertPrices } from './prices.js'

type PriceListRow = typeof priceLists.$inferSelect & { priceCount: number }

/** Newest first: price_lists_created_idx (created_at, id). */
const PRICE_LISTS_KEYSET = keyset('price_lists', 'desc', [key.time(priceLists.createdAt), key.uuid(priceLists.id)])

/** Price lists with their prices counted: one statement, grouped by the list's key. */
function listsWithCount(executor: Executor) {
  return executor
    .select({ ...getTableColumns(priceLists), priceCount: count(prices.id), cursorKey: PRICE_LISTS_KEYSET.cursorKey })
    .from(priceLists)
    .leftJoin(prices, eq(prices.priceListId, priceLists.id))
    .groupBy(priceLists.id)
    .$dynamic()
}

function toPriceList(row: PriceListRow, now: Date): PriceList {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    type: row.type,
    priority: row.priority,
    is_active: row.isActive,
    starts_at: row.startsAt?.toISOString() ?? null,
    ends_at: row.endsAt?.toISOString() ?? null,
    customer_group_ids: row.customerGroupIds,
    price_count: row.priceCount,
    status: priceListStatus(row, now),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

/** The window's two ends, or a 400 naming the one at fault; `ends_at` must come after `starts_at`. */
function windowOf(startsAtText: string | null, endsAtText: string | null) {
  const startsAt = instant('starts_at', startsAtText)
  const endsAt = instant('ends_at', endsAtText)
  if (startsAt && endsAt && endsAt <= startsAt) throw invalidField('ends_at', "Field 'ends_at' must be after 'starts_at'")
  return { startsAt, endsAt }
}

/**
 * Every group must exist (400 naming each `customer_group_ids[i]` that does not). The groups are
 * key-share locked until the write commits, so a group deleted at the same time either waits for
 * this list (and is then taken out of it) or is already gone here.
 */
async function checkGroups(tx: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return
  const found = await tx.select({ id: customerGroups.id }).from(customerGroups).where(inArray(customerGroups.id, [...ids])).for('key share')
  const known = new Set(found.map((group) => group.id))
  const details = ids.flatMap((id, index) => {
    const field = `customer_group_ids[${index}]`
    return known.has(id) ? [] : [{ field, message: `Field '${field}' names no customer group` }]
  })
  if (details.length > 0) throw new ApiError('validation_error', details.map((detail) => detail.message).join('; '), details)
}

export function createPriceListService(db: Database) {
  async function read(executor: Executor, id: string): Promise<PriceList> {
    const [row] = await listsWithCount(executor).where(eq(priceLists.id, id))
    if (!row) throw notFound('Price list')
    return toPriceList(row, new Date())
  }

  /** The list, locked for the rest of the transaction: `update` to change it, `key share` to keep it while its prices are written. */
  async function lock(tx: Executor, id: string, strength: 'update' | 'key share') {
    const [row] = await tx.select().from(priceLists).where(eq(priceLists.id, id)).for(strength)
    if (!row) throw notFound('Price list')
    return row
  }

  return {
    async list(query: ListPriceListsQuery): Promise<PriceListList> {
      const conditions: SQL[] = []
      if (query.is_active !== undefined) conditions.push(eq(priceLists.isActive, query.is_active))
      if (query.type !== undefined) conditions.push(eq(priceLists.type, query.type))
      const where = and(...conditions)
      const { rows, meta } = await selectList(PRICE_LISTS_KEYSET, query, listsWithCount(db), where, () => db.$count(priceLists, where))
      const now = new Date()
      return { price_lists: rows.map((row) => toPriceList(row, now)), meta }
    },

    get: (id: string) => read(db, id),

    create(body: CreatePriceList): Promise<PriceList> {
      const { startsAt, endsAt } = windowOf(body.starts_at ?? null, body.ends_at ?? null)
      return db.transaction(async (tx) => {
        const customerGroupIds = body.customer_group_ids ?? []
        await checkGroups(tx, customerGroupIds)
        const [row] = await tx
          .insert(priceLists)
          .values({
            name: body.name,
            description: body.description ?? null,
            type: body.type ?? 'sale',
            priority: body.priority ?? 0,
            isActive: body.is_active ?? true,
            startsAt,
            endsAt,
            customerGroupIds,
          })
          .returning()
        return toPriceList({ ...row!, priceCount: 0 }, new Date())
      })
    },

    /** The window is checked as it will be: a new `ends_at` against the kept `starts_at`, and the other way round. */
    update(id: string, body: UpdatePriceList): Promise<PriceList> {
      return db.transaction(async (tx) => {
        const current = await lock(tx, id, 'update')
        const { startsAt, endsAt } = windowOf(
          body.starts_at !== undefined ? body.starts_at : (current.startsAt?.toISOString() ?? null),
          body.ends_at !== undefined ? body.ends_at : (current.endsAt?.toISOString() ?? null),
        )
        if (body.customer_group_ids !== undefined) await checkGroups(tx, body.customer_group_ids)
        await tx
          .update(priceLists)
          .set({
            name: body.name,
            description: body.description,
            type: body.type,
            priority: body.priority,
            isActive: body.is_active,
            startsAt,
            endsAt,
            customerGroupIds: body.customer_group_ids,
            updatedAt: new Date(),
          })
          .where(eq(priceLists.id, id))
        return read(tx, id)
      })
    },

    /** Its prices go with it (the foreign key's cascade). */
    async remove(id: string): Promise<void> {
      const deleted = await db.delete(priceLists).where(eq(priceLists.id, id)).returning({ id: priceLists.id })
      if (deleted.length === 0) throw notFound('Price list')
    },

    async listPrices(id: string, query: ListPriceListPricesQuery): Promise<PricePage> {
      await read(db, id)
      return listPrices(db, PRICE_LIST_PRICES_KEYSET, ofPriceList(id), { productId: query.product_id, currency: query.currency }, query)
    },

    upsertPrices(id: string, body: UpsertPriceListPrices): Promise<{ prices: Price[] }> {
      return db.transaction(async (tx) => {
        await lock(tx, id, 'key share')
        return { prices: await upsertPrices(tx, body.prices, { kind: 'price_list', priceListId: id }) }
      })
    },

    async deletePrice(id: string, priceId: string): Promise<void> {
      await read(db, id)
      await deletePrice(db, ofPriceList(id), priceId)
    },
  }
}
