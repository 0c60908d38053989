/** What prices a cart beyond its products' own price: prices per currency and price lists, promotions and their campaigns, tax rates and shipping methods (admin-configured). */
import { sql } from 'drizzle-orm'
import { bigint, boolean, check, index, integer, numeric, pgEnum, pgTable, text, timestamp, unique, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { CAMPAIGN_BUDGET_TYPES, PRICE_LIST_TYPES, PROMOTION_STACKING, PROMOTION_TYPES } from '@commerce/domain'
import { products, productVariants, variantOrNil } from './catalog.js'
import { createdAt, id, updatedAt } from './columns.js'

export const promotionType = pgEnum('promotion_type', PROMOTION_TYPES)
export const promotionStacking = pgEnum('promotion_stacking', PROMOTION_STACKING)
export const campaignBudgetType = pgEnum('campaign_budget_type', CAMPAIGN_BUDGET_TYPES)
export const priceListType = pgEnum('price_list_type', PRICE_LIST_TYPES)

const uuids = (name: string) => uuid(name).array().notNull().default(sql`'{}'::uuid[]`)

/** A named set of prices (sale or override), active in a window, optionally for some customer groups. */
export const priceLists = pgTable(
  'price_lists',
  {
    id: id(),
    name: text('name').notNull(),
    description: text('description'),
    type: priceListType('type').notNull().default('sale'),
    /** Among override lists that apply, the highest priority wins. */
    priority: integer('priority').notNull().default(0),
    isActive: boolean('is_active').notNull().default(true),
    startsAt: timestamp('starts_at', { withTimezone: true, mode: 'date' }),
    endsAt: timestamp('ends_at', { withTimezone: true, mode: 'date' }),
    /** Empty: every customer. */
    customerGroupIds: uuids('customer_group_ids'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    check('price_lists_window', sql`${t.startsAt} is null or ${t.endsAt} is null or ${t.startsAt} < ${t.endsAt}`),
    index('price_lists_created_idx').on(t.createdAt, t.id),
  ],
)

/**
 * A product's or variant's price in one currency from a quantity: a base price (no list) or a
 * price list's. The product's own `price_minor` stays its price in its own currency from one unit.
 */
export const prices = pgTable(
  'prices',
  {
    id: id(),
    productId: uuid('product_id')
      .notNull()
      .references(() => products.id, { onDelete: 'cascade' }),
    /** Null: every variant of the product without a price of its own here. */
    variantId: uuid('variant_id').references(() => productVariants.id, { onDelete: 'cascade' }),
    priceListId: uuid('price_list_id').references(() => priceLists.id, { onDelete: 'cascade' }),
    currency: text('currency').notNull(),
    /** Integer minor units of `currency`, per unit. */
    amountMinor: bigint('amount_minor', { mode: 'number' }).notNull(),
    /** Integer minor units: the price it was, shown crossed out; never priced. */
    compareAtAmountMinor: bigint('compare_at_amount_minor', { mode: 'number' }),
    /** The price applies from this many units of the line (quantity tiers). */
    minQuantity: integer('min_quantity').notNull().default(1),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    unique('prices_key').on(t.productId, t.variantId, t.priceListId, t.currency, t.minQuantity).nullsNotDistinct(),
    // A price list's prices, or a product's base prices (no list), in the order they are listed.
    index('prices_list_idx').on(t.priceListId, t.productId, variantOrNil(t.variantId), t.currency, t.minQuantity, t.id),
    // A cart line's prices in the cart's currency, read from the index alone (no visit to the table per price).
    index('prices_line_idx').on(t.productId, t.currency, t.variantId, t.priceListId, t.minQuantity, t.amountMinor),
    check('prices_amount_nonnegative', sql`${t.amountMinor} >= 0`),
    check('prices_compare_at_nonnegative', sql`${t.compareAtAmountMinor} >= 0`),
    check('prices_min_quantity_positive', sql`${t.minQuantity} >= 1`),
  ],
)

/** Promotions grouped under a budget that checkouts never overspend (a CHECK guards it). */
export const campaigns = pgTable(
  'campaigns',
  {
    id: id(),
    name: text('name').notNull(),
    description: text('description'),
    /** Null: no budget. */
    budgetType: campaignBudgetType('budget_type'),
    /** spend: minor units of `currency`; usage: orders. */
    budgetLimit: bigint('budget_limit', { mode: 'number' }),
    budgetUsed: bigint('budget_used', { mode: 'number' }).notNull().default(0),
    currency: text('currency'),
    startsAt: timestamp('starts_at', { withTimezone: true, mode: 'date' }),
    endsAt: timestamp('ends_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('campaigns_created_idx').on(t.createdAt, t.id),
    check('campaigns_budget_within_limit', sql`${t.budgetUsed} >= 0 and (${t.budgetLimit} is null or ${t.budgetUsed} <= ${t.budgetLimit})`),
    check('campaigns_spend_currency', sql`${t.budgetType} is distinct from 'spend' or ${t.currency} is not null`),
  ],
)

/**
 * Discounts, automatic (no code) or by code. A coupon is a promotion with a code and one of the
 * coupon types; the `/coupons` API reads and writes those rows.
 */
export const promotions = pgTable(
  'promotions',
  {
    id: id(),
    /** Stored upper-case; codes match case-insensitively. Null: automatic, applies to every cart that qualifies. */
    code: text('code'),
    name: text('name').notNull(),
    description: text('description'),
    type: promotionType('type').notNull(),
    /** percentage and buy_x_get_y: the percent off in parts per million of the amount (15% = 150000). */
    percentOffPpm: integer('percent_off_ppm'),
    /** fixed_amount: integer minor units of `currency`. */
    amountOffMinor: bigint('amount_off_minor', { mode: 'number' }),
    /** Required for fixed_amount and min_subtotal; a promotion with a currency applies only to carts in it. */
    currency: text('currency'),
    minSubtotalMinor: bigint('min_subtotal_minor', { mode: 'number' }),
    startsAt: timestamp('starts_at', { withTimezone: true, mode: 'date' }),
    endsAt: timestamp('ends_at', { withTimezone: true, mode: 'date' }),
    usageLimit: integer('usage_limit'),
    timesUsed: integer('times_used').notNull().default(0),
    isActive: boolean('is_active').notNull().default(true),
    stacking: promotionStacking('stacking').notNull().default('combinable'),
    /** The cart must hold one of these products or categories (buy_x_get_y: the units to buy). */
    conditionProductIds: uuids('condition_product_ids'),
    conditionCategoryIds: uuids('condition_category_ids'),
    /** Empty: every customer. */
    customerGroupIds: uuids('customer_group_ids'),
    /** The lines the discount goes to (buy_x_get_y: the units given); both empty: the whole order. */
    targetProductIds: uuids('target_product_ids'),
    targetCategoryIds: uuids('target_category_ids'),
    buyQuantity: integer('buy_quantity'),
    getQuantity: integer('get_quantity'),
    maxApplications: integer('max_applications'),
    perCustomerLimit: integer('per_customer_limit'),
    campaignId: uuid('campaign_id').references(() => campaigns.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('promotions_code_key').on(t.code),
    // The promotion and coupon lists, newest first.
    index('promotions_created_idx').on(t.createdAt, t.id),
    // Every cart read looks the automatic promotions up.
    index('promotions_automatic_idx').on(t.id).where(sql`${t.code} is null and ${t.isActive}`),
    check('promotions_percent_range', sql`${t.percentOffPpm} between 0 and 1000000`),
    check('promotions_amount_nonnegative', sql`${t.amountOffMinor} >= 0`),
    check('promotions_times_used_within_limit', sql`${t.timesUsed} >= 0 and (${t.usageLimit} is null or ${t.timesUsed} <= ${t.usageLimit})`),
    check('promotions_buy_x_get_y', sql`${t.type}::text <> 'buy_x_get_y' or (${t.buyQuantity} > 0 and ${t.getQuantity} > 0 and ${t.percentOffPpm} is not null)`),
  ],
)

export const taxRates = pgTable(
  'tax_rates',
  {
    id: id(),
    /** ISO 3166-1 alpha-2. */
    country: text('country').notNull(),
    /** A region (state, province) inside the country; null = the whole country. */
    region: text('region'),
    /** Percent in parts per million of the amount (8.875% = 88750). */
    ratePpm: integer('rate_ppm').notNull(),
    name: text('name').notNull(),
    /** 'line' or 'order' (TaxRounding). */
    rounding: text('rounding', { enum: ['line', 'order'] }).notNull().default('line'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('tax_rates_country_region_key').on(t.country, sql`upper(coalesce(${t.region}, ''))`),
    // The list's order: by country, the whole-country rate (no region) first, then regions case-insensitively.
    index('tax_rates_list_idx').on(t.country, sql`coalesce(lower(${t.region}), '')`, sql`coalesce(${t.region}, '')`, t.id),
    check('tax_rates_rate_range', sql`${t.ratePpm} between 0 and 1000000`),
    check('tax_rates_rounding', sql`${t.rounding} in ('line', 'order')`),
  ],
)

/** Weight bounds are kilograms; numeric keeps them exact. */
const kilograms = (name: string) => numeric(name, { precision: 14, scale: 4, mode: 'number' })

export const shippingMethods = pgTable(
  'shipping_methods',
  {
    id: id(),
    name: text('name').notNull(),
    currency: text('currency').notNull(),
    /** ISO 3166-1 alpha-2 codes it ships to; empty = everywhere. */
    countries: text('countries').array().notNull().default(sql`'{}'::text[]`),
    basePriceMinor: bigint('base_price_minor', { mode: 'number' }).notNull().default(0),
    pricePerKgMinor: bigint('price_per_kg_minor', { mode: 'number' }).notNull().default(0),
    /** Free when the discounted subtotal reaches this amount; null = never free. */
    freeOverMinor: bigint('free_over_minor', { mode: 'number' }),
    minWeightKg: kilograms('min_weight_kg'),
    maxWeightKg: kilograms('max_weight_kg'),
    estimatedDays: integer('estimated_days'),
    isActive: boolean('is_active').notNull().default(true),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('shipping_methods_name_idx').on(sql`lower(${t.name})`, t.name, t.id),
    check('shipping_methods_prices_nonnegative', sql`${t.basePriceMinor} >= 0 and ${t.pricePerKgMinor} >= 0 and ${t.freeOverMinor} >= 0`),
  ],
)

/**
 * One row whose `revision` a trigger bumps, and announces (NOTIFY commerce_pricing), on every
 * write to the rules each API instance keeps in memory to price carts: price lists, promotions
 * and campaigns, but not the use counts and budgets checkouts move (migration 0046).
 */
export const pricingRevision = pgTable('pricing_revision', {
  singleton: boolean('singleton').primaryKey().default(true),
  revision: bigint('revision', { mode: 'number' }).notNull().default(0),
})
