/** `refresh-best-sellers`, every ten minutes: the units each product sold over the last 30 days (@commerce/db best-sellers.ts). */
import type { Task } from 'graphile-worker'
import { refreshBestSellers, sqlOf, type Database } from '@commerce/db'

export function createRefreshBestSellers(db: Database): Task {
  return async (_payload, helpers) => {
    const changed = await refreshBestSellers(sqlOf(db))
    if (changed > 0) helpers.logger.info(`best sellers: ${changed} product(s) moved`)
  }
}
