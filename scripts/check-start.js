// Proves the start command: runs scripts/start.js on a throwaway embedded PostgreSQL (no
// DATABASE_URL), waits for the API's ready line, checks /health, /ready, /docs, the dashboard (/admin/) and the API,
// then stops it with SIGTERM and expects a clean exit.
import { spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const dataDir = mkdtempSync(join(tmpdir(), 'commerce-start-'))
// Run as root, PostgreSQL runs as the postgres user, who must be able to enter the folder.
chmodSync(dataDir, 0o755)
const env = { ...process.env, COMMERCE_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' }
delete env.DATABASE_URL
const child = spawn(process.execPath, ['scripts/start.js'], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] })

const fail = (message) => {
  console.error(`check-start: ${message}`)
  child.kill('SIGKILL')
  process.exit(1)
}
const timer = setTimeout(() => fail('no ready line within 120 s'), 120_000)

let output = ''
let workerStarted = false
const apiUrl = new Promise((resolve) => {
  child.stdout.on('data', (chunk) => {
    process.stdout.write(chunk)
    output += chunk
    if (output.includes('worker started')) workerStarted = true
    const match = /Commerce API ready at (http:\/\/[^\s]+)\/api\/v1/.exec(output)
    if (match) resolve(match[1])
  })
})

const base = await apiUrl
clearTimeout(timer)
for (const path of ['/health', '/ready', '/docs', '/admin/', '/api/v1/products', '/api/v1/openapi.json']) {
  const response = await fetch(base + path)
  if (response.status !== 200) fail(`${path} answered ${response.status}`)
}
for (let i = 0; i < 100 && !workerStarted; i++) await new Promise((done) => setTimeout(done, 100))
if (!workerStarted) fail('the worker did not log "worker started"')
const exited = new Promise((resolve) => child.once('exit', resolve))
child.kill('SIGTERM')
const code = await exited
rmSync(dataDir, { recursive: true, force: true })
if (code !== 0) fail(`exit code ${code} after SIGTERM`)
console.log('check-start: API and worker started on an embedded PostgreSQL and stopped cleanly')
