/**
 * `publish-product`, at a scheduled product's `published_at` (added by the products_keep_status
 * trigger): makes every product whose moment has come public, each with its product.updated event
 * (@commerce/db product-publishing.ts). A run for a product rescheduled or unpublished meanwhile
 * finds nothing to do.
 */
import type { Task } from 'graphile-worker'
import { publishDueProducts, type Database } from '@commerce/db'

export function createPublishProduct(db: Database): Task {
  return async (_payload, helpers) => {
    const published = await publishDueProducts(db)
    if (published.length > 0) helpers.logger.info(`published ${published.length} scheduled product(s)`, { published })
  }
}
