/**
 * The columns of each CSV file (docs/csv.md), in the order exports write them. Imports read the
 * same names in any order; a products file also has a column per attribute definition
 * (`attribute:<key>`, `variant_attribute:<key>`), per currency with base prices (`product_price:EUR`,
 * `variant_price:EUR`, and their compare-at amounts `product_compare_at_price:EUR`,
 * `variant_compare_at_price:EUR`) and per stock location (`stock:<name>`).
 */
export const PRODUCT_COLUMNS = [
  'product_id',
  'product_slug',
  'product_title',
  'product_description',
  'product_sku',
  'product_currency',
  'product_price',
  'product_weight',
  'product_weight_unit',
  'product_active',
  'product_image_url',
  'product_categories',
  'product_status',
  'product_published_at',
  'product_compare_at_price',
  'product_tags',
  'product_type',
  'product_vendor',
  'product_barcode',
  'product_length',
  'product_width',
  'product_height',
  'product_dimension_unit',
  'product_hs_code',
  'product_country_of_origin',
  'product_seo_title',
  'product_seo_description',
  'product_options',
  'variant_id',
  'variant_title',
  'variant_sku',
  'variant_price',
  'variant_compare_at_price',
  'variant_barcode',
  'variant_options',
  'variant_weight',
  'variant_weight_unit',
] as const

export const productPriceColumn = (currency: string) => `product_price:${currency}`
export const variantPriceColumn = (currency: string) => `variant_price:${currency}`
export const productCompareAtColumn = (currency: string) => `product_compare_at_price:${currency}`
export const variantCompareAtColumn = (currency: string) => `variant_compare_at_price:${currency}`
/** A product attribute's column, or a variant attribute's. */
export const attributeColumn = (owner: 'product' | 'variant', key: string) => (owner === 'product' ? `attribute:${key}` : `variant_attribute:${key}`)
export const stockColumn = (location: string) => `stock:${location}`

/** `created_at` is written by exports and ignored by imports. */
export const CUSTOMER_COLUMNS = ['customer_id', 'email', 'first_name', 'last_name', 'phone', 'groups', 'created_at'] as const

const ADDRESS_FIELDS = ['first_name', 'last_name', 'company', 'line1', 'line2', 'city', 'region', 'postal_code', 'country', 'phone'] as const
export const SHIPPING_ADDRESS_FIELDS = ADDRESS_FIELDS

export const ORDER_COLUMNS = [
  'order_id',
  'order_number',
  'created_at',
  'status',
  'payment_status',
  'fulfillment_status',
  'customer_id',
  'email',
  'currency',
  'subtotal',
  'discount',
  'tax',
  'shipping',
  'total',
  'paid',
  'refunded',
  'coupons',
  'shipping_method',
  ...ADDRESS_FIELDS.map((field) => `shipping_${field}` as const),
  'line_id',
  'line_product_id',
  'line_variant_id',
  'line_sku',
  'line_title',
  'line_variant_title',
  'line_quantity',
  'line_unit_price',
  'line_discount',
  'line_tax',
  'line_total',
  'line_fulfilled_quantity',
  'line_returned_quantity',
  'line_canceled_quantity',
] as const
