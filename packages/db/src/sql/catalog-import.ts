/**
 * The writes of a products CSV import (docs/csv.md), a batch at a time in the worker's
 * transaction: what the file's rows match, then new products and variants made with the ids the
 * file gives (or new ones), existing ones changed in the columns the file has, categories,
 * base prices and stock set. Stock moves through stock-moves.ts like every other change of it.
 */
import type { WeightUnit } from '@commerce/domain'
import type { SqlClient } from '../transaction.js'

export interface ProductMatches {
  products: { id: string; slug: string; currency: string; variants: { id: string; sku: string | null; title: string }[] }[]
  /** Variants the file names by id, wherever they are. */
  variants: { id: string; productId: string }[]
  categories: { id: string; slug: string }[]
}

// $1 product ids, $2 slugs, $3 variant ids, $4 category slugs.
const MATCHES = `select
  (select coalesce(json_agg(json_build_object('id', p.id, 'slug', p.slug, 'currency', p.currency,
    'variants', (select coalesce(json_agg(json_build_object('id', v.id, 'sku', v.sku, 'title', v.title) order by v.id), '[]')
      from product_variants v where v.product_id = p.id))), '[]')
    from products p where p.id = any($1::uuid[]) or p.slug = any($2::text[])) as products,
  (select coalesce(json_agg(json_build_object('id', v.id, 'productId', v.product_id)), '[]') from product_variants v where v.id = any($3::uuid[])) as variants,
  (select coalesce(json_agg(json_build_object('id', c.id, 'slug', c.slug)), '[]') from categories c where c.slug = any($4::text[])) as categories`

/** The products, variants and categories a batch's rows name. */
export async function readProductMatches(sql: SqlClient, names: { productIds: string[]; slugs: string[]; variantIds: string[]; categorySlugs: string[] }): Promise<ProductMatches> {
  const [row] = await sql.unsafe<ProductMatches[]>(MATCHES, [names.productIds, names.slugs, names.variantIds, names.categorySlugs], { prepare: true })
  return row!
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
  isActive: boolean
  /** Null: the product shows its first image. */
  imageUrl: string | null
}

export interface VariantFields {
  title: string
  sku: string | null
  /** Null: the product's price applies. */
  priceMinor: number | null
  options: Record<string, string>
  weight: string | null
  weightUnit: WeightUnit
}

export interface ProductWrite {
  id: string
  /** Made by this batch; otherwise changed in the `present` fields only. */
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
  fields: Partial<VariantFields>
  initialStock?: number | undefined
}

/** A base price from one unit (no price list) of a product (variant null) or variant; amount null removes it. */
export interface PriceWrite {
  id: string
  productId: string
  variantId: string | null
  currency: string
  amountMinor: number | null
}

const PRODUCT_RECORD = `r(id uuid, title text, slug text, description text, sku text, "priceMinor" bigint, currency text, weight numeric,
  "weightUnit" weight_unit, "isActive" boolean, "imageUrl" text, "initialStock" int, "categoryIds" uuid[])`

// $1 the new products, every field given. Their categories are written as the links' trigger
// would write them (product_categories_json), so adding the links after rewrites nothing.
const INSERT_PRODUCTS = `insert into products (id, title, slug, description, sku, price_minor, currency, weight, weight_unit, is_active, image_url,
  image_url_explicit, inventory_quantity, categories)
select r.id, r.title, r.slug, r.description, r.sku, r."priceMinor", r.currency, r.weight, r."weightUnit", r."isActive", r."imageUrl",
  r."imageUrl" is not null, coalesce(r."initialStock", 0),
  (select coalesce(jsonb_agg(jsonb_build_object('id', c.id, 'name', c.name, 'slug', c.slug) order by c.name, c.id), '[]'::jsonb)
    from categories c where c.id = any(r."categoryIds"))
from json_to_recordset($1::json) as ${PRODUCT_RECORD}`

const keep = (column: string, field: string, present = '$2') => `case when '${field}' = any(${present}::text[]) then r."${field}" else p.${column} end`

// $1 the changed products, $2 the fields the file has. A cleared image_url follows the first image again.
const UPDATE_PRODUCTS = `update products p set title = ${keep('title', 'title')}, slug = ${keep('slug', 'slug')},
  description = ${keep('description', 'description')}, sku = ${keep('sku', 'sku')}, price_minor = ${keep('price_minor', 'priceMinor')},
  weight = ${keep('weight', 'weight')}, weight_unit = ${keep('weight_unit', 'weightUnit')}, is_active = ${keep('is_active', 'isActive')},
  image_url = case when 'imageUrl' = any($2::text[]) then coalesce(r."imageUrl",
    (select i.url from product_images i where i.product_id = p.id order by i.position, i.id limit 1)) else p.image_url end,
  image_url_explicit = case when 'imageUrl' = any($2::text[]) then r."imageUrl" is not null else p.image_url_explicit end,
  updated_at = now()
from json_to_recordset($1::json) as ${PRODUCT_RECORD} where p.id = r.id`

const VARIANT_RECORD = `r(id uuid, "productId" uuid, title text, sku text, "priceMinor" bigint, options jsonb, weight numeric, "weightUnit" weight_unit,
  "initialStock" int)`

const INSERT_VARIANTS = `insert into product_variants (id, product_id, title, sku, price_minor, options, weight, weight_unit, inventory_quantity)
select r.id, r."productId", r.title, r.sku, r."priceMinor", r.options, r.weight, r."weightUnit", coalesce(r."initialStock", 0)
from json_to_recordset($1::json) as ${VARIANT_RECORD}`

const UPDATE_VARIANTS = `update product_variants p set title = ${keep('title', 'title')}, sku = ${keep('sku', 'sku')},
  price_minor = ${keep('price_minor', 'priceMinor')}, options = ${keep('options', 'options')}, weight = ${keep('weight', 'weight')},
  weight_unit = ${keep('weight_unit', 'weightUnit')}, updated_at = now()
from json_to_recordset($1::json) as ${VARIANT_RECORD} where p.id = r.id`

const CLEAR_CATEGORIES = `delete from product_categories where product_id = any($1::uuid[])`
const ADD_CATEGORIES = `insert into product_categories (product_id, category_id)
select r.product, r.category from json_to_recordset($1::json) as r(product uuid, category uuid)`

const SET_PRICES = `insert into prices (id, product_id, variant_id, currency, amount_minor, min_quantity)
select r.id, r."productId", r."variantId", r.currency, r."amountMinor", 1
from json_to_recordset($1::json) as r(id uuid, "productId" uuid, "variantId" uuid, currency text, "amountMinor" bigint)
on conflict on constraint prices_key do update set amount_minor = excluded.amount_minor, updated_at = now()
where prices.amount_minor is distinct from excluded.amount_minor`
const REMOVE_PRICES = `delete from prices p using json_to_recordset($1::json) as r("productId" uuid, "variantId" uuid, currency text)
where p.product_id = r."productId" and p.variant_id is not distinct from r."variantId" and p.price_list_id is null
  and p.currency = r.currency and p.min_quantity = 1`

const json = (rows: unknown[]) => JSON.stringify(rows)

/**
 * Writes a batch's products, variants, categories and prices in the caller's transaction. Fields
 * left out of a change (`fields` without them) keep their value: `present` lists the fields the
 * file has, for products and variants. New products and variants get their levels at the
 * default location with their `initialStock` (the stock elsewhere is set after, by the caller).
 */
export async function writeProducts(
  sql: SqlClient,
  batch: { products: ProductWrite[]; prices: PriceWrite[]; present: { product: string[]; variant: string[] } },
): Promise<void> {
  const created = batch.products.filter((product) => product.create)
  const changed = batch.products.filter((product) => !product.create)
  const variants = batch.products.flatMap((product) =>
    product.variants.map((variant) => ({ ...variant.fields, id: variant.id, productId: product.id, create: variant.create, initialStock: variant.initialStock })),
  )
  if (created.length > 0) {
    const rows = created.map((product) => ({ ...product.fields, id: product.id, initialStock: product.initialStock, categoryIds: product.categoryIds ?? [] }))
    await sql.unsafe(INSERT_PRODUCTS, [json(rows)], { prepare: true })
  }
  if (changed.length > 0 && batch.present.product.length > 0) {
    await sql.unsafe(UPDATE_PRODUCTS, [json(changed.map((product) => ({ ...product.fields, id: product.id }))), batch.present.product], { prepare: true })
  }
  const newVariants = variants.filter((variant) => variant.create)
  const changedVariants = variants.filter((variant) => !variant.create)
  if (newVariants.length > 0) await sql.unsafe(INSERT_VARIANTS, [json(newVariants)], { prepare: true })
  if (changedVariants.length > 0 && batch.present.variant.length > 0) {
    await sql.unsafe(UPDATE_VARIANTS, [json(changedVariants), batch.present.variant], { prepare: true })
  }
  const categorized = batch.products.filter((product) => product.categoryIds !== undefined)
  if (categorized.length > 0) {
    await sql.unsafe(CLEAR_CATEGORIES, [categorized.map((product) => product.id)], { prepare: true })
    const links = categorized.flatMap((product) => product.categoryIds!.map((category) => ({ product: product.id, category })))
    if (links.length > 0) await sql.unsafe(ADD_CATEGORIES, [json(links)], { prepare: true })
  }
  const set = batch.prices.filter((price) => price.amountMinor !== null)
  const removed = batch.prices.filter((price) => price.amountMinor === null)
  if (set.length > 0) await sql.unsafe(SET_PRICES, [json(set)], { prepare: true })
  if (removed.length > 0) await sql.unsafe(REMOVE_PRICES, [json(removed)], { prepare: true })
}
