/**
 * The two ways through every list: by page number (`?page=`, counted) and by cursor (`?after=`,
 * keyset from an opaque cursor that names the last row's place in the list's order; nothing
 * counted). Each list declares its order once (`keyset`) and both modes read it, so a walk by
 * cursor meets the rows of the page listing in the same order.
 */
import type { preValidationHookHandler } from 'fastify'
import { and, asc, desc, getTableColumns, sql, type InferSelectModel, type SQL, type SQLWrapper } from 'drizzle-orm'
import type { PgSelect, PgTable } from 'drizzle-orm/pg-core'
import type { Database } from '@commerce/db'
import { DEFAULT_PER_PAGE, type CursorMeta, type PageOrCursorMeta, type PaginationQuery } from '@commerce/domain'
import type { Static } from 'typebox'
import { invalidField } from './errors.js'
import { pageMeta } from './list-totals.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const MICROSECOND_TIME = /^(\d{4})-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/

function isTime(value: unknown): value is string {
  if (typeof value !== 'string') return false
  const match = MICROSECOND_TIME.exec(value)
  if (!match || Number(match[1]) < 1) return false
  // A date that does not exist (02-30, 25:00) comes back different, or not at all.
  const milliseconds = `${value.slice(0, 23)}Z`
  const date = new Date(milliseconds)
  return !Number.isNaN(date.getTime()) && date.toISOString() === milliseconds
}

/** What each kind of key part holds in a cursor (JSON), and the PostgreSQL type it is compared as. */
const KINDS = {
  uuid: { type: 'uuid', valid: (value: unknown) => typeof value === 'string' && UUID.test(value) },
  time: { type: 'timestamptz', valid: isTime },
  integer: { type: 'bigint', valid: (value: unknown) => Number.isSafeInteger(value) },
  // PostgreSQL's text takes no NUL and no lone surrogate: refused here, not a 500 there.
  text: { type: 'text', valid: (value: unknown) => typeof value === 'string' && value.isWellFormed() && !value.includes('\0') },
} as const
type KeyKind = keyof typeof KINDS
type KeyValue = string | number
interface KeyValues {
  uuid: string
  time: string
  integer: number
  text: string
}

export interface KeyPart<K extends KeyKind = KeyKind> {
  readonly kind: K
  readonly value: SQLWrapper
}

/** The parts of a list's order: columns or expressions of its rows, as the index that serves the order has them. */
export const key = {
  uuid: (value: SQLWrapper): KeyPart<'uuid'> => ({ kind: 'uuid', value }),
  /** Kept to the microsecond, as PostgreSQL prints it in UTC: a JavaScript Date would drop them and skip or repeat rows. */
  time: (value: SQLWrapper): KeyPart<'time'> => ({ kind: 'time', value }),
  integer: (value: SQLWrapper): KeyPart<'integer'> => ({ kind: 'integer', value }),
  text: (value: SQLWrapper): KeyPart<'text'> => ({ kind: 'text', value }),
}

type KeyOf<P extends readonly KeyPart[]> = { -readonly [I in keyof P]: P[I] extends KeyPart<infer K> ? KeyValues[K] : never }

export interface Keyset<P extends readonly KeyPart[] = readonly KeyPart[]> {
  /** ORDER BY of both modes. */
  readonly orderBy: SQL[]
  /** A row's key as its cursor holds it (JSON text): selected as `cursorKey` by the lists that `readList` pages. */
  readonly cursorKey: SQL<string>
  /** The key a cursor of this list holds; anything else (another list's cursor, an edited one) is a 400 naming `after`. */
  decode(text: string): KeyOf<P>
  /** The cursor of the row with this key. */
  encode(key: readonly KeyValue[]): string
  /** The rows after a cursor's place: undefined for the first page (`after=`); a 400 naming `after` for what is not a cursor of this list. */
  after(text: string): SQL | undefined
}

const notACursor = () =>
  invalidField('after', "Field 'after' is not a cursor of this list: send it empty for the first page, then the meta.next_cursor of the page before, unchanged")

/**
 * A list's order: `parts` in one direction, the last one (the id) unique, so that the order is
 * total and a cursor names one place. A cursor is base64url of JSON `[list, ...key]`, `list` the
 * list's name: opaque to clients, checked whole when it comes back (another list's is refused). The rows after it are a row comparison, which a
 * B-tree index on the same parts (after the list's equality filters) serves in either direction.
 */
export function keyset<const P extends readonly KeyPart[]>(list: string, direction: 'asc' | 'desc', parts: P): Keyset<P> {
  const values = sql.join(
    parts.map((part) => part.value),
    sql`, `,
  )
  const shown = parts.map((part) =>
    part.kind === 'time' ? sql`to_char(${part.value} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')` : sql`${part.value}`,
  )
  const decode = (text: string): KeyOf<P> => {
    // Canonical base64url only: any other character, or trailing bits, is not one of ours.
    const bytes = Buffer.from(text, 'base64url')
    if (bytes.toString('base64url') !== text) throw notACursor()
    let value: unknown
    try {
      value = JSON.parse(bytes.toString('utf8'))
    } catch {
      throw notACursor()
    }
    if (!Array.isArray(value) || value[0] !== list || value.length !== parts.length + 1) throw notACursor()
    const found = value.slice(1)
    if (!parts.every((part, index) => KINDS[part.kind].valid(found[index]))) throw notACursor()
    return found as KeyOf<P>
  }
  return {
    orderBy: parts.map((part) => (direction === 'asc' ? asc(part.value) : desc(part.value))),
    cursorKey: sql<string>`json_build_array(${sql.join(shown, sql`, `)})::text`,
    decode,
    encode: (found) => Buffer.from(JSON.stringify([list, ...found])).toString('base64url'),
    after(text) {
      if (text === '') return undefined
      const found = decode(text) as KeyValue[]
      const params = sql.join(
        parts.map((part, index) => sql`${found[index]}::${sql.raw(KINDS[part.kind].type)}`),
        sql`, `,
      )
      return sql`(${values}) ${sql.raw(direction === 'asc' ? '>' : '<')} (${params})`
    },
  }
}

/** A list request's paging: `page` and `per_page`, or `after`. */
export type PageQuery = Static<typeof PaginationQuery>
interface ListPage<Row> {
  rows: Row[]
  meta: Static<typeof PageOrCursorMeta>
}

/** The rows of a cursor page, read with a limit of `perPage + 1`: the extra row only says there is a next page. */
export function cursorPage<T>(keys: Keyset, rows: readonly T[], perPage: number, keyOf: (row: T) => readonly KeyValue[]): { rows: T[]; meta: Static<typeof CursorMeta> } {
  const page = rows.slice(0, perPage)
  const next = rows.length > perPage ? keys.encode(keyOf(page.at(-1)!)) : null
  return { rows: page, meta: { per_page: perPage, next_cursor: next } }
}

/** Which rows of its order a page is. */
export interface ListWindow {
  /** The rows after the cursor's place (cursor mode past its first page); undefined otherwise. */
  after: SQL | undefined
  limit: number
  offset: number
}

type Read<Row> = (window: ListWindow) => Promise<Row[]>

/**
 * A page of a list in the mode the query asks for. `read` answers the window's rows in the
 * keyset's `orderBy`, with its `cursorKey` selected (or `keyOf` gives a row's key, when the rows
 * hold it whole: an id); `count` the rows of the whole (filtered) list, asked in page mode only.
 */
export function readList<Row extends { cursorKey: string }>(keys: Keyset, query: PageQuery, read: Read<Row>, count: () => Promise<number>): Promise<ListPage<Row>>
export function readList<Row>(keys: Keyset, query: PageQuery, read: Read<Row>, count: () => Promise<number>, keyOf: (row: Row) => readonly KeyValue[]): Promise<ListPage<Row>>
export async function readList<Row>(
  keys: Keyset,
  query: PageQuery,
  read: Read<Row>,
  count: () => Promise<number>,
  keyOf: (row: Row) => readonly KeyValue[] = (row) => JSON.parse((row as { cursorKey: string }).cursorKey) as KeyValue[],
): Promise<ListPage<Row>> {
  const perPage = query.per_page ?? DEFAULT_PER_PAGE
  if (query.after !== undefined) {
    const rows = await read({ after: keys.after(query.after), limit: perPage + 1, offset: 0 })
    return cursorPage(keys, rows, perPage, keyOf)
  }
  const page = query.page ?? 1
  const [rows, total] = await Promise.all([read({ after: undefined, limit: perPage, offset: (page - 1) * perPage }), count()])
  return { rows, meta: pageMeta(page, perPage, total) }
}

/** A select (made `$dynamic()`) narrowed to a window: `where` and the rows after the cursor, in the keyset's order. */
export function inWindow<Q extends PgSelect>(select: Q, keys: Keyset, window: ListWindow, where?: SQL): Q {
  return select
    .where(and(where, window.after))
    .orderBy(...keys.orderBy)
    .limit(window.limit)
    .offset(window.offset) as Q
}

/**
 * A page of a list whose rows `select` reads (a `$dynamic()` select with the keyset's `cursorKey`),
 * those `where` keeps; `count` counts them, in page mode only.
 */
export function selectList<Q extends PgSelect & PromiseLike<{ cursorKey: string }[]>>(
  keys: Keyset,
  query: PageQuery,
  select: Q,
  where: SQL | undefined,
  count: () => Promise<number>,
): Promise<ListPage<Awaited<Q>[number]>> {
  return readList(keys, query, async (window) => (await inWindow(select, keys, window, where)) as unknown as Awaited<Q>[number][], count)
}

/**
 * A page of the rows of one table that match `where`, the read of most lists: the table's columns,
 * or the values of a `selection` of SQL expressions (a row as JSON).
 */
export function listTable<T extends PgTable>(db: Database, keys: Keyset, table: T, where: SQL | undefined, query: PageQuery): Promise<ListPage<InferSelectModel<T>>>
export function listTable<S extends Record<string, SQL>>(
  db: Database,
  keys: Keyset,
  table: PgTable,
  where: SQL | undefined,
  query: PageQuery,
  selection: S,
): Promise<ListPage<{ [K in keyof S]: S[K] extends SQL<infer V> ? V : never }>>
export function listTable(db: Database, keys: Keyset, table: PgTable, where: SQL | undefined, query: PageQuery, selection?: Record<string, SQL>) {
  const select = db
    .select({ ...(selection ?? getTableColumns(table)), cursorKey: keys.cursorKey })
    .from(table)
    .$dynamic()
  return selectList(keys, query, select, where, () => db.$count(table, where))
}

/**
 * `page` and `after` are two ways through a list; a request takes one. Checked before validation,
 * because the schema then fills in `page` with its default.
 */
export const refusePageWithCursor: preValidationHookHandler = (request, _reply, done) => {
  const query = request.query as Record<string, unknown> | undefined
  if (query?.page !== undefined && query.after !== undefined) {
    done(invalidField('after', "Field 'after' cannot be combined with 'page': page through a list by page number or by cursor, not both"))
  } else done()
}
