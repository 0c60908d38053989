/** Real API and worker processes (their built dist/main.js) on a test database, for multi-process tests. */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'

const API_MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url))
const WORKER_MAIN = fileURLToPath(new URL('../../worker/dist/main.js', import.meta.url))

export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** Its standard output to `stdout` when given (in chunks, not lines), else ignored. */
const stdioOf = (stdout?: (text: string) => void): StdioOptions => ['ignore', stdout ? 'pipe' : 'ignore', 'ignore']

function pipeStdout(child: ChildProcess, stdout?: (text: string) => void) {
  if (stdout) child.stdout!.on('data', (chunk: Buffer) => stdout(chunk.toString()))
  return child
}

/** Starts a worker process. */
export function startWorker(databaseUrl: string, env: Record<string, string> = {}, stdout?: (text: string) => void): ChildProcess {
  if (!existsSync(WORKER_MAIN)) throw new Error(`${WORKER_MAIN} is missing: run pnpm build`)
  const child = spawn(process.execPath, [WORKER_MAIN], { env: { ...processEnv(databaseUrl), ...env }, stdio: stdioOf(stdout) })
  return pipeStdout(child, stdout)
}

/** SIGTERM, and wait for the exit. */
export async function stopProcess(child: ChildProcess | undefined): Promise<void> {
  // Exited already: by itself (exitCode) or by a signal (signalCode).
  if (!child || child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise((resolve) => child.once('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

/**
 * Environment for the API and worker processes on `databaseUrl`, without the test runner's
 * DATABASE_URL and REDIS_URL: a process's rate limit is its own, in memory, unless a test passes
 * REDIS_URL (with Redis, every process of the run would count 127.0.0.1's requests in one budget,
 * and a later process with the default limit would answer 429).
 */
export function processEnv(databaseUrl: string): NodeJS.ProcessEnv {
  const { DATABASE_URL: _database, REDIS_URL: _redis, ...env } = process.env
  // No customer emails unless a test asks (they would be written to the workspace's .data/mail/).
  return { ...env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', NOTIFICATIONS_ENABLED: 'false' }
}

/** The JWT secret of the API processes, so that a test can sign in on one and call another. */
export const PROCESS_JWT_SECRET = 'process-test-secret-process-test-secret-0123456789'

/** Starts an API process and resolves once /health answers; `env` adds to or overrides its environment. */
export async function startApi(
  databaseUrl: string,
  env: Record<string, string> = {},
  stdout?: (text: string) => void,
): Promise<{ baseUrl: string; process: ChildProcess }> {
  if (!existsSync(API_MAIN)) throw new Error(`${API_MAIN} is missing: run pnpm build`)
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  const child = spawn(process.execPath, [API_MAIN], {
    env: {
      ...processEnv(databaseUrl),
      PORT: String(port),
      HOST: '127.0.0.1',
      JWT_SECRET: PROCESS_JWT_SECRET,
      RATE_LIMIT_MAX: '100000',
      SCRYPT_COST: '1024',
      ...env,
    },
    stdio: stdioOf(stdout),
  })
  pipeStdout(child, stdout)
  // Up to 30 s: a start-up on a machine busy with other test files can take 10 s or more.
  for (let tries = 0; ; tries++) {
    if (await fetch(`${baseUrl}/health`).then((response) => response.ok, () => false)) return { baseUrl, process: child }
    if (tries > 300 || child.exitCode !== null) {
      child.kill('SIGKILL')
      throw new Error('the API did not start')
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
