import { DeleteObjectsCommand, GetObjectCommand, NoSuchKey, PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { Upload } from '@aws-sdk/lib-storage'
import { getSignedUrl } from '@aws-sdk/s3-request-presigner'
import type { Readable } from 'node:stream'
import { byteCounter } from './counter.js'
import { checkKey, FileTooLargeError, type FileStorage } from './types.js'

export interface S3StorageOptions {
  bucket: string
  region: string
  /** An S3-compatible service (MinIO, R2, …); unset for AWS. */
  endpoint?: string
  /** Put before every key (`shop-a/`). */
  prefix?: string
  /** Bucket in the path (`endpoint/bucket/key`), as most S3-compatibles need. */
  forcePathStyle?: boolean
  /** Where browsers fetch files (a CDN, or the bucket's public address); by default the bucket's own address. */
  publicUrl?: string
  /** Unset: the SDK's default chain (environment, profile, instance role). */
  credentials?: { accessKeyId: string; secretAccessKey: string }
}

/** Files in an S3 bucket, through the official SDK; browsers may PUT straight to it with a presigned URL. */
export function s3Storage(options: S3StorageOptions): FileStorage {
  const client = new S3Client({
    region: options.region,
    endpoint: options.endpoint,
    forcePathStyle: options.forcePathStyle ?? false,
    credentials: options.credentials,
  })
  const prefix = options.prefix ?? ''
  const objectKey = (key: string) => `${prefix}${checkKey(key)}`
  const endpoint = options.endpoint ? new URL(options.endpoint) : undefined
  const bucketUrl = !endpoint
    ? `https://${options.bucket}.s3.${options.region}.amazonaws.com`
    : options.forcePathStyle
      ? `${endpoint.origin}${endpoint.pathname.replace(/\/+$/, '')}/${options.bucket}`
      : `${endpoint.protocol}//${options.bucket}.${endpoint.host}`
  const publicUrl = (options.publicUrl ?? bucketUrl).replace(/\/+$/, '')

  async function getObject(key: string) {
    try {
      return await client.send(new GetObjectCommand({ Bucket: options.bucket, Key: objectKey(key) }))
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return undefined
      throw error
    }
  }

  return {
    kind: 's3',

    async put(key, body, contentType) {
      await client.send(new PutObjectCommand({ Bucket: options.bucket, Key: objectKey(key), Body: body, ContentType: contentType }))
    },

    async putStream(key, body, contentType) {
      // Sent in parts of 8 MiB, at most four in flight, as it is read.
      const counted = byteCounter()
      body.on('error', (error) => counted.destroy(error))
      body.pipe(counted)
      await new Upload({ client, params: { Bucket: options.bucket, Key: objectKey(key), Body: counted, ContentType: contentType }, partSize: 8 * 1024 * 1024, queueSize: 4 }).done()
      return counted.bytes
    },

    async readStream(key) {
      const object = await getObject(key)
      return object?.Body as Readable | undefined
    },

    async presignGet(key, fileName, expiresInSeconds) {
      const disposition = `attachment; filename="${fileName.replace(/[^\w.-]/g, '_')}"`
      return getSignedUrl(client, new GetObjectCommand({ Bucket: options.bucket, Key: objectKey(key), ResponseContentDisposition: disposition }), {
        expiresIn: expiresInSeconds,
      })
    },

    async read(key, maxBytes) {
      const object = await getObject(key)
      if (!object) return undefined
      const body = object.Body as AsyncIterable<Uint8Array> & { destroy?: () => void }
      if ((object.ContentLength ?? 0) > maxBytes) {
        body.destroy?.()
        throw new FileTooLargeError(maxBytes)
      }
      const chunks: Uint8Array[] = []
      let size = 0
      for await (const chunk of body) {
        size += chunk.length
        if (size > maxBytes) {
          body.destroy?.()
          throw new FileTooLargeError(maxBytes)
        }
        chunks.push(chunk)
      }
      return Buffer.concat(chunks)
    },

    async delete(keys) {
      // DeleteObjects takes at most 1,000 keys.
      for (let start = 0; start < keys.length; start += 1000) {
        const batch = keys.slice(start, start + 1000)
        await client.send(
          new DeleteObjectsCommand({ Bucket: options.bucket, Delete: { Objects: batch.map((key) => ({ Key: objectKey(key) })), Quiet: true } }),
        )
      }
    },

    url: (key) => `${publicUrl}/${prefix}${checkKey(key)}`,

    async presignPut(key, contentType, expiresInSeconds) {
      const command = new PutObjectCommand({ Bucket: options.bucket, Key: objectKey(key), ContentType: contentType })
      // Content-Type is signed, so the browser must send the one it was given.
      const url = await getSignedUrl(client, command, { expiresIn: expiresInSeconds, signableHeaders: new Set(['content-type']) })
      return { url, headers: { 'content-type': contentType } }
    },
  }
}
