/**
 * Both storages against the real thing: files in a temporary folder, and a local S3-compatible
 * server (s3rver, which keeps objects on disk but does not check signatures: what is shown here
 * is that the SDK's requests, keys, prefixes and presigned URLs are right, not S3's auth).
 */
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { text } from 'node:stream/consumers'
import S3rver from 's3rver'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { diskStorage, FileTooLargeError, s3Storage, type FileStorage } from '../src/index.js'

let folder: string
let s3Folder: string
let s3rver: S3rver
let endpoint: string
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'storage-disk-'))
  s3Folder = await mkdtemp(join(tmpdir(), 'storage-s3-'))
  s3rver = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: s3Folder, configureBuckets: [{ name: 'shop', configs: [] }] })
  const address = (await s3rver.run()) as AddressInfo
  endpoint = `http://127.0.0.1:${address.port}`
})
afterAll(async () => {
  await s3rver?.close()
  await rm(folder, { recursive: true, force: true })
  await rm(s3Folder, { recursive: true, force: true })
})

const storages: [string, () => FileStorage][] = [
  ['disk', () => diskStorage({ root: folder, publicUrl: 'https://api.example.com/files' })],
  [
    's3',
    () =>
      s3Storage({
        bucket: 'shop',
        region: 'us-east-1',
        endpoint,
        forcePathStyle: true,
        prefix: 'shop-a/',
        credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      }),
  ],
]

describe.each(storages)('%s storage', (kind, make) => {
  it('keeps a file under its key, reads it back, and deletes it', async () => {
    const storage = make()
    const body = Buffer.from(`bytes of ${kind} \u00e9\u0000\u00ff`)
    await storage.put('products/p1/original.png', body, 'image/png')
    expect(await storage.read('products/p1/original.png', 1000)).toEqual(body)
    await storage.delete(['products/p1/original.png', 'products/p1/never-there.webp'])
    expect(await storage.read('products/p1/original.png', 1000)).toBeUndefined()
  })

  it('refuses to read a file past the limit, and reads nothing that is not there', async () => {
    const storage = make()
    await storage.put('uploads/big.bin', Buffer.alloc(2048, 7), 'application/octet-stream')
    await expect(storage.read('uploads/big.bin', 2047)).rejects.toBeInstanceOf(FileTooLargeError)
    expect((await storage.read('uploads/big.bin', 2048))?.length).toBe(2048)
    expect(await storage.read('uploads/missing.bin', 10)).toBeUndefined()
  })

  it('writes a file from a stream read in many pieces (beyond one S3 part), and streams it back', async () => {
    const storage = make()
    // 9 MiB in 1 KiB pieces: more than one 8 MiB part of a multipart upload.
    const line = `${'x'.repeat(1023)}\n`
    const pieces = 9 * 1024
    const size = await storage.putStream('private/exports/e1.csv', Readable.from((function* () { for (let i = 0; i < pieces; i++) yield Buffer.from(line) })()), 'text/csv')
    expect(size).toBe(pieces * 1024)
    const back = await storage.readStream('private/exports/e1.csv')
    const content = await text(back!)
    expect(content.length).toBe(pieces * 1024)
    expect(content.slice(0, 1024)).toBe(line)
    expect(await storage.readStream('private/exports/none.csv')).toBeUndefined()
    await storage.delete(['private/exports/e1.csv'])
  })

  it('refuses keys that could leave its folder or prefix', async () => {
    const storage = make()
    for (const key of ['../etc/passwd', 'a/../../b', '/abs', 'a//b', '']) {
      await expect(storage.put(key, Buffer.from('x'), 'text/plain')).rejects.toThrow(/Not a storage key/)
    }
  })
})

describe('disk storage', () => {
  it('gives the public address under the served folder and leaves no partial files', async () => {
    const storage = storages[0]![1]()
    expect(storage.url('products/p2/w160.webp')).toBe('https://api.example.com/files/products/p2/w160.webp')
    await storage.put('products/p2/w160.webp', Buffer.from('webp'), 'image/webp')
    expect(await readFile(join(folder, 'products/p2/w160.webp'), 'utf8')).toBe('webp')
    expect(await readdir(join(folder, 'products/p2'))).toEqual(['w160.webp'])
    expect(await storage.presignPut('uploads/x', 'image/png', 60)).toBeUndefined()
    expect(await storage.presignGet('private/exports/x.csv', 'x.csv', 60)).toBeUndefined()
  })
})

describe('s3 storage', () => {
  it('puts keys under its prefix, addresses them path-style, and presigns a PUT a browser can send', async () => {
    const storage = storages[1]![1]()
    expect(storage.url('products/p3/a.png')).toBe(`${endpoint}/shop/shop-a/products/p3/a.png`)
    const presigned = await storage.presignPut('uploads/u1', 'image/png', 300)
    expect(presigned).toBeDefined()
    const url = new URL(presigned!.url)
    expect(url.pathname).toBe('/shop/shop-a/uploads/u1')
    expect(url.searchParams.get('X-Amz-Expires')).toBe('300')
    expect(url.searchParams.get('X-Amz-SignedHeaders')).toContain('content-type')
    const sent = await fetch(presigned!.url, { method: 'PUT', headers: presigned!.headers, body: Buffer.from('from the browser') })
    expect(sent.status).toBe(200)
    expect((await storage.read('uploads/u1', 100))?.toString()).toBe('from the browser')
    // And the public address serves what was put.
    const fetched = await fetch(storage.url('uploads/u1'))
    expect(await fetched.text()).toBe('from the browser')
  })

  it('presigns a GET that downloads a private file under a given name', async () => {
    const storage = storages[1]![1]()
    await storage.put('private/exports/e2.csv', Buffer.from('a,b\n1,2\n'), 'text/csv')
    const address = await storage.presignGet('private/exports/e2.csv', 'products "all".csv', 120)
    const url = new URL(address!)
    expect(url.pathname).toBe('/shop/shop-a/private/exports/e2.csv')
    expect(url.searchParams.get('X-Amz-Expires')).toBe('120')
    expect(url.searchParams.get('response-content-disposition')).toBe('attachment; filename="products__all_.csv"')
    const fetched = await fetch(address!)
    expect(await fetched.text()).toBe('a,b\n1,2\n')
  })

  it('deletes more than one request of keys (DeleteObjects takes 1,000 at most)', async () => {
    const storage = storages[1]![1]()
    const keys = Array.from({ length: 1003 }, (_, i) => `bulk/k${i}`)
    for (const key of [keys[0]!, keys[1002]!]) await storage.put(key, Buffer.from(key), 'text/plain')
    await storage.delete(keys)
    expect(await storage.read(keys[0]!, 100)).toBeUndefined()
    expect(await storage.read(keys[1002]!, 100)).toBeUndefined()
  })
})
