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

/**
 * A filter's rows as a bitmap over the slots (bit `slot & 31` of word `slot >> 5`), and what it is
 * for: a row failing exactly one filter counts for that one's facet.
 */
interface Test {
  kind: 'term' | 'range' | 'price' | 'available' | 'sale'
  bits: Uint32Array
  /** Term tests: the prefix id of their terms. Range tests: their key id. */
  prefix?: number
  key?: number
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

/**
 * The bitmaps and slot lists of one answer, taken again by the next (an answer runs to its end
 * without awaiting): answers allocate none, which kept garbage collection at 5–7 % of the API's
 * time. Once the candidates are known, only their words are read and written (`within`): every
 * other bitmap of the answer is cut by them, and a category's rows fill a fraction of the words.
 */
class Scratch {
  /** The words an answer reads, in order, and how many. */
  private active = new Int32Array(0)
  private activeCount = 0
  private words = 0
  private readonly bitmaps: Uint32Array[] = []
  private readonly slotLists: Int32Array[] = []
  private bitmapsTaken = 0
  private slotListsTaken = 0

  /** Starts an answer over `words` words of slots, all of them read until `within`. */
  begin(words: number): void {
    this.words = words
    if (this.active.length < words) this.active = new Int32Array(words * 2)
    for (let w = 0; w < words; w++) this.active[w] = w
    this.activeCount = words
    this.bitmapsTaken = 0
    this.slotListsTaken = 0
  }

  /** From now on, reads only the words holding one of these rows. */
  within(candidates: Uint32Array): void {
    let count = 0
    for (let w = 0; w < this.words; w++) if (candidates[w] !== 0) this.active[count++] = w
    this.activeCount = count
  }

  /** A bitmap of no rows. */
  none(): Uint32Array {
    let bits = this.bitmaps[this.bitmapsTaken]
    if (bits === undefined || bits.length < this.words) this.bitmaps[this.bitmapsTaken] = bits = new Uint32Array(this.words * 2)
    this.bitmapsTaken++
    const { active, activeCount } = this
    for (let k = 0; k < activeCount; k++) bits[active[k]!] = 0
    return bits
  }

  copy(of: Uint32Array): Uint32Array {
    const bits = this.none()
    const { active, activeCount } = this
    for (let k = 0; k < activeCount; k++) bits[active[k]!] = of[active[k]!]!
    return bits
  }

  union(a: Uint32Array, b: Uint32Array): Uint32Array {
    const bits = this.none()
    const { active, activeCount } = this
    for (let k = 0; k < activeCount; k++) bits[active[k]!] = a[active[k]!]! | b[active[k]!]!
    return bits
  }

  /** The rows of `among` not in `bits`. */
  without(among: Uint32Array, bits: Uint32Array): Uint32Array {
    const out = this.none()
    const { active, activeCount } = this
    for (let k = 0; k < activeCount; k++) out[active[k]!] = among[active[k]!]! & ~bits[active[k]!]!
    return out
  }

  /** Zeroes the words the answer does not read: `bits` is then read by slots beyond the candidates' words (a term's rows across the catalog). */
  complete(bits: Uint32Array): Uint32Array {
    let k = 0
    for (let w = 0; w < this.words; w++) {
      if (k < this.activeCount && this.active[k] === w) k++
      else bits[w] = 0
    }
    return bits
  }

  /** Keeps in `into` the rows also in `bits` (or, `negated`, not in it). */
  keep(into: Uint32Array, bits: Uint32Array, negated = false): void {
    const { active, activeCount } = this
    const flip = negated ? -1 : 0
    for (let k = 0; k < activeCount; k++) into[active[k]!]! &= bits[active[k]!]! ^ flip
  }

  /**
   * Adds a filter to a running tally of the rows failing none of the filters so far and those
   * failing exactly one.
   */
  tally(failingNone: Uint32Array, failingOne: Uint32Array, bits: Uint32Array): void {
    const { active, activeCount } = this
    for (let k = 0; k < activeCount; k++) {
      const w = active[k]!
      failingOne[w] = (failingOne[w]! & bits[w]!) | (failingNone[w]! & ~bits[w]!)
      failingNone[w]! &= bits[w]!
    }
  }

  count(bits: Uint32Array): number {
    const { active, activeCount } = this
    let count = 0
    for (let k = 0; k < activeCount; k++) count += bitCount(bits[active[k]!]!)
    return count
  }

  /** How many rows are in both. */
  countBoth(a: Uint32Array, b: Uint32Array): number {
    const { active, activeCount } = this
    let count = 0
    for (let k = 0; k < activeCount; k++) count += bitCount(a[active[k]!]! & b[active[k]!]!)
    return count
  }

  /** The slots whose bits are set, in order. */
  slots(bits: Uint32Array): Int32Array {
    const count = this.count(bits)
    let list = this.slotLists[this.slotListsTaken]
    if (list === undefined || list.length < count) this.slotLists[this.slotListsTaken] = list = new Int32Array(Math.max(count, this.words * 32))
    this.slotListsTaken++
    const { active, activeCount } = this
    let at = 0
    for (let k = 0; k < activeCount; k++) {
      const w = active[k]!
      let word = bits[w]!
      while (word !== 0) {
        const low = word & -word
        list[at++] = (w << 5) + 31 - Math.clz32(low)
        word ^= low
      }
    }
    return list.subarray(0, count)
  }
}

export class ListingIndex {
  /** Each row's slot; a slot's product id ('' when free). */
  private readonly slots = new Map<string, number>()
  private ids: string[] = []
  private readonly freeSlots: number[] = []
  /** Bitmaps over the slots: rows held, rows sellable now, rows on sale. */
  private live = new Uint32Array(1024 >> 5)
  private available = new Uint32Array(1024 >> 5)
  private onSale = new Uint32Array(1024 >> 5)
  /** Major units of its currency, as the SQL's price filter and facet read it. */
  private price = new Float64Array(1024)
  private sold = new Float64Array(1024)
  /** The first 12 hex digits of each row's id as a number: ordered as the ids are, compared before them. */
  private idHead = new Float64Array(1024)
  /** Each row's place in the title sort; valid while no title came or changed since they were read. */
  private titleRank = new Float64Array(1024)
  private titleKeys: string[] = []
  private ranksValid = false
  private ranking: Promise<void> | null = null
  /**
   * Each term's rows, made when first needed after a row's terms changed (postingsOf). A dropped
   * row's slot stays in them until the slot is taken again: every answer cuts them by the live
   * candidates.
   */
  private postings: Int32Array[] | null = null
  private termStart = new Int32Array(1024)
  private termEnd = new Int32Array(1024)
  /** How many of a row's terms (the first of its run) are facet values: a number or date attribute's are counted as ranges instead. */
  private facetTerms = new Int32Array(1024)
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
  private readonly scratch = new Scratch()
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
      const kept = new Set(changes.rows.map((row) => row.id))
      for (const id of changes.changed) {
        const slot = this.slots.get(id)
        if (slot !== undefined) for (const members of this.byCollection.values()) members.delete(slot)
        // A row still public is written again in its slot (put).
        if (!kept.has(id)) this.drop(id)
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
    const numberPrefixes = Object.keys(source.numbers).map((key) => `attr:${key}:`)
    const isNumber = (term: string) => numberPrefixes.some((prefix) => term.startsWith(prefix))
    const facetTerms = source.terms.filter((term) => !isNumber(term))
    const termIds = [...facetTerms, ...source.terms.filter(isNumber)].map((term) => this.termId(term))
    const sameTerms = before !== undefined && sameRun(this.terms.pool, this.termStart[before]!, this.termEnd[before]!, termIds)
    this.drop(source.id)
    const slot = this.freeSlots.pop() ?? this.ids.length
    if (slot === this.ids.length) {
      this.ids.push('')
      this.titleKeys.push('')
      this.rowCategories.push(null)
      if (slot >= this.price.length) this.grow()
    }
    // A row written again with its terms, as stock, prices and sales move it, keeps the postings.
    if (!sameTerms || slot !== before) this.postings = null
    this.ids[slot] = source.id
    this.titleKeys[slot] = source.titleKey
    this.slots.set(source.id, slot)
    setBit(this.live, slot, true)
    setBit(this.available, slot, source.available)
    setBit(this.onSale, slot, source.onSale)
    this.price[slot] = source.priceMinor / 10 ** currencyExponent(source.currency)
    this.sold[slot] = source.sold
    this.idHead[slot] = Number.parseInt(source.id.slice(0, 8) + source.id.slice(9, 13), 16)
    this.facetTerms[slot] = facetTerms.length
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
    this.ids[slot] = ''
    setBit(this.live, slot, false)
    this.terms.live -= this.termEnd[slot]! - this.termStart[slot]!
    this.numberKeyIds.live -= this.numberEnd[slot]! - this.numberStart[slot]!
    this.numberValues.live -= this.numberEnd[slot]! - this.numberStart[slot]!
    for (const category of this.rowCategories[slot] ?? []) this.byCategory.get(category)?.delete(slot)
    this.rowCategories[slot] = null
    this.freeSlots.push(slot)
  }

  private grow(): void {
    const size = this.price.length * 2
    const grown = <A extends Uint32Array | Int32Array | Float64Array>(array: A, make: (size: number) => A): A => {
      const next = make(size)
      next.set(array as never)
      return next
    }
    const bitmap = (n: number) => new Uint32Array(n >> 5)
    this.live = grown(this.live, bitmap)
    this.available = grown(this.available, bitmap)
    this.onSale = grown(this.onSale, bitmap)
    this.price = grown(this.price, (n) => new Float64Array(n))
    this.sold = grown(this.sold, (n) => new Float64Array(n))
    this.idHead = grown(this.idHead, (n) => new Float64Array(n))
    this.titleRank = grown(this.titleRank, (n) => new Float64Array(n))
    this.termStart = grown(this.termStart, (n) => new Int32Array(n))
    this.termEnd = grown(this.termEnd, (n) => new Int32Array(n))
    this.facetTerms = grown(this.facetTerms, (n) => new Int32Array(n))
    this.numberStart = grown(this.numberStart, (n) => new Int32Array(n))
    this.numberEnd = grown(this.numberEnd, (n) => new Int32Array(n))
  }

  /** Rewrites the runs' pools once more than half of them is left behind by rows written again. */
  private compact(): void {
    if (this.terms.used > 2 * this.terms.live + (1 << 16)) {
      const pool = this.terms.pool
      const runs = new Runs((size) => new Int32Array(size))
      for (let slot = 0; slot < this.ids.length; slot++) {
        if (!hasBit(this.live, slot)) continue
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
        if (!hasBit(this.live, slot)) continue
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

  /** The rows a list starts from: a category's (its descendants' included), a collection's, or every row. */
  private candidates(filter: ListingFilter): Uint32Array {
    if (filter.category === null && filter.collection === null) return this.scratch.copy(this.live)
    const bits = this.scratch.none()
    const category = filter.category === null ? undefined : this.categoryIds.get(filter.category)
    const inCategory = filter.category === null ? null : ((category === undefined ? undefined : this.byCategory.get(category)) ?? new Set<number>())
    if (filter.collection !== null) {
      for (const slot of this.byCollection.get(filter.collection)?.keys() ?? []) if (inCategory === null || inCategory.has(slot)) setBit(bits, slot, true)
    } else {
      for (const slot of inCategory!) setBit(bits, slot, true)
    }
    return bits
  }

  /** Each term's rows (slots), rebuilt after rows changed. */
  private postingsOf(): Int32Array[] {
    if (this.postings && this.postings.length === this.termTexts.length) return this.postings
    const sizes = new Int32Array(this.termTexts.length)
    const pool = this.terms.pool
    for (let slot = 0; slot < this.ids.length; slot++) {
      if (!hasBit(this.live, slot)) continue
      for (let i = this.termStart[slot]!, end = this.termEnd[slot]!; i < end; i++) sizes[pool[i]!]!++
    }
    const postings = Array.from(sizes, (size) => new Int32Array(size))
    const filled = new Int32Array(this.termTexts.length)
    for (let slot = 0; slot < this.ids.length; slot++) {
      if (!hasBit(this.live, slot)) continue
      for (let i = this.termStart[slot]!, end = this.termEnd[slot]!; i < end; i++) {
        const term = pool[i]!
        postings[term]![filled[term]!++] = slot
      }
    }
    this.postings = postings
    return postings
  }

  /**
   * Each filter's bitmap: terms from their rows, flags as kept. Numbers are tested only on the
   * candidates that fail at most one of those (without facets: none), the only rows any answer
   * reads: a row failing two filters is in no page and counts for no facet.
   */
  private testsOf(filter: ListingFilter, candidates: Uint32Array, withFacets: boolean): Test[] {
    const { scratch } = this
    const tests: Test[] = []
    const { numberStart, numberEnd, price } = this
    const keyPool = this.numberKeyIds.pool
    const valuePool = this.numberValues.pool
    if (filter.terms.length > 0) {
      const postings = this.postingsOf()
      for (const group of filter.terms) {
        const bits = scratch.none()
        for (const term of group.terms) {
          const id = this.termIds.get(term)
          if (id !== undefined) for (const slot of postings[id]!) bits[slot >>> 5]! |= 1 << (slot & 31)
        }
        // A prefix no row has (-1) has no terms to count: read, not made, as the request names it.
        tests.push({ kind: 'term', prefix: this.prefixIds.get(group.prefix) ?? -1, bits })
      }
    }
    if (filter.available !== null) tests.push({ kind: 'available', bits: filter.available ? this.available : scratch.without(this.live, this.available) })
    if (filter.onSale !== null) tests.push({ kind: 'sale', bits: filter.onSale ? this.onSale : scratch.without(this.live, this.onSale) })
    const failingNone = scratch.copy(candidates)
    const failingOne = scratch.none()
    for (const test of tests) scratch.tally(failingNone, failingOne, test.bits)
    const testedSlots = filter.ranges.length > 0 || filter.price ? scratch.slots(withFacets ? scratch.union(failingNone, failingOne) : failingNone) : []
    for (const range of filter.ranges) {
      const key = this.keyIds.get(range.key) ?? -1
      const min = range.min ?? -Infinity
      const max = range.max ?? Infinity
      const bits = scratch.none()
      for (const slot of testedSlots) {
        for (let i = numberStart[slot]!, end = numberEnd[slot]!; i < end; i++) {
          if (keyPool[i] === key && valuePool[i]! >= min && valuePool[i]! <= max) {
            bits[slot >>> 5]! |= 1 << (slot & 31)
            break
          }
        }
      }
      tests.push({ kind: 'range', key, bits })
    }
    if (filter.price) {
      const min = filter.price.min ?? -Infinity
      const max = filter.price.max ?? Infinity
      const bits = scratch.none()
      for (const slot of testedSlots) if (price[slot]! >= min && price[slot]! <= max) bits[slot >>> 5]! |= 1 << (slot & 31)
      tests.push({ kind: 'price', bits })
    }
    return tests
  }

  /**
   * A page of the rows passing every filter in the sort's order with their total (null in a sort
   * it does not order by), and, asked for, the facets as listingFacets counts them (disjunctive:
   * each filter's own counts ignore it). Word by word, the candidates and the filters' bitmaps give
   * the rows passing all and, per filter, those failing only it; the counts of a filter's own terms
   * are then read from those rows, or from the terms' rows when that reads less.
   */
  answer(filter: ListingFilter, sort: ListingSort, window: ListingWindow, withFacets: boolean): { page: ListingPage | null; facets: ListingFacets | null } {
    const paging = SORTS.has(sort) && window.after === null
    const { scratch } = this
    scratch.begin((this.ids.length + 31) >>> 5)
    const candidates = this.candidates(filter)
    scratch.within(candidates)
    const tests = this.testsOf(filter, candidates, withFacets)
    const passing = scratch.copy(candidates)
    for (const test of tests) scratch.keep(passing, test.bits)
    const passingSlots = scratch.slots(passing)
    const total = passingSlots.length
    const page: ListingPage | null = paging ? { rows: this.pageOf(passingSlots, filter, sort, window), total } : null
    if (!withFacets) return { page, facets: null }

    /** The rows failing only test i: passing every other, failing it. */
    const failingOnly = tests.map((test, i) => {
      const bits = scratch.copy(candidates)
      tests.forEach((other, j) => {
        if (j !== i) scratch.keep(bits, other.bits)
      })
      scratch.keep(bits, test.bits, true)
      return bits
    })
    /** The rows counting for a facet of this kind: passing all, or failing only its filter. */
    const countingFor = (kind: Test['kind']) => {
      const at = tests.findIndex((test) => test.kind === kind)
      return at === -1 ? passing : scratch.union(passing, failingOnly[at]!)
    }
    const available = scratch.countBoth(countingFor('available'), this.available)
    const onSale = scratch.countBoth(countingFor('sale'), this.onSale)
    let priceMin = Infinity
    let priceMax = -Infinity
    const price = this.price
    for (const slot of scratch.slots(countingFor('price'))) {
      if (price[slot]! < priceMin) priceMin = price[slot]!
      if (price[slot]! > priceMax) priceMax = price[slot]!
    }
    const rangeMin = new Float64Array(this.keyTexts.length).fill(Infinity)
    const rangeMax = new Float64Array(this.keyTexts.length).fill(-Infinity)
    const { numberStart, numberEnd } = this
    const keyPool = this.numberKeyIds.pool
    const valuePool = this.numberValues.pool
    /** Widens the ranges by these rows' values (of one key only, or all: -1). */
    const widen = (rows: Int32Array, only: number) => {
      for (const slot of rows) {
        for (let i = numberStart[slot]!, end = numberEnd[slot]!; i < end; i++) {
          const key = keyPool[i]!
          if (only !== -1 && key !== only) continue
          if (valuePool[i]! < rangeMin[key]!) rangeMin[key] = valuePool[i]!
          if (valuePool[i]! > rangeMax[key]!) rangeMax[key] = valuePool[i]!
        }
      }
    }
    widen(passingSlots, -1)
    tests.forEach((test, i) => {
      if (test.kind === 'range') widen(scratch.slots(failingOnly[i]!), test.key!)
    })

    const counts = new Int32Array(this.termTexts.length)
    const prefixes = this.termPrefixes
    const termPool = this.terms.pool
    const { termStart, termEnd, facetTerms } = this
    /** Adds the terms of these rows (of one prefix only, or all facet values: -1). */
    const countRows = (rows: Int32Array, only: number) => {
      for (const slot of rows) {
        for (let i = termStart[slot]!, end = only === -1 ? i + facetTerms[slot]! : termEnd[slot]!; i < end; i++) {
          const term = termPool[i]!
          if (only === -1 || prefixes[term] === only) counts[term]!++
        }
      }
    }
    countRows(passingSlots, -1)
    // A term filter's own terms also count the rows failing only it: read from those rows, or,
    // when they are many, from the terms' rows across the catalog, whichever reads less.
    const postings = tests.some((test) => test.kind === 'term') ? this.postingsOf() : []
    tests.forEach((test, i) => {
      const rows = failingOnly[i]!
      if (test.kind !== 'term') return
      const failing = scratch.count(rows)
      if (failing === 0) return
      const own = this.prefixTerms(test.prefix!)
      if (own.length === 0) return
      let across = 0
      for (const term of own) across += postings[term]!.length
      if (failing * AVERAGE_TERMS <= across) return countRows(scratch.slots(rows), test.prefix!)
      const counting = scratch.complete(scratch.union(passing, rows))
      for (const term of own) {
        let count = 0
        for (const slot of postings[term]!) if (hasBit(counting, slot)) count++
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

  /** The first offset + limit of these slots in the sort's order (kept in a bounded heap, its worst on top), from the offset on. */
  private pageOf(slots: Int32Array, filter: ListingFilter, sort: ListingSort, window: ListingWindow): ListingPage['rows'] {
    const { ids, idHead } = this
    const members = filter.collection === null ? null : this.byCollection.get(filter.collection)
    const column = sort === 'price_asc' || sort === 'price_desc' ? this.price : sort === 'best_selling' ? this.sold : sort === 'title' ? this.titleRank : null
    const keyOf = column !== null ? (slot: number) => column[slot]! : sort === 'manual' ? (slot: number) => members?.get(slot) ?? 0 : null
    const descending = sort === 'newest' || sort === 'price_desc' || sort === 'best_selling'
    /** Whether slot a comes before slot b. */
    const before = (a: number, b: number) => {
      const keyA = keyOf === null ? 0 : keyOf(a)
      const keyB = keyOf === null ? 0 : keyOf(b)
      const order = keyA !== keyB ? (keyA < keyB ? -1 : 1) : idHead[a] !== idHead[b] ? (idHead[a]! < idHead[b]! ? -1 : 1) : ids[a]! < ids[b]! ? -1 : ids[a]! > ids[b]! ? 1 : 0
      return descending ? order > 0 : order < 0
    }
    const wanted = window.offset + window.limit
    const heap: number[] = []
    const worse = (a: number, b: number) => before(heap[b]!, heap[a]!)
    // Slots are mostly taken in the order products came, so a descending sort (ties: newest first)
    // reads from the end: read from the start, nearly every row would displace the heap's worst.
    for (let at = 0; at < slots.length; at++) {
      const slot = slots[descending ? slots.length - 1 - at : at]!
      if (heap.length < wanted) {
        heap.push(slot)
        siftUp(heap, heap.length - 1, worse)
      } else if (before(slot, heap[0]!)) {
        heap[0] = slot
        siftDown(heap, 0, worse)
      }
    }
    const ordered = heap.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0)).slice(window.offset)
    return ordered.map((slot) => ({ id: ids[slot]!, key: [keyOf === null ? null : keyOf(slot), ids[slot]!] as ListingKey, price: null, onSale: null }))
  }
}

/** Whether pool[start, end) holds exactly these values. */
function sameRun(pool: Int32Array, start: number, end: number, values: number[]): boolean {
  if (end - start !== values.length) return false
  for (let i = 0; i < values.length; i++) if (pool[start + i] !== values[i]) return false
  return true
}

function hasBit(bits: Uint32Array, slot: number): boolean {
  return (bits[slot >>> 5]! & (1 << (slot & 31))) !== 0
}

function setBit(bits: Uint32Array, slot: number, on: boolean): void {
  if (on) bits[slot >>> 5]! |= 1 << (slot & 31)
  else bits[slot >>> 5]! &= ~(1 << (slot & 31))
}

function bitCount(word: number): number {
  let x = word - ((word >>> 1) & 0x55555555)
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333)
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24
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
