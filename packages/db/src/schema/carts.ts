/**
 * Carts hold what was chosen, not what it costs: lines keep product, variant and quantity, and
 * prices are read live, so a cart follows the current price until checkout.
 */
import { sql } from 'drizzle-orm'
import { check, index, integer, jsonb, pgTable, primaryKey, text, timestamp, unique, uuid } from 'drizzle-orm/pg-core'
import type { Address } from '@commerce/domain'
import { customers } from './accounts.js'
import { products, productVariants } from './catalog.js'
import { promotions, shippingMethods } from './pricing.js'
import { createdAt, id, updatedAt } from './columns.js'

export const carts = pgTable(
  'carts',
  {
    id: id(),
    currency: text('currency').notNull(),
    /** The owner when created with a customer token; null for an anonymous cart. */
    customerId: uuid('customer_id').references(() => customers.id, { onDelete: 'set null' }),
    email: text('email'),
    shippingAddress: jsonb('shipping_address').$type<Address>(),
    shippingMethodId: uuid('shipping_method_id').references(() => shippingMethods.id, { onDelete: 'set null' }),
    /** Set when checkout turned the cart into an order; a completed cart no longer changes. */
    completedAt: timestamp('completed_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [index('carts_customer_idx').on(t.customerId)],
)

export const cartItems = pgTable(
  'cart_items',
  {
    id: id(),
    cartId: uuid('cart_id')
      .notNull()
      .references(() => carts.id, { onDelete: 'cascade' }),
    productId: uuid('product_id')
      .notNull()
      .references(() => products.id),
    variantId: uuid('variant_id').references(() => productVariants.id, { onDelete: 'cascade' }),
    quantity: integer('quantity').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    // One line per product and variant: adding the same again raises the quantity.
    unique('cart_items_line_key').on(t.cartId, t.productId, t.variantId).nullsNotDistinct(),
    check('cart_items_quantity_positive', sql`${t.quantity} > 0`),
  ],
)

/** The codes a shopper entered: the cart's coupons (promotions with a code). */
export const cartCoupons = pgTable(
  'cart_coupons',
  {
    cartId: uuid('cart_id')
      .notNull()
      .references(() => carts.id, { onDelete: 'cascade' }),
    couponId: uuid('coupon_id')
      .notNull()
      .references(() => promotions.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ name: 'cart_coupons_pkey', columns: [t.cartId, t.couponId] })],
)
