/** What prices a cart beyond its products: coupons, tax rates and shipping methods (admin-configured). */
import { sql } from 'drizzle-orm'
import { bigint, boolean, check, integer, numeric, pgEnum, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core'
import { COUPON_TYPES } from '@commerce/domain'
import { createdAt, id, updatedAt } from './columns.js'

export const couponType = pgEnum('coupon_type', COUPON_TYPES)

export const coupons = pgTable(
  'coupons',
  {
    id: id(),
    /** Stored upper-case; codes match case-insensitively. */
    code: text('code').notNull(),
    type: couponType('type').notNull(),
    /** percentage: the percent off in parts per million of the amount (15% = 150000). */
    percentOffPpm: integer('percent_off_ppm'),
    /** fixed_amount: integer minor units of `currency`. */
    amountOffMinor: bigint('amount_off_minor', { mode: 'number' }),
    /** Required for fixed_amount and min_subtotal; a coupon with a currency applies only to carts in it. */
    currency: text('currency'),
    minSubtotalMinor: bigint('min_subtotal_minor', { mode: 'number' }),
    startsAt: timestamp('starts_at', { withTimezone: true, mode: 'date' }),
    endsAt: timestamp('ends_at', { withTimezone: true, mode: 'date' }),
    usageLimit: integer('usage_limit'),
    timesUsed: integer('times_used').notNull().default(0),
    isActive: boolean('is_active').notNull().default(true),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('coupons_code_key').on(t.code),
    check('coupons_percent_range', sql`${t.percentOffPpm} between 0 and 1000000`),
    check('coupons_amount_nonnegative', sql`${t.amountOffMinor} >= 0`),
    check('coupons_times_used_within_limit', sql`${t.timesUsed} >= 0 and (${t.usageLimit} is null or ${t.timesUsed} <= ${t.usageLimit})`),
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
    check('shipping_methods_prices_nonnegative', sql`${t.basePriceMinor} >= 0 and ${t.pricePerKgMinor} >= 0 and ${t.freeOverMinor} >= 0`),
  ],
)
