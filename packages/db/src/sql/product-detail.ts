/**
 * A product with its variants and images, read in one round trip: the public detail read
 * (prepared once, on the catalog pool) and the same read inside a transaction (a product event's
 * snapshot). The columns of a product row (productColumns) are what the list reads too.
 */
import { eq, inArray, sql, type SQL } from 'drizzle-orm'
import type { Database, Executor } from '../client.js'
import { productImages, productListItems, products, productVariants } from '../schema/index.js'
import { columnsOf, jsonColumns, type JsonOf } from './json-rows.js'
import { productTranslationJoin, translatedProductCategories, translatedVariantTitle } from './translations.js'

/** Every column of a product but its search vector. */
export const productColumns = {
  id: products.id,
  title: products.title,
  slug: products.slug,
  description: products.description,
  sku: products.sku,
  priceMinor: products.priceMinor,
  compareAtPriceMinor: products.compareAtPriceMinor,
  currency: products.currency,
  inventoryQuantity: products.inventoryQuantity,
  weight: products.weight,
  weightUnit: products.weightUnit,
  status: products.status,
  publishedAt: products.publishedAt,
  isActive: products.isActive,
  tags: products.tags,
  productType: products.productType,
  vendor: products.vendor,
  barcode: products.barcode,
  length: products.length,
  width: products.width,
  height: products.height,
  dimensionUnit: products.dimensionUnit,
  hsCode: products.hsCode,
  countryOfOrigin: products.countryOfOrigin,
  seoTitle: products.seoTitle,
  seoDescription: products.seoDescription,
  options: products.options,
  attributes: products.attributes,
  staffAttributes: products.staffAttributes,
  imageUrl: products.imageUrl,
  categories: products.categories,
  createdAt: products.createdAt,
  updatedAt: products.updatedAt,
}

export type ProductRow = Omit<typeof products.$inferSelect, 'searchVector' | 'imageUrlExplicit'>

const VARIANT_KEYS = ['id', 'productId', 'title', 'sku', 'priceMinor', 'compareAtPriceMinor', 'barcode', 'inventoryQuantity', 'options', 'optionValueIds', 'attributes', 'staffAttributes', 'weight', 'weightUnit', 'createdAt', 'updatedAt'] as const
export type VariantJson = JsonOf<typeof productVariants, (typeof VARIANT_KEYS)[number]>

const IMAGE_KEYS = ['id', 'productId', 'url', 'alt', 'position', 'contentType', 'sizeBytes', 'width', 'height', 'thumbnails', 'createdAt'] as const
export type ImageJson = JsonOf<typeof productImages, (typeof IMAGE_KEYS)[number]>

const variantsOf = (variant: SQL) => sql<VariantJson[]>`coalesce((
  select json_agg(${variant} order by v.id)
  from product_variants v where v.product_id = "products"."id"), '[]'::json)`

const detailSelection = {
  ...productColumns,
  variants: variantsOf(sql.raw(jsonColumns(productVariants, 'v', VARIANT_KEYS))),
  images: sql<ImageJson[]>`coalesce((
  select json_agg(${sql.raw(jsonColumns(productImages, 'i', IMAGE_KEYS))} order by i.position, i.id)
  from product_images i where i.product_id = "products"."id"), '[]'::json)`,
}

/** The public detail read, prepared once: no query building, no planning per request. */
export function prepareProductDetail(db: Database) {
  return db.select(detailSelection).from(products).where(eq(products.id, sql.placeholder('id'))).prepare('product_detail')
}

export type ProductDetailRow = Awaited<ReturnType<ReturnType<typeof prepareProductDetail>['execute']>>[number]

/**
 * The public detail in the shop's own language as JSON text (storedDetailJson): the product's
 * stored list item (product_list_items) with its variants and images made by the database
 * (migration 0042: variant_item, image_item), and what says whether the public may see it.
 * Prepared once.
 */
export function prepareStoredProductDetail(db: Database) {
  return db
    .select({
      status: products.status,
      isActive: products.isActive,
      body: productListItems.body,
      inventoryQuantity: products.inventoryQuantity,
      updatedAt: products.updatedAt,
      variants: sql<string>`(select coalesce(json_agg(variant_item(v, "products"."currency", "products"."price_minor", "products"."compare_at_price_minor") order by v.id), '[]')::text
        from product_variants v where v.product_id = "products"."id")`,
      images: sql<string>`(select coalesce(json_agg(image_item(i) order by i.position, i.id), '[]')::text
        from product_images i where i.product_id = "products"."id")`,
    })
    .from(products)
    .innerJoin(productListItems, eq(productListItems.productId, products.id))
    .where(eq(products.id, sql.placeholder('id')))
    .prepare('stored_product_detail')
}

export type StoredDetailRow = Awaited<ReturnType<ReturnType<typeof prepareStoredProductDetail>['execute']>>[number]

/**
 * The product's columns with its text along the chain of locales (`locales` placeholder,
 * sql/translations.ts) and the earliest locale its own translation was found in.
 */
export function localizedProductColumns(translation: ReturnType<typeof productTranslationJoin>) {
  return {
    ...productColumns,
    title: sql<string>`coalesce(${translation.title}, ${products.title})`,
    description: sql<string | null>`coalesce(${translation.description}, ${products.description})`,
    categories: translatedProductCategories,
    translationLocale: translation.locale,
    attributeTexts: translation.attributes,
    optionTexts: translation.options,
  }
}

/** The public detail read in the chain of locales `locales` (a text[] placeholder), prepared once. */
export function prepareLocalizedProductDetail(db: Database) {
  const translation = productTranslationJoin(db)
  const variantColumns = columnsOf(productVariants, 'v', VARIANT_KEYS)
  const variant = sql.join(
    VARIANT_KEYS.map((key) => sql`${sql.raw(`'${key}'`)}, ${key === 'title' ? translatedVariantTitle(sql.raw('v.id'), sql.raw('v.title')) : sql.raw(variantColumns[key])}`),
    sql`, `,
  )
  return db
    .select({ ...localizedProductColumns(translation), variants: variantsOf(sql`json_build_object(${variant})`), images: detailSelection.images })
    .from(products)
    .leftJoinLateral(translation, sql`true`)
    .where(eq(products.id, sql.placeholder('id')))
    .prepare('product_detail_localized')
}

/** The same read inside `tx`, so it sees the transaction's writes. */
export async function readProductDetail(tx: Executor, id: string): Promise<ProductDetailRow | undefined> {
  const [row] = await tx.select(detailSelection).from(products).where(eq(products.id, id))
  return row
}

/** Several products' reads inside `tx` (an import's batch of product events), in id order. */
export async function readProductDetails(tx: Executor, ids: readonly string[]): Promise<ProductDetailRow[]> {
  if (ids.length === 0) return []
  return tx.select(detailSelection).from(products).where(inArray(products.id, [...ids])).orderBy(products.id)
}
