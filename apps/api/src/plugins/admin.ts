/**
 * The admin dashboard (apps/admin, built to static files) at /admin/. Its routes live in the URL's
 * fragment, so the server only serves files: index.html, and assets whose names carry their
 * content's hash (cached for a year as immutable). The page's Content-Security-Policy lets it load
 * its own scripts and styles and nothing else, call this API (its WebSocket included) and the file
 * storage (direct uploads), and show images from there.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'

export interface AdminOptions {
  /** The built dashboard (index.html and assets/). */
  root: string
  /** Origins besides this one that the page talks to: the file storage's and PUBLIC_URL's. */
  otherOrigins: readonly string[]
}

export default fp<AdminOptions>(
  async function adminPlugin(app: FastifyInstance, { root, otherOrigins }) {
    const others = [...new Set(otherOrigins)].join(' ')
    const policy = [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      `img-src 'self' data: blob: ${others}`,
      `connect-src 'self' ${others}`,
      "base-uri 'none'",
      "form-action 'self'",
      "frame-ancestors 'none'",
    ].join('; ')
    const index = readFileSync(join(root, 'index.html'))
    // `/admin` and `/admin/` are one route (ignoreTrailingSlash); the page's relative asset paths
    // resolve only under `/admin/`.
    app.get('/admin', { schema: { hide: true } }, (request, reply) => {
      if (!request.url.split('?')[0]!.endsWith('/')) return reply.redirect('/admin/', 308)
      // index.html names the assets of the current build: never reused without asking.
      return reply.header('cache-control', 'no-cache').header('content-security-policy', policy).type('text/html; charset=utf-8').send(index)
    })
    await app.register(fastifyStatic, {
      root: join(root, 'assets'),
      prefix: '/admin/assets/',
      decorateReply: false,
      index: false,
      list: false,
      dotfiles: 'ignore',
      immutable: true,
      maxAge: '365d',
      // The build's .br and .gz copies, chosen by Accept-Encoding: nothing is compressed per request.
      preCompressed: true,
      schemaHide: true,
      setHeaders: (response) => {
        response.header('content-security-policy', policy)
      },
    })
  },
  { name: 'admin' },
)
