/**
 * Promotions: admin CRUD of every promotion, automatic (no code) or by code, and the record of
 * their uses. The rules of their fields are validation.ts's, shared with the coupons API.
 */
import { and, eq, isNotNull, isNull, type SQL } from 'drizzle-orm'
import {
  toMajorUnits,
  type CreatePromotion,
  type ListPromotionsQuery,
  type Promotion,
  type PromotionUsage,
  type PromotionUsageList,
  type UpdatePromotion,
} from '@commerce/domain'
import { promotions, promotionUsages, type Database } from '@commerce/db'
import { notFound } from '../../errors.js'
import { key, keyset, listTable, type PageQuery } from '../../list-cursor.js'
import {
  checkCodeFree,
  checkReferences,
  newPromotionFields,
  promotionColumns,
  promotionFieldsOf,
  updatePromotion,
  withTimesUsed,
  writePromotion,
  type PromotionRow,
} from './validation.js'

function toPromotion(row: PromotionRow): Promotion {
  const fields = promotionFieldsOf(row)
  return {
    id: row.id,
    ...fields,
    name: row.name,
    times_used: row.timesUsed,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

function toUsage(row: typeof promotionUsages.$inferSelect): PromotionUsage {
  return {
    id: row.id,
    order_id: row.orderId,
    payment_id: row.paymentId,
    customer: row.customerKey,
    discount: toMajorUnits(row.discountMinor, row.currency),
    currency: row.currency,
    released: row.releasedAt !== null,
    created_at: row.createdAt.toISOString(),
  }
}

/** Newest first: promotions_created_idx (created_at, id), which the coupons list shares. */
const PROMOTIONS_KEYSET = keyset('promotions', 'desc', [key.time(promotions.createdAt), key.uuid(promotions.id)])
/** A promotion's uses, newest first: promotion_usages_promotion_idx (promotion_id, created_at, id). */
const USAGES_KEYSET = keyset('promotion_usages', 'desc', [key.time(promotionUsages.createdAt), key.uuid(promotionUsages.id)])

export function createPromotionService(db: Database) {
  async function exists(id: string): Promise<boolean> {
    const [row] = await db.select({ id: promotions.id }).from(promotions).where(eq(promotions.id, id))
    return row !== undefined
  }

  return {
    async list(query: ListPromotionsQuery) {
      const conditions: SQL[] = []
      if (query.code !== undefined) conditions.push(eq(promotions.code, query.code.toUpperCase()))
      if (query.is_active !== undefined) conditions.push(eq(promotions.isActive, query.is_active))
      if (query.automatic !== undefined) conditions.push(query.automatic ? isNull(promotions.code) : isNotNull(promotions.code))
      if (query.campaign_id !== undefined) conditions.push(eq(promotions.campaignId, query.campaign_id))
      if (query.type !== undefined) conditions.push(eq(promotions.type, query.type))
      const { rows, meta } = await listTable(db, PROMOTIONS_KEYSET, promotions, and(...conditions), query)
      return { promotions: (await withTimesUsed(db, rows)).map(toPromotion), meta }
    },

    async get(id: string): Promise<Promotion> {
      const rows = await withTimesUsed(db, await db.select().from(promotions).where(eq(promotions.id, id)))
      if (!rows[0]) throw notFound('Promotion')
      return toPromotion(rows[0])
    },

    create(body: CreatePromotion): Promise<Promotion> {
      const fields = newPromotionFields(body)
      const columns = promotionColumns(fields, { noun: 'promotion' })
      return writePromotion(db, 'promotion', async (tx) => {
        await checkReferences(tx, fields, { noun: 'promotion' })
        await checkCodeFree(tx, columns.code, 'promotion')
        const [row] = await tx.insert(promotions).values(columns).returning()
        return toPromotion(row!)
      })
    },

    /** Re-validates the whole promotion as it would be after the change. */
    async update(id: string, body: UpdatePromotion): Promise<Promotion> {
      return toPromotion(await updatePromotion(db, 'promotion', id, body))
    },

    /**
     * Hard delete: carts holding the promotion lose it and its usage rows go with it (foreign-key
     * cascades); orders keep what it took off in their own record.
     */
    async remove(id: string): Promise<void> {
      const deleted = await db.delete(promotions).where(eq(promotions.id, id)).returning({ id: promotions.id })
      if (deleted.length === 0) throw notFound('Promotion')
    },

    /** The promotion's uses, newest first; 404 for an unknown promotion. */
    async usages(id: string, query: PageQuery): Promise<PromotionUsageList> {
      const [found, { rows, meta }] = await Promise.all([exists(id), listTable(db, USAGES_KEYSET, promotionUsages, eq(promotionUsages.promotionId, id), query)])
      if (!found) throw notFound('Promotion')
      return { usages: rows.map(toUsage), meta }
    },
  }
}
