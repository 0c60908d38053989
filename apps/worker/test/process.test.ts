/** The built process (`node dist/main.js`), as a deployment runs it. */
import { spawn } from 'node:child_process'
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createDb, newId, writeEvents, type NewEvent } from '@commerce/db'
import { createTestDatabase, orderEvent, sampleOrder, type TestDatabase } from '@commerce/db/testing'
import { startMailServer } from './mail-server.js'
import { startReceiver } from './receiver.js'

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url))
let database: TestDatabase

beforeAll(async () => {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run \`pnpm build\` in apps/worker first`)
  database = await createTestDatabase(inject('adminUrl'), inject('template'))
})

afterAll(async () => {
  await database?.drop()
})

/** The stdout so far of the worker spawned last. */
let currentStdout: () => string = () => ''

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
    currentStdout = () => stdout
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

/** Prometheus text as series to value, each series written `name{a="1",b="2"}` (labels sorted) or `name`. */
function seriesOf(text: string): Map<string, number> {
  const series = new Map<string, number>()
  for (const [, name, labels, value] of text.matchAll(/^(\w+)(?:\{(.*)\})? (\S+)$/gm)) {
    series.set(labels ? `${name}{${labels.split(/,(?=\w+=")/).sort().join(',')}}` : name!, Number(value))
  }
  return series
}

function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

describe('the worker process', () => {
  it("logs 'worker started' as JSON, masks the password, and exits 0 after a graceful SIGTERM, the runner stopped before the database", async () => {
    const url = new URL(database.url)
    // Whatever password the server needs, the log must not show it: give it one to hide.
    if (!url.password) url.password = 'not-shown-anywhere'
    const exit = await runWorker(
      // At debug, each part closed is logged.
      { DATABASE_URL: url.toString(), WORKER_CONCURRENCY: '3', LOG_LEVEL: 'debug' },
      { text: 'worker started', then: (pid) => process.kill(pid, 'SIGTERM') },
    )
    expect(exit).toMatchObject({ code: 0, signal: null })
    const lines = jsonLines(exit.stdout)
    const started = lines.find((line) => line.msg === 'worker started')
    expect(started).toMatchObject({ level: 'info', concurrency: 3, embedded: false })
    const masked = Object.assign(new URL(url), { password: '***' }).toString()
    expect(started!.database).toBe(masked)
    expect(exit.stdout).not.toContain(`:${url.password}@`)
    expect(lines.find((line) => line.msg === 'shutting down')).toMatchObject({ level: 'info', name: 'worker', signal: 'SIGTERM' })
    expect(lines.filter((line) => line.msg === 'closed').map((line) => line.step)).toEqual(['job runner', 'database'])
    expect(lines.at(-1)).toMatchObject({ msg: 'shut down', exit_code: 0 })
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

  it('serves GET /health while it runs, on the address HOST names (as the API does)', async () => {
    let answer: { status: number; body: unknown } | undefined
    let health: { address: string; port: number } | undefined
    const exit = await runWorker(
      { DATABASE_URL: database.url, WORKER_HEALTH_PORT: '0', HOST: '127.0.0.1' },
      {
        text: 'worker started',
        then: (pid) => {
          void (async () => {
            health = (jsonLines(currentStdout()).find((line) => line.msg === 'worker started') as { health: typeof health }).health!
            const response = await fetch(`http://127.0.0.1:${health.port}/health`)
            answer = { status: response.status, body: await response.json() }
            process.kill(pid, 'SIGTERM')
          })()
        },
      },
    )
    expect(exit.code).toBe(0)
    expect(answer).toEqual({ status: 200, body: { status: 'ok' } })
    // Loopback only: not every interface ('::' or '0.0.0.0').
    expect(health?.address).toBe('127.0.0.1')
  })

  it('loses no event when killed with SIGKILL in the middle of 1,000 deliveries: started again, it delivers every one', async () => {
    const receiver = await startReceiver()
    const handle = createDb({ url: database.url, poolMax: 2 })
    try {
      // A receiver that takes a few milliseconds, so deliveries are in flight when the worker dies.
      receiver.answer('/crash', (response) => setTimeout(() => response.writeHead(200).end(), 5))
      await handle.sql`insert into webhooks (id, url, events, secret) values (gen_random_uuid(), ${receiver.url('/crash')}, ${['order.created']}, 'crash-test-secret')`
      const written: string[] = []
      for (let batch = 0; batch < 10; batch++) {
        const events: NewEvent[] = Array.from({ length: 100 }, (_, n) => ({ kind: 'order.created', resourceId: newId(), data: { n: batch * 100 + n } }))
        written.push(...(await handle.db.transaction((tx) => writeEvents(tx, events))))
      }
      const delivered = () => new Set(receiver.received('/crash').map((request) => String(request.headers['webhook-id'])))
      // Short retries: on a loaded machine a slow answer times out, and its retry must come within the test.
      const env = {
        DATABASE_URL: database.url,
        WORKER_CONCURRENCY: '8',
        WEBHOOK_TIMEOUT_MS: '1000',
        WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s,1s,1s',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      }
      const waitThen = (done: () => boolean | Promise<boolean>, pid: number, signal: NodeJS.Signals) => {
        void (async () => {
          while (!(await done())) await new Promise((resolve) => setTimeout(resolve, 20))
          process.kill(pid, signal)
        })()
      }
      // Received is not finished: what the killed worker sent but never recorded is sent again
      // once its jobs are unlocked as stale, so the restarted worker runs until no job is left.
      const finished = async () => {
        if (delivered().size < 1000) return false
        const [row] = await handle.sql<{ jobs: string }[]>`select count(*) as jobs from graphile_worker._private_jobs`
        return row!.jobs === '0'
      }

      const killed = await runWorker(env, { text: 'worker started', then: (pid) => waitThen(() => delivered().size >= 300, pid, 'SIGKILL') })
      expect(killed.signal).toBe('SIGKILL')
      const before = delivered().size
      expect(before).toBeGreaterThanOrEqual(300)
      expect(before).toBeLessThan(1000)

      // What the killed worker was sending comes back through the fallback jobs of its handed-off
      // attempts, or through its own jobs once they are unlocked as stale (maintenance.test.ts).
      const restarted = await runWorker(env, { text: 'worker started', then: (pid) => waitThen(finished, pid, 'SIGTERM') })
      expect(restarted.code).toBe(0)
      expect(await handle.sql`select id from graphile_worker._private_jobs`).toEqual([])
      expect([...delivered()].sort()).toEqual([...written].sort())
      const [counts] = await handle.sql<{ succeeded: string; other: string }[]>`
        select count(*) filter (where status = 'succeeded') as succeeded, count(*) filter (where status <> 'succeeded') as other from webhook_deliveries`
      expect(counts).toEqual({ succeeded: '1000', other: '0' })
    } finally {
      await handle.close()
      await receiver.close()
    }
  })

  it('sends each email exactly once when killed with SIGKILL in the middle of 200: the messages in flight go after the restart, the ones sent do not go again', async () => {
    const own = await createTestDatabase(inject('adminUrl'), inject('template'))
    const mail = await startMailServer()
    const handle = createDb({ url: own.url, poolMax: 2 })
    try {
      for (let batch = 0; batch < 4; batch++) {
        const events = Array.from({ length: 50 }, (_, n) => orderEvent('order.paid', sampleOrder(`buyer${batch * 50 + n}@example.com`)))
        await handle.db.transaction((tx) => writeEvents(tx, events))
      }
      const env = {
        DATABASE_URL: own.url,
        WORKER_CONCURRENCY: '8',
        WEBHOOK_TIMEOUT_MS: '1000',
        SMTP_URL: mail.url,
        MAIL_FROM: 'Shop <shop@example.com>',
        SMTP_TIMEOUT: '1s',
        NOTIFICATION_RETRY_SCHEDULE: '1s,1s,1s',
      }
      const sent = async () => {
        const [row] = await handle.sql<{ sent: number }[]>`select count(*)::int as sent from notifications where status = 'sent'`
        return row!.sent
      }
      // Killed at a moment with messages in the middle of their SMTP exchange (held by the server
      // before its final reply) and every message the server accepted recorded: the worker dies
      // mid-batch, with jobs it fetched, ran or recorded but did not complete.
      const killWhenMidBatch = (pid: number) => {
        void (async () => {
          while (mail.received().length < 60) await new Promise((resolve) => setTimeout(resolve, 10))
          mail.hold()
          while (mail.held() === 0 || (await sent()) < mail.received().length) await new Promise((resolve) => setTimeout(resolve, 10))
          process.kill(pid, 'SIGKILL')
        })()
      }
      const killed = await runWorker(env, { text: 'worker started', then: killWhenMidBatch })
      expect(killed.signal).toBe('SIGKILL')
      const before = mail.received().length
      expect(before).toBeGreaterThanOrEqual(60)
      expect(before).toBeLessThan(200)
      // The server drops the messages whose client went away before their final reply, as a real one does.
      while (mail.held() > 0) await new Promise((resolve) => setTimeout(resolve, 10))
      mail.release()

      const finished = async () => {
        const [row] = await handle.sql<{ jobs: string }[]>`select count(*) as jobs from graphile_worker._private_jobs`
        return (await sent()) === 200 && row!.jobs === '0'
      }
      const restarted = await runWorker(env, {
        text: 'worker started',
        then: (pid) => {
          void (async () => {
            while (!(await finished())) await new Promise((resolve) => setTimeout(resolve, 20))
            process.kill(pid, 'SIGTERM')
          })()
        },
      })
      expect(restarted.code).toBe(0)
      const received = mail.received()
      expect(received).toHaveLength(200)
      expect(new Set(received.map((entry) => entry.to)).size).toBe(200)
      const notifications = await handle.sql<{ message_id: string; attempts: number }[]>`select message_id, attempts from notifications`
      expect(notifications).toHaveLength(200)
      expect(new Set(received.map((entry) => entry.mail.messageId))).toEqual(new Set(notifications.map((row) => row.message_id)))
      // One recorded attempt each: those killed in flight were never recorded, and none was sent twice.
      expect(notifications.every((row) => row.attempts === 1)).toBe(true)
      const [attempts] = await handle.sql<{ count: number }[]>`select count(*)::int as count from notification_attempts`
      expect(attempts!.count).toBe(200)
    } finally {
      await handle.close()
      await mail.close()
      await own.drop()
    }
  })

  it('serves GET /metrics counting real deliveries, and logs each attempt with its event id and the request id that wrote the event', async () => {
    // A database of its own: the deliveries here must not meet the other tests' counts.
    const own = await createTestDatabase(inject('adminUrl'), inject('template'))
    const receiver = await startReceiver()
    const handle = createDb({ url: own.url, poolMax: 2 })
    try {
      receiver.answer('/fails', (response) => response.writeHead(500).end('not today'))
      const secret = 'metrics-test-secret-never-logged'
      const [okHook] = await handle.sql<{ id: string }[]>`insert into webhooks (id, url, events, secret)
        values (gen_random_uuid(), ${receiver.url('/ok')}, ${['order.paid']}, ${secret}) returning id`
      const [failingHook] = await handle.sql<{ id: string }[]>`insert into webhooks (id, url, events, secret)
        values (gen_random_uuid(), ${receiver.url('/fails')}, ${['order.refunded']}, ${secret}) returning id`
      // Two events of one transaction (one fan-out job), as if written by two API requests.
      const [paidId, refundedId] = await handle.db.transaction((tx) =>
        writeEvents(tx, [
          { kind: 'order.paid', resourceId: newId(), data: { marker: 'body-not-logged' }, requestId: 'req-paid-1' },
          { kind: 'order.refunded', resourceId: newId(), data: { marker: 'body-not-logged' }, requestId: 'req-refunded-2' },
        ]),
      )

      let series = new Map<string, number>()
      const exit = await runWorker(
        { DATABASE_URL: own.url, WORKER_HEALTH_PORT: '0', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE: '1h' },
        {
          text: 'worker started',
          then: (pid) => {
            void (async () => {
              const started = jsonLines(currentStdout()).find((line) => line.msg === 'worker started') as { health: { port: number } }
              const scrape = async () => seriesOf(await (await fetch(`http://127.0.0.1:${started.health.port}/metrics`)).text())
              // Both attempts are counted once the fan-out job has recorded them.
              await expect.poll(async () => (series = await scrape()).get('commerce_worker_jobs_total{result="completed",task="fanout-event"}'), { timeout: 20_000 }).toBe(1)
              process.kill(pid, 'SIGTERM')
            })().catch(() => process.kill(pid, 'SIGTERM'))
          },
        },
      )
      expect(exit.code).toBe(0)
      expect(receiver.received('/ok')).toHaveLength(1)
      expect(receiver.received('/fails')).toHaveLength(1)

      expect(series.get('commerce_webhook_attempts_total{outcome="succeeded"}')).toBe(1)
      expect(series.get('commerce_webhook_attempts_total{outcome="retrying"}')).toBe(1)
      expect(series.get('commerce_webhook_attempts_total{outcome="failed"}')).toBeUndefined()
      expect(series.get('commerce_webhook_attempt_failures_total{reason="http_5xx"}')).toBe(1)
      expect(series.get('commerce_webhook_attempt_duration_seconds_count{succeeded="true"}')).toBe(1)
      expect(series.get('commerce_webhook_attempt_duration_seconds_count{succeeded="false"}')).toBe(1)
      expect(series.get('commerce_worker_job_duration_seconds_count{task="fanout-event"}')).toBe(1)
      // Graphile Worker's LISTEN connection stays checked out of the job pool.
      expect(series.get('commerce_db_pool_connections{state="in_use"}')).toBeGreaterThanOrEqual(1)
      expect(series.get('commerce_db_pool_waiting')).toBe(0)
      expect(series.has('process_resident_memory_bytes')).toBe(true)

      const deliveries = await handle.sql<{ id: string; event_id: string }[]>`select id, event_id from webhook_deliveries`
      const deliveryOf = (eventId: string) => deliveries.find((delivery) => delivery.event_id === eventId)?.id
      const lines = jsonLines(exit.stdout)
      expect(lines.find((line) => line.msg === 'webhook delivered')).toMatchObject({
        level: 'info',
        event_id: paidId,
        event: 'order.paid',
        request_id: 'req-paid-1',
        webhook_id: okHook!.id,
        delivery_id: deliveryOf(paidId!),
        attempt: 1,
        outcome: 'succeeded',
        status_code: 200,
        duration_ms: expect.any(Number),
      })
      expect(lines.find((line) => line.msg === 'webhook attempt failed')).toMatchObject({
        level: 'warn',
        event_id: refundedId,
        request_id: 'req-refunded-2',
        webhook_id: failingHook!.id,
        delivery_id: deliveryOf(refundedId!),
        attempt: 1,
        outcome: 'retrying',
        status_code: 500,
        error: 'HTTP 500',
        next_attempt_at: expect.any(String),
      })
      // Neither the secret, the event's data, the receiver's answer nor its URL reach the logs.
      for (const hidden of [secret, 'body-not-logged', 'not today', receiver.url('/')]) expect(exit.stdout).not.toContain(hidden)
    } finally {
      await handle.close()
      await receiver.close()
      await own.drop()
    }
  })

  it("names the payment provider in 'worker started', never its keys", async () => {
    const keys = { STRIPE_SECRET_KEY: 'sk_test_not_shown_0123456789', STRIPE_WEBHOOK_SECRET: 'whsec_not_shown_0123456789' }
    const exit = await runWorker({ DATABASE_URL: database.url, ...keys }, { text: 'worker started', then: (pid) => process.kill(pid, 'SIGTERM') })
    expect(exit).toMatchObject({ code: 0, signal: null })
    expect(jsonLines(exit.stdout).find((line) => line.msg === 'worker started')).toMatchObject({ payment_provider: 'stripe' })
    expect(exit.stdout + exit.stderr).not.toContain('not_shown')
  })

  it('exits 1 naming the missing variable when half of the Stripe keys is set, without showing the other', async () => {
    const exit = await runWorker({ DATABASE_URL: database.url, STRIPE_SECRET_KEY: 'sk_test_not_shown_0123456789' })
    expect(exit.code).toBe(1)
    expect(exit.stderr.trim()).toBe('Invalid environment:\n  - STRIPE_WEBHOOK_SECRET is required with STRIPE_SECRET_KEY (Stripe needs both)')
    expect(exit.stdout).toBe('')
  })

  it('exits 1 naming the variable when WORKER_CONCURRENCY is not a number', async () => {
    const exit = await runWorker({ DATABASE_URL: database.url, WORKER_CONCURRENCY: 'abc' })
    expect(exit.code).toBe(1)
    expect(exit.stderr.trim()).toBe("Invalid environment:\n  - WORKER_CONCURRENCY must be an integer from 1 to 1000 (got 'abc')")
    expect(exit.stdout).toBe('')
  })
})
