#!/usr/bin/env node
// CI: the API's OpenAPI document, taken from the built app without a database (postgres.js opens
// connections on first query, and none is made), linted by Spectral with `spectral:oas` and the
// OWASP API Security ruleset. `.spectral.yaml` holds the rules and every exception with its reason.
// A warning or an error fails; the document is left in apps/api/dist/openapi.json to look at.
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { buildApp } from '../apps/api/dist/app.js'
import { loadConfig } from '../apps/api/dist/config.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const documentFile = fileURLToPath(new URL('../apps/api/dist/openapi.json', import.meta.url))

const config = loadConfig({ DATABASE_URL: 'postgres://unused@127.0.0.1:1/unused', JWT_SECRET: 'o'.repeat(32), LOG_LEVEL: 'silent' })
const app = await buildApp(config, { logger: false })
await app.ready()
writeFileSync(documentFile, `${JSON.stringify(app.swagger(), null, 2)}\n`)
await app.close()

const spectral = spawnSync(
  fileURLToPath(new URL('../node_modules/.bin/spectral', import.meta.url)),
  ['lint', documentFile, '--ruleset', '.spectral.yaml', '--fail-severity', 'warn', ...process.argv.slice(2)],
  { cwd: root, stdio: 'inherit' },
)
if (spectral.error) throw spectral.error
if (spectral.status === 0) console.log('OpenAPI lint: no warning or error (spectral:oas + OWASP, exceptions in .spectral.yaml)')
process.exit(spectral.status ?? 1)
