import { Type, type Static } from 'typebox'
import { DIMENSION_UNITS, PRODUCT_SORTS, PRODUCT_STATUSES, WEIGHT_UNITS } from '../constants.js'
import { LocaleQuery } from './translations.js'
import { AttributesInput, AttributesOutput } from './attributes.js'
import { Amount, Currency, Nullable, PageOrCursorMeta, PaginationQuery, Timestamp, Uuid } from './common.js'

const Slug = Type.String({ minLength: 1, maxLength: 200, pattern: '^[a-z0-9]+(?:-[a-z0-9]+)*$' })
const Title = Type.String({ minLength: 1, maxLength: 500 })
const Description = Type.String({ maxLength: 20000 })
const Sku = Type.String({ minLength: 1, maxLength: 100 })
const Quantity = Type.Integer({ minimum: 0, maximum: 2_147_483_647 })
const Weight = Type.Number({ minimum: 0, maximum: 1_000_000_000 })
export const WeightUnit = Type.Enum(WEIGHT_UNITS)
export type WeightUnit = Static<typeof WeightUnit>
const Url = Type.String({ format: 'uri', maxLength: 2048 })
export const DimensionUnit = Type.Enum(DIMENSION_UNITS)
export type DimensionUnit = Static<typeof DimensionUnit>
export const ProductStatus = Type.Enum(PRODUCT_STATUSES, {
  description: '`draft`: seen by staff only; `active`: public from `published_at` on; `archived`: no longer sold (the soft delete)',
})
export type ProductStatus = Static<typeof ProductStatus>
const Length = Type.Number({ minimum: 0, maximum: 1_000_000 })
const Barcode = Type.String({ pattern: '^[0-9]{8,14}$', maxLength: 14, description: 'A GTIN-8, -12, -13 or -14 with a valid check digit' })
const CompareAtPrice = Nullable(Type.Number({ description: 'The price it was, shown crossed out beside `price`; never charged' }))
const OnSale = Type.Boolean({ description: 'True when `compare_at_price` is above the price' })
const OptionName = Type.String({ minLength: 1, maxLength: 100, pattern: '^[^:]+$', description: 'No colon: filters write `option=<name>:<value>`' })
const OptionValueText = Type.String({ minLength: 1, maxLength: 200 })
const SwatchColor = Type.String({ pattern: '^#[0-9a-fA-F]{6}$', maxLength: 7, description: 'A colour swatch, #rrggbb' })

export const ProductOptionValue = Type.Object(
  {
    id: Uuid,
    value: Type.String(),
    swatch_color: Nullable(Type.String({ description: 'A colour swatch, #rrggbb' })),
    swatch_image_url: Nullable(Type.String({ description: 'An image swatch' })),
  },
  { title: 'ProductOptionValue', description: "One of an option's values, in display order" },
)
export const ProductOption = Type.Object(
  { id: Uuid, name: Type.String(), values: Type.Array(ProductOptionValue) },
  { title: 'ProductOption', description: 'An option its variants choose a value of (Size, Colour), in display order' },
)
export type ProductOption = Static<typeof ProductOption>
export const ProductOptionValueInput = Type.Object(
  {
    id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'An existing value to keep (its text may change: a rename); else matched by its text' })),
    value: OptionValueText,
    swatch_color: Type.Optional(Nullable(SwatchColor)),
    swatch_image_url: Type.Optional(Nullable(Url)),
  },
  { additionalProperties: false, title: 'ProductOptionValueInput' },
)
export const ProductOptionInput = Type.Object(
  {
    id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'An existing option to keep (its name may change: a rename); else matched by its name' })),
    name: OptionName,
    values: Type.Array(ProductOptionValueInput, { minItems: 1, maxItems: 100 }),
    default_value: Type.Optional(
      Type.String({ maxLength: 200, description: 'A new option on a product that has variants: the value they take (one of `values`)' }),
    ),
  },
  { additionalProperties: false, title: 'ProductOptionInput' },
)
export type ProductOptionInput = Static<typeof ProductOptionInput>
const ProductOptionsInput = Type.Array(ProductOptionInput, {
  maxItems: 10,
  description:
    "The product's options in display order, each with its values in order: the whole list. An option or value is kept when named by " +
    '`id` (renamed if its text differs) or, without one, by the same text; the others are added. One left out is removed: a value ' +
    'still chosen by a variant is 409 naming them, an option whose removal would give two variants the same values is 409 naming them ' +
    '(docs/catalog.md, "Options").',
})

export const Category = Type.Object({
  id: Uuid,
  name: Type.String(),
  slug: Type.String(),
  description: Nullable(Type.String()),
  parent_id: Nullable(Uuid),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { title: 'Category', description: 'A product category; categories nest through parent_id' })
export type Category = Static<typeof Category>
export const CategoryRef = Type.Object(
  { id: Uuid, name: Type.String(), slug: Type.String() },
  { title: 'CategoryRef', description: 'A category a product is in' },
)
export type CategoryRef = Static<typeof CategoryRef>

export const CreateCategory = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    slug: Type.Optional(Slug),
    description: Type.Optional(Nullable(Description)),
    parent_id: Type.Optional(Nullable(Uuid)),
  },
  { additionalProperties: false, title: 'CreateCategoryRequest' },
)
export type CreateCategory = Static<typeof CreateCategory>
export const UpdateCategory = Type.Partial(CreateCategory, { additionalProperties: false, minProperties: 1, title: 'UpdateCategoryRequest' })
export type UpdateCategory = Static<typeof UpdateCategory>
export const CategoryList = Type.Object(
  { categories: Type.Array(Category), meta: PageOrCursorMeta },
  { title: 'CategoryList', description: 'A page of categories' },
)
/** A page of a list whose items have translated text (categories, a product's variants). */
export const LocalizedPaginationQuery = Type.Object({ ...PaginationQuery.properties, ...LocaleQuery.properties })

export const Variant = Type.Object({
  id: Uuid,
  product_id: Uuid,
  title: Type.String(),
  sku: Nullable(Type.String()),
  price: Nullable(Type.Number({ description: 'null: the product price applies' })),
  compare_at_price: Nullable(Type.Number({ description: "The price it was, shown crossed out; null: the product's applies" })),
  on_sale: Type.Boolean({ description: 'True when the compare-at price that applies is above the price that applies' }),
  barcode: Nullable(Type.String()),
  inventory_quantity: Type.Integer(),
  options: Type.Record(Type.String(), Type.String(), { description: "Option name → the value this variant chose (free-form on a product without options)" }),
  attributes: AttributesOutput,
  weight: Nullable(Type.Number()),
  weight_unit: WeightUnit,
  created_at: Timestamp,
  updated_at: Timestamp,
}, { title: 'Variant', description: 'A variant of a product (a size, a colour) with its own SKU, stock and, optionally, price' })
export type Variant = Static<typeof Variant>
export const CreateVariant = Type.Object(
  {
    title: Title,
    sku: Type.Optional(Nullable(Sku)),
    price: Type.Optional(Nullable(Amount)),
    compare_at_price: Type.Optional(Nullable(Amount)),
    barcode: Type.Optional(Nullable(Barcode)),
    inventory_quantity: Type.Optional(Quantity),
    options: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 100 }), Type.String({ maxLength: 200 }), {
        maxProperties: 20,
        description: "Option name → value. On a product with options: one of each option's values, for every option; otherwise free-form",
      }),
    ),
    attributes: Type.Optional(AttributesInput),
    weight: Type.Optional(Nullable(Weight)),
    weight_unit: Type.Optional(WeightUnit),
  },
  { additionalProperties: false, title: 'CreateVariantRequest' },
)
export type CreateVariant = Static<typeof CreateVariant>
export const UpdateVariant = Type.Partial(CreateVariant, { additionalProperties: false, minProperties: 1, title: 'UpdateVariantRequest' })
export type UpdateVariant = Static<typeof UpdateVariant>
export const VariantParams = Type.Object({ id: Uuid, variant_id: Uuid })
export const VariantList = Type.Object(
  { variants: Type.Array(Variant), meta: PageOrCursorMeta },
  { title: 'VariantList', description: "A page of a product's variants" },
)

export const ImageThumbnail = Type.Object(
  { width: Type.Integer(), height: Type.Integer(), url: Type.String() },
  { title: 'ImageThumbnail', description: 'A smaller WebP copy of an uploaded image' },
)
export const Image = Type.Object(
  {
    id: Uuid,
    product_id: Uuid,
    url: Type.String(),
    alt: Nullable(Type.String()),
    position: Type.Integer(),
    content_type: Nullable(Type.String({ description: "An uploaded image's type, found from its content (null for an image by URL)" })),
    size: Nullable(Type.Integer({ description: "An uploaded image's size in bytes (null for an image by URL)" })),
    width: Nullable(Type.Integer({ description: 'In pixels, upright (null for an image by URL)' })),
    height: Nullable(Type.Integer({ description: 'In pixels, upright (null for an image by URL)' })),
    thumbnails: Type.Array(ImageThumbnail, {
      description: 'For an uploaded image, WebP copies 160, 480 and 1024 pixels wide, narrowest first (only those narrower than the image); none for an image by URL',
    }),
    created_at: Timestamp,
  },
  { title: 'Image', description: 'An image of a product, uploaded or by URL, in display order (position)' },
)
export type Image = Static<typeof Image>
export const CreateImage = Type.Object(
  {
    url: Type.Optional(Url),
    upload_id: Type.Optional(Type.String({ format: 'uuid', maxLength: 36, description: 'An upload made with POST /products/{id}/images/uploads and sent to its address' })),
    alt: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    position: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
  },
  {
    additionalProperties: false,
    title: 'CreateImageRequest',
    description: 'An image by `url`, or a file uploaded to a presigned address (`upload_id`): exactly one of the two. A file can also be sent directly as multipart/form-data.',
  },
)
export type CreateImage = Static<typeof CreateImage>
export const UpdateImage = Type.Object(
  {
    alt: Type.Optional(Nullable(Type.String({ maxLength: 500 }))),
    position: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
  },
  { additionalProperties: false, minProperties: 1, title: 'UpdateImageRequest', description: "An image's alt text or place in the display order (its file or URL stays)" },
)
export type UpdateImage = Static<typeof UpdateImage>
/** The multipart/form-data form of POST /products/{id}/images (documented; the handler reads it). */
export const ImageFileForm = Type.Object(
  {
    file: Type.String({ format: 'binary', description: 'The image file: JPEG, PNG, WebP, GIF or AVIF, found from its content' }),
    alt: Type.Optional(Type.String({ maxLength: 500 })),
    position: Type.Optional(Type.Integer({ minimum: 0, maximum: 10_000 })),
  },
  { additionalProperties: false, title: 'ImageFileForm' },
)
/** The image types an upload may be, found from the file's content. */
export const IMAGE_CONTENT_TYPES = ['image/jpeg', 'image/png', 'image/webp', 'image/gif', 'image/avif'] as const
export const CreateUpload = Type.Object(
  { content_type: Type.Enum([...IMAGE_CONTENT_TYPES], { description: 'The type of the file that will be sent' }) },
  { additionalProperties: false, title: 'CreateUploadRequest' },
)
export type CreateUpload = Static<typeof CreateUpload>
export const Upload = Type.Object(
  {
    id: Uuid,
    url: Type.String({ description: 'Where to send the file: the storage itself (S3) or the API (disk)' }),
    method: Type.Literal('PUT'),
    headers: Type.Record(Type.String(), Type.String(), { description: 'Headers the PUT must carry exactly as given' }),
    max_bytes: Type.Integer({ description: 'The largest file accepted' }),
    expires_at: Timestamp,
  },
  { title: 'Upload', description: 'An address to send one file to, then to name as `upload_id` in POST /products/{id}/images' },
)
export type Upload = Static<typeof Upload>
export const ImageParams = Type.Object({ id: Uuid, image_id: Uuid })
export const ImageList = Type.Object(
  { images: Type.Array(Image), meta: PageOrCursorMeta },
  { title: 'ImageList', description: "A page of a product's images, in display order" },
)

const productFields = {
  id: Uuid,
  title: Type.String(),
  slug: Type.String(),
  description: Nullable(Type.String()),
  sku: Nullable(Type.String()),
  price: Type.Number(),
  compare_at_price: CompareAtPrice,
  on_sale: OnSale,
  currency: Type.String(),
  inventory_quantity: Type.Integer(),
  weight: Nullable(Type.Number()),
  weight_unit: WeightUnit,
  status: ProductStatus,
  published_at: Nullable({ ...Timestamp, description: 'When it went or goes public (an active product); a later moment schedules it' }),
  is_active: Type.Boolean({ description: 'Public now: status active and published_at reached' }),
  tags: Type.Array(Type.String()),
  product_type: Nullable(Type.String()),
  vendor: Nullable(Type.String()),
  barcode: Nullable(Type.String()),
  length: Nullable(Type.Number()),
  width: Nullable(Type.Number()),
  height: Nullable(Type.Number()),
  dimension_unit: DimensionUnit,
  hs_code: Nullable(Type.String({ description: 'Harmonized System code, digits only' })),
  country_of_origin: Nullable(Type.String({ description: 'ISO 3166-1 alpha-2' })),
  seo_title: Nullable(Type.String()),
  seo_description: Nullable(Type.String()),
  options: Type.Array(ProductOption),
  attributes: AttributesOutput,
  image_url: Nullable(Type.String()),
  categories: Type.Array(CategoryRef),
  created_at: Timestamp,
  updated_at: Timestamp,
}
export const MarketPrice = Type.Object(
  {
    currency: Type.String(),
    amount: Type.Number({ description: 'What the reader pays for one unit of its cheapest variant: base price, price lists' }),
    on_sale: Type.Boolean(),
  },
  { title: 'MarketPrice', description: 'The price in the market a list was asked for (`currency`)' },
)
export const ProductListItem = Type.Object({ ...productFields, market_price: Type.Optional(MarketPrice) }, {
  title: 'ProductListItem',
  description: 'A product as lists show it: without its variants and images',
})
export type ProductListItem = Static<typeof ProductListItem>
export const Product = Type.Object(
  { ...productFields, variants: Type.Array(Variant), images: Type.Array(Image) },
  { title: 'Product', description: 'A product with its variants, images and categories' },
)
export type Product = Static<typeof Product>

export const CreateProduct = Type.Object(
  {
    title: Title,
    slug: Type.Optional(Slug),
    description: Type.Optional(Nullable(Description)),
    sku: Type.Optional(Nullable(Sku)),
    price: Type.Optional(Amount),
    compare_at_price: Type.Optional(Nullable(Amount)),
    currency: Type.Optional(Currency),
    inventory_quantity: Type.Optional(Quantity),
    weight: Type.Optional(Nullable(Weight)),
    weight_unit: Type.Optional(WeightUnit),
    status: Type.Optional(ProductStatus),
    published_at: Type.Optional(Nullable({ ...Timestamp, description: 'For an active product: when it goes public (a later moment schedules it; null: now)' })),
    is_active: Type.Optional(Type.Boolean({ description: 'The field before `status`: true sets status active (public now), false archived. Not with `status`' })),
    tags: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 250, description: 'Kept trimmed, one per spelling whatever its case' })),
    product_type: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
    vendor: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
    barcode: Type.Optional(Nullable(Barcode)),
    length: Type.Optional(Nullable(Length)),
    width: Type.Optional(Nullable(Length)),
    height: Type.Optional(Nullable(Length)),
    dimension_unit: Type.Optional(DimensionUnit),
    hs_code: Type.Optional(Nullable(Type.String({ maxLength: 20, description: 'Harmonized System code: 6 to 10 digits, dots and spaces allowed between them' }))),
    country_of_origin: Type.Optional(Nullable(Type.String({ pattern: '^[A-Z]{2}$', maxLength: 2, description: 'ISO 3166-1 alpha-2' }))),
    seo_title: Type.Optional(Nullable(Type.String({ maxLength: 255 }))),
    seo_description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
    options: Type.Optional(ProductOptionsInput),
    attributes: Type.Optional(AttributesInput),
    image_url: Type.Optional(Nullable(Url)),
    category_ids: Type.Optional(Type.Array(Uuid, { maxItems: 50, uniqueItems: true })),
  },
  { additionalProperties: false, title: 'CreateProductRequest' },
)
export type CreateProduct = Static<typeof CreateProduct>
export const UpdateProduct = Type.Partial(CreateProduct, { additionalProperties: false, minProperties: 1, title: 'UpdateProductRequest' })
export type UpdateProduct = Static<typeof UpdateProduct>

const FilterValues = (description: string, pattern?: string) =>
  Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 300, ...(pattern ? { pattern } : {}) }), { maxItems: 50, description }))

export const ListProductsQuery = Type.Object({
  ...PaginationQuery.properties,
  category: Type.Optional(Type.String({ maxLength: 200, description: 'category slug: its products and those of the categories under it' })),
  collection: Type.Optional(Type.String({ maxLength: 200, description: "collection slug: its products (in the collection's own order unless `sort` says another)" })),
  sort: Type.Optional(
    Type.Enum(PRODUCT_SORTS, {
      description:
        'newest (the default; relevance with `search`), title, price_asc, price_desc (the price the reader pays), best_selling ' +
        '(units sold in the last 30 days), manual (a collection\'s own order; the default with `collection`), relevance (with `search`)',
    }),
  ),
  tag: FilterValues('Products with any of these tags (repeat the parameter: `tag=summer&tag=sale`), case aside'),
  type: FilterValues('Products of any of these product types'),
  vendor: FilterValues('Products of any of these vendors'),
  option: FilterValues('`<option>:<value>` (`option=Size:M&option=Size:L&option=Colour:Blue`): a variant with any of the values of each option named', '^[^:]+:.+$'),
  attr: FilterValues(
    '`<key>:<value>`, or a range `<key>:<min>..<max>` (either end may be left out) for number and date attributes: filterable attributes (GET /attributes)',
    '^[a-z][a-z0-9_]*:.+$',
  ),
  price_min: Type.Optional(Type.Number({ minimum: 0, description: 'The price the reader pays at least this (in `currency`, else in each product’s own)' })),
  price_max: Type.Optional(Type.Number({ minimum: 0, description: 'The price the reader pays at most this' })),
  available: Type.Optional(Type.Boolean({ description: 'true: sellable now at an active location; false: not' })),
  on_sale: Type.Optional(Type.Boolean({ description: 'true: priced below its compare-at price (in `currency`, else its own)' })),
  currency: Type.Optional({
    ...Currency,
    description: "The market: prices read in this currency (base prices and the reader's price lists; products not sold in it are left out), and each item's `market_price`",
  }),
  facets: Type.Optional(Type.Boolean({ description: 'true: the answer has `facets`, the counts of every filter’s values and the price range (page mode only)' })),
  search: Type.Optional(
    Type.String({ maxLength: 200, description: 'words matched against title and description, in the original text and in the locale shown' }),
  ),
  locale: LocaleQuery.properties.locale,
  include_inactive: Type.Optional(Type.Boolean({ description: 'admins only: include drafts, scheduled and archived products' })),
  status: Type.Optional(
    Type.Enum([...PRODUCT_STATUSES, 'scheduled'], {
      description: 'admins only: products of this status (scheduled: active, its published_at still to come); implies include_inactive',
    }),
  ),
})
export type ListProductsQuery = Static<typeof ListProductsQuery>
export const SlugParams = Type.Object({ slug: Type.String({ minLength: 1, maxLength: 200 }) })

export const GenerateVariants = Type.Object(
  {
    price: Type.Optional(Nullable(Amount)),
    compare_at_price: Type.Optional(Nullable(Amount)),
    inventory_quantity: Type.Optional(Quantity),
    variants: Type.Optional(
      Type.Array(
        Type.Object(
          {
            options: Type.Record(Type.String({ minLength: 1, maxLength: 100 }), Type.String({ maxLength: 200 }), { maxProperties: 20 }),
            sku: Type.Optional(Nullable(Sku)),
            price: Type.Optional(Nullable(Amount)),
            compare_at_price: Type.Optional(Nullable(Amount)),
            inventory_quantity: Type.Optional(Quantity),
            barcode: Type.Optional(Nullable(Barcode)),
          },
          { additionalProperties: false },
        ),
        { maxItems: 1000, description: "What differs for some combinations (by their options): the rest take the defaults above" },
      ),
    ),
  },
  {
    additionalProperties: false,
    title: 'GenerateVariantsRequest',
    description: 'Makes a variant for every combination of the option values that no variant has yet (at most 1000 in all)',
  },
)
export type GenerateVariants = Static<typeof GenerateVariants>
export const GeneratedVariants = Type.Object(
  { variants: Type.Array(Variant, { description: 'The variants made, in the order of the options and their values' }) },
  { title: 'GeneratedVariants', description: 'The variants a generation made (none when every combination had one)' },
)

const FacetValue = Type.Object(
  {
    value: Type.String({ description: 'What a filter names (lower case)' }),
    label: Type.String({ description: 'As the products write it' }),
    count: Type.Integer({ description: 'Products with it, given every other filter (not this facet’s own)' }),
    selected: Type.Boolean(),
  },
  { title: 'FacetValue' },
)
const PriceRange = Type.Object(
  { min: Type.Number(), max: Type.Number() },
  { title: 'PriceRange', description: 'The prices of the result (major units of the market, else of each product), given every filter but the price' },
)
const AttributeRange = Type.Object(
  { min: Type.Number(), max: Type.Number() },
  { title: 'AttributeRange', description: 'The values of a number or date attribute (dates as yyyymmdd), given every filter but this one' },
)
export const ProductFacets = Type.Object(
  {
    price: Nullable(PriceRange),
    available: Type.Integer({ description: 'Sellable now, given every filter but availability' }),
    on_sale: Type.Integer({ description: 'On sale, given every filter but on_sale' }),
    tags: Type.Array(FacetValue),
    types: Type.Array(FacetValue),
    vendors: Type.Array(FacetValue),
    options: Type.Array(Type.Object({ name: Type.String(), label: Type.String(), values: Type.Array(FacetValue) }, { title: 'OptionFacet' })),
    attributes: Type.Array(
      Type.Object(
        {
          key: Type.String(),
          label: Type.String({ description: "The definition's name" }),
          values: Type.Array(FacetValue),
          range: Nullable(AttributeRange),
        },
        { title: 'AttributeFacet' },
      ),
    ),
  },
  { title: 'ProductFacets', description: 'Exact counts per filter value (disjunctive: each ignores its own filter) and the ranges of the result' },
)
export type ProductFacets = Static<typeof ProductFacets>

export const ProductList = Type.Object(
  { products: Type.Array(ProductListItem), meta: PageOrCursorMeta, facets: Type.Optional(ProductFacets) },
  { title: 'ProductList', description: 'A page of products' },
)
export type ProductList = Static<typeof ProductList>
