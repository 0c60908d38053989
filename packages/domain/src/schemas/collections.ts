/** Collections of products, manual or automatic (docs/catalog.md, "Collections"). */
import { Type, type Static } from 'typebox'
import { COLLECTION_KINDS, COLLECTION_MATCHES, COLLECTION_RULE_FIELDS, COLLECTION_RULE_OPERATORS, COLLECTION_SORTS } from '../constants.js'
import { Currency, Nullable, PageOrCursorMeta, PaginationQuery, Timestamp, Uuid } from './common.js'
import { LocaleQuery } from './translations.js'

export const CollectionRule = Type.Object(
  {
    field: Type.Enum(COLLECTION_RULE_FIELDS),
    operator: Type.Enum(COLLECTION_RULE_OPERATORS),
    name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 100, description: 'attribute: its key; option: its name' }))),
    value: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 300, description: 'What it compares with (price: a decimal in `currency`; dates YYYY-MM-DD)' }))),
    currency: Type.Optional(Nullable({ ...Currency, description: 'price: the currency of `value`' })),
  },
  {
    additionalProperties: false,
    title: 'CollectionRule',
    description:
      'tag, type, vendor, option: equals / not_equals (case aside); title: contains / equals / not_equals; attribute: equals / not_equals, ' +
      'and greater_than / less_than for numbers and dates; price: greater_than / less_than in a currency; stock: in_stock / out_of_stock; on_sale: is_true / is_false',
  },
)
export type CollectionRule = Static<typeof CollectionRule>

export const Collection = Type.Object(
  {
    id: Uuid,
    title: Type.String(),
    slug: Type.String(),
    description: Nullable(Type.String()),
    image_url: Nullable(Type.String()),
    kind: Type.Enum(COLLECTION_KINDS),
    match: Type.Enum(COLLECTION_MATCHES, { description: 'Automatic: every rule (all) or any' }),
    sort: Type.Enum(COLLECTION_SORTS, { description: 'The order of its products when a list asks for none' }),
    published: Type.Boolean({ description: 'Shown to the public' }),
    rules: Type.Array(CollectionRule),
    product_count: Type.Integer({ description: 'Its products now (public or not)' }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Collection', description: 'Products gathered by hand (manual) or by rules kept current as products change (automatic)' },
)
export type Collection = Static<typeof Collection>

const Slug = Type.String({ minLength: 1, maxLength: 200, pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*$' })
const collectionFields = {
  title: Type.String({ minLength: 1, maxLength: 500 }),
  slug: Type.Optional(Slug),
  description: Type.Optional(Nullable(Type.String({ maxLength: 20000 }))),
  image_url: Type.Optional(Nullable(Type.String({ format: 'uri', maxLength: 2048 }))),
  match: Type.Optional(Type.Enum(COLLECTION_MATCHES)),
  sort: Type.Optional(Type.Enum(COLLECTION_SORTS)),
  published: Type.Optional(Type.Boolean()),
  rules: Type.Optional(Type.Array(CollectionRule, { maxItems: 50, description: 'Automatic collections: the whole list' })),
  product_ids: Type.Optional(Type.Array(Uuid, { maxItems: 5000, uniqueItems: true, description: 'Manual collections: its products in order, the whole list' })),
}
export const CreateCollection = Type.Object(
  { ...collectionFields, kind: Type.Enum(COLLECTION_KINDS) },
  { additionalProperties: false, title: 'CreateCollectionRequest' },
)
export type CreateCollection = Static<typeof CreateCollection>
export const UpdateCollection = Type.Partial(Type.Object(collectionFields), {
  additionalProperties: false,
  minProperties: 1,
  title: 'UpdateCollectionRequest',
  description: 'Its kind stays',
})
export type UpdateCollection = Static<typeof UpdateCollection>
export const CollectionList = Type.Object(
  { collections: Type.Array(Collection), meta: PageOrCursorMeta },
  { title: 'CollectionList', description: 'Collections, newest first' },
)
export const ListCollectionsQuery = Type.Object({ ...PaginationQuery.properties, ...LocaleQuery.properties })
export const PreviewCollection = Type.Object(
  { match: Type.Optional(Type.Enum(COLLECTION_MATCHES)), rules: Type.Array(CollectionRule, { minItems: 1, maxItems: 50 }) },
  { additionalProperties: false, title: 'PreviewCollectionRequest' },
)
export type PreviewCollection = Static<typeof PreviewCollection>
export const CollectionPreview = Type.Object(
  {
    count: Type.Integer({ description: 'Products the rules match now' }),
    products: Type.Array(Type.Object({ id: Uuid, title: Type.String(), slug: Type.String() }), { description: 'The first 20, newest first' }),
  },
  { title: 'CollectionPreview', description: 'What an automatic collection with these rules would hold' },
)
export const CollectionTranslation = Type.Object(
  { locale: Type.String(), title: Nullable(Type.String()), description: Nullable(Type.String()), created_at: Timestamp, updated_at: Timestamp },
  { title: 'CollectionTranslation', description: "A collection's title and description in one locale" },
)
export const PutCollectionTranslation = Type.Object(
  { title: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 500 }))), description: Type.Optional(Nullable(Type.String({ maxLength: 20000 }))) },
  { additionalProperties: false, minProperties: 1, title: 'PutCollectionTranslationRequest' },
)
