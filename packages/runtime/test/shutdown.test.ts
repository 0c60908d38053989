/** handleShutdown in a real process (test/fixtures/stopping-process.js, built dist): signals, order, grace period, exit codes. */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'

const FIXTURE = fileURLToPath(new URL('./fixtures/stopping-process.js', import.meta.url))

beforeAll(() => {
  if (!existsSync(fileURLToPath(new URL('../dist/shutdown.js', import.meta.url)))) throw new Error('run `pnpm build` in packages/runtime first')
})

interface Run {
  code: number | null
  lines: Record<string, unknown>[]
  elapsedMs: number
}

/** Starts the fixture, sends `signals` (one after another, `gapMs` apart) once it is up, and waits for its exit. */
function run(env: Record<string, string>, signals: NodeJS.Signals[] = []): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [FIXTURE], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'inherit'] })
    let output = ''
    let signalledAt = 0
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`no exit in time: ${output}`))
    }, 20_000)
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      if (signalledAt === 0 && output.includes('"msg":"up"')) {
        signalledAt = performance.now()
        signals.forEach((signal, n) => setTimeout(() => child.kill(signal), n * 30))
      }
    })
    child.on('exit', (code) => {
      clearTimeout(timer)
      const lines = output.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>)
      resolve({ code, lines, elapsedMs: performance.now() - signalledAt })
    })
  })
}

const closed = (lines: Record<string, unknown>[]) => lines.filter((line) => line.msg === 'closed').map((line) => line.step)

describe('handleShutdown', () => {
  it('on SIGTERM closes every part, the last opened first, and exits 0', async () => {
    const { code, lines } = await run({}, ['SIGTERM'])
    expect(code).toBe(0)
    expect(lines.find((line) => line.msg === 'shutting down')).toMatchObject({ level: 'info', signal: 'SIGTERM' })
    expect(closed(lines)).toEqual(['http server', 'queue', 'database'])
    expect(lines.at(-1)).toMatchObject({ msg: 'shut down', exit_code: 0, duration_ms: expect.any(Number) })
  })

  it('on SIGINT does the same', async () => {
    const { code, lines } = await run({}, ['SIGINT'])
    expect(code).toBe(0)
    expect(closed(lines)).toEqual(['http server', 'queue', 'database'])
  })

  it('goes on closing the others when one fails, and then exits 1', async () => {
    const { code, lines } = await run({ FAIL_STEP: 'queue' }, ['SIGTERM'])
    expect(code).toBe(1)
    expect(closed(lines)).toEqual(['http server', 'database'])
    expect(lines.find((line) => line.msg === 'could not close')).toMatchObject({ level: 'error', step: 'queue', err: { message: 'queue would not close' } })
  })

  it('exits 1 when closing outlasts the grace period, naming what it waited for', async () => {
    const { code, lines, elapsedMs } = await run({ CLOSE_MS: '5000', GRACE_MS: '300' }, ['SIGTERM'])
    expect(code).toBe(1)
    expect(elapsedMs).toBeLessThan(4000)
    expect(lines.find((line) => line.msg === 'shutdown grace period over: exiting')).toMatchObject({ level: 'error', grace_ms: 300 })
    expect(closed(lines)).toEqual([])
  })

  it('exits 1 at once on a second signal while closing', async () => {
    const { code, lines, elapsedMs } = await run({ CLOSE_MS: '3000' }, ['SIGTERM', 'SIGINT'])
    expect(code).toBe(1)
    expect(elapsedMs).toBeLessThan(2500)
    expect(lines.find((line) => line.msg === 'second signal: exiting without waiting')).toMatchObject({ level: 'warn', signal: 'SIGINT' })
  })

  it('after an uncaught error logs it, closes everything and exits 1', async () => {
    const { code, lines } = await run({ CRASH: '1' })
    expect(code).toBe(1)
    expect(lines.find((line) => line.msg === 'shutting down')).toMatchObject({ level: 'error', reason: 'uncaught exception', err: { message: 'nobody caught this' } })
    expect(closed(lines)).toEqual(['http server', 'queue', 'database'])
  })
})
