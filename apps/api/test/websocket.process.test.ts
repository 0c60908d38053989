/** The WebSocket channel across processes: a client of the built API process hears events caused through an app in this one. */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { describe, expect } from 'vitest'
import type { Product } from '@commerce/domain'
import { test } from './helpers.js'
import { processEnv } from './processes.js'
import { connect, WS_PATH } from './websocket-client.js'

describe('a second API process', () => {
  test('a client connected to the built API process (dist/main.js) receives events caused through this one', async ({ ctx, admin }) => {
    const main = fileURLToPath(new URL('../dist/main.js', import.meta.url))
    const child = spawn(process.execPath, [main], {
      env: { ...processEnv(ctx.database.url), JWT_SECRET: ctx.config.jwtSecret, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', RATE_LIMIT_MAX: '100000' },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    try {
      // Its first log lines say where it listens.
      let output = ''
      const port = await new Promise<number>((resolve, reject) => {
        child.stdout!.on('data', (chunk: Buffer) => {
          output += chunk.toString()
          const match = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output)
          if (match) resolve(Number(match[1]))
        })
        child.once('exit', (code) => reject(new Error(`the API exited with ${code}: ${output}`)))
      })
      const client = await connect(`ws://127.0.0.1:${port}${WS_PATH}`, { token: admin })
      const product = await ctx.expectStatus<Product>(201, { method: 'POST', url: '/api/v1/products', payload: { title: 'Made in the other process' }, token: admin })
      const [created] = (await client.until((message) => message.event === 'product.created' && (message.data as Product).id === product.id)).slice(-1)
      expect(created).toMatchObject({ type: 'event', event: 'product.created', data: { id: product.id, title: 'Made in the other process' } })
      client.socket.close()
    } finally {
      const exited = once(child, 'exit')
      child.kill('SIGTERM')
      await exited
    }
  })
})
