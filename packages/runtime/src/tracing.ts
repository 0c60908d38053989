/**
 * OpenTelemetry traces, sent over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT. A process imports
 * this module only when that variable is set (`await import('@commerce/runtime/tracing')`), so
 * without it nothing of OpenTelemetry is loaded and no request or job does any of this work.
 *
 * What makes spans, each a child of the span active where it starts:
 * - each HTTP request of a Fastify app built after startTracing (@fastify/otel, registered on
 *   the app's initialization): a SERVER span `GET /api/v1/products/:id` carrying `request_id`,
 *   joined to the caller's trace when it sends `traceparent`; its handler is a child span;
 * - each statement of postgres.js (the API's and the worker's database layer), when a span is
 *   active: postgres.js has no OpenTelemetry instrumentation, so a span is wrapped around each
 *   query's execution here;
 * - each statement of pg (Graphile Worker's own queries) inside a span
 *   (@opentelemetry/instrumentation-pg, `requireParentSpan`: a poll for jobs makes none);
 * - what the worker wraps with `inSpan`: each job, each webhook delivery.
 */
import { createRequire } from 'node:module'
import { SpanKind, SpanStatusCode, context, trace, type Attributes, type Span } from '@opentelemetry/api'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { registerInstrumentations } from '@opentelemetry/instrumentation'
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, NodeTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-node'
import { ATTR_DB_QUERY_TEXT, ATTR_DB_SYSTEM_NAME, ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions'
import postgres from 'postgres'
import type { TracingSettings } from './config.js'

// For the tests that read the spans an app makes: an exporter that keeps them, and their kinds.
export { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-node'
export { SpanKind } from '@opentelemetry/api'

export interface TracingOptions {
  /** Fastify routes that make no span (the probes and the metrics scrape): their URL patterns. */
  untracedRoutes?: ReadonlySet<string>
  /** Spans go here, one at a time, instead of to the collector (tests: an InMemorySpanExporter). */
  exporter?: SpanExporter
}

export type SpanAttributes = Record<string, string | number | boolean | null | undefined>

export interface Tracing {
  /**
   * Runs `work` in a new span, a child of the active one: a job (`consumer`), a call to another
   * service (`client`). The span ends when `work` settles, in error when it throws.
   */
  inSpan<T>(name: string, kind: 'consumer' | 'client' | 'internal', attributes: SpanAttributes, work: () => Promise<T>): Promise<T>
  /** Adds attributes to the active span (what a job learns once it has read its rows). */
  annotate(attributes: SpanAttributes): void
  /** Sends the spans not yet sent, and stops. */
  shutdown(): Promise<void>
}

const KINDS = { consumer: SpanKind.CONSUMER, client: SpanKind.CLIENT, internal: SpanKind.INTERNAL }
const TRACER_NAME = '@commerce/runtime'

export function startTracing(settings: TracingSettings, options: TracingOptions = {}): Tracing {
  const exporter = options.exporter ?? new OTLPTraceExporter({ url: `${settings.endpoint.replace(/\/$/, '')}/v1/traces`, headers: settings.headers })
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName }),
    spanProcessors: [options.exporter ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter)],
  })
  // The global provider, AsyncLocalStorage context and W3C trace-context propagation.
  provider.register()
  const untraced = options.untracedRoutes ?? new Set<string>()
  const unregister = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new FastifyOtelInstrumentation({
        registerOnInitialization: true,
        // The request's span and its handler's; a span per hook would bury them.
        instrumentHooks: false,
        ignorePaths: (route) => untraced.has(route.url),
        requestHook: (span, request) => {
          span.updateName(`${request.method} ${request.routeOptions.url ?? ''}`.trim())
          span.setAttribute('request_id', request.id)
        },
      }),
      new PgInstrumentation({ requireParentSpan: true }),
    ],
  })
  // pg was loaded before this ran (by @commerce/db and Graphile Worker): its patch is applied
  // when it is next required, so require it now. The same pg as theirs: one version in the workspace.
  createRequire(import.meta.url)('pg')
  const tracer = provider.getTracer(TRACER_NAME)
  const restoreQueries = traceQueries(tracer)

  return {
    inSpan(name, kind, attributes, work) {
      return tracer.startActiveSpan(name, { kind: KINDS[kind], attributes: defined(attributes) }, async (span) => {
        try {
          return await work()
        } catch (error) {
          failed(span, error)
          throw error
        } finally {
          span.end()
        }
      })
    },
    annotate(attributes) {
      trace.getActiveSpan()?.setAttributes(defined(attributes))
    },
    async shutdown() {
      restoreQueries()
      unregister()
      await provider.shutdown()
    },
  }
}

function defined(attributes: SpanAttributes): Attributes {
  return Object.fromEntries(Object.entries(attributes).filter(([, value]) => value !== undefined && value !== null)) as Attributes
}

function failed(span: Span, error: unknown) {
  span.recordException(error instanceof Error ? error : String(error))
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) })
}

/** The parts of a postgres.js query this reads (src/query.js of postgres 3.4). */
interface Query {
  executed: boolean
  tagged: boolean
  strings: readonly string[]
  resolve(value: unknown): unknown
  reject(error: unknown): unknown
  handle(): Promise<void>
}

/**
 * A span around each postgres.js statement run while a span is active, from when it is sent to
 * when its answer (or error) comes: its `handle()` sends it once, and it settles through its own
 * `resolve`/`reject`. Answers a function that takes the wrapper off again.
 */
function traceQueries(tracer: ReturnType<NodeTracerProvider['getTracer']>): () => void {
  // Queries run only when awaited: this one, never awaited, only shows their prototype.
  const prototype = Object.getPrototypeOf(postgres({ max: 1 }).unsafe('select 1')) as Query
  const handle = prototype.handle
  prototype.handle = function (this: Query) {
    const active = context.active()
    if (!this.executed && trace.getSpan(active)) {
      const text = this.tagged ? this.strings.reduce((sql, part, n) => `${sql}$${n}${part}`) : (this.strings[0] ?? '')
      const operation = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? 'postgresql'
      const span = tracer.startSpan(
        operation,
        // The stable names, as instrumentation-pg writes them: one query finds both drivers' spans.
        { kind: SpanKind.CLIENT, attributes: { [ATTR_DB_SYSTEM_NAME]: 'postgresql', [ATTR_DB_QUERY_TEXT]: text } },
        active,
      )
      const { resolve, reject } = this
      this.resolve = (value) => (span.end(), resolve(value))
      this.reject = (error) => (failed(span, error), span.end(), reject(error))
    }
    return handle.call(this)
  }
  return () => {
    prototype.handle = handle
  }
}
