/**
 * Prices beyond a product's own price (docs/pricing.md): price lists, and prices per currency and
 * quantity, either a price list's or a product's base prices.
 */
import { Type, type Static, type TProperties } from 'typebox'
import { MAX_LINE_QUANTITY, PRICE_LIST_TYPES } from '../constants.js'
import { PRICE_LIST_STATUSES } from '../price-list-status.js'
import { Amount, Currency, Nullable, PageOrCursorMeta, PaginationQuery, Timestamp, Uuid } from './common.js'

/** The most prices one request writes. */
export const MAX_PRICES_PER_REQUEST = 1000
/** The most customer groups one price list names. */
export const MAX_PRICE_LIST_GROUPS = 100

/** A UUID field saying what it names. */
const IdOf = (description: string) => Type.String({ format: 'uuid', maxLength: 36, description })

const PriceListTypeSchema = Type.Enum(PRICE_LIST_TYPES, {
  description: '`sale`: its price applies when it is lower than the price otherwise paid; `override`: its price replaces the base price',
})
const PriceListStatusSchema = Type.Enum(PRICE_LIST_STATUSES, {
  description:
    'At the time of the request: `inactive` (is_active false), `scheduled` (before starts_at), `expired` (at or after ends_at) or `active`',
})

export const PriceList = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    description: Nullable(Type.String()),
    type: PriceListTypeSchema,
    priority: Type.Integer({ description: 'Among override lists that apply, the highest priority wins' }),
    is_active: Type.Boolean(),
    starts_at: Nullable(Timestamp),
    ends_at: Nullable(Timestamp),
    customer_group_ids: Type.Array(Uuid, { description: 'The list applies only to customers of these groups; empty: to every customer' }),
    price_count: Type.Integer({ description: 'Prices in the list' }),
    status: PriceListStatusSchema,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'PriceList', description: 'A named set of prices (a sale, a market, a customer group’s prices), for a time window' },
)
export type PriceList = Static<typeof PriceList>

export const CreatePriceList = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, examples: ['Summer sale'] }),
    description: Type.Optional(Nullable(Type.String({ maxLength: 2000 }))),
    type: Type.Optional(PriceListTypeSchema),
    priority: Type.Optional(Type.Integer({ minimum: -1_000_000, maximum: 1_000_000, description: 'Default 0' })),
    is_active: Type.Optional(Type.Boolean({ description: 'Default true' })),
    starts_at: Type.Optional(Nullable(Timestamp)),
    ends_at: Type.Optional(Nullable(Timestamp)),
    customer_group_ids: Type.Optional(
      Type.Array(IdOf('A customer group'), {
        uniqueItems: true,
        maxItems: MAX_PRICE_LIST_GROUPS,
        description: 'Existing customer groups; empty or absent: every customer',
      }),
    ),
  },
  { additionalProperties: false, title: 'CreatePriceListRequest' },
)
export type CreatePriceList = Static<typeof CreatePriceList>
export const UpdatePriceList = Type.Partial(CreatePriceList, { additionalProperties: false, minProperties: 1, title: 'UpdatePriceListRequest' })
export type UpdatePriceList = Static<typeof UpdatePriceList>

export const ListPriceListsQuery = Type.Object({
  ...PaginationQuery.properties,
  is_active: Type.Optional(Type.Boolean()),
  type: Type.Optional(PriceListTypeSchema),
})
export type ListPriceListsQuery = Static<typeof ListPriceListsQuery>

export const PriceListList = Type.Object(
  { price_lists: Type.Array(PriceList), meta: PageOrCursorMeta },
  { title: 'PriceListList', description: 'A page of price lists, newest first' },
)
export type PriceListList = Static<typeof PriceListList>

export const Price = Type.Object(
  {
    id: Uuid,
    product_id: Uuid,
    variant_id: Nullable(Uuid),
    price_list_id: Nullable(Uuid),
    currency: Type.String(),
    amount: Type.Number({ description: 'Per unit, decimal amount in major units of `currency`' }),
    compare_at_amount: Nullable(Type.Number({ description: 'The price it was, shown crossed out beside `amount`; never charged' })),
    min_quantity: Type.Integer({ description: 'The price applies to a line of at least this many units (a quantity tier)' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  {
    title: 'Price',
    description:
      'A product’s price in one currency from a quantity: a base price (`price_list_id` null) or a price list’s. ' +
      '`variant_id` null: for every variant of the product without a price of its own here',
  },
)
export type Price = Static<typeof Price>

const priceFields = {
  variant_id: Type.Optional(Nullable(IdOf('A variant of the product; absent or null: the price is for every variant without its own'))),
  currency: Currency,
  amount: Amount,
  compare_at_amount: Type.Optional(Nullable({ ...Amount, description: 'The price it was, shown crossed out beside `amount`; never charged' })),
  min_quantity: Type.Optional(
    Type.Integer({ minimum: 1, maximum: MAX_LINE_QUANTITY, description: 'From this many units of a line (a quantity tier); default 1' }),
  ),
}
const pricesOf = <T extends TProperties>(entry: T, description: string) =>
  Type.Array(Type.Object(entry, { additionalProperties: false }), { minItems: 1, maxItems: MAX_PRICES_PER_REQUEST, description })

export const UpsertPriceListPrices = Type.Object(
  {
    prices: pricesOf(
      { product_id: IdOf('The product'), ...priceFields },
      'Prices to write: one with the product, variant, currency and min_quantity of a price already in the list replaces its amount',
    ),
  },
  { additionalProperties: false, title: 'UpsertPriceListPricesRequest' },
)
export type UpsertPriceListPrices = Static<typeof UpsertPriceListPrices>

export const UpsertProductPrices = Type.Object(
  {
    prices: pricesOf(
      priceFields,
      'Base prices to write: one with the variant, currency and min_quantity of an existing base price replaces its amount',
    ),
  },
  { additionalProperties: false, title: 'UpsertProductPricesRequest' },
)
export type UpsertProductPrices = Static<typeof UpsertProductPrices>

export const ListPriceListPricesQuery = Type.Object({
  ...PaginationQuery.properties,
  product_id: Type.Optional(IdOf('Only the prices of this product')),
  currency: Type.Optional(Currency),
})
export type ListPriceListPricesQuery = Static<typeof ListPriceListPricesQuery>

export const ListProductPricesQuery = Type.Object({
  ...PaginationQuery.properties,
  currency: Type.Optional(Currency),
})
export type ListProductPricesQuery = Static<typeof ListProductPricesQuery>

export const PricePage = Type.Object(
  { prices: Type.Array(Price), meta: PageOrCursorMeta },
  { title: 'PricePage', description: 'A page of prices, by product, variant (the product-wide ones first), currency and min_quantity' },
)
export type PricePage = Static<typeof PricePage>

export const WrittenPrices = Type.Object(
  { prices: Type.Array(Price, { description: 'One per entry sent, in the order sent' }) },
  { title: 'WrittenPrices', description: 'The prices a batch wrote, as they are now' },
)
export type WrittenPrices = Static<typeof WrittenPrices>

/** `/price-lists/:id/prices/:price_id` and `/products/:id/prices/:price_id` */
export const PriceParams = Type.Object({ id: Uuid, price_id: Uuid })
