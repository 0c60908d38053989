/**
 * An order's lines: writing them, the stock they take (never below zero, whatever runs at the
 * same time) and the stock a cancelled order gives back.
 */
import { and, eq, gte, sql } from 'drizzle-orm'
import type { LineTotals } from '@commerce/domain'
import { orderItems, products, productVariants, type Executor } from '@commerce/db'
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
 * Takes `quantity` units of the variant (or of the product without one) with one guarded update;
 * false when fewer are in stock, and then nothing changed.
 */
async function takeStock(tx: Executor, line: StockLine): Promise<boolean> {
  if (line.variantId) {
    const taken = await tx
      .update(productVariants)
      .set({ inventoryQuantity: sql`${productVariants.inventoryQuantity} - ${line.quantity}` })
      .where(and(eq(productVariants.id, line.variantId), gte(productVariants.inventoryQuantity, line.quantity)))
      .returning({ id: productVariants.id })
    return taken.length === 1
  }
  if (!line.productId) return false
  const taken = await tx
    .update(products)
    .set({ inventoryQuantity: sql`${products.inventoryQuantity} - ${line.quantity}` })
    .where(and(eq(products.id, line.productId), gte(products.inventoryQuantity, line.quantity)))
    .returning({ id: products.id })
  return taken.length === 1
}

/**
 * Takes the stock of every line, stock rows in id order so concurrent orders never deadlock; the
 * first line short of stock refuses the whole order with 409 insufficient_inventory naming its
 * `items[i]` (the caller's transaction then rolls back what was taken).
 */
export async function takeStockOfLines(tx: Executor, lines: readonly NewOrderLine[]): Promise<void> {
  const byStockRow = lines
    .map((line, index) => ({ line, index, row: line.variantId ?? line.productId }))
    .sort((a, b) => a.row.localeCompare(b.row))
  for (const { line, index } of byStockRow) {
    if (await takeStock(tx, line)) continue
    throw new ApiError('insufficient_inventory', `Not enough stock for '${line.title}': ${line.quantity} requested`, [
      { field: `items[${index}]`, message: `${line.title}: ${line.quantity} requested` },
    ])
  }
}

/** Writes the order's lines, each with its amounts (`amounts[i]` belongs to `lines[i]`). */
export async function insertOrderItems(tx: Executor, orderId: string, lines: readonly NewOrderLine[], amounts: readonly LineTotals[]): Promise<void> {
  await tx.insert(orderItems).values(
    lines.map((line, index) => ({
      orderId,
      productId: line.productId,
      variantId: line.variantId,
      title: line.title,
      variantTitle: line.variantTitle,
      sku: line.sku,
      quantity: line.quantity,
      unitPriceMinor: line.unitPriceMinor,
      subtotalMinor: amounts[index]!.subtotal,
      discountMinor: amounts[index]!.discount,
      taxMinor: amounts[index]!.tax,
      totalMinor: amounts[index]!.total,
    })),
  )
}

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
