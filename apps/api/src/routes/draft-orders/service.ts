/**
 * Draft orders: an admin prices an order for a customer (no stock taken, no order number), then
 * completes it into a pending order (optionally recorded as paid outside the provider) or sends
 * the customer a payment link, whose payment converts it and pays that order.
 */
import { and, eq, isNull } from 'drizzle-orm'
import {
  generateAccountToken,
  hashAccountToken,
  percentToPpm,
  ppmToPercent,
  toAddress,
  toMajorUnits,
  type CompleteDraftOrder,
  type CouponRule,
  type CreateDraftOrder,
  type DraftDiscountInput,
  type DraftOrder,
  type DraftOrderInvoice,
  type DraftOrderList,
  type Invoice,
  type ListDraftOrdersQuery,
  type Order,
  type UpdateDraftOrder,
} from '@commerce/domain'
import {
  customers,
  draftOrders,
  writeEvent,
  type Database,
  type DraftOrderDiscountJson,
  type DraftOrderLineJson,
  type DraftOrderRow,
  type EventOrigin,
  type Executor,
} from '@commerce/db'
import { ApiError, conflict, invalidField, notFound } from '../../errors.js'
import { fieldValue, knownCurrency, minorUnits } from '../../fields.js'
import { key, keyset, listTable } from '../../list-cursor.js'
import type { PaymentService } from '../payments/service.js'
import { catalogLines } from '../orders/lines.js'
import { placeOrder, priceOrder } from '../orders/place.js'
import { loadOrder, lockOrder, totalsOf } from '../orders/view.js'

/** The id a draft's discount has as a coupon of computeCartTotals (it is priced as one). */
const DISCOUNT_ID = 'draft-discount'

/** A line's id for the totals: its position, so discount pennies go to the earlier lines on a tie. */
const lineId = (index: number) => String(index).padStart(4, '0')

export function toDraftOrder(row: DraftOrderRow): DraftOrder {
  const money = (minor: number) => toMajorUnits(minor, row.currency)
  const discount = row.discount
  return {
    id: row.id,
    status: row.status,
    customer_id: row.customerId,
    email: row.email,
    currency: row.currency,
    lines: row.lines.map((line) => ({
      product_id: line.product_id,
      variant_id: line.variant_id,
      title: line.title,
      variant_title: line.variant_title,
      sku: line.sku,
      quantity: line.quantity,
      unit_price: money(line.unit_price_minor),
      line_total: money(line.subtotal_minor),
      discount: money(line.discount_minor),
      tax: money(line.tax_minor),
      total: money(line.total_minor),
    })),
    discount: discount && {
      type: discount.type,
      value: discount.type === 'percentage' ? ppmToPercent(discount.percent_off_ppm ?? 0) : money(discount.amount_off_minor ?? 0),
      reason: discount.reason,
      amount: money(discount.discount_minor),
    },
    shipping_address: row.shippingAddress,
    billing_address: row.billingAddress,
    shipping_method: row.shippingMethod && { id: row.shippingMethod.id!, name: row.shippingMethod.name, amount: money(row.shippingMethod.amount_minor) },
    totals: totalsOf(row),
    notes: row.notes,
    order_id: row.orderId,
    invoice_sent_at: row.invoiceSentAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

/** The admin's discount as the totals take it (a coupon that always applies), or a 400 naming `discount.value`. */
function discountOf(input: DraftDiscountInput, currency: string): Omit<DraftOrderDiscountJson, 'discount_minor'> {
  if (input.type === 'percentage') {
    return { type: 'percentage', percent_off_ppm: fieldValue('discount.value', () => percentToPpm(input.value)), amount_off_minor: null, reason: input.reason ?? null }
  }
  return { type: 'fixed_amount', percent_off_ppm: null, amount_off_minor: minorUnits('discount.value', input.value, currency), reason: input.reason ?? null }
}

function couponOf(discount: Omit<DraftOrderDiscountJson, 'discount_minor'>, currency: string): CouponRule {
  return {
    id: DISCOUNT_ID,
    code: DISCOUNT_ID,
    type: discount.type,
    percentOffPpm: discount.percent_off_ppm,
    amountOffMinor: discount.amount_off_minor,
    currency,
    minSubtotalMinor: null,
    startsAt: null,
    endsAt: null,
    usageLimit: null,
    timesUsed: 0,
    isActive: true,
  }
}

/** The customer's email, or a 400 naming `customer_id` when there is no such customer. */
async function customerEmail(tx: Executor, customerId: string): Promise<string> {
  const [customer] = await tx
    .select({ email: customers.email })
    .from(customers)
    .where(and(eq(customers.id, customerId), isNull(customers.deletedAt)))
  if (!customer) throw invalidField('customer_id', "Field 'customer_id' names no customer")
  return customer.email
}

/** What a draft is priced from; `lines` carry their unit prices, their totals are recomputed. */
interface DraftContent {
  currency: string
  lines: DraftOrderLineJson[]
  discount: Omit<DraftOrderDiscountJson, 'discount_minor'> | null
  shippingAddress: DraftOrderRow['shippingAddress']
  shippingMethodId: string | null
}

/** The columns of a draft priced now: line totals, the discount's amount, tax, the shipping rate. */
async function priceDraft(tx: Executor, content: DraftContent) {
  const { totals, shipping } = await priceOrder(tx, {
    currency: content.currency,
    lines: content.lines.map((line, index) => ({ id: lineId(index), unitPriceMinor: line.unit_price_minor, quantity: line.quantity, mass: BigInt(line.mass) })),
    shippingAddress: content.shippingAddress,
    shippingMethodId: content.shippingMethodId,
    coupons: content.discount ? [couponOf(content.discount, content.currency)] : [],
  })
  return {
    lines: content.lines.map((line, index) => {
      const amounts = totals.lines[index]!
      return { ...line, subtotal_minor: amounts.subtotal, discount_minor: amounts.discount, tax_minor: amounts.tax, total_minor: amounts.total }
    }),
    discount: content.discount && { ...content.discount, discount_minor: totals.coupons.find((coupon) => coupon.id === DISCOUNT_ID)?.discount ?? 0 },
    shippingMethod: shipping,
    subtotalMinor: totals.subtotal,
    discountMinor: totals.discount,
    taxMinor: totals.tax,
    shippingMinor: totals.shipping,
    totalMinor: totals.total,
  }
}

/**
 * The request's lines, each on sale now in the draft's currency (400 naming `lines[i]`). A line of
 * a product and variant the draft has already keeps the price, title and sku it was given then
 * (the price the admin quoted); a new one takes the catalog's now.
 */
async function draftLines(
  tx: Executor,
  items: readonly { product_id: string; variant_id?: string | null; quantity: number }[],
  order: { currency: string; customerId: string | null },
  kept: readonly DraftOrderLineJson[],
): Promise<DraftOrderLineJson[]> {
  const catalog = await catalogLines(tx, items, order, 'lines')
  return catalog.map((line) => {
    const before = kept.find((old) => old.product_id === line.productId && old.variant_id === line.variantId)
    const priced = before ?? {
      product_id: line.productId,
      variant_id: line.variantId,
      title: line.title,
      variant_title: line.variantTitle,
      sku: line.sku,
      unit_price_minor: line.unitPriceMinor,
      mass: line.mass.toString(),
    }
    return {
      product_id: priced.product_id,
      variant_id: priced.variant_id,
      title: priced.title,
      variant_title: priced.variant_title,
      sku: priced.sku,
      unit_price_minor: priced.unit_price_minor,
      mass: priced.mass,
      quantity: line.quantity,
      subtotal_minor: 0,
      discount_minor: 0,
      tax_minor: 0,
      total_minor: 0,
    }
  })
}

/** Locks the draft row for a change (one writer per draft), or 404. */
async function lockDraft(tx: Executor, id: string): Promise<DraftOrderRow> {
  const [row] = await tx.select().from(draftOrders).where(eq(draftOrders.id, id)).for('update')
  if (!row) throw notFound('Draft order')
  return row
}

/** Newest first (UUIDv7 ids): the primary key, and draft_orders_status_idx (status, id desc) by status. */
const DRAFT_ORDERS_KEYSET = keyset('draft_orders', 'desc', [key.uuid(draftOrders.id)])

export function createDraftOrderService(db: Database, paymentService: PaymentService, shopUrl: string) {
  /**
   * Places the locked draft's order at the draft's prices and totals (stock taken, 409
   * insufficient_inventory naming `lines[i]`; order.created), and marks the draft completed.
   */
  async function convert(tx: Executor, row: DraftOrderRow, origin: EventOrigin): Promise<Order> {
    if (!row.email) {
      throw new ApiError('conflict', 'The draft order has no email: set one (PATCH) before it becomes an order', [
        { field: 'email', message: 'required to complete the draft' },
      ])
    }
    const order = await placeOrder(
      tx,
      {
        customerId: row.customerId,
        email: row.email,
        currency: row.currency,
        lines: row.lines.map((line) => ({
          productId: line.product_id,
          variantId: line.variant_id,
          title: line.title,
          variantTitle: line.variant_title,
          sku: line.sku,
          quantity: line.quantity,
          unitPriceMinor: line.unit_price_minor,
        })),
        totals: {
          subtotal: row.subtotalMinor,
          discount: row.discountMinor,
          tax: row.taxMinor,
          shipping: row.shippingMinor,
          total: row.totalMinor,
          lines: row.lines.map((line, index) => ({
            id: lineId(index),
            subtotal: line.subtotal_minor,
            discount: line.discount_minor,
            tax: line.tax_minor,
            total: line.total_minor,
          })),
        },
        shippingAddress: row.shippingAddress,
        billingAddress: row.billingAddress ?? row.shippingAddress,
        shippingMethod: row.shippingMethod,
        notes: row.notes,
        linesField: 'lines',
      },
      origin,
    )
    const now = new Date()
    await tx.update(draftOrders).set({ status: 'completed', orderId: order.id, completedAt: now, updatedAt: now }).where(eq(draftOrders.id, row.id))
    return order
  }

  /** The draft whose payment link carries this token (a replaced link's token finds none: 404). */
  async function lockByToken(tx: Executor, token: string): Promise<DraftOrderRow> {
    const [row] = await tx
      .select()
      .from(draftOrders)
      .where(eq(draftOrders.invoiceTokenHash, hashAccountToken(token)))
      .for('update')
    if (!row) throw notFound('Invoice')
    return row
  }

  return {
    async list(query: ListDraftOrdersQuery): Promise<DraftOrderList> {
      const { rows, meta } = await listTable(db, DRAFT_ORDERS_KEYSET, draftOrders, query.status ? eq(draftOrders.status, query.status) : undefined, query)
      return { draft_orders: rows.map(toDraftOrder), meta }
    },

    async get(id: string): Promise<DraftOrder> {
      const [row] = await db.select().from(draftOrders).where(eq(draftOrders.id, id))
      if (!row) throw notFound('Draft order')
      return toDraftOrder(row)
    },

    create(body: CreateDraftOrder): Promise<DraftOrder> {
      return db.transaction(async (tx) => {
        const currency = knownCurrency(body.currency)
        const theirs = body.customer_id ? await customerEmail(tx, body.customer_id) : null
        const email = body.email ?? theirs
        const shippingAddress = body.shipping_address ? toAddress(body.shipping_address) : null
        const priced = await priceDraft(tx, {
          currency,
          lines: await draftLines(tx, body.lines, { currency, customerId: body.customer_id ?? null }, []),
          discount: body.discount ? discountOf(body.discount, currency) : null,
          shippingAddress,
          shippingMethodId: body.shipping_method_id ?? null,
        })
        const [row] = await tx
          .insert(draftOrders)
          .values({
            customerId: body.customer_id ?? null,
            email,
            currency,
            shippingAddress,
            billingAddress: body.billing_address ? toAddress(body.billing_address) : null,
            notes: body.notes ?? null,
            ...priced,
          })
          .returning()
        return toDraftOrder(row!)
      })
    },

    /** Changes what is given (null clears it) and prices the draft again; a completed draft is 409. */
    update(id: string, body: UpdateDraftOrder): Promise<DraftOrder> {
      return db.transaction(async (tx) => {
        const row = await lockDraft(tx, id)
        if (row.status === 'completed') throw conflict('A completed draft order cannot change; change its order instead')
        const customerId = body.customer_id === undefined ? row.customerId : body.customer_id
        let email = body.email === undefined ? row.email : body.email
        if (body.customer_id) {
          const theirs = await customerEmail(tx, body.customer_id)
          // A new customer brings their address unless the request gives one.
          if (body.email === undefined && body.customer_id !== row.customerId) email = theirs
        }
        const shippingAddress =
          body.shipping_address === undefined ? row.shippingAddress : body.shipping_address && toAddress(body.shipping_address)
        const priced = await priceDraft(tx, {
          currency: row.currency,
          lines: body.lines ? await draftLines(tx, body.lines, { currency: row.currency, customerId }, row.lines) : row.lines,
          discount: body.discount === undefined ? row.discount : body.discount && discountOf(body.discount, row.currency),
          shippingAddress,
          shippingMethodId: body.shipping_method_id === undefined ? (row.shippingMethod?.id ?? null) : body.shipping_method_id,
        })
        const [updated] = await tx
          .update(draftOrders)
          .set({
            customerId,
            email,
            shippingAddress,
            billingAddress: body.billing_address === undefined ? undefined : body.billing_address && toAddress(body.billing_address),
            notes: body.notes,
            ...priced,
            updatedAt: new Date(),
          })
          .where(eq(draftOrders.id, id))
          .returning()
        return toDraftOrder(updated!)
      })
    },

    /** Deletes a draft not completed (a completed one is kept with its order: 409). */
    delete(id: string): Promise<void> {
      return db.transaction(async (tx) => {
        const row = await lockDraft(tx, id)
        if (row.status === 'completed') throw conflict('A completed draft order is kept with its order and cannot be deleted')
        await tx.delete(draftOrders).where(eq(draftOrders.id, id))
      })
    },

    /**
     * Completes the draft (inside `tx`, the idempotency runner's): its order is placed, and with
     * `mark_paid` paid by a `manual` payment of its total. A completed draft is 409.
     */
    async complete(tx: Executor, id: string, body: CompleteDraftOrder, origin: EventOrigin): Promise<Order> {
      const row = await lockDraft(tx, id)
      if (row.status === 'completed') throw conflict(`This draft order was completed already: its order is ${row.orderId}`)
      const order = await convert(tx, row, origin)
      if (!body.mark_paid) return order
      await paymentService.recordManualPayment(tx, (await lockOrder(tx, order.id))!, origin)
      return (await loadOrder(tx, order.id))!
    },

    /**
     * Makes the draft's payment link (a new random token, kept as its SHA-256: the link before it
     * stops working) and writes `draft_order.invoice_sent` with it. A completed draft gets one only
     * while its order is pending (owes its total); otherwise 409.
     */
    sendInvoice(id: string, origin: EventOrigin): Promise<DraftOrderInvoice> {
      return db.transaction(async (tx) => {
        const row = await lockDraft(tx, id)
        if (row.status === 'completed') {
          const order = row.orderId ? await lockOrder(tx, row.orderId) : undefined
          if (!order || order.status !== 'pending') throw conflict('This draft order’s order is not waiting for a payment: there is nothing to invoice')
        }
        const token = generateAccountToken()
        const now = new Date()
        const [updated] = await tx
          .update(draftOrders)
          .set({
            status: row.status === 'completed' ? 'completed' : 'invoice_sent',
            invoiceTokenHash: hashAccountToken(token),
            invoiceSentAt: now,
            updatedAt: now,
          })
          .where(eq(draftOrders.id, id))
          .returning()
        const sent: DraftOrderInvoice = { ...toDraftOrder(updated!), invoice_url: `${shopUrl}/invoices/${token}` }
        await writeEvent(tx, { kind: 'draft_order.invoice_sent', resourceId: id, data: sent, customerId: updated!.customerId, ...origin })
        return sent
      })
    },

    /** What the payment link shows the payer: lines and totals (its order's, once converted) and what is due. */
    async invoice(token: string): Promise<Invoice> {
      const [row] = await db.select().from(draftOrders).where(eq(draftOrders.invoiceTokenHash, hashAccountToken(token)))
      if (!row) throw notFound('Invoice')
      const draft = toDraftOrder(row)
      const draftView = {
        currency: draft.currency,
        lines: draft.lines.map((line) => ({ title: line.title, variant_title: line.variant_title, quantity: line.quantity, unit_price: line.unit_price, total: line.total })),
        totals: draft.totals,
      }
      if (!row.orderId) return { status: 'open', ...draftView, amount_due: draft.totals.total, order_number: null }
      const order = await loadOrder(db, row.orderId)
      // An archived order is not found: its link has nothing more to pay.
      if (!order) return { status: 'closed', ...draftView, amount_due: 0, order_number: null }
      // What the order owes, as POST /orders/:id/payments takes it (an edit may have added to a paid order).
      const due = order.amount_owed
      return {
        status: order.status === 'cancelled' || order.status === 'refunded' ? 'closed' : due > 0 ? 'open' : 'paid',
        currency: order.currency,
        lines: order.items.map((item) => ({ title: item.title, variant_title: item.variant_title, quantity: item.quantity, unit_price: item.unit_price, total: item.total })),
        totals: order.totals,
        amount_due: due,
        order_number: order.order_number,
      }
    },

    /**
     * The order the payment link pays: the draft's, placed now in a transaction of its own if the
     * draft was not converted yet (stock taken; 409 when short), so a declined payment leaves it
     * pending, to be paid again through the same link.
     */
    orderOfInvoice(token: string, origin: EventOrigin): Promise<string> {
      return db.transaction(async (tx) => {
        const row = await lockByToken(tx, token)
        if (row.orderId) return row.orderId
        if (row.status === 'completed') throw conflict('This draft order’s order is gone')
        return (await convert(tx, row, origin)).id
      })
    },
  }
}

export type DraftOrderService = ReturnType<typeof createDraftOrderService>
