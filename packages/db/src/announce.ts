/**
 * Committed events announced to the API instances' WebSocket feeds and the workers' outbox
 * relays: a NOTIFY on EVENTS_CHANNEL carrying the events' ids (comma-separated), sent after the
 * writing transaction's COMMIT and batched per event-loop turn, one statement for every
 * transaction that committed meanwhile.
 *
 * Not inside the writing transaction: PostgreSQL holds its notification queue's lock from a
 * notifying transaction's commit until that commit's WAL flush, so transactions that notify
 * commit one at a time, and a checkout's throughput stopped at one commit per flush
 * (bench/README.md, Checkout). A notification lost to a crash between COMMIT and this statement
 * is made up for: the relays sweep the outbox every second, the feeds look for events they missed.
 */
import type postgres from 'postgres'

/** The NOTIFY channel of committed events; the payload is their ids, comma-separated. */
export const EVENTS_CHANNEL = 'commerce_events'

/** Ids per notification: 37 characters each, under PostgreSQL's 8,000-byte payload limit. */
const IDS_PER_NOTIFICATION = 200

const ANNOUNCE = `select count(pg_notify('${EVENTS_CHANNEL}', payload)) as "sent" from unnest($1::text[]) as payload`

export interface EventAnnouncer {
  /** Queues the ids of committed events for the next announcement. */
  announce(ids: readonly string[]): void
  /** Sends what is queued and waits for it (on close). */
  flush(): Promise<void>
}

export function createEventAnnouncer(sql: postgres.Sql, onError: (error: unknown) => void = () => {}): EventAnnouncer {
  let queued: string[] = []
  let scheduled: NodeJS.Immediate | undefined
  // One announcement at a time, so that they commit (and listeners hear them) in the order their
  // events committed; what commits meanwhile waits for the next one.
  let sending: Promise<void> | undefined

  function schedule(): void {
    if (!sending && !scheduled && queued.length > 0) scheduled = setImmediate(send)
  }

  function send(): void {
    scheduled = undefined
    const ids = queued
    queued = []
    const payloads: string[] = []
    for (let start = 0; start < ids.length; start += IDS_PER_NOTIFICATION) payloads.push(ids.slice(start, start + IDS_PER_NOTIFICATION).join(','))
    sending = sql
      .unsafe(ANNOUNCE, [payloads], { prepare: true })
      .then(() => undefined, onError)
      .finally(() => {
        sending = undefined
        schedule()
      })
  }

  return {
    announce(ids) {
      queued.push(...ids)
      schedule()
    },
    async flush() {
      while (sending || queued.length > 0) {
        if (!sending) {
          clearImmediate(scheduled)
          send()
        }
        await sending
      }
    },
  }
}
