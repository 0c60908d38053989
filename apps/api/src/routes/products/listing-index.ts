/**
 * The public listing in memory (docs/catalog.md, "Filters, sorting and facets"): every public
 * product's listing row, with its collections, so that a storefront's filtered page, its total
 * and its facet counts are worked out here instead of by a statement that scans every matching
 * row (a department's facets cost 60–90 ms in PostgreSQL, the whole catalog's 250–550 ms).
 *
 * Exact, not a cache: before answering, the index reads the products whose rows changed since
 * the snapshot it last read (listing_changes, @commerce/db sql/listing-index.ts) and takes their
 * rows again, so an answer counts what was committed before it began, as a statement would.
 * It counts the public rows without a market or a search, and cuts their pages too in page mode
 * (titles in the order the database's collation gives them, read again after a title came or
 * changed); the rest is listing.ts's statements'.
 */
import { currencyExponent } from '@commerce/domain'
import { readListingChanges, readListingIndex, readTitleOrder, type IndexedListingRow, type ListingChangesRead, type ListingFacets, type ListingFilter, type ListingIndexRead, type ListingKey, type ListingPage, type ListingSort, type ListingWindow } from '@commerce/db'
import type postgres from 'postgres'

/** A look older than this reads the whole index again: listing_changes keeps an hour. */
const FULL_READ_AFTER_MS = 30 * 60_000

/** About how many terms a row has: what reading a row's terms costs against reading a term's rows. */
const AVERAGE_TERMS = 10

/** Bits of `flags`. */
const LIVE = 1
const AVAILABLE = 2
const ON_SALE = 4

/** The sorts the index orders by (titles by ranks read from the database, in its collation). */
const SORTS: ReadonlySet<ListingSort> = new Set(['newest', 'title', 'price_asc', 'price_desc', 'best_selling', 'manual'])

/** Whether the index counts this list's total and facets: the public rows, without a market or a search. */
export function indexCounts(filter: Pick<ListingFilter, 'includeInactive' | 'status' | 'search' | 'currency'>): boolean {
  return !filter.includeInactive && filter.status === null && filter.search === null && filter.currency === null
}

/** Whether it also cuts the page: in page mode, in a sort it orders by. */
export function indexPages(filter: ListingFilter, sort: ListingSort, window: ListingWindow): boolean {
  return indexCounts(filter) && window.after === null && SORTS.has(sort)
}

/** A filter's test of a row (by its slot), and what it is for (a row failing exactly one counts for that one's facet). */
interface Test {
  kind: 'term' | 'range' | 'price' | 'available' | 'sale'
  passes(slot: number): boolean
  /** Term tests: the prefix id of their terms. Range tests: their key id. */
  prefix?: number
  key?: number
}

interface Entry {
  key: number | null
  id: string
}

/**
 * Integers appended to a pool, each row's run found by its start and end: rows written again
 * leave their old run behind, and the pool is rewritten when more than half of it is left behind.
 */
class Runs<A extends Int32Array | Float64Array> {
  pool: A
  used = 0
  live = 0
  constructor(private readonly make: (size: number) => A) {
    this.pool = make(1 << 16)
  }
  /** Appends values, returns where they start. */
  append(values: ArrayLike<number>): number {
    if (this.used + values.length > this.pool.length) {
      const grown = this.make(Math.max(this.pool.length * 2, this.used + values.length))
      grown.set(this.pool.subarray(0, this.used) as never)
      this.pool = grown
    }
    const start = this.used
    for (let i = 0; i < values.length; i++) this.pool[start + i] = values[i]!
    this.used += values.length
    this.live += values.length
    return start
  }
}

export class ListingIndex {
  /** Each row's slot; a slot's product id ('' when free). */
  private readonly slots = new Map<string, number>()
  private ids: string[] = []
  private readonly freeSlots: number[] = []
  private flags = new Uint8Array(1024)
  /** Major units of its currency, as the SQL's price filter and facet read it. */
  private price = new Float64Array(1024)
  private sold = new Float64Array(1024)
  /** Each row's place in the title sort; valid while no title came or changed since they were read. */
  private titleRank = new Float64Array(1024)
  private titleKeys: string[] = []
  private ranksValid = false
  private ranking: Promise<void> | null = null
  /** Each term's rows, made when first needed after rows changed (postingsOf). */
  private postings: Int32Array[] | null = null
  private termStart = new Int32Array(1024)
  private termEnd = new Int32Array(1024)
  private readonly terms = new Runs((size) => new Int32Array(size))
  private numberStart = new Int32Array(1024)
  private numberEnd = new Int32Array(1024)
  private readonly numberKeyIds = new Runs((size) => new Int32Array(size))
  private readonly numberValues = new Runs((size) => new Float64Array(size))
  /** Each row's categories (ids of categoryIds), for taking it out of them again. */
  private rowCategories: (Int32Array | null)[] = []
  private readonly categoryIds = new Map<string, number>()
  private readonly byCategory = new Map<number, Set<number>>()
  /** Each collection's rows (slots) with their positions. */
  private readonly byCollection = new Map<string, Map<number, number>>()
  private readonly termIds = new Map<string, number>()
  private readonly termTexts: string[] = []
  /** Each term's prefix id (`tag:`, `opt:size:`, `attr:material:`). */
  private readonly termPrefixes: number[] = []
  private readonly prefixIds = new Map<string, number>()
  private readonly keyIds = new Map<string, number>()
  private readonly keyTexts: string[] = []
  private numberKeys = new Set<string>()
  private snapshot: string | null = null
  /** The catalog revision at the last look, and what was read by name while it held (remembered). */
  private revision: string | null = null
  private readonly byName = new Map<string, unknown>()
  /** Facet labels by term: written once, with the term's first listing row (facet_labels), so never stale. */
  private readonly labels = new Map<string, string>()
  private lookedAt = 0
  private looking: Promise<void> | null = null
  private nextLook: Promise<void> | null = null

  constructor(private readonly sql: postgres.Sql) {}

  /**
   * Brings the index up to what is committed now: a request calls it before reading. Calls that
   * come while a look runs share the next one, which begins after it (it must see their writes).
   */
  current(): Promise<void> {
    if (!this.looking) {
      this.looking = this.look().finally(() => (this.looking = null))
      return this.looking
    }
    this.nextLook ??= this.looking.then(() => {
      this.nextLook = null
      return this.current()
    })
    return this.nextLook
  }

  /**
   * What `read` answers for `name` (a category or collection by slug, the attribute definitions),
   * read once per catalog revision: every change of those moves it, and a look (which a request
   * makes before asking) sees the move and forgets them.
   */
  async remembered<T>(name: string, read: () => Promise<T>): Promise<T> {
    if (this.byName.has(name)) return this.byName.get(name) as T
    const revision = this.revision
    const found = await read()
    if (revision !== null && this.revision === revision) this.byName.set(name, found)
    return found
  }

  /** The facet labels of these terms, those not seen yet read with `read` (a term without one is asked again). */
  async labelsOf(terms: string[], read: (terms: string[]) => Promise<Map<string, string>>): Promise<Map<string, string>> {
    const missing = terms.filter((term) => !this.labels.has(term))
    if (missing.length > 0) for (const [term, label] of await read(missing)) this.labels.set(term, label)
    const labels = new Map<string, string>()
    for (const term of terms) {
      const label = this.labels.get(term)
      if (label !== undefined) labels.set(term, label)
    }
    return labels
  }

  /** Reads the title ranks again when a title came or changed since (before a title-sorted page). */
  titlesRanked(): Promise<void> {
    if (this.ranksValid) return Promise.resolve()
    this.ranking ??= (async () => {
      const order = await readTitleOrder(this.sql)
      // Read after the index's last look: every row it holds is in the order (a row added since the
      // look is not in the index, and is skipped).
      const ranked = new Uint8Array(this.ids.length)
      order.forEach((id, rank) => {
        const slot = this.slots.get(id)
        if (slot === undefined) return
        this.titleRank[slot] = rank
        ranked[slot] = 1
      })
      this.ranksValid = this.ids.every((id, slot) => id === '' || ranked[slot] === 1)
    })().finally(() => (this.ranking = null))
    return this.ranking
  }

  private async look(): Promise<void> {
    if (this.snapshot === null || Date.now() - this.lookedAt > FULL_READ_AFTER_MS) {
      const read = await readListingIndex(this.sql)
      this.lookedAt = Date.now()
      this.replace(read)
      return
    }
    const startedAt = Date.now()
    const changes = await readListingChanges(this.sql, this.snapshot)
    this.lookedAt = startedAt
    this.apply(changes)
  }

  private replace(read: ListingIndexRead): void {
    for (const id of [...this.slots.keys()]) this.drop(id)
    for (const members of this.byCollection.values()) members.clear()
    this.numberKeys = new Set(read.numberKeys)
    for (const row of read.rows) this.put(row)
    for (const { collectionId, productId, position } of read.memberships) this.member(collectionId, productId, position)
    this.compact()
    this.snapshot = read.snapshot
    this.revisionSeen(read.revision)
  }

  private revisionSeen(revision: string): void {
    if (revision !== this.revision) this.byName.clear()
    this.revision = revision
  }

  private apply(changes: ListingChangesRead): void {
    if (changes.changed.length > 0) {
      this.numberKeys = new Set(changes.numberKeys)
      for (const id of changes.changed) {
        const slot = this.slots.get(id)
        if (slot !== undefined) for (const members of this.byCollection.values()) members.delete(slot)
        this.drop(id)
      }
      for (const row of changes.rows) this.put(row)
      for (const { collectionId, productId, position } of changes.memberships) this.member(collectionId, productId, position)
      this.compact()
    }
    this.snapshot = changes.snapshot
    this.revisionSeen(changes.revision)
  }

  private member(collectionId: string, productId: string, position: number): void {
    const slot = this.slots.get(productId)
    if (slot === undefined) return
    let members = this.byCollection.get(collectionId)
    if (!members) this.byCollection.set(collectionId, (members = new Map()))
    members.set(slot, position)
  }

  private put(source: IndexedListingRow): void {
    const before = this.slots.get(source.id)
    // A new row, or a new title, has no rank until the ranks are read again.
    if (before === undefined || this.titleKeys[before] !== source.titleKey) this.ranksValid = false
    this.drop(source.id)
    const slot = this.freeSlots.pop() ?? this.ids.length
    if (slot === this.ids.length) {
      this.ids.push('')
      this.titleKeys.push('')
      this.rowCategories.push(null)
      if (slot >= this.flags.length) this.grow()
    }
    this.postings = null
    this.ids[slot] = source.id
    this.titleKeys[slot] = source.titleKey
    this.slots.set(source.id, slot)
    this.flags[slot] = LIVE | (source.available ? AVAILABLE : 0) | (source.onSale ? ON_SALE : 0)
    this.price[slot] = source.priceMinor / 10 ** currencyExponent(source.currency)
    this.sold[slot] = source.sold
    const termIds = source.terms.map((term) => this.termId(term))
    this.termStart[slot] = this.terms.append(termIds)
    this.termEnd[slot] = this.termStart[slot]! + termIds.length
    const keys: number[] = []
    const values: number[] = []
    for (const key in source.numbers) {
      for (const value of source.numbers[key]!) {
        keys.push(this.keyId(key))
        values.push(value)
      }
    }
    this.numberStart[slot] = this.numberKeyIds.append(keys)
    this.numberValues.append(values)
    this.numberEnd[slot] = this.numberStart[slot]! + keys.length
    const categories = Int32Array.from(source.categoryIds, (id) => {
      let category = this.categoryIds.get(id)
      if (category === undefined) this.categoryIds.set(id, (category = this.categoryIds.size))
      return category
    })
    this.rowCategories[slot] = categories
    for (const category of categories) {
      let slots = this.byCategory.get(category)
      if (!slots) this.byCategory.set(category, (slots = new Set()))
      slots.add(slot)
    }
  }

  private drop(id: string): void {
    const slot = this.slots.get(id)
    if (slot === undefined) return
    this.slots.delete(id)
    this.postings = null
    this.ids[slot] = ''
    this.flags[slot] = 0
    this.terms.live -= this.termEnd[slot]! - this.termStart[slot]!
    this.numberKeyIds.live -= this.numberEnd[slot]! - this.numberStart[slot]!
    this.numberValues.live -= this.numberEnd[slot]! - this.numberStart[slot]!
    for (const category of this.rowCategories[slot] ?? []) this.byCategory.get(category)?.delete(slot)
    this.rowCategories[slot] = null
    this.freeSlots.push(slot)
  }

  private grow(): void {
    const size = this.flags.length * 2
    const grown = <A extends Uint8Array | Int32Array | Float64Array>(array: A, make: (size: number) => A): A => {
      const next = make(size)
      next.set(array as never)
      return next
    }
    this.flags = grown(this.flags, (n) => new Uint8Array(n))
    this.price = grown(this.price, (n) => new Float64Array(n))
    this.sold = grown(this.sold, (n) => new Float64Array(n))
    this.titleRank = grown(this.titleRank, (n) => new Float64Array(n))
    this.termStart = grown(this.termStart, (n) => new Int32Array(n))
    this.termEnd = grown(this.termEnd, (n) => new Int32Array(n))
    this.numberStart = grown(this.numberStart, (n) => new Int32Array(n))
    this.numberEnd = grown(this.numberEnd, (n) => new Int32Array(n))
  }

  /** Rewrites the runs' pools once more than half of them is left behind by rows written again. */
  private compact(): void {
    if (this.terms.used > 2 * this.terms.live + (1 << 16)) {
      const pool = this.terms.pool
      const runs = new Runs((size) => new Int32Array(size))
      for (let slot = 0; slot < this.ids.length; slot++) {
        if (!(this.flags[slot]! & LIVE)) continue
        const start = runs.append(pool.subarray(this.termStart[slot]!, this.termEnd[slot]!))
        this.termEnd[slot] = start + this.termEnd[slot]! - this.termStart[slot]!
        this.termStart[slot] = start
      }
      Object.assign(this.terms, { pool: runs.pool, used: runs.used, live: runs.live })
    }
    if (this.numberKeyIds.used > 2 * this.numberKeyIds.live + (1 << 16)) {
      const [keys, values] = [this.numberKeyIds.pool, this.numberValues.pool]
      const keyRuns = new Runs((size) => new Int32Array(size))
      const valueRuns = new Runs((size) => new Float64Array(size))
      for (let slot = 0; slot < this.ids.length; slot++) {
        if (!(this.flags[slot]! & LIVE)) continue
        const start = keyRuns.append(keys.subarray(this.numberStart[slot]!, this.numberEnd[slot]!))
        valueRuns.append(values.subarray(this.numberStart[slot]!, this.numberEnd[slot]!))
        this.numberEnd[slot] = start + this.numberEnd[slot]! - this.numberStart[slot]!
        this.numberStart[slot] = start
      }
      Object.assign(this.numberKeyIds, { pool: keyRuns.pool, used: keyRuns.used, live: keyRuns.live })
      Object.assign(this.numberValues, { pool: valueRuns.pool, used: valueRuns.used, live: valueRuns.live })
    }
  }

  private termId(term: string): number {
    let id = this.termIds.get(term)
    if (id === undefined) {
      id = this.termTexts.length
      this.termIds.set(term, id)
      this.termTexts.push(term)
      this.termPrefixes.push(this.prefixId(prefixOf(term)))
    }
    return id
  }

  /** The terms of a prefix. */
  private prefixTerms(prefix: number): number[] {
    const terms: number[] = []
    for (let term = 0; term < this.termPrefixes.length; term++) if (this.termPrefixes[term] === prefix) terms.push(term)
    return terms
  }

  private prefixId(prefix: string): number {
    let id = this.prefixIds.get(prefix)
    if (id === undefined) this.prefixIds.set(prefix, (id = this.prefixIds.size))
    return id
  }

  private keyId(key: string): number {
    let id = this.keyIds.get(key)
    if (id === undefined) {
      this.keyIds.set(key, (id = this.keyTexts.length))
      this.keyTexts.push(key)
    }
    return id
  }

  /** Calls `visit` with each slot a list starts from: a category's (its descendants' included), a collection's, or every row's. */
  private eachCandidate(filter: ListingFilter, visit: (slot: number) => void): void {
    const category = filter.category === null ? undefined : this.categoryIds.get(filter.category)
    const inCategory = filter.category === null ? null : ((category === undefined ? undefined : this.byCategory.get(category)) ?? new Set<number>())
    const members = filter.collection === null ? null : this.byCollection.get(filter.collection)
    if (filter.collection !== null) {
      for (const slot of members?.keys() ?? []) if (inCategory === null || inCategory.has(slot)) visit(slot)
    } else if (inCategory !== null) {
      for (const slot of inCategory) visit(slot)
    } else {
      const flags = this.flags
      for (let slot = 0, count = this.ids.length; slot < count; slot++) if (flags[slot]! & LIVE) visit(slot)
    }
  }

  /** Each term's rows (slots), rebuilt after rows changed. */
  private postingsOf(): Int32Array[] {
    if (this.postings && this.postings.length === this.termTexts.length) return this.postings
    const sizes = new Int32Array(this.termTexts.length)
    const pool = this.terms.pool
    for (let slot = 0; slot < this.ids.length; slot++) {
      if (!(this.flags[slot]! & LIVE)) continue
      for (let i = this.termStart[slot]!, end = this.termEnd[slot]!; i < end; i++) sizes[pool[i]!]!++
    }
    const postings = Array.from(sizes, (size) => new Int32Array(size))
    const filled = new Int32Array(this.termTexts.length)
    for (let slot = 0; slot < this.ids.length; slot++) {
      if (!(this.flags[slot]! & LIVE)) continue
      for (let i = this.termStart[slot]!, end = this.termEnd[slot]!; i < end; i++) {
        const term = pool[i]!
        postings[term]![filled[term]!++] = slot
      }
    }
    this.postings = postings
    return postings
  }

  private testsOf(filter: ListingFilter): Test[] {
    const tests: Test[] = []
    const { numberStart, numberEnd, flags, price } = this
    const keyPool = this.numberKeyIds.pool
    const valuePool = this.numberValues.pool
    if (filter.terms.length > 0) {
      const postings = this.postingsOf()
      for (const group of filter.terms) {
        // The rows holding any of the group's terms, marked from the terms' rows: a lookup per row.
        const hits = new Uint8Array(this.ids.length)
        for (const term of group.terms) {
          const id = this.termIds.get(term)
          if (id !== undefined) for (const slot of postings[id]!) hits[slot] = 1
        }
        tests.push({ kind: 'term', prefix: this.prefixId(group.prefix), passes: (slot) => hits[slot] === 1 })
      }
    }
    for (const range of filter.ranges) {
      const key = this.keyIds.get(range.key) ?? -1
      const min = range.min ?? -Infinity
      const max = range.max ?? Infinity
      tests.push({
        kind: 'range',
        key,
        passes: (slot) => {
          for (let i = numberStart[slot]!, end = numberEnd[slot]!; i < end; i++) if (keyPool[i] === key && valuePool[i]! >= min && valuePool[i]! <= max) return true
          return false
        },
      })
    }
    if (filter.price) {
      const min = filter.price.min ?? -Infinity
      const max = filter.price.max ?? Infinity
      tests.push({ kind: 'price', passes: (slot) => price[slot]! >= min && price[slot]! <= max })
    }
    if (filter.available !== null) {
      const wanted = filter.available
      tests.push({ kind: 'available', passes: (slot) => ((flags[slot]! & AVAILABLE) !== 0) === wanted })
    }
    if (filter.onSale !== null) {
      const wanted = filter.onSale
      tests.push({ kind: 'sale', passes: (slot) => ((flags[slot]! & ON_SALE) !== 0) === wanted })
    }
    return tests
  }

  /**
   * A page of the rows passing every filter in the sort's order with their total (null in a sort
   * it does not order by), and, asked for, the facets as listingFacets counts them (disjunctive:
   * each filter's own counts ignore it). One pass marks each row of the list: passing all (1),
   * failing only test i (2 + i), or neither (0); the counts of a filter's own terms are then read
   * from those terms' rows, the others' from the passing rows.
   */
  answer(filter: ListingFilter, sort: ListingSort, window: ListingWindow, withFacets: boolean): { page: ListingPage | null; facets: ListingFacets | null } {
    const paging = SORTS.has(sort) && window.after === null
    const tests = this.testsOf(filter)
    const { ids, price, sold, flags, numberStart, numberEnd } = this
    const keyPool = this.numberKeyIds.pool
    const valuePool = this.numberValues.pool
    const members = filter.collection === null ? null : this.byCollection.get(filter.collection)
    const titleRank = this.titleRank
    const keyOf = (slot: number): number | null =>
      sort === 'price_asc' || sort === 'price_desc'
        ? price[slot]!
        : sort === 'best_selling'
          ? sold[slot]!
          : sort === 'manual'
            ? (members?.get(slot) ?? 0)
            : sort === 'title'
              ? titleRank[slot]!
              : null
    const descending = sort === 'newest' || sort === 'price_desc' || sort === 'best_selling'
    const before = (a: Entry, b: Entry) => {
      const byKey = a.key === b.key ? 0 : (a.key ?? 0) < (b.key ?? 0) ? -1 : 1
      const order = byKey !== 0 ? byKey : a.id < b.id ? -1 : a.id > b.id ? 1 : 0
      return descending ? order > 0 : order < 0
    }
    // The first offset + limit in the sort's order, kept in a bounded heap (its worst on top).
    const wanted = paging ? window.offset + window.limit : 0
    const heap: Entry[] = []
    const worse = (a: number, b: number) => before(heap[b]!, heap[a]!)
    const state = withFacets ? new Int8Array(ids.length) : null
    const passing: number[] = []
    /** The rows failing only test i. */
    const failingOnly = tests.map((): number[] => [])
    const rangeMin = new Float64Array(this.keyTexts.length).fill(Infinity)
    const rangeMax = new Float64Array(this.keyTexts.length).fill(-Infinity)
    let available = 0
    let onSale = 0
    let priceMin = Infinity
    let priceMax = -Infinity
    this.eachCandidate(filter, (slot) => {
      let failed = -1
      let fails = 0
      for (let i = 0; i < tests.length; i++) {
        if (tests[i]!.passes(slot)) continue
        failed = i
        if (++fails > 1 || state === null) break
      }
      if (fails === 0) {
        passing.push(slot)
        if (wanted > 0) {
          const entry = { key: keyOf(slot), id: ids[slot]! }
          if (heap.length < wanted) {
            heap.push(entry)
            siftUp(heap, heap.length - 1, worse)
          } else if (before(entry, heap[0]!)) {
            heap[0] = entry
            siftDown(heap, 0, worse)
          }
        }
      }
      if (state === null || fails > 1) return
      state[slot] = fails === 0 ? 1 : 2 + failed
      if (fails === 1) failingOnly[failed]!.push(slot)
      const failedKind = fails === 0 ? null : tests[failed]!.kind
      const rowFlags = flags[slot]!
      if (rowFlags & AVAILABLE && (failedKind === null || failedKind === 'available')) available++
      if (rowFlags & ON_SALE && (failedKind === null || failedKind === 'sale')) onSale++
      if (failedKind === null || failedKind === 'price') {
        if (price[slot]! < priceMin) priceMin = price[slot]!
        if (price[slot]! > priceMax) priceMax = price[slot]!
      }
      if (failedKind === null || failedKind === 'range') {
        const only = failedKind === null ? -1 : tests[failed]!.key!
        for (let i = numberStart[slot]!, end = numberEnd[slot]!; i < end; i++) {
          const key = keyPool[i]!
          if (only !== -1 && key !== only) continue
          if (valuePool[i]! < rangeMin[key]!) rangeMin[key] = valuePool[i]!
          if (valuePool[i]! > rangeMax[key]!) rangeMax[key] = valuePool[i]!
        }
      }
    })
    const total = passing.length
    const ordered = heap.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0)).slice(window.offset)
    const page: ListingPage | null = paging ? { rows: ordered.map((entry) => ({ id: entry.id, key: [entry.key, entry.id] as ListingKey, price: null, onSale: null })), total } : null
    if (state === null) return { page, facets: null }

    const counts = new Int32Array(this.termTexts.length)
    const prefixes = this.termPrefixes
    const termPool = this.terms.pool
    const { termStart, termEnd } = this
    /** Adds the terms of these rows (of one prefix only, or all: -1). */
    const countRows = (slots: readonly number[], only: number) => {
      for (const slot of slots) {
        for (let i = termStart[slot]!, end = termEnd[slot]!; i < end; i++) {
          const term = termPool[i]!
          if (only === -1 || prefixes[term] === only) counts[term]!++
        }
      }
    }
    countRows(passing, -1)
    // A term filter's own terms also count the rows failing only it: read from those rows, or,
    // when they are many, from the terms' rows across the catalog, whichever reads less.
    const postings = tests.some((test) => test.kind === 'term') ? this.postingsOf() : []
    tests.forEach((test, i) => {
      if (test.kind !== 'term' || failingOnly[i]!.length === 0) return
      const own = this.prefixTerms(test.prefix!)
      let across = 0
      for (const term of own) across += postings[term]!.length
      if (failingOnly[i]!.length * AVERAGE_TERMS <= across) return countRows(failingOnly[i]!, test.prefix!)
      for (const term of own) {
        let count = 0
        for (const slot of postings[term]!) if (state[slot] === 1 || state[slot] === 2 + i) count++
        counts[term] = count
      }
    })
    const terms: ListingFacets['terms'] = []
    for (let term = 0; term < counts.length; term++) {
      const count = counts[term]!
      if (count === 0) continue
      const text = this.termTexts[term]!
      // A number or date attribute's facet is its range.
      if (text.startsWith('attr:') && this.numberKeys.has(text.split(':')[1]!)) continue
      terms.push({ term: text, count })
    }
    terms.sort((a, b) => (a.term < b.term ? -1 : a.term > b.term ? 1 : 0))
    const ranges: ListingFacets['ranges'] = []
    for (let key = 0; key < rangeMin.length; key++) if (rangeMin[key]! !== Infinity) ranges.push({ key: this.keyTexts[key]!, min: rangeMin[key]!, max: rangeMax[key]! })
    return { page, facets: { total, terms, available, onSale, price: priceMin === Infinity ? null : { min: priceMin, max: priceMax }, ranges } }
  }
}

/** The prefix a filter group gives its terms: `tag:`, `type:`, `vendor:`, `opt:<name>:`, `attr:<key>:`. */
function prefixOf(term: string): string {
  const first = term.indexOf(':')
  const kind = term.slice(0, first + 1)
  if (kind !== 'opt:' && kind !== 'attr:') return kind
  return term.slice(0, term.indexOf(':', first + 1) + 1)
}

function siftUp<T>(heap: T[], at: number, worse: (a: number, b: number) => boolean): void {
  while (at > 0) {
    const parent = (at - 1) >> 1
    if (!worse(at, parent)) return
    ;[heap[at], heap[parent]] = [heap[parent]!, heap[at]!]
    at = parent
  }
}

function siftDown<T>(heap: T[], at: number, worse: (a: number, b: number) => boolean): void {
  for (;;) {
    const left = 2 * at + 1
    const right = left + 1
    let top = at
    if (left < heap.length && worse(left, top)) top = left
    if (right < heap.length && worse(right, top)) top = right
    if (top === at) return
    ;[heap[at], heap[top]] = [heap[top]!, heap[at]!]
    at = top
  }
}
