/** The WebSocket channel /api/v1/ws over real sockets: handshake, protocol, visibility, delivery across instances. */
import { once } from 'node:events'
import { createConnection } from 'node:net'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, describe, expect, onTestFinished } from 'vitest'
import type { FastifyInstance } from 'fastify'
import WebSocket from 'ws'
import { EVENT_KINDS, apiKeyLookupPrefix, generateApiKey, hashApiKey, type Product, type Role } from '@commerce/domain'
import { createApiKey, newId, sweepExpiredEvents, writeEvents, type NewEvent } from '@commerce/db'
import { startDatabaseProxy, type DatabaseProxy } from '@commerce/db/testing'
import { buildApp } from '../src/app.js'
import { test as apiTest, testConfig, type ApiErrorBody, type TestContext } from './helpers.js'
import { Client, connect, opened, WS_PATH, type Message } from './websocket-client.js'

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** `url` is the WebSocket address of the file's app. */
const test = apiTest.extend<{ url: string }>({
  url: [async ({ baseUrl }, use) => use(`${baseUrl.replace('http', 'ws')}${WS_PATH}`), { scope: 'file' }],
})

afterAll(() => {
  for (const socket of opened) socket.terminate()
})

/** Attempts an upgrade that the server must refuse, and returns the HTTP answer. */
function refusal(target: string, options: { headers?: Record<string, string>; protocols?: string[] } = {}) {
  return new Promise<{ status: number; body: ApiErrorBody }>((resolve, reject) => {
    const socket = new WebSocket(target, options.protocols, { headers: options.headers })
    socket.on('open', () => {
      socket.terminate()
      reject(new Error('the upgrade was accepted'))
    })
    socket.on('error', reject)
    socket.on('unexpected-response', (_request, response) => {
      let body = ''
      response.on('data', (chunk: Buffer) => (body += chunk.toString()))
      response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(body) as ApiErrorBody }))
    })
  })
}

/** A token signed like the app's own, with a chosen lifetime or issue time. */
function tokenFor(ctx: TestContext, user: { userId: string }, role: Role, options: { expiresInSeconds: number; issuedAt?: number }): string {
  const claims = { sub: user.userId, role, typ: 'user' as const, ...(options.issuedAt ? { iat: options.issuedAt } : {}) }
  return ctx.app.jwt.sign(claims, { expiresIn: options.expiresInSeconds })
}

/** Commits events straight to the database, each call its own transaction (NOTIFY at commit). */
function commitEvents(ctx: TestContext, ...events: NewEvent[]): Promise<string[]> {
  return ctx.handle.db.transaction((tx) => writeEvents(tx, events))
}

/** Writes events in a transaction left open until `commit` is called. */
async function holdEvents(ctx: TestContext, ...events: NewEvent[]): Promise<{ ids: string[]; commit(): Promise<void> }> {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let written!: (ids: string[]) => void
  const ids = new Promise<string[]>((resolve) => (written = resolve))
  const transaction = ctx.handle.db.transaction(async (tx) => {
    written(await writeEvents(tx, events))
    await released
  })
  return {
    ids: await ids,
    async commit() {
      release()
      await transaction
    },
  }
}

const productEvent = (): NewEvent => ({ kind: 'product.updated', resourceId: newId(), data: { id: crypto.randomUUID(), title: 'Lamp' } })
const orderEvent = (customerId: string | null, kind: NewEvent['kind'] = 'order.created'): NewEvent => ({
  kind,
  resourceId: newId(),
  data: { id: crypto.randomUUID(), customer_id: customerId },
  customerId,
})
const idsOf = (messages: Message[]) => messages.map((message) => message.id)
/** The smallest event id (a UUIDv7) of a moment: a position in the log. */
function idAt(ms: number): string {
  const hex = ms.toString(16).padStart(12, '0')
  return `${hex.slice(0, 8)}-${hex.slice(8)}-7000-8000-000000000000`
}

/**
 * Commits a product event and waits for it on every client: events reach clients in commit
 * order, so after it nothing committed earlier (such as a sign-in's customer.created) can follow.
 */
async function drain(ctx: TestContext, ...clients: Client[]) {
  const [marker] = await commitEvents(ctx, productEvent())
  for (const client of clients) await client.eventsUntil(marker!)
}

describe('the handshake', () => {
  test('no token, a bad token and an expired token are refused with HTTP 401 before any upgrade', async ({ ctx, url }) => {
    const missing = await refusal(url)
    expect(missing.status).toBe(401)
    expect(missing.body.error).toMatchObject({ code: 'unauthorized', message: 'Authentication required' })

    const forged = await refusal(url, { headers: { authorization: 'Bearer not.a.jwt' } })
    expect(forged.status).toBe(401)
    expect(forged.body.error.code).toBe('unauthorized')
    expect((await refusal(`${url}?access_token=not.a.jwt`)).status).toBe(401)
    expect((await refusal(url, { protocols: ['access_token', 'not.a.jwt'] })).status).toBe(401)

    const expired = tokenFor(ctx, await ctx.signIn('admin'), 'admin', { expiresInSeconds: 60, issuedAt: Math.floor(Date.now() / 1000) - 3600 })
    const late = await refusal(url, { headers: { authorization: `Bearer ${expired}` } })
    expect(late.status).toBe(401)
    expect(late.body.error).toMatchObject({ code: 'unauthorized', message: 'The access token is malformed, expired or invalid' })
    expect((await refusal(`${url}?access_token=${expired}`)).status).toBe(401)
  })

  test('a token in the Authorization header, in ?access_token= or as the subprotocol pair opens the channel', async ({ url, admin }) => {
    const byHeader = await connect(url, { token: admin })
    expect(byHeader.socket.protocol).toBe('')
    await connect(`${url}?access_token=${admin}`)
    const bySubprotocol = await connect(url, { protocols: ['access_token', admin] })
    // Browsers accept the handshake only when the server answers with a protocol they offered.
    expect(bySubprotocol.socket.protocol).toBe('access_token')
  })

  test('a plain GET without an upgrade answers 426 with the error body', async ({ ctx, admin }) => {
    const response = await ctx.request({ method: 'GET', url: WS_PATH, token: admin })
    expect(response.statusCode).toBe(426)
    expect(response.headers.upgrade).toBe('websocket')
    expect(response.json().error.code).toBe('upgrade_required')
    expect((await ctx.request({ method: 'GET', url: WS_PATH })).statusCode).toBe(401)
  })

  test('one caller holds at most WS_MAX_CONNECTIONS_PER_CALLER sockets: the next handshake is 429 until one closes', async ({ ctx, url }) => {
    const limit = ctx.config.wsMaxConnectionsPerCaller
    const customer = await ctx.signIn('customer')
    const held = await Promise.all(Array.from({ length: limit }, () => connect(url, { token: customer.token })))
    const refused = await refusal(url, { headers: { authorization: `Bearer ${customer.token}` } })
    expect(refused.status).toBe(429)
    expect(refused.body.error.code).toBe('rate_limited')
    // Another caller is not affected.
    await connect(url, { token: (await ctx.signIn('customer')).token })
    held[0]!.socket.close()
    await held[0]!.closed
    await connect(url, { token: customer.token })
  })

  test('the OpenAPI document describes the channel', async ({ ctx }) => {
    const document = (await ctx.request({ method: 'GET', url: '/api/v1/openapi.json' })).json()
    const operation = document.paths[WS_PATH].get
    expect(operation.description).toContain('access_token')
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['101', '401', '426']))
  })
})

describe('events', () => {
  test('an admin receives product.created for a product created through the API, in the exact envelope', async ({ ctx, url, admin }) => {
    const client = await connect(url, { token: admin })
    const product = await ctx.expectStatus<Product>(201, {
      method: 'POST',
      url: '/api/v1/products',
      payload: { title: 'Desk lamp', price: 19.99, currency: 'EUR' },
      token: admin,
    })
    const [row] = await ctx.handle.sql<{ id: string; data: Record<string, unknown>; created_at: string }[]>`
      select id, data, created_at from events where kind = 'product.created' and data->>'id' = ${product.id}`
    // The last one: an event committed just before the client connected (the customer of the
    // test's sign-in) may still be announced after it, and come first.
    const message = (await client.eventsUntil(row!.id)).at(-1)
    expect(Object.keys(message!).sort()).toEqual(['data', 'event', 'id', 'resource_id', 'sequence', 'timestamp', 'type'])
    expect(message).toEqual({
      type: 'event',
      id: row!.id,
      event: 'product.created',
      timestamp: expect.stringMatching(ISO_UTC),
      resource_id: product.id,
      sequence: 1,
      data: row!.data,
    })
    expect(message!.id).toMatch(UUID)
    expect(message!.timestamp).toBe(new Date(row!.created_at).toISOString())
    expect(message!.data).toMatchObject({ id: product.id, title: 'Desk lamp', price: 19.99 })
  })

  test("a customer receives product events and its own orders and account, never another customer's", async ({ ctx, url, admin }) => {
    const alice = await ctx.signIn('customer')
    const bob = await ctx.signIn('customer')
    const aliceClient = await connect(url, { token: alice.token })
    const adminClient = await connect(url, { token: admin })
    await drain(ctx, aliceClient, adminClient)

    const [bobsOrder] = await commitEvents(ctx, orderEvent(bob.customerId))
    const [bobsAccount] = await commitEvents(ctx, { kind: 'customer.created', resourceId: newId(), data: { id: bob.customerId }, customerId: bob.customerId })
    const [anonymousOrder] = await commitEvents(ctx, orderEvent(null))
    const [product] = await commitEvents(ctx, productEvent())
    const [aliceOrder, alicePayment] = await commitEvents(ctx, orderEvent(alice.customerId), orderEvent(alice.customerId, 'payment.succeeded'))
    const [aliceAccount] = await commitEvents(ctx, { kind: 'customer.created', resourceId: newId(), data: { id: alice.customerId }, customerId: alice.customerId })

    // In commit order: what did not come before the last one never comes.
    expect(idsOf(await aliceClient.eventsUntil(aliceAccount!))).toEqual([product, aliceOrder, alicePayment, aliceAccount])
    expect(idsOf(await adminClient.eventsUntil(aliceAccount!))).toEqual([
      bobsOrder,
      bobsAccount,
      anonymousOrder,
      product,
      aliceOrder,
      alicePayment,
      aliceAccount,
    ])
  })

  test('an event committed but never announced (its writer died between COMMIT and NOTIFY) still reaches clients, once', async ({ ctx, url, admin }) => {
    const client = await connect(url, { token: admin })
    await drain(ctx, client)
    const id = newId()
    // Written as writeEvents would, without its announcement.
    await ctx.handle.sql`insert into events (id, kind, data, resource_id, sequence)
      values (${id}, 'product.updated', ${JSON.stringify({ id: 'unannounced' })}::jsonb, ${newId()}, 1)`
    const [event] = (await client.eventsUntil(id)).slice(-1)
    expect(event).toMatchObject({ type: 'event', id, event: 'product.updated', data: { id: 'unannounced' } })
    // The look for missed events repeats; it sends nothing twice.
    const [marker] = await commitEvents(ctx, productEvent())
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    const [after] = await commitEvents(ctx, productEvent())
    expect(idsOf(await client.eventsUntil(after!))).toEqual([marker, after])
  })

  test('events arrive in commit order, not in the order of their ids', async ({ ctx, url, admin }) => {
    const client = await connect(url, { token: admin })
    await drain(ctx, client)
    const early = await holdEvents(ctx, productEvent())
    const [late] = await commitEvents(ctx, productEvent())
    await early.commit()
    expect(early.ids[0]! < late!).toBe(true)
    expect(idsOf(await client.eventsUntil(early.ids[0]!))).toEqual([late, early.ids[0]])
  })

  test('events of a rolled-back transaction are never sent', async ({ ctx, url, admin }) => {
    const client = await connect(url, { token: admin })
    await drain(ctx, client)
    let rolledBack: string[] = []
    await expect(
      ctx.handle.db.transaction(async (tx) => {
        rolledBack = await writeEvents(tx, [productEvent(), orderEvent(null)])
        throw new Error('roll back')
      }),
    ).rejects.toThrow('roll back')
    const [committed] = await commitEvents(ctx, productEvent())
    expect(idsOf(await client.eventsUntil(committed!))).toEqual([committed])
    expect(rolledBack).toHaveLength(2)
    expect(client.messages.map((message) => message.id)).not.toContain(rolledBack[0])
  })
})

describe('API keys', () => {
  test('a key with events:read sees every event; a key without it sees product events only', async ({ ctx, url }) => {
    const keyWith = async (scopes: string[]) => {
      const key = generateApiKey()
      await createApiKey(ctx.handle.db, { name: scopes.join(' '), prefix: apiKeyLookupPrefix(key), keyHash: hashApiKey(key), scopes, rateLimitPerMinute: null })
      return key
    }
    const reader = await connect(url, { token: await keyWith(['events:read']) })
    const catalog = await connect(url, { token: await keyWith(['products:read']) })
    await drain(ctx, reader, catalog)
    const [order] = await commitEvents(ctx, orderEvent(null))
    const [product] = await commitEvents(ctx, productEvent())
    expect(idsOf(await reader.eventsUntil(product!))).toEqual([order, product])
    expect(idsOf(await catalog.eventsUntil(product!))).toEqual([product])
  })
})

describe('client messages', () => {
  test('subscribe narrows to the kinds named, later subscribes add, unsubscribe removes; events follow the filter', async ({ ctx, url, admin }) => {
    const client = await connect(url, { token: admin })
    await drain(ctx, client)
    client.send({ type: 'subscribe', events: ['order.*'] })
    expect(await client.next()).toEqual({ type: 'subscribed', events: EVENT_KINDS.filter((kind) => kind.startsWith('order.')) })
    client.send({ type: 'subscribe', events: ['product.created'] })
    client.send({ type: 'unsubscribe', events: ['order.paid', 'order.refunded'] })
    await client.next()
    const expected = EVENT_KINDS.filter((kind) => (kind.startsWith('order.') && kind !== 'order.paid' && kind !== 'order.refunded') || kind === 'product.created')
    expect(expected).toContain('order.created')
    expect(await client.next()).toEqual({ type: 'subscribed', events: expected })

    const [, , created, , listed] = await commitEvents(
      ctx, productEvent(),
      orderEvent(null, 'order.paid'),
      orderEvent(null, 'order.created'),
      orderEvent(null, 'payment.succeeded'),
      { kind: 'product.created', resourceId: newId(), data: { id: crypto.randomUUID() } },
    )
    expect(idsOf(await client.eventsUntil(listed!))).toEqual([created, listed])

    client.send({ type: 'subscribe', events: ['*'] })
    expect(await client.next()).toEqual({ type: 'subscribed', events: [...EVENT_KINDS] })
  })

  test('unsubscribe before any subscribe removes from everything', async ({ url, admin }) => {
    const client = await connect(url, { token: admin })
    client.send({ type: 'unsubscribe', events: ['product.*'] })
    expect(await client.next()).toEqual({ type: 'subscribed', events: EVENT_KINDS.filter((kind) => !kind.startsWith('product.')) })
  })

  test('ping is answered with pong; malformed and unknown messages with an error, and the socket stays open', async ({ url, admin }) => {
    const client = await connect(url, { token: admin })
    client.send({ type: 'ping' })
    expect(await client.next()).toEqual({ type: 'pong' })
    const refused = [
      ['{"type": "subscribe"', 'Messages must be JSON objects'],
      ['42', "Field 'type' is required; expected subscribe, unsubscribe, resume or ping"],
      [{ type: 'shout' }, 'Unknown message type "shout"; expected subscribe, unsubscribe, resume or ping'],
      [{ type: 'subscribe' }, "Field 'events' must be a non-empty array"],
      [{ type: 'subscribe', events: [] }, "Field 'events' must be a non-empty array"],
      [{ type: 'subscribe', events: ['order.created', 'order.exploded'] }, 'Unknown event "order.exploded"'],
      [{ type: 'unsubscribe', events: [7] }, 'Unknown event 7'],
    ] as const
    for (const [message, error] of refused) {
      client.send(message)
      expect(await client.next(), JSON.stringify(message)).toEqual({ type: 'error', message: expect.stringContaining(error) })
    }
    // The refused subscribe changed nothing: the filter is still everything.
    client.send({ type: 'unsubscribe', events: ['customer.created'] })
    expect(await client.next()).toEqual({ type: 'subscribed', events: EVENT_KINDS.filter((kind) => kind !== 'customer.created') })
    client.send({ type: 'ping' })
    expect(await client.next()).toEqual({ type: 'pong' })
    expect(client.socket.readyState).toBe(WebSocket.OPEN)
  })

  test('a message over 64 KiB closes the socket with 1009', async ({ url, admin }) => {
    const client = await connect(url, { token: admin })
    client.send(JSON.stringify({ type: 'ping', padding: 'x'.repeat(64 * 1024) }))
    expect((await client.closed).code).toBe(1009)
  })
})

describe('token expiry', () => {
  test('the socket is closed with 4001 when the token expires', async ({ ctx, url }) => {
    const { userId } = await ctx.signIn('customer')
    const shortLived = tokenFor(ctx, { userId }, 'customer', { expiresInSeconds: 2 })
    const { exp } = ctx.app.jwt.decode<{ exp: number }>(shortLived)!
    const client = await connect(url, { token: shortLived })
    const closed = await client.closed
    expect(closed).toEqual({ code: 4001, reason: 'Token expired' })
    expect(Date.now()).toBeGreaterThanOrEqual(exp * 1000)
    expect(Date.now()).toBeLessThan(exp * 1000 + 1000)
  })
})

describe('resuming', () => {
  // Every test here opens several connections of the admin: close them, within the per-caller limit.
  afterEach(async () => {
    const open = opened.filter((socket) => socket.readyState !== WebSocket.CLOSED)
    for (const socket of open) socket.terminate()
    await Promise.all(open.map((socket) => (socket.readyState === WebSocket.CLOSED ? undefined : once(socket, 'close'))))
  })

  /** Opens a connection with `?since=` and returns it with what it sent up to and including `resumed`. */
  async function resumeAt(base: string, since: string, token: string) {
    const client = await connect(`${base}?since=${since}`, { token })
    return { client, replay: await client.until((message) => message.type === 'resumed', 30_000) }
  }
  const resumed = (after: string, count: number) => ({ type: 'resumed', after, count })

  test('?since= sends the events after it that the client missed, in id order and in the live envelope, then resumed, then live events', async ({ ctx, url, admin }) => {
    const first = await connect(url, { token: admin })
    const watcher = await connect(url, { token: admin })
    await drain(ctx, first, watcher)
    const [since] = await commitEvents(ctx, productEvent())
    await first.eventsUntil(since!)
    first.socket.close()
    await first.closed

    const missed = [...(await commitEvents(ctx, orderEvent(null), productEvent())), ...(await commitEvents(ctx, orderEvent(null, 'order.paid')))]
    const live = await watcher.eventsUntil(missed.at(-1)!)
    const { client, replay } = await resumeAt(url, since!, admin)
    // Exactly what a live client got for them, message for message.
    expect(replay).toEqual([...live.filter((message) => message.id !== since), resumed(since!, 3)])
    expect(idsOf(replay.slice(0, -1))).toEqual(missed)

    const [next] = await commitEvents(ctx, productEvent())
    expect(idsOf(await client.eventsUntil(next!))).toEqual([next])
  })

  test('events committed by parallel transactions while a replay runs arrive exactly once: the ids received are the ids written', async ({ ctx, url, admin }) => {
    // Only customer.created: it would fall behind on the events below, and be dropped.
    const watcher = await connect(url, { token: admin })
    watcher.send({ type: 'subscribe', events: ['customer.created'] })
    await watcher.next()
    const [since] = await commitEvents(ctx, productEvent())
    // 16 MB to replay, more than the sockets' buffers take: with the client not reading, the
    // replay stops part-way, and the writes below land while it runs.
    const padded = (event: NewEvent): NewEvent => ({ ...event, data: { ...event.data, padding: 'x'.repeat(8000) } })
    const missed = await commitEvents(ctx, ...Array.from({ length: 1950 }, (_, index) => padded(index % 2 ? productEvent() : orderEvent(null))))
    // Written before the last missed events, committed while the replay is stopped: ids inside
    // its range that it has not read yet, so the feed and the replay both carry them.
    const held = await Promise.all([holdEvents(ctx, orderEvent(null)), holdEvents(ctx, productEvent(), orderEvent(null, 'order.paid'))])
    missed.push(...(await commitEvents(ctx, ...Array.from({ length: 50 }, () => padded(productEvent())))))
    // Delivered by this instance before the connection opens (it delivers in commit order), so
    // they are replayed; what it has not delivered yet comes live after `resumed`.
    const [delivered] = await commitEvents(ctx, { kind: 'customer.created', resourceId: newId(), data: { id: 'marker' } })
    await watcher.eventsUntil(delivered!, 30_000)
    // Committed but never announced: the feed finds it within two seconds, and it must not come twice.
    const unannounced = newId()
    await ctx.handle.sql`insert into events (id, kind, data, resource_id, sequence)
      values (${unannounced}, 'product.updated', ${JSON.stringify({ id: 'unannounced' })}::json, ${newId()}, 1)`

    const client = await connect(`${url}?since=${since}`, { token: admin })
    client.socket.pause()
    await expect.poll(() => [...ctx.app.websocketServer.clients].some((socket) => socket.bufferedAmount > 0), { timeout: 10_000 }).toBe(true)
    // Parallel transactions while the replay waits, then while the client reads the rest, and after.
    const written: string[] = []
    const writeRound = async () => {
      const batches = await Promise.all(Array.from({ length: 8 }, () => commitEvents(ctx, productEvent(), orderEvent(null, 'order.paid'))))
      written.push(...batches.flat())
    }
    await Promise.all([writeRound(), ...held.map((transaction) => transaction.commit()), writeRound()])
    let replayDone = false
    const writers = (async () => {
      for (let roundsAfter = 0; roundsAfter < 3; ) {
        if (replayDone) roundsAfter++
        await writeRound()
      }
    })()
    client.socket.resume()
    await client.until((message) => message.type === 'resumed', 60_000)
    replayDone = true
    await writers
    // Past the feed's look for unannounced events.
    await new Promise((resolve) => setTimeout(resolve, 2_500))
    const [marker] = await commitEvents(ctx, productEvent())
    await client.eventsUntil(marker!, 15_000)

    const received = client.messages.filter((message) => message.type === 'event').map((message) => message.id as string)
    const expected = [...missed, ...held.flatMap((transaction) => transaction.ids), delivered!, unannounced, ...written, marker!]
    expect(received.length - new Set(received).size).toBe(0)
    expect(new Set(received)).toEqual(new Set(expected))
    expect(received).toHaveLength(expected.length)
    // The replay came in id order, before `resumed`.
    const end = client.messages.findIndex((message) => message.type === 'resumed')
    const replayed = idsOf(client.messages.slice(1, end)) as string[]
    expect(replayed).toEqual([...replayed].sort())
    expect(replayed.filter((id) => missed.includes(id))).toEqual(missed)
    expect(client.messages[end]).toEqual(resumed(since!, replayed.length))
  })

  test('the resume message replays what was missed, skips what the connection was already sent live, and follows its filter', async ({ ctx, url, admin }) => {
    const watcher = await connect(url, { token: admin })
    await drain(ctx, watcher)
    const [since] = await commitEvents(ctx, productEvent())
    const [order] = await commitEvents(ctx, orderEvent(null), productEvent())
    // Written before the next event and committed after the connection opens: sent live, with
    // an id inside what a replay reads.
    const held = await holdEvents(ctx, orderEvent(null, 'order.paid'))
    const [newest] = await commitEvents(ctx, productEvent())
    await watcher.eventsUntil(newest!)

    const client = await connect(url, { token: admin })
    await held.commit()
    expect(idsOf(await client.eventsUntil(held.ids[0]!))).toEqual(held.ids)
    client.send({ type: 'subscribe', events: ['order.*'] })
    client.send({ type: 'resume', after: since })
    const answers = await client.until((message) => message.type === 'resumed')
    expect(answers).toEqual([
      { type: 'subscribed', events: EVENT_KINDS.filter((kind) => kind.startsWith('order.')) },
      expect.objectContaining({ type: 'event', id: order, event: 'order.created' }),
      resumed(since!, 1),
    ])

    const [liveOrder] = await commitEvents(ctx, orderEvent(null), productEvent())
    const [last] = await commitEvents(ctx, orderEvent(null, 'order.shipped'))
    expect(idsOf(await client.eventsUntil(last!))).toEqual([liveOrder, last])
  })

  test("a customer's replay holds the product events and its own, never another customer's, like its live events", async ({ ctx, url, admin }) => {
    const alice = await ctx.signIn('customer')
    const bob = await ctx.signIn('customer')
    const catalogKey = await ctx.createApiKey(['products:read'])
    // A replay reads up to the newest event this instance has been told of: wait until all are.
    const watcher = await connect(url, { token: admin })
    await drain(ctx, watcher)
    const [since] = await commitEvents(ctx, productEvent())
    const [bobsOrder] = await commitEvents(ctx, orderEvent(bob.customerId))
    const [anonymousOrder] = await commitEvents(ctx, orderEvent(null))
    const [product] = await commitEvents(ctx, productEvent())
    const [aliceOrder, alicePayment] = await commitEvents(ctx, orderEvent(alice.customerId), orderEvent(alice.customerId, 'payment.succeeded'))
    const [bobsAccount] = await commitEvents(ctx, { kind: 'customer.created', resourceId: newId(), data: { id: bob.customerId }, customerId: bob.customerId })
    await watcher.eventsUntil(bobsAccount!)

    const forAlice = await resumeAt(url, since!, alice.token)
    expect(idsOf(forAlice.replay.slice(0, -1))).toEqual([product, aliceOrder, alicePayment])
    expect(forAlice.replay.at(-1)).toEqual(resumed(since!, 3))
    const forKey = await resumeAt(url, since!, catalogKey.key)
    expect(forKey.replay).toEqual([expect.objectContaining({ id: product }), resumed(since!, 1)])
    const forAdmin = await resumeAt(url, since!, admin)
    expect(idsOf(forAdmin.replay.slice(0, -1))).toEqual([bobsOrder, anonymousOrder, product, aliceOrder, alicePayment, bobsAccount])
  })

  test('a malformed ?since= is refused with 400 before the upgrade; an id that is no event is a position in the log', async ({ ctx, url, admin }) => {
    const headers = { authorization: `Bearer ${admin}` }
    // Not a UUID, a UUIDv4 (no time in it), too long.
    for (const since of ['nope', crypto.randomUUID(), `${newId()}0`]) {
      const refused = await refusal(`${url}?since=${since}`, { headers })
      expect(refused.status, since).toBe(400)
      expect(refused.body.error.code, since).toBe('validation_error')
      expect(refused.body.error.details, since).toContainEqual({ field: 'since', message: expect.stringContaining("Field 'since' must match pattern") })
    }

    const watcher = await connect(url, { token: admin })
    const [before, after] = await commitEvents(ctx, productEvent(), productEvent())
    // Delivered by this instance: a connection opened now replays up to it.
    await watcher.eventsUntil(after!)
    // The id right after `before`: no event has it, and `after` is larger.
    const hex = (BigInt(`0x${before!.replaceAll('-', '')}`) + 1n).toString(16).padStart(32, '0')
    const position = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
    expect(await ctx.handle.sql`select 1 from events where id = ${position}`).toHaveLength(0)
    expect(position < after!).toBe(true)
    // Upper case is the same id.
    const { replay } = await resumeAt(url, position.toUpperCase(), admin)
    expect(replay).toEqual([expect.objectContaining({ id: after }), resumed(position, 1)])
  })

  test('a bad resume message, or a second resume, is answered with an error and the socket stays open', async ({ ctx, url, admin }) => {
    const client = await connect(url, { token: admin })
    const refused = [
      [{ type: 'resume' }, "Field 'after' is required"],
      [{ type: 'resume', after: 'nope' }, "Field 'after' must be an event id (a UUIDv7)"],
      [{ type: 'resume', after: crypto.randomUUID() }, "Field 'after' must be an event id (a UUIDv7)"],
      [{ type: 'resume', after: 7 }, "Field 'after' must be an event id (a UUIDv7), not 7"],
    ] as const
    for (const [message, error] of refused) {
      client.send(message)
      expect(await client.next(), JSON.stringify(message)).toEqual({ type: 'error', message: expect.stringContaining(error) })
    }
    const [since] = await commitEvents(ctx, productEvent())
    await client.eventsUntil(since!)
    client.send({ type: 'resume', after: since })
    expect(await client.next()).toEqual(resumed(since!, 0))
    client.send({ type: 'resume', after: since })
    expect(await client.next()).toEqual({ type: 'error', message: expect.stringContaining('resumed already') })

    const { client: resumedAtConnect } = await resumeAt(url, since!, admin)
    resumedAtConnect.send({ type: 'resume', after: since })
    expect(await resumedAtConnect.next()).toEqual({ type: 'error', message: expect.stringContaining('resumed already') })
    client.send({ type: 'ping' })
    expect(await client.next()).toEqual({ type: 'pong' })
    expect(client.socket.readyState).toBe(WebSocket.OPEN)
  })

  test('the resume point is a position: an event with a smaller id that commits after the resume is not sent', async ({ ctx, url, admin }) => {
    const first = await connect(url, { token: admin })
    await drain(ctx, first)
    const held = await holdEvents(ctx, productEvent())
    const [seen] = await commitEvents(ctx, productEvent())
    await first.eventsUntil(seen!)
    first.socket.close()

    const { client, replay } = await resumeAt(url, seen!, admin)
    expect(replay).toEqual([resumed(seen!, 0)])
    await held.commit()
    const [next] = await commitEvents(ctx, productEvent())
    expect(held.ids[0]! < seen!).toBe(true)
    expect(idsOf(await client.eventsUntil(next!))).toEqual([next])
  })

  describe('limits', () => {
    /** `cappedUrl` is an app on the file's database that replays at most 5 events. */
    const cappedTest = test.extend<{ cappedUrl: string }>({
      cappedUrl: async ({ ctx }, use) => {
        const capped = await buildApp(testConfig(ctx.database.url, { wsReplayMaxEvents: 5 }), { logger: false })
        await capped.listen({ host: '127.0.0.1', port: 0 })
        await use(`ws://127.0.0.1:${(capped.server.address() as AddressInfo).port}${WS_PATH}`)
        await capped.close()
      },
    })

    cappedTest('more than WS_REPLAY_MAX_EVENTS events after the resume point: an error, live events go on, and a later point can be resumed from', async ({ ctx, admin, cappedUrl }) => {
      const watcher = await connect(cappedUrl, { token: admin })
      const [since] = await commitEvents(ctx, productEvent())
      const five = await commitEvents(ctx, productEvent(), orderEvent(null), productEvent(), productEvent(), orderEvent(null))
      // This instance has delivered them: a connection opened now replays up to them.
      await watcher.eventsUntil(five[4]!)
      const atLimit = await resumeAt(cappedUrl, since!, admin)
      expect(idsOf(atLimit.replay.slice(0, -1))).toEqual(five)
      expect(atLimit.replay.at(-1)).toEqual(resumed(since!, 5))

      const [sixth] = await commitEvents(ctx, productEvent())
      await watcher.eventsUntil(sixth!)
      const over = await connect(`${cappedUrl}?since=${since}`, { token: admin })
      expect(await over.next()).toEqual({
        type: 'error',
        code: 'replay_limit_exceeded',
        message: expect.stringContaining(`More than 5 events were written after ${since}: too many to replay`),
      })
      const [live] = await commitEvents(ctx, productEvent())
      expect(idsOf(await over.eventsUntil(live!))).toEqual([live])
      over.send({ type: 'resume', after: five[2] })
      const replay = await over.until((message) => message.type === 'resumed')
      expect(idsOf(replay.slice(0, -1))).toEqual([five[3], five[4], sixth])
      expect(replay.at(-1)).toEqual(resumed(five[2]!, 3))
    })
  })

  test('a resume from a position the event retention swept past answers replay_expired: nothing replayed, live events go on, and a later point can be resumed from', async ({ ctx, admin, url }) => {
    // Three events of January 1999, and a sweep whose retention reaches back to the 4th: it
    // deletes them and notes how far it went (the worker's expire-events).
    const old = [1, 2, 3].map((day) => idAt(Date.UTC(1999, 0, day)))
    await ctx.handle.sql`insert into events (id, kind, data, resource_id, sequence) select id, 'product.updated', '{}', id, 1 from unnest(${old}::uuid[]) as id`
    onTestFinished(async () => {
      await ctx.handle.sql`delete from event_retention`
    })
    expect(await sweepExpiredEvents(ctx.handle.sql, Date.now() - Date.UTC(1999, 0, 4))).toEqual({ examined: 3, deleted: 3 })

    const expired = await connect(`${url}?since=${idAt(Date.UTC(1998, 11, 31))}`, { token: admin })
    expect(await expired.next()).toEqual({
      type: 'error',
      code: 'replay_expired',
      message: expect.stringContaining("are past the event log's retention (EVENT_RETENTION) and some were deleted: nothing was replayed"),
    })
    const [live] = await commitEvents(ctx, productEvent())
    expect(idsOf(await expired.eventsUntil(live!))).toEqual([live])
    // From where the sweep stopped on, nothing is missing: the resume replays.
    expired.send({ type: 'resume', after: old[2] })
    expect((await expired.until((message) => message.type === 'resumed')).at(-1)).toMatchObject({ type: 'resumed', after: old[2] })
  })

  test('a burst of events larger than the 4 MiB send limit reaches every client that reads; one that does not read is dropped when more events come, and any client by a burst past 16 MiB', async ({ ctx, admin }) => {
    const own = await buildApp(testConfig(ctx.database.url), { logger: false })
    try {
      await own.listen({ host: '127.0.0.1', port: 0 })
      const ownUrl = `ws://127.0.0.1:${(own.server.address() as AddressInfo).port}${WS_PATH}`
      const readers = [await connect(ownUrl, { token: admin }), await connect(ownUrl, { token: admin })]
      const stalled = await connect(ownUrl, { token: admin })
      stalled.socket.pause()
      const stalledServerSide = [...own.websocketServer.clients].at(-1)!
      // 200 events of 50 KB in one transaction (10 MB for each client: more than the limit and the
      // kernel's socket buffers together, less than MAX_BURST_BYTES), announced in one notification
      // (200 ids), so the feed loads and sends them in one turn however the machine is loaded.
      const burst = (eventBytes = 50_000) =>
        commitEvents(ctx, ...Array.from({ length: 200 }, (): NewEvent => ({ kind: 'product.updated', resourceId: newId(), data: { padding: 'x'.repeat(eventBytes) } })))
      let bursts = 0
      while (stalledServerSide.readyState === WebSocket.OPEN && bursts < 4) {
        const ids = await burst()
        bursts++
        for (const reader of readers) expect(idsOf(await reader.eventsUntil(ids.at(-1)!, 15_000)).slice(-ids.length)).toEqual(ids)
      }
      // Not dropped for the first burst alone: for still holding it unsent when the next came.
      expect(bursts).toBe(2)
      expect(stalledServerSide.readyState).toBe(WebSocket.CLOSED)
      stalled.socket.resume()
      expect((await stalled.closed).code).toBe(1006)
      for (const reader of readers) expect(reader.socket.readyState).toBe(WebSocket.OPEN)
      // A burst past MAX_BURST_BYTES (16 MiB): 25 MB in one notification is more than a client may hold, reader or not.
      await burst(125_000)
      for (const reader of readers) expect((await reader.closed).code).toBe(1006)
    } finally {
      await own.close()
    }
  })

  test('a long replay is read in pages and waits for a client that does not read, then sends it all', async ({ ctx, admin }) => {
    const paced = await buildApp(testConfig(ctx.database.url, { wsReplayMaxEvents: 1_000_000 }), { logger: false })
    try {
      await paced.listen({ host: '127.0.0.1', port: 0 })
      const pacedUrl = `ws://127.0.0.1:${(paced.server.address() as AddressInfo).port}${WS_PATH}`
      // 2,000 events of 8 KB (16 MB, more than the kernel's socket buffers hold), dated 2001 so no
      // feed sends them live and every other event of the log comes after them.
      const start = Date.UTC(2001, 0, 1)
      const big = Array.from({ length: 2000 }, (_, index) => idAt(start + 1 + index))
      await ctx.handle.sql`
        insert into events (id, kind, data, resource_id, sequence)
        select id, 'product.updated', json_build_object('id', id, 'padding', repeat('x', 8000)), id, 1 from unnest(${big}::uuid[]) as id`
      const since = idAt(start)

      const client = await connect(`${pacedUrl}?since=${since}`, { token: admin })
      client.socket.pause()
      const [serverSide] = [...paced.websocketServer.clients]
      // The socket stops taking data, and what waits in the process stays about one MiB.
      await expect.poll(() => serverSide!.bufferedAmount, { timeout: 10_000 }).toBeGreaterThan(0)
      for (let sample = 0; sample < 10; sample++) {
        await new Promise((resolve) => setTimeout(resolve, 50))
        expect(serverSide!.bufferedAmount).toBeLessThan(2 * 1024 * 1024)
      }
      expect(serverSide!.readyState).toBe(WebSocket.OPEN)

      client.socket.resume()
      const replay = await client.until((message) => message.type === 'resumed', 60_000)
      const events = replay.slice(0, -1)
      expect(idsOf(events.slice(0, big.length))).toEqual(big)
      expect((events[0]!.data as { padding: string }).padding).toHaveLength(8000)
      expect(replay.at(-1)).toEqual(resumed(since, events.length))
      const [total] = await ctx.handle.sql<{ n: number }[]>`select count(*)::int as n from events where id > ${since}`
      expect(events.length).toBe(total!.n)
    } finally {
      await paced.close()
    }
  })
})

describe('a second API instance on the same database', () => {
  interface Second {
    app: FastifyInstance
    url: string
    /** Between it and PostgreSQL, to cut its connections. */
    proxy: DatabaseProxy
    logLines: string[]
  }
  /** Another app on the file's database (through a proxy, with a 200 ms heartbeat), started before the block's first test. */
  const secondTest = test.extend<{ second: Second }>({
    second: [
      async ({ ctx }, use) => {
        const proxy = await startDatabaseProxy(new URL(ctx.database.url))
        const logLines: string[] = []
        const app = await buildApp(testConfig(proxy.url, { wsHeartbeatIntervalMs: 200 }), {
          logger: { level: 'info', stream: { write: (line: string) => logLines.push(line) } },
        })
        await app.listen({ host: '127.0.0.1', port: 0 })
        await use({ app, url: `ws://127.0.0.1:${(app.server.address() as AddressInfo).port}${WS_PATH}`, proxy, logLines })
        await app.close()
        await proxy.close()
      },
      { scope: 'file', auto: true },
    ],
  })

  /**
   * Ends the other instance's LISTEN connection and keeps it from coming back until
   * proxy.refuse(false) (at the latest when the test ends, so a failure does not take the next
   * tests' database away). New connections are refused meanwhile, so the instance's pool is filled
   * first: queries that happen to overlap (a handshake's lookups, the feed's catch-up) must not
   * need a connection it cannot make.
   */
  async function dropListener(ctx: TestContext, proxy: DatabaseProxy, other: FastifyInstance) {
    onTestFinished(() => proxy.refuse(false))
    const ready = await Promise.all(Array.from({ length: 8 }, () => other.inject({ method: 'GET', url: '/ready' })))
    expect(ready.map((response) => response.statusCode)).toEqual(ready.map(() => 200))
    proxy.refuse(true)
    const [listener] = await ctx.handle.sql<{ pid: number }[]>`
      select pid from pg_stat_activity
      where datname = current_database() and query ilike 'listen%' and client_port = any(${proxy.ports()}::int[])`
    expect(listener).toBeDefined()
    await ctx.handle.sql`select pg_terminate_backend(${listener!.pid})`
  }

  secondTest('a client on one instance receives events caused through the other', async ({ ctx, url, admin, second: { app: other, url: otherUrl } }) => {
    const here = await connect(url, { token: admin })
    const there = await connect(otherUrl, { token: admin })
    const viaOther = await other.inject({
      method: 'POST',
      url: '/api/v1/products',
      headers: { authorization: `Bearer ${admin}` },
      payload: { title: 'Made over there' },
    })
    expect(viaOther.statusCode).toBe(201)
    const viaHere = await ctx.expectStatus<Product>(201, { method: 'POST', url: '/api/v1/products', payload: { title: 'Made here' }, token: admin })
    const creationOf = (id: string) => (message: Message) => message.event === 'product.created' && (message.data as Product).id === id
    expect((await here.until(creationOf(viaOther.json<Product>().id))).at(-1)).toMatchObject({ data: { title: 'Made over there' } })
    expect((await there.until(creationOf(viaHere.id))).at(-1)).toMatchObject({ data: { title: 'Made here' } })
  })

  secondTest('events committed while the LISTEN connection is down arrive once it is back, each once', async ({ ctx, admin, second: { app: other, url: otherUrl, proxy } }) => {
    const client = await connect(otherUrl, { token: admin })
    // Written before the last event sent, committed after the drop: its id is older than all sent.
    const held = await holdEvents(ctx, orderEvent(null))
    const [before] = await commitEvents(ctx, productEvent())
    await client.eventsUntil(before!)

    // Drop this instance's LISTEN connection and keep it from coming back until the events are written.
    await dropListener(ctx, proxy, other)
    await held.commit()
    const missed = [
      ...held.ids,
      ...(await commitEvents(ctx, productEvent())),
      ...(await commitEvents(ctx, orderEvent(null), orderEvent(null, 'order.paid'))),
      ...(await commitEvents(ctx, productEvent())),
    ]
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(client.unread()).toEqual([])

    proxy.refuse(false)
    expect(idsOf(await client.eventsUntil(missed.at(-1)!, 15_000))).toEqual(missed)
    const [after] = await commitEvents(ctx, productEvent())
    expect(idsOf(await client.eventsUntil(after!))).toEqual([after])
  })

  secondTest('a client resuming while the LISTEN connection is down gets each missed event once: from the table, or live once it is back', async ({ ctx, admin, second: { app: other, url: otherUrl, proxy } }) => {
    const watcher = await connect(otherUrl, { token: admin })
    const [since] = await commitEvents(ctx, productEvent())
    // Written before the next event and committed while the LISTEN connection is down: inside the
    // replay's range, and replayed by the feed as well once the connection is back.
    const held = await holdEvents(ctx, orderEvent(null))
    const [delivered] = await commitEvents(ctx, productEvent())
    await watcher.eventsUntil(delivered!)

    await dropListener(ctx, proxy, other)
    await held.commit()
    // Later ids than any this instance delivered: they come live, once it hears of them.
    const during = await commitEvents(ctx, productEvent(), orderEvent(null))

    const client = await connect(`${otherUrl}?since=${since}`, { token: admin })
    const replay = await client.until((message) => message.type === 'resumed')
    expect(idsOf(replay.slice(0, -1))).toEqual([...held.ids, delivered])
    expect(replay.at(-1)).toEqual({ type: 'resumed', after: since, count: 2 })

    proxy.refuse(false)
    expect(idsOf(await client.eventsUntil(during.at(-1)!, 15_000))).toEqual(during)
    const [after] = await commitEvents(ctx, productEvent())
    expect(idsOf(await client.eventsUntil(after!))).toEqual([after])
  })

  secondTest('access tokens in query strings never reach the logs', async ({ admin, second: { url: otherUrl, logLines } }) => {
    await connect(`${otherUrl}?access_token=${admin}`)
    await refusal(`${otherUrl}?access_token=${admin}x`)
    const logs = logLines.join('')
    // The refused handshake is logged by its path, which never carries the query.
    expect(logs).toContain(`"path":"${WS_PATH}","status_code":401`)
    expect(logs).not.toContain(admin)
  })

  secondTest('a connection made with an API key ends (4003) at the heartbeat after the key is revoked', async ({ ctx, admin, second: { url: otherUrl } }) => {
    const key = generateApiKey()
    const row = await createApiKey(ctx.handle.db, { name: 'ws', prefix: apiKeyLookupPrefix(key), keyHash: hashApiKey(key), scopes: ['events:read'], rateLimitPerMinute: null })
    const client = await connect(otherUrl, { token: key })
    const bystander = await connect(otherUrl, { token: admin })
    await ctx.handle.sql`update api_keys set revoked_at = now() where id = ${row!.id}`
    expect(await client.closed).toEqual({ code: 4003, reason: 'Credential revoked' })
    expect(bystander.socket.readyState).toBe(WebSocket.OPEN)
    bystander.socket.close()
  })

  secondTest('a user’s connection ends (4003) at the heartbeat after its account is disabled or demoted; a new handshake is refused at once', async ({ ctx, admin, second: { url: otherUrl } }) => {
    const customer = await ctx.signIn('customer')
    const demoted = await ctx.signIn('admin')
    const clients = [await connect(otherUrl, { token: customer.token }), await connect(otherUrl, { token: demoted.token })]
    const bystander = await connect(otherUrl, { token: admin })
    // Changed through the other instance: this one hears of it from the database, not from a message.
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/users/${customer.userId}`, payload: { disabled: true }, token: admin })
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/users/${demoted.userId}`, payload: { role: 'customer' }, token: admin })
    for (const client of clients) expect(await client.closed).toEqual({ code: 4003, reason: 'Credential revoked' })
    expect(bystander.socket.readyState).toBe(WebSocket.OPEN)
    bystander.socket.close()

    const refused = await refusal(otherUrl, { headers: { authorization: `Bearer ${customer.token}` } })
    expect(refused).toMatchObject({ status: 401, body: { error: { code: 'unauthorized', message: 'The account of this token is disabled' } } })
    // The demoted one may still listen, as the customer it now is.
    const again = await connect(otherUrl, { token: demoted.token })
    again.socket.close()
  })

  secondTest('a user’s connection ends (4003) at the heartbeat after its password changes (a reset signs a thief out), and its token is refused at once', async ({ ctx, admin, second: { url: otherUrl } }) => {
    const customer = await ctx.signIn('customer')
    const client = await connect(otherUrl, { token: customer.token })
    const bystander = await connect(otherUrl, { token: admin })
    // What a password reset or change does to the account (accounts.ts changePassword).
    await ctx.handle.sql`update users set credential_version = credential_version + 1 where id = ${customer.userId}`
    expect(await client.closed).toEqual({ code: 4003, reason: 'Credential revoked' })
    expect(bystander.socket.readyState).toBe(WebSocket.OPEN)
    bystander.socket.close()
    const refused = await refusal(otherUrl, { headers: { authorization: `Bearer ${customer.token}` } })
    expect(refused).toMatchObject({ status: 401, body: { error: { message: 'The password of this account changed after this token was issued; sign in again' } } })
  })

  secondTest('GET /metrics counts the open WebSocket connections', async ({ admin, second: { app: other, url: otherUrl } }) => {
    for (const socket of opened) socket.terminate()
    await connect(otherUrl, { token: admin })
    await connect(otherUrl, { token: admin })
    await expect.poll(async () => (await other.inject({ method: 'GET', url: '/metrics' })).body).toMatch(/^commerce_websocket_connections 2$/m)
  })
})

describe('heartbeat', () => {
  // An app of its own with a 1 s beat: a pong must be read within one beat, and a busy machine can
  // hold the event loop longer than the 200 ms the other instance beats at.
  test('drops a client that does not answer pings and keeps one that does', async ({ ctx, admin }) => {
    const beating = await buildApp(testConfig(ctx.database.url, { wsHeartbeatIntervalMs: 1000 }), { logger: false })
    try {
      await beating.listen({ host: '127.0.0.1', port: 0 })
      const beatingUrl = `ws://127.0.0.1:${(beating.server.address() as AddressInfo).port}${WS_PATH}`
      const silent = await connect(beatingUrl, { token: admin, client: { autoPong: false } })
      const answering = await connect(beatingUrl, { token: admin })
      expect((await silent.closed).code).toBe(1006)
      await new Promise((resolve) => setTimeout(resolve, 1500))
      expect(answering.socket.readyState).toBe(WebSocket.OPEN)
    } finally {
      await beating.close()
    }
  })
})

describe('a freshly started instance', () => {
  test('sends its clients no event committed before it started, not even from its look for missed events', async ({ ctx, admin }) => {
    await commitEvents(ctx, productEvent())
    const fresh = await buildApp(testConfig(ctx.database.url), { logger: false })
    try {
      await fresh.listen({ host: '127.0.0.1', port: 0 })
      const client = await connect(`ws://127.0.0.1:${(fresh.server.address() as AddressInfo).port}${WS_PATH}`, { token: admin })
      // Past the 2 s interval of the look for events committed but not announced.
      await new Promise((resolve) => setTimeout(resolve, 2500))
      const [after] = await commitEvents(ctx, productEvent())
      expect(idsOf(await client.eventsUntil(after!))).toEqual([after])
    } finally {
      await fresh.close()
    }
  })
})

describe('shutdown', () => {
  test('closing the app closes sockets with 1001 and cuts off a client that never answers the close', async ({ ctx, admin }) => {
    const app = await buildApp(testConfig(ctx.database.url), { logger: false })
    await app.listen({ host: '127.0.0.1', port: 0 })
    const port = (app.server.address() as AddressInfo).port
    const client = await connect(`ws://127.0.0.1:${port}${WS_PATH}`, { token: admin })
    // A client that completes the upgrade and then reads nothing more.
    const silent = createConnection(port, '127.0.0.1')
    silent.write(
      `GET ${WS_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${admin}\r\n\r\n`,
    )
    const [answer] = (await once(silent, 'data')) as [Buffer]
    expect(answer.toString()).toMatch(/^HTTP\/1.1 101 /)
    silent.pause()
    const started = Date.now()
    await app.close()
    expect(Date.now() - started).toBeLessThan(5000)
    expect(await client.closed).toEqual({ code: 1001, reason: 'Server shutting down' })
    silent.destroy()
  })
})
