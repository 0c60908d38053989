/**
 * The reference page (/docs) as a person sees it: served by a real server, rendered by a real
 * browser (Debian's Chromium, which .ci/run installs when it is missing; never a browser
 * downloaded by Playwright).
 */
import { existsSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest'
import { createTestContext, type TestContext } from './helpers.js'

const CHROMIUM = '/usr/bin/chromium'
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
]

let ctx: TestContext
let browser: Browser
let page: Page
let docsUrl: string
/** What the browser reported as errors: console errors (a blocked inline style among them) and uncaught exceptions. */
const errors: string[] = []

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium), as .ci/run does`)
  ctx = await createTestContext()
  await ctx.app.listen({ host: '127.0.0.1', port: 0 })
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS })
  // Past a size the document has now, the page renders operations as they scroll into view (and
  // drops those scrolled past); a window as tall as the whole page shows every one at once.
  page = await browser.newPage({ viewport: { width: 1280, height: 30_000 } })
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text())
  })
  page.on('pageerror', (error) => errors.push(error.message))
  docsUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}/docs`
  await page.goto(docsUrl, { waitUntil: 'networkidle' })
  await page.locator('.opblock').first().waitFor()
})
afterAll(async () => {
  await browser?.close()
  await ctx?.close()
})

/** The operation's block on the page, by method and path. */
const operation = (method: string, path: string) =>
  page.locator(`.opblock-${method}`).filter({ has: page.locator('.opblock-summary-path', { hasText: new RegExp(`^${path.replace(/[{}]/g, '\\$&')}$`) }) })

describe('the reference page in a browser', () => {
  test('renders the API with no console error: no inline style or script refused by its Content-Security-Policy', async () => {
    await expect.poll(() => page.locator('.opblock').count()).toBeGreaterThan(50)
    // Open an operation and the Authorize dialog too: what they render must pass the policy as well.
    await operation('get', '/api/v1/products').locator('.opblock-summary-control').click()
    await operation('get', '/api/v1/products').locator('.opblock-body').waitFor()
    await page.locator('.auth-wrapper .authorize').click()
    await page.locator('.modal-ux').waitFor()
    await page.locator('.modal-ux .close-modal').click()
    expect(errors).toEqual([])
  })

  test('shows the list description whole, its <items> placeholder included', async () => {
    const description = await page.locator('.info .description').innerText()
    expect(description).toContain('Lists answer { <items>: [...], meta: { page, per_page, total, total_pages } }')
    expect(description).not.toContain('{ , meta')
  })

  test('the padlock is open on an operation anyone may call and closed on one that needs a credential', async () => {
    const padlockOf = (method: string, path: string) => operation(method, path).locator('.authorization__btn')
    for (const [method, path, padlock] of [
      ['get', '/api/v1/products', 'unlocked'],
      ['post', '/api/v1/auth/login', 'unlocked'],
      ['post', '/api/v1/carts', 'unlocked'],
      ['post', '/api/v1/products', 'locked'],
      ['get', '/api/v1/auth/me', 'locked'],
      ['get', '/api/v1/orders', 'locked'],
    ] as const) {
      await expect.poll(() => padlockOf(method, path).getAttribute('aria-label'), { message: `${method} ${path}` }).toBe(`authorization button ${padlock}`)
      expect(await padlockOf(method, path).locator('svg').getAttribute('class'), `${method} ${path}`).toBe(padlock)
    }
  })
})

// Each test loads the page (a document of some megabytes) again.
describe('finding an operation among 200 in a window of ordinary size', { timeout: 120_000 }, () => {
  const VIEWPORT = { width: 1280, height: 900 }
  let small: Page
  // A new page for each test: a filter typed or an operation opened stays on a page.
  beforeEach(async () => {
    small = await browser.newPage({ viewport: VIEWPORT })
  })
  afterEach(() => small?.close())

  /** An operation's block, by its link's tag and operationId (`#/<tag>/<operationId>`). */
  const block = (tag: string, operationId: string) => small.locator(`#operations-${tag}-${operationId}`)
  /** Open (expanded) and at least partly inside the window, not only somewhere in the page. */
  const openInView = async (tag: string, operationId: string) => {
    const box = await block(tag, operationId).boundingBox()
    const open = /\bis-open\b/.test((await block(tag, operationId).getAttribute('class')) ?? '')
    return open && box !== null && box.y < VIEWPORT.height && box.y + box.height > 0
  }
  /** Method and path of the operations shown (not the webhooks section below them, which the filter leaves alone). */
  const shownOperations = () =>
    small
      .locator('.opblock')
      .evaluateAll((blocks) =>
        blocks
          .filter((block) => !block.closest('.webhooks'))
          .map((block) => `${block.querySelector('.opblock-summary-method')?.textContent} ${block.querySelector('[data-path]')?.getAttribute('data-path')}`),
      )

  test('a link to an operation opens it, near the end of 200 operations, on arrival and when followed on the open page', async () => {
    await small.goto(`${docsUrl}#/webhooks/rotateWebhookSecret`, { waitUntil: 'networkidle' })
    await expect.poll(() => openInView('webhooks', 'rotateWebhookSecret'), { timeout: 30_000 }).toBe(true)
    // The same page, another operation: only the fragment changes, the page is not loaded again.
    await small.goto(`${docsUrl}#/system/getReadiness`)
    await expect.poll(() => openInView('system', 'getReadiness'), { timeout: 30_000 }).toBe(true)
    expect(await small.locator('.opblock-summary-path').filter({ hasText: /^\/ready$/ }).isVisible()).toBe(true)
  })

  test('the filter box keeps the operations whose tag, method, path, operation id or summary hold every word typed', async () => {
    await small.goto(docsUrl, { waitUntil: 'networkidle' })
    const filter = small.locator('input.operation-filter-input')
    // "refund" is in the paths of the refund operations, and only in the summary of an order's cancel.
    // (Unfiltered, the page renders the first operations only: those of auth.)
    await filter.fill('refund')
    await expect.poll(shownOperations).toEqual(expect.arrayContaining(['POST /api/v1/payments/{id}/refunds', 'POST /api/v1/orders/{id}/cancel']))
    expect(await shownOperations()).not.toContain('POST /api/v1/auth/login')
    expect((await shownOperations()).length).toBeLessThan(15)
    // Words, not a phrase: the operation itself, and the deprecated one whose summary names it.
    await filter.fill('post refunds')
    await expect.poll(shownOperations).toEqual(['POST /api/v1/payments/{id}/refund', 'POST /api/v1/payments/{id}/refunds'])
    await filter.fill('listProducts')
    await expect.poll(shownOperations).toEqual(['GET /api/v1/products'])
  })

  test('"Try it out" on GET /products leaves locale empty: the first call a newcomer makes asks for no translation', async () => {
    await small.goto(`${docsUrl}#/products/listProducts`, { waitUntil: 'networkidle' })
    const operation = block('products', 'listProducts')
    await operation.locator('button.try-out__btn').click()
    await expect.poll(() => operation.locator('tr[data-param-name="per_page"] input').inputValue()).toBe('20')
    expect(await operation.locator('tr[data-param-name="locale"] input').inputValue()).toBe('')
    await operation.locator('button.execute').click()
    const requestUrl = await operation.locator('.request-url pre').innerText()
    expect(requestUrl).toContain('/api/v1/products?')
    expect(requestUrl).not.toContain('locale')
  })
})
