/** Products, their variants and images: queries, writes and the product.* events. */
import { and, desc, eq, inArray, sql, type SQL } from 'drizzle-orm'
import {
  DomainError,
  isCurrency,
  toMajorUnits,
  toMinorUnits,
  toPrefixTsQuery,
  type CategoryRef,
  type CreateImage,
  type CreateProduct,
  type CreateVariant,
  type Image,
  type ListProductsQuery,
  type Product,
  type ProductList,
  type ProductListItem,
  type UpdateProduct,
  type UpdateVariant,
  type Variant,
} from '@commerce/domain'
import {
  categories,
  isUniqueViolation,
  productCategories,
  productImages,
  products,
  productVariants,
  writeEvent,
  type Database,
  type Executor,
} from '@commerce/db'
import { conflict, invalidField, notFound } from '../../errors.js'
import { generateUniqueSlug } from '../../slugs.js'
import { ListTotals, pageMeta } from '../../list-totals.js'

type ProductRow = Omit<typeof products.$inferSelect, 'searchVector'>
type VariantRow = typeof productVariants.$inferSelect
type ImageRow = typeof productImages.$inferSelect

const productColumns = {
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
  createdAt: products.createdAt,
  updatedAt: products.updatedAt,
}

// The outer column is written out qualified: Drizzle renders ${products.id} as a bare "id" in a
// single-table select, which inside this subquery would resolve to categories.id instead.
const categoriesOfProduct = sql<CategoryRef[]>`coalesce((
  select json_agg(json_build_object('id', c.id, 'name', c.name, 'slug', c.slug) order by c.name)
  from product_categories pc join categories c on c.id = pc.category_id
  where pc.product_id = "products"."id"), '[]'::json)`

/** Rows as JSON from a subquery: the same fields as Drizzle's rows, timestamps as text. */
type AsJson<Row> = { [K in keyof Row]: Row[K] extends Date ? string : Row[K] }

// Variants and images come in the product's own query, so a detail read is one round trip.
const variantsOfProduct = sql<AsJson<VariantRow>[]>`coalesce((
  select json_agg(json_build_object(
    'id', v.id, 'productId', v.product_id, 'title', v.title, 'sku', v.sku, 'priceMinor', v.price_minor,
    'inventoryQuantity', v.inventory_quantity, 'options', v.options, 'weight', v.weight,
    'weightUnit', v.weight_unit, 'createdAt', v.created_at, 'updatedAt', v.updated_at) order by v.id)
  from product_variants v where v.product_id = "products"."id"), '[]'::json)`

const imagesOfProduct = sql<AsJson<ImageRow>[]>`coalesce((
  select json_agg(json_build_object(
    'id', i.id, 'productId', i.product_id, 'url', i.url, 'alt', i.alt, 'position', i.position,
    'createdAt', i.created_at) order by i.position, i.id)
  from product_images i where i.product_id = "products"."id"), '[]'::json)`

const catalogRevision = sql<string>`(select revision from catalog_revision)`

const iso = (value: Date | string) => new Date(value).toISOString()

/** The currency when the money rules know it, else a validation error on `currency`. */
function knownCurrency(currency: string): string {
  if (!isCurrency(currency)) {
    throw invalidField('currency', `Field 'currency' is not a known ISO 4217 currency: ${currency}`)
  }
  return currency
}

/** Amounts in API form; a DomainError from money parsing names the field it came from. */
function minorUnits(field: string, amount: number, currency: string): number {
  try {
    return toMinorUnits(amount, currency)
  } catch (error) {
    if (error instanceof DomainError) throw invalidField(field, `Field '${field}' is invalid: ${error.message}`)
    throw error
  }
}

function toListItem(row: ProductRow & { categories: CategoryRef[] }): ProductListItem {
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

function toVariant(row: VariantRow | AsJson<VariantRow>, currency: string): Variant {
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

function toImage(row: ImageRow | AsJson<ImageRow>): Image {
  return {
    id: row.id,
    product_id: row.productId,
    url: row.url,
    alt: row.alt,
    position: row.position,
    created_at: iso(row.createdAt),
  }
}

/** Up to this many search matches, a page is read through the GIN index rather than the id order. */
const FEW_MATCHES = 2000

export interface ListProductsOptions {
  includeInactive: boolean
}

export function createProductService(db: Database) {
  const totals = new ListTotals()

  async function loadProduct(tx: Executor, id: string): Promise<Product | undefined> {
    const [row] = await tx
      .select({ ...productColumns, categories: categoriesOfProduct, variants: variantsOfProduct, images: imagesOfProduct })
      .from(products)
      .where(eq(products.id, id))
    if (!row) return undefined
    return {
      ...toListItem(row),
      variants: row.variants.map((variant) => toVariant(variant, row.currency)),
      images: row.images.map(toImage),
    }
  }

  async function lockProduct(tx: Executor, id: string): Promise<ProductRow> {
    const [row] = await tx.select(productColumns).from(products).where(eq(products.id, id)).for('update')
    if (!row) throw notFound('Product')
    return row
  }

  /** Re-reads the product after a change and records product.created / product.updated. */
  async function emitProductEvent(tx: Executor, id: string, kind: 'product.created' | 'product.updated', requestId: string) {
    const product = (await loadProduct(tx, id))!
    await writeEvent(tx, { kind, data: product, requestId })
    return product
  }

  async function touchProduct(tx: Executor, id: string) {
    await tx.update(products).set({ updatedAt: new Date() }).where(eq(products.id, id))
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
    async list(query: ListProductsQuery, options: ListProductsOptions): Promise<ProductList> {
      const page = query.page ?? 1
      const perPage = query.per_page ?? 20
      // An empty `search=` is no search; text with only punctuation is a search that matches nothing.
      const tsQuery = query.search === undefined || query.search.trim() === '' ? undefined : toPrefixTsQuery(query.search)
      const filters: SQL[] = []
      if (!options.includeInactive) filters.push(eq(products.isActive, true))
      // Text with no letters or digits cannot match anything.
      if (tsQuery === null) filters.push(sql`false`)
      else if (tsQuery) filters.push(sql`${products.searchVector} @@ to_tsquery('simple', ${tsQuery})`)
      const categoryId = sql`(select id from categories where slug = ${query.category ?? ''})`

      const where = and(...filters)
      const offset = (page - 1) * perPage
      const cacheKey = JSON.stringify([options.includeInactive, query.category ?? null, tsQuery ?? null])
      const inCategory = and(eq(productCategories.productId, products.id), eq(productCategories.categoryId, categoryId))
      const count = async () => {
        const countQuery = db.select({ total: sql<number>`count(*)::int`, revision: catalogRevision }).from(products)
        const [counted] = await (query.category === undefined
          ? countQuery.where(where)
          : countQuery.innerJoin(productCategories, inCategory).where(where))
        totals.set(cacheKey, counted!.revision, counted!.total)
        return counted!.total
      }

      const pageQuery = db
        .select({ ...productColumns, categories: categoriesOfProduct, revision: catalogRevision })
        .from(products)
        .$dynamic()
      if (query.category !== undefined) {
        pageQuery.innerJoin(productCategories, inCategory).where(where).orderBy(desc(productCategories.productId))
        pageQuery.limit(perPage).offset(offset)
      } else if (tsQuery && (totals.latest(cacheKey) ?? (await count())) <= FEW_MATCHES) {
        // Few matches: read them through the GIN index. Left alone, the planner walks the whole id
        // index looking for them (it cannot estimate prefix matches); the materialized CTE stops that.
        pageQuery.where(
          inArray(
            products.id,
            sql`(with matches as materialized (select id from products where ${where})
                 select id from matches order by id desc limit ${perPage} offset ${offset})`,
          ),
        )
        pageQuery.orderBy(desc(products.id))
      } else {
        // Many matches or none filtered: walk ids newest first; a page reads about its own rows.
        pageQuery.where(where).orderBy(desc(products.id)).limit(perPage).offset(offset)
      }
      const rows = await pageQuery

      // Totals are exact: cached per catalog revision, which every relevant write bumps.
      const total = (rows.length > 0 ? totals.get(cacheKey, rows[0]!.revision) : undefined) ?? (await count())
      return { products: rows.map(toListItem), meta: pageMeta(page, perPage, total) }
    },

    async get(id: string): Promise<Product> {
      const product = await loadProduct(db, id)
      if (!product) throw notFound('Product')
      return product
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
            inventoryQuantity: body.inventory_quantity,
            weight: body.weight,
            weightUnit: body.weight_unit,
            isActive: body.is_active,
            imageUrl: body.image_url,
            updatedAt: new Date(),
          })
          .where(eq(products.id, id))
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

    async listVariants(productId: string): Promise<Variant[]> {
      const { currency } = await requireProduct(productId)
      const rows = await db
        .select()
        .from(productVariants)
        .where(eq(productVariants.productId, productId))
        .orderBy(productVariants.id)
      return rows.map((row) => toVariant(row, currency))
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
            inventoryQuantity: body.inventory_quantity,
            options: body.options,
            weight: body.weight,
            weightUnit: body.weight_unit,
            updatedAt: new Date(),
          })
          .where(and(eq(productVariants.id, variantId), eq(productVariants.productId, productId)))
          .returning()
        if (!row) throw notFound('Variant')
        await touchProduct(tx, productId)
        await emitProductEvent(tx, productId, 'product.updated', requestId)
        return toVariant(row, product.currency)
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

    async listImages(productId: string): Promise<Image[]> {
      await requireProduct(productId)
      const rows = await db
        .select()
        .from(productImages)
        .where(eq(productImages.productId, productId))
        .orderBy(productImages.position, productImages.id)
      return rows.map(toImage)
    },

    createImage(productId: string, body: CreateImage, requestId: string): Promise<Image> {
      return write(async (tx) => {
        await lockProduct(tx, productId)
        const [last] = await tx
          .select({ position: sql<number | null>`max(${productImages.position})` })
          .from(productImages)
          .where(eq(productImages.productId, productId))
        const [row] = await tx
          .insert(productImages)
          .values({
            productId,
            url: body.url,
            alt: body.alt ?? null,
            position: body.position ?? (last?.position ?? -1) + 1,
          })
          .returning()
        await touchProduct(tx, productId)
        await emitProductEvent(tx, productId, 'product.updated', requestId)
        return toImage(row!)
      })
    },

    deleteImage(productId: string, imageId: string, requestId: string): Promise<void> {
      return write(async (tx) => {
        await lockProduct(tx, productId)
        const deleted = await tx
          .delete(productImages)
          .where(and(eq(productImages.id, imageId), eq(productImages.productId, productId)))
          .returning({ id: productImages.id })
        if (deleted.length === 0) throw notFound('Image')
        await touchProduct(tx, productId)
        await emitProductEvent(tx, productId, 'product.updated', requestId)
      })
    },
  }
}
