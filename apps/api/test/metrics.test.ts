/**
 * GET /metrics over real HTTP: requests by route pattern, WebSocket connections, database
 * connections, queue depth, outbox rows; and the whole text as Prometheus' own linter reads it.
 */
import { describe, expect } from 'vitest'
import WebSocket from 'ws'
import { createDb, newId, writeEvents } from '@commerce/db'
import { test } from './helpers.js'


async function scrape(baseUrl: string): Promise<string> {
  const response = await fetch(`${baseUrl}/metrics`)
  expect(response.status).toBe(200)
  expect(response.headers.get('content-type')).toContain('text/plain')
  return response.text()
}

/** One series' value in Prometheus text (labels in any order), undefined when it is absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`)
  for (const match of text.matchAll(/^(\w+)(?:\{(.*)\})? (\S+)$/gm)) {
    const have = match[2] ? match[2].split(/,(?=\w+=")/) : []
    if (match[1] === name && have.length === wanted.length && wanted.every((pair) => have.includes(pair))) return Number(match[3])
  }
  return undefined
}

describe('HTTP requests', () => {
  test('are counted and timed under their route pattern and status, never their raw URL', async ({ baseUrl }) => {
    const route = { method: 'GET', route: '/api/v1/products/:id', status_code: '404' }
    const before = sample(await scrape(baseUrl), 'commerce_http_requests_total', route) ?? 0
    const ids = [newId(), newId(), newId()]
    for (const id of ids) expect((await fetch(`${baseUrl}/api/v1/products/${id}`)).status).toBe(404)
    expect((await fetch(`${baseUrl}/api/v1/products`)).status).toBe(200)
    const probe = `/no-such-route-${newId()}`
    expect((await fetch(`${baseUrl}${probe}`)).status).toBe(404)

    const text = await scrape(baseUrl)
    expect(sample(text, 'commerce_http_requests_total', route)).toBe(before + 3)
    expect(sample(text, 'commerce_http_request_duration_seconds_count', route)).toBe(before + 3)
    expect(sample(text, 'commerce_http_request_duration_seconds_bucket', { ...route, le: '+Inf' })).toBe(before + 3)
    expect(sample(text, 'commerce_http_requests_total', { method: 'GET', route: '/api/v1/products', status_code: '200' })).toBeGreaterThanOrEqual(1)
    expect(sample(text, 'commerce_http_requests_total', { method: 'GET', route: 'unmatched', status_code: '404' })).toBeGreaterThanOrEqual(1)
    for (const raw of [...ids, probe]) expect(text).not.toContain(raw)
    expect(text).toContain('process_cpu_seconds_total')
  })

  test('a POST and its status are their own series', async ({ baseUrl, admin }) => {
    const labels = { method: 'POST', route: '/api/v1/categories', status_code: '201' }
    const before = sample(await scrape(baseUrl), 'commerce_http_requests_total', labels) ?? 0
    const response = await fetch(`${baseUrl}/api/v1/categories`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Metrics ${newId()}` }),
    })
    expect(response.status).toBe(201)
    expect(sample(await scrape(baseUrl), 'commerce_http_requests_total', labels)).toBe(before + 1)
  })
})

describe('WebSocket', () => {
  test('the connection gauge goes up and down, and events sent are counted', async ({ ctx, baseUrl, admin }) => {
    const connections = async () => sample(await scrape(baseUrl), 'commerce_websocket_connections')
    expect(await connections()).toBe(0)
    const sockets = [0, 1].map(() => new WebSocket(`${baseUrl.replace('http', 'ws')}/api/v1/ws`, { headers: { authorization: `Bearer ${admin}` } }))
    const firstEvent = (socket: WebSocket) =>
      new Promise<{ id: string }>((resolve) => {
        socket.on('message', (data) => {
          const message = JSON.parse(data.toString()) as { type: string; id: string }
          if (message.type === 'event') resolve(message)
        })
      })
    const ready = sockets.map(
      (socket) => new Promise((resolve) => socket.on('message', (data) => JSON.parse(data.toString()).type === 'ready' && resolve(true))),
    )
    const received = sockets.map(firstEvent)
    await Promise.all(ready)
    expect(await connections()).toBe(2)

    const sentBefore = sample(await scrape(baseUrl), 'commerce_websocket_events_sent_total') ?? 0
    const [id] = await ctx.handle.db.transaction((tx) => writeEvents(tx, [{ kind: 'product.created', resourceId: newId(), data: { id: newId() } }]))
    expect((await Promise.all(received)).map((event) => event.id)).toEqual([id, id])
    expect(sample(await scrape(baseUrl), 'commerce_websocket_events_sent_total')).toBe(sentBefore + 2)

    sockets[0]!.close()
    await expect.poll(connections).toBe(1)
    sockets[1]!.close()
    await expect.poll(connections).toBe(0)
  })
})

describe('database', () => {
  test('counts the server connections of each commerce application name by state', async ({ ctx, baseUrl }) => {
    const probe = createDb({ url: ctx.database.url, poolMax: 3, applicationName: 'commerce-metrics-probe' })
    try {
      // Three queries at once open the pool's three connections; they stay idle afterwards.
      await Promise.all([0, 1, 2].map(() => probe.sql`select pg_sleep(0.05)`))
      const text = await scrape(baseUrl)
      expect(sample(text, 'commerce_db_connections', { application_name: 'commerce-metrics-probe', state: 'idle' })).toBe(3)
      // The scrape's own query runs on the API's pool.
      expect(sample(text, 'commerce_db_connections', { application_name: 'commerce-api', state: 'active' })).toBeGreaterThanOrEqual(1)
    } finally {
      await probe.close()
    }
    await expect.poll(async () => sample(await scrape(baseUrl), 'commerce_db_connections', { application_name: 'commerce-metrics-probe', state: 'idle' })).toBeUndefined()
  })

  test('queue depth reflects the jobs added, by task and state', async ({ ctx, baseUrl }) => {
    const task = 'metrics-test'
    const depth = async (state: string) => sample(await scrape(baseUrl), 'commerce_queue_jobs', { task, state })
    // Our own tasks are listed even when they have no job.
    expect(sample(await scrape(baseUrl), 'commerce_queue_jobs', { task: 'deliver-webhook', state: 'ready' })).toBe(0)
    expect(await depth('ready')).toBeUndefined()
    const { sql } = ctx.handle
    for (let n = 0; n < 3; n++) await sql`select graphile_worker.add_job(${task}, '{}'::json)`
    for (let n = 0; n < 2; n++) await sql`select graphile_worker.add_job(${task}, '{}'::json, run_at := now() + interval '1 hour')`
    const [locked] = await sql<{ id: string }[]>`select (graphile_worker.add_job(${task}, '{}'::json)).id`
    await sql`update graphile_worker._private_jobs set locked_at = now(), locked_by = 'metrics-test' where id = ${locked!.id}`
    const [failed] = await sql<{ id: string }[]>`select (graphile_worker.add_job(${task}, '{}'::json, max_attempts := 1)).id`
    await sql`update graphile_worker._private_jobs set attempts = 1 where id = ${failed!.id}`

    const text = await scrape(baseUrl)
    expect(sample(text, 'commerce_queue_jobs', { task, state: 'ready' })).toBe(3)
    expect(sample(text, 'commerce_queue_jobs', { task, state: 'scheduled' })).toBe(2)
    expect(sample(text, 'commerce_queue_jobs', { task, state: 'locked' })).toBe(1)
    expect(sample(text, 'commerce_queue_jobs', { task, state: 'failed' })).toBe(1)

    await sql`delete from graphile_worker._private_jobs j using graphile_worker._private_tasks t where t.id = j.task_id and t.identifier = ${task}`
    expect(await depth('ready')).toBeUndefined()
  })

  test('counts the event outbox rows no worker has relayed yet: one per committed transaction', async ({ ctx, baseUrl }) => {
    const waiting = async () => sample(await scrape(baseUrl), 'commerce_event_outbox_rows')
    const before = (await waiting())!
    expect(before).toBeGreaterThanOrEqual(0)
    const event = { kind: 'product.updated' as const, resourceId: newId(), data: { id: newId() } }
    await ctx.handle.db.transaction((tx) => writeEvents(tx, [event, event]))
    await ctx.handle.db.transaction((tx) => writeEvents(tx, [event]))
    expect(await waiting()).toBe(before + 2)
    await ctx.handle.sql`delete from event_outbox`
    expect(await waiting()).toBe(0)
  })
})

describe('the exposition', () => {
  test('types every series, and only counters end in _total (promtool checks the rest: metrics.debian.test.ts)', async ({ baseUrl }) => {
    await fetch(`${baseUrl}/api/v1/products`)
    const text = await scrape(baseUrl)
    const types = new Map([...text.matchAll(/^# TYPE (\w+) (\w+)$/gm)].map((match) => [match[1]!, match[2]!]))
    expect(types.get('commerce_http_requests_total')).toBe('counter')
    const misnamed = [...types].filter(([name, type]) => name.endsWith('_total') !== (type === 'counter'))
    expect(misnamed).toEqual([])
  })
})
