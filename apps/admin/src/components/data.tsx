/** How values read in tables and details: money to the cent, percents, dates in the viewer's time, states as badges. */
import type { ReactNode } from 'react'
import { formatMoney } from '../money'

export function Money({ amount, currency }: { amount: number | null | undefined; currency: string }) {
  if (amount === null || amount === undefined) return <span className="muted">—</span>
  return <span className="money">{formatMoney(amount, currency)}</span>
}

const percentFormat = new Intl.NumberFormat(undefined, { maximumFractionDigits: 4 })

/** `12.5` → `12.5 %`: every decimal the API keeps (4), none added. */
export const formatPercent = (value: number) => `${percentFormat.format(value)} %`

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

export function DateTime({ value }: { value: string | null | undefined }) {
  if (!value) return <span className="muted">—</span>
  return <time dateTime={value}>{dateTime.format(new Date(value))}</time>
}

/** Tones by meaning, so that colour is never the only cue (the text says the state too). */
const TONES: Record<string, 'good' | 'warn' | 'bad' | 'info'> = {
  paid: 'good',
  captured: 'good',
  succeeded: 'good',
  fulfilled: 'good',
  completed: 'good',
  delivered: 'good',
  active: 'good',
  received: 'good',
  approved: 'good',
  pending: 'warn',
  unpaid: 'warn',
  unfulfilled: 'warn',
  partial: 'warn',
  partially_captured: 'warn',
  partially_refunded: 'warn',
  requested: 'warn',
  authorized: 'info',
  requires_action: 'info',
  shipped: 'info',
  refunded: 'info',
  failed: 'bad',
  cancelled: 'bad',
  canceled: 'bad',
  declined: 'bad',
  disabled: 'bad',
  inactive: 'bad',
  archived: 'bad',
  scheduled: 'info',
  draft: 'warn',
}

export function Badge({ value, label }: { value: string; label?: string }) {
  return <span className={`badge badge-${TONES[value] ?? 'neutral'}`}>{label ?? value.replaceAll('_', ' ')}</span>
}

export function ActiveBadge({ active }: { active: boolean }) {
  return <Badge value={active ? 'active' : 'inactive'} />
}

/** A definition list of label → value pairs. */
export function Facts({ facts }: { facts: readonly (readonly [label: string, value: ReactNode])[] }) {
  return (
    <dl className="facts">
      {facts.map(([label, value]) => (
        <div key={label}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  )
}

/**
 * Cursor paging: the API's `next_cursor` moves forward, the cursors already walked move back.
 * `cursors` is the stack of `after` values of the pages before the current one.
 */
export function CursorPager({
  cursors,
  nextCursor,
  onChange,
  label,
}: {
  cursors: readonly string[]
  nextCursor: string | null | undefined
  onChange(cursors: string[]): void
  label: string
}) {
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <button type="button" className="button" disabled={cursors.length === 0} onClick={() => onChange(cursors.slice(0, -1))}>
        Previous page
      </button>
      <span className="muted">Page {cursors.length + 1}</span>
      <button type="button" className="button" disabled={!nextCursor} onClick={() => nextCursor && onChange([...cursors, nextCursor])}>
        Next page
      </button>
    </nav>
  )
}

/** The cursor of the current page: the last one walked ('' asks the API for cursor mode's first page). */
export const currentCursor = (cursors: readonly string[]) => cursors.at(-1) ?? ''

/**
 * Page-number paging, for the short lists read by page (every list also takes a cursor: the long
 * ones use CursorPager). `meta` is the answer's: its page figures, asked without `after`.
 */
export function PagePager({ meta, onChange, label }: { meta: object; onChange(page: number): void; label: string }) {
  if (!('total_pages' in meta) || !('page' in meta)) return null
  const page = meta.page as number
  const totalPages = meta.total_pages as number
  if (totalPages <= 1) return null
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <button type="button" className="button" disabled={page <= 1} onClick={() => onChange(page - 1)}>
        Previous page
      </button>
      <span className="muted">
        Page {page} of {totalPages}
      </span>
      <button type="button" className="button" disabled={page >= totalPages} onClick={() => onChange(page + 1)}>
        Next page
      </button>
    </nav>
  )
}

/** The next page's cursor of a list answer (its meta is the cursor kind when `after` was sent). */
export const nextCursorOf = (meta: object) => ('next_cursor' in meta ? (meta.next_cursor as string | null) : null)
