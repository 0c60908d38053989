/**
 * Uploaded files at /files/<key> when they are kept on this instance's disk (STORAGE=disk). Every
 * key is new for each image, so a file never changes: cached for a year as immutable. Storefronts
 * on other origins may show them (Cross-Origin-Resource-Policy: cross-origin), and nothing in one
 * can run (a sandboxing Content-Security-Policy). Keys under `private/` (exports, imported files)
 * are never served here: their routes check who asks.
 */
import { mkdirSync } from 'node:fs'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { FileStorage } from '@commerce/storage'

export default fp<{ storage: FileStorage }>(
  async function filesPlugin(app: FastifyInstance, { storage }) {
    if (!storage.root) return
    mkdirSync(storage.root, { recursive: true })
    await app.register(fastifyStatic, {
      root: storage.root,
      prefix: '/files/',
      decorateReply: false,
      index: false,
      list: false,
      dotfiles: 'deny',
      allowedPath: (path) => !/^\/*private(\/|$)/i.test(path),
      immutable: true,
      maxAge: '365d',
      schemaHide: true,
      setHeaders: (response) => {
        response.header('cross-origin-resource-policy', 'cross-origin')
        response.header('content-security-policy', "default-src 'none'; sandbox")
      },
    })
  },
  { name: 'files' },
)
