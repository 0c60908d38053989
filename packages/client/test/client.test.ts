/**
 * @commerce/client against the real API and worker processes over HTTP: signing in, credentials,
 * typed errors, a checkout whose lost answer is retried with the same automatic Idempotency-Key,
 * retries after 429, pagination in both modes, and a webhook delivery verified on a receiver.
 */
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import { createServer as createNetServer, type AddressInfo } from 'node:net'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createApiKey } from '@commerce/db'
import { apiKeyLookupPrefix, generateApiKey, hashApiKey } from '@commerce/domain'
import { CommerceError, createClient, type CommerceClient } from '../src/index.js'
import { constructWebhookEvent, verify, WebhookVerificationError } from '../src/webhooks.js'
import { ADMIN, startService, type Service } from './service.js'

const ADDRESS = { first_name: 'Ada', last_name: 'Lovelace', line1: '12 St James Sq', city: 'London', postal_code: 'SW1Y 4JH', country: 'GB' as const }
const VISA = { payment: { method: 'card', token: 'tok_visa' } }
const UNKNOWN_ID = '0190a6f1-7c3a-7000-8000-00000000beef'

let service: Service
let baseUrl: string
let admin: CommerceClient

/** An API key stored as `commerce api-keys create` stores it; `rateLimit` per window (2 s here). */
async function apiKey(scopes: string[], rateLimit: number | null = null): Promise<string> {
  const key = generateApiKey()
  await createApiKey(service.handle.db, { name: `sdk ${scopes}`, prefix: apiKeyLookupPrefix(key), keyHash: hashApiKey(key), scopes, rateLimitPerMinute: rateLimit })
  return key
}

/** A fetch that records each request and its answer's status (the client's own retries included). */
function recordingFetch() {
  const calls: { url: URL; status: number }[] = []
  const recording: typeof fetch = async (input, init) => {
    const response = await fetch(input, init)
    calls.push({ url: new URL(String(input)), status: response.status })
    return response
  }
  return { calls, fetch: recording }
}

const rejection = (promise: Promise<unknown>) => promise.then(() => expect.fail('expected a CommerceError'), (error: unknown) => error as CommerceError)

beforeAll(async () => {
  // A short rate-limit window, so a 429's Retry-After is a second or two.
  service = await startService({ env: { RATE_LIMIT_WINDOW: '2s' }, worker: true })
  ;({ baseUrl, admin } = service)
})
afterAll(() => service?.stop())

describe('methods', () => {
  it('has one for every operation of openapi.json, by operationId (the WebSocket is streamEvents)', () => {
    const document = JSON.parse(readFileSync(new URL('../../../openapi.json', import.meta.url), 'utf8')) as { paths: Record<string, Record<string, { operationId?: string }>> }
    const ids = Object.values(document.paths).flatMap((item) => Object.values(item).flatMap((operation) => operation.operationId ?? []))
    expect(ids.length).toBeGreaterThanOrEqual(105)
    expect(ids.filter((id) => typeof (admin as unknown as Record<string, unknown>)[id] !== 'function')).toEqual([])
  })
})

describe('credentials', () => {
  it('signIn exchanges email and password for a token (login) that the next calls carry', async () => {
    const client = createClient({ baseUrl })
    const answer = await client.signIn(ADMIN)
    expect(answer).toMatchObject({ token_type: 'Bearer', user: { email: ADMIN.email, role: 'admin' } })
    expect(await client.getCurrentUser()).toMatchObject({ user: { email: ADMIN.email, role: 'admin' } })
  })

  it('switches per client: an API key is held to its scopes, and without a credential a write is 401', async () => {
    const client = createClient({ baseUrl, auth: { apiKey: await apiKey(['products:read']) } })
    expect((await client.listProducts()).products).toBeInstanceOf(Array)
    expect(await rejection(client.createProduct({ title: 'Refused' }))).toMatchObject({ status: 403, code: 'forbidden' })
    client.setAuth(undefined)
    expect(await rejection(client.createProduct({ title: 'Refused' }))).toMatchObject({ status: 401, code: 'unauthorized' })
    client.setAuth({ apiKey: await apiKey(['products:write']) })
    expect(await client.createProduct({ title: 'Made with a key', price: 5, currency: 'USD' })).toMatchObject({ title: 'Made with a key' })
  })
})

describe('errors', () => {
  it('turns an error answer into a CommerceError with status, code, the fields at fault and the request id', async () => {
    const invalid = await rejection(admin.createProduct({ title: '', price: 1.234, currency: 'USD' }))
    expect(invalid).toBeInstanceOf(CommerceError)
    expect(invalid).toMatchObject({ name: 'CommerceError', status: 400, code: 'validation_error' })
    expect(invalid.details.map((detail) => detail.field)).toContain('title')
    expect(invalid.requestId).toMatch(/^[\w-]{8,}$/)

    const missing = await rejection(admin.getProduct(UNKNOWN_ID))
    expect(missing).toMatchObject({ status: 404, code: 'not_found', details: [] })
    expect(missing.message).toMatch(/product/i)
  })

  it('reads the OAuth token endpoint’s RFC 6749 errors into the same class', async () => {
    const refused = await rejection(createClient({ baseUrl }).createOAuthToken({ grant_type: 'client_credentials', client_id: 'cc_unknown', client_secret: 'cs_wrong' }))
    expect(refused).toMatchObject({ status: 401, code: 'invalid_client' })
  })
})

describe('checkout with automatic idempotency', () => {
  it('completes a checkout whose answer was lost: the retry carries the same key and gets the same order', async () => {
    const product = await admin.createProduct({ title: 'Teapot', price: 24, currency: 'GBP', inventory_quantity: 5 })
    const completions: { key: string | null; status: number; replayed: string | null; body: unknown }[] = []
    // The connection breaks after the API answered the first completion: the caller never sees it.
    const losingFirstAnswer: typeof fetch = async (input, init) => {
      const response = await fetch(input, init)
      if (!String(input).endsWith('/complete')) return response
      const key = new Headers(init?.headers).get('idempotency-key')
      completions.push({ key, status: response.status, replayed: response.headers.get('idempotent-replayed'), body: await response.clone().json() })
      if (completions.length === 1) throw new TypeError('fetch failed: the connection was reset')
      return response
    }
    const shopper = createClient({ baseUrl, fetch: losingFirstAnswer, retry: { initialDelayMs: 10 } })
    const cart = await shopper.createCart({ currency: 'GBP' })
    await shopper.addCartItem(cart.id, { product_id: product.id, quantity: 2 })
    const checkout = await shopper.createCheckout({ cart_id: cart.id, email: 'ada@example.com', shipping_address: ADDRESS })

    const order = await shopper.completeCheckout(checkout.id, VISA)
    if (!('order_number' in order)) return expect.fail('the payment waits for the customer')
    expect(completions).toHaveLength(2)
    expect(completions[0]).toMatchObject({ status: 201, replayed: null })
    expect(completions[1]).toMatchObject({ status: 201, replayed: 'true', key: completions[0]!.key, body: completions[0]!.body })
    expect(completions[0]!.key).toMatch(/^[0-9a-f-]{36}$/)
    expect(order).toEqual(completions[0]!.body)
    expect(order).toMatchObject({ status: 'paid', items: [{ product_id: product.id, quantity: 2 }] })
    // Charged and stocked once.
    expect((await admin.getProduct(product.id)).inventory_quantity).toBe(3)
    expect((await admin.listOrderPayments(order.id)).payments).toHaveLength(1)

    // A call of its own has a key of its own (here the caller's): the placed order answers 200.
    const again = await shopper.completeCheckout(checkout.id, VISA, { idempotencyKey: 'caller-chosen-key-0001' })
    expect(completions[2]).toMatchObject({ key: 'caller-chosen-key-0001', status: 200, replayed: null })
    expect(again).toEqual(order)
  })
})

describe('retries', () => {
  it('retries a GET refused with 429 after its Retry-After, and not a POST without an Idempotency-Key', async () => {
    const { calls, fetch } = recordingFetch()
    const client = createClient({ baseUrl, auth: { apiKey: await apiKey(['products:write'], 1) }, fetch })
    const started = Date.now()
    // Within a window of 2 s and a limit of 1, one of three calls in a row meets the limit.
    for (let call = 0; call < 3; call++) await client.listProducts({ per_page: 1 })
    expect(calls.map((call) => call.status)).toContain(429)
    expect(calls.filter((call) => call.status === 200)).toHaveLength(3)
    expect(Date.now() - started).toBeGreaterThanOrEqual(900)

    calls.length = 0
    const refused = await rejection((async () => {
      for (;;) await client.createProduct({ title: 'Rate limited' })
    })())
    expect(refused).toMatchObject({ status: 429, code: 'rate_limited' })
    expect(refused.retryAfter).toBeGreaterThanOrEqual(0)
    expect(refused.retryAfter).toBeLessThanOrEqual(2)
    expect(calls.at(-1)!.status).toBe(429)
    expect(calls.at(-2)?.status).not.toBe(429)
  })

  it('with retries off, a 429 is the caller’s at once', async () => {
    const { calls, fetch } = recordingFetch()
    const client = createClient({ baseUrl, auth: { apiKey: await apiKey(['products:read'], 1) }, fetch, retry: false })
    const refused = await rejection((async () => {
      for (;;) await client.listProducts({ per_page: 1 })
    })())
    expect(refused).toMatchObject({ status: 429, code: 'rate_limited' })
    expect(calls.filter((call) => call.status === 429)).toHaveLength(1)
  })
})

describe('a server that drops the connection unanswered', () => {
  it('fails each try after timeoutMs with a TimeoutError, retries a GET as for any network failure, and never hangs', async () => {
    let connections = 0
    const dropping = createNetServer((socket) => {
      connections++
      socket.destroy()
    })
    await new Promise<void>((resolve) => dropping.listen(0, '127.0.0.1', resolve))
    try {
      // The built client in a process of its own, as an application calls it: there Node 20's
      // fetch never settles on such a connection (inside vitest's worker it fails at once), and
      // without a time limit the call waited forever.
      const script = `
        import { createClient } from ${JSON.stringify(pathToFileURL(fileURLToPath(new URL('../dist/index.js', import.meta.url))).href)}
        const client = createClient({ baseUrl: process.argv[1], timeoutMs: 300, retry: { maxRetries: 1, initialDelayMs: 10 } })
        const alive = setInterval(() => {}, 1000) // as a server's open sockets keep an application running
        await client.listProducts().then(() => console.log('answered'), (error) => console.log(error.name))
        clearInterval(alive)`
      const started = Date.now()
      const outcome = await new Promise<{ code: number | null; stdout: string }>((resolve) => {
        const child = execFile(process.execPath, ['--input-type=module', '-e', script, `http://127.0.0.1:${(dropping.address() as AddressInfo).port}`], { timeout: 10_000 }, (error, stdout) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout }),
        )
        child.stdin?.end()
      })
      expect(outcome, 'the call settled').toMatchObject({ code: 0 })
      expect(Date.now() - started).toBeLessThan(8_000)
      // A TimeoutError where fetch hangs (Node 20), fetch's own TypeError where it does not.
      expect(['TimeoutError\n', 'TypeError\n']).toContain(outcome.stdout)
      expect(connections).toBe(2)
    } finally {
      await new Promise((resolve) => dropping.close(resolve))
    }
  })
})

describe('pagination', () => {
  let ids: string[]

  beforeAll(async () => {
    ids = []
    for (let n = 1; n <= 7; n++) ids.push((await admin.createProduct({ title: `Paginated mug ${n}`, price: n, currency: 'EUR' })).id)
  })

  it('walks a cursor-mode list page by page until next_cursor is null, each item once', async () => {
    const { calls, fetch } = recordingFetch()
    const client = createClient({ baseUrl, fetch })
    const pages = []
    for await (const page of client.paginate('listProducts', { per_page: 3, search: 'paginated' })) pages.push(page)
    expect(pages.map((page) => page.products.length)).toEqual([3, 3, 1])
    expect(pages.at(-1)!.meta).toEqual({ per_page: 3, next_cursor: null })
    expect(pages.flatMap((page) => page.products.map((product) => product.id)).sort()).toEqual([...ids].sort())
    expect(calls.map((call) => call.url.searchParams.get('after'))).toEqual(['', expect.any(String), expect.any(String)])
  })

  it('walks a page-mode list (page asked for) item by item, sending the filters with every page', async () => {
    const { calls, fetch } = recordingFetch()
    const client = createClient({ baseUrl, fetch })
    const seen: string[] = []
    for await (const product of client.paginate('listProducts', { page: 1, per_page: 3, search: 'paginated' }).items()) seen.push(product.id)
    expect(seen.sort()).toEqual([...ids].sort())
    expect(calls.map((call) => [call.url.searchParams.get('page'), call.url.searchParams.get('search')])).toEqual([
      ['1', 'paginated'],
      ['2', 'paginated'],
      ['3', 'paginated'],
    ])
  })

  it('selects fields on a read and on each item of a list, given as an array', async () => {
    const one = await admin.getProduct(ids[0]!, { fields: ['title', 'price'] })
    expect(one).toEqual({ id: ids[0], title: 'Paginated mug 1', price: 1 })
    const page = await admin.listProducts({ search: 'paginated', per_page: 2, fields: ['title', 'categories.name'] })
    expect(page.products.map((product) => Object.keys(product).sort())).toEqual([
      ['categories', 'id', 'title'],
      ['categories', 'id', 'title'],
    ])
    expect(page.meta).toMatchObject({ per_page: 2, total: 7 })
  })

  it('sends an array given for a string query parameter comma-separated', async () => {
    const { calls, fetch } = recordingFetch()
    await createClient({ baseUrl, fetch }).listProducts({ search: ['paginated', 'mug'] })
    expect(calls[0]!.url.searchParams.get('search')).toBe('paginated,mug')
  })

  it('sends each value of an array parameter under its name, as the API reads them', async () => {
    const { calls, fetch } = recordingFetch()
    await createClient({ baseUrl, fetch }).listProducts({ tag: ['summer', 'sale, 50%'], option: ['Size:M'] })
    expect(calls[0]!.url.searchParams.getAll('tag')).toEqual(['summer', 'sale, 50%'])
    expect(calls[0]!.url.searchParams.getAll('option')).toEqual(['Size:M'])
  })
})

describe('webhooks', () => {
  let receiver: Server
  const deliveries: { body: string; headers: IncomingHttpHeaders }[] = []

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        deliveries.push({ body: Buffer.concat(chunks).toString('utf8'), headers: request.headers })
        response.writeHead(200).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  })
  afterAll(() => new Promise((resolve) => receiver.close(resolve)))

  it('verifies a delivery the worker signed and reads its typed event; a changed body or another secret is refused', async () => {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
    const webhook = await admin.createWebhook({ url, events: ['product.created'] })
    const product = await admin.createProduct({ title: 'Signed kettle', price: 30, currency: 'GBP' })
    await expect.poll(() => deliveries.find((delivery) => delivery.body.includes(product.id)), { timeout: 30_000, interval: 100 }).toBeDefined()
    const delivery = deliveries.find((received) => received.body.includes(product.id))!

    const event = constructWebhookEvent(delivery.body, delivery.headers, webhook.secret)
    expect(event).toMatchObject({ event: 'product.created', resource_id: product.id })
    if (event.event !== 'product.created') expect.fail(event.event)
    expect(event.data.title).toBe('Signed kettle')
    expect(verify(delivery.body, webhook.secret, String(delivery.headers['x-webhook-signature']))).toBe(true)
    // The same check from fetch's Headers, as a receiver on another framework has them.
    expect(constructWebhookEvent(delivery.body, new Headers(delivery.headers as Record<string, string>), webhook.secret).id).toBe(event.id)

    const tampered = (() => {
      try {
        constructWebhookEvent(delivery.body.replace('Signed kettle', 'Forged kettle'), delivery.headers, webhook.secret)
      } catch (error) {
        return error
      }
    })()
    expect(tampered).toBeInstanceOf(WebhookVerificationError)
    expect(tampered).toMatchObject({ verdict: { valid: false, reason: 'no_matching_signature' } })
    expect(() => constructWebhookEvent(delivery.body, delivery.headers, 'whsec_' + Buffer.alloc(32).toString('base64'))).toThrow(WebhookVerificationError)
    expect(() => constructWebhookEvent(delivery.body, {}, webhook.secret)).toThrow(/missing_headers/)
  })
})
