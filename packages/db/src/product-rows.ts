/** Product rows (sql/product-detail.ts) as the API and the product.* events show them. */
import { toMajorUnits, type Image, type Product, type ProductListItem, type ProductOption, type Variant } from '@commerce/domain'
import type { ProductOptionJson, productImages, productVariants } from './schema/index.js'
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
    compare_at_price: row.compareAtPriceMinor === null ? null : toMajorUnits(row.compareAtPriceMinor, row.currency),
    on_sale: row.compareAtPriceMinor !== null && row.compareAtPriceMinor > row.priceMinor,
    currency: row.currency,
    inventory_quantity: row.inventoryQuantity,
    weight: row.weight,
    weight_unit: row.weightUnit,
    status: row.status,
    published_at: row.publishedAt === null ? null : iso(row.publishedAt),
    is_active: row.isActive,
    tags: row.tags,
    product_type: row.productType,
    vendor: row.vendor,
    barcode: row.barcode,
    length: row.length,
    width: row.width,
    height: row.height,
    dimension_unit: row.dimensionUnit,
    hs_code: row.hsCode,
    country_of_origin: row.countryOfOrigin,
    seo_title: row.seoTitle,
    seo_description: row.seoDescription,
    options: row.options.map(toOption),
    image_url: row.imageUrl,
    categories: row.categories,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

/** What a variant's prices fall back to: its product's. */
export type VariantProduct = Pick<ProductRow, 'currency' | 'priceMinor' | 'compareAtPriceMinor'>

export function toVariant(row: typeof productVariants.$inferSelect | VariantJson, product: VariantProduct): Variant {
  const price = row.priceMinor ?? product.priceMinor
  const compareAt = row.compareAtPriceMinor ?? product.compareAtPriceMinor
  return {
    id: row.id,
    product_id: row.productId,
    title: row.title,
    sku: row.sku,
    price: row.priceMinor === null ? null : toMajorUnits(row.priceMinor, product.currency),
    compare_at_price: row.compareAtPriceMinor === null ? null : toMajorUnits(row.compareAtPriceMinor, product.currency),
    on_sale: compareAt !== null && compareAt > price,
    barcode: row.barcode,
    inventory_quantity: row.inventoryQuantity,
    options: row.options,
    weight: row.weight,
    weight_unit: row.weightUnit,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }
}

export function toOption(option: ProductOptionJson): ProductOption {
  return {
    id: option.id,
    name: option.name,
    values: option.values.map((value) => ({ id: value.id, value: value.value, swatch_color: value.swatchColor, swatch_image_url: value.swatchImageUrl })),
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
    variants: row.variants.map((variant) => toVariant(variant, row)),
    images: row.images.map(toImage),
  }
}
