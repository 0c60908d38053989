/**
 * Scheduled products going public (docs/catalog.md, "Status"): a product made `active` with a
 * `published_at` still to come is not public (`is_active` false), and the products_keep_status
 * trigger adds the publish-product job for that moment (keyed per product, so a new moment
 * replaces the old). The job publishes every product whose moment has come, so one late or
 * repeated run still leaves each published once, with its product.updated event.
 */
import { and, eq, lte, sql } from 'drizzle-orm'
import type { Database } from '../client.js'
import { writeEvents } from '../outbox.js'
import { productSnapshot } from '../product-rows.js'
import { products } from '../schema/index.js'
import { readProductDetails } from './product-detail.js'

/** Publishes the products whose `published_at` has come; answers their ids. */
export async function publishDueProducts(db: Database): Promise<string[]> {
  return db.transaction(async (tx) => {
    const published = await tx
      .update(products)
      .set({ isActive: true, updatedAt: new Date() })
      .where(and(eq(products.status, 'active'), eq(products.isActive, false), lte(products.publishedAt, sql`now()`)))
      .returning({ id: products.id })
    const rows = await readProductDetails(tx, published.map((row) => row.id))
    await writeEvents(tx, rows.map((row) => ({ kind: 'product.updated' as const, resourceId: row.id, data: productSnapshot(row) })))
    return rows.map((row) => row.id)
  })
}
