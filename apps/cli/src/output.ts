/** Human-readable output: a detail view of one record, or a table of many. */

type Cell = string | null | undefined
type Row = Record<string, unknown>

/** Aligned `label  value` lines; null and undefined values show as a dash. */
export function formatDetails(rows: ReadonlyArray<readonly [label: string, value: Cell]>): string {
  const width = Math.max(...rows.map(([label]) => label.length))
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${value ?? '-'}`).join('\n')
}

/** A table with a header row; columns as wide as their widest cell, null and undefined as a dash. */
export function formatTable(headers: readonly string[], rows: ReadonlyArray<ReadonlyArray<Cell>>): string {
  const cells = [headers, ...rows.map((row) => row.map((value) => value ?? '-'))]
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => row[column]!.length)))
  return cells.map((row) => row.map((value, column) => value.padEnd(widths[column]!)).join('  ').trimEnd()).join('\n')
}

const isRecord = (value: unknown): value is Row => typeof value === 'object' && value !== null && !Array.isArray(value)
const isScalar = (value: unknown) => value === null || ['string', 'number', 'boolean'].includes(typeof value)

/** The columns a list shows first when its rows have them; the others follow, up to MAX_COLUMNS. */
const PREFERRED_COLUMNS = [
  'id', 'order_number', 'code', 'title', 'name', 'email', 'sku', 'url', 'event', 'kind', 'type', 'status',
  'payment_status', 'fulfillment_status', 'price', 'value', 'rate', 'amount', 'totals.total', 'currency',
  'quantity', 'inventory_quantity', 'attempts', 'created_at',
]
const MAX_COLUMNS = 8
/** Long free text: left to detail views. */
const LONG_TEXT = new Set(['description', 'notes', 'response_body', 'metadata', 'data', 'options'])

/** A record's scalar fields, nested objects flattened with dotted names (totals.total). */
function flatten(record: Row, prefix = ''): Array<[string, unknown]> {
  return Object.entries(record).flatMap(([key, value]): Array<[string, unknown]> => {
    const name = `${prefix}${key}`
    if (isRecord(value)) return flatten(value, `${name}.`)
    if (Array.isArray(value)) return value.every(isScalar) ? [[name, value.length > 0 ? value.join(', ') : undefined]] : []
    return [[name, value]]
  })
}

const text = (value: unknown): Cell => (value === null || value === undefined ? undefined : String(value))

function table(rows: readonly Row[]): string {
  if (rows.length === 0) return '(none)'
  const flat = rows.map((row) => new Map(flatten(row)))
  const names = [...flat[0]!.keys()].filter((name) => !LONG_TEXT.has(name.split('.').at(-1)!))
  const preferred = PREFERRED_COLUMNS.filter((name) => names.includes(name))
  const columns = [...preferred, ...names.filter((name) => !preferred.includes(name))].slice(0, MAX_COLUMNS)
  return formatTable(
    columns.map((name) => name.toUpperCase()),
    flat.map((row) => columns.map((name) => text(row.get(name)))),
  )
}

function details(record: Row): string {
  const sections = [formatDetails(flatten(record).map(([name, value]) => [name, text(value)] as const))]
  for (const [key, value] of Object.entries(record)) {
    if (Array.isArray(value) && !value.every(isScalar)) sections.push(`${key.toUpperCase()} (${value.length})\n${table(value as Row[])}`)
  }
  return sections.join('\n\n')
}

/** Webhook deliveries: one row per attempt, so people see what each call to the receiver got. */
function deliveryAttempts(deliveries: readonly Row[]): string {
  const rows = deliveries.flatMap((delivery) => {
    const head = [delivery.id, delivery.event, delivery.status].map(text)
    const log = (delivery.attempt_log as Row[] | undefined) ?? []
    if (log.length === 0) return [[...head, undefined, undefined, undefined, undefined, text(delivery.next_attempt_at)]]
    return log.map((attempt) => [
      ...head,
      ...[attempt.attempt, attempt.status_code, attempt.duration_ms, attempt.error, attempt.created_at].map(text),
    ])
  })
  return formatTable(['DELIVERY', 'EVENT', 'STATUS', 'ATTEMPT', 'HTTP', 'MS', 'ERROR', 'AT'], rows)
}

/** An API answer for people: lists as a table with their page (or next cursor), records as details, 204 as Done. */
export function render(body: unknown, commandId?: string): string {
  if (body === undefined) return 'Done.'
  if (commandId === 'webhooks:deliveries' && isRecord(body) && Array.isArray(body.deliveries)) {
    return deliveryAttempts(body.deliveries as Row[])
  }
  if (Array.isArray(body)) return table(body as Row[])
  if (!isRecord(body)) return String(body)
  const meta = body.meta
  const lists = Object.entries(body).filter(([, value]) => Array.isArray(value))
  if (isRecord(meta) && lists.length === 1) {
    const [, rows] = lists[0]!
    // Cursor mode (`--after`) has no page number or total, only the cursor of the next page.
    if ('next_cursor' in meta) {
      const next = typeof meta.next_cursor === 'string' ? `Next page: --after ${meta.next_cursor}` : 'Last page'
      return `${table(rows as Row[])}\n\n${next}`
    }
    return `${table(rows as Row[])}\n\nPage ${String(meta.page)} of ${String(meta.total_pages)} (${String(meta.total)} in all)`
  }
  return details(body)
}
