/**
 * Coupons: admin CRUD. A coupon is a promotion with a code and a coupon type (docs/promotions.md);
 * this API sees only those rows, and keeps them consistent with the promotions' own rules
 * (../promotions/validation.ts), the same for both APIs.
 */
import { and, eq, inArray, isNotNull, type SQL } from 'drizzle-orm'
import {
  COUPON_TYPES,
  toMajorUnits,
  type Coupon,
  type CouponType,
  type CreateCoupon,
  type ListCouponsQuery,
  type UpdateCoupon,
} from '@commerce/domain'
import { promotions, type Database } from '@commerce/db'
import { notFound } from '../../errors.js'
import { key, keyset, listTable } from '../../list-cursor.js'
import {
  checkCodeFree,
  newPromotionFields,
  promotionColumns,
  valueOf,
  updatePromotion,
  withTimesUsed,
  writePromotion,
  type PromotionRow,
} from '../promotions/validation.js'

/** The promotions the coupons API shows: those with a code and a coupon type. */
const isCoupon = and(isNotNull(promotions.code), inArray(promotions.type, [...COUPON_TYPES]))!

function toCoupon(row: PromotionRow): Coupon {
  return {
    id: row.id,
    code: row.code!,
    type: row.type as CouponType,
    value: valueOf(row),
    currency: row.currency,
    min_subtotal: row.minSubtotalMinor === null || row.currency === null ? null : toMajorUnits(row.minSubtotalMinor, row.currency),
    starts_at: row.startsAt?.toISOString() ?? null,
    ends_at: row.endsAt?.toISOString() ?? null,
    usage_limit: row.usageLimit,
    times_used: row.timesUsed,
    is_active: row.isActive,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

/** Newest first: promotions_created_idx (created_at, id). */
const COUPONS_KEYSET = keyset('coupons', 'desc', [key.time(promotions.createdAt), key.uuid(promotions.id)])

export function createCouponService(db: Database) {
  return {
    async list(query: ListCouponsQuery) {
      const conditions: SQL[] = [isCoupon]
      if (query.code !== undefined) conditions.push(eq(promotions.code, query.code.toUpperCase()))
      if (query.is_active !== undefined) conditions.push(eq(promotions.isActive, query.is_active))
      const { rows, meta } = await listTable(db, COUPONS_KEYSET, promotions, and(...conditions), query)
      return { coupons: (await withTimesUsed(db, rows)).map(toCoupon), meta }
    },

    async get(id: string): Promise<Coupon> {
      const rows = await withTimesUsed(db, await db.select().from(promotions).where(and(eq(promotions.id, id), isCoupon)))
      if (!rows[0]) throw notFound('Coupon')
      return toCoupon(rows[0])
    },

    create(body: CreateCoupon): Promise<Coupon> {
      const columns = promotionColumns(newPromotionFields(body), { noun: 'coupon' })
      return writePromotion(db, 'coupon', async (tx) => {
        await checkCodeFree(tx, columns.code, 'coupon')
        const [row] = await tx.insert(promotions).values(columns).returning()
        return toCoupon(row!)
      })
    },

    /** Re-validates the whole promotion as it would be after the change, by the promotions' rules. */
    async update(id: string, body: UpdateCoupon): Promise<Coupon> {
      return toCoupon(await updatePromotion(db, 'coupon', id, body, isCoupon))
    },

    /** Hard delete: carts holding the coupon lose it through the foreign key's cascade. */
    async remove(id: string): Promise<void> {
      const deleted = await db.delete(promotions).where(and(eq(promotions.id, id), isCoupon)).returning({ id: promotions.id })
      if (deleted.length === 0) throw notFound('Coupon')
    },
  }
}
