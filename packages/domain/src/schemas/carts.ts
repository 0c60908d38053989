import { Type, type Static } from 'typebox'
import { CART_LINE_PROBLEMS, MAX_LINE_QUANTITY, PROMOTION_TYPES } from '../constants.js'
import { Address } from './addresses.js'
import { Currency, Nullable, Timestamp, Uuid } from './common.js'

const Quantity = Type.Integer({ minimum: 1, maximum: MAX_LINE_QUANTITY })
const Money = Type.Number({ description: 'Decimal amount in major units of the cart currency' })

export const CreateCart = Type.Object(
  { currency: Currency, email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })) },
  { additionalProperties: false, title: 'CreateCartRequest' },
)
export type CreateCart = Static<typeof CreateCart>

export const AddCartItem = Type.Object(
  { product_id: Uuid, quantity: Quantity, variant_id: Type.Optional(Nullable(Uuid)) },
  { additionalProperties: false, title: 'AddCartItemRequest' },
)
export type AddCartItem = Static<typeof AddCartItem>

export const UpdateCartItem = Type.Object({ quantity: Quantity }, { additionalProperties: false, title: 'UpdateCartItemRequest' })
export type UpdateCartItem = Static<typeof UpdateCartItem>

export const ApplyCoupon = Type.Object(
  { code: Type.String({ minLength: 1, maxLength: 64 }) },
  { additionalProperties: false, title: 'ApplyCouponRequest' },
)
export type ApplyCoupon = Static<typeof ApplyCoupon>

export const SetCartEmail = Type.Object(
  { email: Type.String({ format: 'email', maxLength: 254 }) },
  { additionalProperties: false, title: 'SetCartEmailRequest' },
)
export type SetCartEmail = Static<typeof SetCartEmail>

export const CartItemParams = Type.Object({ id: Uuid, item_id: Uuid })
export const CartCouponParams = Type.Object({ id: Uuid, coupon_id: Uuid })

export const CartItem = Type.Object({
  id: Uuid,
  product_id: Uuid,
  variant_id: Nullable(Uuid),
  title: Type.String(),
  variant_title: Nullable(Type.String()),
  sku: Nullable(Type.String()),
  image_url: Nullable(Type.String()),
  quantity: Type.Integer(),
  unit_price: Type.Number({ description: 'What one unit costs now: the lowest of its base price and the applicable sale prices (docs/pricing.md)' }),
  original_unit_price: Type.Number({ description: 'The base price of one unit in the cart’s currency, before price lists; above unit_price when on sale' }),
  price_list_id: Nullable(Type.String({ format: 'uuid', maxLength: 36, description: 'The price list that gave unit_price; null when the base price did' })),
  line_total: Type.Number({ description: 'unit_price × quantity' }),
  discount: Type.Number({ description: "This line's share of the promotions' discounts (coupons and automatic promotions)" }),
  tax: Type.Number({ description: 'Tax on the discounted line amount' }),
  available: Type.Boolean({
    description: 'false when the line cannot be bought now (`problem` says why); such a line counts 0 in the totals',
  }),
  problem: Nullable(
    Type.Object(
      {
        code: Type.Enum(CART_LINE_PROBLEMS),
        message: Type.String({ description: 'What is wrong and what the customer can do about it' }),
      },
      {
        title: 'CartItemProblem',
        description:
          'null on a line that can be bought. not_sold: the product was deactivated or deleted; other_currency: it has ' +
          "no price in the cart's currency (for this quantity) any more; total_too_large: with it the cart's total (or tax, or " +
          'shipping) would pass the most an amount can be (15 digits), as when its product is repriced after it ' +
          'was added: lower its quantity or remove it. Checkout completion refuses a cart with such a line (409).',
      },
    ),
  ),
}, { title: 'CartItem', description: 'A line of a cart: a product (or one of its variants), its quantity and what it costs now' })
export type CartItem = Static<typeof CartItem>

export const CartCoupon = Type.Object({
  id: Uuid,
  code: Type.String(),
  type: Type.Enum(PROMOTION_TYPES, { description: 'A code may name any promotion: buy_x_get_y as well as the coupon types' }),
  value: Nullable(Type.Number({ description: 'Percent for percentage and buy_x_get_y, an amount for fixed_amount' })),
  discount: Type.Number({ description: 'What this coupon takes off now (for free_shipping: the shipping waived)' }),
  applicable: Type.Boolean({ description: 'false when the cart no longer qualifies (expired, below min_subtotal, …)' }),
  reason: Nullable(Type.String({ description: 'Why the coupon does not apply now' })),
}, { title: 'CartCoupon', description: 'A coupon applied to a cart, and what it takes off now' })
export type CartCoupon = Static<typeof CartCoupon>

export const CartPromotion = Type.Object({
  id: Uuid,
  code: Nullable(Type.String({ description: 'null for an automatic promotion' })),
  name: Type.String(),
  type: Type.Enum(PROMOTION_TYPES),
  discount: Type.Number({ description: 'What it takes off the goods now' }),
  shipping_discount: Type.Number({ description: 'What it takes off the shipping now (free_shipping)' }),
  lines: Type.Array(
    Type.Object(
      { item_id: Uuid, discount: Type.Number() },
      { title: 'CartPromotionLine', description: 'What the promotion takes off one cart line' },
    ),
  ),
}, { title: 'CartPromotion', description: 'A promotion that applies to the cart now (by code or automatic): how much, on which lines' })
export type CartPromotion = Static<typeof CartPromotion>

export const Totals = Type.Object({
  subtotal: Money,
  discount: Money,
  tax: Money,
  shipping: Money,
  total: Type.Number({ description: 'subtotal − discount + tax + shipping' }),
}, { title: 'Totals', description: 'What a cart or an order costs, in major units of its currency; the lines add up to these exactly' })
export type Totals = Static<typeof Totals>

export const Cart = Type.Object({
  id: Uuid,
  cart_id: Uuid,
  currency: Type.String(),
  customer_id: Nullable(Uuid),
  email: Nullable(Type.String()),
  items: Type.Array(CartItem),
  coupons: Type.Array(CartCoupon),
  promotions: Type.Array(CartPromotion, {
    description: 'Every promotion applied now, in the order they apply; the lines’ discounts add up to totals.discount',
  }),
  shipping_address: Nullable(Address),
  shipping_method_id: Nullable(Uuid),
  totals: Totals,
  completed_at: Nullable(Timestamp),
  created_at: Timestamp,
  updated_at: Timestamp,
}, { title: 'Cart', description: 'A cart with its lines, coupons and totals, priced now' })
export type Cart = Static<typeof Cart>

export const ShippingRatesQuery = Type.Object({ cart_id: Uuid })
export type ShippingRatesQuery = Static<typeof ShippingRatesQuery>
