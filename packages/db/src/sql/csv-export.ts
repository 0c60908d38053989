/**
 * The reads of CSV exports (docs/csv.md), each one statement walked by a cursor so a catalog of
 * any size streams through the worker a page at a time: products one row per variant (a product
 * without variants is one row), customers one row each, orders one row per line. Amounts are
 * integer minor units, weights exact decimals as text; the worker formats them.
 */
import type postgres from 'postgres'
import type { AttributeOwner, AttributeValue, OptionRecord, ProductStatusCode } from '@commerce/domain'

/** Rows fetched per round trip of the cursor. */
const PAGE = 500

/** A timestamp in ISO 8601, UTC, to the microsecond PostgreSQL keeps (no fraction when it is whole): an import gives back the same instant. */
const EXACT_ISO = (column: string) =>
  `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS') || coalesce('.' || nullif(rtrim(to_char(${column} at time zone 'UTC', 'US'), '0'), ''), '') || 'Z'`

/** Base prices from one unit in other currencies than the product's, of the product or a variant: currency → [amount, compare-at amount]. */
const basePrices = (of: string) => `(select json_object_agg(pr.currency, json_build_array(pr.amount_minor::text, pr.compare_at_amount_minor::text))
    from prices pr where ${of} and pr.price_list_id is null and pr.min_quantity = 1 and pr.currency <> p.currency)`
const OF_PRODUCT = 'pr.product_id = p.id and pr.variant_id is null'
const OF_VARIANT = 'pr.variant_id = v.id'

// $1 is_active (null: both), $2 a category id, $3 updated at or after.
const PRODUCT_ROWS = `select p.id, p.slug, p.title, p.description, p.sku, p.currency, p.price_minor::text as "priceMinor",
  trim_scale(p.weight)::text as weight, p.weight_unit as "weightUnit", p.is_active as "isActive",
  case when p.image_url_explicit then p.image_url end as "imageUrl",
  (select coalesce(json_agg(c->>'slug' order by c->>'slug'), '[]') from jsonb_array_elements(p.categories) c) as categories,
  p.status, ${EXACT_ISO('p.published_at')} as "publishedAt", p.compare_at_price_minor::text as "compareAtPriceMinor", p.tags,
  p.product_type as "productType", p.vendor, p.barcode, trim_scale(p.length)::text as length, trim_scale(p.width)::text as width,
  trim_scale(p.height)::text as height, p.dimension_unit as "dimensionUnit", p.hs_code as "hsCode", p.country_of_origin as "countryOfOrigin",
  p.seo_title as "seoTitle", p.seo_description as "seoDescription", p.options, p.attributes || p.staff_attributes as attributes,
  ${basePrices(OF_PRODUCT)} as prices,
  v.id as "variantId", v.title as "variantTitle", v.sku as "variantSku", v.price_minor::text as "variantPriceMinor",
  v.compare_at_price_minor::text as "variantCompareAtPriceMinor", v.barcode as "variantBarcode", v.options as "variantOptions",
  v.attributes || v.staff_attributes as "variantAttributes", trim_scale(v.weight)::text as "variantWeight", v.weight_unit as "variantWeightUnit",
  ${basePrices(OF_VARIANT)} as "variantPrices",
  (select json_object_agg(l.location_id, l.on_hand) from inventory_levels l where l.item_id = coalesce(v.id, p.id)) as stock
from products p left join product_variants v on v.product_id = p.id
where ($1::boolean is null or p.is_active = $1::boolean)
  and ($2::uuid is null or exists (select from product_categories pc where pc.product_id = p.id and pc.category_id = $2::uuid))
  and ($3::timestamptz is null or p.updated_at >= $3::timestamptz)
order by p.id, v.id`

/** A base price's amount and compare-at amount, in minor units. */
export type BasePrice = [amount: string, compareAt: string | null]

/** One row of the products export: a variant, or a product without variants (variant fields null). */
export interface ProductExportRow {
  id: string
  slug: string
  title: string
  description: string | null
  sku: string | null
  currency: string
  priceMinor: string
  weight: string | null
  weightUnit: string
  isActive: boolean
  /** Only when set explicitly (otherwise the product shows its first image). */
  imageUrl: string | null
  categories: string[]
  status: ProductStatusCode
  /** ISO 8601, UTC, to the microsecond. */
  publishedAt: string | null
  compareAtPriceMinor: string | null
  tags: string[]
  productType: string | null
  vendor: string | null
  barcode: string | null
  length: string | null
  width: string | null
  height: string | null
  dimensionUnit: string
  hsCode: string | null
  countryOfOrigin: string | null
  seoTitle: string | null
  seoDescription: string | null
  options: OptionRecord[]
  /** Public and staff-only values together, by key. */
  attributes: Record<string, AttributeValue>
  /** Base prices from one unit in other currencies than the product's: currency → [minor units, compare-at minor units or null]. */
  prices: Record<string, BasePrice> | null
  variantId: string | null
  variantTitle: string | null
  variantSku: string | null
  variantPriceMinor: string | null
  variantCompareAtPriceMinor: string | null
  variantBarcode: string | null
  variantOptions: Record<string, string> | null
  variantAttributes: Record<string, AttributeValue> | null
  variantWeight: string | null
  variantWeightUnit: string | null
  variantPrices: Record<string, BasePrice> | null
  /** On hand by location id, of the variant (or of the product without variants). */
  stock: Record<string, number> | null
}

export interface ProductExportFilters {
  isActive?: boolean | undefined
  categoryId?: string | undefined
  updatedAfter?: string | undefined
}

export function productExportRows(sql: postgres.Sql, filters: ProductExportFilters): AsyncIterable<ProductExportRow[]> {
  return sql.unsafe<ProductExportRow[]>(PRODUCT_ROWS, [filters.isActive ?? null, filters.categoryId ?? null, filters.updatedAfter ?? null], { prepare: true }).cursor(PAGE)
}

// Stock locations by name (the export's columns), the currencies with a base price anywhere (and
// those with a compare-at amount), and the attribute definitions of products and variants.
const PRODUCT_COLUMNS = `select
  (select coalesce(json_agg(json_build_object('id', id, 'name', name, 'isDefault', is_default) order by priority, name), '[]') from stock_locations) as locations,
  (select coalesce(json_agg(distinct currency order by currency), '[]') from prices where price_list_id is null and min_quantity = 1) as currencies,
  (select coalesce(json_agg(distinct currency order by currency), '[]') from prices
    where price_list_id is null and min_quantity = 1 and compare_at_amount_minor is not null) as "compareAtCurrencies",
  (select coalesce(json_agg(json_build_object('key', key, 'owner', owner) order by owner, position, key), '[]') from attribute_definitions) as attributes`

export interface StockLocationColumn {
  id: string
  name: string
  isDefault: boolean
}

export interface ProductExportColumns {
  locations: StockLocationColumn[]
  currencies: string[]
  /** Currencies with a compare-at amount on some base price: they get compare-at columns too. */
  compareAtCurrencies: string[]
  /** Attribute definitions in display order: a column each. */
  attributes: { key: string; owner: AttributeOwner }[]
}

/** What the products export's header holds beyond its fixed columns: every location, every currency with a base price, every attribute. */
export async function productExportColumns(sql: postgres.Sql): Promise<ProductExportColumns> {
  const [row] = await sql.unsafe<ProductExportColumns[]>(PRODUCT_COLUMNS, [], { prepare: true })
  return row!
}

// $1 created at or after, $2 created before, $3 a group id.
const ISO = (column: string) => `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

const CUSTOMER_ROWS = `select c.id, c.email, c.first_name as "firstName", c.last_name as "lastName", c.phone, ${ISO('c.created_at')} as "createdAt",
  (select coalesce(json_agg(g.name order by lower(g.name)), '[]') from customer_group_members m join customer_groups g on g.id = m.group_id
    where m.customer_id = c.id) as groups
from customers c
where c.deleted_at is null
  and ($1::timestamptz is null or c.created_at >= $1::timestamptz) and ($2::timestamptz is null or c.created_at < $2::timestamptz)
  and ($3::uuid is null or exists (select from customer_group_members m where m.customer_id = c.id and m.group_id = $3::uuid))
order by c.id`

export interface CustomerExportRow {
  id: string
  email: string
  firstName: string | null
  lastName: string | null
  phone: string | null
  /** ISO 8601, UTC. */
  createdAt: string
  groups: string[]
}

export interface CustomerExportFilters {
  createdAfter?: string | undefined
  createdBefore?: string | undefined
  groupId?: string | undefined
}

export function customerExportRows(sql: postgres.Sql, filters: CustomerExportFilters): AsyncIterable<CustomerExportRow[]> {
  return sql
    .unsafe<CustomerExportRow[]>(CUSTOMER_ROWS, [filters.createdAfter ?? null, filters.createdBefore ?? null, filters.groupId ?? null], { prepare: true })
    .cursor(PAGE)
}

// $1 status, $2 payment status, $3 created at or after, $4 created before, $5 a customer id.
const ORDER_ROWS = `select o.id, o.order_number as "orderNumber", ${ISO('o.created_at')} as "createdAt", o.status, o.payment_status as "paymentStatus",
  o.fulfillment_status as "fulfillmentStatus", o.customer_id as "customerId", o.email, o.currency,
  o.subtotal_minor::text as "subtotalMinor", o.discount_minor::text as "discountMinor", o.tax_minor::text as "taxMinor",
  o.shipping_minor::text as "shippingMinor", o.total_minor::text as "totalMinor", o.paid_minor::text as "paidMinor",
  o.refunded_minor::text as "refundedMinor", o.shipping_address as "shippingAddress", o.shipping_method->>'name' as "shippingMethod",
  (select coalesce(json_agg(c->>'code' order by c->>'code'), '[]') from jsonb_array_elements(o.coupons) c) as coupons,
  i.id as "lineId", i.product_id as "lineProductId", i.variant_id as "lineVariantId", i.sku as "lineSku", i.title as "lineTitle",
  i.variant_title as "lineVariantTitle", i.quantity as "lineQuantity", i.unit_price_minor::text as "lineUnitPriceMinor",
  i.discount_minor::text as "lineDiscountMinor", i.tax_minor::text as "lineTaxMinor", i.total_minor::text as "lineTotalMinor",
  i.fulfilled_quantity as "lineFulfilled", i.returned_quantity as "lineReturned", i.canceled_quantity as "lineCanceled"
from orders o join order_items i on i.order_id = o.id
where o.archived_at is null
  and ($1::text is null or o.status::text = $1::text) and ($2::text is null or o.payment_status::text = $2::text)
  and ($3::timestamptz is null or o.created_at >= $3::timestamptz) and ($4::timestamptz is null or o.created_at < $4::timestamptz)
  and ($5::uuid is null or o.customer_id = $5::uuid)
order by o.id, i.id`

export interface OrderExportRow {
  id: string
  orderNumber: string
  /** ISO 8601, UTC. */
  createdAt: string
  status: string
  paymentStatus: string
  fulfillmentStatus: string
  customerId: string | null
  email: string
  currency: string
  subtotalMinor: string
  discountMinor: string
  taxMinor: string
  shippingMinor: string
  totalMinor: string
  paidMinor: string
  refundedMinor: string
  shippingAddress: Record<string, string | null> | null
  shippingMethod: string | null
  coupons: string[]
  lineId: string
  lineProductId: string | null
  lineVariantId: string | null
  lineSku: string | null
  lineTitle: string
  lineVariantTitle: string | null
  lineQuantity: number
  lineUnitPriceMinor: string
  lineDiscountMinor: string
  lineTaxMinor: string
  lineTotalMinor: string
  lineFulfilled: number
  lineReturned: number
  lineCanceled: number
}

export interface OrderExportFilters {
  status?: string | undefined
  paymentStatus?: string | undefined
  createdAfter?: string | undefined
  createdBefore?: string | undefined
  customerId?: string | undefined
}

export function orderExportRows(sql: postgres.Sql, filters: OrderExportFilters): AsyncIterable<OrderExportRow[]> {
  const { status, paymentStatus, createdAfter, createdBefore, customerId } = filters
  return sql
    .unsafe<OrderExportRow[]>(ORDER_ROWS, [status ?? null, paymentStatus ?? null, createdAfter ?? null, createdBefore ?? null, customerId ?? null], { prepare: true })
    .cursor(PAGE)
}
