// Proves that `pnpm --filter <app> --prod deploy <dir>` gives folders that run on their own:
// deploys the API and the worker into a temporary folder outside the workspace (so nothing
// resolves from the workspace's node_modules), checks what landed there (dist, the workspace
// packages with their dist and migrations, no devDependencies, no sources), then against a
// scratch database — on DATABASE_URL's server, or an embedded PostgreSQL when it is unset —
// runs the migration job (`node scripts/migrate.js`), starts the API (`node dist/main.js`,
// NODE_ENV=production) and checks /health, /ready and /metrics, starts the worker (refused without
// SMTP_URL, then with one) and checks its health port, then stops both with SIGTERM and expects
// clean exits.
// Run after `pnpm build`.
import { spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openDatabase } from '@commerce/db'
import postgres from 'postgres'

const root = fileURLToPath(new URL('../..', import.meta.url))
const pnpmVersion = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).packageManager
const work = mkdtempSync(join(tmpdir(), 'commerce-deploy-'))
// Run as root, an embedded PostgreSQL runs as the postgres user, who must enter the folder.
chmodSync(work, 0o755)
const started = Date.now()
const children = new Set()
let cleanup = async () => {}

const step = (message) => console.log(`check-deploy: ${message} (${((Date.now() - started) / 1000).toFixed(1)} s)`)
async function fail(message) {
  console.error(`check-deploy: ${message}`)
  for (const child of children) child.kill('SIGKILL')
  await cleanup().catch(() => {})
  rmSync(work, { recursive: true, force: true })
  process.exit(1)
}
const expect = (ok, message) => (ok ? undefined : fail(message))

// 1. Deploy both apps.
for (const app of ['api', 'worker']) {
  const deployed = spawnSync('npx', ['-y', pnpmVersion, '--filter', `@commerce/${app}`, '--prod', 'deploy', join(work, app)], {
    cwd: root,
    encoding: 'utf8',
  })
  if (deployed.status !== 0) await fail(`pnpm deploy of ${app} failed:\n${deployed.stdout}${deployed.stderr}`)
  const dir = join(work, app)
  const has = (path) => existsSync(join(dir, path))
  await expect(has('dist/main.js'), `${app}: dist/main.js missing from the deploy folder (run pnpm build first)`)
  await expect(!has('src') && !has('test'), `${app}: sources or tests were deployed`)
  await expect(has('node_modules/@commerce/db/dist/index.js'), `${app}: @commerce/db without its dist`)
  await expect(has('node_modules/@commerce/db/migrations/meta/_journal.json'), `${app}: @commerce/db without its migrations`)
  await expect(has('node_modules/@commerce/domain/dist/index.js'), `${app}: @commerce/domain without its dist`)
  await expect(!has('node_modules/tsx') && !has('node_modules/vitest'), `${app}: devDependencies were deployed`)
  step(`deployed ${app}`)
}
await expect(existsSync(join(work, 'api/scripts/migrate.js')), 'api: scripts/migrate.js (the migration job) missing')
// The dashboard goes with the API as its built files only (React and the rest are bundled in them).
await expect(existsSync(join(work, 'api/node_modules/@commerce/admin/dist/index.html')), 'api: the built admin dashboard missing')
await expect(!existsSync(join(work, 'api/node_modules/react')), 'api: the dashboard’s build dependencies were deployed')

// 2. A scratch database.
let databaseUrl
if (process.env.DATABASE_URL) {
  const name = `commerce_deploy_${process.pid}_${Date.now()}`
  const admin = postgres(process.env.DATABASE_URL, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database "${name}"`)
  const url = new URL(process.env.DATABASE_URL)
  url.pathname = `/${name}`
  databaseUrl = url.toString()
  cleanup = async () => {
    await admin.unsafe(`drop database if exists "${name}" with (force)`)
    await admin.end({ timeout: 5 })
  }
} else {
  const database = await openDatabase({ dataDir: join(work, 'data'), database: 'commerce_deploy' })
  databaseUrl = database.url
  cleanup = () => database.stop()
}
step('scratch database ready')

// Only what a container would have: no NODE_PATH, no workspace variables.
const baseEnv = { PATH: process.env.PATH, HOME: process.env.HOME ?? work, NODE_ENV: 'production', DATABASE_URL: databaseUrl, LOG_LEVEL: 'info' }

function run(app, args, env) {
  const child = spawn(process.execPath, args, { cwd: join(work, app), env: { ...baseEnv, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  let output = ''
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)))
  exited.then(() => children.delete(child))
  const waitFor = async (pattern, what) => {
    for (let waited = 0; waited < 60_000; waited += 100) {
      const match = pattern.exec(output)
      if (match) return match
      if (child.exitCode !== null) break
      await new Promise((done) => setTimeout(done, 100))
    }
    return fail(`${app}: ${what} not seen within 60 s (exit ${child.exitCode}):\n${output}`)
  }
  return { child, exited, waitFor, output: () => output }
}
async function getOk(url) {
  const response = await fetch(url).catch((error) => ({ status: String(error) }))
  await expect(response.status === 200, `GET ${url} answered ${response.status}`)
}
async function stop({ child, exited, output }, app) {
  child.kill('SIGTERM')
  const code = await Promise.race([exited, new Promise((done) => setTimeout(() => done('timeout'), 30_000))])
  await expect(code === 0, `${app}: exit ${code} after SIGTERM:\n${output()}`)
}
const freePort = () =>
  new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

// 3. The migration job.
const migration = run('api', ['scripts/migrate.js'], {})
const migrated = await migration.exited
await expect(migrated === 0, `migration job: exit ${migrated}:\n${migration.output()}`)
step('migration job applied the migrations')

// 4. The API and the worker, from their deploy folders.
const api = run('api', ['dist/main.js'], { PORT: '0', HOST: '127.0.0.1', JWT_SECRET: randomBytes(48).toString('base64url') })
const [, base] = await api.waitFor(/Commerce API ready at (http:\/\/[^\s]+)\/api\/v1/, 'the ready line')
for (const path of ['/health', '/ready', '/metrics', '/api/v1/products', '/admin/']) await getOk(base + path)
step(`API answers /health, /ready, /metrics, /api/v1/products and the dashboard (/admin/) at ${base}`)

// In production a worker that would send customers' emails needs a mail server: without one it refuses to start.
const mailless = run('worker', ['dist/main.js'], {})
const refused = await mailless.exited
await expect(refused === 1 && mailless.output().includes('SMTP_URL is required'), `worker without SMTP_URL: exit ${refused}:\n${mailless.output()}`)
step('worker refuses to start in production without SMTP_URL')

const healthPort = await freePort()
// Nothing is sent here (no event), so the server is never reached; the templates are parsed from the deploy folder.
const mail = { SMTP_URL: 'smtp://127.0.0.1:2525', MAIL_FROM: 'Shop <shop@example.com>' }
const worker = run('worker', ['dist/main.js'], { WORKER_HEALTH_PORT: String(healthPort), ...mail })
await worker.waitFor(/worker started/, '"worker started"')
await getOk(`http://127.0.0.1:${healthPort}/health`)
step(`worker answers /health on port ${healthPort}`)

await stop(api, 'api')
await stop(worker, 'worker')
await cleanup()
rmSync(work, { recursive: true, force: true })
step('API and worker stopped cleanly on SIGTERM; the deploy folders run on their own')
