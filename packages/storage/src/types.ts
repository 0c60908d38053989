import type { Readable } from 'node:stream'

/**
 * Where uploaded files live: one interface, a local folder or an S3-compatible bucket behind it.
 * Keys under `private/` (exports, imports) are never served publicly on disk; on S3 the bucket's
 * policy must keep them unreadable (docs/operations.md).
 */
export interface FileStorage {
  readonly kind: 'disk' | 's3'
  /** Disk: the folder the files are in (the API serves it at /files). */
  readonly root?: string
  /** Writes a file whole; an existing file under the key is replaced. */
  put(key: string, body: Buffer, contentType: string): Promise<void>
  /** Writes a file from a stream without holding it in memory (an export); answers its size in bytes. */
  putStream(key: string, body: Readable, contentType: string): Promise<number>
  /** A file's bytes as a stream, `undefined` when there is none. */
  readStream(key: string): Promise<Readable | undefined>
  /**
   * An address that downloads a private file as `fileName` for `expiresInSeconds` (S3: a presigned
   * GET); `undefined` when this storage has none (the API then sends the file itself).
   */
  presignGet(key: string, fileName: string, expiresInSeconds: number): Promise<string | undefined>
  /** A file's bytes, `undefined` when there is none; `FileTooLargeError` past `maxBytes` (read no further). */
  read(key: string, maxBytes: number): Promise<Buffer | undefined>
  /** Deletes files; a key with no file is not an error. */
  delete(keys: string[]): Promise<void>
  /** The address a browser fetches the file at. */
  url(key: string): string
  /**
   * An address a browser can PUT the file to itself, valid for `expiresInSeconds`, with the headers
   * it must send; `undefined` when this storage has no such address (the API then takes the PUT).
   */
  presignPut(key: string, contentType: string, expiresInSeconds: number): Promise<{ url: string; headers: Record<string, string> } | undefined>
}

export class FileTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`The file is larger than ${maxBytes} bytes`)
    this.name = 'FileTooLargeError'
  }
}

/** Keys are made by the service (uploads/…, products/…): letters, digits, `.`, `_`, `-` and `/`, never `..`. */
const KEY = /^[A-Za-z0-9][A-Za-z0-9._-]*(\/[A-Za-z0-9][A-Za-z0-9._-]*)*$/

export function checkKey(key: string): string {
  if (!KEY.test(key) || key.split('/').includes('..')) throw new Error(`Not a storage key: ${JSON.stringify(key)}`)
  return key
}
