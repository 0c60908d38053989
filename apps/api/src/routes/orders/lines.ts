/**
 * An order's lines: writing them, the stock they take (never below zero, whatever runs at the
 * same time: @commerce/db order-stock.ts) and the stock a cancelled order gives back.
 */
import { eq, sql } from 'drizzle-orm'
import type { LineTotals } from '@commerce/domain'
import { newId, products, productVariants, sqlOf, takeStock, type Executor } from '@commerce/db'
import { ApiError } from '../../errors.js'

export interface StockLine {
  productId: string | null
  variantId: string | null
  quantity: number
}

/** A line of a new order: what it copies from the catalog at the time of sale. */
export interface NewOrderLine extends StockLine {
  productId: string
  title: string
  variantTitle: string | null
  sku: string | null
  unitPriceMinor: number
}

/**
 * Takes the stock of every line; the first line short of stock refuses the whole order with 409
 * insufficient_inventory naming its `items[i]` (the caller's transaction then rolls back what was
 * taken). The updates are sent together, in stock-row id order, and PostgreSQL runs them one after
 * another in that order: concurrent orders lock rows in the same order and never deadlock.
 */
export async function takeStockOfLines(tx: Executor, lines: readonly NewOrderLine[]): Promise<void> {
  const byStockRow = lines
    .map((line, index) => ({ line, index, row: line.variantId ?? line.productId }))
    .sort((a, b) => a.row.localeCompare(b.row))
  const client = sqlOf(tx)
  const taken = await Promise.all(byStockRow.map(({ line }) => takeStock(client, line)))
  const short = byStockRow.find((_, position) => !taken[position])
  if (!short) return
  const { line, index } = short
  throw new ApiError('insufficient_inventory', `Not enough stock for '${line.title}': ${line.quantity} requested`, [
    { field: `items[${index}]`, message: `${line.title}: ${line.quantity} requested` },
  ])
}

/** The rows of an order's lines, ids made now (`amounts[i]` belongs to `lines[i]`); ids ascend in line order. */
export function orderItemRows(orderId: string, lines: readonly NewOrderLine[], amounts: readonly LineTotals[]) {
  return lines.map((line, index) => ({
    id: newId(),
    orderId,
    productId: line.productId,
    variantId: line.variantId,
    title: line.title,
    variantTitle: line.variantTitle,
    sku: line.sku,
    quantity: line.quantity,
    fulfilledQuantity: 0,
    returnedQuantity: 0,
    unitPriceMinor: line.unitPriceMinor,
    subtotalMinor: amounts[index]!.subtotal,
    discountMinor: amounts[index]!.discount,
    taxMinor: amounts[index]!.tax,
    totalMinor: amounts[index]!.total,
  }))
}

export type OrderItemRow = ReturnType<typeof orderItemRows>[number]

/** Puts units back (a cancelled order); lines whose product or variant is gone are skipped. */
export async function returnStock(tx: Executor, lines: readonly StockLine[]): Promise<void> {
  for (const line of lines) {
    if (line.variantId) {
      await tx
        .update(productVariants)
        .set({ inventoryQuantity: sql`${productVariants.inventoryQuantity} + ${line.quantity}` })
        .where(eq(productVariants.id, line.variantId))
    } else if (line.productId) {
      await tx
        .update(products)
        .set({ inventoryQuantity: sql`${products.inventoryQuantity} + ${line.quantity}` })
        .where(eq(products.id, line.productId))
    }
  }
}
