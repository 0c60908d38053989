import { randomUUID } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, open, rename, rm, stat } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { checkKey, FileTooLargeError, type FileStorage } from './types.js'

export interface DiskStorageOptions {
  /** The folder files are kept under. */
  root: string
  /** The public address of that folder as the API serves it (…/files), without a trailing slash. */
  publicUrl: string
}

/** Files in a local folder, which the API serves (plugins/files.ts). One instance, or a shared volume. */
export function diskStorage(options: DiskStorageOptions): FileStorage {
  const root = resolve(options.root)
  const path = (key: string) => join(root, checkKey(key))

  /** Written beside the target and renamed, so a reader never sees half a file. */
  async function writeAtomically(key: string, write: (partial: string) => Promise<void>) {
    const target = path(key)
    await mkdir(dirname(target), { recursive: true })
    const partial = `${target}.${randomUUID()}.part`
    try {
      await write(partial)
      await rename(partial, target)
    } catch (error) {
      await rm(partial, { force: true })
      throw error
    }
  }

  return {
    kind: 'disk',
    root,

    async put(key, body) {
      await writeAtomically(key, async (partial) => {
        const file = await open(partial, 'wx')
        try {
          await file.writeFile(body)
        } finally {
          await file.close()
        }
      })
    },

    async putStream(key, body) {
      await writeAtomically(key, (partial) => pipeline(body, createWriteStream(partial, { flags: 'wx' })))
      return (await stat(path(key))).size
    },

    async readStream(key) {
      const stream = createReadStream(path(key))
      // Opening fails (no file) before any data: wait for either.
      return new Promise((resolvePromise, reject) => {
        stream.once('ready', () => resolvePromise(stream))
        stream.once('error', (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? resolvePromise(undefined) : reject(error)))
      })
    },

    presignGet: async () => undefined,

    async read(key, maxBytes) {
      let file
      try {
        file = await open(path(key), 'r')
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
        throw error
      }
      try {
        const { size } = await file.stat()
        if (size > maxBytes) throw new FileTooLargeError(maxBytes)
        return await file.readFile()
      } finally {
        await file.close()
      }
    },

    async delete(keys) {
      await Promise.all(keys.map((key) => rm(path(key), { force: true })))
    },

    url: (key) => `${options.publicUrl}/${checkKey(key)}`,

    presignPut: async () => undefined,
  }
}
