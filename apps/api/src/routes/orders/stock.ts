/** Stock moves: taking units never lets stock go below zero, whatever runs at the same time. */
import { and, eq, gte, sql } from 'drizzle-orm'
import { products, productVariants, type Executor } from '@commerce/db'

export interface StockLine {
  productId: string | null
  variantId: string | null
  quantity: number
}

/**
 * Takes `quantity` units of the variant (or of the product without one) with one guarded update;
 * false when fewer are in stock, and then nothing changed.
 */
export async function takeStock(tx: Executor, line: StockLine): Promise<boolean> {
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
