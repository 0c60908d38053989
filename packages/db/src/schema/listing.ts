/**
 * The storefront's listing read model (docs/catalog.md, "Filters, sorting and facets"): one
 * narrow row per product with what filters, sorts and facets read, kept by triggers in the same
 * transaction as the change (migration 0038: refresh_product_listing), so that a list never reads
 * the wide product rows to filter them and counts are exact.
 */
import { sql } from 'drizzle-orm'
import { bigint, boolean, customType, index, integer, jsonb, pgEnum, pgTable, primaryKey, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { COLLECTION_KINDS, COLLECTION_MATCHES, COLLECTION_SORTS, type CollectionRule as CollectionRuleInput } from '@commerce/domain'
import { products } from './catalog.js'
import { createdAt, id, updatedAt } from './columns.js'

export const productListing = pgTable(
  'product_listing',
  {
    productId: uuid('product_id')
      .primaryKey()
      .references(() => products.id, { onDelete: 'cascade' }),
    /** products.is_active. */
    public: boolean('public').notNull(),
    /** lower(title), for the title sort. */
    titleKey: text('title_key').notNull(),
    currency: text('currency').notNull(),
    /** The lowest price of its variants (or its own without variants), minor units of `currency`. */
    priceMinor: bigint('price_minor', { mode: 'number' }).notNull(),
    onSale: boolean('on_sale').notNull(),
    /** Sellable now at an active location: the product's or a variant's stock. */
    available: boolean('available').notNull(),
    /**
     * What filters and facets match, lower case: `tag:<tag>`, `type:<type>`, `vendor:<vendor>`,
     * `opt:<option>:<value>` (values its variants chose), `attr:<key>:<value>` (public, filterable
     * attributes of the product and its variants).
     */
    terms: text('terms').array().notNull(),
    /** Public, filterable number and date attributes: key → the values (dates as yyyymmdd). */
    numbers: jsonb('numbers').$type<Record<string, number[]>>().notNull(),
    /** Its categories and their ancestors (a category filter includes its descendants). */
    categoryIds: uuid('category_ids').array().notNull(),
    /** Units sold over the last 30 days (refreshed by the worker's refresh-best-sellers). */
    sold: integer('sold').notNull().default(0),
  },
  (t) => [
    index('product_listing_terms_idx').using('gin', t.terms),
    index('product_listing_categories_idx').using('gin', t.categoryIds),
    index('product_listing_newest_idx').on(t.productId.desc()).where(sql`${t.public}`),
    index('product_listing_price_idx').on(t.currency, t.priceMinor, t.productId).where(sql`${t.public}`),
    index('product_listing_sold_idx').on(t.sold.desc(), t.productId.desc()).where(sql`${t.public}`),
    index('product_listing_title_idx').on(t.titleKey, t.productId).where(sql`${t.public}`),
  ],
)

/** A product's lowest price in each currency it is sold in at one unit (its own, and its base prices'), with whether it is on sale there. */
export const productListingPrices = pgTable(
  'product_listing_prices',
  {
    productId: uuid('product_id')
      .notNull()
      .references(() => products.id, { onDelete: 'cascade' }),
    currency: text('currency').notNull(),
    amountMinor: bigint('amount_minor', { mode: 'number' }).notNull(),
    onSale: boolean('on_sale').notNull(),
  },
  (t) => [primaryKey({ name: 'product_listing_prices_pkey', columns: [t.productId, t.currency] }), index('product_listing_prices_sort_idx').on(t.currency, t.amountMinor, t.productId)],
)

const xid8 = customType<{ data: string }>({ dataType: () => 'xid8' })

/**
 * The products whose listing row or collection memberships changed, with the transaction that
 * changed them (written by triggers on product_listing and collection_products: migration 0040).
 * An API instance's listing index reads the changes committed since its last look by comparing
 * snapshots, so writers take no common lock. Kept an hour (the worker's expire-listing-changes).
 */
export const listingChanges = pgTable(
  'listing_changes',
  {
    xid: xid8('xid').notNull().default(sql`pg_current_xact_id()`),
    productId: uuid('product_id').notNull(),
    at: timestamp('at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('listing_changes_xid_idx').on(t.xid), index('listing_changes_at_idx').on(t.at)],
)

/** How a facet's value is written where it was first seen ("Summer" for `tag:summer`, "Size" for `opt:size`). */
export const facetLabels = pgTable('facet_labels', {
  term: text('term').primaryKey(),
  label: text('label').notNull(),
})

export const collectionKind = pgEnum('collection_kind', COLLECTION_KINDS)
export const collectionMatch = pgEnum('collection_match', COLLECTION_MATCHES)
export const collectionSort = pgEnum('collection_sort', COLLECTION_SORTS)

/** A collection of products: manual (an ordered list) or automatic (its rules, kept current by triggers). */
export const collections = pgTable(
  'collections',
  {
    id: id(),
    title: text('title').notNull(),
    slug: text('slug').notNull(),
    description: text('description'),
    imageUrl: text('image_url'),
    kind: collectionKind('kind').notNull(),
    /** Automatic: whether a product must match every rule or any. */
    match: collectionMatch('match').notNull().default('all'),
    /** The order of its products when a list asks for none. */
    sort: collectionSort('sort').notNull().default('manual'),
    /** Shown to the public. */
    published: boolean('published').notNull().default(true),
    /** The rules as written (collection_rules holds them as matched). */
    rules: jsonb('rules').$type<CollectionRuleInput[]>().notNull().default([]),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('collections_slug_key').on(t.slug), index('collections_created_idx').on(t.createdAt, t.id)],
)

/** An automatic collection's rules (docs/catalog.md, "Collections"). */
export const collectionRules = pgTable(
  'collection_rules',
  {
    collectionId: uuid('collection_id')
      .notNull()
      .references(() => collections.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
    /** tag, type, vendor, title, price, attribute, option, stock, on_sale. */
    field: text('field').notNull(),
    /** equals, not_equals, contains, greater_than, less_than, in_stock, out_of_stock, is. */
    operator: text('operator').notNull(),
    /** The attribute key or option name the rule reads (attribute and option rules). */
    name: text('name'),
    /** What it compares with, as text (lower case for terms); price: minor units of `currency`. */
    value: text('value'),
    currency: text('currency'),
  },
  (t) => [primaryKey({ name: 'collection_rules_pkey', columns: [t.collectionId, t.position] })],
)

/** The products of each collection: a manual one's as placed, an automatic one's as its rules find them. */
export const collectionProducts = pgTable(
  'collection_products',
  {
    collectionId: uuid('collection_id')
      .notNull()
      .references(() => collections.id, { onDelete: 'cascade' }),
    productId: uuid('product_id')
      .notNull()
      .references(() => products.id, { onDelete: 'cascade' }),
    /** Manual order (automatic collections: 0). */
    position: integer('position').notNull().default(0),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ name: 'collection_products_pkey', columns: [t.collectionId, t.productId] }),
    index('collection_products_product_idx').on(t.productId),
    index('collection_products_order_idx').on(t.collectionId, t.position, t.productId),
  ],
)


export const collectionTranslations = pgTable(
  'collection_translations',
  {
    collectionId: uuid('collection_id')
      .notNull()
      .references(() => collections.id, { onDelete: 'cascade' }),
    locale: text('locale').notNull(),
    title: text('title'),
    description: text('description'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ name: 'collection_translations_pkey', columns: [t.collectionId, t.locale] })],
)

/**
 * Each product as a public list shows it, as JSON text (its public attributes, no translation,
 * the base price), kept by triggers on products in the writing transaction (migration 0041:
 * product_list_item_body), so a public page sends these texts as they are instead of reading
 * the wide rows and serializing them. Without `inventory_quantity` and `updated_at`, which a
 * stock move changes: the read puts the row's own in front (listItemJson).
 */
export const productListItems = pgTable('product_list_items', {
  productId: uuid('product_id')
    .primaryKey()
    .references(() => products.id, { onDelete: 'cascade' }),
  body: text('body').notNull(),
})
