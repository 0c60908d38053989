/**
 * Coupons: admin CRUD, and the rules that keep a coupon's value, currency and dates consistent with
 * its type. A coupon is a promotion with a code and a coupon type (docs/pricing.md); this API sees
 * only those rows.
 */
import { and, count, desc, eq, inArray, isNotNull, type SQL } from 'drizzle-orm'
import {
  COUPON_TYPES,
  percentToPpm,
  ppmToPercent,
  toMajorUnits,
  toMinorUnits,
  type Coupon,
  type CouponType,
  type CreateCoupon,
  type ListCouponsQuery,
  type UpdateCoupon,
} from '@commerce/domain'
import { promotions, isUniqueViolation, type Database, type Executor } from '@commerce/db'
import { conflict, invalidField, notFound } from '../../errors.js'
import { fieldValue, instant, knownCurrency } from '../../fields.js'
import { pageMeta } from '../../list-totals.js'

type CouponRow = typeof promotions.$inferSelect
type CouponColumns = { code: string; type: CouponType } & Pick<
  typeof promotions.$inferInsert,
  'percentOffPpm' | 'amountOffMinor' | 'currency' | 'minSubtotalMinor' | 'startsAt' | 'endsAt' | 'usageLimit' | 'isActive'
>

/** The promotions the coupons API shows: those with a code and a coupon type. */
const isCoupon = and(isNotNull(promotions.code), inArray(promotions.type, [...COUPON_TYPES]))!

/** Every writable field of a coupon, resolved (a create's defaults, or an update merged over the row). */
interface CouponFields {
  code: string
  type: CouponType
  value: number | null
  currency: string | null
  min_subtotal: number | null
  starts_at: string | null
  ends_at: string | null
  usage_limit: number | null
  is_active: boolean
}

function toCoupon(row: CouponRow): Coupon {
  const inCurrency = (minor: number | null) => (minor === null || row.currency === null ? null : toMajorUnits(minor, row.currency))
  return {
    id: row.id,
    code: row.code!,
    type: row.type as CouponType,
    value:
      row.type === 'percentage'
        ? ppmToPercent(row.percentOffPpm ?? 0)
        : row.type === 'fixed_amount'
          ? inCurrency(row.amountOffMinor)
          : null,
    currency: row.currency,
    min_subtotal: inCurrency(row.minSubtotalMinor),
    starts_at: row.startsAt?.toISOString() ?? null,
    ends_at: row.endsAt?.toISOString() ?? null,
    usage_limit: row.usageLimit,
    times_used: row.timesUsed,
    is_active: row.isActive,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

/**
 * The stored columns of a consistent coupon, or a validation error naming the field at fault.
 * `sent` is the fields an update sent (undefined on create): a kept amount is not at fault, so
 * a new currency that cannot hold it blames `currency`.
 */
function couponColumns(fields: CouponFields, sent?: ReadonlySet<string>): CouponColumns {
  const blame = (field: string) => (!sent || sent.has(field) || !sent.has('currency') ? field : 'currency')
  const { type, value, currency } = fields
  if (currency !== null) knownCurrency(currency)
  let percentOffPpm: number | null = null
  let amountOffMinor: number | null = null
  if (type === 'percentage') {
    if (value === null) throw invalidField('value', "Field 'value' is required for percentage coupons")
    if (value <= 0) throw invalidField('value', "Field 'value' must be greater than 0")
    percentOffPpm = fieldValue('value', () => percentToPpm(value))
  } else if (type === 'fixed_amount') {
    if (value === null) throw invalidField('value', "Field 'value' is required for fixed_amount coupons")
    if (currency === null) throw invalidField('currency', "Field 'currency' is required for fixed_amount coupons")
    if (value <= 0) throw invalidField('value', "Field 'value' must be greater than 0")
    amountOffMinor = fieldValue(blame('value'), () => toMinorUnits(value, currency))
  } else if (value !== null) {
    throw invalidField('value', "Field 'value' must be null for free_shipping coupons")
  }

  let minSubtotalMinor: number | null = null
  if (fields.min_subtotal !== null) {
    const minSubtotal = fields.min_subtotal
    if (currency === null) throw invalidField('currency', "Field 'currency' is required when 'min_subtotal' is set")
    minSubtotalMinor = fieldValue(blame('min_subtotal'), () => toMinorUnits(minSubtotal, currency))
  }

  const startsAt = instant('starts_at', fields.starts_at)
  const endsAt = instant('ends_at', fields.ends_at)
  if (startsAt && endsAt && endsAt <= startsAt) {
    throw invalidField('ends_at', "Field 'ends_at' must be after 'starts_at'")
  }

  return {
    code: fields.code.toUpperCase(),
    type,
    percentOffPpm,
    amountOffMinor,
    currency,
    minSubtotalMinor,
    startsAt,
    endsAt,
    usageLimit: fields.usage_limit,
    isActive: fields.is_active,
  }
}

/**
 * An update merged over the current coupon. A new type needs its own value (a percent is not an
 * amount), except free_shipping, which has none: the old value is dropped.
 */
function mergeUpdate(current: Coupon, body: UpdateCoupon): CouponFields {
  const typeChanges = body.type !== undefined && body.type !== current.type
  if (typeChanges && body.type !== 'free_shipping' && body.value === undefined) {
    throw invalidField('value', `Field 'value' is required when changing the type to ${body.type}`)
  }
  const value = body.value !== undefined ? body.value : typeChanges ? null : current.value
  return {
    code: body.code ?? current.code,
    type: body.type ?? current.type,
    value,
    currency: body.currency !== undefined ? body.currency : current.currency,
    min_subtotal: body.min_subtotal !== undefined ? body.min_subtotal : current.min_subtotal,
    starts_at: body.starts_at !== undefined ? body.starts_at : current.starts_at,
    ends_at: body.ends_at !== undefined ? body.ends_at : current.ends_at,
    usage_limit: body.usage_limit !== undefined ? body.usage_limit : current.usage_limit,
    is_active: body.is_active ?? current.is_active,
  }
}

export function createCouponService(db: Database) {
  async function checkCodeFree(tx: Executor, code: string, selfId?: string) {
    const [clash] = await tx.select({ id: promotions.id }).from(promotions).where(eq(promotions.code, code))
    if (clash && clash.id !== selfId) throw conflict(`A coupon with code '${code}' already exists`)
  }

  /** Runs a write; a code clash that slipped past the check (a concurrent create) becomes a 409. */
  async function write<T>(work: (tx: Executor) => Promise<T>): Promise<T> {
    try {
      return await db.transaction(work)
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict('A coupon with this code already exists')
      throw error
    }
  }

  return {
    async list(query: ListCouponsQuery) {
      const page = query.page ?? 1
      const perPage = query.per_page ?? 20
      const conditions: SQL[] = [isCoupon]
      if (query.code !== undefined) conditions.push(eq(promotions.code, query.code.toUpperCase()))
      if (query.is_active !== undefined) conditions.push(eq(promotions.isActive, query.is_active))
      const where = and(...conditions)
      const [rows, [counted]] = await Promise.all([
        db
          .select()
          .from(promotions)
          .where(where)
          .orderBy(desc(promotions.createdAt), desc(promotions.id))
          .limit(perPage)
          .offset((page - 1) * perPage),
        db.select({ total: count() }).from(promotions).where(where),
      ])
      return { coupons: rows.map(toCoupon), meta: pageMeta(page, perPage, counted!.total) }
    },

    async get(id: string): Promise<Coupon> {
      const [row] = await db.select().from(promotions).where(and(eq(promotions.id, id), isCoupon))
      if (!row) throw notFound('Coupon')
      return toCoupon(row)
    },

    create(body: CreateCoupon): Promise<Coupon> {
      const columns = couponColumns({
        code: body.code,
        type: body.type,
        value: body.value ?? null,
        currency: body.currency ?? null,
        min_subtotal: body.min_subtotal ?? null,
        starts_at: body.starts_at ?? null,
        ends_at: body.ends_at ?? null,
        usage_limit: body.usage_limit ?? null,
        is_active: body.is_active ?? true,
      })
      return write(async (tx) => {
        await checkCodeFree(tx, columns.code)
        const [row] = await tx.insert(promotions).values({ ...columns, name: columns.code }).returning()
        return toCoupon(row!)
      })
    },

    /** Re-validates the whole coupon as it would be after the change. */
    update(id: string, body: UpdateCoupon): Promise<Coupon> {
      return write(async (tx) => {
        const [row] = await tx.select().from(promotions).where(and(eq(promotions.id, id), isCoupon)).for('update')
        if (!row) throw notFound('Coupon')
        const columns = couponColumns(mergeUpdate(toCoupon(row), body), new Set(Object.keys(body)))
        if (columns.usageLimit != null && columns.usageLimit < row.timesUsed) {
          throw invalidField('usage_limit', `Field 'usage_limit' cannot be below times_used (${row.timesUsed})`)
        }
        if (columns.code !== row.code) await checkCodeFree(tx, columns.code, id)
        const [updated] = await tx
          .update(promotions)
          .set({ ...columns, ...(row.name === row.code ? { name: columns.code } : {}), updatedAt: new Date() })
          .where(eq(promotions.id, id))
          .returning()
        return toCoupon(updated!)
      })
    },

    /** Hard delete: carts holding the coupon lose it through the foreign key's cascade. */
    async remove(id: string): Promise<void> {
      const deleted = await db.delete(promotions).where(and(eq(promotions.id, id), isCoupon)).returning({ id: promotions.id })
      if (deleted.length === 0) throw notFound('Coupon')
    },
  }
}
