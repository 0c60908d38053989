/**
 * Walking a list of the API over real HTTP, by page number and by cursor (`after`), for the
 * pagination tests: the ids a walk meets, each page's meta, and the shape of a refusal.
 */
import { expect } from 'vitest'
import type { ApiErrorBody } from './helpers.js'

export interface ListBody {
  meta: Record<string, unknown>
  [list: string]: unknown
}
export interface Walk {
  ids: string[]
  pages: { ids: string[]; meta: Record<string, unknown> }[]
}

export const CURSOR = /^[A-Za-z0-9_-]+$/

/** What names an item of a list: its `id`, an order history entry's `event_id`, an import report row's number. */
const itemId = (item: Record<string, unknown>) => String(item.id ?? item.event_id ?? item.row)
const idsOf = (body: ListBody, key: string) => (body[key] as Record<string, unknown>[]).map(itemId)

export async function get(baseUrl: string, path: string, token?: string): Promise<{ status: number; body: ListBody & ApiErrorBody }> {
  const response = await fetch(`${baseUrl}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} })
  return { status: response.status, body: (await response.json()) as ListBody & ApiErrorBody }
}

export const withQuery = (path: string, query: string) => `${path}${path.includes('?') ? '&' : '?'}${query}`

/** One page in cursor mode: the ids it holds and its meta. */
export async function cursorPage(baseUrl: string, path: string, key: string, after: string, token?: string) {
  const { status, body } = await get(baseUrl, withQuery(path, `after=${encodeURIComponent(after)}`), token)
  expect(status, `${path}: ${JSON.stringify(body)}`).toBe(200)
  expect(body.meta, `${path}: cursor mode`).toHaveProperty('next_cursor')
  return { ids: idsOf(body, key), meta: body.meta }
}

/** Every page by cursor, from `after=` until `next_cursor` is null. */
export async function walk(baseUrl: string, path: string, key: string, token?: string): Promise<Walk> {
  const pages: Walk['pages'] = []
  let after = ''
  for (;;) {
    const page = await cursorPage(baseUrl, path, key, after, token)
    pages.push(page)
    if (page.meta.next_cursor === null) return { ids: pages.flatMap((one) => one.ids), pages }
    if (pages.length > 1000) throw new Error(`${path}: the walk does not end`)
    after = page.meta.next_cursor as string
  }
}

/** Every page of the page-number envelope (100 a page unless `path` says), concatenated. */
export async function pageListing(baseUrl: string, path: string, key: string, token?: string): Promise<string[]> {
  const ids: string[] = []
  const sized = path.includes('per_page=') ? path : withQuery(path, 'per_page=100')
  for (let page = 1; ; page++) {
    const { status, body } = await get(baseUrl, withQuery(sized, `page=${page}`), token)
    expect(status, `${path}: ${JSON.stringify(body)}`).toBe(200)
    ids.push(...idsOf(body, key))
    if (page >= (body.meta.total_pages as number)) return ids
  }
}

/** A walk's pages are full but the last, each meta is exactly {per_page, next_cursor}, and only the last has no cursor. */
export function expectWellFormed(result: Walk, perPage: number, rows: number) {
  expect(result.pages).toHaveLength(Math.max(1, Math.ceil(rows / perPage)))
  for (const [index, page] of result.pages.entries()) {
    const last = index === result.pages.length - 1
    expect(page.meta).toEqual({ per_page: perPage, next_cursor: last ? null : expect.stringMatching(CURSOR) })
    if (!last) expect(page.ids).toHaveLength(perPage)
  }
  expect(new Set(result.ids).size).toBe(result.ids.length)
}

export const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')

/** A 400 validation_error whose one detail names `after`; answers the error. */
export async function expectCursorRefused(baseUrl: string, path: string, token?: string) {
  const { status, body } = await get(baseUrl, path, token)
  expect(status, `${path}: ${JSON.stringify(body)}`).toBe(400)
  expect(body.error.code).toBe('validation_error')
  expect(body.error.details, path).toEqual([{ field: 'after', message: expect.stringContaining("Field 'after'") }])
  return body.error
}
