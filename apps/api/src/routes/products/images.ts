/**
 * Uploaded images: the file's type found from its content, WebP thumbnails made by sharp, the
 * files put in the storage (@commerce/storage) before the image row is written and deleted after
 * the row is, and presigned uploads that a browser sends straight to S3 (or, on disk, to the API).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import { and, eq } from 'drizzle-orm'
import sharp, { type Metadata } from 'sharp'
import type { FastifyBaseLogger } from 'fastify'
import type { Image, Upload } from '@commerce/domain'
import { newId, uploads, type Database, type ImageThumbnail } from '@commerce/db'
import { FileTooLargeError, type FileStorage } from '@commerce/storage'
import { ApiError, conflict, invalidField, notFound } from '../../errors.js'
import type { createProductService, NewImage } from './service.js'

/** Thumbnail widths (WebP), narrowest first; only those narrower than the image are made. */
export const THUMBNAIL_WIDTHS = [160, 480, 1024] as const
/** Beyond this many pixels a file is refused before it is decoded (a small file can hold a huge image). */
const MAX_PIXELS = 50_000_000
/** How long a presigned upload address works. */
const UPLOAD_TTL_SECONDS = 15 * 60

const TYPES: Record<string, { contentType: string; extension: string }> = {
  jpeg: { contentType: 'image/jpeg', extension: 'jpg' },
  png: { contentType: 'image/png', extension: 'png' },
  webp: { contentType: 'image/webp', extension: 'webp' },
  gif: { contentType: 'image/gif', extension: 'gif' },
}

const unsupported = () =>
  new ApiError('unsupported_media_type', 'The file is not an image of a supported type (JPEG, PNG, WebP, GIF or AVIF)', [
    { field: 'file', message: 'not a JPEG, PNG, WebP, GIF or AVIF image' },
  ])
export const tooLarge = (maxBytes: number) => new ApiError('payload_too_large', `The file is larger than the limit of ${maxBytes} bytes`)

interface ProcessedImage {
  contentType: string
  extension: string
  width: number
  height: number
  thumbnails: { width: number; height: number; data: Buffer }[]
}

/** What the file is, found from its bytes (never from its name or the type the client claims). */
async function processImage(data: Buffer): Promise<ProcessedImage> {
  let metadata: Metadata
  try {
    metadata = await sharp(data, { limitInputPixels: false }).metadata()
  } catch {
    throw unsupported()
  }
  const type = metadata.format === 'heif' && metadata.compression === 'av1' ? { contentType: 'image/avif', extension: 'avif' } : TYPES[metadata.format ?? '']
  if (!type || !metadata.width || !metadata.height) throw unsupported()
  if (metadata.width * metadata.height > MAX_PIXELS) {
    throw invalidField('file', `The image has more than ${MAX_PIXELS / 1_000_000} megapixels (${metadata.width}×${metadata.height})`)
  }
  // EXIF orientations 5–8 turn the picture a quarter: its upright width is the stored height.
  const turned = (metadata.orientation ?? 1) >= 5
  const width = turned ? metadata.height : metadata.width
  const height = turned ? metadata.width : metadata.height
  try {
    const thumbnails = await Promise.all(
      THUMBNAIL_WIDTHS.filter((thumbnailWidth) => thumbnailWidth < width).map(async (thumbnailWidth) => {
        const { data: thumbnail, info } = await sharp(data, { limitInputPixels: MAX_PIXELS })
          .rotate()
          .resize({ width: thumbnailWidth })
          .webp({ quality: 80 })
          .toBuffer({ resolveWithObject: true })
        return { width: info.width, height: info.height, data: thumbnail }
      }),
    )
    return { ...type, width, height, thumbnails }
  } catch {
    throw invalidField('file', 'The image could not be read (a truncated or damaged file)')
  }
}

const hashToken = (token: string) => createHash('sha256').update(token).digest()

export function createImageUploads(options: {
  db: Database
  storage: FileStorage
  products: ReturnType<typeof createProductService>
  publicUrl: string
  maxBytes: number
  log: FastifyBaseLogger
}) {
  const { db, storage, products, maxBytes, log } = options

  /** Deletes files after the change that dropped them has committed; a failure is logged, not answered. */
  async function deleteFiles(keys: string[]) {
    if (keys.length === 0) return
    try {
      await storage.delete(keys)
    } catch (error) {
      log.warn({ err: error, keys }, 'could not delete stored files')
    }
  }

  /** Stores the file and its thumbnails, then adds the image; the files go again when the row cannot be written. */
  async function addFile(productId: string, data: Buffer, fields: Pick<NewImage, 'alt' | 'position' | 'uploadId'>, requestId: string): Promise<Image> {
    await products.requireProduct(productId)
    const image = await processImage(data)
    const folder = `products/${productId}/${newId()}`
    const original = `${folder}/original.${image.extension}`
    const thumbnails: ImageThumbnail[] = image.thumbnails.map((thumbnail) => {
      const key = `${folder}/w${thumbnail.width}.webp`
      return { width: thumbnail.width, height: thumbnail.height, key, url: storage.url(key) }
    })
    const keys = [original, ...thumbnails.map((thumbnail) => thumbnail.key)]
    try {
      await Promise.all([
        storage.put(original, data, image.contentType),
        ...image.thumbnails.map((thumbnail, index) => storage.put(thumbnails[index]!.key, thumbnail.data, 'image/webp')),
      ])
      const file = { storageKey: original, contentType: image.contentType, sizeBytes: data.length, width: image.width, height: image.height, thumbnails }
      return await products.createImage(productId, { ...fields, url: storage.url(original), file }, requestId)
    } catch (error) {
      await deleteFiles(keys)
      throw error
    }
  }

  return {
    addFile,

    /** An image from a presigned upload: read back from the storage, checked and stored like a file sent directly. */
    async addUpload(productId: string, uploadId: string, fields: Pick<NewImage, 'alt' | 'position'>, requestId: string): Promise<Image> {
      const [upload] = await db.select().from(uploads).where(and(eq(uploads.id, uploadId), eq(uploads.productId, productId)))
      if (!upload) throw invalidField('upload_id', `Field 'upload_id' names no upload of this product (made with POST /products/${productId}/images/uploads)`)
      let data: Buffer | undefined
      try {
        data = await storage.read(upload.storageKey, maxBytes)
      } catch (error) {
        if (error instanceof FileTooLargeError) throw tooLarge(maxBytes)
        throw error
      }
      if (!data) throw conflict('Nothing has been sent to the upload\'s address yet')
      const image = await addFile(productId, data, { ...fields, uploadId }, requestId)
      await deleteFiles([upload.storageKey])
      return image
    },

    /** An address to PUT one file to: S3's own presigned URL, or the API's (disk) with a secret header. */
    async createUpload(productId: string, contentType: string): Promise<Upload> {
      await products.requireProduct(productId)
      const id = newId()
      const storageKey = `uploads/${id}`
      const token = randomBytes(32).toString('base64url')
      const expiresAt = new Date(Date.now() + UPLOAD_TTL_SECONDS * 1000)
      await db.insert(uploads).values({ id, productId, storageKey, contentType, tokenHash: hashToken(token).toString('hex'), expiresAt })
      const presigned = await storage.presignPut(storageKey, contentType, UPLOAD_TTL_SECONDS)
      const target = presigned ?? { url: `${options.publicUrl}/api/v1/uploads/${id}`, headers: { 'content-type': contentType, 'upload-token': token } }
      return { id, url: target.url, method: 'PUT', headers: target.headers, max_bytes: maxBytes, expires_at: expiresAt.toISOString() }
    },

    async deleteImage(productId: string, imageId: string, requestId: string): Promise<void> {
      await deleteFiles(await products.deleteImage(productId, imageId, requestId))
    },
  }
}

/** A file PUT to the API (disk storage), checked against its upload's secret, type and expiry. */
export async function receiveUpload(
  db: Database,
  storage: FileStorage,
  uploadId: string,
  token: string | undefined,
  contentType: string | undefined,
  data: Buffer,
): Promise<void> {
  const [upload] = await db.select().from(uploads).where(eq(uploads.id, uploadId))
  if (!upload || !token || !timingSafeEqual(hashToken(token), Buffer.from(upload.tokenHash, 'hex'))) throw notFound('Upload')
  if (upload.expiresAt.getTime() < Date.now()) throw conflict(`The upload's address expired at ${upload.expiresAt.toISOString()}; ask for a new one`)
  if (contentType?.split(';')[0]!.trim().toLowerCase() !== upload.contentType) {
    throw new ApiError('unsupported_media_type', `Send the file with Content-Type: ${upload.contentType}, as the upload was asked for`)
  }
  await storage.put(upload.storageKey, data, upload.contentType)
  await db.update(uploads).set({ receivedAt: new Date() }).where(eq(uploads.id, uploadId))
}
