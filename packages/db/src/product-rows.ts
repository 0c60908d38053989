/** Product rows (sql/product-detail.ts) as the API and the product.* events show them. */
import { recordOf, toMajorUnits, type Image, type Product, type ProductListItem, type ProductOption, type Variant } from '@commerce/domain'
import type { ProductOptionJson, productImages, productVariants } from './schema/index.js'
import type { ImageJson, ProductDetailRow, ProductRow, VariantJson } from './sql/product-detail.js'

const iso = (value: Date | string) => new Date(value).toISOString()

/**
 * A product row as the API shows it. `staff`: with the values of attributes that are not public
 * (admins, API keys, the events); the public sees only the others.
 */
export function toListItem(row: ProductRow & Translated, staff = true): ProductListItem {
  const texts = row.attributeTexts
  const attributes = texts ? Object.fromEntries(Object.entries(row.attributes).map(([key, value]) => [key, typeof value === 'string' ? (texts[key] ?? value) : value])) : row.attributes
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
    options: translatedOptions(row).map(toOption),
    attributes: staff ? { ...attributes, ...row.staffAttributes } : attributes,
    image_url: row.imageUrl,
    categories: row.categories,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

/** A stored public item (product_list_items) with what a stock move changes put in front. */
export interface StoredItem {
  body: string
  inventoryQuantity: number
  updatedAt: Date
}

/**
 * A public list item's JSON from its stored text: toListItem's fields for the public, the row's
 * stock and `updated_at` added in front (and `market_price`, when the list is in a currency).
 */
export function listItemJson(item: StoredItem, marketPrice?: ProductListItem['market_price']): string {
  const market = marketPrice === undefined ? '' : `"market_price":${JSON.stringify(marketPrice)},`
  return `{${market}"inventory_quantity":${item.inventoryQuantity},"updated_at":"${item.updatedAt.toISOString()}",${item.body.slice(1)}`
}

/** The public detail's JSON (toListItem's fields with variants and images) from its stored parts (prepareStoredProductDetail). */
export function storedDetailJson(row: StoredItem & { variants: string; images: string }): string {
  return `${listItemJson(row).slice(0, -1)},"variants":${row.variants},"images":${row.images}}`
}

/** What a localized read adds to a product row: its attribute texts and option names and values in the locale shown. */
interface Translated {
  attributeTexts?: Record<string, string> | null
  optionTexts?: Record<string, string> | null
}

/** The product's options with their names and values in the locale shown. */
function translatedOptions(row: Pick<ProductRow, 'options'> & Translated): ProductRow['options'] {
  const texts = row.optionTexts
  if (!texts) return row.options
  return row.options.map((option) => ({
    ...option,
    name: texts[option.id] ?? option.name,
    values: option.values.map((value) => ({ ...value, value: texts[value.id] ?? value.value })),
  }))
}

/** What a variant's prices fall back to: its product's (and, on a localized read, its option texts). */
export type VariantProduct = Pick<ProductRow, 'currency' | 'priceMinor' | 'compareAtPriceMinor'> & Partial<Pick<ProductRow, 'options'>> & Translated

export function toVariant(row: typeof productVariants.$inferSelect | VariantJson, product: VariantProduct, staff = true): Variant {
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
    options: product.optionTexts && product.options && row.optionValueIds.length > 0 ? recordOf(translatedOptions({ options: product.options, optionTexts: product.optionTexts }), row.optionValueIds) : row.options,
    attributes: staff ? { ...row.attributes, ...row.staffAttributes } : row.attributes,
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


/** The product with its variants and images; `staff` as for toListItem (the events' snapshot is the staff's). */
export function productSnapshot(row: ProductDetailRow & Translated, staff = true): Product {
  return {
    ...toListItem(row, staff),
    variants: row.variants.map((variant) => toVariant(variant, row, staff)),
    images: row.images.map(toImage),
  }
}

/** Whether the product or a variant holds values only staff may see (else both views are the same). */
export const hasStaffAttributes = (row: ProductDetailRow) =>
  Object.keys(row.staffAttributes).length > 0 || row.variants.some((variant) => Object.keys(variant.staffAttributes).length > 0)
