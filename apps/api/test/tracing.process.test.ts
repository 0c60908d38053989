/**
 * Traces of the built API process: without OTEL_EXPORTER_OTLP_ENDPOINT it loads nothing of
 * OpenTelemetry; with it, it sends its spans over OTLP/HTTP to a collector.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect } from 'vitest'
import { test as it, type TestContext } from './helpers.js'
import { startApi, stopProcess } from './processes.js'

describe('the built API process', () => {
  const RECORDER = fileURLToPath(new URL('./record-loads.mjs', import.meta.url))
  // The packages themselves (pnpm's folder names may mention them as peers of others).
  const OPENTELEMETRY = /node_modules\/(@opentelemetry|@fastify\/otel)\/|runtime\/dist\/tracing\.js/

  /** Runs the API with `env`, sends one request, stops it; answers the modules it imported and its stdout. */
  async function runApi(ctx: TestContext, env: Record<string, string>) {
    const loads = join(mkdtempSync(join(tmpdir(), 'commerce-loads-')), 'modules.txt')
    writeFileSync(loads, '')
    let stdout = ''
    const api = await startApi(ctx.database.url, { LOG_LEVEL: 'info', NODE_OPTIONS: `--import=${RECORDER}`, RECORD_LOADS_TO: loads, ...env }, (text) => (stdout += text))
    expect((await fetch(`${api.baseUrl}/api/v1/products`, { headers: { 'x-request-id': 'exported-request' } })).status).toBe(200)
    const exited = new Promise<number | null>((resolve) => api.process.once('exit', resolve))
    await stopProcess(api.process)
    return { code: await exited, modules: readFileSync(loads, 'utf8').split('\n'), stdout }
  }

  it('without OTEL_EXPORTER_OTLP_ENDPOINT loads nothing of OpenTelemetry', async ({ ctx }) => {
    const { modules } = await runApi(ctx, {})
    expect(modules.some((url) => url.includes('runtime/dist/shutdown.js'))).toBe(true)
    expect(modules.filter((url) => OPENTELEMETRY.test(url))).toEqual([])
  }, 60_000)

  it('with it, sends the spans over OTLP/HTTP with the configured headers, the last ones on SIGTERM, and never logs the headers', async ({ ctx }) => {
    const posts: { path: string; headers: Record<string, unknown>; body: Buffer }[] = []
    const collector = createServer((request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        posts.push({ path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks) })
        response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()
      })
    })
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve))
    try {
      const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`
      const { code, modules, stdout } = await runApi(ctx, {
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20collector-key-never-logged',
        OTEL_SERVICE_NAME: 'shop-api',
      })
      expect(code).toBe(0)
      expect(modules.some((url) => OPENTELEMETRY.test(url))).toBe(true)
      expect(posts.length).toBeGreaterThan(0)
      expect(posts.every((post) => post.path === '/v1/traces' && post.headers['content-type'] === 'application/x-protobuf')).toBe(true)
      expect(posts[0]!.headers.authorization).toBe('Bearer collector-key-never-logged')
      // Protobuf keeps strings as UTF-8: the service, the route's span and its request id are in it.
      const sent = Buffer.concat(posts.map((post) => post.body)).toString('latin1')
      for (const text of ['shop-api', 'GET /api/v1/products', 'exported-request']) expect(sent).toContain(text)
      expect(stdout).toContain('"tracing":true')
      expect(stdout).not.toContain('collector-key')
    } finally {
      await new Promise((resolve) => collector.close(resolve))
    }
  }, 60_000)
})
