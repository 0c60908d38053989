/**
 * The real `commerce` binary against a real API process and worker on a test database: every
 * API operation's command is run at least once (checked at the end), per topic, with failures.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, inject, it, onTestFinished } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@commerce/db/testing'
import { freePort, startApi, startWorker, stopProcess } from '../../api/test/processes.js'
import { BIN, userEnvironment } from './binary.js'

const OPERATIONS = fileURLToPath(new URL('../dist/operations.json', import.meta.url))
const ADMIN = { email: 'cli-admin@example.com', password: 'correct horse battery staple' }

interface Run {
  code: number
  stdout: string
  stderr: string
}

let database: TestDatabase
let configHome: string
let baseUrl: string
let api: ChildProcess
let worker: ChildProcess
let receiver: Server
let receiverUrl: string
const received: string[] = []
/** The command ids run, to show at the end that every operation has been. */
const ran = new Set<string>()
let operationIds: string[] = []

function commerce(args: string[], options: { env?: Record<string, string>; stdin?: string } = {}): Promise<Run> {
  for (let words = 4; words > 0; words--) {
    const id = args.slice(0, words).join(':')
    if (operationIds.includes(id)) {
      ran.add(id)
      break
    }
  }
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      {
        env: { ...userEnvironment('DATABASE_URL', 'COMMERCE_TOKEN'), XDG_CONFIG_HOME: configHome, COMMERCE_BASE_URL: baseUrl, SCRYPT_COST: '1024', ...options.env },
        timeout: 30_000,
      },
      (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
    )
    child.stdin!.end(options.stdin ?? '')
  })
}

/** Runs a command with --json, expects success and returns the API's JSON. */
async function json<T = Record<string, unknown>>(args: string[], env?: Record<string, string>): Promise<T> {
  const run = await commerce([...args, '--json'], { env })
  expect(run, `commerce ${args.join(' ')}`).toMatchObject({ code: 0, stderr: '' })
  return JSON.parse(run.stdout) as T
}

/** oclif prints errors as ` ›   Error: …`, wrapped to the terminal width: back to one line. */
const errorText = (stderr: string) => stderr.replace(/\s*›\s*/g, ' ').replace(/\s+/g, ' ').trim()

beforeAll(async () => {
  if (!existsSync(OPERATIONS)) throw new Error(`${OPERATIONS} is missing: run pnpm build`)
  operationIds = (JSON.parse(await readFile(OPERATIONS, 'utf8')) as { id: string }[]).map((operation) => operation.id)
  database = await createTestDatabase(inject('adminUrl'), inject('template'))
  configHome = await mkdtemp(join(tmpdir(), 'commerce-cli-'))
  receiver = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      received.push(String(request.headers['x-webhook-event']))
      response.writeHead(200).end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`

  // One folder of files for both (CSV imports are stored by the API and read by the worker).
  const files = { UPLOADS_DIR: join(configHome, 'uploads') }
  ;({ baseUrl, process: api } = await startApi(database.url, files))
  // Customers' emails written as .eml files in a folder of this test (no mail server needed).
  worker = startWorker(database.url, { NOTIFICATIONS_ENABLED: 'true', COMMERCE_DATA_DIR: configHome, ...files })
  const created = await commerce(['users', 'create', '--email', ADMIN.email, '--role', 'admin', '--password', ADMIN.password], {
    env: { DATABASE_URL: database.url },
  })
  expect(created.code).toBe(0)
})

afterAll(async () => {
  await Promise.all([stopProcess(api), stopProcess(worker)])
  await new Promise((resolve) => receiver?.close(resolve))
  await database?.drop()
  if (configHome) await rm(configHome, { recursive: true, force: true })
})

describe('login, logout and where the token comes from', () => {
  it('refuses a wrong password with the API message and stores nothing', async () => {
    const run = await commerce(['login', '--email', ADMIN.email], { stdin: 'not the password\n' })
    expect(run.code).toBe(1)
    expect(errorText(run.stderr)).toContain('Invalid email or password (unauthorized, HTTP 401)')
    expect(existsSync(join(configHome, 'commerce', 'credentials.json'))).toBe(false)
  })

  it('stores the token of a piped password, readable by the user only, and the next commands use it', async () => {
    const run = await commerce(['login', '--email', ADMIN.email], { stdin: `${ADMIN.password}\n` })
    expect(run).toMatchObject({ code: 0, stderr: '' })
    expect(run.stdout).toContain(`Signed in to ${baseUrl} as ${ADMIN.email} (admin)`)
    const file = join(configHome, 'commerce', 'credentials.json')
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    const stored = JSON.parse(await readFile(file, 'utf8')) as { base_url: string; token: string }
    expect(stored.base_url).toBe(baseUrl)
    const me = await json<{ user: { email: string; role: string } }>(['auth', 'me'])
    expect(me.user).toMatchObject({ email: ADMIN.email, role: 'admin' })
  })

  it('never sends the stored token to another base URL, and --token / COMMERCE_TOKEN win over it', async () => {
    // Same API, other origin spelling: the stored token is not sent, so the API answers 401.
    const other = await commerce(['auth', 'me', '--base-url', baseUrl.replace('127.0.0.1', 'localhost')])
    expect(other.code).toBe(1)
    expect(errorText(other.stderr)).toContain('HTTP 401')
    const bad = await commerce(['auth', 'me'], { env: { COMMERCE_TOKEN: 'not-a-token' } })
    expect(errorText(bad.stderr)).toContain('The access token is malformed, expired or invalid (unauthorized, HTTP 401)')
    expect((await commerce(['auth', 'me', '--token', 'also-bad'])).code).toBe(1)
  })

  it('says the API cannot be reached, with --json in the API error shape', async () => {
    const port = await freePort()
    const run = await commerce(['products', 'list', '--base-url', `http://127.0.0.1:${port}`, '--json'])
    expect(run.code).toBe(1)
    const body = JSON.parse(run.stdout) as { error: { code: string; message: string } }
    expect(body.error.code).toBe('api_unreachable')
    expect(body.error.message).toContain(`Could not reach the API at http://127.0.0.1:${port} (ECONNREFUSED)`)
  })

  it('logout forgets the token; login --token stores an API key after checking it', async () => {
    const key = (
      await json<{ key: string }>(['api-keys', 'create', '--name', 'cli test', '--scopes', 'products:read'], { DATABASE_URL: database.url })
    ).key
    const saved = await readFile(join(configHome, 'commerce', 'credentials.json'), 'utf8')
    onTestFinished(() => writeFile(join(configHome, 'commerce', 'credentials.json'), saved, { mode: 0o600 }))
    expect((await commerce(['logout'])).stdout).toContain('Removed')
    expect((await commerce(['logout'])).stdout).toContain('No stored token.')
    expect(errorText((await commerce(['login', '--token', 'ck_made_up'])).stderr)).toContain('HTTP 401')
    const stored = await commerce(['login', '--token', key])
    expect(stored.stdout).toContain('as API key')
    // The key reads products, and is refused what its scopes do not allow.
    expect((await commerce(['products', 'list'])).code).toBe(0)
    const refused = await commerce(['orders', 'list'])
    expect(refused.code).toBe(1)
    expect(errorText(refused.stderr)).toMatch(/\(forbidden, HTTP 403\)$/)
  })
})

describe('catalog: categories, products, variants, images', () => {
  it('creates, reads, lists, updates and deletes through every catalog command', async () => {
    const category = await json<{ id: string; slug: string }>(['categories', 'create', '--name', 'Trail shoes'])
    expect(category.slug).toBe('trail-shoes')
    expect((await json<{ name: string }>(['categories', 'get', category.id])).name).toBe('Trail shoes')
    await json(['categories', 'update', category.id, '--description', 'Off road'])
    expect((await json<{ categories: unknown[] }>(['categories', 'list'])).categories).toHaveLength(1)

    const product = await json<{ id: string; price: number; categories: { id: string }[] }>([
      'products', 'create', '--title', 'Fell runner', '--price', '89.95', '--currency', 'GBP',
      '--inventory-quantity', '5', '--category-ids', category.id, '--no-is-active',
    ])
    expect(product.price).toBe(89.95)
    expect(product.categories.map((linked) => linked.id)).toEqual([category.id])
    const updated = await json<{ price: number; is_active: boolean; description: string | null }>([
      'products', 'update', product.id, '--price', '79.5', '--is-active', '--description', 'null',
    ])
    expect(updated).toMatchObject({ price: 79.5, is_active: true, description: null })

    // The human views: a detail view, and a table with the page line.
    const detail = await commerce(['products', 'get', product.id])
    expect(detail.stdout).toMatch(/^title\s+Fell runner$/m)
    const table = await commerce(['products', 'list', '--search', 'fell'])
    expect(table.stdout).toMatch(/^ID\s+TITLE/m)
    expect(table.stdout).toContain('Fell runner')
    expect(table.stdout).toContain('Page 1 of 1 (1 in all)')
    // --fields comes from the contract's shared parameter: only the fields asked for, and the id.
    expect(await json(['products', 'get', product.id, '--fields', 'title,price'])).toEqual({ id: product.id, title: 'Fell runner', price: 79.5 })
    const selected = await commerce(['products', 'list', '--search', 'fell', '--fields', 'title'])
    expect(selected.stdout).toMatch(/^ID\s+TITLE\s*$/m)
    expect(selected.stdout).toContain('Page 1 of 1 (1 in all)')

    const variant = await json<{ id: string }>(['products', 'variants', 'create', product.id, '--title', 'UK 9', '--options', '{"size":"9"}'])
    await json(['products', 'variants', 'update', product.id, variant.id, '--inventory-quantity', '3'])
    expect((await json<{ variants: { inventory_quantity: number }[] }>(['products', 'variants', 'list', product.id])).variants[0]!.inventory_quantity).toBe(3)
    // Options: the free-form variant takes its value of the new option; generating makes the rest.
    const withOptions = await json<{ options: { name: string }[]; slug: string }>(['products', 'update', product.id, '--options', '[{"name":"Size","values":[{"value":"9"},{"value":"10"}]}]'])
    expect(withOptions.options.map((option) => option.name)).toEqual(['Size'])
    const generated = await json<{ variants: { title: string; price: number }[] }>(['products', 'variants', 'generate', product.id, '--price', '80'])
    expect(generated.variants).toEqual([expect.objectContaining({ title: '10', price: 80 })])
    expect((await json<{ id: string }>(['products', 'by-slug', 'get', withOptions.slug])).id).toBe(product.id)

    // Attributes and collections: definitions, values, an automatic collection, its preview and translation.
    const attribute = await json<{ id: string; key: string }>(['attributes', 'create', '--key', 'sole', '--name', 'Sole', '--type', 'select', '--choices', 'rubber,leather', '--filterable'])
    await json(['attributes', 'update', attribute.id, '--name', 'Sole material'])
    expect((await json<{ name: string }>(['attributes', 'get', attribute.id])).name).toBe('Sole material')
    expect((await json<{ attributes: unknown[] }>(['attributes', 'list'])).attributes).toHaveLength(1)
    await json(['products', 'update', product.id, '--data', '{"attributes":{"sole":"rubber"},"tags":["trail"]}'])
    const rules = '[{"field":"attribute","operator":"equals","name":"sole","value":"rubber"}]'
    expect((await json<{ count: number }>(['collections', 'preview', '--rules', rules])).count).toBe(1)
    const collection = await json<{ id: string; slug: string; product_count: number }>(['collections', 'create', '--title', 'Rubber soles', '--kind', 'automatic', '--rules', rules])
    expect(collection.product_count).toBe(1)
    await json(['collections', 'update', collection.id, '--sort', 'newest'])
    expect((await json<{ sort: string }>(['collections', 'get', collection.id])).sort).toBe('newest')
    expect((await json<{ id: string }>(['collections', 'by-slug', 'get', collection.slug])).id).toBe(collection.id)
    expect((await json<{ collections: unknown[] }>(['collections', 'list'])).collections).toHaveLength(1)
    await json(['collections', 'translations', 'set', collection.id, 'fr', '--title', 'Semelles caoutchouc'])
    expect((await json<{ translations: unknown[] }>(['collections', 'translations', 'list', collection.id])).translations).toHaveLength(1)
    expect((await commerce(['collections', 'translations', 'delete', collection.id, 'fr'])).stdout.trim()).toBe('Done.')
    // The filtered list: tags, attribute values, a sort and the facets.
    const filtered = await json<{ products: { id: string }[]; facets: { tags: { value: string; count: number }[] } }>([
      'products', 'list', '--tag', 'trail', '--attr', 'sole:rubber', '--sort', 'title', '--facets', '--collection', collection.slug,
    ])
    expect(filtered.products.map((found) => found.id)).toEqual([product.id])
    expect(filtered.facets.tags).toEqual([expect.objectContaining({ value: 'trail', count: 1 })])
    expect((await commerce(['collections', 'delete', collection.id])).stdout.trim()).toBe('Done.')
    expect((await commerce(['attributes', 'delete', attribute.id])).stdout.trim()).toBe('Done.')

    // Translations: set (the tag put in canonical form), read, list, delete; reads take --locale.
    expect(await json(['products', 'translations', 'set', product.id, 'fr-ca', '--title', 'Coureur des crêtes'])).toMatchObject({ locale: 'fr-CA', title: 'Coureur des crêtes', description: null })
    expect((await json<{ title: string }>(['products', 'translations', 'get', product.id, 'fr-CA'])).title).toBe('Coureur des crêtes')
    expect((await json<{ translations: { locale: string }[] }>(['products', 'translations', 'list', product.id])).translations.map((t) => t.locale)).toEqual(['fr-CA'])
    expect((await json<{ title: string }>(['products', 'get', product.id, '--locale', 'fr-CA'])).title).toBe('Coureur des crêtes')
    await json(['products', 'variants', 'translations', 'set', product.id, variant.id, 'fr', '--title', 'Pointure 43'])
    expect((await json<{ title: string }>(['products', 'variants', 'translations', 'get', product.id, variant.id, 'fr'])).title).toBe('Pointure 43')
    expect((await json<{ translations: unknown[] }>(['products', 'variants', 'translations', 'list', product.id, variant.id])).translations).toHaveLength(1)
    expect((await json<{ variants: { title: string }[] }>(['products', 'variants', 'list', product.id, '--locale', 'fr-BE'])).variants[0]!.title).toBe('Pointure 43')
    expect((await commerce(['products', 'variants', 'translations', 'delete', product.id, variant.id, 'fr'])).stdout.trim()).toBe('Done.')
    expect((await commerce(['products', 'translations', 'delete', product.id, 'fr-CA'])).stdout.trim()).toBe('Done.')
    const badLocale = await commerce(['products', 'translations', 'set', product.id, 'fr_CA', '--title', 'X'])
    expect([badLocale.code, errorText(badLocale.stderr)]).toEqual([1, expect.stringContaining('locale')])
    await json(['categories', 'translations', 'set', category.id, 'fr', '--name', 'Chaussures de trail'])
    expect((await json<{ name: string }>(['categories', 'translations', 'get', category.id, 'fr'])).name).toBe('Chaussures de trail')
    expect((await json<{ translations: unknown[] }>(['categories', 'translations', 'list', category.id])).translations).toHaveLength(1)
    expect((await json<{ categories: { name: string }[] }>(['categories', 'list', '--locale', 'fr'])).categories[0]!.name).toBe('Chaussures de trail')
    expect((await commerce(['categories', 'translations', 'delete', category.id, 'fr'])).stdout.trim()).toBe('Done.')

    expect((await commerce(['products', 'variants', 'delete', product.id, variant.id])).stdout.trim()).toBe('Done.')

    const image = await json<{ id: string }>(['products', 'images', 'create', product.id, '--url', 'https://cdn.example.com/fell.jpg'])
    expect(await json(['products', 'images', 'update', product.id, image.id, '--alt', 'Front', '--position', '2'])).toMatchObject({ alt: 'Front', position: 2 })
    expect((await json<{ images: unknown[] }>(['products', 'images', 'list', product.id])).images).toHaveLength(1)
    await commerce(['products', 'images', 'delete', product.id, image.id])
    expect((await json<{ images: unknown[] }>(['products', 'images', 'list', product.id])).images).toHaveLength(0)

    // A file from disk, sent as multipart/form-data with the other flags as its fields.
    const png = join(configHome, 'fell.png')
    await writeFile(png, Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64'))
    const uploaded = await json<{ content_type: string; width: number; alt: string }>(['products', 'images', 'create', product.id, '--file', png, '--alt', 'Fell'])
    expect(uploaded).toMatchObject({ content_type: 'image/png', width: 1, alt: 'Fell' })
    const missingFile = await commerce(['products', 'images', 'create', product.id, '--file', join(configHome, 'none.png')])
    expect([missingFile.code, errorText(missingFile.stderr)]).toEqual([2, expect.stringContaining('--file: cannot read')])
    const upload = await json<{ url: string; method: string }>(['products', 'images', 'uploads', product.id, '--content-type', 'image/png'])
    expect(upload).toMatchObject({ method: 'PUT', url: expect.stringMatching(/\/api\/v1\/uploads\/[0-9a-f-]{36}$/) })

    await commerce(['categories', 'delete', category.id])
    expect((await commerce(['categories', 'get', category.id])).code).toBe(1)
    expect((await commerce(['products', 'delete', product.id])).code).toBe(0)
    expect((await json<{ is_active: boolean }>(['products', 'get', product.id])).is_active).toBe(false)
    // About 40 runs of the CLI, a process each: 57 s on a loaded CI machine, past the 60 s default once.
  }, 120_000)

  it('imports a CSV file, reads its report, exports the catalog and downloads the file', async () => {
    const csv = join(configHome, 'catalog.csv')
    await writeFile(csv, 'product_slug,product_title,product_price\r\ncli-lamp,CLI lamp,24.00\r\ncli-bad,Bad,x\r\n')
    const dry = await json<{ id: string; status: string; dry_run: boolean }>(['imports', 'create', '--resource', 'products', '--dry-run', '--file', csv])
    expect(dry).toMatchObject({ status: 'pending', dry_run: true })
    const validated = await until(() => json<{ status: string; refused: number }>(['imports', 'get', dry.id]), (answer) => answer.status !== 'pending' && answer.status !== 'running')
    expect(validated).toMatchObject({ status: 'validated', refused: 1 })
    const refused = await json<{ rows: { row: number; reason: string }[] }>(['imports', 'rows', 'list', dry.id, '--action', 'refuse'])
    expect(refused.rows).toEqual([expect.objectContaining({ row: 3, reason: expect.stringContaining('product_price') })])
    await json(['imports', 'apply', dry.id])
    await until(() => json<{ status: string }>(['imports', 'get', dry.id]), (answer) => answer.status === 'completed')
    expect((await json<{ imports: unknown[] }>(['imports', 'list'])).imports.length).toBeGreaterThan(0)

    const exported = await json<{ id: string }>(['exports', 'create', '--resource', 'products'])
    await until(() => json<{ status: string }>(['exports', 'get', exported.id]), (answer) => answer.status === 'completed')
    expect((await json<{ exports: unknown[] }>(['exports', 'list'])).exports.length).toBeGreaterThan(0)
    const download = await commerce(['exports', 'download', exported.id])
    expect(download.code).toBe(0)
    expect(download.stdout.startsWith('\uFEFFproduct_id,product_slug,product_title')).toBe(true)
    expect(download.stdout).toContain(',cli-lamp,CLI lamp,')
    expect((await commerce(['exports', 'delete', exported.id])).stdout.trim()).toBe('Done.')
    expect((await commerce(['imports', 'delete', dry.id])).stdout.trim()).toBe('Done.')
  })

  it('turns bad flags into clear errors before calling, and API refusals into the API message', async () => {
    const number = await commerce(['products', 'create', '--title', 'x', '--price', 'cheap'])
    expect(number.code).toBe(2)
    expect(errorText(number.stderr)).toContain("--price must be a number (got 'cheap')")
    // A missing required flag is a usage error (usage-errors.test.ts); what only the API can judge is its refusal.
    const missing = await commerce(['products', 'create', '--price', '1'])
    expect(missing.code).toBe(2)
    expect(errorText(missing.stderr)).toContain('Missing required flag --title')
    const refused = await commerce(['products', 'create', '--title', 'x', '--price', '-1'])
    expect(refused.code).toBe(1)
    expect(errorText(refused.stderr)).toContain('(validation_error, HTTP 400)')
    const missingJson = await commerce(['products', 'get', randomUUID(), '--json'])
    expect(missingJson.code).toBe(1)
    expect(JSON.parse(missingJson.stdout)).toMatchObject({ error: { code: 'not_found', message: 'Product not found' } })
    const data = await commerce(['products', 'create', '--data', '{not json'])
    expect(errorText(data.stderr)).toContain('--data must be a JSON object')
  })
})

describe('a sale: settings, customers, carts, checkout, orders, payments, refunds, fulfillments', () => {
  it('runs a whole sale through the CLI', async () => {
    await json(['tax-rates', 'create', '--country', 'GB', '--rate', '20', '--name', 'UK VAT'])
    const taxRates = await json<{ tax_rates: { id: string }[] }>(['tax-rates', 'list', '--country', 'GB'])
    const taxRateId = taxRates.tax_rates[0]!.id
    await json(['tax-rates', 'update', taxRateId, '--name', 'VAT'])
    expect((await json<{ name: string }>(['tax-rates', 'get', taxRateId])).name).toBe('VAT')

    const method = await json<{ id: string }>([
      'shipping', 'methods', 'create', '--name', 'Royal Mail', '--currency', 'GBP', '--countries', 'GB,IE', '--base-price', '3.5',
    ])
    await json(['shipping', 'methods', 'update', method.id, '--estimated-days', '2'])
    expect((await json<{ estimated_days: number }>(['shipping', 'methods', 'get', method.id])).estimated_days).toBe(2)
    expect((await json<{ shipping_methods: unknown[] }>(['shipping', 'methods', 'list'])).shipping_methods).toHaveLength(1)

    const coupon = await json<{ id: string }>(['coupons', 'create', '--code', 'TENOFF', '--type', 'percentage', '--value', '10'])
    await json(['coupons', 'update', coupon.id, '--usage-limit', '5'])
    expect((await json<{ usage_limit: number }>(['coupons', 'get', coupon.id])).usage_limit).toBe(5)
    expect((await json<{ coupons: unknown[] }>(['coupons', 'list', '--code', 'TENOFF'])).coupons).toHaveLength(1)

    const product = await json<{ id: string }>(['products', 'create', '--title', 'Kettle', '--price', '40', '--currency', 'GBP', '--inventory-quantity', '10'])
    const spare = await json<{ id: string }>(['products', 'create', '--title', 'Toaster', '--price', '25', '--currency', 'GBP', '--inventory-quantity', '10'])
    // Cursor mode: an empty --after starts it; the table ends with the flag for the next page, the last page says so.
    const firstPage = await commerce(['products', 'list', '--after', '', '--per-page', '1'])
    expect(firstPage.stdout).toMatch(/^ID\s+TITLE/m)
    expect(firstPage.stdout).toContain('Toaster')
    const next = /\n\nNext page: --after ([A-Za-z0-9_-]+)\n?$/.exec(firstPage.stdout)
    expect(next, firstPage.stdout + firstPage.stderr).not.toBeNull()
    const rest = await json<{ products: { id: string }[]; meta: unknown }>(['products', 'list', '--after', next![1]!, '--per-page', '100'])
    expect(rest.products.map((listed) => listed.id)).toContain(product.id)
    expect(rest.products.map((listed) => listed.id)).not.toContain(spare.id)
    expect(rest.meta).toEqual({ per_page: 100, next_cursor: null })
    expect((await commerce(['products', 'list', '--after', next![1]!, '--per-page', '100'])).stdout).toMatch(/\n\nLast page\n?$/)

    const customer = await json<{ id: string }>(['customers', 'create', '--email', 'grace@example.com', '--first-name', 'Grace'])
    await json(['customers', 'update', customer.id, '--last-name', 'Hopper'])
    expect((await json<{ last_name: string }>(['customers', 'get', customer.id])).last_name).toBe('Hopper')
    expect((await json<{ customers: unknown[] }>(['customers', 'list', '--email', 'grace@example.com'])).customers).toHaveLength(1)
    const address = await json<{ id: string }>([
      'customers', 'addresses', 'create', customer.id, '--line1', '1 Navy Way', '--city', 'Arlington', '--country', 'US',
    ])
    await json(['customers', 'addresses', 'update', customer.id, address.id, '--postal-code', '22202'])
    expect((await json<{ postal_code: string }>(['customers', 'addresses', 'get', customer.id, address.id])).postal_code).toBe('22202')
    expect((await json<{ addresses: unknown[] }>(['customers', 'addresses', 'list', customer.id])).addresses).toHaveLength(1)
    await commerce(['customers', 'addresses', 'delete', customer.id, address.id])
    expect((await json<{ addresses: unknown[] }>(['customers', 'addresses', 'list', customer.id])).addresses).toHaveLength(0)
    expect((await commerce(['customers', 'delete', customer.id])).code).toBe(0)

    const cart = await json<{ id: string }>(['carts', 'create', '--currency', 'GBP'])
    const withItem = await json<{ items: { id: string }[] }>(['carts', 'items', 'create', cart.id, '--product-id', product.id, '--quantity', '1'])
    const itemId = withItem.items[0]!.id
    await json(['carts', 'items', 'update', cart.id, itemId, '--quantity', '2'])
    const other = await json<{ items: { id: string; product_id: string }[] }>(['carts', 'items', 'create', cart.id, '--product-id', spare.id, '--quantity', '1'])
    // 204: nothing on standard output, even with --json.
    const removed = await commerce(['carts', 'items', 'delete', cart.id, other.items.find((line) => line.product_id === spare.id)!.id, '--json'])
    expect(removed).toMatchObject({ code: 0, stdout: '' })
    const discounted = await json<{ coupons: { id: string }[] }>(['carts', 'coupons', 'create', cart.id, '--code', 'tenoff'])
    await commerce(['carts', 'coupons', 'delete', cart.id, discounted.coupons[0]!.id])
    await json(['carts', 'email', 'set', cart.id, '--email', 'ada@example.com'])
    await json(['carts', 'shipping-address', 'set', cart.id, '--line1', '12 St James Sq', '--city', 'London', '--country', 'GB'])
    const rates = await json<{ rates: { id: string }[] }>(['shipping', 'rates', '--cart-id', cart.id])
    expect(rates.rates.length).toBeGreaterThan(0)
    const shown = await json<{ items: { quantity: number }[]; totals: { tax: number } }>(['carts', 'get', cart.id])
    expect(shown.items[0]!.quantity).toBe(2)
    expect(shown.totals.tax).toBe(16)

    const checkout = await json<{ id: string; shipping_rates: { id: string }[] }>([
      'checkout', 'create', '--cart-id', cart.id, '--email', 'ada@example.com',
      '--shipping-address-line1', '12 St James Sq', '--shipping-address-city', 'London', '--shipping-address-country', 'GB',
    ])
    await json(['checkout', 'shipping', checkout.id, '--rate-id', checkout.shipping_rates[0]!.id])
    expect((await json<{ id: string }>(['checkout', 'get', checkout.id])).id).toBe(checkout.id)
    const declined = await commerce(['checkout', 'complete', checkout.id, '--payment-method', 'card', '--payment-token', 'tok_declined'])
    expect(declined.code).toBe(1)
    expect(errorText(declined.stderr)).toContain('(payment_declined, HTTP 402)')
    const key = `cli-retry-${randomUUID()}`
    const complete = ['checkout', 'complete', checkout.id, '--payment-method', 'card', '--payment-token', 'tok_visa', '--idempotency-key', key]
    const order = await json<{ id: string; order_number: string; status: string; payments: { id: string }[] }>(complete)
    expect(order.status).toBe('paid')
    // A retry with the same key is the same order, not a second charge.
    expect((await json<{ id: string }>(complete)).id).toBe(order.id)

    expect((await json<{ orders: { id: string }[] }>(['orders', 'list', '--status', 'paid'])).orders.map((listed) => listed.id)).toContain(order.id)
    await json(['orders', 'update', order.id, '--notes', 'Leave with a neighbour'])
    expect((await json<{ notes: string }>(['orders', 'get', order.id])).notes).toBe('Leave with a neighbour')
    const payments = await json<{ payments: { id: string }[] }>(['payments', 'list', order.id])
    expect(payments.payments).toHaveLength(1)
    const refund = await json<{ amount: number }>(['refunds', 'create', payments.payments[0]!.id, '--amount', '1.5', '--reason', 'dented'])
    expect(refund.amount).toBe(1.5)

    const fulfillment = await json<{ id: string }>(['fulfillments', 'create', order.id, '--carrier', 'Royal Mail', '--tracking-number', 'RM123456789GB'])
    await json(['fulfillments', 'tracking-events', fulfillment.id, '--status', 'in_transit', '--location', 'Swindon'])
    expect((await json<{ fulfillments: unknown[] }>(['fulfillments', 'list', order.id])).fulfillments).toHaveLength(1)
    const tracking = await json<{ carrier: string; events: unknown[] }>(['shipping', 'tracking', 'RM123456789GB'])
    expect(tracking.carrier).toBe('Royal Mail')
    expect((await json<{ status: string }>(['orders', 'complete', order.id])).status).toBe('completed')
    // Returns of one unit: one declined, one canceled, one approved and received (restocked and refunded less a fee).
    const shipped = await json<{ items: { id: string }[] }>(['orders', 'get', order.id])
    const unit = JSON.stringify([{ line_id: shipped.items[0]!.id, quantity: 1 }])
    const declinedReturn = await json<{ id: string }>(['returns', 'create', order.id, '--items', unit, '--reason', 'Too big'])
    expect((await json<{ status: string }>(['returns', 'decline', declinedReturn.id, '--reason', 'Worn'])).status).toBe('declined')
    const canceledReturn = await json<{ id: string }>(['returns', 'create', order.id, '--items', unit])
    expect((await json<{ status: string }>(['returns', 'cancel', canceledReturn.id])).status).toBe('canceled')
    const keptReturn = await json<{ id: string }>(['returns', 'create', order.id, '--items', unit])
    expect((await json<{ status: string }>(['returns', 'approve', keptReturn.id])).status).toBe('approved')
    const received = await json<{ status: string; refund: { restocking_fee: number } }>(['returns', 'receive', keptReturn.id, '--restocking-fee', '10'])
    expect(received.status).toBe('received')
    expect(received.refund.restocking_fee).toBeGreaterThan(0)
    expect((await json<{ status: string }>(['returns', 'get', keptReturn.id])).status).toBe('received')
    expect((await json<{ returns: unknown[] }>(['orders', 'returns', order.id])).returns).toHaveLength(3)
    expect((await json<{ returns: { id: string }[] }>(['returns', 'list', '--status', 'received'])).returns.map((listed) => listed.id)).toEqual([keptReturn.id])
    const refused = await commerce(['orders', 'cancel', order.id])
    expect(refused.code).toBe(1)
    expect(errorText(refused.stderr)).toContain('(invalid_state_transition, HTTP 409)')

    // An admin order from lines in a file, paid, then cancelled (refunded and restocked) and archived.
    const lines = join(configHome, 'order.json')
    await writeFile(lines, JSON.stringify({ items: [{ product_id: product.id, quantity: 1 }], currency: 'GBP' }))
    const pending = await json<{ id: string; status: string }>([
      'orders', 'create', '--data', `@${lines}`, '--email', 'phone@example.com',
      '--shipping-address-line1', '1 High St', '--shipping-address-city', 'Leeds', '--shipping-address-country', 'GB',
    ])
    expect(pending.status).toBe('pending')
    // An edit adds a line, previewed first; the payment then covers the new total.
    const added = JSON.stringify([{ product_id: product.id, quantity: 1 }])
    const previewed = await json<{ edit: { amount_owed: number }; order: { totals: { total: number } } }>(['orders', 'edits', 'preview', pending.id, '--add', added])
    const edited = await json<{ edit: { id: string; amount_owed: number } }>(['orders', 'edits', 'create', pending.id, '--add', added, '--reason', 'One more'])
    expect(edited.edit.amount_owed).toBe(previewed.edit.amount_owed)
    expect(previewed.order.totals.total).toBe(edited.edit.amount_owed)
    expect((await json<{ edits: { id: string }[] }>(['orders', 'edits', 'list', pending.id])).edits.map((listed) => listed.id)).toEqual([edited.edit.id])
    const history = await json<{ history: { event: string; actor: { type: string } | null }[] }>(['orders', 'history', pending.id])
    expect(history.history.map((entry) => [entry.event, entry.actor?.type])).toEqual([['order.created', 'user'], ['order.edited', 'user']])
    // Both lines' units are committed at the default location.
    const allocated = await json<{ allocations: { quantity: number; location_name: string }[] }>(['orders', 'allocations', 'list', pending.id])
    expect(allocated.allocations.map((allocation) => allocation.location_name)).toEqual(['Default', 'Default'])
    const paid = await json<{ id: string; status: string }>(['payments', 'create', pending.id, '--method', 'card', '--payment-token', 'tok_visa'])
    expect(paid.status).toBe('captured')
    // An order's own payment is captured at once: there is nothing held to capture or void.
    for (const command of ['capture', 'cancel']) {
      const refusedCapture = await commerce(['payments', command, paid.id])
      expect(refusedCapture.code).toBe(1)
      expect(errorText(refusedCapture.stderr)).toContain('(conflict, HTTP 409)')
    }
    expect((await json<{ status: string }>(['orders', 'cancel', pending.id])).status).toBe('cancelled')
    expect((await commerce(['orders', 'delete', pending.id])).code).toBe(0)
    // Draft orders: one completed as paid outside the provider, one paid through its payment link, one deleted.
    const draftLines = JSON.stringify([{ product_id: product.id, quantity: 1 }])
    const draft = await json<{ id: string; discount: { amount: number } }>([
      'draft-orders', 'create', '--currency', 'GBP', '--email', 'phone@example.com', '--lines', draftLines,
      '--discount-type', 'percentage', '--discount-value', '10', '--discount-reason', 'Phone order',
    ])
    expect(draft.discount.amount).toBeGreaterThan(0)
    await json(['draft-orders', 'update', draft.id, '--notes', 'Ring twice'])
    expect((await json<{ notes: string }>(['draft-orders', 'get', draft.id])).notes).toBe('Ring twice')
    const openDrafts = await json<{ draft_orders: { id: string }[] }>(['draft-orders', 'list', '--status', 'open'])
    expect(openDrafts.draft_orders.map((listed) => listed.id)).toContain(draft.id)
    const markedPaid = await json<{ status: string; payments: { provider: string }[] }>(['draft-orders', 'complete', draft.id, '--mark-paid'])
    expect([markedPaid.status, markedPaid.payments.map((payment) => payment.provider)]).toEqual(['paid', ['manual']])
    const linked = await json<{ id: string }>(['draft-orders', 'create', '--currency', 'GBP', '--email', 'phone@example.com', '--lines', draftLines])
    const invoiceToken = (await json<{ invoice_url: string }>(['draft-orders', 'send-invoice', linked.id])).invoice_url.split('/invoices/')[1]!
    expect((await json<{ status: string }>(['invoices', 'get', '--invoice-token', invoiceToken])).status).toBe('open')
    const linkPayment = await json<{ status: string }>(['invoices', 'pay', '--invoice-token', invoiceToken, '--method', 'card', '--payment-token', 'tok_visa'])
    expect(linkPayment.status).toBe('captured')
    expect((await json<{ status: string }>(['invoices', 'get', '--invoice-token', invoiceToken])).status).toBe('paid')
    const discarded = await json<{ id: string }>(['draft-orders', 'create', '--currency', 'GBP', '--lines', draftLines])
    expect((await commerce(['draft-orders', 'delete', discarded.id])).code).toBe(0)
    await commerce(['coupons', 'delete', coupon.id])
    await commerce(['tax-rates', 'delete', taxRateId])
    await commerce(['shipping', 'methods', 'delete', method.id])
    expect((await json<{ shipping_methods: unknown[] }>(['shipping', 'methods', 'list'])).shipping_methods).toHaveLength(0)
  }, 240_000)
})

describe('accounts: register, a customer’s own records, OAuth tokens', () => {
  it('registers a customer who manages its own record and addresses', async () => {
    const registered = await json<{ token: string }>(['auth', 'register', '--email', 'lin@example.com', '--password', 'a long password'])
    const asCustomer = { COMMERCE_TOKEN: registered.token }
    const logged = await json<{ token: string }>(['auth', 'login', '--email', 'lin@example.com', '--password', 'a long password'])
    expect(logged.token).toBeTruthy()
    await json(['customers', 'me', 'update', '--first-name', 'Lin'], asCustomer)
    expect((await json<{ first_name: string }>(['customers', 'me', 'get'], asCustomer)).first_name).toBe('Lin')
    const address = await json<{ id: string }>(['customers', 'me', 'addresses', 'create', '--line1', '2 Quay', '--city', 'Cork', '--country', 'IE'], asCustomer)
    await json(['customers', 'me', 'addresses', 'update', address.id, '--line2', 'Flat 3'], asCustomer)
    expect((await json<{ line2: string }>(['customers', 'me', 'addresses', 'get', address.id], asCustomer)).line2).toBe('Flat 3')
    expect((await json<{ addresses: unknown[] }>(['customers', 'me', 'addresses', 'list'], asCustomer)).addresses).toHaveLength(1)
    await commerce(['customers', 'me', 'addresses', 'delete', address.id], { env: asCustomer })
    expect((await json<{ addresses: unknown[] }>(['customers', 'me', 'addresses', 'list'], asCustomer)).addresses).toHaveLength(0)
    // A customer is not an admin.
    expect(errorText((await commerce(['customers', 'list'], { env: asCustomer })).stderr)).toContain('HTTP 403')
  })

  it('asks for a password reset link (the same answer for any address) and refuses a made-up link', async () => {
    const asked = await json<{ message: string }>(['auth', 'password-reset', '--email', 'lin@example.com'])
    expect(asked).toEqual(await json<{ message: string }>(['auth', 'password-reset', '--email', 'nobody@example.com']))
    const refused = await commerce(['auth', 'password-reset', 'confirm', '--confirm-token', 'made-up', '--password', 'a new long password'])
    expect(refused.code).toBe(1)
    expect(errorText(refused.stderr)).toContain('This link is unknown or was used already')
  })

  it('changes the signed-in customer’s password (a new token; the old one is refused) and email address (a link to the new one), and asks for a verification link; made-up links are refused', async () => {
    const registered = await json<{ token: string }>(['auth', 'register', '--email', 'ruth@example.com', '--password', 'a long password'])
    const asRuth = { COMMERCE_TOKEN: registered.token }
    const resent = await json<{ message: string }>(['auth', 'verify-email', 'resend', '--email', 'ruth@example.com'])
    expect(resent).toEqual(await json<{ message: string }>(['auth', 'verify-email', 'resend', '--email', 'nobody@example.com']))
    const asked = await json<{ message: string }>(['auth', 'email-change', '--email', 'ruth.new@example.com', '--password', 'a long password'], asRuth)
    expect(asked.message).toBe('A link to confirm the change is on its way to the new address')
    for (const args of [['verify-email', '--verify-email-token'], ['email-change', 'confirm', '--confirm-token']]) {
      const refused = await commerce(['auth', ...args, 'made-up'])
      expect(refused.code).toBe(1)
      expect(errorText(refused.stderr)).toContain('This link is unknown or was used already')
    }
    const changed = await json<{ token: string }>(['auth', 'password-change', '--current-password', 'a long password', '--new-password', 'another long password'], asRuth)
    expect(errorText((await commerce(['auth', 'me'], { env: asRuth })).stderr)).toContain('HTTP 401')
    expect((await commerce(['auth', 'me'], { env: { COMMERCE_TOKEN: changed.token } })).code).toBe(0)
  })

  it('disables, enables and demotes accounts over the API (accounts …) and in the database (users …); each counts at once', async () => {
    const registered = await json<{ token: string; user: { id: string } }>(['auth', 'register', '--email', 'sam@example.com', '--password', 'a long password'])
    const asSam = { env: { COMMERCE_TOKEN: registered.token } }
    const onDatabase = { env: { DATABASE_URL: database.url } }
    const listed = await json<{ users: { id: string }[] }>(['accounts', 'list', '--email', 'SAM@example.com'])
    expect(listed.users.map((user) => user.id)).toEqual([registered.user.id])

    expect((await json<{ disabled_at: string | null }>(['accounts', 'update', registered.user.id, '--disabled'])).disabled_at).not.toBeNull()
    expect(errorText((await commerce(['customers', 'me', 'get'], asSam)).stderr)).toContain('The account of this token is disabled (unauthorized, HTTP 401)')
    expect((await json<{ disabled_at: string | null }>(['accounts', 'get', registered.user.id])).disabled_at).not.toBeNull()

    const enabled = await commerce(['users', 'enable', 'sam@example.com'], onDatabase)
    expect(enabled).toMatchObject({ code: 0, stderr: '' })
    expect(enabled.stdout).toContain('Enabled sam@example.com')
    expect((await commerce(['customers', 'me', 'get'], asSam)).code).toBe(0)

    // Promoted and demoted with the token Sam already holds.
    expect((await commerce(['users', 'update', registered.user.id, '--role', 'admin'], onDatabase)).stdout).toContain('sam@example.com is now admin')
    expect((await commerce(['customers', 'list'], asSam)).code).toBe(0)
    await json(['users', 'update', 'sam@example.com', '--role', 'customer'], onDatabase.env)
    expect(errorText((await commerce(['customers', 'list'], asSam)).stderr)).toContain('HTTP 403')

    const disabled = await json<{ email: string; disabled_at: string | null }>(['users', 'disable', 'sam@example.com'], onDatabase.env)
    expect(disabled.disabled_at).not.toBeNull()
    expect(errorText((await commerce(['customers', 'me', 'get'], asSam)).stderr)).toContain('HTTP 401')

    const unknown = await commerce(['users', 'disable', 'nobody@example.com'], onDatabase)
    expect(unknown.code).toBe(1)
    expect(errorText(unknown.stderr)).toBe("Error: No user with id or email 'nobody@example.com'")
    const lastAdmin = await commerce(['users', 'update', ADMIN.email, '--role', 'customer'], onDatabase)
    expect(lastAdmin.code).toBe(1)
    expect(errorText(lastAdmin.stderr)).toBe('Error: This is the last enabled admin: make another admin before demoting or disabling it')
  })

  it('gets an OAuth access token for a client and uses it', async () => {
    const client = await json<{ client_id: string; client_secret: string }>(
      ['oauth-clients', 'create', '--name', 'erp', '--scopes', 'orders:read'],
      { DATABASE_URL: database.url },
    )
    const token = await json<{ access_token: string; token_type: string; scope: string }>([
      'oauth', 'token', '--grant-type', 'client_credentials', '--client-id', client.client_id, '--client-secret', client.client_secret,
    ])
    expect(token).toMatchObject({ token_type: 'Bearer', scope: 'orders:read' })
    expect((await commerce(['orders', 'list'], { env: { COMMERCE_TOKEN: token.access_token } })).code).toBe(0)
    const refused = await commerce(['oauth', 'token', '--grant-type', 'client_credentials', '--client-id', client.client_id, '--client-secret', 'wrong', '--json'])
    expect(refused.code).toBe(1)
    expect(JSON.parse(refused.stdout)).toMatchObject({ error: { code: 'invalid_client' } })
  })
})

describe('webhooks and events', () => {
  it('subscribes a receiver, shows each delivery with its attempts, redelivers, and manages the subscription', async () => {
    const webhook = await json<{ id: string }>(['webhooks', 'create', '--url', receiverUrl, '--events', 'product.created,product.updated'])
    const product = await json<{ id: string }>(['products', 'create', '--title', 'Signal lamp', '--price', '5', '--currency', 'GBP'])
    let deliveries: { id: string; status: string; attempt_log: unknown[] }[] = []
    for (let tries = 0; tries < 100 && deliveries[0]?.status !== 'succeeded'; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      deliveries = (await json<{ deliveries: typeof deliveries }>(['webhooks', 'deliveries', webhook.id])).deliveries
    }
    expect(deliveries[0]).toMatchObject({ status: 'succeeded' })
    expect(received).toContain('product.created')
    // The people's view lists every attempt of every delivery.
    const view = await commerce(['webhooks', 'deliveries', webhook.id])
    expect(view.stdout).toMatch(/^DELIVERY\s+EVENT\s+STATUS\s+ATTEMPT\s+HTTP/m)
    expect(view.stdout).toMatch(new RegExp(`^${deliveries[0]!.id}\\s+product\\.created\\s+succeeded\\s+1\\s+200`, 'm'))
    await json(['webhooks', 'deliveries', 'redeliver', webhook.id, deliveries[0]!.id])
    let attempts = 1
    for (let tries = 0; tries < 100 && attempts < 2; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      attempts = (await json<{ attempt_log: unknown[] }>(['webhooks', 'deliveries', 'get', webhook.id, deliveries[0]!.id])).attempt_log.length
    }
    expect(attempts).toBe(2)
    // Replay the last hour's succeeded deliveries: counted first, then sent as attempt 3.
    const window = ['--from', new Date(Date.now() - 3_600_000).toISOString(), '--to', new Date(Date.now() + 60_000).toISOString()]
    expect(await json(['webhooks', 'replay', webhook.id, ...window, '--status', 'succeeded', '--dry-run'])).toEqual({ matched: 1, replayed: 0, created: 0, dry_run: true })
    expect(await json(['webhooks', 'replay', webhook.id, ...window, '--status', 'succeeded,failed'])).toEqual({ matched: 1, replayed: 1, created: 0, dry_run: false })
    for (let tries = 0; tries < 100 && attempts < 3; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      attempts = (await json<{ attempt_log: unknown[] }>(['webhooks', 'deliveries', 'get', webhook.id, deliveries[0]!.id])).attempt_log.length
    }
    expect(attempts).toBe(3)
    const rotated = await json<{ secret: string; previous_secret_expires_at: string }>(['webhooks', 'rotate-secret', webhook.id, '--grace-period-seconds', '600'])
    expect(rotated.secret).toMatch(/^whsec_/)
    expect(Date.parse(rotated.previous_secret_expires_at) - Date.now()).toBeGreaterThan(500_000)
    await json(['webhooks', 'update', webhook.id, '--no-is-active'])
    expect((await json<{ is_active: boolean }>(['webhooks', 'get', webhook.id])).is_active).toBe(false)
    expect((await json<{ is_active: boolean }>(['webhooks', 'enable', webhook.id])).is_active).toBe(true)
    expect((await json<{ webhooks: unknown[] }>(['webhooks', 'list'])).webhooks).toHaveLength(1)
    await commerce(['webhooks', 'delete', webhook.id])
    expect((await json<{ webhooks: unknown[] }>(['webhooks', 'list'])).webhooks).toHaveLength(0)

    const events = await json<{ events: { id: string; event: string }[] }>(['events', 'list', '--event', 'product.*'])
    const created = events.events.find((event) => event.event === 'product.created')!
    expect((await json<{ data: { id: string } }>(['events', 'get', created.id])).data.id).toBeDefined()
    expect(product.id).toBeDefined()
  })

  it('events tail streams the events it asked for as they happen', async () => {
    const tail = spawn(process.execPath, [BIN, 'events', 'tail', '--events', 'product.updated', '--count', '1', '--json'], {
      env: { ...process.env, XDG_CONFIG_HOME: configHome, COMMERCE_BASE_URL: baseUrl },
    })
    let stdout = ''
    let stderr = ''
    tail.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    tail.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const exited = new Promise<number | null>((resolve) => tail.once('exit', resolve))
    // A product.created first: the tail, subscribed to product.updated only, must not print it.
    const product = await json<{ id: string }>(['products', 'create', '--title', 'Tail lamp', '--price', '5', '--currency', 'GBP'])
    while (!stderr.includes('Listening on')) await new Promise((resolve) => setTimeout(resolve, 50))
    await json(['products', 'create', '--title', 'Not this', '--price', '1', '--currency', 'GBP'])
    await json(['products', 'update', product.id, '--price', '6'])
    expect(await exited).toBe(0)
    expect(stderr.trim()).toBe(`Listening on ${baseUrl.replace('http', 'ws')} for product.updated…`)
    const event = JSON.parse(stdout.trim()) as { type: string; event: string; data: { id: string; price: number } }
    expect(event).toMatchObject({ type: 'event', event: 'product.updated', data: { id: product.id, price: 6 } })
  })

  it('events tail without a valid token fails with a message', async () => {
    const run = await commerce(['events', 'tail', '--token', 'bad'])
    expect(run.code).toBe(1)
    expect(errorText(run.stderr)).toContain('Could not open the event stream')
  })
})

describe('notifications', () => {
  it('lists the emails of the sale, shows one with its attempts, resends it, and turns a template off and on', async () => {
    const sent = async () => {
      for (let tries = 0; tries < 200; tries++) {
        const listed = await json<{ notifications: { id: string; status: string; template: string }[] }>(['notifications', 'list', '--template', 'order_confirmation', '--status', 'sent'])
        if (listed.notifications.length > 0) return listed.notifications
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      throw new Error('no order confirmation was sent')
    }
    const [confirmation] = await sent()
    const shown = await json<{ id: string; attempts: number; attempt_log: { succeeded: boolean; response: string }[] }>(['notifications', 'get', confirmation!.id])
    expect(shown.attempt_log[0]).toMatchObject({ succeeded: true, response: expect.stringMatching(/\.eml$/) })
    expect((await json<{ status: string }>(['notifications', 'resend', confirmation!.id])).status).toBe('pending')
    const off = await json<{ templates: { template: string; enabled: boolean }[] }>(['notifications', 'settings', 'update', '--no-order-shipped'])
    expect(off.templates.find((row) => row.template === 'order_shipped')!.enabled).toBe(false)
    await json(['notifications', 'settings', 'update', '--order-shipped'])
    const settings = await json<{ templates: { template: string; enabled: boolean }[] }>(['notifications', 'settings', 'get'])
    expect(settings.templates.every((row) => row.enabled)).toBe(true)
  })
})

describe('stock locations and inventory', () => {
  it('opens a location, stocks a product there, moves the units home, keeps some back, reads the log and deletes the location', async () => {
    const product = await json<{ id: string }>(['products', 'create', '--title', 'Crate', '--price', '5', '--currency', 'GBP', '--inventory-quantity', '4'])
    const listed = await json<{ stock_locations: { id: string; is_default: boolean }[] }>(['stock-locations', 'list'])
    const home = listed.stock_locations.find((location) => location.is_default)!
    const depot = await json<{ id: string }>(['stock-locations', 'create', '--name', 'CLI depot', '--priority', '5'])
    expect((await json<{ name: string }>(['stock-locations', 'update', depot.id, '--name', 'CLI Depot'])).name).toBe('CLI Depot')
    expect((await json<{ priority: number }>(['stock-locations', 'get', depot.id])).priority).toBe(5)

    const received = await json<{ levels: { on_hand: number }[] }>([
      'inventory', 'adjust', '--product-id', product.id, '--location-id', depot.id, '--quantity', '6', '--reason', 'received', '--note', 'PO 7',
    ])
    expect(received.levels[0]!.on_hand).toBe(6)
    const moved = await json<{ levels: { on_hand: number }[] }>([
      'inventory', 'transfer', '--product-id', product.id, '--from-location-id', depot.id, '--to-location-id', home.id, '--quantity', '6',
    ])
    expect(moved.levels.map((level) => level.on_hand)).toEqual([0, 10])
    const levels = await json<{ inventory_levels: { id: string; location_id: string }[] }>(['inventory', 'levels', 'list', '--product-id', product.id])
    const homeLevel = levels.inventory_levels.find((level) => level.location_id === home.id)!
    expect((await json<{ available: number }>(['inventory', 'levels', 'update', homeLevel.id, '--safety-stock', '2'])).available).toBe(8)
    expect((await json<{ inventory_quantity: number }>(['products', 'get', product.id])).inventory_quantity).toBe(8)
    const log = await json<{ inventory_movements: { reason: string }[] }>(['inventory', 'movements', 'list', '--product-id', product.id])
    expect(log.inventory_movements.map((movement) => movement.reason)).toEqual(['safety_stock', 'transfer', 'transfer', 'received', 'initial'])

    expect((await commerce(['stock-locations', 'delete', depot.id])).code).toBe(0)
    expect((await commerce(['stock-locations', 'get', depot.id])).code).toBe(1)
  })
})

describe('customer groups, price lists and base prices', () => {
  it('groups a customer, prices a product for the group and in other currencies, and takes it all down again', async () => {
    const member = await json<{ id: string }>(['customers', 'create', '--email', 'trade-buyer@example.com'])
    const group = await json<{ id: string; customer_count: number }>(['customer-groups', 'create', '--name', 'Wholesale', '--description', 'Trade'])
    expect((await json<{ description: string }>(['customer-groups', 'update', group.id, '--description', 'Trade accounts'])).description).toBe('Trade accounts')
    expect((await json<{ name: string }>(['customer-groups', 'get', group.id])).name).toBe('Wholesale')
    expect((await json<{ customer_groups: { id: string }[] }>(['customer-groups', 'list', '--q', 'whole'])).customer_groups.map((g) => g.id)).toEqual([group.id])
    expect((await json<{ customer_count: number }>(['customer-groups', 'customers', 'add', group.id, '--customer-ids', member.id])).customer_count).toBe(1)
    expect((await json<{ customers: { id: string }[] }>(['customer-groups', 'customers', 'list', group.id])).customers.map((c) => c.id)).toEqual([member.id])
    const unknown = await commerce(['customer-groups', 'customers', 'add', group.id, '--customer-ids', randomUUID()])
    expect(unknown.code).toBe(1)
    expect(errorText(unknown.stderr)).toContain("Field 'customer_ids[0]' names no customer (validation_error, HTTP 400)")

    const product = await json<{ id: string }>(['products', 'create', '--title', 'Kettle', '--price', '30', '--currency', 'GBP'])
    const list = await json<{ id: string; status: string; customer_group_ids: string[] }>([
      'price-lists', 'create', '--name', 'Trade prices', '--type', 'override', '--priority', '2', '--customer-group-ids', group.id,
    ])
    expect(list).toMatchObject({ status: 'active', customer_group_ids: [group.id] })
    await json(['price-lists', 'update', list.id, '--ends-at', '2099-01-01T00:00:00Z'])
    expect((await json<{ ends_at: string }>(['price-lists', 'get', list.id])).ends_at).toBe('2099-01-01T00:00:00.000Z')
    expect((await json<{ price_lists: { id: string }[] }>(['price-lists', 'list', '--type', 'override'])).price_lists.map((l) => l.id)).toEqual([list.id])
    const prices = [
      { product_id: product.id, currency: 'GBP', amount: 25 },
      { product_id: product.id, currency: 'EUR', amount: 29.5, min_quantity: 2 },
    ]
    const listed = await json<{ prices: { id: string; amount: number }[] }>(['price-lists', 'prices', 'upsert', list.id, '--prices', JSON.stringify(prices)])
    expect(listed.prices.map((price) => price.amount)).toEqual([25, 29.5])
    expect((await json<{ prices: { id: string }[] }>(['price-lists', 'prices', 'list', list.id, '--currency', 'EUR'])).prices.map((p) => p.id)).toEqual([listed.prices[1]!.id])
    const inexact = await commerce(['price-lists', 'prices', 'upsert', list.id, '--prices', JSON.stringify([{ product_id: product.id, currency: 'GBP', amount: 1.234 }])])
    expect(inexact.code).toBe(1)
    expect(errorText(inexact.stderr)).toContain("Field 'prices[0].amount' is invalid: GBP amounts have at most 2 decimal places")
    expect((await commerce(['price-lists', 'prices', 'delete', list.id, listed.prices[0]!.id])).stdout.trim()).toBe('Done.')

    const base = await json<{ prices: { id: string; currency: string; min_quantity: number }[] }>([
      'products', 'prices', 'upsert', product.id, '--prices', JSON.stringify([{ currency: 'EUR', amount: 34.9 }, { currency: 'GBP', amount: 27, min_quantity: 10 }]),
    ])
    expect(base.prices.map((price) => [price.currency, price.min_quantity])).toEqual([['EUR', 1], ['GBP', 10]])
    const own = await commerce(['products', 'prices', 'upsert', product.id, '--prices', JSON.stringify([{ currency: 'GBP', amount: 28 }])])
    expect(own.code).toBe(1)
    expect(errorText(own.stderr)).toContain("set the product's price instead")
    expect((await json<{ prices: unknown[] }>(['products', 'prices', 'list', product.id])).prices).toHaveLength(2)
    await commerce(['products', 'prices', 'delete', product.id, base.prices[0]!.id])
    expect((await json<{ prices: unknown[] }>(['products', 'prices', 'list', product.id])).prices).toHaveLength(1)

    expect((await commerce(['customer-groups', 'customers', 'remove', group.id, member.id])).code).toBe(0)
    expect((await json<{ customer_count: number }>(['customer-groups', 'get', group.id])).customer_count).toBe(0)
    expect((await commerce(['customer-groups', 'delete', group.id])).code).toBe(0)
    expect((await json<{ customer_group_ids: string[] }>(['price-lists', 'get', list.id])).customer_group_ids).toEqual([])
    expect((await commerce(['price-lists', 'delete', list.id])).code).toBe(0)
    expect((await commerce(['price-lists', 'get', list.id])).code).toBe(1)
  })
})

describe('promotions and campaigns', () => {
  it('makes a campaign with a budget and promotions in it, automatic and by code; reads, lists, changes and deletes them', async () => {
    const campaign = await json<{ id: string; budget: unknown }>([
      'campaigns', 'create', '--name', 'CLI winter sale', '--budget-type', 'spend', '--budget-limit', '250', '--budget-currency', 'GBP',
    ])
    expect(campaign.budget).toEqual({ type: 'spend', limit: 250, used: 0, currency: 'GBP' })
    await json(['campaigns', 'update', campaign.id, '--budget-limit', '300.5', '--description', 'Scarves and hats'])
    expect((await json<{ budget: { limit: number } }>(['campaigns', 'get', campaign.id])).budget.limit).toBe(300.5)

    const scarf = await json<{ id: string }>(['products', 'create', '--title', 'Scarf', '--price', '12', '--currency', 'GBP', '--inventory-quantity', '5'])
    const automatic = await json<{ id: string; code: null; campaign_id: string }>([
      'promotions', 'create', '--name', 'Scarf week', '--type', 'percentage', '--value', '15', '--currency', 'GBP',
      '--campaign-id', campaign.id, '--conditions', JSON.stringify({ product_ids: [scarf.id] }),
    ])
    expect(automatic).toMatchObject({ code: null, campaign_id: campaign.id })
    const bxgy = await json<{ id: string; code: string; buy_x_get_y: unknown }>([
      'promotions', 'create', '--code', 'cli-b2g1', '--type', 'buy_x_get_y', '--value', '100',
      '--buy-x-get-y-buy-quantity', '2', '--buy-x-get-y-get-quantity', '1',
    ])
    expect(bxgy).toMatchObject({ code: 'CLI-B2G1', buy_x_get_y: { buy_quantity: 2, get_quantity: 1, max_applications: null } })
    const changed = await json<{ stacking: string; target: unknown }>([
      'promotions', 'update', automatic.id, '--stacking', 'exclusive', '--target', JSON.stringify({ product_ids: [scarf.id] }),
    ])
    expect(changed).toMatchObject({ stacking: 'exclusive', target: { product_ids: [scarf.id], category_ids: [] } })
    expect((await json<{ name: string }>(['promotions', 'get', automatic.id])).name).toBe('Scarf week')
    const automaticOnes = await json<{ promotions: { id: string }[] }>(['promotions', 'list', '--automatic', '--campaign-id', campaign.id])
    expect(automaticOnes.promotions.map((promotion) => promotion.id)).toEqual([automatic.id])
    expect((await json<{ promotions: unknown[] }>(['promotions', 'list', '--type', 'buy_x_get_y'])).promotions).toHaveLength(1)
    expect(await json(['promotions', 'usages', 'list', automatic.id])).toEqual({ usages: [], meta: { page: 1, per_page: 20, total: 0, total_pages: 0 } })
    const unnamed = await commerce(['promotions', 'create', '--type', 'free_shipping'])
    expect(unnamed.code).toBe(1)
    expect(errorText(unnamed.stderr)).toContain("Field 'name' is required for automatic promotions (those without a code) (validation_error, HTTP 400)")
    const listed = await json<{ campaigns: { id: string; promotion_count: number }[] }>(['campaigns', 'list'])
    expect(listed.campaigns.find((listedCampaign) => listedCampaign.id === campaign.id)?.promotion_count).toBe(1)

    expect((await commerce(['promotions', 'delete', bxgy.id])).code).toBe(0)
    expect((await commerce(['promotions', 'get', bxgy.id])).code).toBe(1)
    expect((await commerce(['campaigns', 'delete', campaign.id])).code).toBe(0)
    expect((await json<{ campaign_id: string | null }>(['promotions', 'get', automatic.id])).campaign_id).toBeNull()
    expect((await commerce(['promotions', 'delete', automatic.id])).code).toBe(0)
  })
})

describe('coverage', () => {
  it('has run the command of every API operation', () => {
    expect(operationIds.filter((id) => !ran.has(id))).toEqual([])
    expect(operationIds.length).toBeGreaterThan(80)
  })
})

/** Calls `probe` until `done` says its answer is final (a background job's status). */
async function until<T>(probe: () => Promise<T>, done: (answer: T) => boolean): Promise<T> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const answer = await probe()
    if (done(answer) || Date.now() > deadline) return answer
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
