/**
 * CSV exports and imports through the API, with a real worker process sharing the files' folder:
 * an export's file downloaded (and never served publicly), an import sent as the body or as a
 * form, its dry run, report and apply, who may do what, and the errors.
 */
import type { ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect } from 'vitest'
import type { Export, ExportList, Import, ImportList, ImportRowList, Product } from '@commerce/domain'
import { diskStorage } from '@commerce/storage'
import { test, type TestContext } from './helpers.js'
import { insertOrder } from './order-fixtures.js'
import { startWorker, stopProcess } from './processes.js'

const ROOT = await mkdtemp(join(tmpdir(), 'csv-test-'))
const IMPORT_MAX_BYTES = 64 * 1024
test.scoped({ contextOptions: { config: { storage: diskStorage({ root: ROOT, publicUrl: 'http://127.0.0.1/files' }), importMaxBytes: IMPORT_MAX_BYTES } } })

let worker: ChildProcess | undefined
afterAll(async () => {
  await stopProcess(worker)
  await rm(ROOT, { recursive: true, force: true })
})

/** The worker, started once the file's database exists: the jobs added before it wait for it. */
function runWorker(ctx: TestContext) {
  worker ??= startWorker(ctx.database.url, { UPLOADS_DIR: ROOT, POLL_INTERVAL_MS: '50' })
}

async function settled<T extends { status: string }>(ctx: TestContext, token: string, url: string, done: string[]): Promise<T> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const body = await ctx.expectStatus<T>(200, { method: 'GET', url, token })
    if (done.includes(body.status)) return body
    if (Date.now() > deadline) throw new Error(`still ${body.status}: ${url}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const sendCsv = (ctx: TestContext, token: string, query: string, csv: string) =>
  ctx.request({ method: 'POST', url: `/api/v1/imports?${query}`, headers: { 'content-type': 'text/csv' }, payload: csv, token })

describe('exports', () => {
  test('an export is queued, written by the worker, and downloaded by its credentials only', async ({ ctx, admin, baseUrl }) => {
    await ctx.expectStatus(201, { method: 'POST', url: '/api/v1/products', payload: { title: 'Boot, "waterproof"', price: 89.5, currency: 'EUR', sku: 'B-1' }, token: admin })
    const created = await ctx.expectStatus<Export>(202, { method: 'POST', url: '/api/v1/exports', payload: { resource: 'products', filters: { is_active: true } }, token: admin })
    expect(created).toMatchObject({ resource: 'products', filters: { is_active: true }, status: 'pending', download_url: null, row_count: 0 })
    // Not before it is written.
    await ctx.expectError(409, 'conflict', { method: 'GET', url: `/api/v1/exports/${created.id}/file`, token: admin })

    runWorker(ctx)
    const done = await settled<Export>(ctx, admin, `/api/v1/exports/${created.id}`, ['completed', 'failed'])
    expect(done).toMatchObject({ status: 'completed', row_count: 1, error: null, download_url: `${ctx.config.publicUrl}/api/v1/exports/${created.id}/file` })

    const response = await fetch(`${baseUrl}/api/v1/exports/${created.id}/file`, { headers: { authorization: `Bearer ${admin}` } })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    expect(response.headers.get('content-disposition')).toMatch(/^attachment; filename="products-\d{4}-\d{2}-\d{2}-[0-9a-f]{8}\.csv"$/)
    expect(response.headers.get('cache-control')).toBe('private, no-store')
    const bytes = Buffer.from(await response.arrayBuffer())
    expect(done.size).toBe(bytes.length)
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf])
    const text = bytes.toString('utf8')
    expect(text).toContain(',"Boot, ""waterproof""",,B-1,EUR,89.50,')

    // Kept under private/: the public file route never serves it, however the path is spelled.
    for (const path of [`private/exports/${created.id}.csv`, `%70rivate/exports/${created.id}.csv`, `/private/exports/${created.id}.csv`, `x/../private/exports/${created.id}.csv`, `PRIVATE/exports/${created.id}.csv`]) {
      const served = await fetch(`${baseUrl}/files/${path}`)
      expect([path, [403, 404].includes(served.status)]).toEqual([path, true])
    }
    await ctx.expectError(401, 'unauthorized', { method: 'GET', url: `/api/v1/exports/${created.id}/file` })

    await ctx.expectStatus(204, { method: 'DELETE', url: `/api/v1/exports/${created.id}`, token: admin })
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `/api/v1/exports/${created.id}`, token: admin })
  })

  test('orders export a row per line with amounts in the order’s currency', async ({ ctx, admin }) => {
    runWorker(ctx)
    const { order } = await insertOrder(ctx, { currency: 'JPY', items: [{ unitPriceMinor: 1200, quantity: 2, title: 'Tea' }, { unitPriceMinor: 300, title: 'Cup' }], shippingMinor: 500, status: 'paid' })
    const created = await ctx.expectStatus<Export>(202, { method: 'POST', url: '/api/v1/exports', payload: { resource: 'orders', filters: { status: 'paid' } }, token: admin })
    const done = await settled<Export>(ctx, admin, `/api/v1/exports/${created.id}`, ['completed', 'failed'])
    expect(done.row_count).toBe(2)
    const file = await ctx.request({ method: 'GET', url: `/api/v1/exports/${created.id}/file`, token: admin })
    const lines = file.body.slice(1).trim().split('\r\n')
    expect(lines).toHaveLength(3)
    expect(lines[0]!.split(',').slice(0, 5)).toEqual(['order_id', 'order_number', 'created_at', 'status', 'payment_status'])
    expect(lines[1]).toContain(`${order.id},`)
    expect(lines[1]).toContain(',JPY,2700,0,0,500,3200,3200,0,')
    expect(lines.slice(1).map((line) => line.split(',').slice(-10, -8))).toEqual([['Tea', ''], ['Cup', '']])
  })

  test('needs the scope of what it exports, and lists only what the caller may read', async ({ ctx, admin, customer }) => {
    const productsKey = (await ctx.createApiKey(['products:read'])).key
    await ctx.expectStatus(202, { method: 'POST', url: '/api/v1/exports', payload: { resource: 'products' }, token: productsKey })
    const refused = await ctx.expectError(403, 'forbidden', { method: 'POST', url: '/api/v1/exports', payload: { resource: 'customers' }, token: productsKey })
    expect(refused.message).toBe('Needs the scope customers:read')
    const customers = await ctx.expectStatus<Export>(202, { method: 'POST', url: '/api/v1/exports', payload: { resource: 'customers' }, token: admin })
    const listed = await ctx.expectStatus<ExportList>(200, { method: 'GET', url: '/api/v1/exports?per_page=100', token: productsKey })
    expect(listed.exports.length).toBeGreaterThan(0)
    expect(listed.exports.every((item) => item.resource === 'products')).toBe(true)
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `/api/v1/exports/${customers.id}`, token: productsKey })
    await ctx.expectError(403, 'forbidden', { method: 'GET', url: '/api/v1/exports', token: customer })
    await ctx.expectError(403, 'forbidden', { method: 'POST', url: '/api/v1/exports', payload: { resource: 'products' }, token: customer })
  })

  test('refuses what it cannot export, with the field named', async ({ ctx, admin }) => {
    const cases: [Record<string, unknown>, string][] = [
      [{ resource: 'carts' }, 'resource'],
      [{ resource: 'products', filters: { status: 'paid' } }, 'filters.status'],
      [{ resource: 'orders', filters: { created_after: 'yesterday' } }, 'filters.created_after'],
      [{}, 'resource'],
    ]
    for (const [payload, field] of cases) await ctx.expectInvalidField({ method: 'POST', url: '/api/v1/exports', payload, token: admin }, field, 'exports')
  })
})

describe('imports', () => {
  const CSV = ['product_slug,product_title,product_price,product_currency,variant_title,variant_price', 'mug,Mug,12.00,EUR,Blue,', 'mug,,,,Red,13.50', 'lamp,Lamp,9.999,EUR,,'].join('\r\n')

  test('a dry run reports each row and writes nothing; applying it writes the products and their events', async ({ ctx, admin }) => {
    runWorker(ctx)
    const productsBefore = await ctx.countRows('products')
    const response = await sendCsv(ctx, admin, 'resource=products&dry_run=true', CSV)
    expect(response.statusCode).toBe(202)
    const created = response.json<Import>()
    expect(created).toMatchObject({ resource: 'products', dry_run: true, status: 'pending', size: Buffer.byteLength(CSV), file_name: null })
    const validated = await settled<Import>(ctx, admin, `/api/v1/imports/${created.id}`, ['validated', 'failed'])
    expect(validated).toMatchObject({ status: 'validated', processed_rows: 3, created: 2, updated: 0, refused: 1 })
    expect(await ctx.countRows('products')).toBe(productsBefore)
    const refused = await ctx.expectStatus<ImportRowList>(200, { method: 'GET', url: `/api/v1/imports/${created.id}/rows?action=refuse`, token: admin })
    expect(refused.rows).toEqual([{ row: 4, action: 'refuse', resource_id: null, key: 'lamp', reason: 'product_price: EUR amounts have at most 2 decimal places (an amount in major units, such as 19.99)' }])
    const all = await ctx.expectStatus<ImportRowList>(200, { method: 'GET', url: `/api/v1/imports/${created.id}/rows?per_page=2&page=1`, token: admin })
    expect(all.meta).toEqual({ page: 1, per_page: 2, total: 3, total_pages: 2 })

    const applying = await ctx.expectStatus<Import>(202, { method: 'POST', url: `/api/v1/imports/${created.id}/apply`, token: admin })
    expect(applying).toMatchObject({ dry_run: false, status: 'pending', processed_rows: 0, created: 0 })
    const applied = await settled<Import>(ctx, admin, `/api/v1/imports/${created.id}`, ['completed', 'failed'])
    expect(applied).toMatchObject({ status: 'completed', processed_rows: 3, created: 2, refused: 1 })
    const products = await ctx.expectStatus<{ products: Product[] }>(200, { method: 'GET', url: '/api/v1/products?search=mug' })
    expect(products.products).toHaveLength(1)
    const mug = await ctx.expectStatus<Product>(200, { method: 'GET', url: `/api/v1/products/${products.products[0]!.id}` })
    expect(mug).toMatchObject({ title: 'Mug', price: 12, currency: 'EUR' })
    expect(mug.variants.map((variant) => [variant.title, variant.price])).toEqual([['Blue', null], ['Red', 13.5]])
    // The import wrote its products' stored public items once, at the end of its batch: as the staff's read from the rows.
    expect(mug).toEqual(await ctx.expectStatus<Product>(200, { method: 'GET', url: `/api/v1/products/${mug.id}`, token: admin }))
    expect(products.products[0]).toEqual((await ctx.expectStatus<{ products: Product[] }>(200, { method: 'GET', url: '/api/v1/products?search=mug', token: admin })).products[0])
    const events = await ctx.productEvents(mug.id)
    expect(events.map((event) => event.kind)).toEqual(['product.created'])
    expect(events[0]!.data.variants).toHaveLength(2)

    // Only a validated dry run can be applied.
    await ctx.expectError(409, 'conflict', { method: 'POST', url: `/api/v1/imports/${created.id}/apply`, token: admin })
  })

  test('a product made through the API with options, compare-at prices, identifiers and attributes comes back unchanged from its own export', async ({ ctx, admin }) => {
    runWorker(ctx)
    for (const definition of [
      { key: 'material', name: 'Material', type: 'text' },
      { key: 'features', name: 'Features', type: 'multi_select', choices: ['vegan', 'waterproof'] },
      { key: 'batch', name: 'Batch', type: 'integer', owner: 'variant', public: false },
    ]) {
      await ctx.expectStatus(201, { method: 'POST', url: '/api/v1/attributes', payload: definition, token: admin })
    }
    const made = await ctx.expectStatus<Product>(201, {
      method: 'POST',
      url: '/api/v1/products',
      token: admin,
      payload: {
        title: 'Rain jacket',
        price: 120,
        compare_at_price: 150,
        currency: 'EUR',
        status: 'active',
        published_at: '2999-03-01T08:00:00Z',
        tags: ['Rain', 'sale, 30%', 'rain '],
        product_type: 'Jackets',
        vendor: 'North',
        barcode: '4006381333931',
        length: 70.5,
        dimension_unit: 'cm',
        hs_code: '6201.40',
        country_of_origin: 'PT',
        seo_title: 'Rain jacket, "light"',
        options: [
          { name: 'Size', values: [{ value: 'S' }, { value: 'M', swatch_color: '#1e40af' }] },
          { name: 'Colour', values: [{ value: 'Navy' }] },
        ],
        attributes: { material: 'nylon', features: ['waterproof', 'vegan'] },
      },
    })
    const generated = await ctx.expectStatus<{ variants: { id: string }[] }>(201, {
      method: 'POST',
      url: `/api/v1/products/${made.id}/variants/generate`,
      token: admin,
      payload: { compare_at_price: 140 },
    })
    await ctx.expectStatus(200, {
      method: 'PATCH',
      url: `/api/v1/products/${made.id}/variants/${generated.variants[0]!.id}`,
      token: admin,
      payload: { barcode: '96385074', attributes: { batch: 7 }, price: 110 },
    })
    await ctx.expectStatus(200, {
      method: 'POST',
      url: `/api/v1/products/${made.id}/prices`,
      token: admin,
      payload: { prices: [{ currency: 'USD', amount: 130, compare_at_amount: 160 }] },
    })
    const before = await ctx.expectStatus<Product>(200, { method: 'GET', url: `/api/v1/products/${made.id}`, token: admin })
    expect(before).toMatchObject({ status: 'active', is_active: false, tags: ['Rain', 'sale, 30%'], hs_code: '620140' })

    const created = await ctx.expectStatus<Export>(202, { method: 'POST', url: '/api/v1/exports', payload: { resource: 'products' }, token: admin })
    await settled<Export>(ctx, admin, `/api/v1/exports/${created.id}`, ['completed'])
    const file = (await ctx.request({ method: 'GET', url: `/api/v1/exports/${created.id}/file`, token: admin })).body
    expect(file).toContain(',"Rain, sale\\, 30%",')
    const imported = (await sendCsv(ctx, admin, 'resource=products', file)).json<Import>()
    const done = await settled<Import>(ctx, admin, `/api/v1/imports/${imported.id}`, ['completed', 'failed'])
    expect(done).toMatchObject({ status: 'completed', refused: 0, created: 0 })
    const after = await ctx.expectStatus<Product>(200, { method: 'GET', url: `/api/v1/products/${made.id}`, token: admin })
    const unstamped = ({ updated_at: _updated, variants, ...rest }: Product) => ({ ...rest, variants: variants.map(({ updated_at: _variant, ...variant }) => variant) })
    expect(unstamped(after)).toEqual(unstamped(before))
    const prices = await ctx.expectStatus<{ prices: { currency: string; amount: number; compare_at_amount: number | null }[] }>(200, {
      method: 'GET',
      url: `/api/v1/products/${made.id}/prices`,
      token: admin,
    })
    expect(prices.prices.map((price) => [price.currency, price.amount, price.compare_at_amount])).toEqual([['USD', 130, 160]])
  })

  test('takes the file as a multipart form too, and keeps its name', async ({ ctx, admin, baseUrl }) => {
    runWorker(ctx)
    const form = new FormData()
    form.append('file', new Blob(['email,first_name\r\nform@example.com,Form\r\n'], { type: 'text/csv' }), 'people.csv')
    const response = await fetch(`${baseUrl}/api/v1/imports?resource=customers`, { method: 'POST', headers: { authorization: `Bearer ${admin}` }, body: form })
    expect(response.status).toBe(202)
    const created = (await response.json()) as Import
    expect(created.file_name).toBe('people.csv')
    const done = await settled<Import>(ctx, admin, `/api/v1/imports/${created.id}`, ['completed', 'failed'])
    expect(done).toMatchObject({ status: 'completed', created: 1 })
    const listed = await ctx.expectStatus<ImportList>(200, { method: 'GET', url: '/api/v1/imports', token: admin })
    expect(listed.imports[0]!.id).toBe(created.id)
  })

  test('an unusable file fails the import with the reason', async ({ ctx, admin }) => {
    runWorker(ctx)
    const created = (await sendCsv(ctx, admin, 'resource=customers', 'email,nickname\r\na@example.com,A\r\n')).json<Import>()
    const failed = await settled<Import>(ctx, admin, `/api/v1/imports/${created.id}`, ['completed', 'failed'])
    expect(failed).toMatchObject({ status: 'failed', error: "Unknown columns: 'nickname' (docs/csv.md lists them)" })
  })

  test('refuses what it cannot take, keeping nothing', async ({ ctx, admin, customer }) => {
    const before = await ctx.countRows('imports')
    await ctx.expectInvalidField({ method: 'POST', url: '/api/v1/imports', headers: { 'content-type': 'text/csv' }, payload: CSV, token: admin }, 'resource', 'imports')
    await ctx.expectInvalidField({ method: 'POST', url: '/api/v1/imports?resource=orders', headers: { 'content-type': 'text/csv' }, payload: CSV, token: admin }, 'resource', 'imports')
    await ctx.expectError(415, 'unsupported_media_type', { method: 'POST', url: '/api/v1/imports?resource=products', headers: { 'content-type': 'application/pdf' }, payload: CSV, token: admin })
    // A JSON body is read by the JSON parser, not taken as the file: 415, never a 500 (found by fuzz.test.ts).
    for (const payload of ['[1]', '{}', `${'['.repeat(1000)}${']'.repeat(1000)}`]) {
      await ctx.expectError(415, 'unsupported_media_type', { method: 'POST', url: '/api/v1/imports?resource=customers', headers: { 'content-type': 'application/json' }, payload, token: admin })
    }
    const tooLarge = await sendCsv(ctx, admin, 'resource=products', `product_slug\r\n${'x\r\n'.repeat(IMPORT_MAX_BYTES / 3 + 10)}`)
    expect([tooLarge.statusCode, tooLarge.json<{ error: { code: string } }>().error.code]).toEqual([413, 'payload_too_large'])
    const writerOfProducts = (await ctx.createApiKey(['products:write'])).key
    expect((await sendCsv(ctx, writerOfProducts, 'resource=customers', 'email\r\na@example.com')).statusCode).toBe(403)
    expect((await sendCsv(ctx, customer, 'resource=products', CSV)).statusCode).toBe(403)
    // A multipart body cut short inside the file, or not multipart at all: 400 (it hung without an answer).
    const truncated = '--x\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\nproduct_slug\r\na\r\n'
    for (const payload of [truncated, '"text"']) {
      await ctx.expectError(400, 'validation_error', { method: 'POST', url: '/api/v1/imports?resource=products', token: admin, headers: { 'content-type': 'multipart/form-data; boundary=x' }, payload })
    }
    expect(await ctx.countRows('imports')).toBe(before)
    expect((await readdir(join(ROOT, 'private', 'imports'))).filter((name) => name.endsWith('.part'))).toEqual([])
  })

  test('deleting an import deletes its report and file', async ({ ctx, admin }) => {
    const created = (await sendCsv(ctx, admin, 'resource=products&dry_run=true', CSV)).json<Import>()
    await ctx.expectStatus(204, { method: 'DELETE', url: `/api/v1/imports/${created.id}`, token: admin })
    await ctx.expectError(404, 'not_found', { method: 'GET', url: `/api/v1/imports/${created.id}/rows`, token: admin })
    expect(existsSync(join(ROOT, 'private', 'imports', `${created.id}.csv`))).toBe(false)
  })
})
