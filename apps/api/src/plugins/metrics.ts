/**
 * Prometheus metrics (`GET /metrics`, routes/system): process defaults, HTTP requests by method,
 * route pattern and status, and — read from PostgreSQL when scraped (@commerce/db sql/health.ts)
 * — the server's connections of our pools and the job queue's depth. Other plugins and routes add
 * theirs to `app.metrics` (the WebSocket feed: routes/ws). The names are listed in
 * docs/operations.md ("Metrics").
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, onResponseHookHandler, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import { JOB_STATES, TASKS, sampleDatabase, type DatabaseSample } from '@commerce/db'

declare module 'fastify' {
  interface FastifyInstance {
    metrics: Registry
  }
}

/** Our metrics' common prefix. */
export const METRIC_PREFIX = 'commerce_'

/** The route label of requests that matched no route (404s), so probed URLs add no series. */
const UNMATCHED = 'unmatched'

/** A scrape waits at most this long for the database (a busy pool, a slow count) before it answers without those figures. */
const DATABASE_SAMPLE_TIMEOUT_MS = 2_000

/** The labelled children of one method, route and status, kept so observing skips prom-client's label hashing. */
interface RequestSeries {
  count: ReturnType<Counter<'method' | 'route' | 'status_code'>['labels']>
  duration: ReturnType<Histogram<'method' | 'route' | 'status_code'>['labels']>
}

export default fp(
  async function metricsPlugin(app: FastifyInstance) {
    const registry = new Registry()
    collectDefaultMetrics({ register: registry })
    // prom-client's nodejs_active_{handles,requests,resources}_total are gauges named like counters,
    // which promtool check metrics refuses: dropped, as each is the sum of the labelled gauge kept
    // beside it (nodejs_active_handles{type}, …).
    for (const metric of registry.getMetricsAsArray()) {
      if (metric instanceof Gauge && metric.name.endsWith('_total')) registry.removeSingleMetric(metric.name)
    }
    app.decorate('metrics', registry)

    const requests = new Counter({
      name: `${METRIC_PREFIX}http_requests_total`,
      help: 'HTTP requests answered, by method, route pattern and status code',
      labelNames: ['method', 'route', 'status_code'] as const,
      registers: [registry],
    })
    const requestDuration = new Histogram({
      name: `${METRIC_PREFIX}http_request_duration_seconds`,
      help: 'HTTP request duration by method, route pattern and status code',
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    })

    /** A recorder for one route pattern: its series by method and status, made on first use. */
    function routeRecorder(route: string) {
      const byMethod = new Map<string, Map<number, RequestSeries>>()
      return (request: FastifyRequest, reply: FastifyReply) => {
        let byStatus = byMethod.get(request.method)
        if (!byStatus) byMethod.set(request.method, (byStatus = new Map()))
        let series = byStatus.get(reply.statusCode)
        if (!series) {
          const labels = { method: request.method, route, status_code: reply.statusCode }
          series = { count: requests.labels(labels), duration: requestDuration.labels(labels) }
          byStatus.set(reply.statusCode, series)
        }
        series.count.inc()
        series.duration.observe(reply.elapsedTime / 1000)
      }
    }

    // Each route gets its own onResponse hook that knows its pattern: nothing is looked up or
    // built per request (request.routeOptions would build an object each time).
    app.addHook('onRoute', (route: RouteOptions) => {
      const record = routeRecorder(route.url ?? UNMATCHED)
      const hook: onResponseHookHandler = (request, reply, done) => {
        record(request, reply)
        done()
      }
      route.onResponse = route.onResponse === undefined ? [hook] : [...(Array.isArray(route.onResponse) ? route.onResponse : [route.onResponse]), hook]
    })
    // Requests no route matched have no route hooks: the not-found handler's answers.
    const recordUnmatched = routeRecorder(UNMATCHED)
    app.addHook('onResponse', (request, reply, done) => {
      if (request.is404) recordUnmatched(request, reply)
      done()
    })

    // Read on scrape: one query shared by the gauges of one scrape, bounded in time.
    let sampling: Promise<DatabaseSample | undefined> | undefined
    const scrapeSample = () =>
      (sampling ??= readDatabase().finally(() => {
        sampling = undefined
      }))
    async function readDatabase(): Promise<DatabaseSample | undefined> {
      try {
        return await sampleDatabase(app.sql, DATABASE_SAMPLE_TIMEOUT_MS)
      } catch (error) {
        app.log.warn({ err: error }, 'metrics: could not read database connections and queue depth')
        return undefined
      }
    }

    new Gauge({
      name: `${METRIC_PREFIX}db_connections`,
      help: "Connections to this database whose application_name starts with commerce (every instance's pools, as the server sees them), by application_name and state",
      labelNames: ['application_name', 'state'] as const,
      registers: [registry],
      async collect() {
        const sample = await scrapeSample()
        // Unreadable: no series rather than stale figures.
        this.reset()
        for (const row of sample?.connections ?? []) this.set({ application_name: row.name, state: row.state }, row.count)
      },
    })
    new Gauge({
      name: `${METRIC_PREFIX}queue_jobs`,
      help: 'Graphile Worker jobs by task and state: ready (due, waiting for a worker), scheduled (run_at later), locked (running), failed (out of attempts)',
      labelNames: ['task', 'state'] as const,
      registers: [registry],
      async collect() {
        const sample = await scrapeSample()
        this.reset()
        if (!sample) return
        // Our tasks' series are always there, zero when empty, so an alert on them never sees a gap.
        for (const task of Object.values(TASKS)) for (const state of JOB_STATES) this.set({ task, state }, 0)
        for (const row of sample.jobs) this.set({ task: row.task, state: row.state }, row.count)
      },
    })
    new Gauge({
      name: `${METRIC_PREFIX}event_outbox_rows`,
      help: "Committed transactions whose events no worker's outbox relay has turned into a fan-out job yet",
      registers: [registry],
      async collect() {
        const sample = await scrapeSample()
        this.reset()
        if (sample) this.set(sample.outboxRows)
      },
    })
  },
  { name: 'metrics', dependencies: ['database'] },
)
