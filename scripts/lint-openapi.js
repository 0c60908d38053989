#!/usr/bin/env node
// CI: the API's OpenAPI document, taken from the built app without a database, linted by Spectral
// with `spectral:oas` and the OWASP API Security ruleset. `.spectral.yaml` holds the rules and
// every exception with its reason. A warning or an error fails; the document is left in
// apps/api/dist/openapi.json to look at (scripts/openapi.js check compares it with the committed one).
import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { documentText, openApiDocument } from '../apps/api/dist/openapi/document.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const documentFile = fileURLToPath(new URL('../apps/api/dist/openapi.json', import.meta.url))
writeFileSync(documentFile, documentText(await openApiDocument()))

const spectral = spawnSync(
  fileURLToPath(new URL('../node_modules/.bin/spectral', import.meta.url)),
  ['lint', documentFile, '--ruleset', '.spectral.yaml', '--fail-severity', 'warn', ...process.argv.slice(2)],
  { cwd: root, stdio: 'inherit' },
)
if (spectral.error) throw spectral.error
if (spectral.status === 0) console.log('OpenAPI lint: no warning or error (spectral:oas + OWASP, exceptions in .spectral.yaml)')
process.exit(spectral.status ?? 1)
