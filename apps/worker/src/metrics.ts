/**
 * The worker's Prometheus metrics, served at GET /metrics beside /health (health.ts): process
 * defaults, every delivery attempt by outcome with its duration and why it failed, every
 * notification attempt by template and outcome, the jobs run
 * by task, the payments the sweeps settled, and the connections of Graphile Worker's pool. The
 * names are listed in docs/operations.md ("Metrics").
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type pg from 'pg'
import type { Settled } from '@commerce/payments'
import { attemptOutcome, timedOut, type DeferralReason, type NextStep, type Outcome } from './attempt-outcome.js'

const PREFIX = 'commerce_'

/** Why an attempt failed, as a bounded label: the status class of an answer, or what kept one from coming. */
export function failureReason(outcome: Outcome): string {
  if (outcome.statusCode !== null) return `http_${Math.floor(outcome.statusCode / 100)}xx`
  const error = outcome.error ?? ''
  if (timedOut(outcome)) return 'timeout'
  if (error.startsWith('refused:')) return 'refused'
  return 'connection'
}

export interface WorkerMetrics {
  registry: Registry
  /** Counts one delivery attempt (recorded) and observes its duration. */
  attempt(outcome: Outcome, next: NextStep): void
  /** Counts a delivery a job ended without recording an attempt (deleted: its subscription was deleted). */
  skipped(reason: 'deleted'): void
  /** Counts an attempt put off (not made), by why. */
  deferred(reason: DeferralReason): void
  /** Counts an attempt its job stopped waiting for (recorded when it ends). */
  handedOff(): void
  /** Counts one notification attempt (recorded) by template and what it led to. */
  notification(template: string, outcome: 'sent' | 'retrying' | 'failed'): void
  /** Counts a job run of a task and observes its duration. */
  job(task: string, result: 'completed' | 'error', seconds: number): void
  /** Counts transactions whose events the outbox relay turned into fan-out jobs. */
  relayed(transactions: number): void
  /** Counts a payment a sweep settled, or left waiting, by sweep and outcome (payment-sweeps.ts). */
  paymentSettled(source: 'expiry' | 'reconcile', outcome: Settled['kind']): void
  /** Reports this pool's connections at each scrape. */
  watchPool(pool: pg.Pool): void
}

export function createWorkerMetrics(): WorkerMetrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  // prom-client's nodejs_active_{handles,requests,resources}_total are gauges named like counters,
  // which promtool check metrics refuses: dropped, as each is the sum of the labelled gauge kept
  // beside it (nodejs_active_handles{type}, …).
  for (const metric of registry.getMetricsAsArray()) {
    if (metric instanceof Gauge && metric.name.endsWith('_total')) registry.removeSingleMetric(metric.name)
  }
  const attempts = new Counter({
    name: `${PREFIX}webhook_attempts_total`,
    help: 'Webhook delivery attempts by outcome: succeeded, retrying (failed, another attempt scheduled), failed (failed, no attempt left or 410 Gone)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  })
  const failures = new Counter({
    name: `${PREFIX}webhook_attempt_failures_total`,
    help: 'Failed webhook delivery attempts by reason: http_3xx, http_4xx, http_5xx, timeout, refused (not a public address), connection',
    labelNames: ['reason'] as const,
    registers: [registry],
  })
  const duration = new Histogram({
    name: `${PREFIX}webhook_attempt_duration_seconds`,
    help: "Webhook delivery attempts' duration, from sending the request to the end of the answer read, by whether it succeeded",
    labelNames: ['succeeded'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  })
  const skipped = new Counter({
    name: `${PREFIX}webhook_deliveries_skipped_total`,
    help: 'Deliveries a job ended without recording an attempt, by reason: deleted (the subscription was deleted meanwhile; an attempt made is dropped)',
    labelNames: ['reason'] as const,
    registers: [registry],
  })
  const deferred = new Counter({
    name: `${PREFIX}webhook_attempts_deferred_total`,
    help:
      "Webhook delivery attempts put off (not made, not failed), by reason: slowed_down (their endpoint's latest attempt timed out and it has one in flight), " +
      "connections_busy (every connection to their receiver's origin stayed in use while the job waited)",
    labelNames: ['reason'] as const,
    registers: [registry],
  })
  const handedOff = new Counter({
    name: `${PREFIX}webhook_attempts_handed_off_total`,
    help: 'Webhook delivery attempts still in flight when their job stopped waiting; recorded when they end',
    registers: [registry],
  })
  const notifications = new Counter({
    name: `${PREFIX}notification_attempts_total`,
    help: 'Notification (email) attempts by template and outcome: sent (accepted by the mail server, or written to a file), retrying (failed, another attempt scheduled), failed (failed, no attempt left)',
    labelNames: ['template', 'outcome'] as const,
    registers: [registry],
  })
  const jobs = new Counter({
    name: `${PREFIX}worker_jobs_total`,
    help: 'Jobs run by this worker, by task and result (error: the job threw and Graphile Worker retries it)',
    labelNames: ['task', 'result'] as const,
    registers: [registry],
  })
  const jobDuration = new Histogram({
    name: `${PREFIX}worker_job_duration_seconds`,
    help: 'How long jobs ran, by task',
    labelNames: ['task'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  })
  const relayed = new Counter({
    name: `${PREFIX}outbox_relayed_total`,
    help: 'Outbox rows (the events of one committed transaction) this worker turned into fan-out jobs',
    registers: [registry],
  })
  const settlements = new Counter({
    name: `${PREFIX}worker_payment_settlements_total`,
    help: 'Checkout payments the payment sweeps asked the provider about, by source (expiry, reconcile) and outcome (placed, declined, canceled, waiting, returned, earlier: settled by someone else first)',
    labelNames: ['source', 'outcome'] as const,
    registers: [registry],
  })
  const pools: pg.Pool[] = []
  new Gauge({
    name: `${PREFIX}db_pool_connections`,
    help: "Graphile Worker's pool's connections by state: in_use, idle",
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      let total = 0
      let idle = 0
      for (const pool of pools) {
        total += pool.totalCount
        idle += pool.idleCount
      }
      this.set({ state: 'in_use' }, total - idle)
      this.set({ state: 'idle' }, idle)
    },
  })
  new Gauge({
    name: `${PREFIX}db_pool_waiting`,
    help: "Queries waiting for a connection of Graphile Worker's pool",
    registers: [registry],
    collect() {
      this.set(pools.reduce((sum, pool) => sum + pool.waitingCount, 0))
    },
  })
  const succeeded = duration.labels({ succeeded: 'true' })
  const failed = duration.labels({ succeeded: 'false' })
  return {
    registry,
    attempt(outcome, next) {
      attempts.inc({ outcome: attemptOutcome(next) })
      if (!outcome.succeeded) failures.inc({ reason: failureReason(outcome) })
      ;(outcome.succeeded ? succeeded : failed).observe(outcome.durationMs / 1000)
    },
    skipped(reason) {
      skipped.inc({ reason })
    },
    deferred(reason) {
      deferred.inc({ reason })
    },
    handedOff() {
      handedOff.inc()
    },
    notification(template, outcome) {
      notifications.inc({ template, outcome })
    },
    job(task, result, seconds) {
      jobs.inc({ task, result })
      jobDuration.observe({ task }, seconds)
    },
    relayed(transactions) {
      relayed.inc(transactions)
    },
    paymentSettled(source, outcome) {
      settlements.inc({ source, outcome })
    },
    watchPool(pool) {
      pools.push(pool)
    },
  }
}
