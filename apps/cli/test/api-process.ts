/** A real API process (apps/api/dist/main.js) on a test database, for the CLI to call. */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'

const API_MAIN = fileURLToPath(new URL('../../api/dist/main.js', import.meta.url))
export const WORKER_MAIN = fileURLToPath(new URL('../../worker/dist/main.js', import.meta.url))

export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** SIGTERM, and wait for the exit. */
export async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

/** Environment for the API and worker processes on `databaseUrl`, without the test runner's DATABASE_URL. */
export function processEnv(databaseUrl: string): NodeJS.ProcessEnv {
  const { DATABASE_URL: _unset, ...env } = process.env
  return { ...env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }
}

/** Starts the API and resolves once /health answers. */
export async function startApi(databaseUrl: string): Promise<{ baseUrl: string; process: ChildProcess }> {
  if (!existsSync(API_MAIN)) throw new Error(`${API_MAIN} is missing: run pnpm build`)
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  const child = spawn(process.execPath, [API_MAIN], {
    env: {
      ...processEnv(databaseUrl),
      PORT: String(port),
      HOST: '127.0.0.1',
      JWT_SECRET: 'cli-test-secret-cli-test-secret-0123456789',
      RATE_LIMIT_MAX: '100000',
      SCRYPT_COST: '1024',
    },
    stdio: 'ignore',
  })
  for (let tries = 0; ; tries++) {
    if (await fetch(`${baseUrl}/health`).then((response) => response.ok, () => false)) return { baseUrl, process: child }
    if (tries > 150 || child.exitCode !== null) throw new Error('the API did not start')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
