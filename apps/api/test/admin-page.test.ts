/**
 * The admin dashboard's files at /admin/ (a stand-in build: index.html and a hashed asset), with
 * the page's own Content-Security-Policy and caching. The dashboard itself is tested in a browser
 * by apps/admin.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { brotliCompressSync, brotliDecompressSync } from 'node:zlib'
import { join } from 'node:path'
import { afterAll, describe, expect } from 'vitest'
import { diskStorage } from '@commerce/storage'
import { createTestContext, test } from './helpers.js'

const BUILD = await mkdtemp(join(tmpdir(), 'admin-build-'))
await mkdir(join(BUILD, 'assets'))
await writeFile(join(BUILD, 'index.html'), '<!doctype html><title>Commerce admin</title><script type="module" src="./assets/index-abc123.js"></script>')
const SCRIPT = 'console.log("dashboard")'
await writeFile(join(BUILD, 'assets/index-abc123.js'), SCRIPT)
await writeFile(join(BUILD, 'assets/index-abc123.js.br'), brotliCompressSync(SCRIPT))
await writeFile(join(BUILD, 'assets/.env'), 'SECRET=1')
afterAll(() => rm(BUILD, { recursive: true, force: true }))

test.scoped({
  contextOptions: {
    config: { adminDir: BUILD, publicUrl: 'https://api.shop.example', storage: diskStorage({ root: join(BUILD, 'files'), publicUrl: 'https://cdn.shop.example/files' }) },
  },
})

describe('the dashboard at /admin/', () => {
  test('/admin redirects to /admin/, whose index.html is asked again each time (no-cache)', async ({ ctx }) => {
    const redirect = await ctx.request({ url: '/admin' })
    expect(redirect.statusCode).toBe(308)
    expect(redirect.headers.location).toBe('/admin/')
    const page = await ctx.request({ url: '/admin/' })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toMatch(/^text\/html/)
    expect(page.body).toContain('Commerce admin')
    expect(page.headers['cache-control']).toBe('no-cache')
    // A query string stays on the page (the routes are in the fragment).
    expect((await ctx.request({ url: '/admin/?from=email' })).statusCode).toBe(200)
    expect((await ctx.request({ url: '/admin?from=email' })).statusCode).toBe(308)
  })

  test('a hashed asset is cached for a year as immutable', async ({ ctx }) => {
    const asset = await ctx.request({ url: '/admin/assets/index-abc123.js' })
    expect(asset.statusCode).toBe(200)
    expect(asset.headers['content-type']).toMatch(/javascript/)
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable')
  })

  test('the build’s Brotli copy goes to a browser that takes it; the plain file to one that does not', async ({ ctx }) => {
    const compressed = await ctx.request({ url: '/admin/assets/index-abc123.js', headers: { 'accept-encoding': 'gzip, deflate, br' } })
    expect(compressed.headers['content-encoding']).toBe('br')
    expect(compressed.headers.vary).toMatch(/accept-encoding/i)
    expect(brotliDecompressSync(compressed.rawPayload).toString()).toBe(SCRIPT)
    const plain = await ctx.request({ url: '/admin/assets/index-abc123.js', headers: { 'accept-encoding': 'identity' } })
    expect(plain.headers['content-encoding']).toBeUndefined()
    expect(plain.body).toBe(SCRIPT)
  })

  test('the page may run its own scripts and styles only, and talk to this API and the file storage', async ({ ctx }) => {
    const policy = String((await ctx.request({ url: '/admin/' })).headers['content-security-policy'])
    expect(policy).toContain("script-src 'self'")
    expect(policy).toContain("style-src 'self'")
    expect(policy).toContain("default-src 'none'")
    expect(policy).toContain("frame-ancestors 'none'")
    expect(policy).not.toContain('unsafe-inline')
    expect(policy).toMatch(/connect-src 'self' https:\/\/cdn\.shop\.example https:\/\/api\.shop\.example(;|$)/)
    expect(policy).toMatch(/img-src 'self' data: blob: https:\/\/cdn\.shop\.example https:\/\/api\.shop\.example(;|$)/)
    // The API's other answers keep the JSON API's policy.
    expect((await ctx.request({ url: '/health' })).headers['content-security-policy']).toContain("default-src 'none'")
  })

  test('nothing outside the build, no dotfile and no listing is served', async ({ ctx }) => {
    expect((await ctx.request({ url: '/admin/assets/.env' })).statusCode).toBe(404)
    expect((await ctx.request({ url: '/admin/assets/../index.html' })).statusCode).toBe(404)
    expect((await ctx.request({ url: '/admin/assets/%2e%2e/%2e%2e/package.json' })).statusCode).toBe(404)
    expect((await ctx.request({ url: '/admin/assets/' })).statusCode).toBe(404)
    const missing = await ctx.request({ url: '/admin/assets/gone.js' })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().error.code).toBe('not_found')
  })

  test('without a build there is no /admin', async () => {
    const ctx = await createTestContext()
    try {
      expect((await ctx.request({ url: '/admin/' })).statusCode).toBe(404)
    } finally {
      await ctx.close()
    }
  })
})
