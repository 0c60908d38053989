/** Who may see an order: its customer, or staff (an admin, or a key with the orders scope). */
import { and, eq, isNull } from 'drizzle-orm'
import { orders, type Executor } from '@commerce/db'
import { notFound } from '../../errors.js'

/** Who is asking: a customer sees its own orders; `canSeeAll` is an admin or a key with the orders scope. */
export interface OrderViewer {
  customerId: string | null
  canSeeAll: boolean
}

export function visibleTo(order: { customerId: string | null }, viewer: OrderViewer): boolean {
  return viewer.canSeeAll || (viewer.customerId !== null && order.customerId === viewer.customerId)
}

/** 404 unless the order exists, is not archived and the viewer may see it (for lists of its parts). */
export async function requireVisibleOrder(db: Executor, id: string, viewer: OrderViewer): Promise<void> {
  const [order] = await db.select({ customerId: orders.customerId }).from(orders).where(and(eq(orders.id, id), isNull(orders.archivedAt)))
  if (!order || !visibleTo(order, viewer)) throw notFound('Order')
}
