/**
 * Collections (docs/catalog.md, "Collections"): manual ones hold the products placed in them, in
 * order; automatic ones hold what their rules match, decided by the database in the transaction
 * of every change (refresh_collection_membership, migration 0038), so a product that comes to
 * match appears without anything being rebuilt.
 */
import { and, asc, count, eq, inArray } from 'drizzle-orm'
import {
  isCalendarDate,
  toMinorUnits,
  type Collection,
  type CollectionRule,
  type CreateCollection,
  type PreviewCollection,
  type UpdateCollection,
} from '@commerce/domain'
import {
  collectionProducts,
  collectionRules,
  collections,
  collectionTranslations,
  isUniqueViolation,
  previewCollectionRules,
  refreshCollection,
  products,
  sqlOf,
  writeEvent,
  type Database,
  type Executor,
} from '@commerce/db'
import { conflict, invalidField, notFound } from '../../errors.js'
import { fieldValue } from '../../fields.js'
import { key, keyset, listTable, type PageQuery } from '../../list-cursor.js'
import { generateUniqueSlug } from '../../slugs.js'

type CollectionRow = typeof collections.$inferSelect

const COLLECTIONS_KEYSET = keyset('collections', 'desc', [key.time(collections.createdAt), key.uuid(collections.id)])

/** Which operators each field takes, and what else it needs. */
const RULE_SHAPES: Record<CollectionRule['field'], { operators: CollectionRule['operator'][]; name?: boolean; value?: boolean; currency?: boolean }> = {
  tag: { operators: ['equals', 'not_equals'], value: true },
  type: { operators: ['equals', 'not_equals'], value: true },
  vendor: { operators: ['equals', 'not_equals'], value: true },
  title: { operators: ['contains', 'equals', 'not_equals'], value: true },
  option: { operators: ['equals', 'not_equals'], name: true, value: true },
  attribute: { operators: ['equals', 'not_equals', 'greater_than', 'less_than'], name: true, value: true },
  price: { operators: ['greater_than', 'less_than'], value: true, currency: true },
  stock: { operators: ['in_stock', 'out_of_stock'] },
  on_sale: { operators: ['is_true', 'is_false'] },
}

/** A rule as collection_rules matches it (lower case terms, minor units, dates as yyyymmdd), or a 400 naming `rules[i].<field>`. */
function storedRule(rule: CollectionRule, i: number) {
  const field = (name: string) => `rules[${i}].${name}`
  const shape = RULE_SHAPES[rule.field]
  if (!shape.operators.includes(rule.operator)) {
    throw invalidField(field('operator'), `Field '${field('operator')}' must be one of ${shape.operators.join(', ')} for a ${rule.field} rule`)
  }
  for (const part of ['name', 'value', 'currency'] as const) {
    const wanted = shape[part] === true
    const given = rule[part] != null
    if (wanted && !given) throw invalidField(field(part), `Field '${field(part)}' is required for a ${rule.field} rule`)
    if (!wanted && given) throw invalidField(field(part), `Field '${field(part)}' does not apply to a ${rule.field} rule`)
  }
  let value = rule.value ?? null
  if (rule.field === 'price') value = String(fieldValue(field('value'), () => toMinorUnits(rule.value!, rule.currency!)))
  else if (rule.field === 'attribute' && (rule.operator === 'greater_than' || rule.operator === 'less_than')) {
    if (isCalendarDate(value!)) value = value!.replaceAll('-', '')
    else if (!/^-?\d+(\.\d+)?$/.test(value!)) throw invalidField(field('value'), `Field '${field('value')}' must be a number or a date (YYYY-MM-DD) to compare with`)
  } else if (value !== null) value = value.trim().toLowerCase()
  const name = rule.field === 'option' ? rule.name!.trim().toLowerCase() : (rule.name ?? null)
  return { position: i, field: rule.field, operator: rule.operator, name, value, currency: rule.currency ?? null }
}

async function toCollection(tx: Executor, row: CollectionRow, translated?: { title: string | null; description: string | null }): Promise<Collection> {
  const [counted] = await tx.select({ count: count() }).from(collectionProducts).where(eq(collectionProducts.collectionId, row.id))
  return {
    id: row.id,
    title: translated?.title ?? row.title,
    slug: row.slug,
    description: translated?.description ?? row.description,
    image_url: row.imageUrl,
    kind: row.kind,
    match: row.match,
    sort: row.sort,
    published: row.published,
    rules: row.rules,
    product_count: counted!.count,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

export function createCollectionService(db: Database) {
  async function find(tx: Executor, id: string, lock = false): Promise<CollectionRow> {
    const query = tx.select().from(collections).where(eq(collections.id, id))
    const [row] = lock ? await query.for('update') : await query
    if (!row) throw notFound('Collection')
    return row
  }

  /** A manual collection's products, in order: each must exist (400 naming `product_ids[i]`). */
  async function placeProducts(tx: Executor, collectionId: string, productIds: string[]) {
    if (productIds.length > 0) {
      const found = await tx.select({ id: products.id }).from(products).where(inArray(products.id, productIds))
      const known = new Set(found.map((row) => row.id))
      const missing = productIds.findIndex((id) => !known.has(id))
      if (missing >= 0) throw invalidField(`product_ids[${missing}]`, `Field 'product_ids[${missing}]' names no product: ${productIds[missing]}`)
    }
    await tx.delete(collectionProducts).where(eq(collectionProducts.collectionId, collectionId))
    if (productIds.length > 0) await tx.insert(collectionProducts).values(productIds.map((productId, position) => ({ collectionId, productId, position })))
  }

  /** An automatic collection's rules, then its products decided again from them. */
  async function setRules(tx: Executor, collectionId: string, rules: CollectionRule[]) {
    const stored = rules.map(storedRule)
    await tx.delete(collectionRules).where(eq(collectionRules.collectionId, collectionId))
    if (stored.length > 0) await tx.insert(collectionRules).values(stored.map((rule) => ({ ...rule, collectionId })))
    await refreshCollection(tx, collectionId)
  }

  async function emit(tx: Executor, kind: 'collection.created' | 'collection.updated' | 'collection.deleted', collection: Collection, requestId: string) {
    await writeEvent(tx, { kind, resourceId: collection.id, data: collection, requestId })
  }

  function write<T>(work: (tx: Executor) => Promise<T>): Promise<T> {
    return db.transaction(work).catch((error: unknown) => {
      if (isUniqueViolation(error)) throw conflict('A collection with this slug already exists')
      throw error
    })
  }

  return {
    /** Newest first; the public sees published ones only. */
    async list(query: PageQuery, staff: boolean) {
      const { rows, meta } = await listTable(db, COLLECTIONS_KEYSET, collections, staff ? undefined : eq(collections.published, true), query)
      return { collections: await Promise.all(rows.map((row) => toCollection(db, row))), meta }
    },

    /** By id or slug, its title and description along the chain `locales`; unpublished ones are 404 to the public. */
    async get(by: { id: string } | { slug: string }, staff: boolean, locales: string[]): Promise<Collection> {
      const [row] = await db.select().from(collections).where('id' in by ? eq(collections.id, by.id) : eq(collections.slug, by.slug))
      if (!row || (!row.published && !staff)) throw notFound('Collection')
      let translated: { title: string | null; description: string | null } | undefined
      if (locales.length > 0) {
        const found = await db
          .select({ locale: collectionTranslations.locale, title: collectionTranslations.title, description: collectionTranslations.description })
          .from(collectionTranslations)
          .where(and(eq(collectionTranslations.collectionId, row.id), inArray(collectionTranslations.locale, locales)))
        const inOrder = locales.flatMap((locale) => found.filter((entry) => entry.locale === locale))
        translated = { title: inOrder.find((entry) => entry.title)?.title ?? null, description: inOrder.find((entry) => entry.description)?.description ?? null }
      }
      return toCollection(db, row, translated)
    },

    create(body: CreateCollection, requestId: string): Promise<Collection> {
      if (body.kind === 'manual' && body.rules?.length) throw invalidField('rules', "Field 'rules' is for automatic collections: a manual one holds product_ids")
      if (body.kind === 'automatic' && body.product_ids) throw invalidField('product_ids', "Field 'product_ids' is for manual collections: an automatic one holds what its rules match")
      if (body.kind === 'automatic' && body.sort === 'manual') throw invalidField('sort', "Field 'sort' manual is for manual collections")
      return write(async (tx) => {
        const slug = body.slug ?? (await generateUniqueSlug(tx, collections.slug, body.title, 'collection'))
        const [row] = await tx
          .insert(collections)
          .values({
            title: body.title,
            slug,
            description: body.description ?? null,
            imageUrl: body.image_url ?? null,
            kind: body.kind,
            match: body.match ?? 'all',
            sort: body.sort ?? (body.kind === 'manual' ? 'manual' : 'best_selling'),
            published: body.published ?? true,
            rules: body.rules ?? [],
          })
          .returning()
        if (body.kind === 'manual') await placeProducts(tx, row!.id, body.product_ids ?? [])
        else await setRules(tx, row!.id, body.rules ?? [])
        const collection = await toCollection(tx, row!)
        await emit(tx, 'collection.created', collection, requestId)
        return collection
      })
    },

    update(id: string, body: UpdateCollection, requestId: string): Promise<Collection> {
      return write(async (tx) => {
        const current = await find(tx, id, true)
        if (current.kind === 'manual' && body.rules) throw invalidField('rules', "Field 'rules' is for automatic collections: a manual one holds product_ids")
        if (current.kind === 'automatic' && body.product_ids) throw invalidField('product_ids', "Field 'product_ids' is for manual collections")
        if (current.kind === 'automatic' && body.sort === 'manual') throw invalidField('sort', "Field 'sort' manual is for manual collections")
        const [row] = await tx
          .update(collections)
          .set({
            title: body.title,
            slug: body.slug,
            description: body.description,
            imageUrl: body.image_url,
            match: body.match,
            sort: body.sort,
            published: body.published,
            rules: body.rules,
            updatedAt: new Date(),
          })
          .where(eq(collections.id, id))
          .returning()
        if (body.product_ids) await placeProducts(tx, id, body.product_ids)
        if (body.rules || (body.match && body.match !== current.match)) await setRules(tx, id, row!.rules)
        const collection = await toCollection(tx, row!)
        await emit(tx, 'collection.updated', collection, requestId)
        return collection
      })
    },

    remove(id: string, requestId: string): Promise<void> {
      return write(async (tx) => {
        const current = await find(tx, id, true)
        const collection = await toCollection(tx, current)
        await tx.delete(collections).where(eq(collections.id, id))
        await emit(tx, 'collection.deleted', collection, requestId)
      })
    },

    /** What rules would match now: the count and the 20 newest, without saving anything. */
    preview(body: PreviewCollection) {
      return previewCollectionRules(sqlOf(db), body.rules.map(storedRule), (body.match ?? 'all') === 'all')
    },

    async listTranslations(id: string) {
      await find(db, id)
      const rows = await db.select().from(collectionTranslations).where(eq(collectionTranslations.collectionId, id)).orderBy(asc(collectionTranslations.locale))
      return { translations: rows.map(showTranslation) }
    },

    putTranslation(id: string, locale: string, body: { title?: string | null | undefined; description?: string | null | undefined }, requestId: string) {
      return write(async (tx) => {
        const current = await find(tx, id, true)
        const fields = { title: body.title ?? null, description: body.description ?? null }
        if (fields.title === null && fields.description === null) throw invalidField('title', "Field 'title' or 'description' must be given: a translation with neither would show nothing")
        const [row] = await tx
          .insert(collectionTranslations)
          .values({ collectionId: id, locale, ...fields })
          .onConflictDoUpdate({ target: [collectionTranslations.collectionId, collectionTranslations.locale], set: { ...fields, updatedAt: new Date() } })
          .returning()
        await emit(tx, 'collection.updated', await toCollection(tx, current), requestId)
        return showTranslation(row!)
      })
    },

    deleteTranslation(id: string, locale: string) {
      return write(async (tx) => {
        await find(tx, id, true)
        const gone = await tx.delete(collectionTranslations).where(and(eq(collectionTranslations.collectionId, id), eq(collectionTranslations.locale, locale))).returning()
        if (gone.length === 0) throw notFound('Translation')
      })
    },
  }
}

function showTranslation(row: typeof collectionTranslations.$inferSelect) {
  return { locale: row.locale, title: row.title, description: row.description, created_at: row.createdAt.toISOString(), updated_at: row.updatedAt.toISOString() }
}

