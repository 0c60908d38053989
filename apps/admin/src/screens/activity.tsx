/** The live activity feed: every event as it is committed, newest first, linked to what it is about. */
import { Link } from 'react-router'
import type { StreamedEvent } from '@commerce/client'
import { DateTime } from '../components/data'
import { Page } from '../components/page'
import { useLiveEvents } from '../live'

/** Where an event's resource is shown, when the dashboard has a screen for it. */
function linkOf(event: StreamedEvent): string | undefined {
  const family = event.event.split('.')[0]
  if (family === 'order' || family === 'return' || (family === 'payment' && 'order_id' in event.data && event.data.order_id)) {
    const orderId = family === 'payment' ? (event.data as { order_id: string }).order_id : event.resource_id
    return `/orders/${orderId}`
  }
  if (family === 'product') return `/products/${event.resource_id}`
  if (family === 'customer') return `/customers/${event.resource_id}`
  if (family === 'webhook') return `/webhooks/${event.resource_id}`
  return undefined
}

/** A line about the event's resource: its number, title or address, whichever it has. */
function describe(event: StreamedEvent): string {
  const data = event.data as Record<string, unknown>
  for (const field of ['order_number', 'title', 'email', 'url', 'sku']) if (typeof data[field] === 'string') return data[field] as string
  return event.resource_id
}

export function Activity() {
  const { events, status } = useLiveEvents()
  return (
    <Page title="Activity">
      <p className="muted">
        Events as they happen (and the last ten minutes’ when the dashboard opened), newest first.{' '}
        {status === 'live' ? 'Connected.' : status === 'ended' ? 'Disconnected: reload the page to reconnect.' : 'Connecting…'}
      </p>
      {events.length === 0 ? <p className="empty">Nothing yet: events appear here as they happen.</p> : null}
      <div className="card" role="log" aria-label="Live events, newest first">
        <ol className="feed">
        {events.map((event) => {
          const to = linkOf(event)
          return (
            <li key={event.id}>
              <DateTime value={event.timestamp} />
              <span className="code">{event.event}</span>
              <span>{to ? <Link to={to}>{describe(event)}</Link> : describe(event)}</span>
            </li>
          )
        })}
        </ol>
      </div>
    </Page>
  )
}
