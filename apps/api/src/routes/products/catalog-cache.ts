/**
 * Catalog answers kept in memory for a moment (PRODUCT_CACHE_TTL): product details and public list
 * pages, a shop's most read answers, read far more often than they change. What this instance
 * changes shows at once: a catalog write empties the caches before it answers (clearOnWrite: it
 * may change which products a page holds), and a stock move it commits drops the answers that show
 * the products it moved (forget, told by @commerce/db onStockMoved). A change made elsewhere
 * (another instance, the worker) shows within the TTL (docs/catalog.md, "Catalog answers in memory").
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'

/** What a cache holds at most, in parts of about a kilobyte each (a product, a variant, an image, a list item): some 20 MB. */
const MAX_WEIGHT = 20_000

/** When a read began: its answer is kept only if no write dropped it (or a product it shows) meanwhile. */
export interface ReadStart {
  generation: number
  at: number
}

export class CatalogCache<T> {
  private readonly entries = new Map<string, { value: T; expires: number; weight: number; products: readonly string[] }>()
  /** The keys of the stored answers that show each product. */
  private readonly showing = new Map<string, Set<string>>()
  /**
   * The generation at which each product was last forgotten, and when: kept for one TTL, as a read
   * that began before then can only be stored already expired (set refuses it). Oldest first.
   */
  private readonly forgotten = new Map<string, { generation: number; at: number }>()
  private weight = 0
  /** Counts the writes (clears and forgets); a read notes it when it begins. */
  private generation = 0
  private clearedAt = 0

  /** `weigh` tells how many parts of MAX_WEIGHT a value takes; `shows`, the ids of the products it shows. */
  constructor(
    private readonly ttlMs: number,
    private readonly weigh: (value: T) => number = () => 1,
    private readonly shows: (value: T) => readonly string[] = () => [],
  ) {}

  /** The value stored under `key`, unless older than the TTL. Values are shared between answers: never change one. */
  get(key: string): T | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    if (entry.expires > Date.now()) return entry.value
    this.drop(key)
    return undefined
  }

  begin(): ReadStart {
    return { generation: this.generation, at: Date.now() }
  }

  /** Keeps what a read that began at `start` found, for the TTL counted from the read's start. */
  set(key: string, value: T, start: ReadStart): void {
    const expires = start.at + this.ttlMs
    if (start.generation < this.clearedAt || expires <= Date.now()) return
    const products = this.shows(value)
    for (const id of products) if ((this.forgotten.get(id)?.generation ?? 0) > start.generation) return
    const weight = this.weigh(value)
    if (weight > MAX_WEIGHT) return
    this.drop(key)
    // The oldest stored go first.
    for (const oldest of this.entries.keys()) {
      if (this.weight + weight <= MAX_WEIGHT) break
      this.drop(oldest)
    }
    this.entries.set(key, { value, expires, weight, products })
    this.weight += weight
    for (const id of products) {
      const keys = this.showing.get(id)
      if (keys) keys.add(key)
      else this.showing.set(id, new Set([key]))
    }
  }

  /** Drops every answer. */
  clear(): void {
    this.clearedAt = ++this.generation
    this.entries.clear()
    this.showing.clear()
    this.forgotten.clear()
    this.weight = 0
  }

  /** Drops the answers that show any of these products; a read of one of them under way then is not stored. */
  forget(productIds: readonly string[]): void {
    if (this.ttlMs === 0) return
    const generation = ++this.generation
    const at = Date.now()
    for (const id of productIds) {
      for (const key of this.showing.get(id) ?? []) this.drop(key)
      // Deleted first, so that the map stays in the order of the forgetting.
      this.forgotten.delete(id)
      this.forgotten.set(id, { generation, at })
    }
    for (const [id, forgotten] of this.forgotten) {
      if (forgotten.at > at - this.ttlMs) break
      this.forgotten.delete(id)
    }
  }

  private drop(key: string): void {
    const entry = this.entries.get(key)
    if (entry === undefined) return
    this.entries.delete(key)
    this.weight -= entry.weight
    for (const id of entry.products) {
      const keys = this.showing.get(id)!
      keys.delete(key)
      if (keys.size === 0) this.showing.delete(id)
    }
  }
}

/** An onSend hook for the catalog's routes: any write among them empties the caches before answering. */
export function clearOnWrite(...caches: Pick<CatalogCache<unknown>, 'clear'>[]) {
  return (request: FastifyRequest, _reply: FastifyReply, payload: unknown, done: HookHandlerDoneFunction & ((error: Error | null, payload?: unknown) => void)) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') for (const cache of caches) cache.clear()
    done(null, payload)
  }
}
