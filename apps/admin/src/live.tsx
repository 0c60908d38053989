/**
 * The live event stream (GET /api/v1/ws through the client, which resumes after a drop), for the
 * activity feed and to refresh what is on screen: an event about orders makes every order query
 * stale, so a list or a detail on screen shows the change without a reload.
 */
import { useQueryClient } from '@tanstack/react-query'
import { createContext, useContext, useEffect, useState, type ReactNode } from 'react'
import type { StreamedEvent, StreamStatus } from '@commerce/client'
import { client } from './api'

export type LiveStatus = 'connecting' | 'live' | 'reconnecting' | 'ended'

interface Live {
  events: readonly StreamedEvent[]
  status: LiveStatus
}

const LiveContext = createContext<Live>({ events: [], status: 'connecting' })

/** The newest events kept for the feed. */
const KEPT = 200
/** The feed opens with what happened this long before: the stream replays it first. */
const CATCH_UP_MS = 10 * 60_000
/** Stale queries are fetched again at most this often, however many events arrive (a replay sends many). */
const REFRESH_EVERY_MS = 500

/** The smallest event id (a UUIDv7) of a moment: where the stream starts. */
function eventIdOf(moment: number): string {
  const hex = moment.toString(16).padStart(12, '0')
  return `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-000000000000`
}

/** The queries an event kind makes stale, by the first part of their key. */
const STALE_BY_FAMILY: Record<string, readonly string[]> = {
  order: ['orders', 'customers'],
  payment: ['orders'],
  return: ['orders', 'returns'],
  draft_order: ['orders'],
  inventory: ['products', 'inventory'],
  product: ['products'],
  customer: ['customers'],
  webhook: ['webhooks'],
}

export function LiveEventsProvider({ children }: { children: ReactNode }) {
  const queryClient = useQueryClient()
  const [events, setEvents] = useState<readonly StreamedEvent[]>([])
  const [status, setStatus] = useState<LiveStatus>('connecting')

  useEffect(() => {
    const stale = new Set<string>()
    let refresh: ReturnType<typeof setTimeout> | undefined
    const markStale = (keys: readonly string[]) => {
      for (const key of keys) stale.add(key)
      refresh ??= setTimeout(() => {
        refresh = undefined
        for (const key of stale) void queryClient.invalidateQueries({ queryKey: [key] })
        stale.clear()
      }, REFRESH_EVERY_MS)
    }
    // The first connection replays what came before the screens' first reads: those events fill
    // the feed but make nothing stale, or every screen would load twice as the dashboard opens.
    const openedAt = Date.now()
    let catchingUp = true
    const stream = client.streamEvents({
      since: eventIdOf(openedAt - CATCH_UP_MS),
      onStatus(change: StreamStatus) {
        if (change.type === 'resumed' || change.type === 'replay_limit_exceeded' || change.type === 'replay_expired') catchingUp = false
        if (change.type === 'open' || change.type === 'resumed') setStatus('live')
        if (change.type === 'dropped') setStatus('reconnecting')
      },
    })
    let stopped = false
    void (async () => {
      try {
        for await (const event of stream) {
          setEvents((previous) => [event, ...previous].slice(0, KEPT))
          if (catchingUp && Date.parse(event.timestamp) < openedAt) continue
          // Deliveries are made for events: a webhook's log grows with each one.
          markStale([...(STALE_BY_FAMILY[event.event.split('.')[0]!] ?? []), 'webhooks'])
        }
      } catch {
        // The credential was refused for good (expired or revoked): the next API call signs out.
      } finally {
        if (!stopped) setStatus('ended')
      }
    })()
    return () => {
      stopped = true
      clearTimeout(refresh)
      stream.close()
    }
  }, [queryClient])

  return <LiveContext.Provider value={{ events, status }}>{children}</LiveContext.Provider>
}

export const useLiveEvents = () => useContext(LiveContext)
