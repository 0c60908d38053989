/**
 * What a resume reads from the events table: whether the retention deleted events after a
 * position, how many events lie after it, and those a viewer may see, a page at a time.
 */
import type postgres from 'postgres'
import { countEventsBetween, eventPageBetween, eventsSweptPast, type FeedEvent } from '@commerce/db'
import type { Viewer } from './protocol.js'

/** Rows per query: a replay holds one page in memory, whatever its length. */
const PAGE_SIZE = 500

export interface EventLog {
  /** Whether the event retention has swept past this position: events after it may be deleted. */
  sweptPast(position: string): Promise<boolean>
  /** The events with an id in (after, upTo], of every kind and customer, counted up to `atMost` (the primary key's index alone). */
  countBetween(after: string, upTo: string, atMost: number): Promise<number>
  /** The events with an id in (after, upTo] that the viewer may see, in id order, a page at a time. */
  pagesBetween(after: string, upTo: string, viewer: Viewer): AsyncGenerator<FeedEvent[]>
}

export function createEventLog(sql: postgres.Sql): EventLog {
  return {
    sweptPast(position) {
      return eventsSweptPast(sql, position)
    },

    countBetween(after, upTo, atMost) {
      return countEventsBetween(sql, { after, upTo, atMost })
    },

    async *pagesBetween(after, upTo, viewer) {
      // Keyset pages, each its own statement: an event committed before the first page is in the
      // page that covers its id; one committed later may or may not be, and comes live anyway.
      // The condition narrows the read to what `mayView` can accept (the caller still applies it).
      let from = after
      for (;;) {
        const page = await eventPageBetween(sql, { after: from, upTo, seesAll: viewer.seesAll, customerId: viewer.customerId, limit: PAGE_SIZE })
        if (page.length > 0) yield page
        if (page.length < PAGE_SIZE) return
        from = page.at(-1)!.id
      }
    },
  }
}
