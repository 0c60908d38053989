/**
 * Exact list totals without counting on every request: a total is cached together with the
 * catalog revision it was counted at, and a database trigger bumps the revision on every write
 * that can change a list, so a cached total is used only while it is still exact.
 */
import type { ListMeta } from '@commerce/domain'
import type { Static } from 'typebox'

const MAX_ENTRIES = 10_000

export class ListTotals {
  private readonly entries = new Map<string, { revision: string; total: number }>()

  get(key: string, revision: string): number | undefined {
    const entry = this.entries.get(key)
    return entry?.revision === revision ? entry.total : undefined
  }

  /** The last total counted, whatever its revision: good enough to plan a query with. */
  latest(key: string): number | undefined {
    return this.entries.get(key)?.total
  }

  set(key: string, revision: string, total: number): void {
    this.entries.delete(key)
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!)
    this.entries.set(key, { revision, total })
  }
}

export function pageMeta(page: number, perPage: number, total: number): Static<typeof ListMeta> {
  return { page, per_page: perPage, total, total_pages: Math.ceil(total / perPage) }
}
