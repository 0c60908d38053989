/** Products, their variants and images: queries, writes and the product.* events. */
import { and, eq, getTableColumns, inArray, isNull, sql } from 'drizzle-orm'
import {
  toMajorUnits,
  type CreateProduct,
  type CreateVariant,
  type Image,
  ImageList,
  type Product,
  type UpdateImage,
  type UpdateProduct,
  type UpdateVariant,
  type Variant,
  VariantList,
} from '@commerce/domain'
import type { Static } from 'typebox'
import {
  categories,
  isUniqueViolation,
  prepareLocalizedProductDetail,
  prepareProductDetail,
  translatedVariantTitle,
  prices,
  productCategories,
  productSnapshot,
  toImage,
  toVariant,
  productColumns,
  productImages,
  products,
  productVariants,
  readProductDetail,
  uploads,
  writeEvent,
  type Database,
  type Executor,
  type ProductRow,
} from '@commerce/db'
import { setSellableAtDefault } from '../inventory/stock.js'
import { inWindow, key, keyset, listTable, readList, type PageQuery } from '../../list-cursor.js'
import { conflict, invalidField, notFound } from '../../errors.js'
import { knownCurrency, minorUnits } from '../../fields.js'
import { generateUniqueSlug } from '../../slugs.js'
import type { CatalogCache } from './catalog-cache.js'
import { createProductLister, type ProductPage } from './list.js'

/** An image to add: by URL, or an uploaded file already in the storage (`file`), perhaps from a presigned upload. */
export interface NewImage {
  url: string
  alt?: string | null
  position?: number
  file?: Pick<typeof productImages.$inferInsert, 'storageKey' | 'contentType' | 'sizeBytes' | 'width' | 'height' | 'thumbnails'>
  uploadId?: string
}

/** Re-reads the product inside `tx` (so it sees the transaction's writes) and records product.created / product.updated. */
export async function emitProductEvent(tx: Executor, id: string, kind: 'product.created' | 'product.updated', requestId: string): Promise<Product> {
  const product = productSnapshot((await readProductDetail(tx, id))!)
  await writeEvent(tx, { kind, resourceId: id, data: product, requestId })
  return product
}

/** A product's detail and the locale of the translation it shows. */
export interface ProductDetail {
  product: Product
  shownLocale: string | null
}

/** Answers kept in memory for PRODUCT_CACHE_TTL (catalog-cache.ts). */
export interface ProductCaches {
  details: CatalogCache<ProductDetail>
  pages: CatalogCache<ProductPage>
}

/** A product's variants in the order they were added (UUIDv7 ids), as its detail shows them. */
const VARIANTS_KEYSET = keyset('product_variants', 'asc', [key.uuid(productVariants.id)])
/** A product's images in display order: by position, then id. */
const IMAGES_KEYSET = keyset('product_images', 'asc', [key.integer(productImages.position), key.uuid(productImages.id)])

/** `catalogDb` serves the public reads (prepared, generic plans); `db` everything else. */
export function createProductService(db: Database, catalogDb: Database, { details, pages }: ProductCaches) {
  const detailStatement = prepareProductDetail(catalogDb)
  const localizedDetailStatement = prepareLocalizedProductDetail(catalogDb)

  async function lockProduct(tx: Executor, id: string): Promise<ProductRow> {
    const [row] = await tx.select(productColumns).from(products).where(eq(products.id, id)).for('update')
    if (!row) throw notFound('Product')
    return row
  }

  async function touchProduct(tx: Executor, id: string) {
    await tx.update(products).set({ updatedAt: new Date() }).where(eq(products.id, id))
  }

  /** Touches the product and, unless its image_url was set through the API, points it at its first image. */
  async function followFirstImage(tx: Executor, id: string) {
    const first = sql`(select ${productImages.url} from ${productImages} where ${productImages.productId} = ${id} order by ${productImages.position}, ${productImages.id} limit 1)`
    await tx
      .update(products)
      .set({ updatedAt: new Date(), imageUrl: sql`case when ${products.imageUrlExplicit} then ${products.imageUrl} else ${first} end` })
      .where(eq(products.id, id))
  }

  async function setCategories(tx: Executor, productId: string, categoryIds: string[]) {
    if (categoryIds.length > 0) {
      const found = await tx.select({ id: categories.id }).from(categories).where(inArray(categories.id, categoryIds))
      const known = new Set(found.map((row) => row.id))
      const missing = categoryIds.filter((id) => !known.has(id))
      if (missing.length > 0) {
        throw invalidField('category_ids', `Field 'category_ids' names unknown categories: ${missing.join(', ')}`)
      }
    }
    await tx.delete(productCategories).where(eq(productCategories.productId, productId))
    if (categoryIds.length > 0) {
      await tx.insert(productCategories).values(categoryIds.map((categoryId) => ({ productId, categoryId })))
    }
  }

  /** Runs a write; a unique-slug clash that slipped past the checks becomes a 409. */
  async function write<T>(work: (tx: Executor) => Promise<T>): Promise<T> {
    try {
      return await db.transaction(work)
    } catch (error) {
      if (isUniqueViolation(error)) throw conflict('A product with this slug already exists')
      throw error
    }
  }

  async function requireProduct(id: string): Promise<{ currency: string }> {
    const [row] = await db.select({ currency: products.currency }).from(products).where(eq(products.id, id))
    if (!row) throw notFound('Product')
    return row
  }

  return {
    list: createProductLister(catalogDb, pages),

    requireProduct,

    /** The product, its text along the chain `locales` (none: the original), with the locale of its own translation shown. */
    async get(id: string, locales: string[] = []): Promise<ProductDetail> {
      const key = locales.length === 0 ? id : `${id} ${locales.join(' ')}`
      const cached = details.get(key)
      if (cached !== undefined) return cached
      const start = details.begin()
      let found: ProductDetail
      if (locales.length > 0) {
        const [row] = await localizedDetailStatement.execute({ id, locales })
        if (!row) throw notFound('Product')
        found = { product: productSnapshot(row), shownLocale: row.translationLocale }
      } else {
        const [row] = await detailStatement.execute({ id })
        if (!row) throw notFound('Product')
        found = { product: productSnapshot(row), shownLocale: null }
      }
      details.set(key, found, start)
      return found
    },

    create(body: CreateProduct, requestId: string): Promise<Product> {
      const currency = knownCurrency(body.currency ?? 'USD')
      const priceMinor = minorUnits('price', body.price ?? 0, currency)
      return write(async (tx) => {
        const slug = body.slug ?? (await generateUniqueSlug(tx, products.slug, body.title, 'product'))
        const [existing] = await tx.select({ id: products.id }).from(products).where(eq(products.slug, slug))
        if (existing) throw conflict(`A product with slug '${slug}' already exists`)
        const [row] = await tx
          .insert(products)
          .values({
            title: body.title,
            slug,
            description: body.description ?? null,
            sku: body.sku ?? null,
            priceMinor,
            currency,
            inventoryQuantity: body.inventory_quantity ?? 0,
            weight: body.weight ?? null,
            weightUnit: body.weight_unit ?? 'kg',
            isActive: body.is_active ?? true,
            imageUrl: body.image_url ?? null,
            imageUrlExplicit: body.image_url != null,
          })
          .returning({ id: products.id })
        if (body.category_ids) await setCategories(tx, row!.id, body.category_ids)
        return emitProductEvent(tx, row!.id, 'product.created', requestId)
      })
    },

    update(id: string, body: UpdateProduct, requestId: string): Promise<Product> {
      return write(async (tx) => {
        const current = await lockProduct(tx, id)
        const currency = knownCurrency(body.currency ?? current.currency)
        if (body.slug !== undefined && body.slug !== current.slug) {
          const [clash] = await tx.select({ id: products.id }).from(products).where(eq(products.slug, body.slug))
          if (clash) throw conflict(`A product with slug '${body.slug}' already exists`)
        }
        // A new currency keeps the amounts shown (19.99 USD -> 19.99 EUR), refused if it cannot hold them.
        const priceField = body.price === undefined ? 'currency' : 'price'
        const priceMinor = minorUnits(priceField, body.price ?? toMajorUnits(current.priceMinor, current.currency), currency)
        if (currency !== current.currency) {
          // A base price in the new currency from one unit would be a second own price (docs/pricing.md).
          const [clash] = await tx
            .select({ id: prices.id, variantId: prices.variantId })
            .from(prices)
            .where(and(eq(prices.productId, id), isNull(prices.priceListId), eq(prices.currency, currency), eq(prices.minQuantity, 1)))
            .limit(1)
          if (clash) {
            throw conflict(
              `The ${clash.variantId ? `variant ${clash.variantId}` : 'product'} has a base price in ${currency} from 1 unit (${clash.id}), ` +
                `which would then be its own price: delete it first (DELETE /products/${id}/prices/${clash.id}) and set the price with the currency`,
            )
          }
          const variants = await tx
            .select({ id: productVariants.id, priceMinor: productVariants.priceMinor })
            .from(productVariants)
            .where(eq(productVariants.productId, id))
          for (const variant of variants) {
            if (variant.priceMinor === null) continue
            const converted = minorUnits('currency', toMajorUnits(variant.priceMinor, current.currency), currency)
            await tx.update(productVariants).set({ priceMinor: converted }).where(eq(productVariants.id, variant.id))
          }
        }
        await tx
          .update(products)
          .set({
            title: body.title,
            slug: body.slug,
            description: body.description,
            sku: body.sku,
            priceMinor,
            currency,
            weight: body.weight,
            weightUnit: body.weight_unit,
            isActive: body.is_active,
            imageUrl: body.image_url,
            imageUrlExplicit: body.image_url === undefined ? undefined : body.image_url !== null,
            updatedAt: new Date(),
          })
          .where(eq(products.id, id))
        // Set to null: the product's picture follows its first image again.
        if (body.image_url === null) await followFirstImage(tx, id)
        if (body.inventory_quantity !== undefined) await setSellableAtDefault(tx, { productId: id, variantId: null }, body.inventory_quantity, { requestId, actor: null })
        if (body.category_ids) await setCategories(tx, id, body.category_ids)
        return emitProductEvent(tx, id, 'product.updated', requestId)
      })
    },

    /** Soft delete: the record stays with is_active = false. */
    deactivate(id: string, requestId: string): Promise<void> {
      return write(async (tx) => {
        const current = await lockProduct(tx, id)
        if (!current.isActive) return
        await tx.update(products).set({ isActive: false, updatedAt: new Date() }).where(eq(products.id, id))
        await emitProductEvent(tx, id, 'product.updated', requestId)
      })
    },

    /** A product's variants, their titles along the chain `locales` (none: the original). */
    async listVariants(productId: string, query: PageQuery, locales: string[] = []): Promise<Static<typeof VariantList>> {
      const { currency } = await requireProduct(productId)
      const ofProduct = eq(productVariants.productId, productId)
      const select = () =>
        db
          .select({ ...getTableColumns(productVariants), title: translatedVariantTitle(productVariants.id, productVariants.title), cursorKey: VARIANTS_KEYSET.cursorKey })
          .from(productVariants)
          .$dynamic()
      const { rows, meta } = await readList(
        VARIANTS_KEYSET,
        query,
        (window) => inWindow(select(), VARIANTS_KEYSET, window, ofProduct).execute({ locales }),
        () => db.$count(productVariants, ofProduct),
      )
      return { variants: rows.map((row) => toVariant(row, currency)), meta }
    },

    createVariant(productId: string, body: CreateVariant, requestId: string): Promise<Variant> {
      return write(async (tx) => {
        const product = await lockProduct(tx, productId)
        const [row] = await tx
          .insert(productVariants)
          .values({
            productId,
            title: body.title,
            sku: body.sku ?? null,
            priceMinor: body.price == null ? null : minorUnits('price', body.price, product.currency),
            inventoryQuantity: body.inventory_quantity ?? 0,
            options: body.options ?? {},
            weight: body.weight ?? null,
            weightUnit: body.weight_unit ?? product.weightUnit,
          })
          .returning()
        await touchProduct(tx, productId)
        await emitProductEvent(tx, productId, 'product.updated', requestId)
        return toVariant(row!, product.currency)
      })
    },

    updateVariant(productId: string, variantId: string, body: UpdateVariant, requestId: string): Promise<Variant> {
      return write(async (tx) => {
        const product = await lockProduct(tx, productId)
        const [row] = await tx
          .update(productVariants)
          .set({
            title: body.title,
            sku: body.sku,
            priceMinor:
              body.price === undefined ? undefined : body.price === null ? null : minorUnits('price', body.price, product.currency),
            options: body.options,
            weight: body.weight,
            weightUnit: body.weight_unit,
            updatedAt: new Date(),
          })
          .where(and(eq(productVariants.id, variantId), eq(productVariants.productId, productId)))
          .returning()
        if (!row) throw notFound('Variant')
        let variant = row
        if (body.inventory_quantity !== undefined) {
          await setSellableAtDefault(tx, { productId, variantId }, body.inventory_quantity, { requestId, actor: null })
          const [fresh] = await tx.select().from(productVariants).where(eq(productVariants.id, variantId))
          variant = fresh!
        }
        await touchProduct(tx, productId)
        await emitProductEvent(tx, productId, 'product.updated', requestId)
        return toVariant(variant!, product.currency)
      })
    },

    deleteVariant(productId: string, variantId: string, requestId: string): Promise<void> {
      return write(async (tx) => {
        await lockProduct(tx, productId)
        const deleted = await tx
          .delete(productVariants)
          .where(and(eq(productVariants.id, variantId), eq(productVariants.productId, productId)))
          .returning({ id: productVariants.id })
        if (deleted.length === 0) throw notFound('Variant')
        await touchProduct(tx, productId)
        await emitProductEvent(tx, productId, 'product.updated', requestId)
      })
    },

    async listImages(productId: string, query: PageQuery): Promise<Static<typeof ImageList>> {
      await requireProduct(productId)
      const { rows, meta } = await listTable(db, IMAGES_KEYSET, productImages, eq(productImages.productId, productId), query)
      return { images: rows.map(toImage), meta }
    },

    /** Adds an image row (by URL, or the stored files of an upload); `uploadId` is used up in the same transaction. */
    createImage(productId: string, image: NewImage, requestId: string): Promise<Image> {
      return write(async (tx) => {
        await lockProduct(tx, productId)
        if (image.uploadId) {
          const used = await tx.delete(uploads).where(and(eq(uploads.id, image.uploadId), eq(uploads.productId, productId))).returning({ id: uploads.id })
          if (used.length === 0) throw conflict('The upload was used for another image meanwhile')
        }
        const [last] = await tx
          .select({ position: sql<number | null>`max(${productImages.position})` })
          .from(productImages)
          .where(eq(productImages.productId, productId))
        const [row] = await tx
          .insert(productImages)
          .values({
            productId,
            url: image.url,
            alt: image.alt ?? null,
            position: image.position ?? (last?.position ?? -1) + 1,
            ...image.file,
          })
          .returning()
        await followFirstImage(tx, productId)
        await emitProductEvent(tx, productId, 'product.updated', requestId)
        return toImage(row!)
      })
    },

    /** Changes an image's alt text or position; a new position may change which image the product shows. */
    updateImage(productId: string, imageId: string, body: UpdateImage, requestId: string): Promise<Image> {
      return write(async (tx) => {
        await lockProduct(tx, productId)
        const [row] = await tx
          .update(productImages)
          .set({ alt: body.alt, position: body.position })
          .where(and(eq(productImages.id, imageId), eq(productImages.productId, productId)))
          .returning()
        if (!row) throw notFound('Image')
        await followFirstImage(tx, productId)
        await emitProductEvent(tx, productId, 'product.updated', requestId)
        return toImage(row)
      })
    },

    /** Deletes an image row; answers the storage keys of its files, to delete once this has committed. */
    deleteImage(productId: string, imageId: string, requestId: string): Promise<string[]> {
      return write(async (tx) => {
        await lockProduct(tx, productId)
        const [deleted] = await tx
          .delete(productImages)
          .where(and(eq(productImages.id, imageId), eq(productImages.productId, productId)))
          .returning({ storageKey: productImages.storageKey, thumbnails: productImages.thumbnails })
        if (!deleted) throw notFound('Image')
        await followFirstImage(tx, productId)
        await emitProductEvent(tx, productId, 'product.updated', requestId)
        return deleted.storageKey ? [deleted.storageKey, ...deleted.thumbnails.map((thumbnail) => thumbnail.key)] : []
      })
    },
  }
}
