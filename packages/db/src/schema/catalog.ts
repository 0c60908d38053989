import { sql } from 'drizzle-orm'
import {
  type AnyPgColumn,
  bigint,
  boolean,
  check,
  customType,
  index,
  integer,
  jsonb,
  numeric,
  pgEnum,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core'
import { ATTRIBUTE_OWNERS, ATTRIBUTE_TYPES, DIMENSION_UNITS, PRODUCT_STATUSES, WEIGHT_UNITS, type AttributeRules, type AttributeValue, type OptionRecord } from '@commerce/domain'
import { createdAt, id, updatedAt } from './columns.js'

export const weightUnit = pgEnum('weight_unit', WEIGHT_UNITS)
export const dimensionUnit = pgEnum('dimension_unit', DIMENSION_UNITS)
export const productStatus = pgEnum('product_status', PRODUCT_STATUSES)
export const attributeType = pgEnum('attribute_type', ATTRIBUTE_TYPES)
export const attributeOwner = pgEnum('attribute_owner', ATTRIBUTE_OWNERS)

/** Attribute values by key: `attributes` the public ones, `staff_attributes` those of definitions that are not public. */
const attributeValues = (name: string) => jsonb(name).$type<Record<string, AttributeValue>>().notNull().default({})

const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' })
/** Weights are decimals (0.25 kg); numeric keeps them exact. */
const weight = (name: string) => numeric(name, { precision: 14, scale: 4, mode: 'number' })
/** Lengths too (12.5 cm). */
const length = weight

/** A product's option as stored in `products.options`, in display order (docs/catalog.md, "Options"). */
export type ProductOptionJson = OptionRecord

export const categories = pgTable(
  'categories',
  {
    id: id(),
    name: text('name').notNull(),
    slug: text('slug').notNull(),
    description: text('description'),
    parentId: uuid('parent_id').references((): AnyPgColumn => categories.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('categories_slug_key').on(t.slug)],
)

export const products = pgTable(
  'products',
  {
    id: id(),
    title: text('title').notNull(),
    slug: text('slug').notNull(),
    description: text('description'),
    sku: text('sku'),
    /** Integer minor units of `currency`. */
    priceMinor: bigint('price_minor', { mode: 'number' }).notNull(),
    currency: text('currency').notNull(),
    inventoryQuantity: integer('inventory_quantity').notNull().default(0),
    weight: weight('weight'),
    weightUnit: weightUnit('weight_unit').notNull().default('kg'),
    /**
     * Public now: `status` active and `published_at` reached. Kept by a trigger from `status` and
     * `published_at` (and, written alone, it sets `status`), so every read and index of the
     * public catalog tests one column (migration 0036).
     */
    isActive: boolean('is_active').notNull().default(true),
    status: productStatus('status').notNull().default('active'),
    /** When an active product went or goes public; a later moment schedules it (the worker's publish-product job). */
    publishedAt: timestamp('published_at', { withTimezone: true }),
    /** Integer minor units of `currency`: the price it was, shown crossed out; never priced. */
    compareAtPriceMinor: bigint('compare_at_price_minor', { mode: 'number' }),
    /** As first written, at most one per spelling whatever its case (normalizeTags). */
    tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
    productType: text('product_type'),
    vendor: text('vendor'),
    /** A GTIN (8, 12, 13 or 14 digits) with a valid check digit. */
    barcode: text('barcode'),
    length: length('length'),
    width: length('width'),
    height: length('height'),
    dimensionUnit: dimensionUnit('dimension_unit').notNull().default('cm'),
    /** Digits only (6 to 10). */
    hsCode: text('hs_code'),
    /** ISO 3166-1 alpha-2. */
    countryOfOrigin: text('country_of_origin'),
    seoTitle: text('seo_title'),
    seoDescription: text('seo_description'),
    /** The options its variants choose from, in display order, with their values in order. */
    options: jsonb('options').$type<ProductOptionJson[]>().notNull().default([]),
    attributes: attributeValues('attributes'),
    staffAttributes: attributeValues('staff_attributes'),
    imageUrl: text('image_url'),
    /** `image_url` was set through the API; otherwise it follows the first image by position. */
    imageUrlExplicit: boolean('image_url_explicit').notNull().default(false),
    /**
     * The product's categories as the API shows them ([{id, name, slug}] by name), kept by
     * triggers on product_categories and categories, so a list page reads no joins.
     */
    categories: jsonb('categories').$type<{ id: string; name: string; slug: string }[]>().notNull().default([]),
    /** Words of title and description for `?search=` (GIN index below). */
    searchVector: tsvector('search_vector')
      .notNull()
      .generatedAlwaysAs(
        sql`to_tsvector('simple'::regconfig, coalesce(title, '') || ' ' || coalesce(description, ''))`,
      ),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    uniqueIndex('products_slug_key').on(t.slug),
    // The public list is "active products, newest first": UUIDv7 ids sort by creation time.
    index('products_active_id_idx').on(t.id.desc()).where(sql`${t.isActive}`),
    index('products_search_idx').using('gin', t.searchVector),
    // The products waiting for their published_at (the publish-product job's read).
    index('products_scheduled_idx').on(t.publishedAt).where(sql`${t.status} = 'active' and not ${t.isActive}`),
    check('products_inventory_nonnegative', sql`${t.inventoryQuantity} >= 0`),
    check('products_price_nonnegative', sql`${t.priceMinor} >= 0`),
    check('products_compare_at_nonnegative', sql`${t.compareAtPriceMinor} >= 0`),
    check('products_active_when_public', sql`not ${t.isActive} or ${t.status} = 'active'`),
  ],
)

/** What a key of products' or variants' `attributes` holds (docs/catalog.md, "Attributes"). */
export const attributeDefinitions = pgTable(
  'attribute_definitions',
  {
    id: id(),
    key: text('key').notNull(),
    owner: attributeOwner('owner').notNull().default('product'),
    name: text('name').notNull(),
    description: text('description'),
    type: attributeType('type').notNull(),
    unit: text('unit'),
    choices: text('choices').array().notNull().default(sql`'{}'::text[]`),
    rules: jsonb('rules').$type<AttributeRules>().notNull().default({}),
    filterable: boolean('filterable').notNull().default(false),
    public: boolean('public').notNull().default(true),
    position: integer('position').notNull().default(0),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [uniqueIndex('attribute_definitions_key').on(t.owner, t.key), index('attribute_definitions_order_idx').on(t.owner, t.position, t.id)],
)

/** Slugs a product answered at before it was renamed: `GET /products/by-slug/{old}` still finds it. */
export const productSlugRedirects = pgTable('product_slug_redirects', {
  slug: text('slug').primaryKey(),
  productId: uuid('product_id')
    .notNull()
    .references(() => products.id, { onDelete: 'cascade' }),
  createdAt: createdAt(),
}, (t) => [index('product_slug_redirects_product_idx').on(t.productId)])

export const productCategories = pgTable(
  'product_categories',
  {
    productId: uuid('product_id')
      .notNull()
      .references(() => products.id, { onDelete: 'cascade' }),
    categoryId: uuid('category_id')
      .notNull()
      .references(() => categories.id, { onDelete: 'cascade' }),
  },
  // (category, product desc) walks one category's products newest first, for `?category=`.
  (t) => [
    primaryKey({ name: 'product_categories_pkey', columns: [t.categoryId, t.productId] }),
    index('product_categories_product_idx').on(t.productId),
  ],
)

/**
 * A variant id column with null (the product itself) as the nil UUID, below every other: how an
 * index and a list's keyset order items by variant, the product's own first (a row comparison
 * cannot compare nulls).
 */
export const variantOrNil = (variantId: AnyPgColumn) => sql<string>`coalesce(${variantId}, '00000000-0000-0000-0000-000000000000'::uuid)`

export const productVariants = pgTable(
  'product_variants',
  {
    id: id(),
    productId: uuid('product_id')
      .notNull()
      .references(() => products.id, { onDelete: 'cascade' }),
    title: text('title').notNull(),
    sku: text('sku'),
    /** Integer minor units in the product's currency; null means the product price applies. */
    priceMinor: bigint('price_minor', { mode: 'number' }),
    inventoryQuantity: integer('inventory_quantity').notNull().default(0),
    /** Integer minor units; null: the product's compare-at price applies. */
    compareAtPriceMinor: bigint('compare_at_price_minor', { mode: 'number' }),
    barcode: text('barcode'),
    /** Option name → value, as shown: kept from `option_value_ids` when the product has options, free-form otherwise. */
    options: jsonb('options').$type<Record<string, string>>().notNull().default({}),
    /** The value chosen for each of the product's options, sorted (so that a combination has one spelling); empty without options. */
    optionValueIds: uuid('option_value_ids').array().notNull().default(sql`'{}'::uuid[]`),
    attributes: attributeValues('attributes'),
    staffAttributes: attributeValues('staff_attributes'),
    weight: weight('weight'),
    weightUnit: weightUnit('weight_unit').notNull().default('kg'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('product_variants_product_idx').on(t.productId, t.id),
    // Two variants of a product never pick the same values.
    uniqueIndex('product_variants_combination_key').on(t.productId, t.optionValueIds).where(sql`${t.optionValueIds} <> '{}'::uuid[]`),
    check('product_variants_compare_at_nonnegative', sql`${t.compareAtPriceMinor} >= 0`),
    check('product_variants_inventory_nonnegative', sql`${t.inventoryQuantity} >= 0`),
    check('product_variants_price_nonnegative', sql`${t.priceMinor} >= 0`),
  ],
)

export const productImages = pgTable(
  'product_images',
  {
    id: id(),
    productId: uuid('product_id')
      .notNull()
      .references(() => products.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    alt: text('alt'),
    position: integer('position').notNull().default(0),
    /** An uploaded image's original in the file storage (null for an image by URL). */
    storageKey: text('storage_key'),
    contentType: text('content_type'),
    sizeBytes: integer('size_bytes'),
    width: integer('width'),
    height: integer('height'),
    /** Smaller copies of an uploaded image: [{width, height, url, key}], narrowest first. */
    thumbnails: jsonb('thumbnails').$type<ImageThumbnail[]>().notNull().default([]),
    createdAt: createdAt(),
  },
  (t) => [index('product_images_product_idx').on(t.productId, t.position, t.id)],
)

export interface ImageThumbnail {
  width: number
  height: number
  url: string
  key: string
}

/**
 * Translated content (docs/translations.md): one row per resource and BCP 47 locale (canonical
 * form), its fields null where the original shows. Reads overlay them in the same statement.
 */
export const productTranslations = pgTable(
  'product_translations',
  {
    productId: uuid('product_id')
      .notNull()
      .references(() => products.id, { onDelete: 'cascade' }),
    locale: text('locale').notNull(),
    title: text('title'),
    description: text('description'),
    /** Text attributes (text, rich_text) by key. */
    attributes: jsonb('attributes').$type<Record<string, string>>(),
    /** Option names and values by their id. */
    options: jsonb('options').$type<Record<string, string>>(),
    /** The translation's words, for `?search=` in its locale (GIN index below). */
    searchVector: tsvector('search_vector')
      .notNull()
      .generatedAlwaysAs(sql`to_tsvector('simple'::regconfig, coalesce(title, '') || ' ' || coalesce(description, ''))`),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'product_translations_pkey', columns: [t.productId, t.locale] }),
    index('product_translations_search_idx').using('gin', t.searchVector),
    check('product_translations_not_empty', sql`${t.title} is not null or ${t.description} is not null or ${t.attributes} is not null or ${t.options} is not null`),
  ],
)

export const variantTranslations = pgTable(
  'variant_translations',
  {
    variantId: uuid('variant_id')
      .notNull()
      .references(() => productVariants.id, { onDelete: 'cascade' }),
    locale: text('locale').notNull(),
    title: text('title').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ name: 'variant_translations_pkey', columns: [t.variantId, t.locale] })],
)

export const categoryTranslations = pgTable(
  'category_translations',
  {
    categoryId: uuid('category_id')
      .notNull()
      .references(() => categories.id, { onDelete: 'cascade' }),
    locale: text('locale').notNull(),
    name: text('name'),
    description: text('description'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ name: 'category_translations_pkey', columns: [t.categoryId, t.locale] }),
    check('category_translations_not_empty', sql`${t.name} is not null or ${t.description} is not null`),
  ],
)

/**
 * A file a client was given an address to upload to (POST /products/:id/images/uploads), until
 * it becomes an image or expires. `token_hash` is the SHA-256 of the secret a PUT to the API
 * (disk storage) must carry.
 */
export const uploads = pgTable(
  'uploads',
  {
    id: id(),
    productId: uuid('product_id')
      .notNull()
      .references(() => products.id, { onDelete: 'cascade' }),
    storageKey: text('storage_key').notNull(),
    contentType: text('content_type').notNull(),
    tokenHash: text('token_hash').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [index('uploads_expires_idx').on(t.expiresAt)],
)

/**
 * One row whose `revision` a trigger bumps on every write that can change which products a
 * list shows (see the catalog_revision migration). List totals are cached per revision.
 */
export const catalogRevision = pgTable('catalog_revision', {
  singleton: boolean('singleton').primaryKey().default(true),
  revision: bigint('revision', { mode: 'number' }).notNull().default(0),
})
