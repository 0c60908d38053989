/** A promotion rule for tests: automatic, 10 % off the order, active, combinable, without limits, unless told otherwise. */
import type { CampaignRule, PromotionRule } from './promotions.js'

export const promotionRule = (overrides: Partial<PromotionRule> = {}): PromotionRule => ({
  id: 'p1',
  code: null,
  name: overrides.id ?? 'p1',
  type: 'percentage',
  percentOffPpm: 100_000,
  amountOffMinor: null,
  currency: null,
  minSubtotalMinor: null,
  startsAt: null,
  endsAt: null,
  usageLimit: null,
  timesUsed: 0,
  isActive: true,
  stacking: 'combinable',
  conditionProductIds: [],
  conditionCategoryIds: [],
  customerGroupIds: [],
  targetProductIds: [],
  targetCategoryIds: [],
  buyQuantity: null,
  getQuantity: null,
  maxApplications: null,
  perCustomerLimit: null,
  customerUses: 0,
  campaign: null,
  ...overrides,
})

/** A campaign for tests: a spend budget without a limit, unless told otherwise. */
export const campaignRule = (overrides: Partial<CampaignRule> = {}): CampaignRule => ({
  id: 'camp1',
  budgetType: 'spend',
  budgetLimit: null,
  budgetUsed: 0,
  currency: null,
  startsAt: null,
  endsAt: null,
  ...overrides,
})
