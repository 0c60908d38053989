// `pnpm start`: the whole service on one machine. Opens the database (DATABASE_URL, or the
// embedded PostgreSQL in .data/), then runs the API and the worker as two processes (each applies
// pending migrations on start) and stops everything together: on SIGTERM or SIGINT, or when one
// of them exits, both get one SIGTERM and are waited for, then the database stops.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { openDatabase } from '@commerce/db'
import { ConfigError, DATABASE_LOCATION, LOGGING, readEnvironment, refuseProblems, shutdownVariables } from '@commerce/runtime/config'
import { createLogger } from '@commerce/runtime/logger'
import { handleShutdown } from '@commerce/runtime/shutdown'

const root = fileURLToPath(new URL('..', import.meta.url))
// SHUTDOWN_GRACE_PERIOD as the worker reads it (the longer of the two children's).
const VARIABLES = { ...DATABASE_LOCATION, ...LOGGING, ...shutdownVariables('25s') }
const { values, problems } = readEnvironment(VARIABLES, process.env)
try {
  refuseProblems(problems)
} catch (error) {
  if (!(error instanceof ConfigError)) throw error
  process.stderr.write(`${error.message}\n`)
  process.exit(1)
}

const log = createLogger('start', values.LOG_LEVEL)
// The children's own grace period, and time for the database to stop after them.
const shutdown = handleShutdown({ logger: log, graceMs: values.SHUTDOWN_GRACE_PERIOD + 10_000 })
const database = await openDatabase({ url: values.DATABASE_URL, dataDir: values.COMMERCE_DATA_DIR })
shutdown.add('database', () => database.stop())
if (database.startedHere) log.info({ dataDir: database.clusterDir }, 'embedded PostgreSQL started')

const env = { ...process.env, DATABASE_URL: database.url }
const apps = ['api', 'worker'].map((name) => {
  // A process group of its own: a terminal's Ctrl-C reaches this process only, which passes one
  // SIGTERM on (a second signal would make a child exit without waiting).
  const child = spawn(process.execPath, [`apps/${name}/dist/main.js`], { cwd: root, env, stdio: 'inherit', detached: true })
  return { name, child, exited: new Promise((done) => child.once('exit', (code, signal) => done({ code, signal }))) }
})
shutdown.add('api and worker', async () => {
  for (const { child } of apps) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
  await Promise.all(apps.map((app) => app.exited))
})
for (const { name, exited } of apps) {
  exited.then(({ code, signal }) => {
    if (!shutdown.stopping) void shutdown.exit(1, { reason: `${name} exited unexpectedly`, code, signal })
  })
}
