/**
 * The dashboard as staff use it: the built app served by the real API process at /admin/, the
 * worker beside it, a real PostgreSQL, and Debian's Chromium (installed by .ci/run when missing;
 * never a browser downloaded by Playwright). Each step is done through the page, by label and
 * role as a person (or a screen reader) finds things, and checked through the API. Screenshots of
 * the main screens go to test/screenshots/; every screen is checked with axe-core.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest'
import { createClient, type CommerceClient } from '@commerce/client'
import { createDb, createUser, type DatabaseHandle } from '@commerce/db'
import { createTestDatabase, type TestDatabase } from '@commerce/db/testing'
import { hashPassword } from '@commerce/domain'
// The processes as the other apps' tests start them: a test harness, not a runtime import.
import { startApi, startWorker, stopProcess } from '../../api/test/processes.js'

const CHROMIUM = '/usr/bin/chromium'
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
]
const BUILD = fileURLToPath(new URL('../dist/index.html', import.meta.url))
const SCREENSHOTS = fileURLToPath(new URL('./screenshots/', import.meta.url))
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

const ADMIN = { email: 'owner@example.com', password: 'a long and careful password' }
const ADDRESS = { first_name: 'Ada', last_name: 'Lovelace', line1: '12 St James Sq', city: 'London', postal_code: 'SW1Y 4JH', country: 'GB' as const }

let database: TestDatabase
let handle: DatabaseHandle
let dataDir: string
let api: Awaited<ReturnType<typeof startApi>>
let worker: ReturnType<typeof startWorker>
let baseUrl: string
let admin: CommerceClient
let browser: Browser
let context: BrowserContext
let page: Page
/** What the browser reported as errors (a script or style refused by the page's policy among them). */
const browserErrors: string[] = []
/** Every address the page asked for: none may be on another site. */
const requested = new Set<string>()

/** A receiver of webhook deliveries that fails until told otherwise. */
const receiver = {
  failing: true,
  received: [] as { headers: IncomingHttpHeaders; body: string }[],
  server: undefined as Server | undefined,
  url: '',
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium), as .ci/run does`)
  if (!existsSync(BUILD)) throw new Error(`${BUILD} is missing: run pnpm build`)
  mkdirSync(SCREENSHOTS, { recursive: true })
  database = await createTestDatabase(inject('adminUrl'), inject('template'))
  handle = createDb({ url: database.url, poolMax: 2 })
  await createUser(handle.db, { email: ADMIN.email, passwordHash: await hashPassword(ADMIN.password, 1024), role: 'admin' })
  dataDir = await mkdtemp(join(tmpdir(), 'admin-e2e-'))
  // localhost, as PUBLIC_URL defaults to: the page, its uploads and its images share one origin.
  // Authorize at checkout, capture by hand (or at the first fulfillment): the order screen's capture is used.
  api = await startApi(database.url, { COMMERCE_DATA_DIR: dataDir, PAYMENT_CAPTURE: 'manual' })
  baseUrl = api.baseUrl.replace('127.0.0.1', 'localhost')
  // Retries 200 ms apart: a delivery to a failing receiver is marked failed within a second.
  worker = startWorker(database.url, { WEBHOOK_RETRY_SCHEDULE: '200ms', COMMERCE_DATA_DIR: dataDir })
  admin = createClient({ baseUrl })
  await admin.signIn(ADMIN)

  receiver.server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk: Buffer) => (body += chunk))
    request.on('end', () => {
      receiver.received.push({ headers: request.headers, body })
      response.writeHead(receiver.failing ? 500 : 204).end(receiver.failing ? 'receiver is down' : undefined)
    })
  })
  await new Promise<void>((resolve) => receiver.server!.listen(0, '127.0.0.1', resolve))
  receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/hooks`

  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS })
  context = await browser.newContext({ viewport: { width: 1366, height: 900 } })
  page = await context.newPage()
  page.on('console', (message) => {
    if (message.type() === 'error') browserErrors.push(message.text())
  })
  page.on('pageerror', (error) => browserErrors.push(error.message))
  page.on('request', (request) => requested.add(request.url()))
  // window.confirm() before a destructive action: staff say yes.
  page.on('dialog', (dialog) => void dialog.accept())
})

afterAll(async () => {
  await browser?.close()
  await Promise.all([stopProcess(api?.process), stopProcess(worker)])
  await new Promise((resolve) => receiver.server?.close(resolve))
  await handle?.close()
  await database?.drop()
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

/** The serious and critical accessibility violations axe-core finds on the page as it is now. */
async function accessibilityViolations(): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's Content-Security-Policy does not restrict.
  await page.evaluate(AXE_SOURCE)
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: object): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }> } }).axe
    const { violations } = await axe.run(document, { resultTypes: ['violations'] })
    return violations.map((violation) => ({ id: violation.id, impact: violation.impact, help: violation.help, targets: violation.nodes.map((node) => node.target.join(' ')) }))
  })
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical').map((violation) => `${violation.id}: ${violation.help} (${violation.targets.join(', ')})`)
}

/** No serious or critical violation, each named with the elements at fault. */
async function expectAccessible(screen = '') {
  expect((await accessibilityViolations()).join('\n'), screen).toBe('')
}

/** A screen by the navigation, as a person goes there. */
async function open(link: string, heading: string | RegExp = link) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: link }).click()
  await page.getByRole('heading', { level: 1, name: heading }).waitFor()
}

async function screenshot(name: string) {
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true })
}

/** A PNG of a teapot-coloured square, as a camera would not make it. */
const teapotPicture = () => sharp({ create: { width: 64, height: 64, channels: 3, background: { r: 30, g: 110, b: 90 } } }).png().toBuffer()

describe('the admin dashboard in a browser', () => {
  test('sign-in refuses a wrong password with a message, then opens the orders', async () => {
    await page.goto(`${baseUrl}/admin/`)
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    await expectAccessible()
    await screenshot('sign-in')
    // By keyboard alone: the email field has focus, Tab moves on, Enter submits.
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('type'))).toBe('email')
    await page.keyboard.type(ADMIN.email)
    await page.keyboard.press('Tab')
    await page.keyboard.type('not the password')
    await page.keyboard.press('Enter')
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/password|credentials/i)

    await page.getByLabel('Password').fill(ADMIN.password)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { level: 1, name: 'Orders' }).waitFor()
    await expect.poll(() => page.getByRole('status', { name: /Live updates/ }).textContent()).toContain('Live')
  })

  test('creates a product, then gives it an image by upload', async () => {
    await open('Products')
    await page.getByRole('link', { name: 'New product' }).click()
    await page.getByLabel('Title', { exact: true }).fill('Enamel teapot')
    await page.getByLabel('Price', { exact: true }).fill('24.50')
    await page.getByLabel('Currency').fill('GBP')
    await page.getByRole('button', { name: 'Create product' }).click()
    await page.getByRole('heading', { level: 1, name: /Enamel teapot/ }).waitFor()
    const productId = page.url().split('/products/')[1]!
    const created = await admin.getProduct(productId)
    expect(created).toMatchObject({ title: 'Enamel teapot', price: 24.5, currency: 'GBP' })

    await page.getByLabel('Image file').setInputFiles({ name: 'teapot.png', mimeType: 'image/png', buffer: await teapotPicture() })
    await page.getByLabel('Alt text').fill('A green enamel teapot')
    await page.getByRole('button', { name: 'Upload image' }).click()
    const image = page.getByRole('img', { name: 'A green enamel teapot' })
    await image.waitFor()
    // The browser shows the stored file, not the one it sent.
    await expect.poll(() => image.evaluate((element: HTMLImageElement) => element.complete && element.naturalWidth)).toBeGreaterThan(0)
    const { images } = await admin.listProductImages(productId)
    expect(images).toMatchObject([{ alt: 'A green enamel teapot' }])

    await page.getByRole('button', { name: 'Add variant' }).click()
    const variantDialog = page.getByRole('dialog', { name: 'Add a variant' })
    await variantDialog.getByLabel('Title').fill('Blue')
    await variantDialog.getByLabel('Options').fill('colour=blue')
    await variantDialog.getByLabel('Initial stock').fill('5')
    await variantDialog.getByRole('button', { name: 'Add variant' }).click()
    await variantDialog.waitFor({ state: 'detached' })
    await page.getByRole('cell', { name: 'Blue', exact: true }).first().waitFor()
    const [variant] = (await admin.getProduct(productId)).variants
    expect(variant).toMatchObject({ title: 'Blue', options: { colour: 'blue' }, inventory_quantity: 5 })

    // Stock at a second location, counted there.
    const warehouse = await admin.createStockLocation({ name: 'North warehouse' })
    await page.reload()
    await page.getByRole('button', { name: 'Adjust at a location' }).click()
    const adjust = page.getByRole('dialog', { name: 'Adjust stock at a location' })
    await adjust.getByLabel('Location').selectOption({ label: 'North warehouse' })
    await adjust.getByLabel('Units').fill('7')
    await adjust.getByRole('button', { name: 'Adjust stock' }).click()
    await adjust.waitFor({ state: 'detached' })
    await page.getByRole('cell', { name: 'North warehouse' }).waitFor()
    const { inventory_levels: levels } = await admin.listInventoryLevels({ product_id: productId })
    expect(levels.find((level) => level.location_id === warehouse.id)).toMatchObject({ variant_id: variant!.id, on_hand: 7 })

    // A price for another market.
    await page.getByRole('button', { name: 'Add price' }).click()
    const priceDialog = page.getByRole('dialog', { name: 'Add a price' })
    await priceDialog.getByLabel('Currency').fill('EUR')
    await priceDialog.getByLabel('Amount').fill('27.90')
    await priceDialog.getByRole('button', { name: 'Add price' }).click()
    await priceDialog.waitFor({ state: 'detached' })
    await page.getByRole('cell', { name: '€27.90' }).waitFor()
    expect((await admin.listProductPrices(productId)).prices).toMatchObject([{ currency: 'EUR', amount: 27.9 }])
    await expectAccessible()
    await screenshot('product')

    await open('Products')
    await page.getByRole('link', { name: 'Enamel teapot' }).waitFor()
    await expectAccessible()
    await screenshot('products')
  })

  test('a product with options and an attribute, its variants generated, gathered by an automatic collection', async () => {
    // An attribute of products: one of a list, filterable.
    await open('Attributes')
    await expectAccessible('attributes, empty')
    await page.getByRole('button', { name: 'New attribute' }).click()
    const define = page.getByRole('dialog', { name: 'New attribute' })
    await define.getByLabel('Name').fill('Material')
    // The key is made from the name as it is typed.
    expect(await define.getByLabel('Key').inputValue()).toBe('material')
    await define.getByLabel('Type').selectOption({ label: 'One of a list' })
    await define.getByLabel('Choices').fill('Linen\nCotton\nWool')
    await define.getByLabel('Filterable').check()
    await expectAccessible('new attribute')
    await define.getByRole('button', { name: 'Create attribute' }).click()
    await define.waitFor({ state: 'detached' })
    await page.getByRole('row', { name: /Material/ }).getByText('Linen, Cotton, Wool').waitFor()
    expect((await admin.listAttributeDefinitions()).attributes).toMatchObject([
      { key: 'material', name: 'Material', owner: 'product', type: 'select', choices: ['Linen', 'Cotton', 'Wool'], filterable: true, public: true },
    ])
    await expectAccessible('attributes')
    await screenshot('attributes')

    // A product with every catalog field the details form has.
    await open('Products')
    await page.getByRole('link', { name: 'New product' }).click()
    await page.getByLabel('Title', { exact: true }).fill('Linen apron')
    await page.getByLabel('Price', { exact: true }).fill('18')
    await page.getByLabel('Compare-at price').fill('24.00')
    await page.getByLabel('Currency').fill('EUR')
    await page.getByLabel('Barcode').fill('4006381333931')
    await page.getByLabel('Product type').fill('Aprons')
    await page.getByLabel('Vendor').fill('Atelier Nord')
    const tags = page.getByLabel('Tags')
    await tags.fill('Kitchen')
    await tags.press('Enter')
    await tags.fill('linen, kitchen')
    await tags.press('Enter')
    // "kitchen" again in another case is the same tag: kept once, as first written.
    await page.getByRole('button', { name: 'Remove Kitchen' }).waitFor()
    expect(await page.getByRole('button', { name: /^Remove / }).count()).toBe(2)
    await page.getByLabel('Length').fill('80')
    await page.getByLabel('Width').fill('70,5')
    await page.getByLabel('Dimension unit').selectOption('cm')
    await page.getByLabel('HS code').fill('6211.43')
    await page.getByLabel('Country of origin').fill('pt')
    await page.getByLabel('SEO title').fill('Stonewashed linen apron')
    // A wrong barcode is refused before anything is sent, beside its field.
    await page.getByLabel('Barcode').fill('12345')
    await page.getByRole('button', { name: 'Create product' }).click()
    await page.getByText('Enter a GTIN: 8, 12, 13 or 14 digits').waitFor()
    await page.getByLabel('Barcode').fill('4006381333931')
    await page.getByRole('button', { name: 'Create product' }).click()
    await page.getByRole('heading', { level: 1, name: 'Linen apron' }).waitFor()
    const productId = page.url().split('/products/')[1]!
    expect(await admin.getProduct(productId)).toMatchObject({
      status: 'active',
      is_active: true,
      price: 18,
      compare_at_price: 24,
      on_sale: true,
      currency: 'EUR',
      barcode: '4006381333931',
      product_type: 'Aprons',
      vendor: 'Atelier Nord',
      tags: ['Kitchen', 'linen'],
      length: 80,
      width: 70.5,
      height: null,
      dimension_unit: 'cm',
      hs_code: '621143',
      country_of_origin: 'PT',
      seo_title: 'Stonewashed linen apron',
      seo_description: null,
    })

    // Options: Size (S, M, L) and Colour (Blue with a swatch, Sand), each added through the editor.
    const options = page.getByRole('region', { name: 'Options' })
    await options.getByRole('button', { name: 'Add option' }).click()
    const size = options.getByRole('group', { name: 'Option 1' })
    await size.getByLabel('Name').fill('Size')
    await size.getByLabel('Value 1', { exact: true }).fill('S')
    for (const [index, value] of ['M', 'L'].entries()) {
      await size.getByRole('button', { name: 'Add value' }).click()
      await size.getByLabel(`Value ${index + 2}`, { exact: true }).fill(value)
    }
    await options.getByRole('button', { name: 'Add option' }).click()
    const colour = options.getByRole('group', { name: 'Option 2' })
    await colour.getByLabel('Name').fill('Colour')
    await colour.getByLabel('Value 1', { exact: true }).fill('Blue')
    await colour.getByLabel('Swatch for value 1').check()
    await colour.getByLabel('Swatch colour of value 1').fill('#1e40af')
    await colour.getByRole('button', { name: 'Add value' }).click()
    await colour.getByLabel('Value 2', { exact: true }).fill('Sand')
    await expectAccessible('options editor')
    await options.getByRole('button', { name: 'Save options' }).click()
    await options.getByRole('status').filter({ hasText: 'Options saved' }).waitFor()
    const saved = await admin.getProduct(productId)
    expect(saved.options).toMatchObject([
      { name: 'Size', values: [{ value: 'S' }, { value: 'M' }, { value: 'L' }] },
      { name: 'Colour', values: [{ value: 'Blue', swatch_color: '#1e40af' }, { value: 'Sand', swatch_color: null }] },
    ])

    // Every combination made in one action, each with 3 units.
    const variants = page.getByRole('region', { name: 'Variants' })
    await variants.getByRole('button', { name: 'Generate variants' }).click()
    const generate = page.getByRole('dialog', { name: 'Generate variants' })
    await generate.getByText('6 of the 6 combinations').waitFor()
    await generate.getByLabel('Initial stock of each').fill('3')
    await expectAccessible('generate variants')
    await generate.getByRole('button', { name: 'Generate variants' }).click()
    await generate.waitFor({ state: 'detached' })
    await variants.getByRole('status').filter({ hasText: '6 variants made.' }).waitFor()
    await variants.getByRole('cell', { name: 'L / Sand', exact: true }).waitFor()
    const generated = (await admin.getProduct(productId)).variants
    expect(generated.map((variant) => variant.title)).toEqual(['S / Blue', 'S / Sand', 'M / Blue', 'M / Sand', 'L / Blue', 'L / Sand'])
    expect(generated.every((variant) => variant.inventory_quantity === 3)).toBe(true)

    // A rename is sent with the value's id: the variants that chose M now say Medium, and their titles (their values) follow.
    await options.getByRole('group', { name: 'Option 1' }).getByLabel('Value 2', { exact: true }).fill('Medium')
    await options.getByRole('button', { name: 'Save options' }).click()
    await variants.getByRole('cell', { name: 'Size=Medium, Colour=Blue', exact: true }).waitFor()
    const renamed = (await admin.getProduct(productId)).variants
    expect(renamed.map((variant) => variant.id)).toEqual(generated.map((variant) => variant.id))
    expect(renamed.filter((variant) => variant.options.Size === 'Medium').map((variant) => variant.title)).toEqual(['Medium / Blue', 'Medium / Sand'])

    // A value variants still choose cannot go: the API's 409 shows in the section, naming them by title.
    await options.getByRole('group', { name: 'Option 1' }).getByRole('button', { name: 'Remove value 3' }).click()
    await options.getByRole('button', { name: 'Save options' }).click()
    const refusal = options.getByRole('alert')
    await refusal.waitFor()
    expect(await refusal.textContent()).toMatch(/Could not save the options: .*'L' of option 'Size'.*“L \/ Blue”.*“L \/ Sand”/)
    expect((await admin.getProduct(productId)).options[0]!.values.map((value) => value.value)).toEqual(['S', 'Medium', 'L'])
    await expectAccessible('options refused')
    await page.reload()
    await page.getByRole('heading', { level: 1, name: 'Linen apron' }).waitFor()

    // The attribute, set with the input its definition asks for (one of its choices).
    const attributes = page.getByRole('region', { name: 'Attributes' })
    await expect.poll(() => attributes.getByLabel('Material').locator('option').allTextContents()).toEqual(['Not set', 'Linen', 'Cotton', 'Wool'])
    await attributes.getByLabel('Material').selectOption('Linen')
    await attributes.getByRole('button', { name: 'Save attributes' }).click()
    await attributes.getByRole('status').filter({ hasText: 'Attributes saved' }).waitFor()
    expect((await admin.getProduct(productId)).attributes).toEqual({ material: 'Linen' })
    await expectAccessible('product with options')
    await screenshot('product-options')

    // An automatic collection: linen products tagged kitchen. Its preview follows the rules as they change.
    await open('Collections')
    await page.getByRole('link', { name: 'New collection' }).click()
    await page.getByRole('heading', { level: 1, name: 'New collection' }).waitFor()
    await page.getByLabel('Title', { exact: true }).fill('Linen for the kitchen')
    await page.getByLabel('Published').check()
    const rules = page.getByRole('region', { name: 'Rules' })
    await rules.getByRole('button', { name: 'Add rule' }).click()
    const first = rules.getByRole('group', { name: 'Rule 1' })
    await first.getByLabel('Field').selectOption({ label: 'Attribute' })
    await first.getByLabel('Attribute').selectOption({ label: 'Material' })
    await first.getByLabel('Value').selectOption('Linen')
    const preview = rules.getByRole('region', { name: 'Preview' })
    await preview.getByRole('status').filter({ hasText: '1 product matches now.' }).waitFor()
    await rules.getByRole('button', { name: 'Add rule' }).click()
    const second = rules.getByRole('group', { name: 'Rule 2' })
    await second.getByLabel('Value').fill('garden')
    await preview.getByRole('status').filter({ hasText: 'No product matches these rules now.' }).waitFor()
    await second.getByLabel('Value').fill('KITCHEN')
    await preview.getByRole('status').filter({ hasText: '1 product matches now.' }).waitFor()
    expect(await preview.getByRole('link').allTextContents()).toEqual(['Linen apron'])
    await expectAccessible('new collection')
    await page.getByRole('button', { name: 'Create collection' }).click()
    await page.getByRole('heading', { level: 1, name: 'Linen for the kitchen' }).waitFor()
    const collectionId = page.url().split('/collections/')[1]!
    const collection = await admin.getCollection(collectionId)
    expect(collection).toMatchObject({
      kind: 'automatic',
      match: 'all',
      published: true,
      product_count: 1,
      rules: [
        { field: 'attribute', operator: 'equals', name: 'material', value: 'Linen' },
        { field: 'tag', operator: 'equals', value: 'KITCHEN' },
      ],
    })
    expect((await admin.listProducts({ collection: collection.slug })).products.map((product) => product.title)).toEqual(['Linen apron'])
    await screenshot('collection')
    await open('Collections')
    const row = page.getByRole('row', { name: /Linen for the kitchen/ })
    expect(await row.getByRole('cell').nth(2).textContent()).toBe('1')
    await row.getByText('Published').waitFor()
    await expectAccessible('collections')
    await screenshot('collections')
    await row.getByRole('button', { name: 'Unpublish “Linen for the kitchen”' }).click()
    await page.getByRole('status').filter({ hasText: '“Linen for the kitchen” unpublished.' }).waitFor()
    await row.getByText('Unpublished').waitFor()
    expect((await admin.getCollection(collectionId)).published).toBe(false)

    // The products list filters by the API's parameters and sorts as asked.
    await open('Products')
    await page.getByLabel('Vendor').selectOption('atelier nord')
    await page.getByRole('link', { name: 'Linen apron' }).waitFor()
    await page.getByRole('link', { name: 'Enamel teapot' }).waitFor({ state: 'detached' })
    await page.getByLabel('Vendor').selectOption('')
    await page.getByLabel('Sort').selectOption({ label: 'Title, A to Z' })
    await expect.poll(() => page.getByRole('table').getByRole('link').allTextContents()).toEqual(['Enamel teapot', 'Linen apron'])
    await page.getByLabel('Sort').selectOption({ label: 'Best selling' })
    await page.getByLabel('Tag').selectOption('kitchen')
    await expect.poll(() => page.getByRole('table').getByRole('link').allTextContents()).toEqual(['Linen apron'])
    await expectAccessible('products, filtered')
  })

  test('a product scheduled for later: hidden until its moment, shown as scheduled', async () => {
    const product = await admin.createProduct({ title: 'Winter throw', price: 59, currency: 'EUR' })
    await page.goto(`${baseUrl}/admin/#/products/${product.id}`)
    await page.getByRole('heading', { level: 1, name: 'Winter throw' }).waitFor()
    await page.getByLabel('Publish at').fill('2030-01-02T09:00')
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Saved' }).first().waitFor()
    await page.getByText(/^Scheduled /).waitFor()
    // The moment typed is the viewer's local time, sent as the UTC instant.
    const moment = await page.evaluate(() => new Date('2030-01-02T09:00').toISOString())
    expect(await admin.getProduct(product.id)).toMatchObject({ status: 'active', is_active: false, published_at: moment })
    expect((await admin.listProducts({ search: 'Winter throw' })).products).toEqual([])
    // A draft is the staff's only, whenever its moment.
    await page.getByLabel('Status').selectOption('draft')
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByText('draft', { exact: true }).waitFor()
    expect(await admin.getProduct(product.id)).toMatchObject({ status: 'draft', is_active: false })
  })

  test('a manual collection: products found, placed in order, one removed, then the collection deleted', async () => {
    await open('Collections')
    await page.getByRole('link', { name: 'New collection' }).click()
    await page.getByLabel('Title', { exact: true }).fill('Staff picks')
    await page.getByLabel('Kind').selectOption({ label: 'Manual: you pick the products' })
    const products = page.getByRole('region', { name: 'Products' })
    for (const [words, title] of [
      ['apron', 'Linen apron'],
      ['teapot', 'Enamel teapot'],
    ] as const) {
      await products.getByLabel('Find products').fill(words)
      await products.getByRole('button', { name: `Add “${title}”` }).click()
    }
    await products.getByRole('button', { name: 'Move “Enamel teapot” up' }).click()
    const placed = products.getByRole('list', { name: 'Products in the collection' }).getByRole('link')
    expect(await placed.allTextContents()).toEqual(['Enamel teapot', 'Linen apron'])
    await expectAccessible('manual collection')
    await page.getByRole('button', { name: 'Create collection' }).click()
    await page.getByRole('heading', { level: 1, name: 'Staff picks' }).waitFor()
    const id = page.url().split('/collections/')[1]!
    const created = await admin.getCollection(id)
    expect(created).toMatchObject({ kind: 'manual', sort: 'manual', product_count: 2, rules: [] })
    expect((await admin.listProducts({ collection: created.slug, include_inactive: true })).products.map((product) => product.title)).toEqual(['Enamel teapot', 'Linen apron'])

    // The edit screen starts from the collection's own order.
    await expect.poll(() => placed.allTextContents()).toEqual(['Enamel teapot', 'Linen apron'])
    await products.getByRole('button', { name: 'Remove “Enamel teapot”' }).click()
    await page.getByRole('button', { name: 'Save collection' }).click()
    await page.getByRole('status').filter({ hasText: 'Saved: 1 product in it now.' }).waitFor()
    expect((await admin.listProducts({ collection: created.slug, include_inactive: true })).products.map((product) => product.title)).toEqual(['Linen apron'])

    await page.getByRole('button', { name: 'Delete' }).click()
    await page.getByRole('heading', { level: 1, name: 'Collections' }).waitFor()
    await expect(admin.getCollection(id)).rejects.toMatchObject({ status: 404 })
  })

  test('an order placed through the API appears live; staff fulfil it, then refund it', async () => {
    const product = await admin.createProduct({ title: 'Cast-iron kettle', price: 39.99, currency: 'GBP', inventory_quantity: 10 })
    await open('Orders')
    // Marked, to show that what follows arrives without a reload.
    await page.evaluate(() => ((window as unknown as { unreloaded: boolean }).unreloaded = true))

    const shopper = createClient({ baseUrl })
    const cart = await shopper.createCart({ currency: 'GBP' })
    await shopper.addCartItem(cart.id, { product_id: product.id, quantity: 2 })
    const checkout = await shopper.createCheckout({ cart_id: cart.id, email: 'ada@example.com', shipping_address: ADDRESS })
    const order = await shopper.completeCheckout(checkout.id, { payment: { method: 'card', token: 'tok_visa' } })
    if (!('order_number' in order)) return expect.fail('the test provider asked for an action')

    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: order.order_number }) })
    await row.waitFor({ timeout: 10_000 })
    expect(await page.evaluate(() => (window as unknown as { unreloaded?: boolean }).unreloaded)).toBe(true)
    expect(await row.textContent()).toContain('£79.98')
    await expectAccessible()
    await screenshot('orders')

    await open('Activity')
    await page.getByRole('log').getByRole('link', { name: order.order_number }).first().waitFor()
    expect(await page.getByRole('log').textContent()).toContain('order.created')
    await expectAccessible()
    await screenshot('activity')

    await open('Orders')
    await page.getByRole('link', { name: order.order_number }).click()
    await page.getByRole('heading', { level: 1, name: `Order ${order.order_number}` }).waitFor()
    await expectAccessible()

    // Authorized at checkout: staff capture it whole.
    expect(order.payment_status).toBe('authorized')
    await page.getByRole('button', { name: 'Capture', exact: true }).click()
    const capture = page.getByRole('dialog', { name: 'Capture the payment' })
    expect(await capture.getByLabel('Amount (GBP)').inputValue()).toBe('79.98')
    await capture.getByRole('button', { name: 'Capture', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Payment captured.' }).waitFor()
    expect(await admin.getOrder(order.id)).toMatchObject({ status: 'paid', payment_status: 'paid', amount_paid: 79.98 })

    // Fulfil: the dialog opens by keyboard, Escape closes it, and then it is used.
    await page.getByRole('button', { name: 'Fulfil', exact: true }).focus()
    await page.keyboard.press('Enter')
    const fulfil = page.getByRole('dialog', { name: `Fulfil order ${order.order_number}` })
    await fulfil.waitFor()
    await page.keyboard.press('Escape')
    await fulfil.waitFor({ state: 'detached' })
    await page.getByRole('button', { name: 'Fulfil', exact: true }).click()
    await expectAccessible()
    await fulfil.getByLabel('Carrier').fill('Royal Mail')
    await fulfil.getByLabel('Tracking number').fill('RM123456789GB')
    await fulfil.getByRole('button', { name: 'Create fulfillment' }).click()
    await page.getByRole('status').filter({ hasText: 'Fulfillment created.' }).waitFor()
    await page.getByRole('cell', { name: 'RM123456789GB' }).waitFor()
    const fulfilled = await admin.getOrder(order.id)
    expect(fulfilled).toMatchObject({ status: 'shipped', fulfillment_status: 'fulfilled', fulfillments: [{ carrier: 'Royal Mail', tracking_number: 'RM123456789GB' }] })

    // Refund part of it: the amount is read exactly as typed.
    await page.getByRole('button', { name: 'Refund', exact: true }).click()
    const refund = page.getByRole('dialog', { name: 'Refund the payment' })
    await refund.getByLabel('Amount (GBP)').fill('10.015')
    await refund.getByRole('button', { name: 'Refund', exact: true }).click()
    await refund.getByText('GBP has 2 decimal places at most').waitFor()
    await refund.getByLabel('Amount (GBP)').fill('10.01')
    await refund.getByLabel('Reason').fill('Dented lid')
    await refund.getByRole('button', { name: 'Refund', exact: true }).click()
    await page.getByRole('status').filter({ hasText: 'Refund made.' }).waitFor()
    await page.getByRole('cell', { name: 'Dented lid' }).waitFor()
    const refunded = await admin.getOrder(order.id)
    expect(refunded.amount_refunded).toBe(10.01)
    expect(refunded.payment_status).toBe('partially_refunded')
    await screenshot('order')

    // Another order, cancelled before it is paid: its authorization is voided with it.
    const second = await shopper.createCart({ currency: 'GBP' })
    await shopper.addCartItem(second.id, { product_id: product.id, quantity: 1 })
    const secondCheckout = await shopper.createCheckout({ cart_id: second.id, email: 'ada@example.com', shipping_address: ADDRESS })
    const unwanted = await shopper.completeCheckout(secondCheckout.id, { payment: { method: 'card', token: 'tok_visa' } })
    if (!('order_number' in unwanted)) return expect.fail('the test provider asked for an action')
    await page.goto(`${baseUrl}/admin/#/orders/${unwanted.id}`)
    await page.getByRole('button', { name: 'Cancel order' }).click()
    await page.getByRole('status').filter({ hasText: 'Order cancelled.' }).waitFor()
    const cancelled = await admin.getOrder(unwanted.id)
    expect(cancelled.status).toBe('cancelled')
    expect(cancelled.payments.map((payment) => payment.status)).toEqual(['canceled'])
    expect((await admin.getProduct(product.id)).inventory_quantity).toBe(8)
  })

  test('a failed webhook delivery is sent again from the delivery log', async () => {
    await open('Webhooks')
    await page.getByRole('button', { name: 'New webhook' }).click()
    const dialog = page.getByRole('dialog', { name: 'New webhook' })
    await dialog.getByLabel('Endpoint URL').fill(receiver.url)
    await dialog.getByLabel('Description').fill('Warehouse system')
    await dialog.getByRole('checkbox', { name: /Every event/ }).uncheck()
    await dialog.getByRole('checkbox', { name: 'product.updated' }).check()
    await dialog.getByRole('button', { name: 'Create webhook' }).click()
    await page.getByRole('status').filter({ hasText: 'signing secret' }).waitFor()

    // An event the subscription wants: the receiver refuses it on every attempt.
    const { products } = await admin.listProducts({ search: 'Enamel teapot' })
    await admin.updateProduct(products[0]!.id, { description: 'Holds 1.2 litres' })
    await page.getByRole('link', { name: receiver.url }).click()
    await page.getByRole('heading', { level: 1, name: `Webhook ${receiver.url}` }).waitFor()
    const delivery = page.getByRole('row', { name: 'Delivery of product.updated' })
    await delivery.getByText('failed', { exact: true }).waitFor({ timeout: 20_000 })
    await page.getByText(/failing \(\d+ in a row\)/).first().waitFor()
    expect(receiver.received.length).toBeGreaterThanOrEqual(2)
    await expectAccessible()
    await screenshot('webhook-failed')

    receiver.failing = false
    await delivery.getByRole('button', { name: 'Redeliver' }).click()
    await page.getByRole('status').filter({ hasText: 'queued again' }).waitFor()
    await delivery.getByText('succeeded', { exact: true }).waitFor({ timeout: 20_000 })
    const last = receiver.received.at(-1)!
    expect(JSON.parse(last.body)).toMatchObject({ event: 'product.updated', data: { description: 'Holds 1.2 litres' } })
    expect(last.headers['webhook-signature']).toMatch(/^v1,/)
    await page.getByText('healthy').first().waitFor()
    await screenshot('webhook')

    // A replay of the last day's succeeded deliveries: counted first, then sent again.
    const before = receiver.received.length
    await page.getByRole('button', { name: 'Replay events' }).click()
    const replay = page.getByRole('dialog', { name: 'Replay events' })
    await replay.getByRole('checkbox', { name: 'Failed' }).uncheck()
    await replay.getByRole('checkbox', { name: 'Succeeded' }).check()
    await replay.getByRole('button', { name: 'Count' }).click()
    await replay.getByRole('status').filter({ hasText: '1 delivery matches.' }).waitFor()
    expect(receiver.received.length).toBe(before)
    await replay.getByRole('button', { name: 'Replay' }).click()
    await page.getByRole('status').filter({ hasText: '1 delivery queued' }).waitFor()
    await expect.poll(() => receiver.received.length, { timeout: 10_000 }).toBe(before + 1)
    expect(JSON.parse(receiver.received.at(-1)!.body)).toMatchObject({ event: 'product.updated' })
  })

  test('a customer found by search, with their address, and edited', async () => {
    const customer = await admin.createCustomer({ email: 'grace@example.com', first_name: 'Grace', last_name: 'Hopper' })
    await admin.createCustomerAddress(customer.id, { line1: '1 Navy Way', city: 'Arlington', postal_code: '22202', country: 'US' })
    await open('Customers')
    await page.getByLabel('Search customers').fill('grace')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.getByRole('link', { name: 'grace@example.com' }).click()
    await page.getByRole('heading', { level: 1, name: 'Grace Hopper' }).waitFor()
    await page.getByText('1 Navy Way').waitFor()
    await page.getByRole('button', { name: 'Edit customer' }).click()
    const dialog = page.getByRole('dialog', { name: 'Edit customer' })
    await dialog.getByLabel('Phone').fill('+1 703 555 0100')
    await dialog.getByRole('button', { name: 'Save' }).click()
    await dialog.waitFor({ state: 'detached' })
    expect((await admin.getCustomer(customer.id)).phone).toBe('+1 703 555 0100')
    await expectAccessible()
    await screenshot('customer')
  })

  test('a coupon made on the promotions screen', async () => {
    await open('Promotions')
    await page.getByRole('button', { name: 'New coupon' }).click()
    const dialog = page.getByRole('dialog', { name: 'New coupon' })
    await dialog.getByLabel('Code').fill('welcome10')
    await dialog.getByLabel('Value (percent off)').fill('10')
    await dialog.getByLabel('Usage limit').fill('100')
    await dialog.getByRole('button', { name: 'Create' }).click()
    await dialog.waitFor({ state: 'detached' })
    await page.getByRole('cell', { name: 'WELCOME10' }).first().waitFor()
    expect((await admin.listCoupons()).coupons).toMatchObject([{ code: 'WELCOME10', type: 'percentage', value: 10, usage_limit: 100, is_active: true }])
  })

  test('the other screens render with no serious accessibility violation', async () => {
    for (const [link, heading] of [
      ['Customers', 'Customers'],
      ['Promotions', 'Promotions'],
      ['Settings', 'Settings'],
      ['Webhooks', 'Webhooks'],
    ] as const) {
      await open(link, heading)
      await page.waitForLoadState('networkidle')
      await expectAccessible(link)
      await screenshot(link.toLowerCase())
    }
    // API keys are the CLI's: the settings say so, with the commands.
    await open('Settings')
    await page.getByText(/commerce api-keys create/).waitFor()
  })

  test('at a tablet’s width the navigation folds above the content, and still passes', async () => {
    await page.setViewportSize({ width: 820, height: 1180 })
    await open('Orders')
    const navigation = await page.getByRole('navigation', { name: 'Main' }).boundingBox()
    const title = await page.getByRole('heading', { level: 1, name: 'Orders' }).boundingBox()
    expect(navigation!.y + navigation!.height).toBeLessThanOrEqual(title!.y)
    // …right above it: the navigation is as tall as its links, not a share of the screen.
    expect(title!.y - (navigation!.y + navigation!.height)).toBeLessThan(60)
    // Nothing wider than the screen but the tables, which scroll inside their own box.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(820)
    await expectAccessible()
    await screenshot('orders-tablet')
  })

  test('the page asked no other site for anything, and nothing was refused by its policy', () => {
    const foreign = [...requested].filter((address) => !address.startsWith(`${baseUrl}/`) && !address.startsWith(`${baseUrl.replace('http', 'ws')}/`) && !address.startsWith('data:'))
    expect(foreign).toEqual([])
    // The refusals the tests provoke: a wrong password (401), options still in use (409).
    expect(browserErrors.filter((error) => !/status of 40[019]/.test(error))).toEqual([])
  })
})
