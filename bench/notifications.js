/**
 * The notification benchmark (`pnpm build && node bench/notifications.js [--webhooks]`): order
 * confirmation emails accepted per second from one worker process (apps/worker/dist/main.js, the
 * settings of bench/webhooks.js) by an SMTP server in this process that accepts every message,
 * with the worker's and PostgreSQL's CPU time per email; then event-commit-to-accepted latency of
 * single events. With --webhooks, each round also runs webhooks.js's delivery scenario (same
 * events count and settings, through worker-runs.js), for the figures side by side.
 *
 * Environment: DATABASE_URL (a server: the bench creates and drops its own database
 * `commerce_bench_notifications` there), else the embedded PostgreSQL; BENCH_EVENTS (5000),
 * BENCH_WORKER_CONCURRENCY (16), BENCH_ROUNDS (3, the scenarios in turns, medians reported),
 * BENCH_LATENCY_EVENTS (300), BENCH_NODE_ARGS (node flags for the worker, e.g. --cpu-prof).
 * Exits 1 when an email is missing or not what the event should make.
 */
import os from 'node:os'
import { SMTPServer } from 'smtp-server'
import { createDb } from '@commerce/db'
import { orderEvent, sampleOrder } from '@commerce/db/testing'
import { openScratchDatabase } from './scratch-database.js'
import {
  CONCURRENCY,
  EVENTS,
  LATENCY_EVENTS,
  ROUNDS,
  deliveriesRun,
  deliveryLatencies,
  median,
  now,
  singleEventLatencies,
  startReceiver,
  subscribeReceiver,
  throughputRun,
  writeResults,
} from './worker-runs.js'

const DATABASE = 'commerce_bench_notifications'
const WITH_WEBHOOKS = process.argv.includes('--webhooks')

/** An SMTP server on 127.0.0.1 that accepts every message and notes when each recipient's was accepted. */
async function startMailServer() {
  const arrivals = new Map()
  let sample
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      // Only the first message is kept whole (to check it); parsing every one would load this process.
      const chunks = sample === undefined ? [] : undefined
      stream.on('data', (chunk) => chunks?.push(chunk))
      stream.on('end', () => {
        const to = session.envelope.rcptTo[0].address
        if (!arrivals.has(to)) arrivals.set(to, now())
        if (chunks) sample ??= Buffer.concat(chunks).toString()
        callback(null, 'queued')
      })
    },
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `smtp://127.0.0.1:${server.server.address().port}`,
    arrivals,
    sample: () => sample,
    close: () => new Promise((resolve) => server.close(resolve)),
  }
}

/** An order.paid event as the API writes it (the whole order: three lines, a coupon, tax, shipping), to `email`. */
const orderPaid = (email) => orderEvent('order.paid', sampleOrder(email))

const recipient = (label, n) => `${label}-${n}@bench.example`
const round1 = (value) => Math.round(value * 10) / 10

async function main() {
  const scratch = await openScratchDatabase(DATABASE)
  const { url } = scratch
  const { db, sql, close } = createDb({ url, poolMax: 4 })
  const mail = await startMailServer()
  const receiver = WITH_WEBHOOKS ? await startReceiver() : undefined
  const env = { SMTP_URL: mail.url, MAIL_FROM: 'Bench Shop <shop@bench.example>' }
  const context = { db, sql, url, database: DATABASE }
  // The subscription is active only in the webhook scenario, so each run does one kind of work.
  const webhooksActive = (active) => sql`update webhooks set is_active = ${active}`
  const results = { startedAt: new Date().toISOString(), host: { cpus: os.cpus().length, node: process.version }, events: EVENTS, concurrency: CONCURRENCY, rounds: [] }
  const problems = []
  try {
    console.log(`bench: ${EVENTS} order confirmations${WITH_WEBHOOKS ? ' and webhook deliveries' : ''}, worker concurrency ${CONCURRENCY}, ${os.cpus().length} CPUs`)
    if (receiver) await subscribeReceiver(sql, receiver)
    for (let round = 1; round <= ROUNDS; round++) {
      if (receiver) await webhooksActive(false)
      const emails = await throughputRun({ ...context, env, count: EVENTS, eventOf: (n) => orderPaid(recipient(`r${round}`, n)), arrivals: mail.arrivals })
      const entry = { emails }
      let line = `  [${round}/${ROUNDS}] emails ${emails.firstToLastPerSecond.toFixed(0)}/s (${emails.perSecond.toFixed(0)}/s from the first commit), worker ${(1000 * emails.workerCpuMsPerEvent).toFixed(0)} µs CPU per email, postgres ${(1000 * emails.databaseCpuMsPerEvent).toFixed(0)} µs`
      if (receiver) {
        await webhooksActive(true)
        const deliveries = await deliveriesRun({ ...context, receiver, count: EVENTS })
        entry.deliveries = deliveries
        entry.ratio = emails.firstToLastPerSecond / deliveries.firstToLastPerSecond
        line += `; deliveries ${deliveries.firstToLastPerSecond.toFixed(0)}/s (${deliveries.perSecond.toFixed(0)}/s), worker ${(1000 * deliveries.workerCpuMsPerEvent).toFixed(0)} µs per delivery; emails ÷ deliveries ${(100 * entry.ratio).toFixed(1)} %`
      }
      results.rounds.push(entry)
      console.log(line)
    }

    // Latency: single events, one per transaction, on an idle worker.
    if (receiver) await webhooksActive(false)
    results.latencyMs = await singleEventLatencies({
      ...context,
      env,
      count: LATENCY_EVENTS,
      eventOf: (n) => orderPaid(recipient('latency', n)),
      arrivedAt: (_, n) => mail.arrivals.get(recipient('latency', n)),
    })
    if (receiver) {
      await webhooksActive(true)
      results.deliveryLatencyMs = await deliveryLatencies({ ...context, receiver, count: LATENCY_EVENTS })
    }

    // Every email made, sent and recorded once; and the one kept is the order's confirmation.
    const [counts] = await sql`select count(*)::int as made, count(*) filter (where status = 'sent' and attempts = 1)::int as sent from notifications`
    const expected = ROUNDS * EVENTS + LATENCY_EVENTS
    if (counts.made !== expected || counts.sent !== expected) problems.push(`${expected} notifications expected sent at the first attempt: ${counts.made} made, ${counts.sent} so`)
    if (!/^Subject: Order 10\d+ confirmed$/m.test(mail.sample() ?? '')) problems.push('the email accepted is not an order confirmation')
  } finally {
    await receiver?.close()
    await mail.close()
    await close()
    await scratch.drop()
  }

  const medianOf = (pick) => median(results.rounds.map(pick))
  const summary = {
    events: EVENTS,
    rounds: ROUNDS,
    concurrency: CONCURRENCY,
    emailsPerSecond: Math.round(medianOf((r) => r.emails.firstToLastPerSecond)),
    emailsPerSecondFromFirstCommit: Math.round(medianOf((r) => r.emails.perSecond)),
    workerCpuUsPerEmail: Math.round(1000 * medianOf((r) => r.emails.workerCpuMsPerEvent)),
    postgresCpuUsPerEmail: Math.round(1000 * medianOf((r) => r.emails.databaseCpuMsPerEvent)),
    emailLatencyMs: { p50: round1(results.latencyMs.p50), p99: round1(results.latencyMs.p99) },
  }
  if (receiver) {
    Object.assign(summary, {
      deliveriesPerSecond: Math.round(medianOf((r) => r.deliveries.firstToLastPerSecond)),
      deliveriesPerSecondFromFirstCommit: Math.round(medianOf((r) => r.deliveries.perSecond)),
      workerCpuUsPerDelivery: Math.round(1000 * medianOf((r) => r.deliveries.workerCpuMsPerEvent)),
      postgresCpuUsPerDelivery: Math.round(1000 * medianOf((r) => r.deliveries.databaseCpuMsPerEvent)),
      deliveryLatencyMs: { p50: round1(results.deliveryLatencyMs.p50), p99: round1(results.deliveryLatencyMs.p99) },
      emailsPerDelivery: Math.round(1000 * medianOf((r) => r.ratio)) / 1000,
    })
  }
  results.summary = summary
  results.problems = problems
  console.log(JSON.stringify(summary, null, 2))
  for (const problem of problems) console.log(`  FAIL  ${problem}`)
  writeResults('notifications', results)
  process.exit(problems.length === 0 ? 0 : 1)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
