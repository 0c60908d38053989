/**
 * Promotions (automatic or by code; a coupon is a promotion with a code and a coupon type), their
 * campaigns with budgets, and the record of their uses, as the admin API shows and takes them.
 */
import { Type, type Static } from 'typebox'
import { CAMPAIGN_BUDGET_TYPES, PROMOTION_STACKING, PROMOTION_TYPES } from '../constants.js'
import { Amount, Currency, Nullable, PageOrCursorMeta, PaginationQuery, Timestamp, Uuid } from './common.js'
import { CouponCode } from './pricing.js'

const INT4_MAX = 2_147_483_647
/** Ids a condition or a target may list. */
const MAX_LISTED_IDS = 1_000

const Name = (description: string) => Type.String({ minLength: 1, maxLength: 200, description })
const Description = Type.String({ maxLength: 2_000, description: 'Notes for the shop’s staff' })
const PromotionTypeSchema = Type.Enum(PROMOTION_TYPES, {
  description:
    'percentage: a percent off; fixed_amount: an amount off in `currency`; free_shipping: shipping waived; ' +
    'buy_x_get_y: buy `buy_quantity` units, get `get_quantity` more at `value` percent off (100 = free)',
})
const StackingSchema = Type.Enum(PROMOTION_STACKING, {
  description: 'combinable: applies together with other combinable promotions; exclusive: applies alone',
})
const BudgetTypeSchema = Type.Enum(CAMPAIGN_BUDGET_TYPES, {
  description: 'spend: the money the campaign’s promotions may take off, in `currency`; usage: the orders they may be used on',
})
const IdList = (description: string) => Type.Array(Uuid, { uniqueItems: true, maxItems: MAX_LISTED_IDS, description })
const Count = (description: string) => Type.Integer({ minimum: 1, maximum: INT4_MAX, description })

// --- Promotions -------------------------------------------------------------------------------

export const PromotionConditions = Type.Object(
  {
    product_ids: Type.Array(Uuid, { description: 'The cart must hold one of these products (buy_x_get_y: the units to buy); empty = any' }),
    category_ids: Type.Array(Uuid, { description: 'Or a product of one of these categories; empty = any' }),
    customer_group_ids: Type.Array(Uuid, { description: 'The customer must be in one of these groups; empty = everyone' }),
  },
  { title: 'PromotionConditions', description: 'What a cart needs for the promotion to apply' },
)
export type PromotionConditions = Static<typeof PromotionConditions>

export const PromotionTarget = Type.Object(
  {
    product_ids: Type.Array(Uuid),
    category_ids: Type.Array(Uuid),
  },
  {
    title: 'PromotionTarget',
    description:
      'The lines the discount goes to: those of these products or categories; both empty = the whole order ' +
      '(buy_x_get_y: the units given; both empty = the same as the units to buy)',
  },
)
export type PromotionTarget = Static<typeof PromotionTarget>

export const BuyXGetY = Type.Object(
  {
    buy_quantity: Type.Integer({ description: 'Units to buy' }),
    get_quantity: Type.Integer({ description: 'Units then given at `value` percent off' }),
    max_applications: Nullable(Type.Integer({ description: 'How many times one cart gets it; null = as often as it qualifies' })),
  },
  { title: 'BuyXGetY', description: 'Buy `buy_quantity` units, get `get_quantity` more at the promotion’s `value` percent off' },
)
export type BuyXGetY = Static<typeof BuyXGetY>

export const Promotion = Type.Object(
  {
    id: Uuid,
    code: Nullable(Type.String({ description: 'Upper-case; null = automatic: applies to every cart that qualifies' })),
    name: Type.String(),
    description: Nullable(Type.String()),
    type: PromotionTypeSchema,
    value: Nullable(
      Type.Number({
        description: 'percentage and buy_x_get_y: the percent off; fixed_amount: the amount off in `currency`; free_shipping: null',
      }),
    ),
    currency: Nullable(Type.String({ description: 'The only cart currency the promotion applies to; null = any' })),
    min_subtotal: Nullable(Type.Number({ description: 'The cart subtotal (before discounts) needed, in `currency`' })),
    starts_at: Nullable(Timestamp),
    ends_at: Nullable(Timestamp),
    usage_limit: Nullable(Type.Integer({ description: 'Completed orders the promotion may be used on; null = unlimited' })),
    per_customer_limit: Nullable(Type.Integer({ description: 'Orders one customer may use it on; null = unlimited' })),
    times_used: Type.Integer({ description: 'Read-only' }),
    is_active: Type.Boolean(),
    stacking: StackingSchema,
    conditions: PromotionConditions,
    target: PromotionTarget,
    buy_x_get_y: Nullable(BuyXGetY),
    campaign_id: Nullable(Uuid),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Promotion', description: 'A discount, automatic or by code: what it takes off, on what, for whom, and for how long' },
)
export type Promotion = Static<typeof Promotion>

/** A create's omitted lists are empty; an update's replace the current ones and keep those not sent. */
const ConditionsInput = Type.Object(
  {
    product_ids: Type.Optional(IdList('Products the cart must hold one of (buy_x_get_y: the units to buy); empty = any')),
    category_ids: Type.Optional(IdList('Categories the cart must hold a product of; empty = any')),
    customer_group_ids: Type.Optional(IdList('Customer groups the customer must be in one of; empty = everyone')),
  },
  {
    additionalProperties: false,
    description:
      'What a cart needs: one of `product_ids` or of `category_ids`, a customer in one of `customer_group_ids` (each empty = ' +
      'no condition); lists not sent are empty on create, kept on update',
  },
)
const TargetInput = Type.Object(
  {
    product_ids: Type.Optional(IdList('Products whose lines get the discount')),
    category_ids: Type.Optional(IdList('Categories whose lines get the discount')),
  },
  {
    additionalProperties: false,
    description:
      'The lines the discount goes to: those of `product_ids` or `category_ids`, both empty = the whole order ' +
      '(buy_x_get_y: the units given, both empty = those bought); lists not sent are empty on create, kept on update',
  },
)
const buyXGetYInput = {
  buy_quantity: Count('Units to buy, at least 1'),
  get_quantity: Count('Units given, at least 1'),
  max_applications: Type.Optional(Nullable(Count('How many times one cart gets it, at least 1; null = unlimited'))),
}
const promotionValue = Type.Number({
  exclusiveMinimum: 0,
  description:
    'percentage and buy_x_get_y: 0 < value <= 100 (buy_x_get_y: 100 = free), at most 4 decimals; fixed_amount: an amount in `currency`; free_shipping: null',
})

/** The fields a create and an update share; the nested objects differ (an update may send some of their fields). */
const promotionFields = {
  code: Type.Optional(Nullable(CouponCode)),
  name: Type.Optional(Name('What the promotion is called (orders record it); defaults to the code, required without one')),
  description: Type.Optional(Nullable(Description)),
  type: PromotionTypeSchema,
  value: Type.Optional(Nullable(promotionValue)),
  currency: Type.Optional(Nullable(Currency)),
  min_subtotal: Type.Optional(Nullable(Amount)),
  starts_at: Type.Optional(Nullable(Timestamp)),
  ends_at: Type.Optional(Nullable(Timestamp)),
  usage_limit: Type.Optional(Nullable(Count('Completed orders it may be used on; null = unlimited'))),
  per_customer_limit: Type.Optional(Nullable(Count('Orders one customer may use it on; null = unlimited'))),
  is_active: Type.Optional(Type.Boolean()),
  stacking: Type.Optional(StackingSchema),
  campaign_id: Type.Optional(Nullable(Uuid)),
}

export const CreatePromotion = Type.Object(
  {
    ...promotionFields,
    conditions: Type.Optional(ConditionsInput),
    target: Type.Optional(TargetInput),
    buy_x_get_y: Type.Optional(
      Nullable(Type.Object(buyXGetYInput, { additionalProperties: false, description: 'Required for buy_x_get_y, null for the other types' })),
    ),
  },
  { additionalProperties: false, title: 'CreatePromotionRequest' },
)
export type CreatePromotion = Static<typeof CreatePromotion>

export const UpdatePromotion = Type.Object(
  {
    ...Type.Partial(Type.Object(promotionFields)).properties,
    conditions: Type.Optional(ConditionsInput),
    target: Type.Optional(TargetInput),
    buy_x_get_y: Type.Optional(
      Nullable(
        Type.Object(Type.Partial(Type.Object(buyXGetYInput)).properties, {
          additionalProperties: false,
          description: 'The fields sent replace the current ones; null removes it (types other than buy_x_get_y)',
        }),
      ),
    ),
  },
  { additionalProperties: false, minProperties: 1, title: 'UpdatePromotionRequest' },
)
export type UpdatePromotion = Static<typeof UpdatePromotion>

export const ListPromotionsQuery = Type.Object({
  ...PaginationQuery.properties,
  code: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'exact code, case-insensitive' })),
  is_active: Type.Optional(Type.Boolean()),
  automatic: Type.Optional(Type.Boolean({ description: 'true: only automatic promotions (no code); false: only those with a code' })),
  campaign_id: Type.Optional(Uuid),
  type: Type.Optional(Type.Enum(PROMOTION_TYPES)),
})
export type ListPromotionsQuery = Static<typeof ListPromotionsQuery>
export const PromotionList = Type.Object(
  { promotions: Type.Array(Promotion), meta: PageOrCursorMeta },
  { title: 'PromotionList', description: 'A page of promotions' },
)
export type PromotionList = Static<typeof PromotionList>

export const PromotionUsage = Type.Object(
  {
    id: Uuid,
    order_id: Nullable(Uuid),
    payment_id: Uuid,
    customer: Nullable(Type.String({ description: 'The customer’s id, or the cart’s email in lower case; null when neither was known' })),
    discount: Type.Number({ description: 'What it took off, goods and shipping, in major units of `currency`' }),
    currency: Type.String(),
    released: Type.Boolean({ description: 'The use was given back (its checkout reservation was released)' }),
    created_at: Timestamp,
  },
  { title: 'PromotionUsage', description: 'One use of a promotion by a checkout' },
)
export type PromotionUsage = Static<typeof PromotionUsage>
export const PromotionUsageList = Type.Object(
  { usages: Type.Array(PromotionUsage), meta: PageOrCursorMeta },
  { title: 'PromotionUsageList', description: 'A page of a promotion’s uses, newest first' },
)
export type PromotionUsageList = Static<typeof PromotionUsageList>

// --- Campaigns --------------------------------------------------------------------------------

export const CampaignBudget = Type.Object(
  {
    type: BudgetTypeSchema,
    limit: Type.Number({ description: 'spend: an amount in major units of `currency`; usage: a number of orders' }),
    used: Type.Number({ description: 'Read-only: how much of the limit checkouts have taken, in the same unit' }),
    currency: Nullable(Type.String({ description: 'spend: the budget’s currency; usage: null' })),
  },
  { title: 'CampaignBudget', description: 'What a campaign’s promotions may take off together, or how many orders they may be used on' },
)
export type CampaignBudget = Static<typeof CampaignBudget>

export const Campaign = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    description: Nullable(Type.String()),
    budget: Nullable(CampaignBudget),
    starts_at: Nullable(Timestamp),
    ends_at: Nullable(Timestamp),
    promotion_count: Type.Integer({ description: 'Promotions in the campaign' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Campaign', description: 'Promotions grouped under a name, a period and a budget checkouts never overspend' },
)
export type Campaign = Static<typeof Campaign>

const budgetInput = {
  type: BudgetTypeSchema,
  limit: Type.Number({
    exclusiveMinimum: 0,
    description: 'spend: an amount in major units of `currency`; usage: a whole number of orders. Not below what is used.',
  }),
  currency: Type.Optional(Nullable(Currency)),
}

const campaignFields = {
  name: Name('What the campaign is called'),
  description: Type.Optional(Nullable(Description)),
  starts_at: Type.Optional(Nullable(Timestamp)),
  ends_at: Type.Optional(Nullable(Timestamp)),
}

export const CreateCampaign = Type.Object(
  {
    ...campaignFields,
    budget: Type.Optional(
      Nullable(Type.Object(budgetInput, { additionalProperties: false, description: 'spend needs `currency`; null = no budget' })),
    ),
  },
  { additionalProperties: false, title: 'CreateCampaignRequest' },
)
export type CreateCampaign = Static<typeof CreateCampaign>

export const UpdateCampaign = Type.Object(
  {
    ...Type.Partial(Type.Object(campaignFields)).properties,
    budget: Type.Optional(
      Nullable(
        Type.Object(Type.Partial(Type.Object(budgetInput)).properties, {
          additionalProperties: false,
          description: 'The fields sent replace the current ones; null removes the budget (only while none of it is used)',
        }),
      ),
    ),
  },
  { additionalProperties: false, minProperties: 1, title: 'UpdateCampaignRequest' },
)
export type UpdateCampaign = Static<typeof UpdateCampaign>

export const ListCampaignsQuery = Type.Object({
  ...PaginationQuery.properties,
})
export type ListCampaignsQuery = Static<typeof ListCampaignsQuery>
export const CampaignList = Type.Object(
  { campaigns: Type.Array(Campaign), meta: PageOrCursorMeta },
  { title: 'CampaignList', description: 'A page of campaigns, newest first' },
)
export type CampaignList = Static<typeof CampaignList>
