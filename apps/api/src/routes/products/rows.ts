/** Product rows and the API shapes they become: the columns read, the JSON subqueries, the mappers. */
import { sql } from 'drizzle-orm'
import { toMajorUnits, type Image, type ProductListItem, type Variant } from '@commerce/domain'
import { productImages, products, productVariants } from '@commerce/db'

export type ProductRow = Omit<typeof products.$inferSelect, 'searchVector'>
export type VariantRow = typeof productVariants.$inferSelect
export type ImageRow = typeof productImages.$inferSelect

export const productColumns = {
  id: products.id,
  title: products.title,
  slug: products.slug,
  description: products.description,
  sku: products.sku,
  priceMinor: products.priceMinor,
  currency: products.currency,
  inventoryQuantity: products.inventoryQuantity,
  weight: products.weight,
  weightUnit: products.weightUnit,
  isActive: products.isActive,
  imageUrl: products.imageUrl,
  categories: products.categories,
  createdAt: products.createdAt,
  updatedAt: products.updatedAt,
}

/** Rows as JSON from a subquery: the same fields as Drizzle's rows, timestamps as text. */
type AsJson<Row> = { [K in keyof Row]: Row[K] extends Date ? string : Row[K] }

// Variants and images come in the product's own query, so a detail read is one round trip.
export const variantsOfProduct = sql<AsJson<VariantRow>[]>`coalesce((
  select json_agg(json_build_object(
    'id', v.id, 'productId', v.product_id, 'title', v.title, 'sku', v.sku, 'priceMinor', v.price_minor,
    'inventoryQuantity', v.inventory_quantity, 'options', v.options, 'weight', v.weight,
    'weightUnit', v.weight_unit, 'createdAt', v.created_at, 'updatedAt', v.updated_at) order by v.id)
  from product_variants v where v.product_id = "products"."id"), '[]'::json)`

export const imagesOfProduct = sql<AsJson<ImageRow>[]>`coalesce((
  select json_agg(json_build_object(
    'id', i.id, 'productId', i.product_id, 'url', i.url, 'alt', i.alt, 'position', i.position,
    'createdAt', i.created_at) order by i.position, i.id)
  from product_images i where i.product_id = "products"."id"), '[]'::json)`

const iso = (value: Date | string) => new Date(value).toISOString()

export function toListItem(row: ProductRow): ProductListItem {
  return {
    id: row.id,
    title: row.title,
    slug: row.slug,
    description: row.description,
    sku: row.sku,
    price: toMajorUnits(row.priceMinor, row.currency),
    currency: row.currency,
    inventory_quantity: row.inventoryQuantity,
    weight: row.weight,
    weight_unit: row.weightUnit,
    is_active: row.isActive,
    image_url: row.imageUrl,
    categories: row.categories,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

export function toVariant(row: VariantRow | AsJson<VariantRow>, currency: string): Variant {
  return {
    id: row.id,
    product_id: row.productId,
    title: row.title,
    sku: row.sku,
    price: row.priceMinor === null ? null : toMajorUnits(row.priceMinor, currency),
    inventory_quantity: row.inventoryQuantity,
    options: row.options,
    weight: row.weight,
    weight_unit: row.weightUnit,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }
}

export function toImage(row: ImageRow | AsJson<ImageRow>): Image {
  return {
    id: row.id,
    product_id: row.productId,
    url: row.url,
    alt: row.alt,
    position: row.position,
    created_at: iso(row.createdAt),
  }
}

