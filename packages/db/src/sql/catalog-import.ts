/**
 * The writes of a products CSV import (docs/csv.md), a batch at a time in the worker's
 * transaction: what the file's rows match (locked, as the API locks a product it changes), then
 * new products and variants made with the ids the file gives (or new ones), existing ones changed
 * in the fields each write carries, categories, base prices and stock set. Stock moves through
 * stock-moves.ts like every other change of it.
 */
import type { AttributeOwner, AttributeRules, AttributeType, AttributeValue, DimensionUnitCode, OptionRecord, ProductStatusCode, WeightUnit } from '@commerce/domain'
import type { SqlClient } from '../transaction.js'

export interface ProductMatches {
  products: {
    id: string
    slug: string
    currency: string
    status: ProductStatusCode
    /** ISO 8601; null: not yet published. */
    publishedAt: string | null
    options: OptionRecord[]
    variants: { id: string; sku: string | null; title: string; optionValueIds: string[]; options: Record<string, string> }[]
  }[]
  /** Variants the file names by id, wherever they are. */
  variants: { id: string; productId: string }[]
  categories: { id: string; slug: string }[]
  /** Of the product ids attribute cells refer to, those that are products. */
  references: string[]
}

// $1 product ids, $2 slugs: the products a batch may change, locked in id order so that two
// imports (or an import and the API, which locks the one product it changes) wait for each other.
const LOCK_PRODUCTS = `select id from products where id = any($1::uuid[]) or slug = any($2::text[]) order by id for update`

// $1 product ids, $2 slugs, $3 variant ids, $4 category slugs, $5 referenced product ids.
const MATCHES = `select
  (select coalesce(json_agg(json_build_object('id', p.id, 'slug', p.slug, 'currency', p.currency, 'status', p.status,
    'publishedAt', p.published_at, 'options', p.options,
    'variants', (select coalesce(json_agg(json_build_object('id', v.id, 'sku', v.sku, 'title', v.title, 'optionValueIds', v.option_value_ids,
      'options', v.options) order by v.id), '[]')
      from product_variants v where v.product_id = p.id))), '[]')
    from products p where p.id = any($1::uuid[]) or p.slug = any($2::text[])) as products,
  (select coalesce(json_agg(json_build_object('id', v.id, 'productId', v.product_id)), '[]') from product_variants v where v.id = any($3::uuid[])) as variants,
  (select coalesce(json_agg(json_build_object('id', c.id, 'slug', c.slug)), '[]') from categories c where c.slug = any($4::text[])) as categories,
  (select coalesce(json_agg(p.id), '[]') from products p where p.id = any($5::uuid[])) as "references"`

/** The products (locked), variants and categories a batch's rows name, and which of the products its attribute cells refer to exist. */
export async function readProductMatches(
  sql: SqlClient,
  names: { productIds: string[]; slugs: string[]; variantIds: string[]; categorySlugs: string[]; references?: string[] | undefined },
): Promise<ProductMatches> {
  await sql.unsafe(LOCK_PRODUCTS, [names.productIds, names.slugs], { prepare: true })
  const [row] = await sql.unsafe<ProductMatches[]>(MATCHES, [names.productIds, names.slugs, names.variantIds, names.categorySlugs, names.references ?? []], { prepare: true })
  return row!
}

/** An attribute definition as an import checks values against it. */
export interface AttributeDefinitionColumn {
  key: string
  owner: AttributeOwner
  type: AttributeType
  choices: string[]
  rules: AttributeRules
  public: boolean
}

const ATTRIBUTE_DEFINITIONS = `select key, owner, type, choices, rules, public from attribute_definitions order by owner, position, key`

/** Every attribute definition, by owner, in display order (the columns `attribute:<key>` and `variant_attribute:<key>`). */
export async function readAttributeDefinitions(sql: SqlClient): Promise<AttributeDefinitionColumn[]> {
  return sql.unsafe<AttributeDefinitionColumn[]>(ATTRIBUTE_DEFINITIONS, [], { prepare: true })
}

/**
 * Attribute values written by a file: the keys it has columns for are replaced by `values`
 * (public definitions) and `staffValues` (the others); a key in neither is removed.
 */
export interface AttributeWrite {
  keys: string[]
  values: Record<string, AttributeValue>
  staffValues: Record<string, AttributeValue>
}

export interface ProductFields {
  title: string
  slug: string
  description: string | null
  sku: string | null
  priceMinor: number
  currency: string
  /** An exact decimal. */
  weight: string | null
  weightUnit: WeightUnit
  /** Written alone, as the API's is_active: true makes the product active, false archives it (the status trigger). */
  isActive: boolean
  status: ProductStatusCode
  /** ISO 8601 as the file writes it; null: now, for an active product. */
  publishedAt: string | null
  compareAtPriceMinor: number | null
  tags: string[]
  productType: string | null
  vendor: string | null
  barcode: string | null
  /** Exact decimals. */
  length: string | null
  width: string | null
  height: string | null
  dimensionUnit: DimensionUnitCode
  hsCode: string | null
  countryOfOrigin: string | null
  seoTitle: string | null
  seoDescription: string | null
  options: OptionRecord[]
  attributes: AttributeWrite
  /** Null: the product shows its first image. */
  imageUrl: string | null
}

export interface VariantFields {
  title: string
  sku: string | null
  /** Null: the product's price applies. */
  priceMinor: number | null
  compareAtPriceMinor: number | null
  barcode: string | null
  /** Option name → value: the values chosen, on a product with options; free-form otherwise. */
  options: Record<string, string>
  /** The values chosen, sorted; empty on a product without options. */
  optionValueIds: string[]
  attributes: AttributeWrite
  weight: string | null
  weightUnit: WeightUnit
}

export interface ProductWrite {
  id: string
  /** Made by this batch (every field given, or its default); otherwise changed in the fields `fields` has. */
  create: boolean
  fields: Partial<ProductFields>
  /** A new product's units at the default location (its level starts with them, an `initial` movement). */
  initialStock?: number | undefined
  /** Undefined: the product's categories stay as they are. */
  categoryIds?: string[] | undefined
  variants: VariantWrite[]
}

export interface VariantWrite {
  id: string
  create: boolean
  /** As for products: an existing variant changes in the fields this has. */
  fields: Partial<VariantFields>
  initialStock?: number | undefined
}

/**
 * A base price from one unit (no price list) of a product (variant null) or variant; amount null
 * removes it. `compareAtAmountMinor` undefined keeps an existing price's compare-at amount.
 */
export interface PriceWrite {
  id: string
  productId: string
  variantId: string | null
  currency: string
  amountMinor: number | null
  compareAtAmountMinor?: number | null | undefined
}

const PRODUCT_RECORD = `r(id uuid, title text, slug text, description text, sku text, "priceMinor" bigint, currency text, weight numeric,
  "weightUnit" weight_unit, "isActive" boolean, status product_status, "publishedAt" timestamptz, "compareAtPriceMinor" bigint, tags text[],
  "productType" text, vendor text, barcode text, length numeric, width numeric, height numeric, "dimensionUnit" dimension_unit, "hsCode" text,
  "countryOfOrigin" text, "seoTitle" text, "seoDescription" text, options jsonb, "attributeKeys" text[], attributes jsonb, "staffAttributes" jsonb,
  "imageUrl" text, "initialStock" int, "categoryIds" uuid[], present text[])`

// A new product's status: the file's, else what its is_active says (true, or none: active).
const NEW_STATUS = `coalesce(r.status, case when r."isActive" is false then 'archived' else 'active' end::product_status)`

// $1 the new products. Their categories are written as the links' trigger would write them
// (product_categories_json), so adding the links after rewrites nothing. The status trigger sets
// is_active from status and published_at (and a later published_at schedules the product).
const INSERT_PRODUCTS = `insert into products (id, title, slug, description, sku, price_minor, currency, weight, weight_unit, status, is_active,
  published_at, compare_at_price_minor, tags, product_type, vendor, barcode, length, width, height, dimension_unit, hs_code, country_of_origin,
  seo_title, seo_description, options, attributes, staff_attributes, image_url, image_url_explicit, inventory_quantity, categories)
select r.id, r.title, r.slug, r.description, r.sku, r."priceMinor", r.currency, r.weight, r."weightUnit", ${NEW_STATUS}, ${NEW_STATUS} = 'active',
  r."publishedAt", r."compareAtPriceMinor", coalesce(r.tags, '{}'), r."productType", r.vendor, r.barcode, r.length, r.width, r.height,
  coalesce(r."dimensionUnit", 'cm'), r."hsCode", r."countryOfOrigin", r."seoTitle", r."seoDescription", coalesce(r.options, '[]'),
  coalesce(r.attributes, '{}'), coalesce(r."staffAttributes", '{}'), r."imageUrl", r."imageUrl" is not null, coalesce(r."initialStock", 0),
  (select coalesce(jsonb_agg(jsonb_build_object('id', c.id, 'name', c.name, 'slug', c.slug) order by c.name, c.id), '[]'::jsonb)
    from categories c where c.id = any(r."categoryIds"))
from json_to_recordset($1::json) as ${PRODUCT_RECORD}`

/** The column set from the field when the write carries it (`present`), else kept. */
const keep = (column: string, field: string) => `case when '${field}' = any(r.present) then r."${field}" else p.${column} end`
/** Attribute values: the keys the file has columns for replaced (the others kept). */
const attributeColumns = `attributes = case when 'attributes' = any(r.present) then (p.attributes - r."attributeKeys") || r.attributes else p.attributes end,
  staff_attributes = case when 'attributes' = any(r.present) then (p.staff_attributes - r."attributeKeys") || r."staffAttributes" else p.staff_attributes end`

// $1 the changed products. A cleared image_url follows the first image again. is_active is
// written only without status (the trigger then sets the status from it, as for the API).
const UPDATE_PRODUCTS = `update products p set title = ${keep('title', 'title')}, slug = ${keep('slug', 'slug')},
  description = ${keep('description', 'description')}, sku = ${keep('sku', 'sku')}, price_minor = ${keep('price_minor', 'priceMinor')},
  weight = ${keep('weight', 'weight')}, weight_unit = ${keep('weight_unit', 'weightUnit')}, is_active = ${keep('is_active', 'isActive')},
  status = ${keep('status', 'status')}, published_at = ${keep('published_at', 'publishedAt')},
  compare_at_price_minor = ${keep('compare_at_price_minor', 'compareAtPriceMinor')}, tags = ${keep('tags', 'tags')},
  product_type = ${keep('product_type', 'productType')}, vendor = ${keep('vendor', 'vendor')}, barcode = ${keep('barcode', 'barcode')},
  length = ${keep('length', 'length')}, width = ${keep('width', 'width')}, height = ${keep('height', 'height')},
  dimension_unit = ${keep('dimension_unit', 'dimensionUnit')}, hs_code = ${keep('hs_code', 'hsCode')},
  country_of_origin = ${keep('country_of_origin', 'countryOfOrigin')}, seo_title = ${keep('seo_title', 'seoTitle')},
  seo_description = ${keep('seo_description', 'seoDescription')}, options = ${keep('options', 'options')}, ${attributeColumns},
  image_url = case when 'imageUrl' = any(r.present) then coalesce(r."imageUrl",
    (select i.url from product_images i where i.product_id = p.id order by i.position, i.id limit 1)) else p.image_url end,
  image_url_explicit = case when 'imageUrl' = any(r.present) then r."imageUrl" is not null else p.image_url_explicit end,
  updated_at = now()
from json_to_recordset($1::json) as ${PRODUCT_RECORD} where p.id = r.id`

const VARIANT_RECORD = `r(id uuid, "productId" uuid, title text, sku text, "priceMinor" bigint, "compareAtPriceMinor" bigint, barcode text, options jsonb,
  "optionValueIds" uuid[], "attributeKeys" text[], attributes jsonb, "staffAttributes" jsonb, weight numeric, "weightUnit" weight_unit,
  "initialStock" int, present text[])`

const INSERT_VARIANTS = `insert into product_variants (id, product_id, title, sku, price_minor, compare_at_price_minor, barcode, options, option_value_ids,
  attributes, staff_attributes, weight, weight_unit, inventory_quantity)
select r.id, r."productId", r.title, r.sku, r."priceMinor", r."compareAtPriceMinor", r.barcode, coalesce(r.options, '{}'),
  coalesce(r."optionValueIds", '{}'), coalesce(r.attributes, '{}'), coalesce(r."staffAttributes", '{}'), r.weight, r."weightUnit",
  coalesce(r."initialStock", 0)
from json_to_recordset($1::json) as ${VARIANT_RECORD}`

// $1 variant ids: their combinations let go first, so that no row passes through another's on the
// way (the unique index product_variants_combination_key checks each row as it is written).
const RELEASE_COMBINATIONS = `update product_variants set option_value_ids = '{}' where id = any($1::uuid[]) and option_value_ids <> '{}'`

const UPDATE_VARIANTS = `update product_variants p set title = ${keep('title', 'title')}, sku = ${keep('sku', 'sku')},
  price_minor = ${keep('price_minor', 'priceMinor')}, compare_at_price_minor = ${keep('compare_at_price_minor', 'compareAtPriceMinor')},
  barcode = ${keep('barcode', 'barcode')}, options = ${keep('options', 'options')}, option_value_ids = ${keep('option_value_ids', 'optionValueIds')},
  ${attributeColumns}, weight = ${keep('weight', 'weight')}, weight_unit = ${keep('weight_unit', 'weightUnit')}, updated_at = now()
from json_to_recordset($1::json) as ${VARIANT_RECORD} where p.id = r.id`

const CLEAR_CATEGORIES = `delete from product_categories where product_id = any($1::uuid[])`
const ADD_CATEGORIES = `insert into product_categories (product_id, category_id)
select r.product, r.category from json_to_recordset($1::json) as r(product uuid, category uuid)`

const PRICE_RECORD = `r(id uuid, "productId" uuid, "variantId" uuid, currency text, "amountMinor" bigint, "compareAtAmountMinor" bigint)`
// $1 prices whose compare-at amount the file does not give: an existing one keeps its own.
const SET_PRICES = `insert into prices (id, product_id, variant_id, currency, amount_minor, min_quantity)
select r.id, r."productId", r."variantId", r.currency, r."amountMinor", 1
from json_to_recordset($1::json) as ${PRICE_RECORD}
on conflict on constraint prices_key do update set amount_minor = excluded.amount_minor, updated_at = now()
where prices.amount_minor is distinct from excluded.amount_minor`
// $1 prices with their compare-at amounts (null: none).
const SET_PRICES_COMPARED = `insert into prices (id, product_id, variant_id, currency, amount_minor, compare_at_amount_minor, min_quantity)
select r.id, r."productId", r."variantId", r.currency, r."amountMinor", r."compareAtAmountMinor", 1
from json_to_recordset($1::json) as ${PRICE_RECORD}
on conflict on constraint prices_key do update set amount_minor = excluded.amount_minor, compare_at_amount_minor = excluded.compare_at_amount_minor,
  updated_at = now()
where (prices.amount_minor, prices.compare_at_amount_minor) is distinct from (excluded.amount_minor, excluded.compare_at_amount_minor)`
const REMOVE_PRICES = `delete from prices p using json_to_recordset($1::json) as r("productId" uuid, "variantId" uuid, currency text)
where p.product_id = r."productId" and p.variant_id is not distinct from r."variantId" and p.price_list_id is null
  and p.currency = r.currency and p.min_quantity = 1`

const json = (rows: unknown[]) => JSON.stringify(rows)

/** A write's fields as a row of the statements' records: attributes spread out, and `present` naming the fields it carries. */
function recordOf<T extends { attributes?: AttributeWrite | undefined }>(fields: T) {
  const { attributes, ...rest } = fields
  return {
    ...rest,
    ...(attributes && { attributeKeys: attributes.keys, attributes: attributes.values, staffAttributes: attributes.staffValues }),
    present: Object.entries(fields).flatMap(([field, value]) => (value === undefined ? [] : [field])),
  }
}

/**
 * Writes a batch's products, variants, categories and prices in the caller's transaction. An
 * existing product or variant changes in the fields its write carries (`fields` without one: it
 * keeps its value). New products and variants get their levels at the default location with
 * their `initialStock` (the stock elsewhere is set after, by the caller).
 */
export async function writeProducts(sql: SqlClient, batch: { products: ProductWrite[]; prices: PriceWrite[] }): Promise<void> {
  const created = batch.products.filter((product) => product.create)
  const variants = batch.products.flatMap((product) =>
    product.variants.map((variant) => ({ ...recordOf(variant.fields), id: variant.id, productId: product.id, create: variant.create, initialStock: variant.initialStock })),
  )
  if (created.length > 0) {
    const rows = created.map((product) => ({ ...recordOf(product.fields), id: product.id, initialStock: product.initialStock, categoryIds: product.categoryIds ?? [] }))
    await sql.unsafe(INSERT_PRODUCTS, [json(rows)], { prepare: true })
  }
  const changedProducts = batch.products
    .filter((product) => !product.create)
    .map((product) => ({ ...recordOf(product.fields), id: product.id }))
    .filter((row) => row.present.length > 0)
  if (changedProducts.length > 0) await sql.unsafe(UPDATE_PRODUCTS, [json(changedProducts)], { prepare: true })
  const newVariants = variants.filter((variant) => variant.create)
  const changedVariants = variants.filter((variant) => !variant.create && variant.present.length > 0)
  const rechosen = changedVariants.filter((variant) => variant.present.includes('optionValueIds')).map((variant) => variant.id)
  if (rechosen.length > 0) await sql.unsafe(RELEASE_COMBINATIONS, [rechosen], { prepare: true })
  if (newVariants.length > 0) await sql.unsafe(INSERT_VARIANTS, [json(newVariants)], { prepare: true })
  if (changedVariants.length > 0) await sql.unsafe(UPDATE_VARIANTS, [json(changedVariants)], { prepare: true })
  const categorized = batch.products.filter((product) => product.categoryIds !== undefined)
  if (categorized.length > 0) {
    await sql.unsafe(CLEAR_CATEGORIES, [categorized.map((product) => product.id)], { prepare: true })
    const links = categorized.flatMap((product) => product.categoryIds!.map((category) => ({ product: product.id, category })))
    if (links.length > 0) await sql.unsafe(ADD_CATEGORIES, [json(links)], { prepare: true })
  }
  const set = batch.prices.filter((price) => price.amountMinor !== null && price.compareAtAmountMinor === undefined)
  const compared = batch.prices.filter((price) => price.amountMinor !== null && price.compareAtAmountMinor !== undefined)
  const removed = batch.prices.filter((price) => price.amountMinor === null)
  if (set.length > 0) await sql.unsafe(SET_PRICES, [json(set)], { prepare: true })
  if (compared.length > 0) await sql.unsafe(SET_PRICES_COMPARED, [json(compared)], { prepare: true })
  if (removed.length > 0) await sql.unsafe(REMOVE_PRICES, [json(removed)], { prepare: true })
}
