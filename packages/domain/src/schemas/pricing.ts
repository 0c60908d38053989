/** What prices a cart beyond its products, as the API shows and takes it: coupons, tax rates, shipping. */
import { Type, type Static } from 'typebox'
import { COUPON_TYPES } from '../constants.js'
import { TAX_ROUNDINGS } from '../tax.js'
import { Country } from './addresses.js'
import { Amount, Currency, Nullable, PageOrCursorMeta, PaginationQuery, Timestamp, Uuid } from './common.js'

/** A percentage as a number (12.5 = 12.5 %), kept exactly to 4 decimals. */
const Percent = Type.Number({ minimum: 0, maximum: 100, description: 'Percent (12.5 = 12.5 %), at most 4 decimals', examples: [12.5] })
/** Kilograms, kept exactly to 4 decimals. */
const Kilograms = Type.Number({ minimum: 0, maximum: 1_000_000_000, description: 'Kilograms, at most 4 decimals' })
const Name = Type.String({ minLength: 1, maxLength: 200 })

const CouponTypeSchema = Type.Enum(COUPON_TYPES)

export const CouponCode = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9_-]+$',
  description: 'Letters, digits, - and _; stored upper-case and matched case-insensitively',
  examples: ['SUMMER-10'],
})

export const Coupon = Type.Object({
  id: Uuid,
  code: Type.String(),
  type: CouponTypeSchema,
  value: Nullable(
    Type.Number({ description: 'percentage: the percent off; fixed_amount: the amount off in `currency`; free_shipping: null' }),
  ),
  currency: Nullable(Type.String({ description: 'The only cart currency the coupon applies to; null = any' })),
  min_subtotal: Nullable(Type.Number({ description: 'The cart subtotal (before discounts) needed, in `currency`' })),
  starts_at: Nullable(Timestamp),
  ends_at: Nullable(Timestamp),
  usage_limit: Nullable(Type.Integer({ description: 'Completed orders the coupon may be used on; null = unlimited' })),
  times_used: Type.Integer({ description: 'Read-only' }),
  is_active: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { title: 'Coupon', description: 'A discount coupon: what it takes off, on what, and for how long' })
export type Coupon = Static<typeof Coupon>

const couponFields = {
  code: CouponCode,
  type: CouponTypeSchema,
  value: Type.Optional(
    Nullable(
      Type.Number({
        exclusiveMinimum: 0,
        description:
          'percentage: 0 < value <= 100, at most 4 decimals; fixed_amount: an amount in `currency`; free_shipping: null',
      }),
    ),
  ),
  currency: Type.Optional(Nullable(Currency)),
  min_subtotal: Type.Optional(Nullable(Amount)),
  starts_at: Type.Optional(Nullable(Timestamp)),
  ends_at: Type.Optional(Nullable(Timestamp)),
  usage_limit: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 2_147_483_647 }))),
  is_active: Type.Optional(Type.Boolean()),
}
export const CreateCoupon = Type.Object(couponFields, { additionalProperties: false, title: 'CreateCouponRequest' })
export type CreateCoupon = Static<typeof CreateCoupon>
export const UpdateCoupon = Type.Partial(CreateCoupon, { additionalProperties: false, minProperties: 1, title: 'UpdateCouponRequest' })
export type UpdateCoupon = Static<typeof UpdateCoupon>

export const ListCouponsQuery = Type.Object({
  ...PaginationQuery.properties,
  code: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'exact code, case-insensitive' })),
  is_active: Type.Optional(Type.Boolean()),
})
export type ListCouponsQuery = Static<typeof ListCouponsQuery>
export const CouponList = Type.Object({ coupons: Type.Array(Coupon), meta: PageOrCursorMeta }, { title: 'CouponList', description: 'A page of coupons' })
export type CouponList = Static<typeof CouponList>

const TaxRoundingSchema = Type.Enum(TAX_ROUNDINGS, {
  description:
    'How tax is rounded: `line` (default) rounds each line’s tax and adds them up; `order` rounds the tax of ' +
    'everything taxable once and shares it out over the lines (largest remainder), as some jurisdictions require. ' +
    'Either way the lines add up to the totals.',
})

export const TaxRate = Type.Object({
  id: Uuid,
  country: Type.String({ description: 'ISO 3166-1 alpha-2' }),
  region: Nullable(Type.String({ description: 'A state or province; null = the whole country' })),
  rate: Type.Number({ description: 'Percent (8.875 = 8.875 %)' }),
  name: Type.String(),
  rounding: TaxRoundingSchema,
  created_at: Timestamp,
  updated_at: Timestamp,
}, { title: 'TaxRate', description: 'The tax rate of a country, or of a region of it' })
export type TaxRate = Static<typeof TaxRate>

export const CreateTaxRate = Type.Object(
  {
    country: Country,
    region: Type.Optional(
      Nullable(Type.String({ minLength: 1, maxLength: 100, description: 'matched case-insensitively; null = the whole country' })),
    ),
    rate: Percent,
    name: Name,
    rounding: Type.Optional(TaxRoundingSchema),
  },
  { additionalProperties: false, title: 'CreateTaxRateRequest' },
)
export type CreateTaxRate = Static<typeof CreateTaxRate>
export const UpdateTaxRate = Type.Partial(CreateTaxRate, { additionalProperties: false, minProperties: 1, title: 'UpdateTaxRateRequest' })
export type UpdateTaxRate = Static<typeof UpdateTaxRate>

export const ListTaxRatesQuery = Type.Object({
  ...PaginationQuery.properties,
  country: Type.Optional(Country),
})
export type ListTaxRatesQuery = Static<typeof ListTaxRatesQuery>
export const TaxRateList = Type.Object(
  { tax_rates: Type.Array(TaxRate), meta: PageOrCursorMeta },
  { title: 'TaxRateList', description: 'A page of tax rates' },
)
export type TaxRateList = Static<typeof TaxRateList>

export const ShippingMethod = Type.Object({
  id: Uuid,
  name: Type.String(),
  currency: Type.String(),
  countries: Type.Array(Type.String(), { description: 'ISO 3166-1 alpha-2 codes it ships to; empty = everywhere' }),
  base_price: Type.Number(),
  price_per_kg: Type.Number(),
  free_over: Nullable(Type.Number({ description: 'Free from this discounted subtotal on; null = never free' })),
  min_weight: Nullable(Type.Number({ description: 'Kilograms; null = no lower bound' })),
  max_weight: Nullable(Type.Number({ description: 'Kilograms; null = no upper bound' })),
  estimated_days: Nullable(Type.Integer()),
  is_active: Type.Boolean(),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { title: 'ShippingMethod', description: 'A way to ship, where to, and how its price is worked out' })
export type ShippingMethod = Static<typeof ShippingMethod>

export const CreateShippingMethod = Type.Object(
  {
    name: Name,
    currency: Currency,
    countries: Type.Optional(Type.Array(Country, { uniqueItems: true, maxItems: 300 })),
    base_price: Type.Optional(Amount),
    price_per_kg: Type.Optional(Amount),
    free_over: Type.Optional(Nullable(Amount)),
    min_weight: Type.Optional(Nullable(Kilograms)),
    max_weight: Type.Optional(Nullable(Kilograms)),
    estimated_days: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 2_147_483_647 }))),
    is_active: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, title: 'CreateShippingMethodRequest' },
)
export type CreateShippingMethod = Static<typeof CreateShippingMethod>
export const UpdateShippingMethod = Type.Partial(CreateShippingMethod, {
  additionalProperties: false,
  minProperties: 1,
  title: 'UpdateShippingMethodRequest',
})
export type UpdateShippingMethod = Static<typeof UpdateShippingMethod>

export const ListShippingMethodsQuery = Type.Object({
  ...PaginationQuery.properties,
  is_active: Type.Optional(Type.Boolean()),
})
export type ListShippingMethodsQuery = Static<typeof ListShippingMethodsQuery>
export const ShippingMethodList = Type.Object(
  { shipping_methods: Type.Array(ShippingMethod), meta: PageOrCursorMeta },
  { title: 'ShippingMethodList', description: 'A page of shipping methods' },
)
export type ShippingMethodList = Static<typeof ShippingMethodList>

/** One way to ship a given cart and what it costs (`GET /shipping/rates`). */
export const ShippingRate = Type.Object({
  id: Uuid,
  name: Type.String(),
  amount: Type.Number({ description: 'Decimal amount in major units of `currency`' }),
  currency: Type.String(),
  estimated_days: Nullable(Type.Integer()),
}, { title: 'ShippingRate', description: 'One way to ship a given cart, and what it costs' })
export type ShippingRate = Static<typeof ShippingRate>
export const ShippingRateList = Type.Object(
  { rates: Type.Array(ShippingRate) },
  { title: 'ShippingRateList', description: 'The ways to ship the cart, cheapest first' },
)
export type ShippingRateList = Static<typeof ShippingRateList>
