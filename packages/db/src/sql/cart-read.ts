/**
 * A cart as one row: the cart, its lines with the live product and variant data and their prices
 * in the cart's currency, its coupons, the live counts of its bounded automatic promotions, its
 * customer's groups, the tax rates of its address's country and its chosen shipping method, read
 * in one round trip. The price lists and the automatic promotions themselves are not read: each
 * API instance keeps them (the pricing rules, apps/api plugins/pricing-rules.ts).
 * The parts read as JSON are written once, here: the cart reads below (Drizzle, the public GET
 * prepared), a line's addition (cart-add-line.ts) and the checkout completion's locked read
 * (checkout-reservation.ts) select them from a row named "carts".
 */
import { eq, sql } from 'drizzle-orm'
import type { Database, Executor } from '../client.js'
import type { SqlClient } from '../transaction.js'
import { campaigns, cartItems, carts, priceLists, prices, products, productVariants, promotions, shippingMethods, taxRates } from '../schema/index.js'
import { columnsOf, jsonColumns, jsonObject, type JsonOf, type JsonRow } from './json-rows.js'

const PRICE_LIST_KEYS = ['id', 'type', 'priority', 'isActive', 'startsAt', 'endsAt', 'customerGroupIds'] as const
/** A price list as the pricing rules and the admin order lines' prices read it (the domain's PriceListRule). */
export type PriceListJson = JsonOf<typeof priceLists, (typeof PRICE_LIST_KEYS)[number]>
/** A price list row `pl` as the JSON of PriceListJson. */
const PRICE_LIST_JSON = jsonColumns(priceLists, 'pl', PRICE_LIST_KEYS)

type PriceJson = JsonOf<typeof prices, 'amountMinor' | 'minQuantity' | 'priceListId'>

/**
 * A price of a line in the cart's currency from the prices table (a base price in another
 * currency, a tier, a list's), as a JSON array: a line has one per list and tier, and arrays cost
 * PostgreSQL less to build and the API less to parse than objects (bench/README.md, issue 49).
 * `list` is the price list's rule, where the read carries it (the cart reads of the pricing rules
 * leave it out: the instance keeps the lists).
 */
export type LinePriceJson = [
  amountMinor: PriceJson['amountMinor'],
  minQuantity: PriceJson['minQuantity'],
  priceListId: PriceJson['priceListId'],
  variantSpecific: boolean,
  list?: PriceListJson | null,
]

/**
 * A line with its product's live data; a variant's own price, stock, sku and weight override the
 * product's. `priceMinor`/`currency` are the product's own price (the variant's, when
 * `variantPriced`); `prices` are its other prices in the cart's currency.
 */
export type LineRow = JsonOf<typeof cartItems, 'id' | 'productId' | 'variantId' | 'quantity'> &
  JsonOf<typeof products, 'title' | 'sku' | 'imageUrl' | 'priceMinor' | 'currency' | 'isActive' | 'inventoryQuantity' | 'weight' | 'weightUnit' | 'categories'> & {
    /** The variant's title; null without a variant. */
    variantTitle: JsonOf<typeof productVariants, 'title'>['title'] | null
    variantPriced: boolean
    prices: LinePriceJson[]
  }

const PROMOTION_KEYS = [
  'id',
  'code',
  'name',
  'type',
  'percentOffPpm',
  'amountOffMinor',
  'currency',
  'minSubtotalMinor',
  'startsAt',
  'endsAt',
  'usageLimit',
  'timesUsed',
  'isActive',
  'stacking',
  'conditionProductIds',
  'conditionCategoryIds',
  'customerGroupIds',
  'targetProductIds',
  'targetCategoryIds',
  'buyQuantity',
  'getQuantity',
  'maxApplications',
  'perCustomerLimit',
] as const
const CAMPAIGN_KEYS = ['id', 'budgetType', 'budgetLimit', 'budgetUsed', 'currency', 'startsAt', 'endsAt'] as const
export type CampaignRow = JsonOf<typeof campaigns, (typeof CAMPAIGN_KEYS)[number]>

/** A promotion as a cart reads it: with its campaign and how often this cart's customer has used it. */
export type PromotionRow = JsonOf<typeof promotions, (typeof PROMOTION_KEYS)[number]> & {
  campaign: CampaignRow | null
  customerUses: number
}

const TAX_RATE_KEYS = ['id', 'country', 'region', 'ratePpm', 'name', 'rounding'] as const
export type TaxRateRow = JsonOf<typeof taxRates, (typeof TAX_RATE_KEYS)[number]>

const SHIPPING_METHOD_KEYS = [
  'id',
  'name',
  'currency',
  'countries',
  'basePriceMinor',
  'pricePerKgMinor',
  'freeOverMinor',
  'minWeightKg',
  'maxWeightKg',
  'estimatedDays',
  'isActive',
] as const
export type ShippingMethodRow = JsonOf<typeof shippingMethods, (typeof SHIPPING_METHOD_KEYS)[number]>

/** A campaign row `g` as the JSON of CampaignRow. */
export const CAMPAIGN_JSON = jsonColumns(campaigns, 'g', CAMPAIGN_KEYS)

// Who uses a cart's promotions, as promotion_usages.customer_key keeps it: the customer, else the email.
const CUSTOMER_KEY = `coalesce("carts"."customer_id"::text, lower("carts"."email"))`

// How often the customer of the cart in a row named "carts" has used the promotion `c` (counted only where it has a limit per customer).
const CUSTOMER_USES = `case when c.per_customer_limit is null then 0 else (select count(*) from promotion_usages u
  where u.promotion_id = c.id and u.customer_key = ${CUSTOMER_KEY} and u.released_at is null) end`

/** A promotion row `c` as the JSON of PromotionRow with its campaign; `customerUses` by default the uses of the cart in a row named "carts". */
function promotionJson(customerUses = CUSTOMER_USES): string {
  const campaign = `(select ${CAMPAIGN_JSON} from campaigns g where g.id = c.campaign_id)`
  return jsonObject<PromotionRow>({ ...columnsOf(promotions, 'c', PROMOTION_KEYS), campaign, customerUses })
}

/** A shipping method row `s` as the JSON of ShippingMethodRow. */
export const SHIPPING_METHOD_JSON = jsonColumns(shippingMethods, 's', SHIPPING_METHOD_KEYS)

// A price `pr` of a line (LinePriceJson), with its list `pl` when `withList`.
const linePriceJson = (withList: boolean) => `json_build_array(pr.amount_minor, pr.min_quantity, pr.price_list_id, pr.variant_id is not null${
  withList ? `, case when pl.id is not null then ${PRICE_LIST_JSON} end` : ''
})`

/**
 * The prices of a product (or of one of its variants) in a currency, with their lists, as a cart
 * line reads them: for lines priced outside a cart (admin orders, edits, drafts).
 */
export async function readLinePrices(tx: Executor, line: { productId: string; variantId: string | null; currency: string }): Promise<LinePriceJson[]> {
  const rows = await tx.execute<{ price: LinePriceJson }>(sql`select ${sql.raw(linePriceJson(true))} as price
    from prices pr left join price_lists pl on pl.id = pr.price_list_id
    where pr.product_id = ${line.productId} and (pr.variant_id is null or pr.variant_id = ${line.variantId}) and pr.currency = ${line.currency}`)
  return [...rows].map((row) => row.price)
}

// A line of the cart in a row named "carts", its prices naming their lists (the API instance keeps the lists: the pricing rules).
const LINE_JSON = jsonObject<LineRow>({
  id: 'i.id',
  productId: 'i.product_id',
  variantId: 'i.variant_id',
  quantity: 'i.quantity',
  title: 'p.title',
  variantTitle: 'v.title',
  sku: 'coalesce(v.sku, p.sku)',
  imageUrl: 'p.image_url',
  priceMinor: 'coalesce(v.price_minor, p.price_minor)',
  variantPriced: 'v.price_minor is not null',
  currency: 'p.currency',
  categories: 'p.categories',
  prices: `coalesce((select json_agg(${linePriceJson(false)}) from prices pr
    where pr.product_id = i.product_id and (pr.variant_id is null or pr.variant_id = i.variant_id) and pr.currency = "carts"."currency"), '[]'::json)`,
  isActive: 'p.is_active',
  inventoryQuantity: 'coalesce(v.inventory_quantity, p.inventory_quantity)',
  weight: 'case when v.weight is not null then v.weight else p.weight end',
  weightUnit: 'case when v.weight is not null then v.weight_unit else p.weight_unit end',
})

// The lines, oldest first.
const LINES_OF_CART = `coalesce((
  select json_agg(${LINE_JSON} order by i.id)
  from cart_items i
  join products p on p.id = i.product_id
  left join product_variants v on v.id = i.variant_id
  where i.cart_id = "carts"."id"), '[]'::json)`

const COUPONS_OF_CART = `coalesce((
  select json_agg(${promotionJson()} order by cc.created_at, c.code)
  from cart_coupons cc join promotions c on c.id = cc.coupon_id
  where cc.cart_id = "carts"."id"), '[]'::json)`

/** What moves in a bounded automatic promotion (a total or per-customer limit, a campaign budget) as checkouts use it. */
export interface PromotionCounts {
  timesUsed: number
  budgetUsed: number | null
  customerUses: number
}

// The bounded automatic promotions of the cart's currency, by id, with what checkouts move in
// them, read live (the promotions themselves are the pricing rules'; the unbounded ones' counts
// price nothing).
const AUTOMATIC_COUNTS = `coalesce((
  select json_object_agg(c.id, json_build_object('timesUsed', c.times_used, 'budgetUsed', g.budget_used, 'customerUses', ${CUSTOMER_USES}))
  from promotions c left join campaigns g on g.id = c.campaign_id
  where c.code is null and c.is_active and (c.currency is null or c.currency = "carts"."currency")
    and (c.usage_limit is not null or c.per_customer_limit is not null or (g.budget_type is not null and g.budget_limit is not null))), '{}'::json)`

const CUSTOMER_GROUPS_OF_CART = `coalesce((
  select json_agg(m.group_id) from customer_group_members m where m.customer_id = "carts"."customer_id"), '[]'::json)`

const TAX_RATES_OF_CART = `coalesce((
  select json_agg(${jsonColumns(taxRates, 't', TAX_RATE_KEYS)})
  from tax_rates t where t.country = "carts"."shipping_address"->>'country'), '[]'::json)`

const SHIPPING_METHOD_OF_CART = `(select ${SHIPPING_METHOD_JSON} from shipping_methods s where s.id = "carts"."shipping_method_id")`

// The cart's own columns, from a row named "carts".
const CART_COLUMNS = `"carts"."id" as "id", "carts"."currency" as "currency", "carts"."customer_id" as "customerId",
  "carts"."email" as "email", "carts"."shipping_address" as "shippingAddress",
  "carts"."shipping_method_id" as "shippingMethodId", "carts"."completed_at" as "completedAt",
  "carts"."created_at" as "createdAt", "carts"."updated_at" as "updatedAt"`

/** Every column of CartRow, read from a row named "carts". */
export function cartRowSql(): string {
  return `${CART_COLUMNS}, ${LINES_OF_CART} as "lines", ${COUPONS_OF_CART} as "coupons", ${AUTOMATIC_COUNTS} as "automaticCounts",
  ${CUSTOMER_GROUPS_OF_CART} as "customerGroupIds", ${TAX_RATES_OF_CART} as "taxRates", ${SHIPPING_METHOD_OF_CART} as "shippingMethod"`
}

const cartSelection = {
  id: carts.id,
  currency: carts.currency,
  customerId: carts.customerId,
  email: carts.email,
  shippingAddress: carts.shippingAddress,
  shippingMethodId: carts.shippingMethodId,
  completedAt: carts.completedAt,
  createdAt: carts.createdAt,
  updatedAt: carts.updatedAt,
  lines: sql<LineRow[]>`${sql.raw(LINES_OF_CART)}`,
  coupons: sql<PromotionRow[]>`${sql.raw(COUPONS_OF_CART)}`,
  automaticCounts: sql<Record<string, PromotionCounts>>`${sql.raw(AUTOMATIC_COUNTS)}`,
  customerGroupIds: sql<string[]>`${sql.raw(CUSTOMER_GROUPS_OF_CART)}`,
  taxRates: sql<TaxRateRow[]>`${sql.raw(TAX_RATES_OF_CART)}`,
  shippingMethod: sql<ShippingMethodRow | null>`${sql.raw(SHIPPING_METHOD_OF_CART)}`,
}

/** One cart with everything its totals need but the pricing rules, read inside a transaction (it sees that transaction's writes). */
export async function readCart(tx: Executor, id: string) {
  const [row] = await tx.select(cartSelection).from(carts).where(eq(carts.id, id))
  return row
}

/**
 * A cart as it is priced with an API instance's pricing rules (apps/api plugins/pricing-rules.ts):
 * its own rows, its lines' prices naming their lists, its coupons, and the live counts of its
 * bounded automatic promotions (`automaticCounts`, by id).
 */
export type CartRow = NonNullable<Awaited<ReturnType<typeof readCart>>>

/** The same read, prepared once, for the public GET. */
export function prepareCartRead(db: Database) {
  return db.select(cartSelection).from(carts).where(eq(carts.id, sql.placeholder('id'))).prepare('cart_detail')
}

/** A cart row read by raw SQL (cartRowSql) as the Drizzle reads give it: its instants as dates. */
export function cartRowOf(row: JsonRow<CartRow>): CartRow {
  const { completedAt, createdAt, updatedAt } = row
  return { ...row, completedAt: completedAt === null ? null : new Date(completedAt), createdAt: new Date(createdAt), updatedAt: new Date(updatedAt) } as unknown as CartRow
}

/** An automatic promotion as the pricing rules keep it: its counts as of the read (a cart's own read replaces a bounded one's). */
export type AutomaticPromotionRow = Omit<PromotionRow, 'customerUses'>

const PRICING_REVISION = 'select revision::text as revision from pricing_revision'
const PRICING_RULES = `select
  coalesce((select json_agg(${PRICE_LIST_JSON}) from price_lists pl), '[]'::json) as "lists",
  coalesce((select json_agg(${promotionJson('0')} order by c.id) from promotions c where c.code is null and c.is_active), '[]'::json) as "automatic"`

/**
 * The pricing revision and, when it is not `seen`, the price lists and the automatic promotions
 * switched on (apps/api plugins/pricing-rules.ts). The revision is read first: a change committed
 * after it moves it again.
 */
export async function pricingRulesSince(
  client: SqlClient,
  seen: string | undefined,
): Promise<{ revision: string; rules?: { lists: PriceListJson[]; automatic: AutomaticPromotionRow[] } }> {
  const [current] = await client.unsafe<{ revision: string }[]>(PRICING_REVISION, [], { prepare: true })
  const revision = current!.revision
  if (revision === seen) return { revision }
  const [rules] = await client.unsafe<{ lists: PriceListJson[]; automatic: AutomaticPromotionRow[] }[]>(PRICING_RULES, [], { prepare: true })
  return { revision, rules: rules! }
}
