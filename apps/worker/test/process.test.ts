/** The built process (`node dist/main.js`), as a deployment runs it. */
import { spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createTestDatabase, type TestDatabase } from '@commerce/db/testing'

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url))
let database: TestDatabase

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`pnpm build\` in apps/worker first`)
  database = await createTestDatabase(inject('adminUrl'), inject('template'))
})

afterAll(async () => {
  await database?.drop()
})

interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** Spawns the worker; `whenStdout` runs once stdout contains the given text. */
function runWorker(env: Record<string, string>, whenStdout?: { text: string; then: (pid: number) => void }): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const { DATABASE_URL: _ignored, ...inherited } = process.env
    const child = spawn(process.execPath, [MAIN], { env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    let fired = false
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`worker did not exit in time\nstdout: ${stdout}\nstderr: ${stderr}`))
    }, 45_000)
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
      if (whenStdout && !fired && stdout.includes(whenStdout.text)) {
        fired = true
        whenStdout.then(child.pid!)
      }
    })
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('error', reject)
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

describe('the worker process', () => {
  it("logs 'worker started' as JSON, masks the password, and exits 0 after a graceful SIGTERM", async () => {
    const url = new URL(database.url)
    // Whatever password the server needs, the log must not show it: give it one to hide.
    if (!url.password) url.password = 'not-shown-anywhere'
    const exit = await runWorker(
      { DATABASE_URL: url.toString(), WORKER_CONCURRENCY: '3' },
      { text: 'worker started', then: (pid) => process.kill(pid, 'SIGTERM') },
    )
    expect(exit).toMatchObject({ code: 0, signal: null })
    const lines = jsonLines(exit.stdout)
    const started = lines.find((line) => line.msg === 'worker started')
    expect(started).toMatchObject({ level: 'info', concurrency: 3, embedded: false })
    const masked = Object.assign(new URL(url), { password: '***' }).toString()
    expect(started!.database).toBe(masked)
    expect(exit.stdout).not.toContain(`:${url.password}@`)
    expect(lines.map((line) => line.msg)).toEqual(
      expect.arrayContaining(['stopping: waiting for running jobs', 'worker stopped']),
    )
    expect(lines.find((line) => line.msg === 'stopping: waiting for running jobs')).toMatchObject({ signal: 'SIGTERM' })
  })

  it('without DATABASE_URL starts an embedded PostgreSQL in the data directory and stops it on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'commerce-worker-'))
    // Run as root, PostgreSQL runs as the `postgres` user, which must reach the folder.
    chmodSync(dataDir, 0o755)
    try {
      const exit = await runWorker(
        { COMMERCE_DATA_DIR: dataDir },
        { text: 'worker started', then: (pid) => process.kill(pid, 'SIGTERM') },
      )
      expect(exit).toMatchObject({ code: 0, signal: null })
      const started = jsonLines(exit.stdout).find((line) => line.msg === 'worker started')
      expect(started).toMatchObject({ embedded: true, database: expect.stringMatching(/^postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/commerce$/) })
      expect(existsSync(join(dataDir, 'postgres', 'PG_VERSION'))).toBe(true)
      // The worker started the cluster, so it stopped it: no postmaster is left running.
      expect(existsSync(join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false)
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })

  it('exits 1 naming the variable when WORKER_CONCURRENCY is not a number', async () => {
    const exit = await runWorker({ DATABASE_URL: database.url, WORKER_CONCURRENCY: 'abc' })
    expect(exit.code).toBe(1)
    expect(exit.stderr.trim()).toBe(
      "Invalid environment: WORKER_CONCURRENCY must be an integer >= 1 (at most 1000) (got 'abc')",
    )
    expect(exit.stdout).toBe('')
  })
})
