/** Products, their variants and images: queries, writes and the product.* events. */
import { and, eq, getTableColumns, inArray, isNull, sql } from 'drizzle-orm'
import {
  COUNTRY_CODES,
  chooseValues,
  isValidGtin,
  normalizeHsCode,
  normalizeTags,
  optionCombinations,
  reconcileOptions,
  toMajorUnits,
  type GenerateVariants,
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
  newId,
  pgConstraintOf,
  productSlugRedirects,
  prepareLocalizedProductDetail,
  prepareProductDetail,
  prepareStoredProductDetail,
  translatedVariantTitle,
  prices,
  productCategories,
  productSnapshot,
  toImage,
  storedDetailJson,
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
  hasStaffAttributes,
  type ProductDetailRow,
  type ProductRow,
  type VariantProduct,
} from '@commerce/db'
import { writeAttributes } from '../attributes/service.js'
import { setSellableAtDefault } from '../inventory/stock.js'
import { inWindow, key, keyset, listTable, readList, type PageQuery } from '../../list-cursor.js'
import { conflict, invalidField, notFound } from '../../errors.js'
import { instant, knownCurrency, minorUnits } from '../../fields.js'
import { generateUniqueSlug } from '../../slugs.js'
import type { CatalogCache } from './catalog-cache.js'
import { createProductLister } from './list.js'
import type { ProductPage } from './page.js'

/** An image to add: by URL, or an uploaded file already in the storage (`file`), perhaps from a presigned upload. */
export interface NewImage {
  url: string
  alt?: string | null
  position?: number
  file?: Pick<typeof productImages.$inferInsert, 'storageKey' | 'contentType' | 'sizeBytes' | 'width' | 'height' | 'thumbnails'>
  uploadId?: string
}

/** The fields of a product write beyond its title, price and stock, checked: column values, undefined where not sent. */
function productDetails(body: UpdateProduct) {
  if (body.barcode != null && !isValidGtin(body.barcode)) {
    throw invalidField('barcode', `Field 'barcode' is not a GTIN-8, -12, -13 or -14 with a valid check digit: ${body.barcode}`)
  }
  let hsCode: string | null | undefined = body.hs_code
  if (typeof hsCode === 'string') {
    hsCode = normalizeHsCode(hsCode)
    if (hsCode === null) throw invalidField('hs_code', `Field 'hs_code' is not an HS code of 6 to 10 digits: ${body.hs_code}`)
  }
  if (body.country_of_origin != null && !COUNTRY_CODES.includes(body.country_of_origin)) {
    throw invalidField('country_of_origin', `Field 'country_of_origin' is not an ISO 3166-1 alpha-2 country: ${body.country_of_origin}`)
  }
  if (body.status !== undefined && body.is_active !== undefined) {
    throw invalidField('is_active', "Send 'status' or 'is_active' (its older form), not both")
  }
  return {
    status: body.status,
    publishedAt: body.published_at === undefined ? undefined : instant('published_at', body.published_at),
    isActive: body.is_active,
    tags: body.tags === undefined ? undefined : normalizeTags(body.tags),
    productType: body.product_type,
    vendor: body.vendor,
    barcode: body.barcode,
    length: body.length,
    width: body.width,
    height: body.height,
    dimensionUnit: body.dimension_unit,
    hsCode,
    countryOfOrigin: body.country_of_origin,
    seoTitle: body.seo_title,
    seoDescription: body.seo_description,
  }
}

/** The staff's and the public's view of a detail row. */
function views(row: ProductDetailRow): Pick<ProductDetail, 'product' | 'publicProduct'> {
  const product = productSnapshot(row)
  return { product, publicProduct: hasStaffAttributes(row) ? productSnapshot(row, false) : product }
}

/** A draft, or an active product whose published_at is still to come: not for the public. */
const isHidden = (product: Pick<Product, 'status' | 'is_active'>) => product.status === 'draft' || (product.status === 'active' && !product.is_active)

/** A variant's barcode as sent, checked (GTIN with its check digit); undefined when not sent. */
function variantBarcode(barcode: string | null | undefined, field = 'barcode'): string | null | undefined {
  if (barcode != null && !isValidGtin(barcode)) throw invalidField(field, `Field '${field}' is not a GTIN-8, -12, -13 or -14 with a valid check digit: ${barcode}`)
  return barcode
}

/** A variant as its options go, for reconcileOptions. */
const variantChoice = { id: productVariants.id, valueIds: productVariants.optionValueIds, record: productVariants.options }

/** Re-reads the product inside `tx` (so it sees the transaction's writes) and records product.created / product.updated. */
export async function emitProductEvent(tx: Executor, id: string, kind: 'product.created' | 'product.updated', requestId: string): Promise<Product> {
  const product = productSnapshot((await readProductDetail(tx, id))!)
  await writeEvent(tx, { kind, resourceId: id, data: product, requestId })
  return product
}

/** A product's detail and the locale of the translation it shows. */
export interface ProductDetail {
  /** As staff see it: with the values of attributes that are not public. */
  product: Product
  /** As the public sees it (the same object when nothing is staff-only). */
  publicProduct: Product
  shownLocale: string | null
}

/** Answers kept in memory for PRODUCT_CACHE_TTL (catalog-cache.ts). */
export interface ProductCaches {
  details: CatalogCache<ProductDetail>
  pages: CatalogCache<ProductPage>
  publicDetails: CatalogCache<PublicDetail>
}

/** The public detail in the shop's own language as its JSON text (storedDetailJson), and whether the public may see it. */
export interface PublicDetail {
  id: string
  text: string
  hidden: boolean
}

/** A product's variants in the order they were added (UUIDv7 ids), as its detail shows them. */
const VARIANTS_KEYSET = keyset('product_variants', 'asc', [key.uuid(productVariants.id)])
/** A product's images in display order: by position, then id. */
const IMAGES_KEYSET = keyset('product_images', 'asc', [key.integer(productImages.position), key.uuid(productImages.id)])

/** `catalogDb` serves the public reads (prepared, generic plans); `db` everything else. */
export function createProductService(db: Database, catalogDb: Database, { details, pages, publicDetails }: ProductCaches) {
  const detailStatement = prepareProductDetail(catalogDb)
  const storedDetailStatement = prepareStoredProductDetail(catalogDb)
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

  /** The slug is free for a product (another one's old slug is not in the way: the product takes it over). */
  async function claimSlug(tx: Executor, slug: string, productId?: string) {
    const [clash] = await tx.select({ id: products.id }).from(products).where(eq(products.slug, slug))
    if (clash && clash.id !== productId) throw conflict(`A product with slug '${slug}' already exists`)
    await tx.delete(productSlugRedirects).where(eq(productSlugRedirects.slug, slug))
  }

  /** Variant picks that clash with another variant of the product, as a 409 naming it. */
  async function refuseTakenCombination(tx: Executor, productId: string, valueIds: string[], record: Record<string, string>, variantId?: string) {
    const [taken] = await tx
      .select({ id: productVariants.id, title: productVariants.title })
      .from(productVariants)
      .where(and(eq(productVariants.productId, productId), eq(productVariants.optionValueIds, valueIds), variantId ? sql`${productVariants.id} <> ${variantId}` : undefined))
    if (taken) {
      const named = Object.entries(record).map(([name, value]) => `${name}: ${value}`).join(', ')
      throw conflict(`Variant '${taken.title}' (${taken.id}) of this product has the same option values (${named})`)
    }
  }

  /**
   * A variant's options as sent: one value of each of the product's options (chooseValues), or
   * free-form on a product without options.
   */
  function variantOptions(product: ProductRow, sent: Record<string, string>, field = 'options') {
    if (product.options.length === 0) return { options: sent, optionValueIds: [] as string[] }
    const choice = chooseValues(product.options, sent, field)
    return { options: choice.record, optionValueIds: choice.valueIds }
  }

  /** Replaces the product's options (reconcileOptions) and moves its variants' choices with them. */
  async function setOptions(tx: Executor, product: ProductRow, input: NonNullable<UpdateProduct['options']>) {
    const variants = await tx
      .select({ ...variantChoice, title: productVariants.title })
      .from(productVariants)
      .where(eq(productVariants.productId, product.id))
      .orderBy(productVariants.id)
    const next = reconcileOptions(product.options, input, variants, newId)
    await tx.update(products).set({ options: next.options }).where(eq(products.id, product.id))
    const changed = next.variants.filter((variant, i) => variant.valueIds.join() !== variants[i]!.valueIds.join() || JSON.stringify(variant.record) !== JSON.stringify(variants[i]!.record))
    if (changed.length === 0) return
    // Two steps, so that no row passes through another's combination on the way (the unique index checks each row as it is written).
    await tx.update(productVariants).set({ optionValueIds: [] }).where(inArray(productVariants.id, changed.map((variant) => variant.id)))
    // A title that was its values ("M / Blue", as a generation names them) follows a rename.
    const titleOf = (record: Readonly<Record<string, string>>) => Object.values(record).join(' / ')
    for (const variant of changed) {
      const before = variants.find((candidate) => candidate.id === variant.id)!
      const title = before.title === titleOf(before.record) ? titleOf(variant.record) : undefined
      await tx
        .update(productVariants)
        .set({ optionValueIds: variant.valueIds, options: variant.record, title: title || undefined, updatedAt: new Date() })
        .where(eq(productVariants.id, variant.id))
    }
  }

  /** Runs a write; a unique-slug clash that slipped past the checks becomes a 409. */
  async function write<T>(work: (tx: Executor) => Promise<T>): Promise<T> {
    try {
      return await db.transaction(work)
    } catch (error) {
      if (isUniqueViolation(error) && pgConstraintOf(error) === 'product_variants_combination_key') {
        throw conflict('Another variant of this product has the same option values (it was added meanwhile)')
      }
      if (isUniqueViolation(error)) throw conflict('A product with this slug already exists')
      throw error
    }
  }

  /** The product's prices' fallbacks; 404 when missing, or hidden from the public and not `staff`. */
  async function requireProduct(id: string, staff = true): Promise<VariantProduct> {
    const [row] = await db
      .select({
        currency: products.currency,
        priceMinor: products.priceMinor,
        compareAtPriceMinor: products.compareAtPriceMinor,
        status: products.status,
        is_active: products.isActive,
      })
      .from(products)
      .where(eq(products.id, id))
    if (!row || (!staff && isHidden(row))) throw notFound('Product')
    return row
  }

  /** The detail as read (or kept in memory), whoever asks. */
  async function detail(id: string, locales: string[]): Promise<ProductDetail> {
    const key = locales.length === 0 ? id : `${id} ${locales.join(' ')}`
    const cached = details.get(key)
    if (cached !== undefined) return cached
    const start = details.begin()
    let found: ProductDetail
    if (locales.length > 0) {
      const [row] = await localizedDetailStatement.execute({ id, locales })
      if (!row) throw notFound('Product')
      found = { ...views(row), shownLocale: row.translationLocale }
    } else {
      const [row] = await detailStatement.execute({ id })
      if (!row) throw notFound('Product')
      found = { ...views(row), shownLocale: null }
    }
    details.set(key, found, start)
    return found
  }

  return {
    list: createProductLister(catalogDb, pages, db),

    requireProduct,

    /**
     * The product, its text along the chain `locales` (none: the original), with the locale of its
     * own translation shown. A draft or a product not yet published is the staff's only (`staff`).
     */
    /** The detail the public reads in the shop's own language, as its stored JSON (no rows mapped, nothing serialized). */
    async publicDetail(id: string): Promise<PublicDetail> {
      const cached = publicDetails.get(id)
      if (cached !== undefined) return cached
      const start = publicDetails.begin()
      const [row] = await storedDetailStatement.execute({ id })
      if (!row) throw notFound('Product')
      const found = { id, text: storedDetailJson(row), hidden: isHidden({ status: row.status, is_active: row.isActive }) }
      publicDetails.set(id, found, start)
      return found
    },

    async get(id: string, locales: string[] = [], staff = false): Promise<{ product: Product; shownLocale: string | null }> {
      const found = await detail(id, locales)
      if (!staff && isHidden(found.product)) throw notFound('Product')
      return { product: staff ? found.product : found.publicProduct, shownLocale: found.shownLocale }
    },

    /** The id of the product with this slug now, or the one that had it before a rename. */
    async idBySlug(slug: string): Promise<string> {
      const [row] = await catalogDb
        .select({ id: products.id })
        .from(products)
        .where(eq(products.slug, slug))
        .union(catalogDb.select({ id: productSlugRedirects.productId }).from(productSlugRedirects).where(eq(productSlugRedirects.slug, slug)))
        .limit(1)
      if (!row) throw notFound('Product')
      return row.id
    },

    create(body: CreateProduct, requestId: string): Promise<Product> {
      const currency = knownCurrency(body.currency ?? 'USD')
      const priceMinor = minorUnits('price', body.price ?? 0, currency)
      return write(async (tx) => {
        const slug = body.slug ?? (await generateUniqueSlug(tx, products.slug, body.title, 'product'))
        await claimSlug(tx, slug)
        const details = productDetails(body)
        const options = body.options ? reconcileOptions([], body.options, [], newId).options : []
        const attributes = await writeAttributes(tx, 'product', { attributes: {}, staffAttributes: {} }, body.attributes)
        const [row] = await tx
          .insert(products)
          .values({
            ...details,
            ...attributes,
            isActive: details.isActive ?? true,
            options,
            title: body.title,
            slug,
            description: body.description ?? null,
            sku: body.sku ?? null,
            priceMinor,
            compareAtPriceMinor: body.compare_at_price == null ? null : minorUnits('compare_at_price', body.compare_at_price, currency),
            currency,
            inventoryQuantity: body.inventory_quantity ?? 0,
            weight: body.weight ?? null,
            weightUnit: body.weight_unit ?? 'kg',
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
          await claimSlug(tx, body.slug, id)
          // The old slug keeps answering (GET /products/by-slug/{slug}), as Shopify's URL redirects do.
          await tx
            .insert(productSlugRedirects)
            .values({ slug: current.slug, productId: id })
            .onConflictDoUpdate({ target: productSlugRedirects.slug, set: { productId: id, createdAt: new Date() } })
        }
        const details = productDetails(body)
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
            .select({ id: productVariants.id, priceMinor: productVariants.priceMinor, compareAtPriceMinor: productVariants.compareAtPriceMinor })
            .from(productVariants)
            .where(eq(productVariants.productId, id))
          const converted = (amount: number | null) => (amount === null ? null : minorUnits('currency', toMajorUnits(amount, current.currency), currency))
          for (const variant of variants) {
            if (variant.priceMinor === null && variant.compareAtPriceMinor === null) continue
            await tx
              .update(productVariants)
              .set({ priceMinor: converted(variant.priceMinor), compareAtPriceMinor: converted(variant.compareAtPriceMinor) })
              .where(eq(productVariants.id, variant.id))
          }
        }
        const compareAtField = body.compare_at_price === undefined ? 'currency' : 'compare_at_price'
        const compareAt = body.compare_at_price === undefined ? current.compareAtPriceMinor : body.compare_at_price
        const compareAtPriceMinor =
          compareAt === null ? null : minorUnits(compareAtField, body.compare_at_price === undefined ? toMajorUnits(compareAt, current.currency) : compareAt, currency)
        await tx
          .update(products)
          .set({
            ...details,
            ...(await writeAttributes(tx, 'product', current, body.attributes)),
            title: body.title,
            slug: body.slug,
            description: body.description,
            sku: body.sku,
            priceMinor,
            compareAtPriceMinor,
            currency,
            weight: body.weight,
            weightUnit: body.weight_unit,
            imageUrl: body.image_url,
            imageUrlExplicit: body.image_url === undefined ? undefined : body.image_url !== null,
            updatedAt: new Date(),
          })
          .where(eq(products.id, id))
        // Set to null: the product's picture follows its first image again.
        if (body.image_url === null) await followFirstImage(tx, id)
        if (body.inventory_quantity !== undefined) await setSellableAtDefault(tx, { productId: id, variantId: null }, body.inventory_quantity, { requestId, actor: null })
        if (body.category_ids) await setCategories(tx, id, body.category_ids)
        if (body.options) await setOptions(tx, current, body.options)
        return emitProductEvent(tx, id, 'product.updated', requestId)
      })
    },

    /** Soft delete: the record stays, archived (is_active false). */
    deactivate(id: string, requestId: string): Promise<void> {
      return write(async (tx) => {
        const current = await lockProduct(tx, id)
        if (current.status === 'archived') return
        await tx.update(products).set({ status: 'archived', updatedAt: new Date() }).where(eq(products.id, id))
        await emitProductEvent(tx, id, 'product.updated', requestId)
      })
    },

    /** A product's variants, their titles along the chain `locales` (none: the original). */
    async listVariants(productId: string, query: PageQuery, locales: string[] = [], staff = false): Promise<Static<typeof VariantList>> {
      const product = await requireProduct(productId, staff)
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
      return { variants: rows.map((row) => toVariant(row, product, staff)), meta }
    },

    createVariant(productId: string, body: CreateVariant, requestId: string): Promise<Variant> {
      return write(async (tx) => {
        const product = await lockProduct(tx, productId)
        const chosen = variantOptions(product, body.options ?? {})
        if (chosen.optionValueIds.length > 0) await refuseTakenCombination(tx, productId, chosen.optionValueIds, chosen.options)
        const attributes = await writeAttributes(tx, 'variant', { attributes: {}, staffAttributes: {} }, body.attributes)
        const [row] = await tx
          .insert(productVariants)
          .values({
            ...attributes,
            productId,
            title: body.title,
            sku: body.sku ?? null,
            priceMinor: body.price == null ? null : minorUnits('price', body.price, product.currency),
            compareAtPriceMinor: body.compare_at_price == null ? null : minorUnits('compare_at_price', body.compare_at_price, product.currency),
            barcode: variantBarcode(body.barcode) ?? null,
            inventoryQuantity: body.inventory_quantity ?? 0,
            ...chosen,
            weight: body.weight ?? null,
            weightUnit: body.weight_unit ?? product.weightUnit,
          })
          .returning()
        await touchProduct(tx, productId)
        await emitProductEvent(tx, productId, 'product.updated', requestId)
        return toVariant(row!, product)
      })
    },

    updateVariant(productId: string, variantId: string, body: UpdateVariant, requestId: string): Promise<Variant> {
      return write(async (tx) => {
        const product = await lockProduct(tx, productId)
        const chosen = body.options === undefined ? undefined : variantOptions(product, body.options)
        if (chosen && chosen.optionValueIds.length > 0) await refuseTakenCombination(tx, productId, chosen.optionValueIds, chosen.options, variantId)
        let attributes
        if (body.attributes !== undefined) {
          const [held] = await tx
            .select({ attributes: productVariants.attributes, staffAttributes: productVariants.staffAttributes })
            .from(productVariants)
            .where(and(eq(productVariants.id, variantId), eq(productVariants.productId, productId)))
          if (!held) throw notFound('Variant')
          attributes = await writeAttributes(tx, 'variant', held, body.attributes)
        }
        const [row] = await tx
          .update(productVariants)
          .set({
            ...attributes,
            title: body.title,
            sku: body.sku,
            priceMinor:
              body.price === undefined ? undefined : body.price === null ? null : minorUnits('price', body.price, product.currency),
            compareAtPriceMinor:
              body.compare_at_price == null ? body.compare_at_price : minorUnits('compare_at_price', body.compare_at_price, product.currency),
            barcode: variantBarcode(body.barcode),
            ...chosen,
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
        return toVariant(variant!, product)
      })
    },

    /**
     * Makes a variant for every combination of the product's option values that none has yet,
     * in option order, with the defaults and per-combination fields sent (docs/catalog.md, "Options").
     */
    generateVariants(productId: string, body: GenerateVariants, requestId: string): Promise<Variant[]> {
      return write(async (tx) => {
        const product = await lockProduct(tx, productId)
        if (product.options.length === 0) throw invalidField('options', "Field 'options': the product has none to combine; set its options first")
        const combinations = optionCombinations(product.options)
        const overrides = new Map<string, NonNullable<GenerateVariants['variants']>[number]>()
        for (const [i, entry] of (body.variants ?? []).entries()) {
          const choice = chooseValues(product.options, entry.options, `variants[${i}].options`)
          const key = choice.valueIds.join()
          if (overrides.has(key)) throw invalidField(`variants[${i}].options`, `variants[${i}] names the same combination as an earlier entry`)
          overrides.set(key, { ...entry, barcode: variantBarcode(entry.barcode, `variants[${i}].barcode`) })
        }
        const existing = await tx.select(variantChoice).from(productVariants).where(eq(productVariants.productId, productId))
        const taken = new Set(existing.map((variant) => variant.valueIds.join()))
        const amount = (field: string, value: number | null | undefined) => (value == null ? null : minorUnits(field, value, product.currency))
        const rows = combinations
          .filter((choice) => !taken.has(choice.valueIds.join()))
          .map((choice) => {
            const override = overrides.get(choice.valueIds.join())
            return {
              productId,
              title: choice.title,
              sku: override?.sku ?? null,
              priceMinor: amount('price', override?.price !== undefined ? override.price : body.price),
              compareAtPriceMinor: amount('compare_at_price', override?.compare_at_price !== undefined ? override.compare_at_price : body.compare_at_price),
              barcode: override?.barcode ?? null,
              options: choice.record,
              optionValueIds: choice.valueIds,
              weightUnit: product.weightUnit,
            }
          })
        if (rows.length === 0) return []
        const created = await tx.insert(productVariants).values(rows).returning()
        const byKey = new Map(created.map((row) => [row.optionValueIds.join(), row]))
        const ordered = rows.map((row) => byKey.get(row.optionValueIds.join())!)
        for (const row of ordered) {
          const stock = overrides.get(row.optionValueIds.join())?.inventory_quantity ?? body.inventory_quantity
          if (stock) await setSellableAtDefault(tx, { productId, variantId: row.id }, stock, { requestId, actor: null })
        }
        const fresh = await tx.select().from(productVariants).where(inArray(productVariants.id, ordered.map((row) => row.id)))
        const byId = new Map(fresh.map((row) => [row.id, row]))
        await touchProduct(tx, productId)
        await emitProductEvent(tx, productId, 'product.updated', requestId)
        return ordered.map((row) => toVariant(byId.get(row.id)!, product))
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

    async listImages(productId: string, query: PageQuery, staff = false): Promise<Static<typeof ImageList>> {
      await requireProduct(productId, staff)
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
