/**
 * Catalog answers kept in memory for a moment (PRODUCT_CACHE_TTL): product details and public list
 * pages, a shop's most read answers, read far more often than they change. A write through this
 * instance's catalog, inventory and order routes empties the caches before it answers
 * (clearOnWrite), so whoever changed a product reads the change at once; a change made elsewhere
 * (another instance, the worker, a checkout's stock) shows within the TTL (docs/catalog.md,
 * "Catalog answers in memory").
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'

/** What a cache holds at most, in parts of about a kilobyte each (a product, a variant, an image, a list item): some 20 MB. */
const MAX_WEIGHT = 20_000

/** When a read began: its answer is kept only if no write emptied the cache meanwhile. */
export interface ReadStart {
  generation: number
  at: number
}

export class CatalogCache<T> {
  private readonly entries = new Map<string, { value: T; expires: number; weight: number }>()
  private weight = 0
  private generation = 0

  /** `weigh` tells how many parts of MAX_WEIGHT a value takes. */
  constructor(
    private readonly ttlMs: number,
    private readonly weigh: (value: T) => number = () => 1,
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
    if (this.ttlMs === 0 || start.generation !== this.generation) return
    const weight = this.weigh(value)
    if (weight > MAX_WEIGHT) return
    this.drop(key)
    // The oldest stored go first.
    for (const oldest of this.entries.keys()) {
      if (this.weight + weight <= MAX_WEIGHT) break
      this.drop(oldest)
    }
    this.entries.set(key, { value, expires: start.at + this.ttlMs, weight })
    this.weight += weight
  }

  clear(): void {
    this.generation++
    this.entries.clear()
    this.weight = 0
  }

  private drop(key: string): void {
    const entry = this.entries.get(key)
    if (entry === undefined) return
    this.entries.delete(key)
    this.weight -= entry.weight
  }
}

/** An onSend hook for the routes that change what the caches show: any write among them empties them before answering. */
export function clearOnWrite(...caches: Pick<CatalogCache<unknown>, 'clear'>[]) {
  return (request: FastifyRequest, _reply: FastifyReply, payload: unknown, done: HookHandlerDoneFunction & ((error: Error | null, payload?: unknown) => void)) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') for (const cache of caches) cache.clear()
    done(null, payload)
  }
}
