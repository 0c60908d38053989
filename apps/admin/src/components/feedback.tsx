/** How the dashboard says that something failed, is loading, or worked. */
import type { ReactNode } from 'react'
import { describeError } from '../api'

/** A failed call: the API's message, the fields at fault, and the request id to quote. Announced (role=alert). */
export function ErrorNotice({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null
  const { message, details, requestId } = describeError(error)
  return (
    <div className="notice notice-error" role="alert">
      <p>
        {title ? <strong>{title}: </strong> : null}
        {message}
      </p>
      {details.length > 0 ? (
        <ul>
          {details.map((detail) => (
            <li key={detail}>{detail}</li>
          ))}
        </ul>
      ) : null}
      {requestId ? <p className="muted small">Request {requestId}</p> : null}
    </div>
  )
}

/** A short success message, announced politely. */
export function SuccessNotice({ children }: { children: ReactNode }) {
  if (!children) return null
  return (
    <p className="notice notice-success" role="status">
      {children}
    </p>
  )
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status">
      Loading {what}…
    </p>
  )
}

/** A query's three states in one place: loading, failed, or its data. */
export function QueryState<T>({ query, what, children }: { query: { data: T | undefined; error: unknown; isPending: boolean }; what: string; children: (data: T) => ReactNode }) {
  if (query.error) return <ErrorNotice error={query.error} title={`Could not load ${what}`} />
  if (query.isPending || query.data === undefined) return <Loading what={what} />
  return <>{children(query.data)}</>
}
