/**
 * The rules a promotion's fields keep, and the columns that store them: the one validator of the
 * promotions API and of the coupons API (a coupon is a promotion with a code and a coupon type,
 * docs/promotions.md). A refusal names the field at fault and calls the record what the caller's
 * API calls it ("coupon" or "promotion").
 */
import { and, count, eq, inArray, isNull, type SQL } from 'drizzle-orm'
import {
  percentToPpm,
  ppmToPercent,
  toMajorUnits,
  toMinorUnits,
  type CreatePromotion,
  type Promotion,
  type PromotionStacking,
  type PromotionType,
  type UpdatePromotion,
} from '@commerce/domain'
import {
  campaigns,
  categories,
  customerGroups,
  isUniqueViolation,
  pgConstraintOf,
  products,
  promotions,
  promotionUsages,
  type Database,
  type Executor,
} from '@commerce/db'
import { conflict, invalidField, notFound } from '../../errors.js'
import { fieldValue, instant, knownCurrency } from '../../fields.js'

export type PromotionRow = typeof promotions.$inferSelect
export type PromotionColumns = Required<Omit<typeof promotions.$inferInsert, 'id' | 'timesUsed' | 'createdAt' | 'updatedAt'>>

/** What the caller's API calls the record in its refusals. */
export type PromotionNoun = 'coupon' | 'promotion'

/** Every writable field of a promotion as the API names them, resolved: a create's defaults, or an update merged over the promotion. */
export interface PromotionFields {
  code: string | null
  /** Null only for an automatic promotion created without one: refused. */
  name: string | null
  description: string | null
  type: PromotionType
  value: number | null
  currency: string | null
  min_subtotal: number | null
  starts_at: string | null
  ends_at: string | null
  usage_limit: number | null
  per_customer_limit: number | null
  is_active: boolean
  stacking: PromotionStacking
  conditions: Promotion['conditions']
  target: Promotion['target']
  buy_x_get_y: Promotion['buy_x_get_y']
  campaign_id: string | null
}

/** An amount of the row's currency in major units; null when there is none. */
function majorUnitsOf(row: PromotionRow, minor: number | null): number | null {
  return minor === null || row.currency === null ? null : toMajorUnits(minor, row.currency)
}

/** The API's `value` of a stored promotion: the percent off, the amount off in its currency, or null. */
export function valueOf(row: PromotionRow): number | null {
  if (row.type === 'percentage' || row.type === 'buy_x_get_y') return ppmToPercent(row.percentOffPpm ?? 0)
  if (row.type === 'fixed_amount') return majorUnitsOf(row, row.amountOffMinor)
  return null
}

/** The writable fields of a stored promotion, as the API shows them. */
export function promotionFieldsOf(row: PromotionRow): PromotionFields {
  return {
    code: row.code,
    name: row.name,
    description: row.description,
    type: row.type,
    value: valueOf(row),
    currency: row.currency,
    min_subtotal: majorUnitsOf(row, row.minSubtotalMinor),
    starts_at: row.startsAt?.toISOString() ?? null,
    ends_at: row.endsAt?.toISOString() ?? null,
    usage_limit: row.usageLimit,
    per_customer_limit: row.perCustomerLimit,
    is_active: row.isActive,
    stacking: row.stacking,
    conditions: {
      product_ids: row.conditionProductIds,
      category_ids: row.conditionCategoryIds,
      customer_group_ids: row.customerGroupIds,
    },
    target: { product_ids: row.targetProductIds, category_ids: row.targetCategoryIds },
    buy_x_get_y:
      row.type === 'buy_x_get_y'
        ? { buy_quantity: row.buyQuantity!, get_quantity: row.getQuantity!, max_applications: row.maxApplications }
        : null,
    campaign_id: row.campaignId,
  }
}

/** A create's fields with their defaults; the name defaults to the code. (A coupon's body is a promotion's with fewer fields.) */
export function newPromotionFields(body: CreatePromotion): PromotionFields {
  const code = body.code?.toUpperCase() ?? null
  return {
    code,
    name: body.name ?? code,
    description: body.description ?? null,
    type: body.type,
    value: body.value ?? null,
    currency: body.currency ?? null,
    min_subtotal: body.min_subtotal ?? null,
    starts_at: body.starts_at ?? null,
    ends_at: body.ends_at ?? null,
    usage_limit: body.usage_limit ?? null,
    per_customer_limit: body.per_customer_limit ?? null,
    is_active: body.is_active ?? true,
    stacking: body.stacking ?? 'combinable',
    conditions: {
      product_ids: body.conditions?.product_ids ?? [],
      category_ids: body.conditions?.category_ids ?? [],
      customer_group_ids: body.conditions?.customer_group_ids ?? [],
    },
    target: { product_ids: body.target?.product_ids ?? [], category_ids: body.target?.category_ids ?? [] },
    buy_x_get_y: body.buy_x_get_y
      ? { buy_quantity: body.buy_x_get_y.buy_quantity, get_quantity: body.buy_x_get_y.get_quantity, max_applications: body.buy_x_get_y.max_applications ?? null }
      : null,
    campaign_id: body.campaign_id ?? null,
  }
}

/**
 * An update merged over the current promotion. A new type needs its own value (a percent is not an
 * amount), except free_shipping, which has none: the old value is dropped; leaving buy_x_get_y drops
 * its quantities. A name that was the code follows a new code. The lists of `conditions` and
 * `target`, and the fields of `buy_x_get_y`, that are sent replace the current ones.
 */
export function mergeUpdate(current: PromotionFields, body: UpdatePromotion): PromotionFields {
  const typeChanges = body.type !== undefined && body.type !== current.type
  if (typeChanges && body.type !== 'free_shipping' && body.value === undefined) {
    throw invalidField('value', `Field 'value' is required when changing the type to ${body.type}`)
  }
  const code = body.code === undefined ? current.code : (body.code?.toUpperCase() ?? null)
  const pick = <K extends keyof PromotionFields & keyof UpdatePromotion>(key: K): PromotionFields[K] =>
    (body[key] !== undefined ? body[key] : current[key]) as PromotionFields[K]

  let buyXGetY = current.buy_x_get_y
  if (body.buy_x_get_y === null) buyXGetY = null
  else if (body.buy_x_get_y !== undefined) {
    const sent = body.buy_x_get_y
    const buyQuantity = sent.buy_quantity ?? current.buy_x_get_y?.buy_quantity
    const getQuantity = sent.get_quantity ?? current.buy_x_get_y?.get_quantity
    if (buyQuantity === undefined) throw invalidField('buy_x_get_y.buy_quantity', "Field 'buy_x_get_y.buy_quantity' is required")
    if (getQuantity === undefined) throw invalidField('buy_x_get_y.get_quantity', "Field 'buy_x_get_y.get_quantity' is required")
    const maxApplications = sent.max_applications !== undefined ? sent.max_applications : (current.buy_x_get_y?.max_applications ?? null)
    buyXGetY = { buy_quantity: buyQuantity, get_quantity: getQuantity, max_applications: maxApplications }
  } else if (typeChanges && current.type === 'buy_x_get_y') buyXGetY = null

  return {
    code,
    name: body.name ?? (current.name === current.code && code !== null ? code : current.name),
    description: pick('description'),
    type: body.type ?? current.type,
    value: body.value !== undefined ? body.value : typeChanges ? null : current.value,
    currency: pick('currency'),
    min_subtotal: pick('min_subtotal'),
    starts_at: pick('starts_at'),
    ends_at: pick('ends_at'),
    usage_limit: pick('usage_limit'),
    per_customer_limit: pick('per_customer_limit'),
    is_active: body.is_active ?? current.is_active,
    stacking: body.stacking ?? current.stacking,
    conditions: { ...current.conditions, ...body.conditions },
    target: { ...current.target, ...body.target },
    buy_x_get_y: buyXGetY,
    campaign_id: pick('campaign_id'),
  }
}

/**
 * The fields an update sends: its top-level keys, and `conditions.<list>` and `target.<list>` for
 * each list it sends, so that only those lists' ids are checked (a category deleted since it was
 * listed does not block a change elsewhere).
 */
function sentFields(body: UpdatePromotion): ReadonlySet<string> {
  const sent = new Set(Object.keys(body))
  for (const group of ['conditions', 'target'] as const) {
    for (const list of Object.keys(body[group] ?? {})) sent.add(`${group}.${list}`)
  }
  return sent
}

export interface ColumnsOptions {
  noun: PromotionNoun
  /** The fields an update sent (`sentFields`; undefined on create): a field kept from before is not at fault. */
  sent?: ReadonlySet<string>
  /** Uses so far: the usage limit may not go below them. */
  timesUsed?: number
}

/**
 * The stored columns of a consistent promotion, or a validation error naming the field at fault:
 * the rules that need no database (ids and the campaign: `checkReferences`).
 */
export function promotionColumns(fields: PromotionFields, { noun, sent, timesUsed = 0 }: ColumnsOptions): PromotionColumns {
  // A kept amount is not at fault: a new currency that cannot hold it is.
  const blame = (field: string) => (!sent || sent.has(field) || !sent.has('currency') ? field : 'currency')
  const { type, value, currency } = fields
  const ofType = `${type} ${noun}s`
  if (currency !== null) knownCurrency(currency)
  let percentOffPpm: number | null = null
  let amountOffMinor: number | null = null
  if (type === 'percentage' || type === 'buy_x_get_y') {
    if (value === null) throw invalidField('value', `Field 'value' is required for ${ofType}`)
    if (value <= 0) throw invalidField('value', "Field 'value' must be greater than 0")
    percentOffPpm = fieldValue('value', () => percentToPpm(value))
  } else if (type === 'fixed_amount') {
    if (value === null) throw invalidField('value', `Field 'value' is required for ${ofType}`)
    if (currency === null) throw invalidField('currency', `Field 'currency' is required for ${ofType}`)
    if (value <= 0) throw invalidField('value', "Field 'value' must be greater than 0")
    amountOffMinor = fieldValue(blame('value'), () => toMinorUnits(value, currency))
  } else if (value !== null) {
    throw invalidField('value', `Field 'value' must be null for ${ofType}`)
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
  if (fields.usage_limit !== null && fields.usage_limit < timesUsed) {
    throw invalidField('usage_limit', `Field 'usage_limit' cannot be below times_used (${timesUsed})`)
  }
  if (fields.name === null) throw invalidField('name', `Field 'name' is required for automatic ${noun}s (those without a code)`)

  const buyXGetY = fields.buy_x_get_y
  if (type === 'buy_x_get_y' && buyXGetY === null) {
    throw invalidField('buy_x_get_y', `Field 'buy_x_get_y' is required for ${ofType}`)
  }
  // Never kept from before: a type change away from buy_x_get_y drops it (mergeUpdate).
  if (type !== 'buy_x_get_y' && buyXGetY !== null) {
    throw invalidField('buy_x_get_y', `Field 'buy_x_get_y' must be null for ${ofType}`)
  }
  if (type === 'free_shipping') {
    for (const list of ['product_ids', 'category_ids'] as const) {
      if (fields.target[list].length === 0) continue
      // Free shipping waives the shipping, not a line's price. Targets kept while the type changed: the type is at fault.
      if (sent && !sent.has('target')) {
        throw invalidField('type', `Field 'type' cannot be free_shipping while 'target.${list}' is not empty`)
      }
      throw invalidField(`target.${list}`, `Field 'target.${list}' must be empty for ${ofType}`)
    }
  }

  return {
    code: fields.code,
    name: fields.name,
    description: fields.description,
    type,
    percentOffPpm,
    amountOffMinor,
    currency,
    minSubtotalMinor,
    startsAt,
    endsAt,
    usageLimit: fields.usage_limit,
    perCustomerLimit: fields.per_customer_limit,
    isActive: fields.is_active,
    stacking: fields.stacking,
    conditionProductIds: fields.conditions.product_ids,
    conditionCategoryIds: fields.conditions.category_ids,
    customerGroupIds: fields.conditions.customer_group_ids,
    targetProductIds: fields.target.product_ids,
    targetCategoryIds: fields.target.category_ids,
    buyQuantity: buyXGetY?.buy_quantity ?? null,
    getQuantity: buyXGetY?.get_quantity ?? null,
    maxApplications: buyXGetY?.max_applications ?? null,
    campaignId: fields.campaign_id,
  }
}

/** The ids of `ids` that exist in `table`, held (FOR KEY SHARE) so they cannot be deleted before the write commits. */
async function existingIds(tx: Executor, table: typeof products | typeof categories | typeof customerGroups, ids: readonly string[]) {
  const rows = await tx
    .select({ id: table.id })
    .from(table)
    .where(inArray(table.id, [...ids]))
    .for('key share')
  return new Set(rows.map((row) => row.id))
}

const ID_LISTS = [
  { group: 'conditions', list: 'product_ids', table: products, what: 'product' },
  { group: 'conditions', list: 'category_ids', table: categories, what: 'category' },
  { group: 'conditions', list: 'customer_group_ids', table: customerGroups, what: 'customer group' },
  { group: 'target', list: 'product_ids', table: products, what: 'product' },
  { group: 'target', list: 'category_ids', table: categories, what: 'category' },
] as const

/**
 * The rules that read the database: every product, category and customer group id of the lists
 * sent exists (a 400 naming it, `conditions.product_ids[2]`), and the campaign exists and, with a spend budget,
 * is in the promotion's currency (when it has one). The campaign is held FOR SHARE until the write
 * commits, so a concurrent change of its budget waits and then sees this promotion.
 */
export async function checkReferences(tx: Executor, fields: PromotionFields, { noun, sent }: ColumnsOptions): Promise<void> {
  for (const { group, list, table, what } of ID_LISTS) {
    if (sent && !sent.has(`${group}.${list}`)) continue
    const ids = (fields[group] as Record<string, string[]>)[list]!
    if (ids.length === 0) continue
    const existing = await existingIds(tx, table, ids)
    const missing = ids.findIndex((id) => !existing.has(id.toLowerCase()))
    if (missing >= 0) {
      const field = `${group}.${list}[${missing}]`
      throw invalidField(field, `Field '${field}' is not a known ${what}: ${ids[missing]}`)
    }
  }
  if (fields.campaign_id === null) return
  const [campaign] = await tx
    .select({ budgetType: campaigns.budgetType, currency: campaigns.currency })
    .from(campaigns)
    .where(eq(campaigns.id, fields.campaign_id))
    .for('share')
  if (!campaign) throw invalidField('campaign_id', `Field 'campaign_id' is not a known campaign: ${fields.campaign_id}`)
  if (campaign.budgetType === 'spend' && fields.currency !== null && fields.currency !== campaign.currency) {
    const budget = campaign.currency!
    if (sent && !sent.has('currency')) {
      throw invalidField('campaign_id', `Field 'campaign_id' names a campaign whose spend budget is in ${budget}, not in the ${noun}'s ${fields.currency}`)
    }
    throw invalidField('currency', `Field 'currency' must be ${budget} (the currency of the campaign's spend budget) or null, not ${fields.currency}`)
  }
}

/** A 409 when another promotion has the code (codes are stored upper-case, so this is case-insensitive). */
export async function checkCodeFree(tx: Executor, code: string | null, noun: PromotionNoun, selfId?: string): Promise<void> {
  if (code === null) return
  const [clash] = await tx.select({ id: promotions.id }).from(promotions).where(eq(promotions.code, code))
  if (clash && clash.id !== selfId) throw conflict(`A ${noun} with code '${code}' already exists`)
}

/** Runs a write in a transaction; a code clash that slipped past the check (a concurrent create) becomes a 409. */
/**
 * The rows with `timesUsed` as the API shows it, the uses held now: a promotion without a usage
 * limit has them counted from promotion_usages, because its checkouts do not count them on its
 * row (the row every checkout of its currency would otherwise queue on: @commerce/db
 * checkout-reservation.ts, TAKE_USES); one with a limit keeps the count its checkouts check.
 */
export async function withTimesUsed<Row extends Pick<PromotionRow, 'id' | 'usageLimit' | 'timesUsed'>>(db: Executor, rows: Row[]): Promise<Row[]> {
  const uncounted = rows.filter((row) => row.usageLimit === null).map((row) => row.id)
  if (uncounted.length === 0) return rows
  const held = await db
    .select({ id: promotionUsages.promotionId, uses: count() })
    .from(promotionUsages)
    .where(and(inArray(promotionUsages.promotionId, uncounted), isNull(promotionUsages.releasedAt)))
    .groupBy(promotionUsages.promotionId)
  const uses = new Map(held.map((row) => [row.id, row.uses]))
  return rows.map((row) => (row.usageLimit === null ? { ...row, timesUsed: uses.get(row.id) ?? 0 } : row))
}

export async function writePromotion<T>(db: Database, noun: PromotionNoun, work: (tx: Executor) => Promise<T>): Promise<T> {
  try {
    return await db.transaction(work)
  } catch (error) {
    if (isUniqueViolation(error)) throw conflict(`A ${noun} with this code already exists`)
    throw error
  }
}

/**
 * Updates a promotion, re-validated whole as it would be after the change; `scope` narrows which
 * rows this API may see (the coupons API: coupons only). Answers the row as stored, or 404s.
 */
export function updatePromotion(db: Database, noun: PromotionNoun, id: string, body: UpdatePromotion, scope?: SQL): Promise<PromotionRow> {
  return writePromotion(db, noun, async (tx) => {
    const [locked] = await tx.select().from(promotions).where(and(eq(promotions.id, id), scope)).for('update')
    if (!locked) throw notFound(noun === 'coupon' ? 'Coupon' : 'Promotion')
    const [row] = await withTimesUsed(tx, [locked])
    const options = { noun, sent: sentFields(body), timesUsed: row!.timesUsed } as const
    const fields = mergeUpdate(promotionFieldsOf(row!), body)
    const columns = promotionColumns(fields, options)
    await checkReferences(tx, fields, options)
    if (columns.code !== row!.code) await checkCodeFree(tx, columns.code, noun, id)
    try {
      const [updated] = await tx.update(promotions).set({ ...columns, updatedAt: new Date() }).where(eq(promotions.id, id)).returning()
      return (await withTimesUsed(tx, [updated!]))[0]!
    } catch (error) {
      // A limit set where it had none counts the uses held as it commits (migration 0047's
      // trigger): checkouts that were completing meanwhile may have passed it.
      if (pgConstraintOf(error) === 'promotions_times_used_within_limit') {
        throw invalidField('usage_limit', `Field 'usage_limit' cannot be below times_used: other orders used the ${noun} meanwhile`)
      }
      throw error
    }
  })
}
