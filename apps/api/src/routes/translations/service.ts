/**
 * Translations of products, variants and categories (docs/translations.md): one row per resource
 * and locale, replaced whole by PUT. A product's or variant's translation changes what its
 * product shows in that locale, so it touches the product and records product.updated
 * (categories have no events).
 */
import { and, asc, eq, getTableColumns, inArray, sql, type SQL } from 'drizzle-orm'
import { TRANSLATABLE_ATTRIBUTE_TYPES, type CategoryTranslation, type ProductTranslation, type PutCategoryTranslation, type PutProductTranslation, type PutVariantTranslation, type VariantTranslation } from '@commerce/domain'
import { attributeDefinitions, categories, categoryTranslations, products, productTranslations, productVariants, variantTranslations, type Database, type Executor } from '@commerce/db'
import { invalidField, notFound } from '../../errors.js'
import { emitProductEvent } from '../products/service.js'

/** The path's ids: the product or category (`id`), and the variant. */
export interface OwnerIds {
  id: string
  variant_id?: string
}

/** A written translation and whether the PUT created it (201) or replaced it (200). */
export interface Written<T> {
  translation: T
  created: boolean
}

interface Times {
  createdAt: Date
  updatedAt: Date
}
const times = (row: Times) => ({ created_at: row.createdAt.toISOString(), updated_at: row.updatedAt.toISOString() })

/** What differs between the three kinds of translation. */
interface Kind<Row extends Times & { locale: string }, Body, Shown> {
  /** 404 for a missing owner; a product is locked, so its writes are serialized as the product API's are. */
  requireOwner(tx: Executor, ids: OwnerIds, forWrite: boolean): Promise<void>
  /** The owner's translations, or its one in `locale`. */
  select(tx: Executor, ids: OwnerIds, locale?: string): Promise<Row[]>
  upsert(tx: Executor, ids: OwnerIds, locale: string, body: Body): Promise<{ row: Row; inserted: boolean }>
  delete(tx: Executor, ids: OwnerIds, locale: string): Promise<number>
  show(row: Row): Shown
  /** After a write: what else changes (the product's update). */
  changed(tx: Executor, ids: OwnerIds, requestId: string): Promise<void>
}

function operations<Row extends Times & { locale: string }, Body, Shown>(db: Database, kind: Kind<Row, Body, Shown>) {
  return {
    async list(ids: OwnerIds): Promise<Shown[]> {
      await kind.requireOwner(db, ids, false)
      return (await kind.select(db, ids)).map(kind.show)
    },
    async get(ids: OwnerIds, locale: string): Promise<Shown> {
      const [row] = await kind.select(db, ids, locale)
      if (row) return kind.show(row)
      await kind.requireOwner(db, ids, false)
      throw notFound('Translation')
    },
    put(ids: OwnerIds, locale: string, body: Body, requestId: string): Promise<Written<Shown>> {
      return db.transaction(async (tx) => {
        await kind.requireOwner(tx, ids, true)
        const { row, inserted } = await kind.upsert(tx, ids, locale, body)
        await kind.changed(tx, ids, requestId)
        return { translation: kind.show(row), created: inserted }
      })
    },
    remove(ids: OwnerIds, locale: string, requestId: string): Promise<void> {
      return db.transaction(async (tx) => {
        await kind.requireOwner(tx, ids, true)
        if ((await kind.delete(tx, ids, locale)) === 0) throw notFound('Translation')
        await kind.changed(tx, ids, requestId)
      })
    },
  }
}

/** A translation must translate something: deleting it is how to show the original again. */
const nothingTranslated = (field: string) =>
  invalidField(field, `A translation needs at least one field that is not null; to show the original text, DELETE the translation`)

// xmax is 0 on a row an upsert inserted, the updating transaction's id on one it replaced.
const inserted = sql<boolean>`(xmax = 0)`
const oneOrAll = (owner: SQL, locale: SQL | undefined) => (locale ? and(owner, locale) : owner)

async function requireProduct(tx: Executor, id: string, forWrite: boolean): Promise<void> {
  const query = tx.select({ id: products.id }).from(products).where(eq(products.id, id))
  const [row] = forWrite ? await query.for('update') : await query
  if (!row) throw notFound('Product')
}

/** Translated attribute values, each of a text or rich_text product attribute (400 naming `attributes.<key>` otherwise); null when none. */
async function translatableAttributes(tx: Executor, sent: Record<string, string> | null | undefined): Promise<Record<string, string> | null> {
  if (!sent || Object.keys(sent).length === 0) return null
  const definitions = await tx
    .select({ key: attributeDefinitions.key, type: attributeDefinitions.type })
    .from(attributeDefinitions)
    .where(and(eq(attributeDefinitions.owner, 'product'), inArray(attributeDefinitions.key, Object.keys(sent))))
  for (const key of Object.keys(sent)) {
    const definition = definitions.find((candidate) => candidate.key === key)
    if (!definition || !TRANSLATABLE_ATTRIBUTE_TYPES.includes(definition.type)) {
      throw invalidField(`attributes.${key}`, `Field 'attributes.${key}' is not a text or rich_text product attribute: only text is translated`)
    }
  }
  return sent
}

/** Translated option names and values, each keyed by one of the product's option or value ids (400 naming `options.<id>` otherwise); null when none. */
async function translatableOptions(tx: Executor, productId: string, sent: Record<string, string> | null | undefined): Promise<Record<string, string> | null> {
  if (!sent || Object.keys(sent).length === 0) return null
  const [row] = await tx.select({ options: products.options }).from(products).where(eq(products.id, productId))
  const ids = new Set(row!.options.flatMap((option) => [option.id, ...option.values.map((value) => value.id)]))
  const unknown = Object.keys(sent).find((id) => !ids.has(id))
  if (unknown) throw invalidField(`options.${unknown}`, `Field 'options.${unknown}' is not an id of this product's options or their values`)
  return sent
}

/** The product shows other text in a locale: touched, and product.updated recorded. */
async function productChanged(tx: Executor, ids: OwnerIds, requestId: string): Promise<void> {
  await tx.update(products).set({ updatedAt: new Date() }).where(eq(products.id, ids.id))
  await emitProductEvent(tx, ids.id, 'product.updated', requestId)
}

export function createTranslationService(db: Database) {
  const product = operations<typeof productTranslations.$inferSelect, PutProductTranslation, ProductTranslation>(db, {
    requireOwner: (tx, ids, forWrite) => requireProduct(tx, ids.id, forWrite),
    select: (tx, ids, locale) =>
      tx
        .select()
        .from(productTranslations)
        .where(oneOrAll(eq(productTranslations.productId, ids.id), locale === undefined ? undefined : eq(productTranslations.locale, locale)))
        .orderBy(asc(productTranslations.locale)),
    async upsert(tx, ids, locale, body) {
      const fields = {
        title: body.title ?? null,
        description: body.description ?? null,
        attributes: await translatableAttributes(tx, body.attributes),
        options: await translatableOptions(tx, ids.id, body.options),
      }
      if (Object.values(fields).every((value) => value === null)) throw nothingTranslated('title')
      const [written] = await tx
        .insert(productTranslations)
        .values({ productId: ids.id, locale, ...fields })
        .onConflictDoUpdate({ target: [productTranslations.productId, productTranslations.locale], set: { ...fields, updatedAt: new Date() } })
        .returning({ ...getTableColumns(productTranslations), inserted })
      const { inserted: created, ...row } = written!
      return { row, inserted: created }
    },
    delete: async (tx, ids, locale) =>
      (await tx.delete(productTranslations).where(and(eq(productTranslations.productId, ids.id), eq(productTranslations.locale, locale))).returning({ locale: productTranslations.locale })).length,
    show: (row) => ({ locale: row.locale, title: row.title, description: row.description, attributes: row.attributes, options: row.options, ...times(row) }),
    changed: productChanged,
  })

  const variant = operations<typeof variantTranslations.$inferSelect, PutVariantTranslation, VariantTranslation>(db, {
    async requireOwner(tx, ids, forWrite) {
      await requireProduct(tx, ids.id, forWrite)
      const [row] = await tx
        .select({ id: productVariants.id })
        .from(productVariants)
        .where(and(eq(productVariants.id, ids.variant_id!), eq(productVariants.productId, ids.id)))
      if (!row) throw notFound('Variant')
    },
    // Through the variant's product, so another product's variant id finds nothing.
    select: (tx, ids, locale) =>
      tx
        .select({ row: variantTranslations })
        .from(variantTranslations)
        .innerJoin(productVariants, and(eq(productVariants.id, variantTranslations.variantId), eq(productVariants.productId, ids.id)))
        .where(oneOrAll(eq(variantTranslations.variantId, ids.variant_id!), locale === undefined ? undefined : eq(variantTranslations.locale, locale)))
        .orderBy(asc(variantTranslations.locale))
        .then((rows) => rows.map(({ row }) => row)),
    async upsert(tx, ids, locale, body) {
      const [written] = await tx
        .insert(variantTranslations)
        .values({ variantId: ids.variant_id!, locale, title: body.title })
        .onConflictDoUpdate({ target: [variantTranslations.variantId, variantTranslations.locale], set: { title: body.title, updatedAt: new Date() } })
        .returning({ ...getTableColumns(variantTranslations), inserted })
      const { inserted: created, ...row } = written!
      return { row, inserted: created }
    },
    delete: async (tx, ids, locale) =>
      (await tx.delete(variantTranslations).where(and(eq(variantTranslations.variantId, ids.variant_id!), eq(variantTranslations.locale, locale))).returning({ locale: variantTranslations.locale })).length,
    show: (row) => ({ locale: row.locale, title: row.title, ...times(row) }),
    changed: productChanged,
  })

  const category = operations<typeof categoryTranslations.$inferSelect, PutCategoryTranslation, CategoryTranslation>(db, {
    async requireOwner(tx, ids) {
      const [row] = await tx.select({ id: categories.id }).from(categories).where(eq(categories.id, ids.id))
      if (!row) throw notFound('Category')
    },
    select: (tx, ids, locale) =>
      tx
        .select()
        .from(categoryTranslations)
        .where(oneOrAll(eq(categoryTranslations.categoryId, ids.id), locale === undefined ? undefined : eq(categoryTranslations.locale, locale)))
        .orderBy(asc(categoryTranslations.locale)),
    async upsert(tx, ids, locale, body) {
      const fields = { name: body.name ?? null, description: body.description ?? null }
      if (fields.name === null && fields.description === null) throw nothingTranslated('name')
      const [written] = await tx
        .insert(categoryTranslations)
        .values({ categoryId: ids.id, locale, ...fields })
        .onConflictDoUpdate({ target: [categoryTranslations.categoryId, categoryTranslations.locale], set: { ...fields, updatedAt: new Date() } })
        .returning({ ...getTableColumns(categoryTranslations), inserted })
      const { inserted: created, ...row } = written!
      return { row, inserted: created }
    },
    delete: async (tx, ids, locale) =>
      (await tx.delete(categoryTranslations).where(and(eq(categoryTranslations.categoryId, ids.id), eq(categoryTranslations.locale, locale))).returning({ locale: categoryTranslations.locale })).length,
    show: (row) => ({ locale: row.locale, name: row.name, description: row.description, ...times(row) }),
    // A category's name shows in its products' list items, read at each request: nothing to refresh.
    changed: async () => {},
  })

  return { product, variant, category }
}
