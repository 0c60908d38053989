/** Starts the API: config, database (embedded when DATABASE_URL is unset), migrations, listen. */
import closeWithGrace from 'close-with-grace'
import { migrate, openDatabase } from '@commerce/db'
import { createLogger } from '@commerce/db/logger'
import { buildApp } from './app.js'
import { ConfigError, loadConfig } from './config.js'

async function main() {
  const config = loadConfig()
  const database = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir })
  // Migrations hold a session lock: behind a transaction pooler they go to PostgreSQL directly.
  await migrate(config.databaseDirectUrl ?? database.url)
  const app = await buildApp({ ...config, databaseUrl: database.url })

  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err) app.log.error({ err }, 'shutting down after an error')
    else app.log.info({ signal }, 'shutting down')
    await app.close()
    await database.stop()
  })

  await app.listen({ host: config.host, port: config.port })
  const address = app.server.address()
  const port = typeof address === 'object' && address ? address.port : config.port
  const shownHost = ['0.0.0.0', '::'].includes(config.host) ? 'localhost' : config.host
  const base = `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`
  app.log.info(
    { api: `${base}/api/v1`, docs: `${base}/docs`, database: database.startedHere ? 'embedded' : 'external' },
    `Commerce API ready at ${base}/api/v1 — API reference at ${base}/docs`,
  )
}

main().catch((error: unknown) => {
  // A bad configuration is a message for the person who set it; any other failure a log line.
  if (error instanceof ConfigError) console.error(error.message)
  else createLogger('api', 'fatal').fatal({ err: error }, 'the API could not start')
  process.exit(1)
})
