/**
 * Cursor mode of the long lists (products, orders, events, notifications): `?after=` pages by keyset from an
 * opaque cursor that names the last row's place in the list's order, and counts nothing.
 */
import type { preValidationHookHandler } from 'fastify'
import type { CursorMeta } from '@commerce/domain'
import type { Static } from 'typebox'
import { invalidField } from './errors.js'

/**
 * What each list's cursor holds, its order's key: products, orders and notifications are newest first by id
 * (UUIDv7, unique); events by `created_at` then id, the time as PostgreSQL prints it in UTC with
 * microseconds (EVENT_CURSOR_TIME), since a JavaScript Date would drop them and skip or repeat rows.
 */
export interface CursorKeys {
  products: [id: string]
  orders: [id: string]
  notifications: [id: string]
  events: [at: string, id: string]
}
export type CursorList = keyof CursorKeys

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const MICROSECOND_TIME = /^(\d{4})-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/

/** A cursor is base64url of JSON `[list, ...key]`: opaque to clients, checked whole when it comes back. */
export function encodeCursor<L extends CursorList>(list: L, key: CursorKeys[L]): string {
  return Buffer.from(JSON.stringify([list, ...key])).toString('base64url')
}

const notACursor = () =>
  invalidField('after', "Field 'after' is not a cursor of this list: send it empty for the first page, then the meta.next_cursor of the page before, unchanged")

function isTime(text: unknown): text is string {
  if (typeof text !== 'string') return false
  const match = MICROSECOND_TIME.exec(text)
  if (!match || Number(match[1]) < 1) return false
  // A date that does not exist (02-30, 25:00) comes back different, or not at all.
  const milliseconds = `${text.slice(0, 23)}Z`
  const date = new Date(milliseconds)
  return !Number.isNaN(date.getTime()) && date.toISOString() === milliseconds
}

/** The key a cursor of `list` holds; anything else (another list's cursor, an edited one) is a 400 naming `after`. */
export function decodeCursor<L extends CursorList>(list: L, text: string): CursorKeys[L] {
  // Canonical base64url only: any other character, or trailing bits, is not one of ours.
  const bytes = Buffer.from(text, 'base64url')
  if (bytes.toString('base64url') !== text) throw notACursor()
  let value: unknown
  try {
    value = JSON.parse(bytes.toString('utf8'))
  } catch {
    throw notACursor()
  }
  if (!Array.isArray(value) || value[0] !== list) throw notACursor()
  const key = value.slice(1)
  const valid =
    list === 'events'
      ? key.length === 2 && isTime(key[0]) && typeof key[1] === 'string' && UUID.test(key[1])
      : key.length === 1 && typeof key[0] === 'string' && UUID.test(key[0])
  if (!valid) throw notACursor()
  return key as CursorKeys[L]
}

/** The rows of a cursor page, read with a limit of `perPage + 1`: the extra row only says there is a next page. */
export function cursorPage<T, L extends CursorList>(
  list: L,
  rows: readonly T[],
  perPage: number,
  keyOf: (row: T) => CursorKeys[L],
): { rows: T[]; meta: Static<typeof CursorMeta> } {
  const page = rows.slice(0, perPage)
  const next = rows.length > perPage ? encodeCursor(list, keyOf(page.at(-1)!)) : null
  return { rows: page, meta: { per_page: perPage, next_cursor: next } }
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
