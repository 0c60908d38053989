/** Product rows (sql/product-detail.ts) as the API and the product.* events show them. */
import { toMajorUnits, type Image, type Product, type ProductListItem, type Variant } from '@commerce/domain'
import type { productImages, productVariants } from './schema/index.js'
import type { ImageJson, ProductDetailRow, ProductRow, VariantJson } from './sql/product-detail.js'

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

export function toVariant(row: typeof productVariants.$inferSelect | VariantJson, currency: string): Variant {
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

export function toImage(row: typeof productImages.$inferSelect | ImageJson): Image {
  return {
    id: row.id,
    product_id: row.productId,
    url: row.url,
    alt: row.alt,
    position: row.position,
    content_type: row.contentType,
    size: row.sizeBytes,
    width: row.width,
    height: row.height,
    thumbnails: row.thumbnails.map(({ width, height, url }) => ({ width, height, url })),
    created_at: iso(row.createdAt),
  }
}


export function productSnapshot(row: ProductDetailRow): Product {
  return {
    ...toListItem(row),
    variants: row.variants.map((variant) => toVariant(variant, row.currency)),
    images: row.images.map(toImage),
  }
}
