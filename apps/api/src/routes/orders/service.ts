/** Orders: reading them (admins all, customers their own), admin-made orders, edits, and the status moves. */
import { and, eq, gte, isNull, lt, sql, type SQL } from 'drizzle-orm'
import {
  moveOrder,
  toAddress,
  type CreateOrder,
  type ListOrdersQuery,
  type Order,
  type OrderList,
  type OrderStatus,
  type UpdateOrder,
} from '@commerce/domain'
import {
  customers,
  orderItems,
  orders,
  orderSelection,
  type Database,
  type Executor,
  type OrderRow,
  type EventOrigin,
} from '@commerce/db'
import { ApiError, conflict, invalidField, notFound } from '../../errors.js'
import { instant, knownCurrency } from '../../fields.js'
import { key, keyset, selectList } from '../../list-cursor.js'
import type { PaymentService } from '../payments/service.js'
import { releaseLines } from '../inventory/stock.js'
import { catalogLines } from './lines.js'
import { placeOrder, priceOrder } from './place.js'
import { loadOrder, lockOrder, toOrder, writeOrderEvent } from './view.js'
import { visibleTo, type OrderViewer } from './visibility.js'

/** Newest first (UUIDv7 ids), served by the primary key and by orders_customer_idx and orders_status_idx after their filter. */
const ORDERS_KEYSET = keyset('orders', 'desc', [key.uuid(orders.id)])

export function createOrderService(db: Database, paymentService: PaymentService) {
  /** The locked order, or 404 (also for another customer's order). */
  async function lockVisible(tx: Executor, id: string, viewer: OrderViewer): Promise<OrderRow> {
    const row = await lockOrder(tx, id)
    if (!row || !visibleTo(row, viewer)) throw notFound('Order')
    return row
  }

  /** Moves the order's status (the state machine decides), writes the move's event, answers the order. */
  async function move(tx: Executor, row: OrderRow, to: OrderStatus, origin: EventOrigin): Promise<Order> {
    const event = moveOrder(row.status, to)
    await tx.update(orders).set({ status: to }).where(eq(orders.id, row.id))
    const order = (await loadOrder(tx, row.id))!
    await writeOrderEvent(tx, event, order, origin)
    return order
  }

  /** The units an order's lines hold and have not shipped: those an edit cancelled went back already. */
  async function unshippedOf(tx: Executor, orderId: string) {
    return tx
      .select({
        id: orderItems.id,
        productId: orderItems.productId,
        variantId: orderItems.variantId,
        quantity: sql<number>`${orderItems.quantity} - ${orderItems.canceledQuantity} - ${orderItems.fulfilledQuantity}`,
      })
      .from(orderItems)
      .where(eq(orderItems.orderId, orderId))
  }

  /** Cancelling restocks what was not shipped, refunds what was captured and voids what is only authorized. */
  async function cancel(tx: Executor, row: OrderRow, origin: EventOrigin): Promise<Order> {
    moveOrder(row.status, 'cancelled')
    if (row.paidMinor > row.refundedMinor || row.authorizedMinor > 0) await paymentService.refundAll(tx, row, 'Order cancelled', origin)
    await releaseLines(tx, row.id, await unshippedOf(tx, row.id), origin)
    return move(tx, row, 'cancelled', origin)
  }

  return {
    async list(query: ListOrdersQuery, viewer: OrderViewer): Promise<OrderList> {
      const conditions: (SQL | undefined)[] = [isNull(orders.archivedAt)]
      if (!viewer.canSeeAll) conditions.push(eq(orders.customerId, viewer.customerId ?? '00000000-0000-0000-0000-000000000000'))
      if (query.customer_id) conditions.push(eq(orders.customerId, query.customer_id))
      if (query.status) conditions.push(eq(orders.status, query.status))
      if (query.created_from) conditions.push(gte(orders.createdAt, instant('created_from', query.created_from)!))
      if (query.created_to) conditions.push(lt(orders.createdAt, instant('created_to', query.created_to)!))
      const where = and(...conditions)
      const select = db.select({ ...orderSelection, cursorKey: ORDERS_KEYSET.cursorKey }).from(orders).$dynamic()
      const { rows, meta } = await selectList(ORDERS_KEYSET, query, select, where, () => db.$count(orders, where))
      return { orders: rows.map(toOrder), meta }
    },

    async get(id: string, viewer: OrderViewer): Promise<Order> {
      const order = await loadOrder(db, id)
      if (!order || !visibleTo({ customerId: order.customer_id }, viewer)) throw notFound('Order')
      return order
    },

    /**
     * An admin-made pending order: current prices, tax from the shipping address, the shipping
     * method's rate, and the stock taken now (a cancel puts it back). A draft order's completion
     * places its order the same way, at the draft's prices (place.ts).
     */
    async create(tx: Executor, body: CreateOrder, origin: EventOrigin): Promise<Order> {
      const currency = knownCurrency(body.currency)
      if (body.customer_id) {
        const [customer] = await tx
          .select({ id: customers.id })
          .from(customers)
          .where(and(eq(customers.id, body.customer_id), isNull(customers.deletedAt)))
        if (!customer) throw invalidField('customer_id', "Field 'customer_id' names no customer")
      }
      const lines = await catalogLines(tx, body.items, { currency, customerId: body.customer_id ?? null }, 'items')
      const shippingAddress = toAddress(body.shipping_address)
      const { totals, shipping } = await priceOrder(tx, { currency, lines, shippingAddress, shippingMethodId: body.shipping_method_id, coupons: [] })
      return placeOrder(
        tx,
        {
          customerId: body.customer_id ?? null,
          email: body.email,
          currency,
          lines,
          totals,
          shippingAddress,
          billingAddress: body.billing_address ? toAddress(body.billing_address) : shippingAddress,
          shippingMethod: shipping,
          notes: body.notes ?? null,
          linesField: 'items',
        },
        origin,
      )
    },

    update(id: string, body: UpdateOrder, viewer: OrderViewer): Promise<Order> {
      return db.transaction(async (tx) => {
        const row = await lockVisible(tx, id, viewer)
        const changesAddress = body.shipping_address !== undefined || body.billing_address !== undefined
        if (changesAddress && row.fulfillmentStatus !== 'unfulfilled') {
          throw conflict('The addresses of an order cannot change once it has shipped')
        }
        await tx
          .update(orders)
          .set({
            notes: body.notes,
            email: body.email,
            shippingAddress: body.shipping_address && toAddress(body.shipping_address),
            billingAddress: body.billing_address === undefined ? undefined : body.billing_address && toAddress(body.billing_address),
            updatedAt: new Date(),
          })
          .where(eq(orders.id, id))
        return (await loadOrder(tx, id))!
      })
    },

    /** Pending orders are cancelled (restocked) first; only pending and cancelled orders may go. */
    archive(id: string, viewer: OrderViewer, origin: EventOrigin): Promise<void> {
      return db.transaction(async (tx) => {
        const row = await lockVisible(tx, id, viewer)
        if (row.status !== 'pending' && row.status !== 'cancelled') {
          throw new ApiError('invalid_state_transition', `Only pending or cancelled orders can be deleted; this one is ${row.status}`)
        }
        if (row.status === 'pending') await cancel(tx, row, origin)
        await tx.update(orders).set({ archivedAt: new Date() }).where(eq(orders.id, id))
      })
    },

    cancel(id: string, viewer: OrderViewer, origin: EventOrigin): Promise<Order> {
      return db.transaction(async (tx) => cancel(tx, await lockVisible(tx, id, viewer), origin))
    },

    complete(id: string, viewer: OrderViewer, origin: EventOrigin): Promise<Order> {
      return db.transaction(async (tx) => move(tx, await lockVisible(tx, id, viewer), 'completed', origin))
    },
  }
}

export type OrderService = ReturnType<typeof createOrderService>
