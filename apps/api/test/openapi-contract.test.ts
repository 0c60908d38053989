/**
 * The OpenAPI document tells the truth: what every operation may answer, which headers its
 * answers carry, where Idempotency-Key is required, and descriptions a Markdown renderer shows whole.
 * And it is a contract a generated client can use: every operation has a chosen, unique
 * operationId, every body a named schema, every answer a description; every event kind a webhook.
 */
import Fastify from 'fastify'
import type { TSchema } from 'typebox'
import { describe, expect } from 'vitest'
import { newId } from '@commerce/db'
import { DELIVERY_HEADERS, EVENT_CATALOG, EVENT_KINDS, webhookEventName } from '@commerce/domain'
import { ERROR_STATUS } from '../src/errors.js'
import securityHeadersPlugin from '../src/plugins/security-headers.js'
import { test as apiTest, type ApiErrorBody } from './helpers.js'

interface Parameter {
  in: string
  name: string
  required?: boolean
  schema?: Record<string, unknown>
  example?: unknown
  examples?: Record<string, { value?: unknown }>
  content?: Record<string, { example?: unknown }>
}
interface Response {
  headers?: Record<string, { $ref: string }>
  content?: Record<string, { schema: unknown }>
}
interface Operation {
  operationId?: string
  parameters?: Parameter[]
  requestBody?: { content: Record<string, { schema: Schema }> }
  responses: Record<string, Response & { description?: string }>
}
type Schema = Record<string, unknown> & { $ref?: string; title?: string; properties?: Record<string, Schema> }
interface Document {
  paths: Record<string, Record<string, Operation>>
  webhooks: Record<string, Record<string, Operation>>
  servers: { url: string; variables?: Record<string, { default: string }> }[]
  components: { headers: Record<string, { description?: string; schema?: unknown }>; schemas: Record<string, Schema>; parameters: Record<string, Parameter> }
}

/** The OpenAPI document the file's app serves. */
const test = apiTest.extend<{ document: Document }>({
  document: [async ({ ctx }, use) => use((await ctx.request({ method: 'GET', url: '/api/v1/openapi.json' })).json()), { scope: 'file' }],
})


const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch'])
const operations = (document: Document) =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, method, path, operation })),
  )
/** The operations of the webhooks section, as `operations()` gives those of the paths. */
const webhookOperations = (document: Document) =>
  Object.entries(document.webhooks).flatMap(([kind, item]) =>
    Object.entries(item).map(([method, operation]) => ({ name: `webhook ${kind}`, method, path: kind, operation })),
  )
const schemaOf = (document: Document, ref: string | undefined) => document.components.schemas[ref?.replace('#/components/schemas/', '') ?? '']
const idempotencyKeyOf = (operation: Operation) =>
  operation.parameters?.find((parameter) => parameter.in === 'header' && parameter.name === 'idempotency-key')
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` })

describe('what every operation may answer', () => {
  test('every operation that takes a body lists 413 payload_too_large and 415 unsupported_media_type, in the error format', ({ document }) => {
    const withBody = operations(document).filter(({ operation }) => operation.requestBody)
    expect(withBody.length).toBeGreaterThanOrEqual(40)
    for (const { name, operation } of withBody) {
      for (const status of ['413', '415']) {
        expect(operation.responses[status], `${name} ${status}`).toMatchObject({
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        })
      }
    }
  })

  test('every answer of every operation declares X-Request-Id (and Access-Control-Allow-Origin), as the server sends it', async ({ ctx, document }) => {
    expect(document.components.headers['X-Request-Id']).toMatchObject({ schema: { type: 'string' } })
    for (const { name, operation } of operations(document)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        // A WebSocket handshake's 101 carries the upgrade's headers only (the ws library writes it).
        for (const header of ['X-Request-Id', 'Access-Control-Allow-Origin']) {
          expect(response.headers?.[header], `${name} ${status} ${header}`).toEqual(status === '101' ? undefined : headerRef(header))
        }
      }
    }
    for (const url of ['/health', '/api/v1/products', '/api/v1/orders', '/api/v1/nothing-here']) {
      expect((await ctx.request({ method: 'GET', url })).headers['x-request-id'], url).toMatch(/^[\w.:-]{1,128}$/)
    }
  })

  test('the answers a replay can give declare Idempotent-Replayed: the 2xx and the stored refusals of operations taking an Idempotency-Key, and no other', ({ document }) => {
    expect(document.components.headers['Idempotent-Replayed']).toMatchObject({ schema: { type: 'string', const: 'true' } })
    let replayable = 0
    for (const { name, operation } of operations(document)) {
      for (const [status, response] of Object.entries(operation.responses)) {
        const notStored = (operation as { 'x-idempotency-not-stored'?: number[] })['x-idempotency-not-stored'] ?? []
        const stored = Boolean(idempotencyKeyOf(operation)) && ['200', '201', '402', '404', '409', '422'].includes(status) && !notStored.includes(Number(status))
        expect(response.headers?.['Idempotent-Replayed'], `${name} ${status}`).toEqual(stored ? headerRef('Idempotent-Replayed') : undefined)
        if (stored && status === '201') replayable++
      }
    }
    expect(replayable).toBe(12)
  })
})

describe('security headers', () => {
  /** The headers of an answer from a bare server, with the security plugin or without. */
  const bareAnswerHeaders = async (withPlugin: boolean) => {
    const app = Fastify()
    if (withPlugin) await app.register(securityHeadersPlugin)
    app.get('/', async () => 'ok')
    const { headers } = await app.inject({ method: 'GET', url: '/' })
    await app.close()
    return headers
  }

  test('every header the security plugin sends is a header component with its value, declared on every answer of every operation (but a WebSocket 101)', async ({ ctx, document }) => {
    const [withPlugin, without] = [await bareAnswerHeaders(true), await bareAnswerHeaders(false)]
    const sent = Object.entries(withPlugin).filter(([name]) => !(name in without))
    expect(sent.map(([name]) => name)).toEqual(expect.arrayContaining(['content-security-policy', 'strict-transport-security', 'x-frame-options']))
    const components = new Map(Object.entries(document.components.headers).map(([name, header]) => [name.toLowerCase(), { name, header }]))
    for (const [name, value] of sent) {
      expect(components.get(name)?.header, name).toEqual({ description: expect.stringMatching(/\w/), schema: { type: 'string', const: value } })
      for (const { name: operation, operation: { responses } } of operations(document)) {
        for (const [status, response] of Object.entries(responses)) {
          const declared = status === '101' ? undefined : headerRef(components.get(name)!.name)
          expect(response.headers?.[components.get(name)!.name], `${operation} ${status} ${name}`).toEqual(declared)
        }
      }
    }
    // The app sends them so: on an answer, a refusal and a 404.
    for (const url of ['/health', '/api/v1/orders', '/api/v1/nothing-here']) {
      const { headers } = await ctx.request({ method: 'GET', url })
      for (const [name, value] of sent) expect(headers[name], `${url} ${name}`).toBe(value)
    }
  })
})

describe('names a generated client takes', () => {
  test('every operation, the webhooks’ too, has its own operationId: a verb then what it acts on, in camelCase', ({ document }) => {
    const all = [...operations(document), ...webhookOperations(document)]
    expect(all.length).toBeGreaterThan(100)
    const ids = all.map(({ name, operation }) => {
      expect(operation.operationId, name).toMatch(/^[a-z]+(?:[A-Z][a-z0-9]*)+$|^login$|^register$/)
      return operation.operationId
    })
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([])
    const byName = Object.fromEntries(operations(document).map(({ name, operation }) => [name, operation.operationId]))
    expect(byName).toMatchObject({
      'GET /api/v1/products': 'listProducts',
      'GET /api/v1/products/{id}': 'getProduct',
      'POST /api/v1/products': 'createProduct',
      'POST /api/v1/checkouts/{id}/complete': 'completeCheckout',
      'POST /api/v1/payments/{id}/capture': 'capturePayment',
      'POST /api/v1/payments/{id}/refunds': 'createRefund',
    })
  })

  test('every request body and every JSON answer is a named component schema (or a choice of them)', ({ document }) => {
    const named = (schema: Schema | undefined) => Boolean(schemaOf(document, schema?.$ref))
    let bodies = 0
    for (const { name, operation } of [...operations(document), ...webhookOperations(document)]) {
      for (const [type, content] of Object.entries(operation.requestBody?.content ?? {})) {
        bodies++
        // A file as the whole body (PUT /uploads/{id}) has no shape to name.
        const file = (content.schema as Schema | undefined)?.format === 'binary'
        expect(file || named(content.schema), `${name} body (${type}): ${JSON.stringify(content.schema)}`).toBe(true)
      }
      for (const [status, response] of Object.entries(operation.responses)) {
        const schema = response.content?.['application/json']?.schema as Schema | undefined
        if (!schema) continue
        const choices = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined
        expect(choices ? choices.every(named) : named(schema), `${name} ${status}: ${JSON.stringify(schema)}`).toBe(true)
      }
    }
    expect(bodies).toBeGreaterThan(60)
    for (const resource of ['Product', 'Variant', 'Cart', 'CartItem', 'Order', 'Payment', 'Refund', 'Fulfillment', 'Customer', 'Address', 'Webhook', 'WebhookDelivery', 'Event', 'Error']) {
      expect(document.components.schemas[resource], resource).toMatchObject({ type: 'object', title: resource, description: expect.any(String) })
    }
    expect(operations(document).find(({ name }) => name === 'POST /api/v1/products')!.operation.requestBody!.content['application/json']!.schema).toEqual({
      $ref: '#/components/schemas/CreateProductRequest',
    })
    // Inside a component, what has a name of its own is referred to, not repeated.
    expect(document.components.schemas.Product!.properties!.variants).toEqual({ type: 'array', items: { $ref: '#/components/schemas/Variant' } })
  })

  test('every answer has a description of its own; an error answer names the codes its status carries (errors.ts’s table)', ({ document }) => {
    for (const { name, operation } of [...operations(document), ...webhookOperations(document)]) {
      for (const [status, response] of Object.entries(operation.responses)) {
        expect(response.description, `${name} ${status}`).toMatch(/\w/)
        expect(response.description, `${name} ${status}`).not.toBe('Default Response')
      }
    }
    const conflict = operations(document).find(({ name }) => name === 'POST /api/v1/checkouts/{id}/complete')!.operation.responses['409']!
    expect(conflict.description).toBe(
      "Conflict: the error's `code` is `conflict`, `insufficient_inventory`, `invalid_state_transition`, `idempotency_conflict`, `payment_in_progress` or `payment_provider_refused`",
    )
    const code = (document.components.schemas.Error!.properties!.error as Schema).properties!.code!
    expect(code.enum).toEqual(Object.keys(ERROR_STATUS))
  })

  test('servers: the origin of a deployment, a variable that defaults to the local development server', ({ document }) => {
    expect(document.servers).toEqual([
      expect.objectContaining({ url: '{origin}', variables: { origin: expect.objectContaining({ default: 'http://localhost:3000' }) } }),
    ])
  })
})

describe('webhooks', () => {
  test('one webhook per event kind: a POST whose body is `<Kind>Event`, the catalog’s data, signed with the headers the worker sends', ({ document }) => {
    expect(Object.keys(document.webhooks).sort()).toEqual([...EVENT_KINDS].sort())
    for (const kind of EVENT_KINDS) {
      const post = document.webhooks[kind]!.post!
      const body = post.requestBody!.content['application/json']!.schema
      expect(body, kind).toEqual({ $ref: `#/components/schemas/${webhookEventName(kind)}` })
      const envelope = schemaOf(document, body.$ref)!
      expect(envelope.properties!.event, kind).toMatchObject({ enum: [kind] })
      const data: TSchema & { title?: string } = EVENT_CATALOG[kind].data
      expect(envelope.properties!.data, kind).toEqual({ $ref: `#/components/schemas/${data.title}` })
      const headers = post.parameters!.map((parameter) => document.components.parameters[(parameter as unknown as { $ref: string }).$ref.split('/').at(-1)!]!)
      expect(headers.map((header) => [header.in, header.name, header.required]), kind).toEqual(Object.keys(DELIVERY_HEADERS).map((name) => ['header', name, true]))
      expect(Object.keys(post.responses).sort(), kind).toEqual(['2XX', '410', 'default'])
    }
    expect(document.components.schemas.WebhookEvent!.oneOf).toHaveLength(EVENT_KINDS.length)
  })
})

describe('Idempotency-Key', () => {
  const address = { line1: '1 Main St', city: 'Springfield', country: 'US' }
  /** A body each operation taking the header accepts, so that only the header can be what is refused. */
  const VALID_BODIES: Record<string, unknown> = {
    'POST /api/v1/checkouts/{id}/complete': { payment: { method: 'card', token: 'tok_visa' } },
    'POST /api/v1/orders/{id}/payments': { method: 'card', token: 'tok_visa' },
    'POST /api/v1/payments/{id}/refunds': {},
    'POST /api/v1/payments/{id}/refund': {},
    'POST /api/v1/payments/{id}/capture': {},
    'POST /api/v1/payments/{id}/cancel': undefined,
    'POST /api/v1/orders': { email: 'keyless@example.com', currency: 'USD', items: [{ product_id: newId(), quantity: 1 }], shipping_address: address },
    'POST /api/v1/orders/{id}/fulfillments': { carrier: 'UPS', tracking_number: '1Z999' },
    'POST /api/v1/orders/{id}/returns': { items: [{ line_id: newId(), quantity: 1 }] },
    'POST /api/v1/returns/{id}/receive': {},
    'POST /api/v1/orders/{id}/edits': { add: [{ product_id: newId(), quantity: 1 }] },
    'POST /api/v1/draft-orders/{id}/complete': { mark_paid: true },
    'POST /api/v1/invoices/payments': { invoice_token: 'A'.repeat(43), method: 'card', token: 'tok_visa' },
    'POST /api/v1/inventory/adjustments': { product_id: newId(), location_id: newId(), quantity: 1, reason: 'received' },
    'POST /api/v1/inventory/transfers': { product_id: newId(), from_location_id: newId(), to_location_id: newId(), quantity: 1 },
  }
  const taking = (document: Document) => operations(document).filter(({ operation }) => idempotencyKeyOf(operation))

  test('is required in the document exactly where the server refuses a request without it (and generated clients then demand it)', async ({ ctx, document, admin }) => {
    expect(taking(document).map(({ name }) => name).sort()).toEqual(Object.keys(VALID_BODIES).sort())
    const required = taking(document).filter(({ operation }) => idempotencyKeyOf(operation)!.required)
    expect(required.map(({ name }) => name).sort()).toEqual([
      'POST /api/v1/checkouts/{id}/complete',
      'POST /api/v1/draft-orders/{id}/complete',
      'POST /api/v1/invoices/payments',
      'POST /api/v1/orders/{id}/edits',
      'POST /api/v1/orders/{id}/payments',
      'POST /api/v1/payments/{id}/cancel',
      'POST /api/v1/payments/{id}/capture',
      'POST /api/v1/payments/{id}/refund',
      'POST /api/v1/payments/{id}/refunds',
      'POST /api/v1/returns/{id}/receive',
    ])
    for (const { name, path, operation } of taking(document)) {
      const response = await ctx.request({ method: 'POST', url: path.replace('{id}', newId()).replace('{token}', 'a'.repeat(43)), token: admin, payload: VALID_BODIES[name] as object })
      const refusal = (response.json() as Partial<ApiErrorBody>).error
      if (idempotencyKeyOf(operation)!.required) {
        expect(response.statusCode, name).toBe(400)
        expect(refusal, name).toMatchObject({
          code: 'validation_error',
          message: "Header 'Idempotency-Key' is required",
          details: [{ field: 'Idempotency-Key', message: "Header 'Idempotency-Key' is required" }],
        })
      } else {
        // Done without a key: the work runs (and finds no such order or product).
        expect(refusal?.message, name).toBeDefined()
        expect(refusal?.message, name).not.toMatch(/Idempotency-Key/)
        expect(refusal?.details ?? [], name).not.toContainEqual(expect.objectContaining({ field: 'Idempotency-Key' }))
      }
    }
  })

  test('its format is in the document and refused by every operation that takes it: 16–255 printable ASCII characters', async ({ ctx, document, admin }) => {
    for (const { name, path, operation } of taking(document)) {
      expect(idempotencyKeyOf(operation)!.schema, name).toEqual({ type: 'string', minLength: 16, maxLength: 255, pattern: '^[!-~]+$' })
      for (const key of ['short', 'x'.repeat(256), 'sixteen chars with spaces']) {
        const response = await ctx.request({
          method: 'POST',
          url: path.replace('{id}', newId()).replace('{token}', 'a'.repeat(43)),
          token: admin,
          headers: { 'idempotency-key': key },
          payload: VALID_BODIES[name] as object,
        })
        expect(response.statusCode, `${name} ${key}`).toBe(400)
        expect((response.json() as ApiErrorBody).error.details, `${name} ${key}`).toContainEqual(
          expect.objectContaining({ field: 'Idempotency-Key', message: expect.stringMatching(/^Header 'Idempotency-Key' must /) }),
        )
      }
    }
  })
})

describe('"Try it out" on the reference page', () => {
  test('fills no optional parameter with anything but its default: an example would change the request (locale=fr-CA answers in French)', ({ document }) => {
    const parameters = [...operations(document), ...webhookOperations(document)]
      .flatMap(({ name, operation }) => (operation.parameters ?? []).map((parameter) => ({ at: `${name} ${parameter.name}`, parameter })))
      .concat(Object.entries(document.components.parameters).map(([name, parameter]) => ({ at: `components.parameters.${name}`, parameter })))
      .filter(({ parameter }) => !parameter.required && !('$ref' in parameter))
    expect(parameters.length).toBeGreaterThan(100)
    /** What swagger-ui fills in, in its order: the first of `examples`, the content's example, `example`, the schema's `example`, its `default`. */
    const filled = (parameter: Parameter) =>
      [Object.values(parameter.examples ?? {})[0]?.value, ...Object.values(parameter.content ?? {}).map((media) => media.example), parameter.example, parameter.schema?.example, parameter.schema?.default].find(
        (value) => value !== undefined,
      )
    const changed = parameters.filter(({ parameter }) => filled(parameter) !== undefined && filled(parameter) !== parameter.schema?.default)
    expect(changed.map(({ at, parameter }) => `${at}: ${JSON.stringify(filled(parameter))}`)).toEqual([])
    // The examples stay in the document, in the schema (JSON Schema's `examples`), which the page does not fill in.
    const locale = operations(document).find(({ name }) => name === 'GET /api/v1/products')!.operation.parameters!.find((parameter) => parameter.name === 'locale')
    expect(locale?.schema?.examples).toEqual(['fr-CA'])
  })
})

describe('descriptions', () => {
  test('no text a Markdown renderer (the reference page) would take for an HTML tag and drop: placeholders are in code spans', ({ document }) => {
    const found: string[] = []
    const walk = (value: unknown, at: string) => {
      if (Array.isArray(value)) value.forEach((item, index) => walk(item, `${at}/${index}`))
      else if (value && typeof value === 'object') {
        for (const [key, child] of Object.entries(value)) {
          if ((key === 'description' || key === 'summary') && typeof child === 'string') {
            if (/<[A-Za-z/!?]/.test(child.replace(/`[^`]*`/g, ''))) found.push(`${at}/${key}: ${child}`)
          } else walk(child, `${at}/${key}`)
        }
      }
    }
    walk(document, '')
    expect(found).toEqual([])
    expect((document as unknown as { info: { description: string } }).info.description).toContain('`{ <items>: [...], meta:')
  })
})
