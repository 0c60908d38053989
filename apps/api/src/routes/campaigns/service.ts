/**
 * Campaigns: admin CRUD of the groups promotions belong to, with a budget checkouts never
 * overspend (docs/promotions.md). A spend budget counts money in minor units of its currency, a
 * usage budget orders; once some of it is used, its kind and currency stay.
 */
import { and, count, eq, getTableColumns, isNotNull, ne } from 'drizzle-orm'
import {
  isCurrency,
  MAX_MINOR_UNITS,
  toMajorUnits,
  toMinorUnits,
  type Campaign,
  type CampaignBudgetType,
  type CreateCampaign,
  type ListCampaignsQuery,
  type UpdateCampaign,
} from '@commerce/domain'
import { campaigns, promotions, type Database, type Executor } from '@commerce/db'
import { invalidField, notFound } from '../../errors.js'
import { fieldValue, instant } from '../../fields.js'
import { key, keyset, selectList } from '../../list-cursor.js'

type CampaignRow = typeof campaigns.$inferSelect
type CampaignColumns = Pick<
  typeof campaigns.$inferInsert,
  'name' | 'description' | 'budgetType' | 'budgetLimit' | 'currency' | 'startsAt' | 'endsAt'
>

/** A budget as the API names it: `limit` in major units of `currency` (spend) or orders (usage). */
interface BudgetFields {
  type: CampaignBudgetType
  limit: number
  currency: string | null
}

/** Every writable field of a campaign, resolved (a create's defaults, or an update merged over the row). */
interface CampaignFields {
  name: string
  description: string | null
  budget: BudgetFields | null
  starts_at: string | null
  ends_at: string | null
}

/** A spend budget's figure in major units of its currency; a usage budget's as it is (orders). */
function budgetFigure(row: CampaignRow, figure: number): number {
  return row.budgetType === 'spend' && row.currency !== null ? toMajorUnits(figure, row.currency) : figure
}

function toCampaign(row: CampaignRow, promotionCount: number): Campaign {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    budget:
      row.budgetType === null
        ? null
        : {
            type: row.budgetType,
            limit: budgetFigure(row, row.budgetLimit ?? 0),
            used: budgetFigure(row, row.budgetUsed),
            currency: row.currency,
          },
    starts_at: row.startsAt?.toISOString() ?? null,
    ends_at: row.endsAt?.toISOString() ?? null,
    promotion_count: promotionCount,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

function fieldsOf(row: CampaignRow): CampaignFields {
  const current = toCampaign(row, 0)
  return {
    name: current.name,
    description: current.description,
    budget: current.budget && { type: current.budget.type, limit: current.budget.limit, currency: current.budget.currency },
    starts_at: current.starts_at,
    ends_at: current.ends_at,
  }
}

/**
 * The stored columns of a consistent campaign, or a validation error naming the field at fault.
 * `sent` is the budget fields an update sent: a kept limit is not at fault, so a new currency
 * that cannot hold it blames `budget.currency`. `used` is what checkouts took of the budget so far.
 */
function campaignColumns(fields: CampaignFields, used = 0, sent?: ReadonlySet<string>): CampaignColumns {
  const budget = fields.budget
  let budgetLimit: number | null = null
  if (budget?.type === 'spend') {
    const currency = budget.currency
    if (currency === null) throw invalidField('budget.currency', "Field 'budget.currency' is required for spend budgets")
    if (!isCurrency(currency)) {
      throw invalidField('budget.currency', `Field 'budget.currency' is not a known ISO 4217 currency: ${currency}`)
    }
    const blamed = !sent || sent.has('limit') || !sent.has('currency') ? 'budget.limit' : 'budget.currency'
    budgetLimit = fieldValue(blamed, () => toMinorUnits(budget.limit, currency))
  } else if (budget?.type === 'usage') {
    if (budget.currency !== null) throw invalidField('budget.currency', "Field 'budget.currency' must be null for usage budgets")
    if (!Number.isInteger(budget.limit) || budget.limit > MAX_MINOR_UNITS) {
      throw invalidField('budget.limit', `Field 'budget.limit' must be a whole number of orders, at most ${MAX_MINOR_UNITS}, for usage budgets`)
    }
    budgetLimit = budget.limit
  }
  if (budget && budgetLimit! < used) {
    const shown = budget.type === 'spend' ? toMajorUnits(used, budget.currency!) : used
    throw invalidField('budget.limit', `Field 'budget.limit' cannot be below what is used (${shown})`)
  }

  const startsAt = instant('starts_at', fields.starts_at)
  const endsAt = instant('ends_at', fields.ends_at)
  if (startsAt && endsAt && endsAt <= startsAt) {
    throw invalidField('ends_at', "Field 'ends_at' must be after 'starts_at'")
  }
  return {
    name: fields.name,
    description: fields.description,
    budgetType: budget?.type ?? null,
    budgetLimit,
    currency: budget?.currency ?? null,
    startsAt,
    endsAt,
  }
}

/**
 * An update merged over the current campaign. The budget fields sent replace the current ones;
 * a new budget type needs its own limit (orders are not money). Once some of the budget is used,
 * its type and currency stay and it cannot be removed: `used` counts in their unit.
 */
function mergeUpdate(row: CampaignRow, body: UpdateCampaign): CampaignFields {
  const current = fieldsOf(row)
  const used = row.budgetUsed
  let budget = current.budget
  if (body.budget === null) {
    if (used > 0) throw invalidField('budget', `Field 'budget' cannot be removed once some of it is used (${budgetFigure(row, used)})`)
    budget = null
  } else if (body.budget !== undefined) {
    const sent = body.budget
    const type = sent.type ?? current.budget?.type
    if (type === undefined) throw invalidField('budget.type', "Field 'budget.type' is required")
    const sameType = current.budget?.type === type
    if (!sameType && used > 0) {
      throw invalidField('budget.type', `Field 'budget.type' cannot change once some of the budget is used (${budgetFigure(row, used)})`)
    }
    const limit = sent.limit ?? (sameType ? current.budget!.limit : undefined)
    if (limit === undefined) {
      throw invalidField('budget.limit', current.budget ? "Field 'budget.limit' is required when changing the budget type" : "Field 'budget.limit' is required")
    }
    const currency = sent.currency !== undefined ? sent.currency : sameType ? current.budget!.currency : null
    if (type === 'spend' && sameType && used > 0 && currency !== current.budget!.currency) {
      throw invalidField('budget.currency', `Field 'budget.currency' cannot change once some of the budget is used (${budgetFigure(row, used)})`)
    }
    budget = { type, limit, currency }
  }
  return {
    name: body.name ?? current.name,
    description: body.description !== undefined ? body.description : current.description,
    budget,
    starts_at: body.starts_at !== undefined ? body.starts_at : current.starts_at,
    ends_at: body.ends_at !== undefined ? body.ends_at : current.ends_at,
  }
}

async function promotionCountOf(executor: Executor, id: string): Promise<number> {
  const [counted] = await executor.select({ total: count() }).from(promotions).where(eq(promotions.campaignId, id))
  return counted!.total
}

/** Newest first: campaigns_created_idx (created_at, id). */
const CAMPAIGNS_KEYSET = keyset('campaigns', 'desc', [key.time(campaigns.createdAt), key.uuid(campaigns.id)])

export function createCampaignService(db: Database) {
  return {
    async list(query: ListCampaignsQuery) {
      const select = db
        .select({ ...getTableColumns(campaigns), promotionCount: count(promotions.id), cursorKey: CAMPAIGNS_KEYSET.cursorKey })
        .from(campaigns)
        .leftJoin(promotions, eq(promotions.campaignId, campaigns.id))
        .groupBy(campaigns.id)
        .$dynamic()
      const { rows, meta } = await selectList(CAMPAIGNS_KEYSET, query, select, undefined, () => db.$count(campaigns))
      return { campaigns: rows.map(({ promotionCount, ...row }) => toCampaign(row, promotionCount)), meta }
    },

    async get(id: string): Promise<Campaign> {
      const [[row], promotionCount] = await Promise.all([db.select().from(campaigns).where(eq(campaigns.id, id)), promotionCountOf(db, id)])
      if (!row) throw notFound('Campaign')
      return toCampaign(row, promotionCount)
    },

    async create(body: CreateCampaign): Promise<Campaign> {
      const columns = campaignColumns({
        name: body.name,
        description: body.description ?? null,
        budget: body.budget ? { type: body.budget.type, limit: body.budget.limit, currency: body.budget.currency ?? null } : null,
        starts_at: body.starts_at ?? null,
        ends_at: body.ends_at ?? null,
      })
      const [row] = await db.insert(campaigns).values(columns).returning()
      return toCampaign(row!, 0)
    },

    /**
     * Re-validates the whole campaign as it would be after the change. The row is locked first:
     * promotion writes hold it FOR SHARE while they check their currency against a spend budget,
     * and `budget_used` cannot move between the check of the limit and the write.
     */
    update(id: string, body: UpdateCampaign): Promise<Campaign> {
      return db.transaction(async (tx) => {
        const [row] = await tx.select().from(campaigns).where(eq(campaigns.id, id)).for('update')
        if (!row) throw notFound('Campaign')
        const sentBudget = body.budget ? new Set(Object.keys(body.budget)) : undefined
        const columns = campaignColumns(mergeUpdate(row, body), row.budgetUsed, sentBudget)
        if (columns.budgetType === 'spend') {
          // A spend budget counts one currency: its promotions with a currency must be in it.
          const [other] = await tx
            .select({ name: promotions.name, currency: promotions.currency })
            .from(promotions)
            .where(and(eq(promotions.campaignId, id), isNotNull(promotions.currency), ne(promotions.currency, columns.currency!)))
            .limit(1)
          if (other) {
            throw invalidField(
              'budget.currency',
              `Field 'budget.currency' must be the currency of the campaign's promotions: '${other.name}' is in ${other.currency}`,
            )
          }
        }
        const [updated] = await tx
          .update(campaigns)
          .set({ ...columns, updatedAt: new Date() })
          .where(eq(campaigns.id, id))
          .returning()
        return toCampaign(updated!, await promotionCountOf(tx, id))
      })
    },

    /** Deletes the campaign; its promotions stay, out of any campaign, and so do their usage rows. */
    remove(id: string): Promise<void> {
      return db.transaction(async (tx) => {
        // Promotion rows first, then the campaign: the order promotion writes lock them in.
        await tx.update(promotions).set({ campaignId: null, updatedAt: new Date() }).where(eq(promotions.campaignId, id))
        const deleted = await tx.delete(campaigns).where(eq(campaigns.id, id)).returning({ id: campaigns.id })
        if (deleted.length === 0) throw notFound('Campaign')
      })
    },
  }
}
