/** What returns already brought back of an order's lines: an edit cannot cancel those units, and a return's refund counts them. */
import { and, eq, sql } from 'drizzle-orm'
import { returnItems, returns, type Executor } from '@commerce/db'

/** Units of each line received before, by returns already received. */
export async function unitsReceived(tx: Executor, orderId: string): Promise<Map<string, number>> {
  const rows = await tx
    .select({ lineId: returnItems.orderItemId, units: sql<number>`sum(${returnItems.quantity})::int` })
    .from(returnItems)
    .innerJoin(returns, eq(returns.id, returnItems.returnId))
    .where(and(eq(returns.orderId, orderId), eq(returns.status, 'received')))
    .groupBy(returnItems.orderItemId)
  return new Map(rows.map((row) => [row.lineId, row.units]))
}
