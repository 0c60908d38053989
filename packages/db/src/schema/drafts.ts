/**
 * Draft orders: an admin's quote for a customer, kept until it is completed into an order. No
 * stock is taken and no order number given while it is a draft. Its lines are a jsonb list, not
 * rows: a draft is always read, priced and replaced whole (PATCH replaces every line in one
 * update under the draft's row lock), nothing refers to a draft's line, and completion copies
 * them into order_items, where lines get the rows that fulfillments and returns refer to.
 */
import { sql } from 'drizzle-orm'
import { bigint, check, index, jsonb, pgEnum, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { DRAFT_ORDER_STATUSES, type Address } from '@commerce/domain'
import { customers } from './accounts.js'
import { createdAt, id, updatedAt } from './columns.js'
import { orders, type OrderShippingMethod } from './orders.js'

export const draftOrderStatus = pgEnum('draft_order_status', DRAFT_ORDER_STATUSES)

const money = (name: string) => bigint(name, { mode: 'number' })

/** A line as it was priced when it was added, with its share of the draft's totals as last computed. */
export interface DraftOrderLineJson {
  product_id: string
  variant_id: string | null
  title: string
  variant_title: string | null
  sku: string | null
  quantity: number
  unit_price_minor: number
  /** Its weight in the catalog's base unit when it was added (a bigint as text), for the shipping rate. */
  mass: string
  subtotal_minor: number
  discount_minor: number
  tax_minor: number
  total_minor: number
}

/** The admin's discount: a percentage (ppm) or an amount off, and what it took off when last priced. */
export interface DraftOrderDiscountJson {
  type: 'percentage' | 'fixed_amount'
  percent_off_ppm: number | null
  amount_off_minor: number | null
  reason: string | null
  discount_minor: number
}

export const draftOrders = pgTable(
  'draft_orders',
  {
    id: id(),
    status: draftOrderStatus('status').notNull().default('open'),
    customerId: uuid('customer_id').references(() => customers.id, { onDelete: 'set null' }),
    email: text('email'),
    currency: text('currency').notNull(),
    lines: jsonb('lines').$type<DraftOrderLineJson[]>().notNull(),
    discount: jsonb('discount').$type<DraftOrderDiscountJson>(),
    shippingAddress: jsonb('shipping_address').$type<Address>(),
    billingAddress: jsonb('billing_address').$type<Address>(),
    shippingMethod: jsonb('shipping_method').$type<OrderShippingMethod>(),
    notes: text('notes'),
    subtotalMinor: money('subtotal_minor').notNull(),
    discountMinor: money('discount_minor').notNull(),
    taxMinor: money('tax_minor').notNull(),
    shippingMinor: money('shipping_minor').notNull(),
    totalMinor: money('total_minor').notNull(),
    /** The SHA-256 of the payment link's token; sending the invoice again replaces it (the old link stops working). */
    invoiceTokenHash: text('invoice_token_hash'),
    invoiceSentAt: timestamp('invoice_sent_at', { withTimezone: true, mode: 'date' }),
    /** The order it became. */
    orderId: uuid('order_id').references(() => orders.id, { onDelete: 'set null' }),
    completedAt: timestamp('completed_at', { withTimezone: true, mode: 'date' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    index('draft_orders_status_idx').on(t.status, t.id.desc()),
    uniqueIndex('draft_orders_invoice_token_key').on(t.invoiceTokenHash),
    uniqueIndex('draft_orders_order_key').on(t.orderId),
    check('draft_orders_totals_identity', sql`${t.totalMinor} = ${t.subtotalMinor} - ${t.discountMinor} + ${t.taxMinor} + ${t.shippingMinor}`),
    check('draft_orders_completed_has_order', sql`(${t.status} = 'completed') = (${t.completedAt} is not null)`),
  ],
)

export type DraftOrderRow = typeof draftOrders.$inferSelect
