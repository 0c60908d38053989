import { Type, type TSchema } from 'typebox'
import { DEFAULT_PER_PAGE, MAX_PER_PAGE } from '../constants.js'

// maxLength 36 narrows Ajv's `uuid` format, which also accepts a `urn:uuid:` prefix that
// PostgreSQL's uuid type refuses (a 500 instead of a 400).
export const Uuid = Type.String({ format: 'uuid', maxLength: 36, description: 'UUID' })
/** The text PostgreSQL's uuid type takes, checked before a query that would fail on anything else. */
export const isUuid = (text: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(text)
// maxLength: an ISO 8601 date-time is at most 35 characters with nanoseconds and an offset.
export const Timestamp = Type.String({ format: 'date-time', maxLength: 64, description: 'ISO 8601 UTC' })
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

export const Currency = Type.String({
  pattern: '^[A-Z]{3}$',
  maxLength: 3,
  description: 'ISO 4217 currency code',
  examples: ['USD'],
})
/** A decimal amount in major units (19.99); decimals beyond the currency's exponent are refused. */
export const Amount = Type.Number({ minimum: 0, description: 'Decimal amount in major units', examples: [19.99] })

export const IdParams = Type.Object({ id: Uuid })

/**
 * How every list is paged: by page number (`page`, counted: `meta` has the total), or by cursor
 * (`after`, keyset: `meta` has `next_cursor`), one or the other.
 */
export const PaginationQuery = Type.Object({
  // Bounded so the row offset stays a safe integer PostgreSQL accepts (page=1e20 was a 500).
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000, default: 1 })),
  per_page: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PER_PAGE, default: DEFAULT_PER_PAGE })),
  after: Type.Optional(
    Type.String({
      maxLength: 512,
      description:
        'Cursor mode, to walk a whole list: empty (`after=`) for the first page, then the previous page’s ' +
        '`meta.next_cursor`, with the same filters. `meta` is then `{per_page, next_cursor}` (no total: nothing ' +
        'is counted). Not with `page`.',
    }),
  ),
})

export const ListMeta = Type.Object(
  {
    page: Type.Integer(),
    per_page: Type.Integer(),
    total: Type.Integer(),
    total_pages: Type.Integer(),
  },
  { title: 'ListMeta', description: 'Where a page is in its list: the page, its size, and how many items and pages there are' },
)

export const CursorMeta = Type.Object(
  {
    per_page: Type.Integer(),
    next_cursor: Nullable(
      Type.String({ description: 'Pass as `after` for the next page; null on the last page (nothing after it).' }),
    ),
  },
  { title: 'CursorMeta', description: 'meta of cursor mode (`?after=`)' },
)

/** A list's meta: ListMeta by page number, CursorMeta in cursor mode (`after`). */
export const PageOrCursorMeta = Type.Union([ListMeta, CursorMeta])

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ examples: ['validation_error'] }),
      message: Type.String(),
      details: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
      request_id: Type.String(),
    }),
  },
  { $id: 'Error' },
)
