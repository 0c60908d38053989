/**
 * The reference page (/docs) as a person sees it: served by a real server, rendered by a real
 * browser (Debian's Chromium, which .ci/run installs when it is missing; never a browser
 * downloaded by Playwright).
 */
import { existsSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
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
  await page.goto(`http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}/docs`, { waitUntil: 'networkidle' })
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
