// `pnpm start`: the whole service on one machine. Opens the database (DATABASE_URL, or the
// embedded PostgreSQL in .data/), then runs the API and the worker as two processes (each applies
// pending migrations on start) and stops everything together.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { openDatabase } from '@commerce/db'
import { LOG_LEVELS, createLogger } from '@commerce/db/logger'

const root = fileURLToPath(new URL('..', import.meta.url))
// The children validate LOG_LEVEL and refuse a bad one; these few lines fall back to info.
const log = createLogger('start', LOG_LEVELS.includes(process.env.LOG_LEVEL) ? process.env.LOG_LEVEL : 'info')
const database = await openDatabase({ url: process.env.DATABASE_URL, dataDir: process.env.COMMERCE_DATA_DIR })
if (database.startedHere) log.info({ dataDir: database.clusterDir }, 'embedded PostgreSQL started')

const env = { ...process.env, DATABASE_URL: database.url }
const apps = ['api', 'worker'].map((name) => {
  const child = spawn(process.execPath, [`apps/${name}/dist/main.js`], { cwd: root, env, stdio: 'inherit' })
  return { name, child, exited: new Promise((done) => child.once('exit', (code, signal) => done({ code, signal }))) }
})

let stopping = false
async function stop(exitCode) {
  if (stopping) return
  stopping = true
  for (const { child } of apps) if (child.exitCode === null) child.kill('SIGTERM')
  await Promise.all(apps.map((app) => app.exited))
  await database.stop()
  process.exit(exitCode)
}

for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => void stop(0))
for (const { name, exited } of apps) {
  exited.then(({ code, signal }) => {
    if (stopping) return
    log.error({ code, signal }, `${name} exited unexpectedly`)
    void stop(1)
  })
}
