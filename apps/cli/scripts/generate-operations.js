#!/usr/bin/env node
// Build step: the API contract (openapi.json at the repository root, committed and checked against
// the API by `pnpm openapi:check`) → dist/operations.json, one entry per CLI command.
import { readFileSync, writeFileSync } from 'node:fs'
import { deriveOperations } from '../dist/operations.js'

const document = JSON.parse(readFileSync(new URL('../../../openapi.json', import.meta.url), 'utf8'))
const operations = deriveOperations(document)
writeFileSync(new URL('../dist/operations.json', import.meta.url), `${JSON.stringify(operations, null, 1)}\n`)
console.log(`dist/operations.json: ${operations.length} API operations`)
