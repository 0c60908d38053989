/**
 * Translated reads (docs/translations.md): SQL that shows a row's fields in the first locale of
 * a chain (`fr-CA`, `fr`) that translates each of them, else the original. The chain is the
 * statement's `locales` placeholder (a text[] in order of preference), so each read stays one
 * prepared statement and one round trip.
 */
import { and, eq, sql, type AnyColumn, type SQL } from 'drizzle-orm'
import type { Database } from '../client.js'
import type { SqlClient } from '../transaction.js'
import { categoryTranslations, productTranslations, products, variantTranslations } from '../schema/index.js'

/** The chain of locales to try, in order: a text[] bound at execution. */
const LOCALES = sql`${sql.placeholder('locales')}::text[]`

/** `locale` is one of the chain's. */
export const inChain = (locale: AnyColumn) => sql`${locale} = any(${LOCALES})`
const chainOrder = (locale: AnyColumn) => sql`array_position(${LOCALES}, ${locale})`
/** The value of `column` in the earliest locale of the chain that has one. */
const firstTranslated = (column: AnyColumn, locale: AnyColumn) =>
  sql`(array_agg(${column} order by ${chainOrder(locale)}) filter (where ${column} is not null))[1]`

/**
 * A product's translated texts by key (its attributes, its option names and values), each in the
 * earliest locale of the chain that has it; null: none. The chain's translations are aggregated
 * latest locale first, so that the earlier ones' keys win (the last of a key in a jsonb object does).
 */
function translatedKeys(column: typeof productTranslations.attributes | typeof productTranslations.options) {
  return sql<Record<string, string> | null>`(select jsonb_object_agg(e.key, e.value order by a.ordinality) from jsonb_array_elements(
    jsonb_agg(${column} order by ${chainOrder(productTranslations.locale)} desc) filter (where ${column} is not null)) with ordinality a,
    jsonb_each(a.value) e)`
}

/**
 * The translation along the chain of the product whose id is `productId` (by default the row of
 * `products`), as one row to join laterally (`leftJoinLateral(join, sql\`true\`)`): title,
 * description and the earliest locale found.
 */
export function productTranslationJoin(db: Database, productId: SQL | AnyColumn = products.id) {
  return db
    .select({
      title: sql<string | null>`${firstTranslated(productTranslations.title, productTranslations.locale)}`.as('translated_title'),
      description: sql<string | null>`${firstTranslated(productTranslations.description, productTranslations.locale)}`.as('translated_description'),
      locale: sql<string | null>`(array_agg(${productTranslations.locale} order by ${chainOrder(productTranslations.locale)}))[1]`.as('translated_locale'),
      attributes: translatedKeys(productTranslations.attributes).as('translated_attributes'),
      options: translatedKeys(productTranslations.options).as('translated_options'),
    })
    .from(productTranslations)
    .where(and(eq(productTranslations.productId, productId), inChain(productTranslations.locale)))
    .as('product_translation')
}

/** A variant's title along the chain, else its own; `variantId` and `title` are the variant row's SQL. */
export function translatedVariantTitle(variantId: SQL | AnyColumn, title: SQL | AnyColumn): SQL<string> {
  return sql<string>`coalesce((select ${variantTranslations.title} from ${variantTranslations}
    where ${variantTranslations.variantId} = ${variantId} and ${inChain(variantTranslations.locale)}
    order by ${chainOrder(variantTranslations.locale)} limit 1), ${title})`
}

/** A category's name or description along the chain, else `original`. */
export function translatedCategoryField(categoryId: SQL | AnyColumn, field: 'name' | 'description', original: SQL | AnyColumn): SQL {
  const column = categoryTranslations[field]
  return sql`coalesce((select ${column} from ${categoryTranslations}
    where ${categoryTranslations.categoryId} = ${categoryId} and ${inChain(categoryTranslations.locale)} and ${column} is not null
    order by ${chainOrder(categoryTranslations.locale)} limit 1), ${original})`
}

/** The earliest locale of the chain a category has a translation in (null: none). */
export function categoryTranslationLocale(categoryId: SQL | AnyColumn): SQL<string | null> {
  return sql<string | null>`(select ${categoryTranslations.locale} from ${categoryTranslations}
    where ${categoryTranslations.categoryId} = ${categoryId} and ${inChain(categoryTranslations.locale)}
    order by ${chainOrder(categoryTranslations.locale)} limit 1)`
}

/** A product's categories (the `categories` read model: [{id, name, slug}]) with their names along the chain. */
export const translatedProductCategories = sql<{ id: string; name: string; slug: string }[]>`(
  select coalesce(jsonb_agg(jsonb_set(c.value, '{name}', to_jsonb(${translatedCategoryField(sql`(c.value->>'id')::uuid`, 'name', sql`c.value->>'name'`)})) order by c.ordinality), '[]'::jsonb)
  from jsonb_array_elements(${products.categories}) with ordinality c)`

const REVISION = 'select revision::text as revision from catalog_revision'
const LOCALES_TRANSLATED = 'select locale from product_translations union select locale from variant_translations union select locale from category_translations union select locale from collection_translations'

/**
 * The catalog revision and, when it is not `seen`, every locale that has a translation (the API
 * instances' set of translated locales: apps/api plugins/translated-locales.ts). The revision is
 * read first: a translation committed after it moves it again.
 */
export async function translatedLocalesSince(client: SqlClient, seen: string | undefined): Promise<{ revision: string; locales?: string[] }> {
  const [current] = await client.unsafe<{ revision: string }[]>(REVISION, [], { prepare: true })
  const revision = current!.revision
  if (revision === seen) return { revision }
  const rows = await client.unsafe<{ locale: string }[]>(LOCALES_TRANSLATED, [], { prepare: true })
  return { revision, locales: rows.map((row) => row.locale) }
}
