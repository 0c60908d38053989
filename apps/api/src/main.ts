/**
 * Starts the API: config, traces when OTEL_EXPORTER_OTLP_ENDPOINT is set, database (embedded when
 * DATABASE_URL is unset), migrations, listen; on SIGTERM or SIGINT closes it all (shutdown.ts of
 * @commerce/runtime): the HTTP server (in-flight requests finish, WebSockets get 1001), the
 * database, then the last spans.
 */
import { migrate, openDatabase } from '@commerce/db'
import { createLogger } from '@commerce/runtime/logger'
import { handleShutdown } from '@commerce/runtime/shutdown'
import { buildApp } from './app.js'
import { ConfigError, loadConfig, type Config } from './config.js'
import { SYSTEM_PATHS } from './routes/system/routes.js'

function readConfig(): Config {
  try {
    return loadConfig()
  } catch (error) {
    // A bad configuration is a message for the person who set it, not a log line.
    if (!(error instanceof ConfigError)) throw error
    process.stderr.write(`${error.message}\n`)
    process.exit(1)
  }
}

const config = readConfig()
const logger = createLogger('api', config.logLevel)
const shutdown = handleShutdown({ logger, graceMs: config.shutdownGraceMs })
try {
  if (config.tracing) {
    // Before buildApp: Fastify apps are instrumented as they are created.
    const { startTracing } = await import('@commerce/runtime/tracing')
    const tracing = startTracing(config.tracing, { untracedRoutes: SYSTEM_PATHS })
    shutdown.add('traces', () => tracing.shutdown())
  }
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir })
  shutdown.add('database', () => database.stop())
  // Migrations hold a session lock: behind a transaction pooler they go to PostgreSQL directly.
  await migrate(config.databaseDirectUrl ?? database.url)
  const app = await buildApp({ ...config, databaseUrl: database.url })
  shutdown.add('http server', () => app.close())

  await app.listen({ host: config.host, port: config.port })
  const address = app.server.address()
  const port = typeof address === 'object' && address ? address.port : config.port
  const shownHost = ['0.0.0.0', '::'].includes(config.host) ? 'localhost' : config.host
  const base = `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`
  const admin = config.adminDir ? `${base}/admin/` : undefined
  logger.info(
    { api: `${base}/api/v1`, docs: `${base}/docs`, admin, database: database.startedHere ? 'embedded' : 'external', tracing: config.tracing !== undefined },
    `Commerce API ready at ${base}/api/v1 — API reference at ${base}/docs${admin ? ` — admin dashboard at ${admin}` : ''}`,
  )
} catch (error) {
  await shutdown.exit(1, { err: error, reason: 'the API could not start' })
}
