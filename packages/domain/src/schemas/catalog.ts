import { Type, type Static } from 'typebox'
import { WEIGHT_UNITS } from '../constants.js'
import { LocaleQuery } from './translations.js'
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
  inventory_quantity: Type.Integer(),
  options: Type.Record(Type.String(), Type.String()),
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
    inventory_quantity: Type.Optional(Quantity),
    options: Type.Optional(
      Type.Record(Type.String({ minLength: 1, maxLength: 100 }), Type.String({ maxLength: 200 }), { maxProperties: 20 }),
    ),
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
  currency: Type.String(),
  inventory_quantity: Type.Integer(),
  weight: Nullable(Type.Number()),
  weight_unit: WeightUnit,
  is_active: Type.Boolean(),
  image_url: Nullable(Type.String()),
  categories: Type.Array(CategoryRef),
  created_at: Timestamp,
  updated_at: Timestamp,
}
export const ProductListItem = Type.Object(productFields, {
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
    currency: Type.Optional(Currency),
    inventory_quantity: Type.Optional(Quantity),
    weight: Type.Optional(Nullable(Weight)),
    weight_unit: Type.Optional(WeightUnit),
    is_active: Type.Optional(Type.Boolean()),
    image_url: Type.Optional(Nullable(Url)),
    category_ids: Type.Optional(Type.Array(Uuid, { maxItems: 50, uniqueItems: true })),
  },
  { additionalProperties: false, title: 'CreateProductRequest' },
)
export type CreateProduct = Static<typeof CreateProduct>
export const UpdateProduct = Type.Partial(CreateProduct, { additionalProperties: false, minProperties: 1, title: 'UpdateProductRequest' })
export type UpdateProduct = Static<typeof UpdateProduct>

export const ListProductsQuery = Type.Object({
  ...PaginationQuery.properties,
  category: Type.Optional(Type.String({ maxLength: 200, description: 'category slug' })),
  search: Type.Optional(
    Type.String({ maxLength: 200, description: 'words matched against title and description, in the original text and in the locale shown' }),
  ),
  locale: LocaleQuery.properties.locale,
  include_inactive: Type.Optional(Type.Boolean({ description: 'admins only: include soft-deleted products' })),
})
export type ListProductsQuery = Static<typeof ListProductsQuery>
export const ProductList = Type.Object(
  { products: Type.Array(ProductListItem), meta: PageOrCursorMeta },
  { title: 'ProductList', description: 'A page of products' },
)
export type ProductList = Static<typeof ProductList>
