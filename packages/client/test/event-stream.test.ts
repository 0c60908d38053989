/**
 * The client's event stream against the real API process over a real WebSocket (the `ws`
 * package, as on Node 20), through a TCP proxy that can cut the connection and refuse new ones:
 * events arrive as they commit, and after a forced disconnect the stream reconnects and resumes
 * with the events of the outage, none lost, none twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { WebSocket } from 'ws'
import { startDatabaseProxy, type DatabaseProxy } from '@commerce/db/testing'
import { createClient, type StreamedEvent, type StreamStatus } from '../src/index.js'
import { startService, type Service } from './service.js'

let service: Service
/** Any TCP proxy will do for HTTP and WebSocket alike; the database package's fault-test one is at hand. */
let proxy: DatabaseProxy

beforeAll(async () => {
  service = await startService()
  proxy = await startDatabaseProxy(new URL(service.baseUrl))
})

afterAll(async () => {
  await proxy?.close()
  await service?.stop()
})

/** Reads a stream into an array until it ends; `done` settles with the iteration. */
function collect(stream: AsyncIterable<StreamedEvent>) {
  const events: StreamedEvent[] = []
  const done = (async () => {
    for await (const event of stream) events.push(event)
  })()
  return { events, done }
}

const newProduct = (title: string) => service.admin.createProduct({ title, price: 10, currency: 'USD' })

describe('streamEvents', () => {
  it('receives the events it subscribed to, and after a forced disconnect resumes with those of the outage: no gap, no duplicate', async () => {
    const statuses: StreamStatus[] = []
    const stream = createClient({ baseUrl: proxy.url, auth: { token: service.token } }).streamEvents({
      events: ['product.*'],
      WebSocket,
      reconnect: { initialDelayMs: 50, maxDelayMs: 200 },
      onStatus: (status) => statuses.push(status),
    })
    const { events, done } = collect(stream)
    await expect.poll(() => statuses.filter((status) => status.type === 'open')).toHaveLength(1)
    expect(statuses[0]).toEqual({ type: 'open', resumedAfter: undefined })

    const expected: [string, string][] = []
    for (const title of ['Live 1', 'Live 2']) expected.push(['product.created', (await newProduct(title)).id])
    // Not a product event: left out by the subscription.
    await service.admin.createCustomer({ email: 'not-streamed@example.com' })
    await expect.poll(() => events.length).toBe(2)
    const beforeOutage = stream.lastEventId

    proxy.refuse(true)
    proxy.cut()
    await expect.poll(() => statuses.filter((status) => status.type === 'dropped').length).toBeGreaterThanOrEqual(2)
    for (const title of ['Outage 1', 'Outage 2', 'Outage 3']) expected.push(['product.created', (await newProduct(title)).id])
    await service.admin.updateProduct(expected[2]![1], { title: 'Outage 1, renamed' })
    expected.push(['product.updated', expected[2]![1]])
    proxy.refuse(false)

    await expect.poll(() => statuses.find((status) => status.type === 'resumed'), { timeout: 15_000 }).toEqual({ type: 'resumed', after: beforeOutage, count: 4 })
    expect(statuses.filter((status) => status.type === 'open').at(-1)).toEqual({ type: 'open', resumedAfter: beforeOutage })
    for (const title of ['After 1', 'After 2']) expected.push(['product.created', (await newProduct(title)).id])
    await expect.poll(() => events.length).toBe(expected.length)

    stream.close()
    await done
    expect(events.map((event) => [event.event, event.resource_id])).toEqual(expected)
    expect(new Set(events.map((event) => event.id)).size).toBe(events.length)
    expect(stream.lastEventId).toBe(events.at(-1)!.id)
    const renamed = events.find((event) => event.event === 'product.updated')!
    if (renamed.event !== 'product.updated') return expect.fail(renamed.event)
    expect(renamed.data.title).toBe('Outage 1, renamed')
  })

  it('starts after `since`: the events after that id first, then live ones', async () => {
    const first = await newProduct('Since 1')
    // The newest first: the event of 'Since 1'.
    const since = (await service.admin.listEvents({ event: 'product.created', per_page: 1 })).events[0]!.id
    // A watcher sees 'Since 2' go by live first: its live message, late on a busy machine, would
    // otherwise reach the new stream too, which then has it live and replays none (count 0).
    let watching = false
    const watcher = createClient({ baseUrl: service.baseUrl, auth: { token: service.token } }).streamEvents({
      events: ['product.created'],
      WebSocket,
      onStatus: (status) => (watching ||= status.type === 'open'),
    })
    const watched = collect(watcher)
    await expect.poll(() => watching).toBe(true)
    const second = await newProduct('Since 2')
    await expect.poll(() => watched.events.map((event) => event.resource_id)).toContain(second.id)
    watcher.close()
    await watched.done
    const statuses: StreamStatus[] = []
    const stream = createClient({ baseUrl: service.baseUrl, auth: { token: service.token } }).streamEvents({ events: ['product.created'], since, WebSocket, onStatus: (status) => statuses.push(status) })
    const { events, done } = collect(stream)
    await expect.poll(() => statuses.find((status) => status.type === 'resumed')).toEqual({ type: 'resumed', after: since, count: 1 })
    const third = await newProduct('Since 3')
    await expect.poll(() => events.map((event) => event.resource_id)).toEqual([second.id, third.id])
    expect(events.map((event) => event.resource_id)).not.toContain(first.id)
    stream.close()
    await done
  })

  it('goes on live with replay_expired when it starts further back than the event log keeps', async () => {
    const idAt = (ms: number) => {
      const hex = ms.toString(16).padStart(12, '0')
      return `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-000000000000`
    }
    // The worker's event retention swept the log up to 4 January 1999, as its expire-events notes.
    await service.handle.sql`insert into event_retention (swept_through) values (${idAt(Date.UTC(1999, 0, 4))})`
    try {
      const since = idAt(Date.UTC(1999, 0, 1))
      const statuses: StreamStatus[] = []
      const stream = createClient({ baseUrl: service.baseUrl, auth: { token: service.token } }).streamEvents({ events: ['product.created'], since, WebSocket, onStatus: (status) => statuses.push(status) })
      const { events, done } = collect(stream)
      await expect
        .poll(() => statuses.find((status) => status.type === 'replay_expired'))
        .toEqual({ type: 'replay_expired', after: since, message: expect.stringContaining("past the event log's retention") })
      const live = await newProduct('After the expired resume')
      await expect.poll(() => events.map((event) => event.resource_id)).toEqual([live.id])
      stream.close()
      await done
    } finally {
      await service.handle.sql`delete from event_retention`
    }
  })

  it('ends the iteration with the API’s refusal of the credential (401), without retrying', async () => {
    const statuses: StreamStatus[] = []
    const stream = createClient({ baseUrl: service.baseUrl, auth: { token: 'not-a-token' } }).streamEvents({ WebSocket, onStatus: (status) => statuses.push(status) })
    await expect(collect(stream).done).rejects.toMatchObject({ name: 'CommerceError', status: 401, code: 'unauthorized' })
    expect(statuses).toEqual([])
  })
})
