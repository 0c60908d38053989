/**
 * Image uploads against real storage: files on disk served by the API, and an S3-compatible
 * server (s3rver; it does not check signatures) reached through the SDK and presigned URLs.
 * Images are made by sharp, sent over a real socket as multipart/form-data or by PUT.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, rm } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import S3rver from 's3rver'
import sharp from 'sharp'
import { afterAll, beforeAll, describe, expect } from 'vitest'
import type { Image, Product, Upload } from '@commerce/domain'
import { diskStorage, s3Storage } from '@commerce/storage'
import { createTestContext, test, type ApiErrorBody, type TestContext } from './helpers.js'

const ROOT = await mkdtemp(join(tmpdir(), 'uploads-test-'))
const FILES = 'https://api.shop.example/files'
const MAX_BYTES = 300_000
test.scoped({ contextOptions: { config: { storage: diskStorage({ root: ROOT, publicUrl: FILES }), uploadMaxBytes: MAX_BYTES } } })
afterAll(() => rm(ROOT, { recursive: true, force: true }))

const jpeg = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 10 } } }).jpeg().toBuffer()
const png = (width: number, height: number) =>
  sharp({ create: { width, height, channels: 4, background: { r: 0, g: 90, b: 200, alpha: 0.5 } } }).png().toBuffer()

function form(file: Buffer, name: string, type: string, fields: Record<string, string> = {}): FormData {
  const body = new FormData()
  for (const [key, value] of Object.entries(fields)) body.append(key, value)
  body.append('file', new Blob([file], { type }), name)
  return body
}

async function send(baseUrl: string, token: string, productId: string, body: FormData): Promise<Response> {
  return fetch(`${baseUrl}/api/v1/products/${productId}/images`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body })
}

const newProduct = (ctx: TestContext, admin: string, payload: Record<string, unknown> = {}): Promise<Product> =>
  ctx.expectStatus(201, { method: 'POST', url: '/api/v1/products', payload: { title: 'Poster', price: 12, ...payload }, token: admin })
const getProduct = (ctx: TestContext, id: string): Promise<Product> => ctx.expectStatus(200, { method: 'GET', url: `/api/v1/products/${id}` })
const keyOf = (url: string) => url.slice(FILES.length + 1)
const filesOf = async (productId: string) =>
  existsSync(join(ROOT, 'products', productId)) ? (await readdir(join(ROOT, 'products', productId), { recursive: true })).filter((name) => name.includes('.')).sort() : []

describe('POST /products/:id/images with a file (multipart/form-data)', () => {
  test('stores the file, finds its type and size from its content, and makes WebP thumbnails narrower than it', async ({ ctx, admin, baseUrl }) => {
    const product = await newProduct(ctx, admin)
    const file = await jpeg(1200, 800)
    const response = await send(baseUrl, admin, product.id, form(file, 'poster.png', 'image/png', { alt: 'The poster', position: '3' }))
    expect(response.status).toBe(201)
    const image = (await response.json()) as Image
    expect(image).toMatchObject({ product_id: product.id, alt: 'The poster', position: 3, content_type: 'image/jpeg', size: file.length, width: 1200, height: 800 })
    expect(image.url).toMatch(new RegExp(`^${FILES}/products/${product.id}/[0-9a-f-]{36}/original\\.jpg$`))
    expect(image.thumbnails.map(({ width, height }) => [width, height])).toEqual([[160, 107], [480, 320], [1024, 683]])
    for (const thumbnail of image.thumbnails) {
      const stored = await sharp(join(ROOT, keyOf(thumbnail.url))).metadata()
      expect([stored.format, stored.width, stored.height]).toEqual(['webp', thumbnail.width, thumbnail.height])
    }
    // The product reads the same image, and its list picture follows it (no image_url of its own).
    const read = await getProduct(ctx, product.id)
    expect(read.images).toEqual([image])
    expect(read.image_url).toBe(image.url)

    // Served by the API with caching headers, to storefronts on other origins too.
    const served = await fetch(`${baseUrl}/files/${keyOf(image.url)}`)
    expect(served.status).toBe(200)
    expect(served.headers.get('content-type')).toBe('image/jpeg')
    expect(served.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    expect(served.headers.get('cross-origin-resource-policy')).toBe('cross-origin')
    expect(served.headers.get('etag')).toBeTruthy()
    expect(Buffer.from(await served.arrayBuffer())).toEqual(file)
    expect((await fetch(`${baseUrl}/files/products/${product.id}/../../../etc/passwd`)).status).toBe(404)
  })

  test('makes only the thumbnails narrower than a small image, and none for a tiny one', async ({ ctx, admin, baseUrl }) => {
    const product = await newProduct(ctx, admin)
    const small = (await (await send(baseUrl, admin, product.id, form(await png(500, 500), 'a.png', 'image/png'))).json()) as Image
    expect([small.content_type, small.thumbnails.map((thumbnail) => thumbnail.width)]).toEqual(['image/png', [160, 480]])
    const tiny = (await (await send(baseUrl, admin, product.id, form(await png(100, 40), 'b.png', 'image/png'))).json()) as Image
    expect(tiny.thumbnails).toEqual([])
  })

  test('refuses a file that is not an image, whatever its name and type say, and stores nothing', async ({ ctx, admin, baseUrl }) => {
    const product = await newProduct(ctx, admin)
    const response = await send(baseUrl, admin, product.id, form(Buffer.from('<svg onload="alert(1)"></svg>'), 'evil.png', 'image/png'))
    expect(response.status).toBe(415)
    const { error } = (await response.json()) as ApiErrorBody
    expect(error.code).toBe('unsupported_media_type')
    expect(error.details).toEqual([{ field: 'file', message: 'not a JPEG, PNG, WebP, GIF or AVIF image' }])
    expect(await filesOf(product.id)).toEqual([])
    expect((await getProduct(ctx, product.id)).images).toEqual([])
  })

  test('refuses a file over UPLOAD_MAX_BYTES with 413, and bad fields with 400 naming them', async ({ ctx, admin, baseUrl }) => {
    const product = await newProduct(ctx, admin)
    const noise = await sharp(Buffer.from(Array.from({ length: 400 * 400 * 3 }, (_, i) => (i * 7919) % 251)), { raw: { width: 400, height: 400, channels: 3 } }).png({ compressionLevel: 0 }).toBuffer()
    expect(noise.length).toBeGreaterThan(MAX_BYTES)
    const big = await send(baseUrl, admin, product.id, form(noise, 'big.png', 'image/png'))
    expect(big.status).toBe(413)
    expect(((await big.json()) as ApiErrorBody).error.code).toBe('payload_too_large')
    const badPosition = await send(baseUrl, admin, product.id, form(await png(10, 10), 'a.png', 'image/png', { position: 'first' }))
    expect(badPosition.status).toBe(400)
    expect(((await badPosition.json()) as ApiErrorBody).error.details).toEqual([{ field: 'position', message: "Field 'position' must be an integer from 0 to 10000" }])
    const noFile = new FormData()
    noFile.append('alt', 'no file')
    expect((await send(baseUrl, admin, product.id, noFile)).status).toBe(400)
    expect(await filesOf(product.id)).toEqual([])
    // A body that is not multipart at all, or one cut short inside the file: 400, never a 500 or no answer.
    for (const payload of ['"text"', '--x\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n\x89PNG\r\n']) {
      const error = await ctx.expectError(400, 'validation_error', { method: 'POST', url: `/api/v1/products/${product.id}/images`, token: admin, headers: { 'content-type': 'multipart/form-data; boundary=x' }, payload })
      expect(error.message).toMatch(/^The multipart body could not be read/)
    }
    expect(await filesOf(product.id)).toEqual([])
    // And a customer may not upload at all.
    expect((await send(baseUrl, (await ctx.signIn('customer')).token, product.id, form(await png(10, 10), 'a.png', 'image/png'))).status).toBe(403)
  })

  test('deleting the image deletes its files', async ({ ctx, admin, baseUrl }) => {
    const product = await newProduct(ctx, admin)
    const image = (await (await send(baseUrl, admin, product.id, form(await jpeg(600, 300), 'a.jpg', 'image/jpeg'))).json()) as Image
    expect(await filesOf(product.id)).toHaveLength(3)
    await ctx.expectStatus(204, { method: 'DELETE', url: `/api/v1/products/${product.id}/images/${image.id}`, token: admin })
    expect(await filesOf(product.id)).toEqual([])
    expect((await fetch(`${baseUrl}/files/${keyOf(image.url)}`)).status).toBe(404)
  })
})

describe("a product's image_url", () => {
  test('follows its first image by position unless set explicitly', async ({ ctx, admin }) => {
    const product = await newProduct(ctx, admin)
    expect(product.image_url).toBeNull()
    const add = (payload: Record<string, unknown>): Promise<Image> =>
      ctx.expectStatus(201, { method: 'POST', url: `/api/v1/products/${product.id}/images`, payload, token: admin })
    const second = await add({ url: 'https://cdn.example.com/second.jpg', position: 5 })
    expect((await getProduct(ctx, product.id)).image_url).toBe(second.url)
    const first = await add({ url: 'https://cdn.example.com/first.jpg', position: 1 })
    expect((await getProduct(ctx, product.id)).image_url).toBe(first.url)
    // The list shows it too.
    const list = await ctx.expectStatus<{ products: Product[] }>(200, { method: 'GET', url: '/api/v1/products?per_page=100' })
    expect(list.products.find((item) => item.id === product.id)?.image_url).toBe(first.url)
    await ctx.expectStatus(204, { method: 'DELETE', url: `/api/v1/products/${product.id}/images/${first.id}`, token: admin })
    expect((await getProduct(ctx, product.id)).image_url).toBe(second.url)

    // Set explicitly, it stays; set to null, it follows the first image again.
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/products/${product.id}`, payload: { image_url: 'https://cdn.example.com/own.jpg' }, token: admin })
    await add({ url: 'https://cdn.example.com/zero.jpg', position: 0 })
    expect((await getProduct(ctx, product.id)).image_url).toBe('https://cdn.example.com/own.jpg')
    await ctx.expectStatus(200, { method: 'PATCH', url: `/api/v1/products/${product.id}`, payload: { image_url: null }, token: admin })
    expect((await getProduct(ctx, product.id)).image_url).toBe('https://cdn.example.com/zero.jpg')
  })

  test("follows a reorder: PATCH an image's position (or alt); a product.updated event each time", async ({ ctx, admin }) => {
    const product = await newProduct(ctx, admin)
    const add = (url: string): Promise<Image> => ctx.expectStatus(201, { method: 'POST', url: `/api/v1/products/${product.id}/images`, payload: { url }, token: admin })
    const a = await add('https://cdn.example.com/a.jpg')
    const b = await add('https://cdn.example.com/b.jpg')
    expect((await getProduct(ctx, product.id)).image_url).toBe(a.url)
    const events = (await ctx.productEvents(product.id)).length
    const moved = await ctx.expectStatus<Image>(200, { method: 'PATCH', url: `/api/v1/products/${product.id}/images/${a.id}`, payload: { position: 9, alt: 'Side' }, token: admin })
    expect(moved).toMatchObject({ id: a.id, url: a.url, position: 9, alt: 'Side' })
    const read = await getProduct(ctx, product.id)
    expect([read.image_url, read.images.map((image) => image.id)]).toEqual([b.url, [b.id, a.id]])
    expect((await ctx.productEvents(product.id)).length).toBe(events + 1)
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url: `/api/v1/products/${product.id}/images/${a.id}`, payload: {}, token: admin })
    await ctx.expectError(400, 'validation_error', { method: 'PATCH', url: `/api/v1/products/${product.id}/images/${a.id}`, payload: { url: 'https://x.example/y.jpg' }, token: admin })
    await ctx.expectError(404, 'not_found', { method: 'PATCH', url: `/api/v1/products/${product.id}/images/0190a6f1-7c3a-7000-8000-00000000beef`, payload: { alt: 'x' }, token: admin })
  })

  test('of a product made with one never changes when images come and go', async ({ ctx, admin }) => {
    const product = await newProduct(ctx, admin, { image_url: 'https://cdn.example.com/hero.jpg' })
    const image = await ctx.expectStatus<Image>(201, { method: 'POST', url: `/api/v1/products/${product.id}/images`, payload: { url: 'https://cdn.example.com/a.jpg' }, token: admin })
    await ctx.expectStatus(204, { method: 'DELETE', url: `/api/v1/products/${product.id}/images/${image.id}`, token: admin })
    expect((await getProduct(ctx, product.id)).image_url).toBe('https://cdn.example.com/hero.jpg')
  })
})

describe('presigned uploads to the API (disk storage)', () => {
  test('a browser PUTs the file with the headers given, then the image is added by upload_id', async ({ ctx, admin, baseUrl }) => {
    const product = await newProduct(ctx, admin)
    const upload = await ctx.expectStatus<Upload>(201, { method: 'POST', url: `/api/v1/products/${product.id}/images/uploads`, payload: { content_type: 'image/png' }, token: admin })
    expect(upload).toMatchObject({ url: `https://api.shop.example/api/v1/uploads/${upload.id}`, method: 'PUT', max_bytes: MAX_BYTES })
    expect(upload.headers).toEqual({ 'content-type': 'image/png', 'upload-token': expect.stringMatching(/^[\w-]{43}$/) })
    const path = new URL(upload.url).pathname
    const file = await png(800, 600)
    // Not yet sent: 409. A wrong token or type changes nothing.
    const early = await ctx.request({ method: 'POST', url: `/api/v1/products/${product.id}/images`, payload: { upload_id: upload.id }, token: admin })
    expect(early.statusCode).toBe(409)
    expect((await fetch(`${baseUrl}${path}`, { method: 'PUT', headers: { ...upload.headers, 'upload-token': 'x'.repeat(43) }, body: file })).status).toBe(404)
    expect((await fetch(`${baseUrl}${path}`, { method: 'PUT', headers: { ...upload.headers, 'content-type': 'image/jpeg' }, body: file })).status).toBe(415)
    expect((await fetch(`${baseUrl}${path}`, { method: 'PUT', headers: upload.headers, body: file })).status).toBe(204)

    const image = await ctx.expectStatus<Image>(201, { method: 'POST', url: `/api/v1/products/${product.id}/images`, payload: { upload_id: upload.id, alt: 'sent' }, token: admin })
    expect(image).toMatchObject({ alt: 'sent', content_type: 'image/png', width: 800, height: 600, size: file.length })
    expect(image.thumbnails).toHaveLength(2)
    // Used up: the upload, and what was sent to it, are gone.
    expect(await ctx.countRows('uploads')).toBe(0)
    expect(existsSync(join(ROOT, 'uploads', upload.id))).toBe(false)
    const again = await ctx.request({ method: 'POST', url: `/api/v1/products/${product.id}/images`, payload: { upload_id: upload.id }, token: admin })
    expect(again.statusCode).toBe(400)
    expect(again.json().error.details[0].field).toBe('upload_id')
  })

  // Expired uploads are swept by the worker (apps/worker/test/csv.test.ts, "retention").
  test('an expired address refuses the file', async ({ ctx, admin, baseUrl }) => {
    const product = await newProduct(ctx, admin)
    const ask = () => ctx.expectStatus<Upload>(201, { method: 'POST', url: `/api/v1/products/${product.id}/images/uploads`, payload: { content_type: 'image/png' }, token: admin })
    const sent = await ask()
    expect((await fetch(`${baseUrl}${new URL(sent.url).pathname}`, { method: 'PUT', headers: sent.headers, body: await png(20, 20) })).status).toBe(204)
    expect(existsSync(join(ROOT, 'uploads', sent.id))).toBe(true)
    const late = await ask()
    await ctx.handle.sql`update uploads set expires_at = now() - interval '1 second' where id in (${sent.id}, ${late.id})`
    const refused = await fetch(`${baseUrl}${new URL(late.url).pathname}`, { method: 'PUT', headers: late.headers, body: await png(20, 20) })
    expect(refused.status).toBe(409)
    expect(((await refused.json()) as ApiErrorBody).error.message).toMatch(/expired at .*; ask for a new one/)
  })

  test('exactly one of url and upload_id', async ({ ctx, admin }) => {
    const product = await newProduct(ctx, admin)
    for (const payload of [{}, { url: 'https://cdn.example.com/a.jpg', upload_id: '0190a6f1-7c3a-7000-8000-00000000beef' }]) {
      await ctx.expectError(400, 'validation_error', { method: 'POST', url: `/api/v1/products/${product.id}/images`, payload, token: admin })
    }
  })
})

describe('S3 storage (s3rver)', () => {
  let s3rver: S3rver
  let s3Folder: string
  let endpoint: string
  let ctx: TestContext
  let baseUrl: string
  let admin: string
  beforeAll(async () => {
    s3Folder = await mkdtemp(join(tmpdir(), 'uploads-s3-'))
    s3rver = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: s3Folder, configureBuckets: [{ name: 'media', configs: [] }] })
    endpoint = `http://127.0.0.1:${((await s3rver.run()) as AddressInfo).port}`
    const storage = s3Storage({ bucket: 'media', region: 'us-east-1', endpoint, forcePathStyle: true, prefix: 'shop/', credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } })
    ctx = await createTestContext({ storage, uploadMaxBytes: MAX_BYTES })
    await ctx.app.listen({ host: '127.0.0.1', port: 0 })
    baseUrl = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`
    admin = (await ctx.signIn('admin')).token
  })
  afterAll(async () => {
    await ctx?.close()
    await s3rver?.close()
    await rm(s3Folder, { recursive: true, force: true })
  })

  test('a file sent to the API lands in the bucket under the prefix, and goes with its image', async () => {
    const product = await newProduct(ctx, admin)
    const image = (await (await send(baseUrl, admin, product.id, form(await jpeg(640, 480), 'a.jpg', 'image/jpeg'))).json()) as Image
    expect(image.url).toMatch(new RegExp(`^${endpoint}/media/shop/products/${product.id}/[0-9a-f-]{36}/original\\.jpg$`))
    const urls = [image.url, ...image.thumbnails.map((thumbnail) => thumbnail.url)]
    for (const url of urls) expect((await fetch(url)).status).toBe(200)
    // No /files route: the bucket serves them.
    expect((await fetch(`${baseUrl}/files/anything`)).status).toBe(404)
    await ctx.expectStatus(204, { method: 'DELETE', url: `/api/v1/products/${product.id}/images/${image.id}`, token: admin })
    for (const url of urls) expect((await fetch(url)).status).toBe(404)
  })

  test('a presigned PUT goes straight to the bucket, then becomes an image', async () => {
    const product = await newProduct(ctx, admin)
    const upload = await ctx.expectStatus<Upload>(201, { method: 'POST', url: `/api/v1/products/${product.id}/images/uploads`, payload: { content_type: 'image/jpeg' }, token: admin })
    expect(upload.url.startsWith(`${endpoint}/media/shop/uploads/${upload.id}?`)).toBe(true)
    expect(upload.headers).toEqual({ 'content-type': 'image/jpeg' })
    expect((await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: await jpeg(300, 200) })).status).toBe(200)
    const image = await ctx.expectStatus<Image>(201, { method: 'POST', url: `/api/v1/products/${product.id}/images`, payload: { upload_id: upload.id }, token: admin })
    expect(image).toMatchObject({ content_type: 'image/jpeg', width: 300, height: 200 })
    expect((await fetch(`${endpoint}/media/shop/uploads/${upload.id}`)).status).toBe(404)
  })
})
